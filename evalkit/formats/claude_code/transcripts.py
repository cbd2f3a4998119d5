"""Reading Claude Code stream-json transcripts into one event list (spec §1.1–1.6).

A *session* is an ordered list of segment files (`run-X.jsonl`, `run-X.t2.jsonl`, …); their events
are concatenated in the order given. Reading is tolerant and accountable: every line that is
skipped is counted per file in a `SegmentRead`, never silently lost from view, while the events
that survive are exactly the ones the reference harness keeps.

Errors (a missing, unreadable or non-regular path; a line the reference crashes on) raise
`TranscriptError`, which names the file and, where it can, the line.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from stat import S_ISREG
from typing import Any

from evalkit.ecma import js_json, js_string, js_truthy, pl
from evalkit.errors import EmptyFile, NotATranscript, TranscriptError
from evalkit.formats.claude_code import containers
from evalkit.formats.claude_code.containers import NO_TYPE, READ_TYPES
from evalkit.formats.claude_code.events import at_event
from evalkit.formats.claude_code.fastjson import NOT_EXACT, fast_loads
from evalkit.formats.files import OVER_BUDGET as _OVER_BUDGET
from evalkit.formats.files import ReadLimits, content_digest, read_file_bytes
from evalkit.formats.frozen import quick_init
from evalkit.formats.profiles import CODEGRAPH, CODEGRAPH_EXPLORE, ToolProfile
from evalkit.formats.stack import fixed_stack

__all__ = [
    "EXPLORE",
    "ReadLimits",
    "SegmentRead",
    "Transcript",
    "ToolResult",
    "read_transcript",
    "read_segment",
    "parse_line",
    "content_digest",
    "is_explore",
    "family",
    "result_text",
    "tool_results",
    "explore_texts",
    "id_key",
    "thread_id",
    "thread_of",
    "message_key",
]

# §1.4: the name the harness registers; any MCP server prefix works for `is_explore`.
EXPLORE = CODEGRAPH_EXPLORE
_MAX_SAFE_INTEGER = 2**53
# Event `type`s Claude Code writes: headless stream-json (§1.3) and interactive project logs
# (§1.10). A file with none of them is not a transcript.
EVENT_TYPES = frozenset(
    {
        "system",
        "assistant",
        "user",
        "result",
        "summary",
        "file-history-snapshot",
        "queue-operation",
        "stream_event",
        "attachment",
        "progress",
    }
)


@quick_init
@dataclass(frozen=True)
class SegmentRead:
    """What reading one segment file kept and skipped.

    Attributes:
        path: The file as the caller named it.
        lines: Pieces after splitting the decoded text on "\\n" (a final empty piece included).
        events: Lines kept as events (JSON objects).
        blank: Empty pieces skipped.
        malformed: Pieces that are not valid JSON (partial lines, NaN, a leading BOM), skipped.
        non_object: Valid JSON that is not an object (numbers, strings, arrays), ignored.
        invalid_utf8: Lines holding bytes that are not UTF-8, decoded with U+FFFD.
        gzip: The file was gzip-compressed.
        truncated_gzip: The gzip stream ended early; what was decompressed is kept.
        digest: `content_digest` of the bytes read from the file (before any gunzip), taken
            as they were read, so a cache keyed on it describes exactly what was parsed.
        claude_events: Events whose `type` is a Claude Code event type (`EVENT_TYPES`).
        unreadable: Why the file could not be read at all (a subagent file that is not a
            regular file, say), else None; it then contributed no events.
        over_limit: Lines skipped for being over the length limit, in words, else None.
        too_long: Lines longer than `ReadLimits.line_bytes`, skipped.
        container: `jsonl`, or `json-array` for a file that is one JSON array of stream
            messages (agent-formats §5.2); for an array, `lines` counts its elements.
        wrapped: Events unwrapped from `{"timestamp", "raw"}` lines (§5.2).
        other_types: Kept events of types the metrics do not read (`rate_limit_event`, …),
            counted per type in first-seen order; never damage.
    """

    path: str
    lines: int = 0
    events: int = 0
    blank: int = 0
    malformed: int = 0
    non_object: int = 0
    invalid_utf8: int = 0
    gzip: bool = False
    truncated_gzip: bool = False
    digest: str = ""
    claude_events: int = 0
    unreadable: str | None = None
    over_limit: str | None = None
    too_long: int = 0
    container: str = "jsonl"
    wrapped: int = 0
    other_types: tuple[tuple[str, int], ...] = ()

    @property
    def is_transcript(self) -> bool:
        """Empty (only blank lines), or at least one line is a Claude Code event."""
        return self.claude_events > 0 or self.lines == self.blank

    @property
    def skipped(self) -> int:
        """Non-blank lines that did not become events."""
        return self.malformed + self.non_object + self.too_long

    def damage(self) -> str | None:
        """What was lost or repaired reading this file, in words; None for a clean file.

        Blank lines are not damage (every file ends with one empty piece).
        """
        parts = []
        if self.malformed:
            parts.append(f"{self.malformed} malformed {pl(self.malformed, 'line')} skipped")
        if self.non_object:
            unit = "element" if self.container == "json-array" else "line"
            parts.append(f"{self.non_object} non-object JSON {pl(self.non_object, unit)} ignored")
        if self.invalid_utf8:
            parts.append(
                f"{self.invalid_utf8} {pl(self.invalid_utf8, 'line')} with invalid UTF-8 "
                "decoded with U+FFFD"
            )
        if self.truncated_gzip:
            parts.append("gzip stream cut short (what it held was read)")
        if self.over_limit:
            parts.append(self.over_limit)
        if self.unreadable:
            parts.append(f"could not be read ({self.unreadable})")
        return ", ".join(parts) or None


@quick_init
@dataclass(frozen=True)
class Transcript:
    """The events of one session, all segments concatenated (§1.1).

    Attributes:
        paths: The segment files, in order.
        events: Every kept event (a JSON object as a dict), in file then line order.
        segments: One `SegmentRead` per file.
        segment_starts: Index into `events` where each segment's events begin.
    """

    paths: tuple[str, ...]
    events: list[dict[str, Any]] = field(repr=False)
    segments: tuple[SegmentRead, ...]
    segment_starts: tuple[int, ...]

    @property
    def skipped_lines(self) -> int:
        return sum(s.skipped for s in self.segments)


def _reject_constant(name: str) -> Any:
    # §10.2: ECMAScript's JSON.parse rejects NaN and ±Infinity, so such a line is skipped.
    raise ValueError(f"{name} is not JSON")


def _parse_int(text: str) -> int | float:
    # §10.2: numbers are doubles. An integer literal that is a safe integer (|n| ≤ 2^53) is kept
    # as a Python int (the same value); any other becomes the double JSON.parse rounds it to.
    # The range check is on the exact value (±(2^53+1) rounds to ±2^53, which would pass), and
    # the digit count is checked first: a 400-digit literal is Infinity, never int() → float().
    if len(text) <= 17:
        value = int(text)
        if value == 0 and text.startswith("-"):
            return -0.0  # JSON.parse("-0") is negative zero (1 / -0 is -Infinity)
        if -_MAX_SAFE_INTEGER <= value <= _MAX_SAFE_INTEGER:
            return value
    return float(text)


_DECODER = json.JSONDecoder(parse_constant=_reject_constant, parse_int=_parse_int)


def parse_line(piece: str) -> tuple[bool, Any]:
    """Parse one line as ECMAScript's JSON.parse would: `(ok, value)`."""
    try:
        value, end = _DECODER.raw_decode(piece, _skip_ws(piece, 0))
    except (ValueError, RecursionError):
        return False, None
    if _skip_ws(piece, end) != len(piece):
        return False, None
    return True, value


def _skip_ws(s: str, i: int) -> int:
    # JSON whitespace only (space, \t, \n, \r): a leading BOM is *not* skipped (§1.1).
    n = len(s)
    while i < n and s[i] in " \t\n\r":
        i += 1
    return i


@fixed_stack
def read_segment(
    path: str,
    *,
    drop_falsy: bool = False,
    limits: ReadLimits | None = None,
    known_stat: os.stat_result | None = None,
    digest: bool = True,
) -> tuple[list[dict[str, Any]], SegmentRead]:
    """Read one segment file: its events and the account of what was skipped.

    Args:
        path: A `.jsonl` file, optionally gzip-compressed.
        drop_falsy: The interactive reader's rule (§1.10 step 5): lines parsing to `null`,
            `false`, `0` or `""` are dropped instead of raising.
        limits: The reading bounds (default: from the environment).
        known_stat: `os.stat(path)` just taken by the caller (`read_file_bytes`).
        digest: Hash the file's bytes for the corpus store (`SegmentRead.digest`, else `""`).

    Raises:
        TranscriptError: The path is missing, unreadable or not a regular file, or a line is JSON
            `null` (the reference crashes on it, §9.1 case 1) and `drop_falsy` is off.
    """
    limits = limits or ReadLimits.from_env()
    data, gz, truncated, digest_hex = read_file_bytes(
        path, limits, known_stat=known_stat, digest=digest
    )
    if containers.starts_with_array(data):
        found = containers.read_array(data, parse_line)
        if found is not None:
            return _array_segment(path, *found, gz=gz, truncated=truncated, digest=digest_hex)
    events: list[dict[str, Any]] = []
    blank = malformed = non_object = invalid = claude = too_long = 0
    line_bytes = limits.line_bytes
    append = events.append
    lineno = 0
    # `containers.other_types(events)` and whether `unwrap_all` has anything to look at, counted
    # as the lines are read instead of in two more walks over the events.
    others: dict[str, int] = {}
    maybe_wrapped = False
    for raw in _pieces(data):  # `data.split(b"\n")`, as views of `data`
        lineno += 1
        if not raw:
            blank += 1
            continue
        if len(raw) > line_bytes:
            too_long += 1
            continue
        value = fast_loads(raw)  # orjson where it is certainly exact, else NOT_EXACT
        if type(value) is dict:  # the usual line, as the `isinstance` branch below takes it
            append(value)
            etype = value.get("type")
            if type(etype) is str:
                if etype in EVENT_TYPES:
                    claude += 1
                if etype not in READ_TYPES:
                    others[etype] = others.get(etype, 0) + 1
            else:
                others[NO_TYPE] = others.get(NO_TYPE, 0) + 1
            if "raw" in value:
                maybe_wrapped = True
            continue
        if value is not NOT_EXACT:
            ok = True
        else:
            raw = bytes(raw)
            try:
                piece = raw.decode("utf-8")
            except UnicodeDecodeError:
                piece = raw.decode("utf-8", "replace")
                invalid += 1
            ok, value = parse_line(piece)
        if not ok:
            malformed += 1
        elif isinstance(value, dict):
            events.append(value)
            etype = value.get("type")
            if isinstance(etype, str):
                if etype in EVENT_TYPES:
                    claude += 1
                if etype not in READ_TYPES:
                    others[etype] = others.get(etype, 0) + 1
            else:
                others[NO_TYPE] = others.get(NO_TYPE, 0) + 1
            if "raw" in value:
                maybe_wrapped = True
        elif value is None and not drop_falsy:
            raise TranscriptError(
                path, "line is JSON null (the reference harness crashes here)", lineno
            )
        else:
            non_object += 1
    wrapped = containers.unwrap_all(events) if maybe_wrapped else 0
    account = SegmentRead(
        path=path,
        lines=lineno,
        events=len(events),
        blank=blank,
        malformed=malformed,
        non_object=non_object,
        invalid_utf8=invalid,
        gzip=gz,
        truncated_gzip=truncated,
        digest=digest_hex,
        claude_events=claude if not wrapped else _claude_events(events),
        over_limit=(
            f"{too_long} {pl(too_long, 'line')} over the length limit skipped" if too_long else None
        ),
        too_long=too_long,
        wrapped=wrapped,
        # Unwrapping replaced events: their types are counted again.
        other_types=containers.other_types(events) if wrapped else tuple(others.items()),
    )
    return events, account


def _pieces(data: bytes) -> Iterator[memoryview]:
    """The pieces of `data.split(b"\\n")`, in order, as views (no copy of a line's bytes).

    0x0A never occurs inside a UTF-8 sequence (§10.8). Each newline is found by a `find`
    (a `memchr`) rather than by `split`'s byte-by-byte loop.
    """
    view = memoryview(data)
    find = data.find
    start = 0
    while True:
        end = find(b"\n", start)
        if end < 0:
            yield view[start:]
            return
        yield view[start:end]
        start = end + 1


def _claude_events(events: list[dict[str, Any]]) -> int:
    n = 0
    for event in events:
        etype = event.get("type")
        if isinstance(etype, str) and etype in EVENT_TYPES:
            n += 1
    return n


def _array_segment(
    path: str, elements: list[Any], invalid: int, *, gz: bool, truncated: bool, digest: str = ""
) -> tuple[list[dict[str, Any]], SegmentRead]:
    """A file that is one JSON array of stream messages (agent-formats §5.2): its object
    elements are the events (wrapped ones unwrapped); any other element is a non-object."""
    events = [e for e in elements if isinstance(e, dict)]
    wrapped = containers.unwrap_all(events)
    return events, SegmentRead(
        path=path,
        lines=len(elements),
        events=len(events),
        non_object=len(elements) - len(events),
        invalid_utf8=invalid,
        gzip=gz,
        truncated_gzip=truncated,
        claude_events=_claude_events(events),
        digest=digest,
        container="json-array",
        wrapped=wrapped,
        other_types=containers.other_types(events),
    )


def read_transcript(
    paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    *,
    drop_falsy: bool = False,
    digests: bool = True,
    refuse_empty: bool = False,
) -> Transcript:
    """Read the segment files of one session, in the order given (§1.1).

    The caller orders `.tN` segments numerically; `evalkit.tables.sweep` discovery does.
    `digests=False` leaves each segment's `digest` empty (for a caller that stores nothing).
    `refuse_empty=True` first raises `EmptyFile` for the first segment that is a regular file of
    zero bytes, before any is read, as `evalkit.errors.refuse_empty` does (from the same look
    at each file that the reading uses, so each file is looked at once).
    """
    if isinstance(paths, str | os.PathLike):
        paths = [paths]
    names = tuple(os.fspath(p) for p in paths)
    if not names:
        raise TranscriptError("(no files)", "a session needs at least one segment file")
    events: list[dict[str, Any]] = []
    accounts: list[SegmentRead] = []
    starts: list[int] = []
    limits = ReadLimits.from_env()
    looks: list[os.stat_result | Exception] = []
    for name in names:
        try:
            looks.append(os.stat(name))
        except (OSError, ValueError) as exc:
            looks.append(exc)
    if refuse_empty:
        for name, st in zip(names, looks, strict=True):
            if type(st) is os.stat_result and S_ISREG(st.st_mode) and st.st_size == 0:
                raise EmptyFile(name)
    total = 0
    for name, look in zip(names, looks, strict=True):
        starts.append(len(events))
        if isinstance(look, ValueError):
            raise look  # a path `os.stat` refuses (an embedded NUL), as it always raised here
        st: os.stat_result | None = None
        if isinstance(look, os.stat_result):
            st = look
            total += st.st_size
        # else: read_segment names the problem
        if total > limits.session_bytes:
            raise TranscriptError(name, _OVER_BUDGET)
        seg_events, account = read_segment(
            name, drop_falsy=drop_falsy, limits=limits, known_stat=st, digest=digests
        )
        if not account.is_transcript:
            raise NotATranscript(name, account.too_long)
        events.extend(seg_events)
        accounts.append(account)
    return Transcript(names, events, tuple(accounts), tuple(starts))


# --- tool names and results (§1.4, §1.5) ---------------------------------------------------


def is_explore(name: Any, profile: ToolProfile = CODEGRAPH) -> bool:
    """§1.4: a codegraph-format explore tool of `profile` (by default: the tool name contains
    `codegraph_explore`, any MCP server prefix)."""
    return profile.is_explore(name)


def family(name: Any, profile: ToolProfile = CODEGRAPH) -> str:
    """§1.4: the profile's family of a tool name (by default `codegraph`, `read`, `search`,
    `bash` or `other`, tested in that order)."""
    if not isinstance(name, str):
        name = js_string(name) if name is not None else ""
    return profile.family(name)


def result_text(content: Any, *, path: str = "(transcript)") -> str:
    """`textOf(content)` (§1.5): a tool_result's text, array pieces glued with no separator."""
    if isinstance(content, list):
        parts = []
        for el in content:
            if el is None:
                raise TranscriptError(
                    path,
                    "null element in a tool_result content array "
                    "(the reference harness crashes here)",
                )
            if isinstance(el, dict) and el.get("text") is not None:
                text = el["text"]
                parts.append(text if isinstance(text, str) else js_string(text))
            elif isinstance(el, str):
                parts.append(el)
            else:
                parts.append(js_json(el))
        return "".join(parts)
    if isinstance(content, str):
        return content
    if content is None:
        return ""
    return js_json(content)


@quick_init
@dataclass(frozen=True)
class ToolResult:
    """One `tool_result` block, with the tool name known at that point of the stream (§1.5).

    Attributes:
        index: Position of the holding event in the event list.
        tool_use_id: The id it answers.
        name: The tool's name, `""` when the id was not (yet) seen.
        is_error: ECMAScript truthiness of `is_error`.
        text: `result_text` of its content.
        thread: `parent_tool_use_id` of the holding event, or `"main"` (§1.8).
    """

    index: int
    tool_use_id: Any
    name: str
    is_error: bool
    text: str
    thread: str


def thread_id(event: dict[str, Any]) -> Any:
    """The thread of an event (§1.8) as the reference holds it: its raw `parent_tool_use_id`, or
    `main` when that is null or absent. `""` is a thread of its own, never main (test for None,
    not truthiness); a number stays a number. Key a map of threads with `id_key`, so `5` and
    `"5"` are two threads, as in the reference's `Map`."""
    parent = event.get("parent_tool_use_id")
    return "main" if parent is None else parent


def thread_of(event: dict[str, Any]) -> str:
    """`thread_id` as text (`String()`), for tables and labels: `main` or the parent id."""
    return js_string(thread_id(event))


def tool_results(
    events: Sequence[dict[str, Any]], *, path: str = "(transcript)", any_type: bool = False
) -> Iterator[ToolResult]:
    """Every tool_result block in stream order, named by the tool_use seen before it (§1.5).

    Args:
        events: The event list.
        path: Named in errors.
        any_type: Walk every event whose `message.content` is an array, as the interactive
            parser's `collectExploreTexts` does (§1.6), instead of assistant/user events only.
    """
    names: dict[Any, Any] = {}
    for i, event in enumerate(events):
        etype = event.get("type")
        if not any_type and etype != "assistant" and etype != "user":
            continue
        message = event.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            continue
        thread = None
        for block in content:
            if block is None:
                if any_type and etype not in ("assistant", "user"):
                    continue
                raise at_event(
                    TranscriptError(
                        path,
                        f"null block in {'an' if etype == 'assistant' else 'a'} {etype}"
                        " message's content "
                        "(the reference harness crashes here)",
                    ),
                    i,
                )
            if not isinstance(block, dict):
                continue
            btype = block.get("type")
            if btype == "tool_use" and (any_type or etype == "assistant"):
                bid = block.get("id")
                names[bid if type(bid) is str else id_key(bid)] = block.get("name")
            elif btype == "tool_result" and (any_type or etype == "user"):
                tid = block.get("tool_use_id")
                name = names.get(tid if type(tid) is str else id_key(tid), "")
                raw = block.get("content")
                if thread is None:
                    thread = thread_of(event)
                yield ToolResult(
                    index=i,
                    tool_use_id=tid,
                    name=name if isinstance(name, str) else js_string(name),
                    is_error=js_truthy(block.get("is_error")),
                    text=raw if type(raw) is str else _result_text_at(raw, path, i),
                    thread=thread,
                )


def _result_text_at(content: Any, path: str, index: int) -> str:
    try:
        return result_text(content, path=path)
    except TranscriptError as exc:
        raise at_event(exc, index) from None


def id_key(x: Any) -> Any:
    """A key with the equality of an ECMAScript `Map`/`Set` for a JSON id value.

    Strings and numbers compare by value (`1` and `1.0` are one number; `"1"` is another key);
    booleans by value but never equal to a number (Python's `True == 1`); an object or array
    is a new identity each time it is parsed, so it equals nothing, not even an identical copy.
    """
    if isinstance(x, bool):
        return ("bool", x)
    if x is None or isinstance(x, str | int | float):
        return x
    return object()


def message_key(message_id: Any) -> Any:
    """The request key of an assistant `message.id` (§6.2, §1.11): None when it is falsy,
    which means "no request"; else `id_key`, so each distinct id counts once."""
    return id_key(message_id) if js_truthy(message_id) else None


def explore_texts(
    events: Sequence[dict[str, Any]],
    *,
    path: str = "(transcript)",
    any_type: bool = False,
    profile: ToolProfile = CODEGRAPH,
) -> list[str]:
    """The answered explore texts of §1.6: non-error explore results, any thread, stream order.

    Only the profile's codegraph-format explore tools count (none for a profile without one).
    """
    return [
        r.text
        for r in tool_results(events, path=path, any_type=any_type)
        if profile.is_explore(r.name) and not r.is_error
    ]
