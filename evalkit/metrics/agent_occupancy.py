"""Residual context occupancy of a Codex CLI rollout: the Codex analogue of CG-7 (evalkit's own).

The reference measures occupancy on Claude Code transcripts only (reference-metrics §6). A Codex
rollout carries what that method needs: the exact size of every request's whole prompt
(`last_token_usage.input_tokens` of each request `token_count`, cached part included: the
analogue of Claude Code's `input + cache_read + cache_creation`, agent-formats §1.9), and the
text of every tool output. So the same arithmetic applies unchanged — gaps between consecutive
requests, the chars-per-token calibration on tool-dominated gaps, the dispersion, FIFO eviction
on a compaction or an unexplained drop (§6.3–6.7, `evalkit.metrics.occupancy`) — over a timeline
built from the rollout instead of from Claude Code events. The numbers are evalkit's, not the
reference's: no published figure is computed from a Codex file.

What differs from the Claude Code timeline (§6.2), and why:

* **Requests** are the rollout's request events (a `token_count` with a non-null `info` whose
  running total changed and that is not a compaction or window-full sentinel), not distinct
  assistant `message.id`s; `ctx_k` is that request's `last_token_usage.input_tokens`.
* **Tool results** are the `function_call_output`, `custom_tool_call_output` and
  `tool_search_output` items, priced by the length (UTF-16 units) of their text as the reader
  decodes it (the `output` inside a JSON wrapper, the text parts of a content list: the
  `result_chars` of the tool-calls frame). `web_search_call`s run on the server and return no
  output item, so they add nothing.
* **Other content** (chars with no family, used by the calibration's tool-dominance test):
  assistant `message` text, reasoning text (its `content` texts, else its summary; the
  `encrypted_content` is opaque and cannot be measured, so reasoning is under-counted), each
  tool call's name plus its argument string, and user / developer / system `message` text.
* **Placement.** A tool output or a user-side message sits where the file has it: always after
  the request that issued the call and before the next request. The model's own items do not:
  older builds write a request's `token_count` before the items of the same response, newer
  builds after them (agent-formats §1.9), so their file position can put them one gap early.
  They are therefore placed with the next tool output or user-side message that follows them —
  the first input the next request's prompt holds after them — whichever order the build wrote;
  items with none after them (the final answer) belong to no gap, as after the last request.
* **Compaction** is a `compacted` line (the sentinel `token_count` after it is not a request).
* **Families** come from the tool profile first (the tool under test: `codegraph` by default,
  matched by its globs on the full tool name, MCP server prefix included), then from evalkit's
  agent-neutral families (`evalkit.formats.common.tool_family`): `read`, `search` and `bash` are
  the file-access families; Codex reads and searches files through shell commands, so in
  practice its file access is `bash`. Every other tool (`apply_patch`, `update_plan`, other MCP
  servers, …) is `other`.
* **Threads.** A Codex subagent is a file of its own, so each rollout is its own timeline
  (Claude Code puts subagent requests into the parent's, Decision 5). A fork's copied parent
  lines are left out when the reader could exclude them (§1.11).
* **Window.** The share-of-window figures use the rollout's `model_context_window`, else the
  nominal 200k.

`codex exec --json` streams carry only cumulative totals (no per-request prompt size, §2.4) and
Inspect logs carry no per-request order of prompts and tool outputs in the neutral session, so
they have no timeline and no residual (None, `<NA>` in frames).
"""

from __future__ import annotations

from typing import Any

from evalkit.formats.common import AgentSession
from evalkit.formats.profiles import CODEGRAPH, ToolProfile
from evalkit.metrics.occupancy import (
    DEFAULT_WINDOW_TOKENS,
    FILE_ACCESS,
    Add,
    Compact,
    Occupancy,
    Req,
    occupancy_of_timeline,
)

__all__ = ["agent_occupancy", "occupancy_family"]

# Where the model's own items go in the timeline: with the next input-side item after them.
_INPUT_SIDE = ("output", "input")


def occupancy_family(name: str, neutral_family: str, profile: ToolProfile = CODEGRAPH) -> str:
    """The occupancy family of another agent's tool call.

    The profile's tool under test first (its label), then the profile's own `read` / `search`
    / `bash` globs (Claude Code names, as inside Inspect), then the agent-neutral family when it
    is a file-access one; anything else is `other`.

    Args:
        name: The full tool name.
        neutral_family: `AgentToolCall.family` (`evalkit.formats.common.tool_family`).
        profile: The tool profile (default codegraph).
    """
    by_profile = profile.family(name)
    if by_profile != "other":
        return by_profile
    if neutral_family in FILE_ACCESS:
        return neutral_family
    if neutral_family == profile.label:
        return profile.label
    return "other"


def agent_occupancy(s: AgentSession, profile: ToolProfile = CODEGRAPH) -> Occupancy | None:
    """The residual context occupancy at the end of a Codex rollout (see the module docstring).

    Args:
        s: A session from a reader; only one with a `context` timeline (a Codex rollout) has
            an occupancy.
        profile: Names the tool under test and the families (default codegraph).

    Returns:
        The `Occupancy` (the same fields as Claude Code's: `residual`, `residual_file_access`,
        `contributed`, `final_context`, `base_context`, `chars_per_token`, …), or None when the
        session has no timeline or no request.
    """
    if s.context is None or not any(item.kind == "request" for item in s.context):
        return None
    families = {c.order: occupancy_family(c.name, c.family, profile) for c in s.tool_calls}
    entries: list[Any] = []
    pending: list[Any] = []  # the model's own items, waiting for the next input-side item
    compactions = 0
    for item in s.context:
        if item.kind == "request":
            entries.append(Req(item.tokens or 0))
        elif item.kind == "compaction":
            entries.append(Compact())
            compactions += 1
        elif item.kind == "assistant":
            pending.append(Add(item.chars, None))
        elif item.kind in _INPUT_SIDE:
            entries.extend(pending)
            pending = []
            if item.kind == "output":
                # An output whose call id names no call is `other`, as an unknown id is (§6.2).
                fam = families.get(item.call, "other") if item.call is not None else "other"
                entries.append(Add(item.chars, fam))
            else:
                entries.append(Add(item.chars, None))
    entries.extend(pending)  # after the last request: in no gap
    window = s.context_window or DEFAULT_WINDOW_TOKENS
    return occupancy_of_timeline(entries, compactions, window, profile.families)
