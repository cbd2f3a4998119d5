"""Reading interactive Claude Code session logs: project log directories, the newest session log,
subagent files with their parent ids stamped (§1.10). `evalkit.session.read_session_file` builds the
session (metrics included) from what this module reads.

Claude Code's interactive mode writes each session to `~/.claude/projects/<escaped dir>/<id>.jsonl`
and each subagent to `<id>/subagents/<name>.jsonl`, with the delegating tool_use id in
`<name>.meta.json`. The reference's reader (`parse-session.mjs`, later revision) picks the newest
session, stamps every subagent event with its parent id, and reports tool counts, token totals,
sufficiency and allocation (no occupancy, no envelope view).

Interactive-only records (summaries, file-history snapshots, queue operations, system info) carry
no `message` content array and are ignored; `isSidechain` is not consulted (§1.7).
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from evalkit.ecma import js_add, js_json, js_string, js_truthy, listing_key
from evalkit.errors import EvalkitError, TranscriptError, UsageError, one_line
from evalkit.formats.claude_code.transcripts import SegmentRead, parse_line, read_segment

__all__ = [
    "NoSessionLogs",
    "SubagentTranscript",
    "default_projects_dir",
    "project_log_dir",
    "claude_code_log_dir",
    "find_project_log_dir",
    "newest_session_log",
    "read_subagents",
    "tool_counts",
    "usage_totals",
]


class NoSessionLogs(EvalkitError):
    """No log directory for the project, or no `.jsonl` session in it (the reference exits 1)."""


def default_projects_dir() -> str:
    """`~/.claude/projects`, where Claude Code keeps its per-project session logs."""
    return os.path.join(os.path.expanduser("~"), ".claude", "projects")


def project_log_dir(project_dir: str | os.PathLike[str], projects_dir: str | None = None) -> str:
    """§1.10 step 1: the project's real path with every `/` replaced by `-`, under `projects_dir`.

    Raises:
        UsageError: The project directory does not exist.
    """
    try:
        real = os.path.realpath(project_dir, strict=True)
    except OSError:
        raise UsageError(f"no such project directory: {os.fspath(project_dir)}") from None
    escaped = real.replace("/", "-")
    return os.path.join(projects_dir or default_projects_dir(), escaped)


def claude_code_log_dir(
    project_dir: str | os.PathLike[str], projects_dir: str | None = None
) -> str:
    """The log directory Claude Code itself uses: every character of the project's real path
    that is not an ASCII letter or digit becomes `-` (so `/src/my_app.v2` is `-src-my-app-v2`).

    The reference replaces only `/` (`project_log_dir`); for a path with `.`, `_` or any other
    such character the two names differ, and only this one exists on disk.

    Raises:
        UsageError: The project directory does not exist.
    """
    try:
        real = os.path.realpath(project_dir, strict=True)
    except OSError:
        raise UsageError(f"no such project directory: {os.fspath(project_dir)}") from None
    escaped = re.sub(r"[^A-Za-z0-9]", "-", real)
    return os.path.join(projects_dir or default_projects_dir(), escaped)


def find_project_log_dir(
    project_dir: str | os.PathLike[str], projects_dir: str | None = None
) -> str:
    """The project's log directory: the reference's name (`project_log_dir`) when it exists,
    else Claude Code's own escaping (`claude_code_log_dir`) when that exists, else the
    reference's name (so the error names what the reference looks for).

    Raises:
        UsageError: The project directory does not exist.
    """
    reference = project_log_dir(project_dir, projects_dir)
    if os.path.isdir(reference):
        return reference
    claude = claude_code_log_dir(project_dir, projects_dir)
    return claude if os.path.isdir(claude) else reference


def _jsonl_names(directory: str) -> list[str]:
    """Every `*.jsonl` entry of `directory`, in listing order (§10.5).

    Raises:
        TranscriptError: The directory cannot be listed (permissions, say): one line naming it.
    """
    try:
        names = os.listdir(directory)
    except OSError as exc:
        reason = f"cannot read the directory ({exc.strerror or exc})"
        raise TranscriptError(directory, reason) from None
    return sorted((n for n in names if n.endswith(".jsonl")), key=listing_key)


def _jsonl_files(directory: str) -> list[str]:
    return [n for n in _jsonl_names(directory) if os.path.isfile(os.path.join(directory, n))]


def newest_session_log(log_dir: str) -> str:
    """§1.10 step 2: the `.jsonl` file with the newest modification time (ties: listing order).

    Raises:
        NoSessionLogs: `log_dir` is missing, or holds no `.jsonl` file.
        UsageError: `log_dir` exists but is not a directory (a session file given by mistake).
    """
    if not os.path.isdir(log_dir):
        if os.path.exists(log_dir):
            raise UsageError(
                f"{one_line(log_dir)} is not a directory (give the project's log directory; "
                "evalkit run reads one session file)"
            )
        raise NoSessionLogs(f"no session logs at {log_dir}")
    names = _jsonl_files(log_dir)
    if not names:
        raise NoSessionLogs(f"no .jsonl sessions in {log_dir}")
    best, best_mtime = None, 0
    for name in names:
        try:
            mtime = os.stat(os.path.join(log_dir, name)).st_mtime_ns
        except OSError:
            continue  # vanished since the listing
        if best is None or mtime > best_mtime:  # strictly newer: ties keep the earlier name
            best, best_mtime = name, mtime
    if best is None:
        raise NoSessionLogs(f"no .jsonl sessions in {log_dir}")
    return os.path.join(log_dir, best)


@dataclass(frozen=True)
class SubagentTranscript:
    """One subagent file and the parent id stamped on its events (§1.10 step 4).

    Attributes:
        path: The subagent `.jsonl` file.
        parent_id: `toolUseId` from the sibling `.meta.json`, or `subagent:<file name>`. A falsy
            but present value (`""`) leaves the events' own `parent_tool_use_id` untouched.
        events: Its events, after stamping.
        read: What reading the file kept and skipped.
    """

    path: str
    parent_id: Any
    events: list[dict[str, Any]] = field(repr=False)
    read: SegmentRead | None = field(default=None, repr=False)


_MAX_META_BYTES = 1 << 20  # a `.meta.json` holds one small object


def _parent_id(jsonl_path: str) -> Any:
    name = os.path.basename(jsonl_path)
    fallback = f"subagent:{name}"
    meta = jsonl_path[: -len(".jsonl")] + ".meta.json"
    try:
        if not stat.S_ISREG(os.stat(meta).st_mode):  # a FIFO would block the read
            return fallback
        fd = os.open(meta, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        with os.fdopen(fd, "rb") as fh:
            text = fh.read(_MAX_META_BYTES).decode("utf-8", "replace")
    except OSError:
        return fallback
    ok, value = parse_line(text)
    if not ok or not isinstance(value, dict) or value.get("toolUseId") is None:
        return fallback
    return value["toolUseId"]


def read_subagents(log_dir: str, session_id: str) -> list[SubagentTranscript]:
    """§1.10 steps 3–4: `<log dir>/<id>/subagents/*.jsonl`, byte-wise name order, events stamped."""
    sub_dir = os.path.join(log_dir, session_id, "subagents")
    if not os.path.isdir(sub_dir):
        return []
    out = []
    for name in _jsonl_names(sub_dir):
        path = os.path.join(sub_dir, name)
        try:
            events, account = read_segment(path, drop_falsy=True)
        except TranscriptError as exc:
            # Reported, not dropped: the session is measured without it and says so.
            out.append(SubagentTranscript(path, None, [], SegmentRead(path, unreadable=exc.reason)))
            continue
        parent = _parent_id(path)
        if js_truthy(parent):
            for event in events:
                event["parent_tool_use_id"] = parent
        out.append(SubagentTranscript(path, parent, events, account))
    return out


def tool_counts(events: Sequence[dict[str, Any]]) -> dict[str, int]:
    """tool_use blocks in any event with array content, per name, first-seen order."""
    counts: dict[str, int] = {}
    for event in events:
        message = event.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            continue
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_use":
                raw = block.get("name")
                name = "undefined" if "name" not in block else js_string(raw)
                counts[name] = counts.get(name, 0) + 1
    return counts


def usage_totals(events: Sequence[dict[str, Any]], path: str) -> tuple[float, float, float]:
    """§1.10: gen, fresh-in and cached-in over every event with `message.usage`, not deduped."""
    gen: float = 0
    fresh: float = 0
    cached: float = 0

    def num(usage: dict[str, Any], key: str) -> float:
        v = usage.get(key)
        if not js_truthy(v):
            return 0
        if not isinstance(v, int | float):
            raise TranscriptError(path, f"usage.{key} is {js_json(v)}, not a number")
        return v

    for event in events:
        message = event.get("message")
        usage = message.get("usage") if isinstance(message, dict) else None
        if not js_truthy(usage) or not isinstance(usage, dict):
            continue
        # Double additions, rounded past 2^53 as in ECMAScript (§10.4).
        gen = js_add(gen, num(usage, "output_tokens"))
        fresh = js_add(
            fresh, js_add(num(usage, "input_tokens"), num(usage, "cache_creation_input_tokens"))
        )
        cached = js_add(cached, num(usage, "cache_read_input_tokens"))
    return gen, fresh, cached
