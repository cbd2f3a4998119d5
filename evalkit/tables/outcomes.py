"""Per-task paired outcome analysis between a baseline and a candidate arm (issue 14, Build 5).

The unit of pairing is the **task**: the same task run several times (trials) in each arm. Each
task gets both arms' outcome (the mean reward over its trials, with n), the delta (candidate
minus baseline) and a class:

* `helps` — the candidate's mean reward is higher, `hurts` — lower, `tie` — equal (within 1e-12,
  so `0.1 + 0.2` and `0.3` tie);
* `incomplete` — one arm has no trial with a known outcome for the task.

Summary: k of n tasks helped / hurt. Statistics come from `evalkit.stats` and are given only where
they can say something: six or more non-tied tasks, otherwise the minimum attainable p is stated.

* binary outcomes (every complete task's mean is 0 or 1 in both arms) → the exact McNemar test on
  the tasks that pass in one arm only;
* rewards → the exact sign test on the task deltas and the Hodges–Lehmann estimate of the delta.

The same paired view is built for cost, tokens, duration and tool calls per task (lower is
cheaper, not better: the table says which way each went and never calls it an improvement).

A run's outcome is its `reward` when known, else its `passed` flag as 1 or 0; unknown (None)
outcomes are left out of the mean and of n, never counted as 0.

The per-task means, classes and the choice of exact test are `evalkit.tables.paired_stats`'s
(`task_table`, `exact_paired_test`), the same functions `evalkit stats` reports with (issue 24).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evalkit.stats import MIN_NONZERO_FOR_TEST, ExactTest, hodges_lehmann, sign_test
from evalkit.tables.paired_stats import exact_paired_test, pass_fail_per_task, task_table

__all__ = [
    "CLASSES",
    "DEFAULT_PASS_THRESHOLD",
    "TIE_TOLERANCE",
    "METRICS",
    "TaskOutcome",
    "TaskMetric",
    "PairedMetric",
    "OutcomeTable",
    "passed_from_reward",
    "outcome_table",
]

CLASSES = ("helps", "hurts", "tie", "incomplete")
DEFAULT_PASS_THRESHOLD = 1.0
TIE_TOLERANCE = 1e-12
# (key in a run row, label) of the per-task paired views beside the outcome.
METRICS: tuple[tuple[str, str], ...] = (
    ("cost_usd", "cost (USD)"),
    ("tokens", "tokens"),
    ("duration_s", "duration (s)"),
    ("tool_calls", "tool calls"),
)


def passed_from_reward(
    reward: float | None, threshold: float = DEFAULT_PASS_THRESHOLD
) -> bool | None:
    """`reward >= threshold`; None when the reward is unknown."""
    if reward is None or (isinstance(reward, float) and math.isnan(reward)):
        return None
    return reward >= threshold


def _known(x: Any) -> bool:
    return x is not None and not (isinstance(x, float) and math.isnan(x))


def _outcome(row: Mapping[str, Any]) -> float | None:
    reward = row.get("reward")
    if _known(reward):
        return float(reward)
    passed = row.get("passed")
    return None if passed is None else float(bool(passed))


@dataclass(frozen=True)
class TaskOutcome:
    """One task's paired outcome (rewards are means over trials; n counts known outcomes)."""

    task: str
    baseline_reward: float | None
    candidate_reward: float | None
    baseline_n: int
    candidate_n: int
    delta: float | None
    cls: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "task": self.task,
            "baseline_reward": self.baseline_reward,
            "candidate_reward": self.candidate_reward,
            "baseline_n": self.baseline_n,
            "candidate_n": self.candidate_n,
            "delta": self.delta,
            "class": self.cls,
        }


@dataclass(frozen=True)
class TaskMetric:
    """One task's means of a per-run figure in each arm (None where no run has it)."""

    task: str
    baseline: float | None
    candidate: float | None
    baseline_n: int
    candidate_n: int
    delta: float | None


@dataclass(frozen=True)
class PairedMetric:
    """A per-task paired view of cost, tokens, duration or tool calls.

    Attributes:
        metric: The run-row key (`cost_usd`, …); `label` its name for people.
        tasks: One row per task, in the outcome table's task order.
        lower / higher / tied: Complete tasks where the candidate's mean was lower / higher /
            equal.
        test: The exact sign test (withheld below six non-tied tasks).
        hodges_lehmann: The Hodges–Lehmann estimate of the delta, or None when withheld.
    """

    metric: str
    label: str
    tasks: tuple[TaskMetric, ...]
    lower: int
    higher: int
    tied: int
    test: ExactTest
    hodges_lehmann: float | None


@dataclass(frozen=True)
class OutcomeTable:
    """The per-task paired outcome table between two arms.

    Attributes:
        baseline, candidate: The compared arms.
        tasks: One row per task seen in either arm, in task-name order.
        binary: Every complete task's outcome is 0 or 1 in both arms (McNemar applies).
        test: Exact McNemar (binary) or exact sign test (rewards); p None when withheld.
        hodges_lehmann: Hodges–Lehmann estimate of the reward delta (rewards only, withheld
            below six non-tied tasks).
        metrics: The paired views of cost, tokens, duration and tool calls.
        pass_threshold: The reward a run needs to count as passed.
    """

    baseline: str
    candidate: str
    tasks: tuple[TaskOutcome, ...]
    binary: bool
    test: ExactTest
    hodges_lehmann: float | None
    metrics: tuple[PairedMetric, ...]
    pass_threshold: float = DEFAULT_PASS_THRESHOLD

    def count(self, cls: str) -> int:
        return sum(1 for t in self.tasks if t.cls == cls)

    @property
    def helps(self) -> int:
        return self.count("helps")

    @property
    def hurts(self) -> int:
        return self.count("hurts")

    @property
    def ties(self) -> int:
        return self.count("tie")

    @property
    def incomplete(self) -> int:
        return self.count("incomplete")

    @property
    def complete(self) -> int:
        return len(self.tasks) - self.incomplete

    def to_dict(self) -> dict[str, Any]:
        """The `outcomes` object of `evalkit sweep --json` (issue 14, Build 6)."""
        return {
            "baseline": self.baseline,
            "candidate": self.candidate,
            "tasks": [t.to_dict() for t in self.tasks],
            "helps": self.helps,
            "hurts": self.hurts,
            "ties": self.ties,
            "incomplete": self.incomplete,
        }

    def to_frame(self):
        """One row per task: rewards, n, delta, class."""
        import pandas as pd

        cols = ["task", "baseline_reward", "baseline_n", "candidate_reward", "candidate_n"]
        cols += ["delta", "class"]
        return pd.DataFrame([t.to_dict() for t in self.tasks], columns=cols)

    def metrics_frame(self):
        """Tidy: one row per (metric, task) with both arms' means and the delta."""
        import pandas as pd

        rows = [
            {
                "metric": m.metric,
                "task": t.task,
                "baseline": t.baseline,
                "candidate": t.candidate,
                "baseline_n": t.baseline_n,
                "candidate_n": t.candidate_n,
                "delta": t.delta,
            }
            for m in self.metrics
            for t in m.tasks
        ]
        cols = ["metric", "task", "baseline", "candidate", "baseline_n", "candidate_n", "delta"]
        return pd.DataFrame(rows, columns=cols)

    def summary_frame(self):
        """One row per figure (reward first): k helped/hurt or lower/higher, test, estimate."""
        import pandas as pd

        rows = [
            {
                "figure": "reward",
                "tasks": self.complete,
                "candidate_higher": self.helps,
                "candidate_lower": self.hurts,
                "tied": self.ties,
                "test": self.test.method,
                "p_value": self.test.p_value,
                "min_attainable_p": self.test.min_attainable_p,
                "hodges_lehmann": self.hodges_lehmann,
                "note": self.test.reason,
            }
        ]
        rows += [
            {
                "figure": m.metric,
                "tasks": m.lower + m.higher + m.tied,
                "candidate_higher": m.higher,
                "candidate_lower": m.lower,
                "tied": m.tied,
                "test": m.test.method,
                "p_value": m.test.p_value,
                "min_attainable_p": m.test.min_attainable_p,
                "hodges_lehmann": m.hodges_lehmann,
                "note": m.test.reason,
            }
            for m in self.metrics
        ]
        return pd.DataFrame(rows, columns=list(rows[0]))


_CLASS = {"higher": "helps", "lower": "hurts", "tied": "tie", "incomplete": "incomplete"}
_OUTCOME = "\0outcome"  # the computed outcome column (reward, else passed as 1 or 0)


def _estimate(deltas: list[float], test: ExactTest, min_nonzero: int) -> float | None:
    return hodges_lehmann(deltas) if test.n_nonzero >= min_nonzero else None


def _paired_metric(
    runs: Sequence[Mapping[str, Any]],
    tasks: list[str],
    baseline: str,
    candidate: str,
    metric: str,
    label: str,
    min_nonzero: int,
) -> PairedMetric:
    by_task = {t.task: t for t in task_table(runs, metric, baseline, candidate).tasks}
    rows = []
    for task in tasks:
        t = by_task.get(task)
        if t is None:
            rows.append(TaskMetric(task, None, None, 0, 0, None))
            continue
        bm, cm = t.baseline_mean, t.candidate_mean
        delta = None if bm is None or cm is None else cm - bm
        rows.append(TaskMetric(task, bm, cm, len(t.baseline), len(t.candidate), delta))
    deltas = [r.delta for r in rows if r.delta is not None]
    signs = [0.0 if abs(d) <= TIE_TOLERANCE else d for d in deltas]
    test = sign_test(signs, min_nonzero=min_nonzero)
    return PairedMetric(
        metric=metric,
        label=label,
        tasks=tuple(rows),
        lower=sum(1 for d in signs if d < 0),
        higher=sum(1 for d in signs if d > 0),
        tied=sum(1 for d in signs if d == 0),
        test=test,
        hodges_lehmann=_estimate(deltas, test, min_nonzero),
    )


def outcome_table(
    runs: Sequence[Mapping[str, Any]],
    baseline: str,
    candidate: str,
    *,
    metrics: Sequence[tuple[str, str]] = METRICS,
    pass_threshold: float = DEFAULT_PASS_THRESHOLD,
    min_nonzero: int = MIN_NONZERO_FOR_TEST,
) -> OutcomeTable:
    """Pair two arms task by task.

    The per-task summary and the exact test are those of `evalkit stats`
    (`evalkit.tables.paired_stats.task_table`, `exact_paired_test`), so the trial sweep's
    outcome lines and the paired statistics give the same tasks, means, classes and p.

    Args:
        runs: One mapping per run (trial) with `task`, `arm`, and `reward` (float) and/or
            `passed` (bool), plus the `metrics` keys; other keys are ignored.
        baseline, candidate: The arms compared (candidate minus baseline).
        metrics: `(key, label)` of the per-run figures to pair beside the outcome.
        pass_threshold: Recorded with the table (runs' `passed` are already decided).
        min_nonzero: Non-tied tasks needed before a p-value or estimate is given.
    """
    runs = list(runs)
    scored = [{**row, _OUTCOME: _outcome(row)} for row in runs]
    table = task_table(scored, _OUTCOME, baseline, candidate)
    rows = [
        TaskOutcome(
            t.task, t.baseline_mean, t.candidate_mean, len(t.baseline), len(t.candidate),
            t.delta, _CLASS[t.cls],
        )
        for t in table.tasks
    ]  # fmt: skip
    binary = pass_fail_per_task(table)
    test = exact_paired_test(table, min_nonzero=min_nonzero)
    estimate = None if binary else _estimate(list(table.deltas), test, min_nonzero)
    tasks = [r.task for r in rows]
    return OutcomeTable(
        baseline=baseline,
        candidate=candidate,
        tasks=tuple(rows),
        binary=binary,
        test=test,
        hodges_lehmann=estimate,
        metrics=tuple(
            _paired_metric(runs, tasks, baseline, candidate, key, label, min_nonzero)
            for key, label in metrics
        ),
        pass_threshold=pass_threshold,
    )
