"""Explore sufficiency (CG-8): was a response enough, judged by what the agent did next (§5).

Every answered `codegraph_explore` call gets one bucket from the agent's next substantive action
in the same thread: another explore (insufficient), a Read of a file the response returned (right
file, wrong bytes), a Read of a file it did not return (recall), a search (still hunting), or
anything else (sufficient). Only an action in a *later* assistant message is a reaction;
`ToolSearch`/`TodoWrite` are stepped over; a delegation is judged by the subagent's first
substantive action (§5.1).

The reference's quirks are reproduced (§9.2 rows 9–11): the redirect test of `bash_intent`, the
`mcp__…__` prefix that survives a server name with `_`, and `concurrent` counted per (explore,
same-message file access) pair.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from evalkit.ecma import (
    NOT_WS,
    WS,
    fix,
    js_json,
    js_string,
    js_truthy,
    lj,
    pl,
    printable,
    rj,
    utf16_len,
    utf16_prefix,
)
from evalkit.errors import TranscriptError
from evalkit.formats.claude_code.events import at_event
from evalkit.formats.claude_code.index import ABSENT, SessionIndex, index_events
from evalkit.formats.claude_code.transcripts import id_key
from evalkit.formats.frozen import quick_init
from evalkit.formats.profiles import CODEGRAPH, ToolProfile
from evalkit.metrics.allocation import norm_path, same_path
from evalkit.metrics.envelope import mentioned_paths, returned_paths
from evalkit.metrics.figures import BUCKET_LABELS, BUCKETS  # §5.1, defined with the run figures

__all__ = [
    "BUCKETS",
    "BUCKET_LABELS",
    "SufficiencyCall",
    "UNDEFINED",
    "Sufficiency",
    "BashIntent",
    "classify_sufficiency",
    "format_sufficiency",
    "bash_intent",
]

Bucket = Literal["explore_again", "read_returned", "read_missed", "search", "sufficient"]


FINAL_ANSWER = "(final answer)"
_BOOKKEEPING = ("ToolSearch", "TodoWrite")  # stepped over (§5.3)
_DELEGATION = ("Agent", "Task")
_READS = ("Read", "NotebookRead")
_SEARCHES = ("Grep", "Glob")


# --- paths (§2.8 returned/mentioned in evalkit.metrics.envelope, §3.4 equality in evalkit.metrics.allocation) --


def _path_text(p: Any) -> str | None:
    # `normPath` takes the path "as a string" (§3.4): a malformed non-string path is converted.
    return p if p is None or isinstance(p, str) else js_string(p)


# --- Bash intent (§5.6) ----------------------------------------------------------------------

_WRITES = re.compile(">" + WS + "*" + NOT_WS)
_CMD_START = r"(?:^|[;&|]|\$\(|`)" + WS + "*(?:sudo" + WS + "+)?"
_READ_CMD = re.compile(
    _CMD_START + "(?:cat|bat|head|tail|less|more|nl|sed|awk)" + WS + "+([^\\n|;&]*)", re.ASCII
)
_SEARCH_CMD = re.compile(_CMD_START + r"(?:grep|egrep|fgrep|rg|ag|ack|find|fd|ls|tree)\b", re.ASCII)
_WS_RUN = re.compile(WS + "+")
_DIGIT_START = re.compile(r"^['\"]?[0-9]")
_EDGE_QUOTE = re.compile(r"^['\"]|['\"]\Z")


@quick_init
@dataclass(frozen=True)
class BashIntent:
    """What a Bash command does for sufficiency: `read` (with `path`), `search` or `none`."""

    kind: Literal["read", "search", "none"]
    path: str | None = None


def bash_intent(cmd: Any) -> BashIntent:
    """§5.6 `bashIntent`: a read of a path, a search, or none.

    A heredoc or any `>` followed by a non-space marks the command as writing, which disables
    read detection (quirk §9.2 row 9); search detection still runs.
    """
    c = js_string(cmd) if js_truthy(cmd) else ""
    if "<<" not in c and not _WRITES.search(c):
        m = _READ_CMD.search(c)
        if m:
            tokens = [
                t
                for t in _WS_RUN.split(m.group(1))
                if t and not t.startswith("-") and not _DIGIT_START.match(t)
            ]
            pathlike = [t for t in tokens if "/" in t or "." in t]
            if pathlike:
                return BashIntent("read", _EDGE_QUOTE.sub("", pathlike[-1]))
    if _SEARCH_CMD.search(c):
        return BashIntent("search")
    return BashIntent("none")


# --- result ------------------------------------------------------------------------------------


@quick_init
@dataclass(frozen=True)
class SufficiencyCall:
    """One answered explore call and its verdict (§5.3 step 7).

    Attributes:
        thread: `main`, or the delegating tool_use id of a subagent thread (§1.8), raw: a
            non-string `parent_tool_use_id` keeps its JSON value (`5` is not `"5"`).
        query: `input.query` as ECMAScript `String()` would give it (`""` when absent).
        files: Number of file sections the response returned (duplicates count).
        chars: Length of the response text, in UTF-16 units.
        bucket: One of `BUCKETS`.
        next: What the agent did next, as the reference holds it: text, or the raw tool name
            when the reaction is the name itself (a non-string name stays as it is), or
            `UNDEFINED` for a missing name (printed `undefined`, left out of the JSON).
        named: Only for `read_missed`: whether the response mentioned the path it read.
        tool_use_id: The explore's tool_use id (links the call to `calls_df`; not in the JSON).
    """

    thread: Any
    query: str
    files: int
    chars: int
    bucket: Bucket
    next: Any
    named: bool | None = None
    tool_use_id: Any = None

    def to_dict(self) -> dict[str, Any]:
        out = {
            "thread": self.thread,
            "query": self.query,
            "files": self.files,
            "chars": self.chars,
            "bucket": self.bucket,
            "next": self.next,
            "named": self.named,
        }
        if self.next is UNDEFINED:  # JSON.stringify leaves an undefined property out
            del out["next"]
        return out

    @property
    def next_text(self) -> str:
        """`next` as the printed block shows it (`"" + next`)."""
        return _concat(self.next)


@quick_init
@dataclass(frozen=True)
class Sufficiency:
    """§5.7: recorded calls (grouped by thread), bucket counts, errors and concurrent accesses.

    Attributes:
        calls: One `SufficiencyCall` per answered explore, grouped by thread in order of each
            thread's first assistant event, then in action order (§5.3).
        counts: Calls per bucket, all five keys, in `BUCKETS` order.
        errors: Explore calls with no non-error result (errored or never answered).
        concurrent: (explore, same-message file access) pairs (§9.2 row 11).
    """

    calls: tuple[SufficiencyCall, ...]
    counts: dict[str, int] = field(default_factory=dict)
    errors: int = 0
    concurrent: int = 0

    @property
    def answered(self) -> int:
        return len(self.calls)

    def to_dict(self) -> dict[str, Any]:
        """The `sufficiency` object of `evalkit run --json`."""
        return {
            "answered": self.answered,
            "errors": self.errors,
            "concurrent": self.concurrent,
            "counts": dict(self.counts),
            "calls": [c.to_dict() for c in self.calls],
        }

    def to_frame(self):
        """One row per answered explore call: `order`, thread, query, files, chars, bucket,
        next action and whether the file read next was named by the response."""
        import pandas as pd

        rows = [
            {"order": i, **c.to_dict(), "thread": js_string(c.thread), "next": c.next_text}
            for i, c in enumerate(self.calls, start=1)
        ]
        columns = ["order", "thread", "query", "files", "chars", "bucket", "next", "named"]
        return pd.DataFrame(rows, columns=columns)


@dataclass
class _Action:
    msg_id: Any
    id: Any
    name: Any
    input: Any
    event_index: int = -1


@quick_init
@dataclass(frozen=True)
class _Reaction:
    bucket: str
    next: Any
    named: bool | None = None


UNDEFINED: Any = ABSENT  # ECMAScript `undefined`: a tool_use without a `name`
_MISSING = UNDEFINED


def _key(x: Any) -> Any:
    """A dict key for an id; ECMAScript object keys are strings, so non-strings are converted."""
    return x if isinstance(x, str) else js_string(x) if x is not None else "null"


def _name_text(name: Any) -> str:
    return "" if name is None or name is _MISSING else js_string(name)


def _concat(x: Any) -> str:
    """`"" + x` in ECMAScript, for a tool name that is absent or not a string."""
    if x is _MISSING:
        return "undefined"
    return js_string(x)


def _field(obj: Any, name: str) -> Any:
    return obj.get(name) if isinstance(obj, dict) else None


def _same_message(a: Any, b: Any) -> bool:
    # `===`: two distinct parsed objects are never equal, and "1" is not 1.
    if isinstance(a, dict | list) or isinstance(b, dict | list):
        return a is b
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    return type(a) is type(b) and a == b


def _is_file_access(action: _Action) -> bool:
    name = action.name
    if name in _READS or name in _SEARCHES:
        return True
    return name == "Bash" and bash_intent(_field(action.input, "command")).kind != "none"


def _read_of(
    path: Any, prefix: str, returned: list[str], response: str, earlier: list[str]
) -> _Reaction:
    """§5.5 `readOf`. `response` is the explore's text: its mentioned paths are needed only here,
    so they are scanned only for a read that missed."""
    path = _path_text(path)
    base = norm_path(path).split("/")[-1] or (path or "")
    if any(same_path(path, r) for r in returned):
        return _Reaction("read_returned", f"{prefix}Read {base}")
    if any(same_path(path, r) for r in earlier):
        return _Reaction("read_returned", f"{prefix}Read {base} (returned by an earlier explore)")
    named = any(same_path(path, m) for m in mentioned_paths(response))
    suffix = " (named, not returned)" if named else ""
    return _Reaction("read_missed", f"{prefix}Read {base}{suffix}", named)


_MCP_PREFIX = re.compile(r"^mcp__[^_]*__")


def _reaction_of(
    action: _Action,
    returned: list[str],
    response: str,
    earlier: list[str],
    path: str,
    profile: ToolProfile = CODEGRAPH,
) -> _Reaction:
    """§5.4 `reactionOf` (a call of the tool under test, by default `codegraph`, explores again)."""
    name = action.name
    if profile.is_tool_under_test(_name_text(name)):
        if not isinstance(name, str):
            raise at_event(
                TranscriptError(
                    path,
                    f"tool name {js_json(name)} is not a string "
                    "(the reference harness crashes here)",
                ),
                action.event_index,
            )
        return _Reaction("explore_again", _MCP_PREFIX.sub("", name, count=1))
    if name in _READS:
        target = _field(action.input, "file_path")
        if target is None:
            target = _field(action.input, "notebook_path")
        return _read_of(target, "", returned, response, earlier)
    if name in _SEARCHES:
        return _Reaction("search", name)
    if name == "Bash":
        intent = bash_intent(_field(action.input, "command"))
        if intent.kind == "read":
            return _read_of(intent.path, "Bash ", returned, response, earlier)
        if intent.kind == "search":
            return _Reaction("search", "Bash search")
    return _Reaction("sufficient", name)


def classify_sufficiency(
    events: Sequence[dict[str, Any]],
    *,
    path: str = "(transcript)",
    profile: ToolProfile = CODEGRAPH,
    index: SessionIndex | None = None,
) -> Sufficiency:
    """§5.2–5.3 `classifySufficiency`: bucket every answered explore call.

    Args:
        events: The session's events, all threads and segments, in stream order.
        path: Named in errors.
        profile: Its codegraph-format explore tools are the calls bucketed (none: no calls).
        index: `index_events(events)` when the caller built it already (the session does).

    Raises:
        TranscriptError: On inputs the reference crashes on (§9.1): a null block in an assistant
            or user message's content, a null element in an explore result's content, a
            non-string tool name containing `codegraph` judged as a reaction.
    """
    if index is None:
        index = index_events(events, path=path)
    threads: dict[Any, tuple[Any, list[_Action]]] = {}  # Map key → (raw thread, actions)
    names: dict[Any, Any] = {}
    text_by_id: dict[Any, str] = {}
    is_explore = profile.is_explore
    # With every id a string, each result's use is the one this map would give it (§10.6).
    plain = index.plain_ids
    for view in index.views:
        content = view.content
        if type(content) is not list:
            continue
        if view.type == "assistant":
            thread = view.thread
            actions = threads.setdefault(
                thread if type(thread) is str else id_key(thread), (thread, [])
            )[1]
            if view.null is not None:
                raise view.null
            for use in view.uses:
                bid = use.id
                name = use.name
                if not plain:
                    names[bid if type(bid) is str else _key(bid)] = name
                msg_id = use.message.get("id")
                if not (type(msg_id) is str and msg_id) and not js_truthy(msg_id):
                    # Every call without a message id counts as its own message (§5.2).
                    msg_id = f"#{js_string(thread)}-{len(actions)}"
                raw_input = use.input
                actions.append(
                    _Action(
                        msg_id,
                        bid,
                        name,
                        raw_input if isinstance(raw_input, dict) or js_truthy(raw_input) else {},
                        view.index,
                    )
                )
        elif view.type == "user":
            for r in view.results:
                if view.null is not None and view.null_pos < r.pos:
                    raise view.null
                tid = r.id
                if plain:
                    name = r.use.name if r.use is not None else None
                else:
                    if type(tid) is not str:
                        tid = _key(tid)
                    name = names.get(tid)
                if type(name) is not str:
                    name = _name_text(name)
                if is_explore(name) and not r.is_error:
                    if r.error is not None:
                        raise r.error
                    text_by_id[tid] = r.text  # type: ignore[assignment]
            if view.null is not None:
                raise view.null

    calls: list[SufficiencyCall] = []
    counts = dict.fromkeys(BUCKETS, 0)
    errors = concurrent = 0
    for thread, actions in threads.values():
        earlier: list[str] = []
        for i, action in enumerate(actions):
            if not profile.is_explore(_name_text(action.name)):
                continue
            text = text_by_id.get(_key(action.id))
            if text is None:
                errors += 1
                continue
            returned = returned_paths(text)
            reaction = _Reaction("sufficient", FINAL_ANSWER)
            for later in actions[i + 1 :]:
                if _same_message(later.msg_id, action.msg_id):
                    # Issued before the response existed: not a reaction (§5.1).
                    if _is_file_access(later):
                        concurrent += 1
                    continue
                if later.name in _BOOKKEEPING:
                    continue
                if later.name in _DELEGATION:
                    reaction = _through_delegation(
                        later, threads, returned, text, earlier, path, profile
                    )
                    break
                reaction = _reaction_of(later, returned, text, earlier, path, profile)
                break
            earlier.extend(returned)
            counts[reaction.bucket] += 1
            query = _field(action.input, "query")
            calls.append(
                SufficiencyCall(
                    thread=thread,
                    query="" if query is None else js_string(query),
                    files=len(returned),
                    chars=utf16_len(text),
                    bucket=reaction.bucket,
                    next=reaction.next,
                    named=reaction.named,
                    tool_use_id=action.id,
                )
            )
    return Sufficiency(tuple(calls), counts, errors, concurrent)


def _through_delegation(
    delegation: _Action,
    threads: dict[Any, tuple[Any, list[_Action]]],
    returned: list[str],
    response: str,
    earlier: list[str],
    path: str,
    profile: ToolProfile = CODEGRAPH,
) -> _Reaction:
    """§5.3 `throughDelegation`: the subagent's first substantive action, with the parent's paths."""
    sub = threads.get(id_key(delegation.id), (None, []))[1]
    first = next((a for a in sub if a.name not in _BOOKKEEPING and a.name not in _DELEGATION), None)
    if first is None:
        return _Reaction("sufficient", delegation.name)
    r = _reaction_of(first, returned, response, earlier, path, profile)
    return _Reaction(r.bucket, f"{_concat(delegation.name)} → {_concat(r.next)}", r.named)


# --- printed block (§5.8) ---------------------------------------------------------------------


def format_sufficiency(result: Sufficiency, indent: str = "  ") -> str:
    """§5.8 `formatSufficiency`, character for character (no trailing newline)."""
    i = indent
    answered = result.answered
    if answered == 0:
        line = i + "Explore sufficiency: no answered codegraph_explore calls"
        if result.errors > 0:
            line += f" ({result.errors} errored or never returned)"
        return line
    out = [
        f"{i}Explore sufficiency — what the agent did NEXT ({answered} answered "
        f"{pl(answered, 'call')}):"
    ]
    for key in BUCKETS:
        count = result.counts.get(key, 0)
        label, meaning = BUCKET_LABELS[key]
        share = fix((count / answered) * 100, 0) + "%"
        out.append(f"{i}  {rj(str(count), 3)} {rj(share, 4)}  {lj(label, 31)}{meaning}")
    for k, call in enumerate(result.calls, start=1):
        tag = " [subagent]" if js_truthy(call.thread) and call.thread != "main" else ""
        q = call.query if utf16_len(call.query) <= 46 else utf16_prefix(call.query, 45) + "…"
        out.append(
            f'{i}  {k}.{tag} "{q}" [{call.files} {pl(call.files, "file")}] → {call.next_text}'
        )
    notes = []
    if result.errors > 0:
        notes.append(
            f"{result.errors} errored/unanswered {pl(result.errors, 'call')} (not bucketed)"
        )
    if result.concurrent > 0:
        notes.append(
            f"{result.concurrent} file-access {pl(result.concurrent, 'call')} in the "
            "SAME message as an explore (not a reaction)"
        )
    if notes:
        out.append(f"{i}  note: " + " · ".join(notes))
    return printable("\n".join(out))
