"""The final answer text a run is judged against (spec §1.7).

Result events carry the headless answer, one per segment, and all of them are answers; an
interactive transcript has none, so the answer falls back to the last main-thread assistant text
block. Which source was used is reported, because an answer from narration reads differently.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from evalkit.ecma import js_string, js_trim, js_truthy
from evalkit.errors import TranscriptError
from evalkit.formats.claude_code.events import at_event
from evalkit.formats.claude_code.index import SessionIndex, index_events
from evalkit.formats.frozen import quick_init

__all__ = ["FinalAnswer", "final_answer"]

AnswerSource = Literal["result", "assistant_fallback", "none"]


@quick_init
@dataclass(frozen=True)
class FinalAnswer:
    """The answer text and where it came from.

    Attributes:
        text: The answer, untrimmed (`""` when there is none).
        source: `result` (result events' strings joined), `assistant_fallback` (the last
            main-thread text block) or `none`.
        has_answer: The text is non-empty after ECMAScript trimming (§10.6).
    """

    text: str
    source: AnswerSource

    @property
    def has_answer(self) -> bool:
        return js_trim(self.text) != ""


def final_answer(
    events: Sequence[dict[str, Any]],
    *,
    path: str = "(transcript)",
    index: SessionIndex | None = None,
) -> FinalAnswer:
    """§1.7: result strings joined with a blank line, else the last main-thread text block.

    `index` is `index_events(events)` when the caller built it already (the session does).

    Raises:
        TranscriptError: The fallback meets a main-thread assistant event whose content is a
            non-empty string (the reference crashes there, §9.1 case 3).
    """
    if index is None:
        index = index_events(events, path=path)
    results = [
        r.event["result"] for r in index.result_events if isinstance(r.event.get("result"), str)
    ]
    if results:
        return FinalAnswer("\n\n".join(results), "result")
    answer = ""
    for view in index.assistants:
        # `parent_tool_use_id` of "" is a subagent thread: test for None, not truthiness (§1.8).
        if view.parent is not None:
            continue
        content = view.content
        if isinstance(content, str) and content:
            raise at_event(
                TranscriptError(
                    path,
                    "main-thread assistant content is a string and there is "
                    "no result text (the reference harness crashes here)",
                ),
                view.index,
            )
        if not isinstance(content, list):
            continue
        text = "".join(
            _block_text(b) for b in content if isinstance(b, dict) and b.get("type") == "text"
        )
        if js_trim(text):
            answer = text
    return FinalAnswer(answer, "assistant_fallback" if answer else "none")


def _block_text(block: dict[str, Any]) -> str:
    text = block.get("text")
    if not js_truthy(text):
        return ""
    return text if isinstance(text, str) else js_string(text)
