"""Task outcomes joined to a corpus's sessions: harbor `result.json` files and `--outcomes FILE.csv`.

Each session gets a `reward` (float) and `passed` (bool: `reward >= threshold`, default 1.0,
unless the CSV gives `passed` itself). Sources, in order (a later one wins for a session):

0. an Inspect AI sample's own score (`inspect-score`, read with the log itself);
1. a harbor trial's `result.json` (`verifier_result.rewards.reward`, `evalkit.formats.harbor`);
2. a CSV file with a `log` column (the session's log, as `evalkit sweep` lists it) or the
   columns `task`, `arm`, `trial` (and `suite` when a task name occurs in several suites), plus
   `reward` and/or `passed`.

The join is made when a corpus is loaded (`evalkit.corpus.load.load_corpus_frames`), never
stored with a session's rows: a `result.json` or a CSV can change while the transcript does not.
`with_outcomes` writes it into the sessions frame (`reward`, `passed`, `outcome_source`,
`outcome_ref`), and with it the run status a trial's `result.json` gives
(`evalkit.metrics.status.harbor_status`): the frames are the one home of both.

Unmatched rows are reported in both directions: CSV rows that name no session, and sessions
that got no outcome (with the reason, when a `result.json` could not give one).
"""

from __future__ import annotations

import csv
import math
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from evalkit.corpus.discover import SessionRef
from evalkit.errors import UsageError
from evalkit.formats.harbor import TrialResult, read_trial_result

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "OUTCOME_SOURCES",
    "Outcome",
    "OutcomeRow",
    "OutcomeJoin",
    "read_outcomes_csv",
    "join_outcomes",
    "with_outcomes",
]

# The sessions frame's `outcome_source` values (and <NA>: no outcome).
OUTCOME_SOURCES = ("result.json", "outcomes-csv", "inspect-score")

_TRUE = {"true", "1", "yes", "pass", "passed"}
_FALSE = {"false", "0", "no", "fail", "failed"}


@dataclass(frozen=True)
class Outcome:
    """A session's outcome and where it came from: `source` is the `result.json` path or
    `FILE.csv:line`, `kind` the source's kind (`result.json` or `outcomes-csv`)."""

    reward: float | None
    passed: bool | None
    source: str
    kind: str = "result.json"


@dataclass(frozen=True)
class OutcomeRow:
    """One data row of an outcomes CSV (`line` is its line number in the file)."""

    line: int
    log: str | None
    suite: str | None
    task: str | None
    arm: str | None
    trial: str | None
    reward: float | None
    passed: bool | None


@dataclass(frozen=True)
class OutcomeJoin:
    """Outcomes per session log, and what could not be joined.

    Attributes:
        outcomes: log -> `Outcome`, for the sessions that have one.
        unmatched_rows: CSV rows that name no session, as `FILE:line (what it names)`.
        missing: `(log, reason)` for sessions without an outcome.
        threshold: The reward a run needs to count as passed.
        results: log -> what its harbor `result.json` says (every one read, with or without
            a reward): the run status reads its exception.
    """

    outcomes: dict[str, Outcome]
    unmatched_rows: tuple[str, ...]
    missing: tuple[tuple[str, str], ...]
    threshold: float
    results: dict[str, TrialResult] = field(default_factory=dict)


def _reward(text: str, where: str) -> float | None:
    if text.strip() == "":
        return None
    try:
        value = float(text)
    except ValueError:
        raise UsageError(f"{where}: reward {text!r} is not a number") from None
    if not math.isfinite(value):
        raise UsageError(f"{where}: reward {text!r} is not a finite number")
    return value


def _passed(text: str, where: str) -> bool | None:
    t = text.strip().lower()
    if t == "":
        return None
    if t in _TRUE:
        return True
    if t in _FALSE:
        return False
    raise UsageError(f"{where}: passed {text!r} is not true/false (or 1/0, yes/no)")


def read_outcomes_csv(path: str | os.PathLike[str]) -> list[OutcomeRow]:
    """The rows of an outcomes CSV.

    Raises:
        UsageError: The file cannot be read, lacks the key or value columns, or holds a value
            that is not a number (reward) or a truth value (passed); the message names the file
            and line.
    """
    name = os.fspath(path)
    try:
        with open(name, encoding="utf-8-sig", newline="") as fh:
            reader = csv.DictReader(fh)
            header = [h.strip() for h in (reader.fieldnames or [])]
            rows = list(reader)
    except FileNotFoundError:
        raise UsageError(f"{name}: no such outcomes file") from None
    except IsADirectoryError:
        raise UsageError(f"{name}: is a directory, not an outcomes CSV file") from None
    except OSError as exc:
        raise UsageError(f"{name}: cannot read the outcomes CSV ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise UsageError(f"{name}: cannot read the outcomes CSV (not UTF-8 text)") from None
    except csv.Error as exc:
        raise UsageError(f"{name}: cannot read the outcomes CSV ({exc})") from None
    by_log = "log" in header
    if not by_log and not {"task", "arm", "trial"} <= set(header):
        raise UsageError(
            f"{name}: an outcomes CSV needs a log column or task, arm and trial columns "
            f"(found: {', '.join(header) or 'no header'})"
        )
    if "reward" not in header and "passed" not in header:
        raise UsageError(f"{name}: an outcomes CSV needs a reward or a passed column")
    out = []
    for i, raw in enumerate(rows, start=2):
        row = {(k or "").strip(): (v or "") for k, v in raw.items() if k is not None}
        where = f"{name}:{i}"
        out.append(
            OutcomeRow(
                line=i,
                log=row.get("log", "").strip() or None if by_log else None,
                suite=row.get("suite", "").strip() or None,
                task=row.get("task", "").strip() or None,
                arm=row.get("arm", "").strip() or None,
                trial=row.get("trial", "").strip() or None,
                reward=_reward(row.get("reward", ""), where),
                passed=_passed(row.get("passed", ""), where),
            )
        )
    return out


def _passed_of(reward: float | None, passed: bool | None, threshold: float) -> bool | None:
    if passed is not None:
        return passed
    return None if reward is None else reward >= threshold


def join_outcomes(
    root: str | os.PathLike[str],
    refs: Sequence[SessionRef],
    *,
    csv_path: str | os.PathLike[str] | None = None,
    threshold: float = 1.0,
    logs: Iterable[str] = (),
) -> OutcomeJoin:
    """Join every outcome source to the sessions `refs` (see the module docstring).

    `logs`: further session logs a CSV's `log` column may name, each file's sessions beyond
    the file itself (an Inspect log's samples, `<file>#<sample id>:<epoch>`)."""
    root = os.fspath(root)
    outcomes: dict[str, Outcome] = {}
    problems: dict[str, str] = {}
    results: dict[str, TrialResult] = {}
    for ref in refs:
        if ref.outcome is None:
            continue
        got = results[ref.log] = read_trial_result(os.path.join(root, ref.outcome))
        if got.reward is None:
            problems[ref.log] = f"{ref.outcome}: {got.problem}"
            continue
        outcomes[ref.log] = Outcome(
            got.reward, _passed_of(got.reward, None, threshold), ref.outcome
        )
    unmatched: list[str] = []
    if csv_path is not None:
        name = os.path.basename(os.fspath(csv_path))
        by_log: dict[str, Any] = {ref.log: ref for ref in refs}
        for log in logs:  # a session of a file (an Inspect sample), joined by its own log
            by_log.setdefault(log, SessionRef(log=log, segments=(log,)))
        by_key: dict[tuple, list[SessionRef]] = {}
        for r in refs:
            if r.task is not None:
                by_key.setdefault((r.task, r.arm, r.trial), []).append(r)
        for row in read_outcomes_csv(csv_path):
            if row.log is not None:
                found = [by_log[row.log]] if row.log in by_log else []
                what = row.log
            else:
                found = by_key.get((row.task, row.arm, row.trial), [])
                if row.suite is not None:
                    found = [r for r in found if r.suite == row.suite]
                what = f"task={row.task} arm={row.arm} trial={row.trial}"
                what = what if row.suite is None else f"suite={row.suite} {what}"
            if len(found) != 1:
                why = "" if not found else f"; it matches {len(found)} runs, add a suite column"
                unmatched.append(f"{name}:{row.line} ({what}{why})")
                continue
            ref = found[0]
            if row.reward is None and row.passed is None:
                continue
            outcomes[ref.log] = Outcome(
                row.reward,
                _passed_of(row.reward, row.passed, threshold),
                f"{name}:{row.line}",
                "outcomes-csv",
            )
            problems.pop(ref.log, None)
    missing = tuple(
        (ref.log, problems.get(ref.log, "neither a result.json nor a CSV row"))
        for ref in refs
        if ref.log not in outcomes
    )
    return OutcomeJoin(outcomes, tuple(unmatched), missing, threshold, results)


def with_outcomes(sessions: pd.DataFrame, join: OutcomeJoin) -> pd.DataFrame:
    """The sessions frame with `join` written into it, in place (and returned): each joined
    session's `reward`, `passed`, `outcome_source` and `outcome_ref`, and the run status its
    harbor `result.json` gives (`status`, `status_detail`, `success`). A session the join does
    not name keeps what its own log said (an Inspect score, the log's status)."""
    if not join.outcomes and not join.results:
        return sessions
    import pandas as pd

    from evalkit.metrics.status import RunStatus, harbor_status, success_of
    from evalkit.store.columns import name_text

    at = {log: i for i, log in enumerate(sessions["log"].tolist())}

    def row(log: str) -> int | None:
        return at.get(name_text(log), at.get(log))

    cols = {c: sessions.columns.get_loc(c) for c in sessions.columns}
    for log, trial in join.results.items():
        i = row(log)
        if i is None or not trial.exception:
            continue
        status = sessions.iat[i, cols["status"]]
        detail = sessions.iat[i, cols["status_detail"]]
        if pd.isna(status):
            continue
        got = harbor_status(RunStatus(str(status), str(detail)), trial)
        sessions.iat[i, cols["status"]] = got.status
        sessions.iat[i, cols["status_detail"]] = got.detail
        sessions.iat[i, cols["success"]] = success_of(got.status)
    for log, o in join.outcomes.items():
        i = row(log)
        if i is None:
            continue
        sessions.iat[i, cols["reward"]] = o.reward
        sessions.iat[i, cols["passed"]] = o.passed
        sessions.iat[i, cols["outcome_source"]] = o.kind
        sessions.iat[i, cols["outcome_ref"]] = o.source
    return sessions
