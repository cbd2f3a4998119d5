"""One session as a timeline: what the session page draws, built from the session model.

`timeline(session)` walks a Claude Code session's events (headless segments or an interactive
log with its subagents merged, `evalkit.session`) or a Codex / Inspect `AgentSession`
(`evalkit.formats.common`) and returns plain frozen dataclasses: user prompts, assistant text,
each tool call with its input and its result, subagent threads nested under the call that
started them, compaction markers and the final answer. Nothing here re-reads a file or
re-computes a metric: explore verdicts come from the session's own `Allocation` (spec §3), the
final answer from its `FinalAnswer` (§1.7), threads from `parent_tool_use_id` (§1.8).

Text is kept whole here; the page decides what to fold (`evalkit.outputs.html.pages`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from evalkit.ecma import js_json, js_string, js_truthy, printable, utf16_len, utf16_prefix
from evalkit.formats.claude_code.transcripts import result_text, thread_of
from evalkit.formats.common import AgentSession
from evalkit.metrics.allocation import (
    Allocation,
    CallAllocation,
    PathSet,
    answer_citations,
    norm_path,
)
from evalkit.metrics.envelope import split_sections
from evalkit.metrics.occupancy import FALLBACK_CHARS_PER_TOKEN
from evalkit.session import InteractiveSession, Session

__all__ = [
    "Section",
    "Call",
    "Entry",
    "AnswerPiece",
    "Timeline",
    "timeline",
    "clean",
]

# Bidirectional controls reorder the text around them (a "Trojan Source" line looks like another
# line); the page shows them as visible marks instead of obeying them.
_BIDI = re.compile("[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]")


def clean(text: Any) -> str:
    """Text as the page shows it: lone surrogates as U+FFFD (they cannot be written as UTF-8),
    bidirectional controls as a visible `<U+202E>` mark. Escaping is the template's job."""
    s = text if isinstance(text, str) else js_string(text)
    s = printable(s)
    if not s.isascii() and _BIDI.search(s):
        s = _BIDI.sub(lambda m: f"<U+{ord(m.group(0)):04X}>", s)
    return s


@dataclass(frozen=True)
class Section:
    """One file section of an explore result, with its citation verdict.

    Attributes:
        anchor: The page anchor (`sec-<call>-<n>`).
        path: The file the section returns.
        chars: UTF-16 units charged to the file (spec §2.5).
        via: `path`, `symbol` or None (uncited).
        symbol: The crediting symbol of a symbol citation.
        text: The section's part of the result text.
    """

    anchor: str
    path: str
    chars: int
    via: str | None
    symbol: str | None
    text: str


@dataclass(frozen=True)
class Call:
    """One tool call with its result.

    Attributes:
        number: 1-based over the session's tool calls, stream order (the `#call-N` anchor).
        name, family: The tool and its family.
        input: The arguments as indented JSON text.
        result: The result text (several results joined), None when none was recorded.
        result_chars: UTF-16 length of `result`.
        result_tokens: `result_chars` at the session's chars-per-token price (an estimate).
        is_error: The (last) result is an error; None without a result.
        thread: `main` or the thread's id.
        explore: The allocation call number (1-based) when it is a scored explore call.
        preamble: An explore result's text before its first section.
        sections: An explore result's file sections with their verdicts.
        children: The entries of the subagent thread this call started.
    """

    number: int
    name: str
    family: str
    input: str
    result: str | None
    result_chars: int
    result_tokens: float | None
    is_error: bool | None
    thread: str
    explore: int | None = None
    preamble: str = ""
    sections: tuple[Section, ...] = ()
    children: tuple[Entry, ...] = ()

    @property
    def cited_chars(self) -> int:
        return sum(s.chars for s in self.sections if s.via)


@dataclass(frozen=True)
class Entry:
    """One step of the timeline.

    `kind` is `prompt` (a user message), `text` (assistant text), `thinking`, `call`,
    `compaction` or `segment` (a new segment file begins: a new question)."""

    kind: str
    text: str = ""
    call: Call | None = None


@dataclass(frozen=True)
class AnswerPiece:
    """A stretch of the final answer; `target` is the section anchor a citation links to."""

    text: str
    target: str | None = None
    via: str | None = None


@dataclass(frozen=True)
class Timeline:
    """A session as the session page shows it.

    Attributes:
        log: The session's name in tables.
        agent: `claude-code`, `codex` or `inspect`.
        kind: `headless`, `interactive` or the agent's format.
        entries: The main thread's steps, stream order (subagent threads nested in calls).
        answer: The final answer cut into pieces (citations linked to sections).
        answer_source: Where the final answer came from, in words.
        citations: Each citation of the answer: (text, channel, target anchor or None).
        calls: How many tool calls in all (every thread).
        chars_per_token: The price `result_tokens` uses, and whether it was calibrated.
        orphans: Threads whose starting call is not in the session, with their entries.
    """

    log: str
    agent: str
    kind: str
    entries: tuple[Entry, ...]
    answer: tuple[AnswerPiece, ...]
    answer_source: str
    citations: tuple[tuple[str, str, str | None], ...] = ()
    calls: int = 0
    chars_per_token: tuple[float, bool] = (FALLBACK_CHARS_PER_TOKEN, False)
    orphans: tuple[tuple[str, tuple[Entry, ...]], ...] = field(default=())


# --- Claude Code ---------------------------------------------------------------------------


def _input_text(value: Any) -> str:
    if isinstance(value, dict) and not value:
        return "{}"
    try:
        return clean(js_json(value, 2))
    except Exception:  # noqa: BLE001 — an odd input is shown as text, never a failure
        return clean(repr(value))


def _segments(text: str, sections: Sequence[Any]) -> list[tuple[int, int]]:
    """Python index spans of each section (from its header to the next header; the last to the
    end of the text), from the UTF-16 offsets the envelope split gives."""
    starts = [len(utf16_prefix(text, s.at)) for s in sections]
    ends = starts[1:] + [len(text)]
    return list(zip(starts, ends, strict=True))


def _explore_sections(
    number: int, text: str, call: CallAllocation
) -> tuple[str, tuple[Section, ...]]:
    envelope = split_sections(text).files
    if len(envelope) != len(call.files):
        return text, ()
    spans = _segments(text, envelope)
    preamble = text[: spans[0][0]] if spans else text
    out = []
    for i, ((start, end), verdict) in enumerate(zip(spans, call.files, strict=True), start=1):
        out.append(
            Section(
                anchor=f"sec-{number}-{i}",
                path=clean(verdict.path),
                chars=verdict.chars,
                via=verdict.via,
                symbol=None if verdict.symbol is None else clean(verdict.symbol),
                text=clean(text[start:end]),
            )
        )
    return clean(preamble), tuple(out)


class _Walk:
    """The state of one pass over a Claude Code event list."""

    def __init__(self, session: Session | InteractiveSession) -> None:
        self.session = session
        interactive = isinstance(session, InteractiveSession)
        self.any_type = interactive
        self.profile = None if interactive else session.profile
        if interactive:
            self.price = (FALLBACK_CHARS_PER_TOKEN, False)
        else:
            o = session.occupancy
            self.price = (o.chars_per_token, bool(o.calibrated))
        self.allocation: Allocation | None = session.allocation
        self.threads: dict[str, list[dict[str, Any]]] = {}
        self.calls: dict[str, dict[str, Any]] = {}  # tool_use id → the call being built
        self.order: list[dict[str, Any]] = []
        self.explore_seen = 0
        self.explore_texts: list[str] = []
        self.explore_ok = True  # set by the caller: the texts seen are the session's own
        self.by_source = {c.source: c for c in (self.allocation.calls if self.allocation else ())}

    def is_explore(self, name: str) -> bool:
        if self.profile is not None:
            return self.profile.is_explore(name)
        from evalkit.formats.claude_code.transcripts import is_explore

        return is_explore(name)

    def family(self, name: str) -> str:
        from evalkit.formats.claude_code.transcripts import family

        return family(name) if self.profile is None else family(name, self.profile)

    def add(self, thread: str, entry: dict[str, Any]) -> None:
        self.threads.setdefault(thread, []).append(entry)

    def walk(self, events: Sequence[dict[str, Any]], starts: Sequence[int], paths: Sequence[str]):
        segment_at = {s: i for i, s in enumerate(starts)}
        for index, event in enumerate(events):
            if not isinstance(event, dict):
                continue
            if index in segment_at and len(starts) > 1:
                n = segment_at[index]
                name = os.path.basename(paths[n]) if n < len(paths) else ""
                self.add("main", {"kind": "segment", "text": f"question {n + 1} ({name})"})
            etype = event.get("type")
            if etype == "system":
                if event.get("subtype") in ("compact_boundary", "compaction"):
                    self.add(thread_of(event), {"kind": "compaction"})
                continue
            message = event.get("message")
            if not isinstance(message, dict):
                continue
            content = message.get("content")
            thread = thread_of(event)
            if isinstance(content, str):
                if etype == "user":
                    self.add(thread, {"kind": "prompt", "text": clean(content)})
                elif etype == "assistant" and content:
                    self.add(thread, {"kind": "text", "text": clean(content)})
                continue
            if not isinstance(content, list):
                continue
            for block in content:
                if isinstance(block, dict):
                    self.block(etype, thread, block)

    def block(self, etype: Any, thread: str, block: dict[str, Any]) -> None:
        btype = block.get("type")
        if btype == "text" and isinstance(block.get("text"), str):
            if block["text"]:
                kind = "prompt" if etype == "user" else "text"
                self.add(thread, {"kind": kind, "text": clean(block["text"])})
        elif btype == "thinking" and etype == "assistant":
            if block.get("thinking"):
                self.add(thread, {"kind": "thinking", "text": clean(block.get("thinking"))})
        elif btype == "tool_use" and (self.any_type or etype == "assistant"):
            name = block.get("name")
            name = name if isinstance(name, str) else js_string(name)
            call = {
                "number": len(self.order) + 1,
                "id": block.get("id"),
                "name": name,
                "input": _input_text(block.get("input")),
                "results": [],
                "error": None,
                "thread": thread,
                "explore": None,
            }
            self.order.append(call)
            if isinstance(block.get("id"), str):
                self.calls[block["id"]] = call
            self.add(thread, {"kind": "call", "call": call})
        elif btype == "tool_result" and (self.any_type or etype == "user"):
            tid = block.get("tool_use_id")
            call = self.calls.get(tid) if isinstance(tid, str) else None
            try:
                text = result_text(block.get("content"))
            except Exception:  # noqa: BLE001 — the metrics already judged it; show what there is
                text = ""
            is_error = js_truthy(block.get("is_error"))
            if call is None:
                self.add(thread, {"kind": "text", "text": "(a tool result for no known call)"})
                return
            call["results"].append(text)
            call["error"] = is_error
            if self.is_explore(call["name"]) and not is_error:
                self.explore_texts.append(text)
                got = self.by_source.get(self.explore_seen)
                if got is not None and call["explore"] is None:
                    call["explore"] = got
                self.explore_seen += 1

    def build(self, raw: dict[str, Any], depth: int = 0) -> Entry:
        if raw["kind"] != "call":
            return Entry(raw["kind"], raw.get("text", ""))
        c = raw["call"]
        result = "".join(c["results"]) if c["results"] else None
        result = None if result is None else clean(result)
        chars = utf16_len(result) if result else 0
        preamble, sections, explore = "", (), None
        got: CallAllocation | None = c["explore"]
        if got is not None and self.explore_ok and len(c["results"]) == 1:
            preamble, sections = _explore_sections(c["number"], c["results"][0], got)
            explore = got.index if sections else None
        children: tuple[Entry, ...] = ()
        tid = c["id"]
        if isinstance(tid, str) and tid in self.threads and tid != "main" and depth < 20:
            children = tuple(self.build(e, depth + 1) for e in self.threads.pop(tid))
        return Entry(
            "call",
            call=Call(
                number=c["number"],
                name=clean(c["name"]),
                family=self.family(c["name"]),
                input=c["input"],
                result=result,
                result_chars=chars,
                result_tokens=chars / self.price[0] if result is not None else None,
                is_error=c["error"],
                thread=clean(c["thread"]),
                explore=explore,
                preamble=preamble,
                sections=sections,
                children=children,
            ),
        )


def _claude_timeline(session: Session | InteractiveSession) -> Timeline:
    w = _Walk(session)
    if isinstance(session, InteractiveSession):
        w.walk(session.events, (0,), (session.path,))
        kind = "interactive"
    else:
        t = session.transcript
        w.walk(t.events, t.segment_starts, t.paths)
        kind = "headless"
    # The verdicts are attached by position among the explore texts; they hold only when this
    # walk saw the very texts the allocation was computed from.
    w.explore_ok = w.explore_texts == list(session.explore_texts)
    main = [w.build(e) for e in w.threads.pop("main", [])]
    orphans = tuple(
        (clean(thread), tuple(w.build(e) for e in entries)) for thread, entries in w.threads.items()
    )
    answer = session.answer
    text = answer.text if answer is not None else ""
    sections = [s for e in _all_calls(main, orphans) for s in e.sections]
    pieces, citations = _answer_pieces(text, sections)
    return Timeline(
        log=clean(session.log),
        agent="claude-code",
        kind=kind,
        entries=tuple(main),
        answer=pieces,
        answer_source=answer.source if answer is not None else "none",
        citations=citations,
        calls=len(w.order),
        chars_per_token=w.price,
        orphans=orphans,
    )


def _all_calls(entries, orphans=()) -> list[Call]:
    out: list[Call] = []
    stack = [iter(entries), *(iter(es) for _, es in reversed(orphans))][::-1]
    while stack:
        e = next(stack[-1], None)
        if e is None:
            stack.pop()
        elif e.call is not None:
            out.append(e.call)
            stack.append(iter(e.call.children))
    return sorted(out, key=lambda c: c.number)


# --- the final answer's citations ------------------------------------------------------------

_CODE_SPAN = re.compile(r"`([^`\n]+)`")


def _answer_pieces(
    text: str, sections: Sequence[Section]
) -> tuple[tuple[AnswerPiece, ...], tuple[tuple[str, str, str | None], ...]]:
    """The answer cut at its citations, each linked to the first section it credits.

    The citations are the allocation's own (`answer_citations`, spec §3.3): path strings and
    code-span symbols. A path links to the first section whose path it names (§3.4); a symbol to
    the first section the allocation credited through that symbol."""
    text = clean(text)
    if not text or not sections:
        return ((AnswerPiece(text),) if text else ()), ()
    extensions = frozenset(
        s.path[s.path.rfind(".") + 1 :].lower() for s in sections if s.path.rfind(".") > 0
    )
    cites = answer_citations(text, extensions)
    targets: dict[str, tuple[str, str | None]] = {}
    for raw in cites.paths:
        one = PathSet([raw])
        hit = next((s.anchor for s in sections if one.has(s.path)), None)
        targets.setdefault(raw, ("path", hit))
    by_symbol = {}
    for s in sections:
        if s.via == "symbol" and s.symbol:
            by_symbol.setdefault(s.symbol, s.anchor)
    citations = [(raw, via, hit) for raw, (via, hit) in targets.items()]
    citations += [(name, "symbol", by_symbol.get(name)) for name in cites.symbols]
    spans: list[tuple[int, int, str, str]] = []
    for raw, (_, hit) in targets.items():
        if hit is None or not norm_path(raw):
            continue
        for m in re.finditer(re.escape(raw), text):
            spans.append((m.start(), m.end(), hit, "path"))
    for m in _CODE_SPAN.finditer(text):
        for name, anchor in by_symbol.items():
            for n in re.finditer(r"(?<![\w$])" + re.escape(name) + r"(?![\w$])", m.group(1)):
                start = m.start(1) + n.start()
                spans.append((start, start + len(name), anchor, "symbol"))
    spans.sort(key=lambda s: (s[0], -(s[1] - s[0])))
    pieces: list[AnswerPiece] = []
    at = 0
    for start, end, anchor, via in spans:
        if start < at:
            continue  # overlaps a longer citation already linked
        if start > at:
            pieces.append(AnswerPiece(text[at:start]))
        pieces.append(AnswerPiece(text[start:end], anchor, via))
        at = end
    if at < len(text):
        pieces.append(AnswerPiece(text[at:]))
    return tuple(pieces), tuple(citations)


# --- Codex and Inspect -----------------------------------------------------------------------


def _agent_timeline(session: AgentSession, log: str | None) -> Timeline:
    price = (FALLBACK_CHARS_PER_TOKEN, False)
    threads: dict[str, list[Entry]] = {}
    for c in session.tool_calls:
        result = None if c.output is None else clean(c.output)
        chars = utf16_len(result) if result else 0
        call = Call(
            number=c.order + 1,
            name=clean(c.name),
            family=clean(c.family),
            input=_input_text(c.input),
            result=result,
            result_chars=chars,
            result_tokens=chars / price[0] if result is not None else None,
            is_error=c.error,
            thread=clean(c.thread),
        )
        threads.setdefault(c.thread, []).append(Entry("call", call=call))
    main = threads.pop("main", [])
    if session.compactions:
        main.append(Entry("compaction", f"{session.compactions} compaction(s) in this session"))
    text = clean(session.final_answer or "")
    return Timeline(
        log=clean(log or session.path),
        agent=session.agent,
        kind=session.format,
        entries=tuple(main),
        answer=(AnswerPiece(text),) if text else (),
        answer_source=clean(session.final_answer_source),
        calls=len(session.tool_calls),
        chars_per_token=price,
        orphans=tuple((clean(t), tuple(es)) for t, es in threads.items()),
    )


def timeline(
    session: Session | InteractiveSession | AgentSession, log: str | None = None
) -> Timeline:
    """The timeline of one session (see the module docstring).

    Args:
        session: A headless or interactive Claude Code session, or a Codex / Inspect session.
        log: The session's name in tables (default: the session's own `log` or path).
    """
    if isinstance(session, AgentSession):
        return _agent_timeline(session, log)
    t = _claude_timeline(session)
    return t if log is None else Timeline(**{**t.__dict__, "log": clean(log)})


def all_calls(t: Timeline) -> list[Call]:
    """Every call of the timeline, every thread, in call-number order."""
    return _all_calls(t.entries, t.orphans)
