"""Interactive Claude Code sessions: the newest session log of a project, subagents merged (§1.10).

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
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from evalkit.allocation import Allocation, compute_allocation, format_allocation
from evalkit.answer import FinalAnswer, final_answer
from evalkit.ecma import fix, js_json, js_string, js_truthy, listing_key, pl, printable, rj
from evalkit.errors import EvalkitError, TranscriptError, UsageError
from evalkit.sufficiency import Sufficiency, classify_sufficiency, format_sufficiency
from evalkit.transcripts import EXPLORE, SegmentRead, explore_texts, parse_line, read_segment

__all__ = [
    "NoSessionLogs",
    "InteractiveSession",
    "SubagentTranscript",
    "default_projects_dir",
    "project_log_dir",
    "newest_session_log",
    "read_interactive_session",
    "read_session_file",
    "format_interactive",
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


def _jsonl_files(directory: str) -> list[str]:
    names = [n for n in os.listdir(directory) if n.endswith(".jsonl")]
    return [n for n in sorted(names, key=listing_key) if os.path.isfile(os.path.join(directory, n))]


def newest_session_log(log_dir: str) -> str:
    """§1.10 step 2: the `.jsonl` file with the newest modification time (ties: listing order).

    Raises:
        NoSessionLogs: `log_dir` is missing, or holds no `.jsonl` file.
    """
    if not os.path.isdir(log_dir):
        raise NoSessionLogs(f"no session logs at {log_dir}")
    names = _jsonl_files(log_dir)
    if not names:
        raise NoSessionLogs(f"no .jsonl sessions in {log_dir}")
    best = names[0]
    best_mtime = os.stat(os.path.join(log_dir, best)).st_mtime_ns
    for name in names[1:]:
        mtime = os.stat(os.path.join(log_dir, name)).st_mtime_ns
        if mtime > best_mtime:  # strictly newer: ties keep the earlier name
            best, best_mtime = name, mtime
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


def _parent_id(jsonl_path: str) -> Any:
    name = os.path.basename(jsonl_path)
    fallback = f"subagent:{name}"
    meta = jsonl_path[: -len(".jsonl")] + ".meta.json"
    try:
        with open(meta, "rb") as fh:
            text = fh.read().decode("utf-8", "replace")
    except OSError:
        return fallback
    ok, value = parse_line(text)
    if not ok or not isinstance(value, dict) or value.get("toolUseId") is None:
        return fallback
    return value["toolUseId"]


def _read_subagents(log_dir: str, session_id: str) -> list[SubagentTranscript]:
    sub_dir = os.path.join(log_dir, session_id, "subagents")
    if not os.path.isdir(sub_dir):
        return []
    out = []
    for name in _jsonl_files(sub_dir):
        path = os.path.join(sub_dir, name)
        events, account = read_segment(path, drop_falsy=True)
        parent = _parent_id(path)
        if js_truthy(parent):
            for event in events:
                event["parent_tool_use_id"] = parent
        out.append(SubagentTranscript(path, parent, events, account))
    return out


def _tool_counts(events: Sequence[dict[str, Any]]) -> dict[str, int]:
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


def _tokens(events: Sequence[dict[str, Any]], path: str) -> tuple[float, float, float]:
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
        gen += num(usage, "output_tokens")
        fresh += num(usage, "input_tokens") + num(usage, "cache_creation_input_tokens")
        cached += num(usage, "cache_read_input_tokens")
    return gen, fresh, cached


@dataclass(frozen=True)
class InteractiveSession:
    """An interactive session with its subagents merged, and the reference's session report.

    Attributes:
        session_id: The log file's name with its first `.jsonl` removed.
        path: The main session log.
        subagents: The subagent files, byte-wise name order.
        events: Main-file events, then each subagent file's events (§1.10 step 6).
        main_counts / subagent_counts: tool_use counts per name (main file; all subagent files).
        gen_tokens / fresh_tokens / cached_tokens: usage totals, not de-duplicated (quirk 18).
        answer: The final answer (the last main-thread text; there is no result event).
        explore_texts: Non-error explore results from every event with array content (§1.6).
        sufficiency / allocation: The metrics over the merged events.
        segment_reads: The reading account of the main file, then of each subagent file.
    """

    session_id: str
    path: str
    subagents: tuple[SubagentTranscript, ...]
    events: list[dict[str, Any]] = field(repr=False)
    main_counts: dict[str, int] = field(default_factory=dict)
    subagent_counts: dict[str, int] = field(default_factory=dict)
    gen_tokens: float = 0
    fresh_tokens: float = 0
    cached_tokens: float = 0
    answer: FinalAnswer | None = field(default=None, repr=False)
    explore_texts: tuple[str, ...] = field(default=(), repr=False)
    sufficiency: Sufficiency | None = field(default=None, repr=False)
    allocation: Allocation | None = field(default=None, repr=False)
    segment_reads: tuple[SegmentRead, ...] = field(default=(), repr=False)

    @property
    def explore_calls(self) -> int:
        """The VERDICT count: subagents' explore calls when any, else main's (not a sum)."""
        return self.subagent_counts.get(EXPLORE) or self.main_counts.get(EXPLORE, 0)

    @property
    def reads(self) -> int:
        return self.main_counts.get("Read", 0) + self.subagent_counts.get("Read", 0)

    @property
    def grep_bash(self) -> int:
        """Grep + Bash in both; Glob is not included (quirk 18)."""
        return sum(
            c.get(k, 0) for c in (self.main_counts, self.subagent_counts) for k in ("Grep", "Bash")
        )


def read_interactive_session(
    project_dir: str | os.PathLike[str] | None = None,
    *,
    projects_dir: str | None = None,
    log_dir: str | None = None,
) -> InteractiveSession:
    """§1.10: read the newest session of a project with its subagents merged.

    Args:
        project_dir: The project's directory (default: the current directory).
        projects_dir: Claude Code's projects directory (default `~/.claude/projects`).
        log_dir: The project's log directory itself, bypassing the path escaping of step 1.

    Raises:
        NoSessionLogs: No log directory, or no `.jsonl` session in it.
        UsageError: The project directory does not exist.
        TranscriptError: A log holds input the reference crashes on (§9.1).
    """
    if log_dir is None:
        log_dir = project_log_dir(
            project_dir if project_dir is not None else os.getcwd(), projects_dir
        )
    return read_session_file(newest_session_log(log_dir))


def read_session_file(path: str) -> InteractiveSession:
    """§1.10 steps 3–7 for one given session log (`<log dir>/<id>.jsonl`): its subagent files
    (`<log dir>/<id>/subagents/*.jsonl`) merged and stamped, and the metrics computed.

    Raises:
        TranscriptError: The log is missing or unreadable, or holds input the reference crashes
            on (§9.1).
    """
    log_dir, name = os.path.split(path)
    session_id = name.replace(".jsonl", "", 1)
    main_events, main_read = read_segment(path, drop_falsy=True)
    subagents = _read_subagents(log_dir, session_id)
    events = list(main_events)
    sub_counts: dict[str, int] = {}
    for sub in subagents:
        events.extend(sub.events)
        for tool, n in _tool_counts(sub.events).items():
            sub_counts[tool] = sub_counts.get(tool, 0) + n
    gen, fresh, cached = _tokens(events, path)
    answer = final_answer(events, path=path)
    texts = tuple(explore_texts(events, path=path, any_type=True))
    return InteractiveSession(
        session_id=session_id,
        path=path,
        subagents=tuple(subagents),
        events=events,
        main_counts=_tool_counts(main_events),
        subagent_counts=sub_counts,
        gen_tokens=gen,
        fresh_tokens=fresh,
        cached_tokens=cached,
        answer=answer,
        explore_texts=texts,
        sufficiency=classify_sufficiency(events, path=path),
        allocation=compute_allocation(texts, answer.text),
        segment_reads=(main_read, *(sub.read for sub in subagents if sub.read is not None)),
    )


def _fmt_counts(counts: dict[str, int]) -> str:
    if not counts:
        return "    (none)"
    ranked = sorted(counts.items(), key=lambda kv: -kv[1])  # stable: ties keep first-seen order
    return "\n".join(f"    {rj(str(n), 3)}  {name}" for name, n in ranked)


def _k(n: float) -> str:
    return fix(n / 1000, 1) + "k"


def format_interactive(s: InteractiveSession) -> str:
    """The reference's interactive report (§1.10), character for character."""
    n = len(s.subagents)
    assert s.sufficiency is not None and s.allocation is not None
    out = [
        f"session: {s.session_id}",
        "",
        "MAIN thread tools:",
        _fmt_counts(s.main_counts),
        "",
        f"SUBAGENT tools ({n} {pl(n, 'subagent transcript')}):",
        _fmt_counts(s.subagent_counts),
        "",
        f"VERDICT: codegraph_explore used {s.explore_calls}x | Read {s.reads} | "
        f"Grep/Bash {s.grep_bash}",
        f"TOKENS: gen {_k(s.gen_tokens)} | fresh-in {_k(s.fresh_tokens)} | cached-in "
        f"{_k(s.cached_tokens)} | billable≈ {_k(s.gen_tokens + s.fresh_tokens)}",
        "",
        format_sufficiency(s.sufficiency, indent=""),
        "",
        format_allocation(s.allocation, indent=""),
    ]
    return printable("\n".join(out))
