"""pandas DataFrames of sessions, explore calls, file sections and tool calls (Inspect AI style).

One function per entity, one row per entity, id columns first, a `log` column naming the
session. Efficiency columns are fractions. `chars` columns count UTF-16 code units. Token
columns are rounded as the reference rounds them (§6.7).

    >>> from evalkit.corpus.frames import sessions_df, calls_df, sections_df, tool_calls_df
    >>> df = sessions_df(["run-baseline-1.jsonl", ["run-with.jsonl", "run-with.t2.jsonl"]])

Each item of `sessions` is a parsed `Session`, a path (a one-segment session) or a list of paths
(the segments of one session, in order). With `strict=False` a session that cannot be read is
left out and reported in the returned error list instead of raising.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from evalkit.ecma import js_string, utf16_len
from evalkit.errors import EvalkitError, TranscriptError
from evalkit.formats.claude_code.transcripts import is_explore, tool_results
from evalkit.metrics.envelope import split_sections
from evalkit.metrics.occupancy import FAMILIES
from evalkit.metrics.sufficiency import BUCKETS
from evalkit.session import Session, parse_session

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "files_df",
    "SessionError",
    "sessions_df",
    "calls_df",
    "sections_df",
    "tool_calls_df",
    "load_sessions",
]

SessionLike = Session | str | os.PathLike[str] | Sequence[str | os.PathLike[str]]


@dataclass(frozen=True)
class SessionError:
    """A session left out of a frame because it could not be read."""

    log: str
    error: str

    def __str__(self) -> str:
        return f"{self.log}: {self.error}"


def load_sessions(
    sessions: Iterable[SessionLike] | SessionLike, *, strict: bool = True
) -> tuple[list[Session], list[SessionError]]:
    """Parse every item into a `Session`; errors raise, or are collected when not strict."""
    if isinstance(sessions, Session | str | os.PathLike):
        sessions = [sessions]
    parsed: list[Session] = []
    errors: list[SessionError] = []
    for item in sessions:
        if isinstance(item, Session):
            parsed.append(item)
            continue
        paths = [item] if isinstance(item, str | os.PathLike) else list(item)
        try:
            parsed.append(parse_session(paths))
        except EvalkitError as exc:
            if strict:
                raise
            log = os.fspath(paths[0]) if paths else "(none)"
            why = str(exc)
            # A TranscriptError names its file; don't repeat it when it is the session's log.
            if isinstance(exc, TranscriptError) and exc.path == log:
                why = exc.reason if exc.line is None else f"line {exc.line}: {exc.reason}"
            errors.append(SessionError(log, why))
    return parsed, errors


def _frame(rows: list[dict[str, Any]], columns: Sequence[str]) -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame(rows, columns=list(columns))


SESSION_COLUMNS = (
    "log",
    "segments",
    "multi_turn",
    "answer_source",
    "has_answer",
    "explore_calls",
    "sections",
    "files_returned",
    "files_cited",
    "chars",
    "cited_chars",
    "path_cited_chars",
    "efficiency",
    "path_efficiency",
    "skipped_lines",
    # sufficiency (§5.7)
    "answered_calls",
    "errored_calls",
    "concurrent_accesses",
    *(f"next_{b}" for b in BUCKETS),
    # occupancy (§6.7)
    "final_context",
    "base_context",
    "chars_per_token",
    "calibrated",
    "dispersion",
    *(f"residual_{f}" for f in FAMILIES),
    "residual_file_access",
    *(f"contributed_{f}" for f in FAMILIES),
    "contributed_file_access",
    "evicted",
    "compactions",
    # summary (§1.11)
    "turns",
    "tool_calls",
    "tools",
    "reads",
    "grep",
    "bash",
    "cg",
    "dur",
    "cost",
    "ok",
    "processed",
    "processed_per_message",
    "raced",
    "cli_calls",
    "cli_contaminated",
)
CALL_COLUMNS = (
    "log",
    "call",
    "tool_use_id",
    "thread",
    "sections",
    "cited_sections",
    "chars",
    "cited_chars",
    "path_cited_chars",
    "efficiency",
    "bucket",
    "next",
)
TOOL_CALL_COLUMNS = (
    "log",
    "call",
    "tool_use_id",
    "thread",
    "message_id",
    "name",
    "family",
    "detail",
    "results",
    "result_chars",
    "is_error",
)
SECTION_COLUMNS = ("log", "call", "section", "path", "chars", "via", "symbol", "symbols")
FILE_COLUMNS = ("log", "rank", "path", "chars", "share", "sections", "via", "symbol")


def _session_rows(s: Session) -> list[dict[str, Any]]:
    a = s.allocation
    return [
        {
            "log": s.log,
            "segments": s.segments,
            "multi_turn": s.multi_turn,
            "answer_source": s.answer.source,
            "has_answer": a.has_answer,
            "explore_calls": len(a.calls),
            "sections": a.sections,
            "files_returned": a.files_returned,
            "files_cited": a.files_used,
            "chars": a.envelope,
            "cited_chars": a.used,
            "path_cited_chars": a.used_path,
            # No explore call with sections: the efficiency is undefined, not zero (§8.1).
            "efficiency": a.efficiency if a.calls else float("nan"),
            "path_efficiency": a.efficiency_path if a.calls else float("nan"),
            "skipped_lines": s.transcript.skipped_lines,
            **_sufficiency_fields(s),
            **_occupancy_fields(s),
            **_summary_fields(s),
        }
    ]


def _sufficiency_fields(s: Session) -> dict[str, Any]:
    r = s.sufficiency
    return {
        "answered_calls": r.answered,
        "errored_calls": r.errors,
        "concurrent_accesses": r.concurrent,
        **{f"next_{b}": r.counts[b] for b in BUCKETS},
    }


def _occupancy_fields(s: Session) -> dict[str, Any]:
    o = s.occupancy
    return {
        "final_context": o.final_context,
        "base_context": o.base_context,
        "chars_per_token": o.chars_per_token,
        "calibrated": o.calibrated,
        "dispersion": o.dispersion if o.dispersion is not None else float("nan"),
        **{f"residual_{f}": o.residual[f] for f in FAMILIES},
        "residual_file_access": o.residual_file_access,
        **{f"contributed_{f}": o.contributed[f] for f in FAMILIES},
        "contributed_file_access": o.contributed_file_access,
        "evicted": o.evicted,
        "compactions": o.compactions,
    }


def _summary_fields(s: Session) -> dict[str, Any]:
    m = s.summary
    return {
        "turns": m.turns,
        "tool_calls": len(m.calls),
        "tools": m.tools,
        "reads": m.reads,
        "grep": m.grep,
        "bash": m.bash,
        "cg": m.cg,
        "dur": m.dur,
        "cost": m.cost,
        "ok": m.ok,
        # §1.11: the reference's Σ result.usage, and the later revision's per-message sum.
        "processed": m.processed_result_usage,
        "processed_per_message": m.processed_message_usage,
        "raced": m.raced,
        "cli_calls": m.cli_calls,
        "cli_contaminated": m.cli_contaminated,
    }


def _allocation_call_ids(s: Session) -> list[Any]:
    """The tool_use id of each allocation call: §1.6's explore results, kept when they have a
    section (§3.2 step 1), so the i-th id belongs to call i."""
    path = s.transcript.paths[0]
    return [
        r.tool_use_id
        for r in tool_results(s.transcript.events, path=path)
        if is_explore(r.name) and not r.is_error and split_sections(r.text).files
    ]


def _call_rows(s: Session) -> list[dict[str, Any]]:
    ids = _allocation_call_ids(s)
    # Sufficiency judges each explore tool_use once (its last non-error result, §9.1); a
    # duplicated result is two allocation calls sharing that verdict.
    verdicts = {}
    for v in s.sufficiency.calls:
        if isinstance(v.tool_use_id, str):
            verdicts[v.tool_use_id] = v
    rows = []
    for c, tid in zip(s.allocation.calls, ids, strict=True):
        v = verdicts.get(tid) if isinstance(tid, str) else None
        rows.append(
            {
                "log": s.log,
                "call": c.index,
                "tool_use_id": tid,
                "thread": js_string(v.thread) if v else None,
                "sections": len(c.files),
                "cited_sections": c.cited_files,
                "chars": c.envelope,
                "cited_chars": c.used,
                "path_cited_chars": c.used_path,
                "efficiency": c.efficiency,
                "bucket": v.bucket if v else None,
                "next": v.next_text if v else None,
            }
        )
    return rows


def _section_rows(s: Session) -> list[dict[str, Any]]:
    return [
        {
            "log": s.log,
            "call": c.index,
            "section": i,
            "path": f.path,
            "chars": f.chars,
            "via": f.via,
            "symbol": f.symbol,
            "symbols": ", ".join(f.symbols),
        }
        for c in s.allocation.calls
        for i, f in enumerate(c.files, start=1)
    ]


def _file_rows(s: Session) -> list[dict[str, Any]]:
    a = s.allocation
    return [
        {
            "log": s.log,
            "rank": i,
            "path": f.path,
            "chars": f.chars,
            "share": f.chars / a.envelope if a.envelope else 0.0,
            "sections": f.calls,
            "via": f.via,
            "symbol": f.symbol,
        }
        for i, f in enumerate(a.files, start=1)
    ]


def _tool_call_rows(s: Session) -> list[dict[str, Any]]:
    path = s.transcript.paths[0]
    answered: dict[Any, list[Any]] = {}  # id → [results, chars, last is_error]
    for r in tool_results(s.transcript.events, path=path):
        if not isinstance(r.tool_use_id, str):
            continue
        entry = answered.setdefault(r.tool_use_id, [0, 0, None])
        entry[0] += 1
        entry[1] += utf16_len(r.text)
        entry[2] = r.is_error
    rows = []
    for c in s.summary.calls:
        got = answered.get(c.tool_use_id) if isinstance(c.tool_use_id, str) else None
        rows.append(
            {
                "log": s.log,
                "call": c.index,
                "tool_use_id": c.tool_use_id,
                "thread": c.thread,
                "message_id": c.message_id,
                "name": c.name,
                "family": c.family,
                "detail": c.detail.removeprefix(" "),
                "results": got[0] if got else 0,
                "result_chars": got[1] if got else None,
                "is_error": got[2] if got else None,
            }
        )
    return rows


def _build(
    sessions: Any,
    strict: bool,
    rows: Callable[[Session], list[dict[str, Any]]],
    columns: Sequence[str],
) -> Any:
    parsed, errors = load_sessions(sessions, strict=strict)
    frame = _frame([r for s in parsed for r in rows(s)], columns)
    return frame if strict else (frame, errors)


def sessions_df(sessions: Iterable[SessionLike] | SessionLike, *, strict: bool = True):
    """One row per session: allocation totals, the reading account, sufficiency counts
    (`next_<bucket>`), occupancy (`residual_<family>`, `contributed_<family>`, tokens rounded as
    the reference rounds them) and the summary fields of §1.11 (`processed` is the reference's
    Σ result.usage; `processed_per_message` the later revision's definition).

    Returns:
        A DataFrame, or `(DataFrame, [SessionError, ...])` when `strict=False`.
    """
    return _build(sessions, strict, _session_rows, SESSION_COLUMNS)


def calls_df(sessions: Iterable[SessionLike] | SessionLike, *, strict: bool = True):
    """One row per explore allocation call (non-error, with sections), `call` 1-based per log."""
    return _build(sessions, strict, _call_rows, CALL_COLUMNS)


def sections_df(sessions: Iterable[SessionLike] | SessionLike, *, strict: bool = True):
    """One row per file section of every call, with the verdict for its path."""
    return _build(sessions, strict, _section_rows, SECTION_COLUMNS)


def files_df(sessions: Iterable[SessionLike] | SessionLike, *, strict: bool = True):
    """One row per returned file of each session, pooled over its calls (§3.2 step 7).

    `rank` orders files by chars, largest first; `share` is the file's part of the session's
    envelope; `sections` counts its occurrences (a file returned twice is charged twice).
    """
    return _build(sessions, strict, _file_rows, FILE_COLUMNS)


def tool_calls_df(sessions: Iterable[SessionLike] | SessionLike, *, strict: bool = True):
    """One row per tool_use block, stream order (`call` is the report's listing number).

    `thread` is `main` or the delegating tool_use id (§1.8); `family` the occupancy family
    (§1.4); `detail` the listing's detail without its leading space (§1.11). `results`,
    `result_chars` (all results for the id, UTF-16 units) and `is_error` (of the last result)
    come from the tool_result blocks answering it; a call never answered has 0, None, None.
    """
    return _build(sessions, strict, _tool_call_rows, TOOL_CALL_COLUMNS)
