"""Per-session summary fields and the per-run report header (§1.11, §1.12).

Tool-call display strings, calls per tool, turns, duration, cost, success, tokens processed, the
MCP cold-start race flag and codegraph-CLI contamination, computed over all threads and segments.

`processed` has two definitions (§1.11). The reference (`f8c76d2`) sums `result.usage`, which newer
Claude Code reports for the last turn only (quirk §9.2 row 13); the later revision sums
`message.usage` once per `message.id`. The reference's is the default; the later one is an explicit
option, and `format_run_header` says so on the `tokens processed` line when it is used.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from evalkit.ecma import (
    fix,
    grp,
    js_add,
    js_div,
    js_json,
    js_string,
    js_truthy,
    pl,
    printable,
    utf16_prefix,
)
from evalkit.errors import TranscriptError, one_line
from evalkit.formats.claude_code.events import at_event
from evalkit.formats.claude_code.fastjson import stringify
from evalkit.formats.claude_code.index import ABSENT, SessionIndex, index_events
from evalkit.formats.claude_code.transcripts import family, id_key
from evalkit.formats.frozen import quick_init
from evalkit.formats.profiles import CODEGRAPH, ToolProfile

__all__ = [
    "PROCESSED_RESULT_USAGE",
    "PROCESSED_MESSAGE_USAGE",
    "ProcessedDefinition",
    "ToolCall",
    "Summary",
    "summarize",
    "tool_call_display",
    "is_cli_call",
    "format_run_header",
]

ProcessedDefinition = Literal["result-usage", "message-usage"]
# §1.11: Σ result.usage per segment (reference f8c76d2, the default) …
PROCESSED_RESULT_USAGE: ProcessedDefinition = "result-usage"
# … or Σ message.usage once per message.id (the later revision's definition).
PROCESSED_MESSAGE_USAGE: ProcessedDefinition = "message-usage"
_PROCESSED_FIELDS = (
    "input_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
    "output_tokens",
)

RACE_MARK = "No such tool available"  # MCP cold-start race (§1.11)
_MISSING = ABSENT  # `undefined`: an absent field (the index's own marker)


# --- display strings (§1.11) ------------------------------------------------------------------


def _crash(path: str, what: str, value: Any) -> TranscriptError:
    return TranscriptError(
        path, f"{what} is {js_json(value)}, not a string (the reference harness crashes here)"
    )


def _cut(value: Any, units: int, path: str, what: str) -> str:
    """`(value ?? "").slice(0, units)` where only strings and arrays have `slice` (§9.1 case 6)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return utf16_prefix(value, units)
    if isinstance(value, list):
        return js_string(value[:units])
    raise _crash(path, what, value)


def _concat(x: Any) -> str:
    """`"" + x` in ECMAScript, `undefined` for an absent field."""
    return "undefined" if x is _MISSING else js_string(x)


def tool_call_display(
    block: dict[str, Any], *, path: str = "(transcript)", profile: ToolProfile = CODEGRAPH
) -> str:
    """§1.11: `name + detail` for one tool_use block, as the reference lists it.

    The tool under test's calls show their first `query`/`task`/`symbol` input (the reference's
    rule for names containing `codegraph`; `profile` says which names those are).

    Raises:
        TranscriptError: A `Task` description or `Bash` command that is a number, boolean or
            object, or a `Read` file_path that is not a string (§9.1 case 6).
    """
    raw_name = block.get("name", _MISSING)
    return _display(raw_name, _concat(raw_name), block.get("input"), path, profile)


_FIRST_INPUTS = ("query", "task", "symbol")  # what a call of the tool under test shows


def _display(raw_name: Any, name: str, inp: Any, path: str, profile: ToolProfile) -> str:
    """`tool_call_display` from the block's raw name, that name as text, and its raw input."""
    inp = inp if isinstance(inp, dict) else {}
    if raw_name == "Task":
        kind = inp.get("subagent_type")
        kind = "?" if kind is None else js_string(kind)
        return f"{name} [subagent_type={kind}] " + _cut(
            inp.get("description"), 40, path, "Task input.description"
        )
    if profile.is_tool_under_test(name):
        first: Any = ""
        for key in _FIRST_INPUTS:  # the first of them that is set (`??` chain)
            value = inp.get(key)
            if value is not None:
                first = value
                break
        # The cut can drop the closing quote (§9.2 row 19).
        return f"{name} " + utf16_prefix(stringify(first), 60)
    if raw_name == "Bash":
        return f"{name} " + _cut(inp.get("command"), 50, path, "Bash input.command")
    if raw_name == "Read":
        fp = inp.get("file_path")
        if fp is not None and not isinstance(fp, str):
            raise _crash(path, "Read input.file_path", fp)
        return f"{name} " + (fp or "").split("/")[-1]
    return name


def is_cli_call(command: Any, profile: ToolProfile = CODEGRAPH) -> bool:
    """§1.11: the command invokes the tool's CLI (by default codegraph's) in a command position."""
    text = "undefined" if command is _MISSING else js_string(command)
    return profile.is_cli_call(text)


@quick_init
@dataclass(frozen=True)
class ToolCall:
    """One tool_use block, as the numbered listing shows it (§1.11).

    Attributes:
        index: 1-based position in stream order (the listing's number).
        tool_use_id: The block's id.
        thread: `main`, or the delegating tool_use id of a subagent (§1.8).
        message_id: The assistant message's id (None when absent).
        name: The tool's name as text.
        family: Its occupancy family (§1.4).
        display: `name + detail`.
        detail: The display detail alone (`""` for most tools).
        event: Index of the assistant event holding the block in the event list.
    """

    index: int
    tool_use_id: Any
    thread: str
    message_id: Any
    name: str
    family: str
    display: str
    event: int = -1

    @property
    def detail(self) -> str:
        return self.display[len(self.name) :]


# --- the summary --------------------------------------------------------------------------------


@quick_init
@dataclass(frozen=True)
class Summary:
    """§1.11 per-session fields (all threads, all segments).

    Attributes:
        calls: One `ToolCall` per tool_use, in stream order.
        tool_calls: Their display strings.
        counts: Calls per tool name, in first-seen order.
        tools: Display strings not starting with `ToolSearch`.
        reads / grep / bash / cg: `Read`; `Grep` + `Glob`; `Bash`; the tool under test's calls
            (names containing `codegraph` by default). The profile's `counts` name the first
            three.
        turns: Distinct assistant `message.id`s.
        dur: Σ `duration_ms` over result events, in seconds.
        cost: Σ `total_cost_usd`.
        ok: At least one result event, and every one has subtype `success`.
        processed: Tokens processed under `processed_definition`.
        processed_result_usage / processed_message_usage: Both definitions.
        processed_definition: Which one `processed` is.
        raced: Some tool result says `No such tool available`.
        cli_calls: Bash calls that invoke the codegraph CLI.
        cli_contaminated: Non-error results of those calls (output that entered the window).
        init_tools: The tool under test's names from the last `system/init`, or None.
        subtypes: The `subtype` of every result event, in order (an absent one is a sentinel
            that prints as `undefined`; a JSON null prints as `null`).
        results: Number of result events.
        tool_label: The tool under test's family label (`codegraph` by default).
    """

    calls: tuple[ToolCall, ...] = field(repr=False)
    tool_calls: tuple[str, ...] = field(repr=False)
    counts: dict[str, int] = field(default_factory=dict)
    tools: int = 0
    reads: int = 0
    grep: int = 0
    bash: int = 0
    cg: int = 0
    turns: int = 0
    dur: float = 0
    cost: float = 0
    ok: bool = False
    processed: float = 0
    processed_result_usage: float = 0
    processed_message_usage: float = 0
    processed_definition: ProcessedDefinition = PROCESSED_RESULT_USAGE
    raced: bool = False
    cli_calls: int = 0
    cli_contaminated: int = 0
    init_tools: tuple[str, ...] | None = None
    subtypes: tuple[Any, ...] = ()
    tool_label: str = "codegraph"

    @property
    def results(self) -> int:
        return len(self.subtypes)


def _number(value: Any, what: str, path: str) -> float:
    """`x || 0` for a numeric field; a truthy non-number is refused rather than concatenated."""
    if not js_truthy(value):
        return 0
    if isinstance(value, int | float):
        return value
    raise TranscriptError(
        path, f"{what} is {js_json(value)}, not a number (the reference harness cannot format it)"
    )


def _usage_sum(usage: Any, path: str, what: str) -> float:
    total: float = 0
    if isinstance(usage, dict):
        a, b, c, d = map(usage.get, _PROCESSED_FIELDS)
        if type(a) is int and type(b) is int and type(c) is int and type(d) is int:
            # The usual usage: with no part negative, every partial sum lies between 0 and the
            # total, so a total within 2^53 is what the additions below give, one by one.
            if a >= 0 and b >= 0 and c >= 0 and d >= 0 and a + b + c + d <= _MAX_SAFE:
                return a + b + c + d
        for name in _PROCESSED_FIELDS:
            value = usage.get(name)
            if type(value) is int and type(total) is int:  # the usual case, as js_add adds it
                added = total + value  # (a zero is falsy, `x || 0`: adding it changes nothing)
                if -_MAX_SAFE <= added <= _MAX_SAFE:
                    total = added
                    continue
            total = js_add(total, _number(value, f"{what}.{name}", path))
    return total


_MAX_SAFE = 2**53


def summarize(
    events: Sequence[dict[str, Any]],
    *,
    processed: ProcessedDefinition = PROCESSED_RESULT_USAGE,
    path: str = "(transcript)",
    profile: ToolProfile = CODEGRAPH,
    index: SessionIndex | None = None,
) -> Summary:
    """§1.11: the per-session summary fields.

    Args:
        events: Every event of the session.
        processed: `PROCESSED_RESULT_USAGE` (reference default) or `PROCESSED_MESSAGE_USAGE`.
        path: Named in errors.
        profile: Which tools are the tool under test and form the families and counts.
        index: `index_events(events)` when the caller built it already (the session does).

    Raises:
        TranscriptError: On the crash cases of §9.1 that concern these fields (5, 6, and a
            non-numeric cost or duration), and those of the tool results (case 2).
    """
    if processed not in (PROCESSED_RESULT_USAGE, PROCESSED_MESSAGE_USAGE):
        raise ValueError(f"unknown processed definition {processed!r}")
    if index is None:
        index = index_events(events, path=path)
    calls: list[ToolCall] = []
    counts: dict[str, int] = {}
    cli_ids: set[Any] = set()
    cli_calls = 0
    init_tools: tuple[str, ...] | None = None
    subtypes: list[Any] = []
    dur: float = 0
    cost: float = 0
    processed_results: float = 0
    processed_messages: float = 0
    turns = 0
    at = -1
    try:
        for view in index.views:
            at = view.index
            etype = view.type
            if etype == "assistant":
                message = view.message
                if type(message) is not dict:
                    continue
                msg_id = view.msg_id
                if view.first:  # the first event of a request: its usage counts once
                    turns += 1
                    processed_messages = js_add(
                        processed_messages, _usage_sum(message.get("usage"), path, "message usage")
                    )
                if not view.uses:
                    continue
                thread = js_string(view.thread)  # `thread_of`
                for use in view.uses:
                    raw_name = use.name
                    name = raw_name if type(raw_name) is str else _concat(raw_name)
                    fam = (
                        profile.family(raw_name)  # what `family` does for a name
                        if type(raw_name) is str and raw_name
                        else family((None if raw_name is _MISSING else raw_name) or "", profile)
                    )
                    display = _display(raw_name, name, use.input, path, profile)
                    # In field order (index, id, thread, message id, name, family, display,
                    # event): a positional call, one per tool call of the corpus.
                    calls.append(
                        ToolCall(len(calls) + 1, use.id, thread, msg_id, name, fam, display, at)
                    )
                    counts[name] = counts.get(name, 0) + 1
                    if raw_name == "Bash":
                        inp = use.input
                        command = (
                            inp.get("command", _MISSING) if isinstance(inp, dict) else _MISSING
                        )
                        if is_cli_call(command, profile):
                            cli_calls += 1  # every attempt counts, even with a repeated id
                            cli_ids.add(id_key(use.id))
            elif etype == "result":
                event = view.event
                subtypes.append(event.get("subtype", _MISSING))
                # Every `+` is a double addition, rounded past 2^53 as in ECMAScript (§10.4).
                dur = js_add(dur, _number(event.get("duration_ms"), "result duration_ms", path))
                cost = js_add(
                    cost, _number(event.get("total_cost_usd"), "result total_cost_usd", path)
                )
                processed_results = js_add(
                    processed_results, _usage_sum(event.get("usage"), path, "result usage")
                )
            elif etype == "system" and view.event.get("subtype") == "init":
                tools = view.event.get("tools")
                if js_truthy(tools) and not isinstance(tools, list):
                    raise TranscriptError(
                        path,
                        "system/init tools is not an array (the reference harness crashes here)",
                    )
                names = tuple([t if type(t) is str else js_string(t) for t in (tools or [])])
                init_tools = profile.tools_under_test(names)
    except TranscriptError as exc:
        at_event(exc, at)  # which event, so the session can name its segment file
        raise
    if index.error is not None:  # what listing the tool results raises (§9.1 case 2)
        raise index.error
    raced = False
    contaminated = 0
    for r in index.results:
        if not raced and RACE_MARK in r.text:  # type: ignore[operator]
            raced = True
        if not r.is_error and cli_ids and id_key(r.id) in cli_ids:
            contaminated += 1
    total = processed_results if processed == PROCESSED_RESULT_USAGE else processed_messages
    return Summary(
        calls=tuple(calls),
        tool_calls=tuple([c.display for c in calls]),
        counts=counts,
        tools=sum(1 for c in calls if not c.display.startswith("ToolSearch")),
        reads=sum(n for name, n in counts.items() if profile.count_read(name)),
        grep=sum(n for name, n in counts.items() if profile.count_search(name)),
        bash=sum(n for name, n in counts.items() if profile.count_bash(name)),
        cg=sum(n for name, n in counts.items() if profile.is_tool_under_test(name)),
        turns=turns,  # `request_count(events)`: the same distinct assistant ids
        dur=js_div(dur, 1000),
        cost=cost,
        ok=bool(subtypes) and all(s == "success" for s in subtypes),
        processed=total,
        processed_result_usage=processed_results,
        processed_message_usage=processed_messages,
        processed_definition=processed,
        raced=raced,
        cli_calls=cli_calls,
        cli_contaminated=contaminated,
        init_tools=init_tools,
        subtypes=tuple(subtypes),
        tool_label=profile.label,
    )


# --- the report header (§1.12) ------------------------------------------------------------------


def _template(x: Any) -> str:
    """`${x}` for a result subtype: `undefined` when absent, `null` for JSON null."""
    return _concat(x)


def format_run_header(summary: Summary, paths: Sequence[str], *, brief: bool = False) -> str:
    """§1.12: the report from its leading empty line through the `tokens processed` line.

    Args:
        summary: From `summarize`.
        paths: The segment files, in order (only their basenames are printed).
        brief: Drop the numbered tool-call listing (`--brief`).
    """
    # A file name is escaped where it holds a line break, a control character or bytes that
    # are not UTF-8 (`\n`, `\x1b`, `\udcff`): it cannot split or recolour the report.
    names = " + ".join(one_line(os.fspath(p).split("/")[-1]) for p in paths)
    exposed = "?" if summary.init_tools is None else str(len(summary.init_tools))
    race = (
        '  [MCP COLD-START RACE — tool call hit "No such tool available"]' if summary.raced else ""
    )
    out = ["", f"=== {names} ===", f"{summary.tool_label} tools exposed: {exposed}{race}"]
    n = summary.cli_contaminated
    if n > 0:
        out.append(
            f"!! {n} {summary.tool_label} CLI {pl(n, 'call')} RETURNED OUTPUT via Bash — if this is a "
            "without-arm, the run is CONTAMINATED"
        )
    elif summary.cli_calls > 0:
        m = summary.cli_calls
        out.append(
            f"   ({m} {summary.tool_label} CLI {pl(m, 'attempt')} blocked — no output entered the window)"
        )
    out.append("")
    out.append(f"Tool calls ({len(summary.tool_calls)}):")
    out.append(f"  by type: {js_json(summary.counts)}")
    if not brief:
        out.extend(f"  {k}. {call}" for k, call in enumerate(summary.tool_calls, start=1))
    if summary.subtypes:
        k = len(summary.subtypes)
        # Array.join renders a missing subtype as "".
        segments = (
            f" | {k} segments ("
            + ",".join("" if s is None or s is _MISSING else js_string(s) for s in summary.subtypes)
            + ")"
            if k > 1
            else ""
        )
        out.append("")
        out.append(
            f"Result: {_template(summary.subtypes[-1])} | duration {fix(summary.dur, 0)}s"
            f" | turns {summary.turns}{segments}"
        )
        marker = (
            ""
            if summary.processed_definition == PROCESSED_RESULT_USAGE
            else " (per-message usage, later revision — not the reference's figure)"
        )
        out.append(
            f"  tokens processed: {grp(summary.processed)}{marker} | cost ${fix(summary.cost, 3)}"
        )
    return printable("\n".join(out))
