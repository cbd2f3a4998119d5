"""Audit rows of one workflow session: metrics, call hashes and runtime contracts (spec §3.7, §2.3).

The collector (§8.4 steps 7 and 9) selects the canonical outer calls of the workflow session a
receipt names, computes the metrics of §3.7 and `outer_call_ids_sha256` (§4.1) from those rows,
and evaluates the runtime contracts of §2.3 that depend on them. The session id and the raw
server trace ids are used here transiently and never leave this module: a summary carries only
counts, booleans and SHA-256 hashes.

The Audit database. The specification does not fix WebCodex's Audit schema, and evalkit cannot
read it from here, so evalkit v1 reads one documented SQLite view of canonical outer calls. A
live driver exports (or a view maps) its Audit records into this shape; the shipped scripted
driver writes it directly:

    CREATE TABLE outer_calls (
        workflow_session_id TEXT NOT NULL,
        seq             INTEGER NOT NULL,  -- canonical order inside the session, unique
        server_trace_id TEXT NOT NULL,     -- unique; hashed, never exported (§4.1)
        tool_name       TEXT NOT NULL,     -- the outer WebCodex tool
        outcome         TEXT NOT NULL,     -- 'ok', 'failed' or 'unknown'
        result_bytes    INTEGER,           -- serialized tool-result bytes; NULL unknown
        window_id       TEXT,              -- NULL: the serial relation is unknown
        job_id          TEXT,              -- the Job relation, NULL when none
        job_event       TEXT,              -- NULL, 'launch_pending', 'launch_completed',
                                           -- 'observe_running' or 'observe_terminal'
        exit_code       INTEGER,           -- the Job's exit code on a terminal event
        complete        INTEGER NOT NULL   -- 1 when the canonical record is complete
    );

Tool names are grouped into kinds once, in `TOOL_KINDS`; every contract reads the kinds.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from evalkit.paired.errors import PairedError

__all__ = [
    "NESTED_TOOLS",
    "TOOL_KINDS",
    "AuditError",
    "AuditSummary",
    "OuterCall",
    "call_hash",
    "read_audit",
    "summarize_calls",
]

# Nested Code Mode outer tools by nested surface (§2.3 runtime_evidence). Direct and Host Code
# Mode samples must select none of them.
NESTED_TOOLS = {
    "read_only": "execute_code_mode",
    "guarded_edit": "execute_mutating_code_mode",
    "validation": "execute_effectful_code_mode",
}
# evalkit's reading of the admitted WebCodex outer tools (§2.3). `search_file_context` is the
# canonical compound tool: it searches and returns context, so it counts as both.
TOOL_KINDS: dict[str, frozenset[str]] = {
    "read_files": frozenset({"read"}),
    "read_file": frozenset({"read"}),
    "search_project": frozenset({"search"}),
    "search_files": frozenset({"search"}),
    "search_file_context": frozenset({"search", "read"}),
    "list_files": frozenset({"read"}),
    "git_status": frozenset({"read"}),
    "git_log": frozenset({"read"}),
    "git_diff": frozenset({"read"}),
    "review_changes": frozenset({"read"}),
    "edit_project_files": frozenset({"edit"}),
    "cargo_test": frozenset({"validation"}),
    "run_validation": frozenset({"validation"}),
    "observe_jobs": frozenset({"observe"}),
    **{name: frozenset({"nested"}) for name in NESTED_TOOLS.values()},
}
OUTCOMES = ("ok", "failed", "unknown")
JOB_EVENTS = ("launch_pending", "launch_completed", "observe_running", "observe_terminal")
_COLUMNS = (
    "seq",
    "server_trace_id",
    "tool_name",
    "outcome",
    "result_bytes",
    "window_id",
    "job_id",
    "job_event",
    "exit_code",
    "complete",
)


class AuditError(PairedError):
    """The Audit database or its rows are unusable: a summary error (spec §5.3 step 1)."""


@dataclass(frozen=True)
class OuterCall:
    """One canonical outer call of the session, in `seq` order."""

    seq: int
    server_trace_id: str
    tool_name: str
    outcome: str
    result_bytes: int | None
    window_id: str | None
    job_id: str | None
    job_event: str | None
    exit_code: int | None
    complete: bool

    def kinds(self) -> frozenset[str]:
        return TOOL_KINDS.get(self.tool_name, frozenset())


@dataclass(frozen=True)
class AuditSummary:
    """What the collector keeps of a session's Audit rows: counts, gates and call hashes."""

    outer_calls: int
    serialized_tool_result_bytes: int | None
    job_observe_calls: int
    immediate_observe_calls: int
    same_kind_serial_calls: int | None
    observe_after_delivered_failure: int
    outer_call_ids_sha256: tuple[str, ...]
    complete: bool
    multi_file_edit: bool
    long_handoff: bool
    selection_admission: bool
    nested_tools: frozenset[str]

    def runtime_evidence(self, variant: str, surface: str) -> bool:
        """§2.3 `runtime_evidence`: complete records, at least one call, the lane's exposure."""
        if not self.complete or self.outer_calls == 0:
            return False
        if variant == "code_mode":
            return self.nested_tools == {NESTED_TOOLS.get(surface)}
        return not self.nested_tools


def call_hash(server_trace_id: str) -> str:
    """The outer call id hash of §4.1: SHA-256 hex of the UTF-8 server trace id."""
    return hashlib.sha256(server_trace_id.encode("utf-8")).hexdigest()


def read_audit(path: str | os.PathLike[str], workflow_session_id: str) -> AuditSummary:
    """Select the session's rows from the Audit database at `path` and summarize them.

    Raises:
        AuditError: the database is not a readable regular file in the documented shape, or its
            rows are malformed. Messages never quote a value from the database or the receipt.
    """
    try:
        st = os.stat(path)
    except OSError:
        raise AuditError("driver audit_db is not a readable Audit database") from None
    if not stat.S_ISREG(st.st_mode):  # never open a FIFO or device
        raise AuditError("driver audit_db is not a readable Audit database")
    uri = "file:" + quote(str(Path(path).resolve())) + "?mode=ro"
    db = None
    try:
        db = sqlite3.connect(uri, uri=True)
        rows = db.execute(
            f"SELECT {', '.join(_COLUMNS)} FROM outer_calls "
            "WHERE workflow_session_id = ? ORDER BY seq",
            (workflow_session_id,),
        ).fetchall()
    except sqlite3.Error:
        raise AuditError("driver audit_db is not a readable Audit database") from None
    finally:
        if db is not None:
            db.close()
    return summarize_calls([_call(row) for row in rows])


def _call(row: tuple) -> OuterCall:
    seq, trace, tool, outcome, size, window, job, event, exit_code, complete = row

    def _int(v) -> bool:
        return isinstance(v, int) and not isinstance(v, bool)

    def _opt_str(v) -> bool:
        return v is None or isinstance(v, str)

    if not (
        _int(seq)
        and isinstance(trace, str)
        and trace
        and isinstance(tool, str)
        and outcome in OUTCOMES
        and (size is None or (_int(size) and size >= 0))
        and _opt_str(window)
        and _opt_str(job)
        and (event is None or event in JOB_EVENTS)
        and (exit_code is None or _int(exit_code))
        and complete in (0, 1)
    ):
        raise AuditError("Audit rows of the workflow session are malformed")
    return OuterCall(seq, trace, tool, outcome, size, window, job, event, exit_code, bool(complete))


def summarize_calls(calls: Sequence[OuterCall]) -> AuditSummary:
    """Metrics (§3.7), call hashes (§4.1) and Audit-based contracts (§2.3) of ordered calls."""
    if len({c.seq for c in calls}) != len(calls) or len({c.server_trace_id for c in calls}) != len(
        calls
    ):
        raise AuditError("Audit rows of the workflow session are malformed")
    sizes = [c.result_bytes for c in calls]
    observes = [c for c in calls if "observe" in c.kinds()]
    return AuditSummary(
        outer_calls=len(calls),
        serialized_tool_result_bytes=None if None in sizes else sum(sizes),  # type: ignore[arg-type]
        job_observe_calls=len(observes),
        immediate_observe_calls=sum(
            1
            for a, b in zip(calls, calls[1:], strict=False)
            if a.job_event == "launch_pending" and "observe" in b.kinds() and b.job_id == a.job_id
        ),
        same_kind_serial_calls=_same_kind_serial(calls),
        observe_after_delivered_failure=_observe_after_failure(calls),
        outer_call_ids_sha256=tuple(sorted(call_hash(c.server_trace_id) for c in calls)),
        complete=all(c.complete for c in calls),
        multi_file_edit=_multi_file_edit(calls),
        long_handoff=_long_handoff(calls),
        selection_admission=_selection_admission(calls),
        nested_tools=frozenset(c.tool_name for c in calls if "nested" in c.kinds()),
    )


def _same_kind_serial(calls: Sequence[OuterCall]) -> int | None:
    """The serial proxy of §3.7: same-tool transitions inside one Window; None when unknown."""
    if any(c.window_id is None for c in calls):
        return None
    last: dict[str, str] = {}
    count = 0
    for call in calls:
        if last.get(call.window_id) == call.tool_name:  # type: ignore[arg-type]
            count += 1
        last[call.window_id] = call.tool_name  # type: ignore[index]
    return count


def _observe_after_failure(calls: Sequence[OuterCall]) -> int:
    """Explicit observes of a Job after a failure had been delivered for it (§3.7)."""
    failed: set[str] = set()
    count = 0
    for call in calls:
        if "observe" in call.kinds() and call.job_id in failed:
            count += 1
        if (
            call.job_id is not None
            and call.job_event in ("observe_terminal", "launch_completed")
            and call.exit_code != 0
        ):
            failed.add(call.job_id)
    return count


def _multi_file_edit(calls: Sequence[OuterCall]) -> bool:
    """§2.3 `multi_file_edit`: one applied guarded edit, a search, two reads, no failed call."""
    edits = [c for c in calls if "edit" in c.kinds()]
    return (
        len(edits) == 1
        and edits[0].outcome == "ok"
        and any("search" in c.kinds() for c in calls)
        and sum(1 for c in calls if "read" in c.kinds()) >= 2
        and all(c.outcome == "ok" for c in calls)
    )


def _long_handoff(calls: Sequence[OuterCall]) -> bool:
    """§2.3 `long_handoff`: one pending launch, independent work, then that Job observed to 0."""
    launches = [
        i for i, c in enumerate(calls) if c.job_event in ("launch_pending", "launch_completed")
    ]
    if len(launches) != 1 or calls[launches[0]].job_event != "launch_pending":
        return False
    job = calls[launches[0]].job_id
    if job is None:
        return False
    later = calls[launches[0] + 1 :]
    terminal = next(
        (
            i
            for i, c in enumerate(later)
            if c.job_id == job and c.job_event == "observe_terminal" and "observe" in c.kinds()
        ),
        None,
    )
    if terminal is None or later[terminal].exit_code != 0:
        return False
    return any(c.job_id is None and "observe" not in c.kinds() for c in later[:terminal])


def _selection_admission(calls: Sequence[OuterCall]) -> bool:
    """§2.3 `selection_admission`: admitted read-only tools only, no mutation, no validation Job."""
    return bool(calls) and all(
        c.kinds() and c.kinds() <= {"read", "search"} and c.job_event is None for c in calls
    )
