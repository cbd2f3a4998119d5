"""The agent-neutral session that every non-Claude-Code reader produces (agent-formats "How to use").

Claude Code sessions keep their own event list, because the reference metrics are defined on it.
The Codex CLI and Inspect AI readers turn their files into `AgentSession`s instead: tool calls
with their results, the final answer, turns, compactions, duration, cost, outcome, model and one
`TokenLedger` whose columns mean the same for every agent. Tables read these fields, never a
format's own token names.

A value the format does not carry is None (NA in frames), never 0: several formats use `null`
for "unknown" and a 0 would change a median.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from evalkit.ecma import pl
from evalkit.formats.files import ReadLimits, read_file_bytes
from evalkit.formats.frozen import quick_init
from evalkit.formats.ledger import TokenLedger
from evalkit.formats.stack import fixed_stack

__all__ = [
    "AGENTS",
    "AgentSession",
    "AgentToolCall",
    "ContextItem",
    "FileRead",
    "ModelTokens",
    "Request",
    "TokenLedger",
    "bad_type",
    "count_unknown",
    "dumps",
    "loads_or_none",
    "mcp_server",
    "number",
    "read_json_lines",
    "text_of_parts",
    "tool_family",
]

# The `agent` identity column's values, one per agent (not per file format).
AGENTS = ("claude-code", "codex", "inspect")


@dataclass(frozen=True)
class ModelTokens:
    """One model's share of a session's tokens, where the format splits them by model (an
    Inspect sample's `model_usage`: the solver's model and a grader's), for pricing (issue 27).

    Attributes:
        model: The model name as the log writes it (Inspect: `provider/model`).
        tokens: That model's ledger, in `TokenLedger`'s meaning.
        cost_usd: What the log says that model cost, None when it says nothing.
    """

    model: str
    tokens: TokenLedger
    cost_usd: float | None = None


@quick_init
@dataclass(frozen=True)
class AgentToolCall:
    """One tool call with its result, joined by the format's call id.

    Attributes:
        order: 0-based position among the session's tool calls, stream order.
        id: The format's join key (`call_id`, item id, `ToolCall.id`), None when it has none.
        name: The full tool name (Codex `namespace + name`; MCP tools `mcp__<server>__<tool>`).
        family: `tool_family(name)`: `bash`, `edit`, `read`, `search`, `web`, `plan`, `agent`,
            `tool_search`, an MCP server's name, or `other`.
        input: The arguments: a dict when they parse as a JSON object, else the raw value.
        output: The result text (wrappers unwrapped), None when no result was recorded.
        error: Whether the result is an error; None when there is no result to judge.
        exit_code: A shell command's exit code, where the result gives one.
        thread: `main`, or the subagent the call belongs to.
    """

    order: int
    id: str | None
    name: str
    family: str
    input: Any = field(repr=False)
    output: str | None = field(default=None, repr=False)
    error: bool | None = None
    exit_code: int | None = None
    thread: str = "main"


@quick_init
@dataclass(frozen=True)
class Request:
    """One model request (one API call) with its usage, where the format records it.

    Attributes:
        prompt_tokens: The whole prompt of the request, cached part included (the occupancy
            timeline's context size).
        cache_read_tokens: Part of the prompt read from cache, None when unknown.
        output_tokens: Generated tokens, reasoning included, None when unknown.
        reasoning_tokens: Part of the output spent on reasoning, None when unknown.
    """

    prompt_tokens: float
    cache_read_tokens: float | None = None
    output_tokens: float | None = None
    reasoning_tokens: float | None = None


@quick_init
@dataclass(frozen=True)
class ContextItem:
    """One thing that entered (or left) the model's context, in file order (a rollout's
    occupancy timeline; agent-formats §1.9, reference-metrics §6.2).

    Attributes:
        kind: `request` (a request event: `tokens` is its whole prompt), `output` (a tool
            output: `call` names the tool call it answers), `input` (a user, developer or
            system message), `assistant` (text, reasoning text or a tool call the model wrote)
            or `compaction` (the history was replaced by a summary).
        chars: UTF-16 length of what was added (0 for `request` and `compaction`).
        tokens: The request's prompt tokens, cached part included; None for other kinds.
        call: For `output`: the `order` of the tool call it answers, None when its call id
            names no call in the session.
    """

    kind: str
    chars: int = 0
    tokens: float | None = None
    call: int | None = None


@quick_init
@dataclass(frozen=True)
class FileRead:
    """What reading one file kept and skipped (the non-Claude-Code twin of `SegmentRead`).

    Attributes:
        path: The file as the caller named it.
        records: Lines (or samples) read as records.
        blank: Empty lines.
        malformed: Lines that are not JSON.
        non_object: JSON lines that are not objects (or, in an event stream, text lines such as
            banners, which the stream format says to skip).
        invalid_utf8: Lines holding bytes that are not UTF-8, decoded with U+FFFD.
        unknown: Record kinds the reader does not know, by kind: counted, never fatal.
        gzip: The file was gzip-compressed.
        truncated_gzip: The gzip stream ended early; what was decompressed is kept.
        too_long: Lines longer than the line limit (`EVALKIT_MAX_LINE_MB`), skipped.
        bad_type: JSON-object lines whose `type` (or their payload's or item's) is not text,
            skipped (`bad_type`).
    """

    path: str
    records: int = 0
    blank: int = 0
    malformed: int = 0
    non_object: int = 0
    invalid_utf8: int = 0
    unknown: tuple[tuple[str, int], ...] = ()
    gzip: bool = False
    truncated_gzip: bool = False
    too_long: int = 0
    bad_type: int = 0

    @property
    def skipped(self) -> int:
        """Non-blank lines that did not become records."""
        return self.malformed + self.non_object + self.too_long + self.bad_type

    def damage(self) -> str | None:
        """What was lost or repaired reading this file, in words; None for a clean file.

        Unknown record kinds are not damage (newer builds add kinds often); they are counted in
        `unknown`.
        """
        parts = []
        if self.malformed:
            parts.append(f"{self.malformed} malformed {pl(self.malformed, 'line')} skipped")
        if self.non_object:
            parts.append(f"{self.non_object} non-object {pl(self.non_object, 'line')} ignored")
        if self.invalid_utf8:
            parts.append(
                f"{self.invalid_utf8} {pl(self.invalid_utf8, 'line')} with invalid UTF-8 "
                "decoded with U+FFFD"
            )
        if self.too_long:
            parts.append(
                f"{self.too_long} {pl(self.too_long, 'line')} over the length limit "
                "(EVALKIT_MAX_LINE_MB) skipped"
            )
        if self.bad_type:
            parts.append(
                f"{self.bad_type} {pl(self.bad_type, 'line')} with a type that is not text skipped"
            )
        if self.truncated_gzip:
            parts.append("gzip stream cut short (what it held was read)")
        return ", ".join(parts) or None


@dataclass(frozen=True)
class AgentSession:
    """One session of a non-Claude-Code agent, in evalkit's terms.

    Attributes:
        agent: `codex` or `inspect` (the `agent` identity column).
        format: The file format: `codex-rollout`, `codex-exec`, `inspect`.
        path: The file the session was read from, as the caller named it.
        session_id: The format's own id (Codex thread id; Inspect `<sample id>:<epoch>`).
        model: The model that served the session (the last one named), None when unknown.
        tool_calls: Every tool call, stream order.
        final_answer: The final answer text (`""` when there is none).
        final_answer_source: Where the final answer came from, in words.
        turns: User turns (prompts sent), None when unknown.
        aborted_turns: Turns that were interrupted or failed, None when the format has no turns.
        compactions: Context compactions, None when the format does not show them.
        requests: Per-request usage in order, None when the format has no per-request figures.
        context_window: The model's context window in tokens, where recorded.
        duration_s: Wall time of the session in seconds, None when unknown.
        cost_usd: Cost in dollars where the format records it; None otherwise (never priced
            here).
        reward: The outcome as a number (Inspect: the first numeric score), None when none.
        passed: The outcome as pass/fail (Inspect `C`/`I` or boolean scores), None when none.
        tokens: The token ledger.
        reported_total_tokens: The format's own total (Codex: the last `total_token_usage`;
            Inspect: Σ `total_tokens`), kept as a cross-check of the ledger.
        sample_id: Inspect only: the sample id.
        epoch: Inspect only: the epoch (1-based).
        parent_id: The parent thread of a subagent or fork, where the file names it.
        contains_parent_copy: The file holds copied parent lines that could not be excluded
            because the parent's file was not available (agent-formats §1.11).
        excluded_copied_lines: Lines recognised as the parent's copy and left out.
        unfinished_calls: Tool calls started but never completed (`exec --json`), None elsewhere.
        read: The reading account of the file.
        context: The occupancy timeline (requests, what each added, compactions) in file
            order, where the format records per-request prompt sizes (Codex rollouts); None
            otherwise (`exec --json`, Inspect).
        extra: Format-specific facts worth keeping (Inspect `working_time`, scores, limit).
        started_at: When the session started, ISO 8601 with its offset (the first timestamp
            of a rollout or trajectory, an Inspect sample's start), None when the file has
            none (`exec --json`): the date whose prices apply (issue 27).
        models: The tokens per model where the format splits them (Inspect); empty when the
            session's ledger is one model's (`model`).
    """

    agent: str
    format: str
    path: str
    session_id: str | None
    model: str | None
    tool_calls: tuple[AgentToolCall, ...]
    final_answer: str
    final_answer_source: str
    turns: int | None
    aborted_turns: int | None
    compactions: int | None
    requests: tuple[Request, ...] | None
    context_window: float | None
    duration_s: float | None
    cost_usd: float | None
    reward: float | None
    passed: bool | None
    tokens: TokenLedger
    reported_total_tokens: float | None = None
    sample_id: str | None = None
    epoch: int | None = None
    parent_id: str | None = None
    contains_parent_copy: bool = False
    excluded_copied_lines: int = 0
    unfinished_calls: int | None = None
    read: FileRead | None = field(default=None, repr=False)
    context: tuple[ContextItem, ...] | None = field(default=None, repr=False)
    extra: dict[str, Any] = field(default_factory=dict, repr=False)
    started_at: str | None = None
    models: tuple[ModelTokens, ...] = ()

    def calls_by_family(self) -> dict[str, int]:
        """Tool calls per family, most frequent first (ties by name)."""
        counts = Counter(c.family for c in self.tool_calls)
        return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))

    @property
    def errored_calls(self) -> int:
        return sum(1 for c in self.tool_calls if c.error)

    def view(self, **options: Any) -> Any:
        """This session's page of the HTML report, for a notebook to show inline (see
        `evalkit.display`)."""
        from evalkit.display import view

        return view(self, **options)


# --- tool families ---------------------------------------------------------------------------

# Names are matched exactly (case-sensitive), so Claude Code's `Read`/`Bash` inside Inspect
# (inspect_swe, agent-formats §3.11) and Codex's lower-case names both land where they belong.
_FAMILIES: dict[str, str] = {
    # Codex: shell tools (§1.6), `exec --json` item kinds (§2.3); Inspect's standard tools;
    # Claude Code names as the reference's families give them (§1.4 of the reference spec).
    **dict.fromkeys(
        (
            "shell",
            "shell_command",
            "exec_command",
            "write_stdin",
            "local_shell",
            "container.exec",
            "command_execution",
            "bash",
            "bash_session",
            "python",
            "Bash",
            "BashOutput",
        ),
        "bash",
    ),
    **dict.fromkeys(
        (
            "apply_patch",
            "file_change",
            "text_editor",
            "str_replace_editor",
            "edit_file",
            "write_file",
            "Edit",
            "MultiEdit",
            "Write",
            "NotebookEdit",
        ),
        "edit",
    ),
    **dict.fromkeys(("read_file", "view_image", "Read", "NotebookRead"), "read"),
    **dict.fromkeys(("grep_files", "list_dir", "Grep", "Glob"), "search"),
    **dict.fromkeys(("web_search", "web_browser", "WebSearch", "WebFetch"), "web"),
    **dict.fromkeys(("update_plan", "todo_list", "TodoWrite"), "plan"),
    **dict.fromkeys(("tool_search", "ToolSearch"), "tool_search"),
    **dict.fromkeys(
        (
            "spawn_agent",
            "send_input",
            "wait",
            "wait_agent",
            "close_agent",
            "resume_agent",
            "list_agents",
            "collab_tool_call",
            "Task",
            "Agent",
        ),
        "agent",
    ),
}
_MCP = re.compile(r"^mcp__(?P<server>.+?)__(?P<tool>.+)$")
# Codex before 2025-10-19 named MCP tools `<server>__<tool>` (agent-formats §1.6).
_OLD_MCP = re.compile(r"^(?P<server>[A-Za-z0-9_-]+?)__(?P<tool>.+)$")


def mcp_server(name: str) -> str | None:
    """The MCP server of a tool name (`mcp__<server>__<tool>` or the older `<server>__<tool>`)."""
    m = _MCP.match(name) or _OLD_MCP.match(name)
    return m.group("server") if m else None


def tool_family(name: str) -> str:
    """The family of a tool name, for every agent (issue 15; agent-formats §1.6, §2.3, §3.6).

    A name containing `codegraph` is `codegraph`, as the reference's families rule; other MCP
    tools are named by their server (`mcp__sourcegraph__sg_read_file` → `sourcegraph`); the
    built-in tools of Codex, Inspect and Claude Code map to `bash`, `edit`, `read`, `search`,
    `web`, `plan`, `tool_search` and `agent`; anything else is `other`. Codex reads and searches
    files with shell commands, so those are `bash` here.
    """
    if "codegraph" in name:
        return "codegraph"
    if name in _FAMILIES:
        return _FAMILIES[name]
    server = mcp_server(name)
    return server if server else "other"


# --- reading JSON lines ----------------------------------------------------------------------


@fixed_stack
def read_json_lines(
    path: str, limits: ReadLimits | None = None
) -> tuple[list[tuple[int, dict[str, Any]]], FileRead]:
    """Every JSON-object line of a file with its 1-based line number, and the reading account.

    `*.gz` files are gunzipped. One damage rule for every reader (issue 21): blank lines, lines
    over the line limit, lines that are not JSON (nested too deeply to parse included), JSON
    that is not an object and objects whose `type` is not text (`bad_type`) are counted and
    skipped; nothing is fatal but an unreadable file.

    Raises:
        TranscriptError: The path is missing, unreadable or not a regular file.
    """
    limits = limits or ReadLimits.from_env()
    data, gz, truncated, _digest = read_file_bytes(path, limits, digest=False)
    out: list[tuple[int, dict[str, Any]]] = []
    blank = malformed = non_object = invalid = too_long = wrong_type = 0
    line_bytes = limits.line_bytes
    for lineno, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            blank += 1
            continue
        if len(raw) > line_bytes:
            too_long += 1
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            text = raw.decode("utf-8", "replace")
            invalid += 1
        try:
            value = json.loads(text)
        except (ValueError, RecursionError):
            malformed += 1
            continue
        if not isinstance(value, dict):
            non_object += 1
        elif bad_type(value):
            wrong_type += 1
        else:
            out.append((lineno, value))
    account = FileRead(
        path=path,
        records=len(out),
        blank=blank,
        malformed=malformed,
        non_object=non_object,
        invalid_utf8=invalid,
        gzip=gz,
        truncated_gzip=truncated,
        too_long=too_long,
        bad_type=wrong_type,
    )
    return out, account


_TYPED = ("payload", "item", "msg")


def bad_type(record: dict[str, Any]) -> bool:
    """Whether a JSON-object line has a `type` that is neither absent, null nor text: its own,
    or that of the object under `payload` (a Codex rollout line), `item` (a `codex exec --json`
    item event) or `msg`, `item_type` included. Such a line is damage: every reader skips and
    counts it, and format detection never reads it as evidence."""
    kind = record.get("type")
    if kind is not None and type(kind) is not str:
        return True
    for key in _TYPED:
        inner = record.get(key)
        if type(inner) is dict:
            for name in ("type", "item_type"):
                kind = inner.get(name)
                if kind is not None and type(kind) is not str:
                    return True
    return False


def dumps(value: Any, *, sort_keys: bool = False) -> str:
    """`json.dumps(value, ensure_ascii=False, sort_keys=sort_keys)` for a value read from JSON,
    however deeply it is nested: a value too deep for `json.dumps`'s recursion is written by an
    iterative walk giving the same text, so a line that parsed is measured, never a crash."""
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=sort_keys)
    except RecursionError:
        pass
    return _dumps_walk(value, sort_keys)


def _dumps_walk(value: Any, sort_keys: bool) -> str:
    out: list[str] = []
    stack: list[Any] = [value]
    scalar = json.JSONEncoder(ensure_ascii=False).encode
    while stack:
        item = stack.pop()
        if type(item) is _Text:
            out.append(item.text)
        elif isinstance(item, dict):
            if not item:
                out.append("{}")
                continue
            out.append("{")
            keys = sorted(item) if sort_keys else list(item)
            stack.append(_Text("}"))
            for n in range(len(keys) - 1, -1, -1):
                stack.append(item[keys[n]])
                stack.append(_Text((", " if n else "") + scalar(str(keys[n])) + ": "))
        elif isinstance(item, list | tuple):
            if not item:
                out.append("[]")
                continue
            out.append("[")
            stack.append(_Text("]"))
            for n in range(len(item) - 1, -1, -1):
                stack.append(item[n])
                if n:
                    stack.append(_Text(", "))
        else:
            out.append(scalar(item))
    return "".join(out)


class _Text:
    """Literal text on `dumps`'s work stack (a `str` there is a value to write)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


def loads_or_none(text: str) -> Any:
    """`json.loads(text)`, or None when it is not JSON or is nested too deeply to parse."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def number(value: Any) -> float | None:
    """A JSON number as a float; None for anything else (booleans included)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def text_of_parts(parts: Any, kinds: tuple[str, ...]) -> str:
    """The `text` of every content part whose `type` is one of `kinds`, joined with "\\n"."""
    if isinstance(parts, str):
        return parts
    if not isinstance(parts, list):
        return ""
    texts = [
        p["text"]
        for p in parts
        if isinstance(p, dict) and p.get("type") in kinds and isinstance(p.get("text"), str)
    ]
    return "\n".join(texts)


def count_unknown(kinds: Iterator[str] | list[str]) -> tuple[tuple[str, int], ...]:
    """Unknown kinds with their counts, sorted by kind (deterministic output)."""
    return tuple(sorted(Counter(kinds).items()))
