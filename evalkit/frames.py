"""pandas DataFrames of sessions, explore calls and file sections, in the Inspect AI style.

One function per entity, one row per entity, id columns first, a `log` column naming the
session. Efficiency columns are fractions. `chars` columns count UTF-16 code units.

    >>> from evalkit.frames import sessions_df, calls_df, sections_df
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

from evalkit.errors import EvalkitError
from evalkit.session import Session, parse_session

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["SessionError", "sessions_df", "calls_df", "sections_df", "load_sessions"]

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
            errors.append(SessionError(os.fspath(paths[0]) if paths else "(none)", str(exc)))
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
)
CALL_COLUMNS = (
    "log",
    "call",
    "sections",
    "cited_sections",
    "chars",
    "cited_chars",
    "path_cited_chars",
    "efficiency",
)
SECTION_COLUMNS = ("log", "call", "section", "path", "chars", "via", "symbol", "symbols")


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
        }
    ]


def _call_rows(s: Session) -> list[dict[str, Any]]:
    return [
        {
            "log": s.log,
            "call": c.index,
            "sections": len(c.files),
            "cited_sections": c.cited_files,
            "chars": c.envelope,
            "cited_chars": c.used,
            "path_cited_chars": c.used_path,
            "efficiency": c.efficiency,
        }
        for c in s.allocation.calls
    ]


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
    """One row per session: allocation totals and the reading account.

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
