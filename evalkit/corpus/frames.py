"""pandas DataFrames of sessions, explore calls, file sections, files and tool calls.

One function per entity, one row per entity (Inspect AI style), the identity columns first in
every frame (`log`, `pass`, `repo`, `arm`, `run`, `question`, `slice`, `kind`, `agent`, `group`), then
the frame's own columns, all declared in `evalkit.store.columns` (name, dtype, unit, meaning).
Efficiency columns are fractions; `chars` count UTF-16 code units (Decision 1); a value the
transcript does not carry is `<NA>`.

    >>> from evalkit.corpus.frames import sessions_df, calls_df, sections_df, tool_calls_df
    >>> df = sessions_df("path/to/corpus")            # a directory: discovered as the sweep does
    >>> df = sessions_df(["run-baseline-1.jsonl", ["run-with.jsonl", "run-with.t2.jsonl"]])

`sessions` is a corpus directory (read with `evalkit.corpus.load.load_corpus_frames`, the
sweep's discovery and cache), or items that are each a parsed `Session` or `InteractiveSession`,
a path (a one-segment session) or a list of paths (the segments of one session, in order).
With `strict=False` a session that cannot be read is left out and reported in the returned
error list instead of raising.

Row building is split in two so the corpus loader can cache it: `session_rows` turns one
parsed session into the rows of every frame (without identity, JSON-able), `identity` gives a
session's identity columns, and `evalkit.store.columns.build_frame` is the one place rows
become a frame.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from evalkit.corpus.discover import SessionRef, identity, ref_for_files
from evalkit.corpus.frame_rows import (
    FRAME_NAMES,
    AnySession,
    SessionError,
    error_text,
    occupancy_columns,
    retrieval_columns,
    session_rows,
)
from evalkit.corpus.pricing import PRICED_COLUMNS, priced_frame
from evalkit.errors import EvalkitError
from evalkit.session import InteractiveSession, Session, parse_session, read_session_file

__all__ = [
    "files_df",
    "SessionError",
    "sessions_df",
    "calls_df",
    "sections_df",
    "tool_calls_df",
    "models_df",
    "load_sessions",
    "session_rows",
    "identity",
    "occupancy_columns",
    "retrieval_columns",
    "FRAME_NAMES",
]

SessionLike = AnySession | str | os.PathLike[str] | Sequence[str | os.PathLike[str]]


def _is_single(sessions: Any) -> bool:
    return isinstance(sessions, Session | InteractiveSession | str | os.PathLike)


def load_sessions(
    sessions: Iterable[SessionLike] | SessionLike, *, strict: bool = True
) -> tuple[list[Any], list[SessionError]]:
    """Parse every item into a session; errors raise, or are collected when not strict.

    A one-file item is read as `load_corpus` reads it, by its content (issue 23): a Codex
    rollout or `exec --json` capture, or an Inspect AI log, by that agent's reader (an
    `AgentFile`: the file and its `AgentSession`s); an interactive Claude Code log (no
    `system/init` and no `result`, project-log lines, or a `<id>.jsonl` with `<id>/subagents/`
    beside it) as the interactive reader reads it (§1.10); anything else as headless
    segments. A zero-byte file is refused (`EmptyFile`).
    """
    if _is_single(sessions):
        sessions = [sessions]  # type: ignore[list-item]
    parsed: list[Any] = []
    errors: list[SessionError] = []
    for item in sessions:  # type: ignore[union-attr]
        if isinstance(item, Session | InteractiveSession):
            parsed.append(item)
            continue
        paths = [item] if isinstance(item, str | os.PathLike) else list(item)
        try:
            parsed.append(_read(paths))
        except EvalkitError as exc:
            if strict:
                raise
            log = os.fspath(paths[0]) if paths else "(none)"
            errors.append(SessionError(log, error_text(exc, log)))
    return parsed, errors


@dataclass(frozen=True)
class AgentFile:
    """A Codex or Inspect AI file read by `load_sessions`: its path and its sessions."""

    path: str
    sessions: tuple[Any, ...]


def _read(paths: list[Any]) -> Any:
    """One item of `load_sessions`, read by its content (see there)."""
    from evalkit.errors import refuse_empty
    from evalkit.formats.claude_code.transcripts import read_transcript
    from evalkit.formats.detect import detect_format
    from evalkit.session import is_interactive_log, session_from_transcript

    names = [os.fspath(p) for p in paths]
    refuse_empty(names)
    if len(names) == 1:
        fmt = detect_format(names[0])
        if fmt != "claude-code":
            from evalkit.corpus.agents import parent_search_root, read_agent_sessions

            got = read_agent_sessions(names[0], format=fmt, root=parent_search_root(names[0]))
            return AgentFile(names[0], tuple(got))
        if _has_subagents(names[0]):
            return read_session_file(names[0])
        transcript = read_transcript(names)
        if is_interactive_log(transcript.events):
            return read_session_file(names[0])
        return session_from_transcript(transcript)
    return parse_session(names)


def _has_subagents(path: str) -> bool:
    """§7.4: `<id>.jsonl` whose `<id>/subagents/` directory exists is an interactive log."""
    head, name = os.path.split(path)
    for ext in (".jsonl", ".ndjson"):
        if name.endswith(ext):
            return os.path.isdir(os.path.join(head, name[: -len(ext)], "subagents"))
    return False


# --- which session a row belongs to ---------------------------------------------------------


def _ref_of(s: AnySession) -> SessionRef:
    if isinstance(s, InteractiveSession):
        return ref_for_files((s.log,), interactive=True)
    return ref_for_files(tuple(os.fspath(p) for p in s.transcript.paths), log=s.log)


# --- frames -----------------------------------------------------------------------------------


def _is_directory(sessions: Any) -> bool:
    return isinstance(sessions, str | os.PathLike) and os.path.isdir(sessions)


def _build(sessions: Any, strict: bool, frame: str, prices: Any = None) -> Any:
    if _is_directory(sessions):
        from evalkit.corpus.load import load_corpus_frames

        corpus = load_corpus_frames(sessions, strict=strict, prices=prices)
        df = corpus.frame(frame)
        return df if strict else (df, list(corpus.errors))
    parsed, errors = load_sessions(sessions, strict=strict)
    wanted = {frame, *PRICED_COLUMNS} if frame in PRICED_COLUMNS else {frame}
    rows: dict[str, list[dict[str, Any]]] = {f: [] for f in wanted}
    for s in parsed:
        if isinstance(s, AgentFile):
            from evalkit.corpus.agents import agent_rows

            ident = identity(ref_for_files((s.path,)))
            got = agent_rows(list(s.sessions), s.path)
        else:
            ident = identity(_ref_of(s))
            got = session_rows(s)
        for f in wanted:
            rows[f] += [{**ident, **r} for r in got[f]]
    df = priced_frame(frame, rows, prices)  # the priced cost, from the ledgers (issue 27)
    return df if strict else (df, errors)


def sessions_df(
    sessions: Iterable[SessionLike] | SessionLike, *, strict: bool = True, prices: Any = None
):
    """One row per session: allocation totals, the reading account, sufficiency counts
    (`next_<bucket>`), occupancy (`residual_<family>`, `contributed_<family>`, tokens rounded as
    the reference rounds them) and the per-session fields of §1.11 under readable names
    (`duration_s`, `cost_usd`, `success`, `tokens_processed` = the reference's Σ result.usage,
    `tokens_processed_per_message` = the later revision's definition). `evalkit columns
    sessions` lists every column.

    Args:
        sessions: A corpus directory, or sessions / paths / lists of segment paths.
        strict: Raise on a session that cannot be read (default), or collect it.
        prices: User prices (`UserPrices` or a `--prices FILE.toml` path) for the priced
            cost columns (`priced_cost_usd`, `cost_usd`, `cost_source`; the price table's
            prices otherwise).

    Returns:
        A DataFrame, or `(DataFrame, [SessionError, ...])` when `strict=False`.
    """
    return _build(sessions, strict, "sessions", prices)


def calls_df(sessions: Iterable[SessionLike] | SessionLike, *, strict: bool = True):
    """One row per explore allocation call (non-error, with sections), `call` 1-based per log,
    with the sufficiency verdict (`sufficiency_bucket`, `next_action`)."""
    return _build(sessions, strict, "calls")


def sections_df(sessions: Iterable[SessionLike] | SessionLike, *, strict: bool = True):
    """One row per file section of every call, with the citation verdict for its path."""
    return _build(sessions, strict, "sections")


def files_df(sessions: Iterable[SessionLike] | SessionLike, *, strict: bool = True):
    """One row per returned file of each session, pooled over its calls (§3.2 step 7).

    `rank` orders files by chars, largest first; `share` is the file's part of the session's
    envelope; `sections` counts its occurrences (a file returned twice is charged twice).
    """
    return _build(sessions, strict, "files")


def models_df(
    sessions: Iterable[SessionLike] | SessionLike, *, strict: bool = True, prices: Any = None
):
    """One row per session × model (agent-formats §5.3): `requests` and `prompt_tokens` from
    the assistant messages of that model, and from `result.modelUsage` its input, output, cache
    read and cache creation tokens, `cost_usd`, `context_window`. The modelUsage totals are the
    session's: the last segment's when they are carried over `--resume`, else added over
    segments (`source`); without modelUsage the tokens are summed over the messages (`source`
    messages). Codex, Inspect and ATIF sessions have a row per model of their ledger (`source`
    log). Every row's ledger is priced when the frame is built (`priced_cost_usd`, the cost per
    part, `price_reason` where it cannot be; issue 27); `prices` as for `sessions_df`."""
    return _build(sessions, strict, "models", prices)


def tool_calls_df(sessions: Iterable[SessionLike] | SessionLike, *, strict: bool = True):
    """One row per tool_use block, stream order (`call` is the report's listing number).

    `thread` is `main` or the delegating tool_use id (§1.8); `family` the occupancy family
    (§1.4); `detail` the listing's detail without its leading space (§1.11). `results`,
    `result_chars` (all results for the id, UTF-16 units) and `is_error` (of the last result)
    come from the tool_result blocks answering it; a call never answered has 0, <NA>, <NA>.
    """
    return _build(sessions, strict, "tool_calls")
