"""Is the difference real? Every figure of an A/B, paired by task (issue 24, Build 8).

`trial_runs(root, …)` is the one place the per-trial rows come from: today the trial sweep's
runs (`evalkit.tables.trials.run_trial_sweep`: the layout's labels, each run's joined outcome,
cost, tokens, duration, tool calls and read allocation). When the frames carry every run's
outcome and status (issue 23), this function is the one to switch to `sessions_df`.

`compare_arms(runs, baseline, candidate)` → `ArmStats`: for each figure (pass, reward, cost,
tokens, duration, tool calls, read allocation) the per-task table, the exact paired test, the
hierarchical bootstrap interval of the mean paired delta (and a cluster-robust one when a cluster
column is named), P(candidate > baseline), the equivalence test when a margin is given, the
planner, and for the pass figure pass rates, Beta posteriors, pass@k / pass^k and the flip table;
then Holm and Benjamini–Hochberg across every test the table makes. Each part is a tidy frame.
`evalkit stats DIR`, `Corpus.compare_arms` and notebook 08 all print this one result.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalkit.errors import UsageError
from evalkit.stats import ExactTest
from evalkit.tables.costs import CostAccount
from evalkit.tables.outcomes import DEFAULT_PASS_THRESHOLD
from evalkit.tables.paired_stats import (
    DEFAULT_PRIOR,
    Adjusted,
    BetaPosterior,
    DeltaInterval,
    Equivalence,
    FlipTable,
    PairedProbability,
    PassCurves,
    Plan,
    RateInterval,
    TaskTable,
    adjust_pvalues,
    arm_posterior,
    cluster_robust_interval,
    equivalence,
    exact_paired_test,
    flip_table,
    hierarchical_bootstrap,
    paired_probability,
    pass_k_curves,
    pass_rate_interval,
    plan,
    task_table,
)

__all__ = [
    "FIGURES",
    "RUN_COLUMNS",
    "CLUSTERS",
    "Figure",
    "TrialRuns",
    "FigureStats",
    "ArmStats",
    "trial_runs",
    "compare_arms",
    "parse_margins",
]


@dataclass(frozen=True)
class Figure:
    """A per-trial figure compared between arms: its column, its name for people, and which
    way is wanted (`higher_is_better`; `lower_is_better` for spending: cheaper, not better)."""

    key: str
    label: str
    direction: str
    unit: str = ""


FIGURES: tuple[Figure, ...] = (
    Figure("passed", "pass", "higher_is_better", "share of trials"),
    Figure("reward", "reward", "higher_is_better", "reward"),
    Figure("cost_usd", "cost", "lower_is_better", "USD"),
    Figure("cost_per_pass_usd", "cost per solved task", "lower_is_better", "USD"),
    Figure("tokens", "tokens", "lower_is_better", "tokens"),
    Figure("duration_s", "duration", "lower_is_better", "s"),
    Figure("tool_calls", "tool calls", "lower_is_better", "calls"),
    Figure("read_allocation_efficiency", "read allocation", "higher_is_better", "share"),
)
CLUSTERS = ("suite", "pass", "repo")
FIGURE_KEYS = tuple(f.key for f in FIGURES)
RUN_COLUMNS = (
    "log", "suite", "pass", "repo", "task", "arm", "trial", "status", "reward", "passed",
    "cost_usd", "cost_per_pass_usd", "tokens", "duration_s", "tool_calls",
    "tool_under_test_calls",
    "read_allocation_efficiency",
)  # fmt: skip


@dataclass(frozen=True, repr=False)
class TrialRuns:
    """The per-trial rows of a corpus and how they were read.

    Attributes:
        root: The corpus directory.
        read_as: The layout and tool profile, in words.
        frame: One row per run read (`RUN_COLUMNS`); `task` is `suite/task` when the corpus has
            several suites (the same task name in two suites is two tasks), and the pass/repo
            directory when the layout names no task (`run` is then the trial); `reward` is the
            run's reward, else its pass as 1 or 0 (the outcome table's rule), `passed` 1/0.
        arms: The arms found; `baseline`, `candidate` the default pair (`choose_arms`).
        runs: Every run the tree holds (read or not).
        cost: How the runs' costs were found: recorded by the log, priced from their tokens,
            unknown (`cost_usd` is recorded where there is one, else priced; issue 27).
    """

    root: Path
    read_as: str
    frame: Any
    arms: tuple[str, ...]
    baseline: str | None
    candidate: str | None
    runs: int
    cost: CostAccount | None = None

    def __repr__(self) -> str:
        return f"<TrialRuns {self.root.name}/: {len(self.frame)} runs read, arms {self.arms}>"


def trial_runs(
    root: str | os.PathLike[str],
    *,
    layout: Any = None,
    profile: Any = None,
    outcomes: str | os.PathLike[str] | None = None,
    pass_threshold: float = DEFAULT_PASS_THRESHOLD,
    arms: Sequence[str] | None = None,
    cache: bool = True,
    cache_dir: str | os.PathLike[str] | None = None,
    jobs: int | None = None,
    prices: Any = None,
) -> TrialRuns:
    """The per-trial rows `compare_arms` reads: the one source of them (see the module
    docstring). Discovery and options are the trial sweep's (`evalkit sweep --layout --profile
    --outcomes --arms`); `prices` (`UserPrices` or a `--prices FILE.toml` path) prices the
    runs whose log records no cost.

    `cost_per_pass_usd` is the cost per solved task: a task's cost in an arm over its passed
    trials (Σ cost / passes; <NA> when none passed), given to each trial as its cost × trials /
    passes so that the task's mean is that ratio (the bootstrap then holds each task's pass
    count fixed).

    Raises:
        UsageError: The directory, layout, profile, outcomes file or arms are not usable.
    """
    import pandas as pd

    from evalkit.tables.trials import NO_SUITE, run_trial_sweep

    sweep = run_trial_sweep(
        root,
        layout=layout,
        profile=profile,
        outcomes=outcomes,
        pass_threshold=pass_threshold,
        arms=arms,
        cache=cache,
        cache_dir=cache_dir,
        jobs=jobs,
        prices=prices,
    )
    parsed = sweep.parsed
    several = len({r.suite for r in parsed}) > 1
    rows = []
    for r in parsed:
        passed = None if r.passed is None else float(bool(r.passed))
        task = r.task
        if several and task is not None:
            task = f"{r.suite or NO_SUITE}/{task}"
        if task is None:  # the harness's A/B layouts: the pass/repo directory is the task
            task = "/".join(p for p in (r.pass_, r.repo) if p) or None
        rows.append(
            {
                "log": r.log,
                "suite": r.suite,
                "pass": r.pass_,
                "repo": r.repo,
                "task": task,
                "arm": r.arm,
                "trial": r.trial if r.trial is not None else r.run,
                "status": r.status,
                "reward": r.reward if r.reward is not None else passed,
                "passed": passed,
                "cost_usd": r.cost_usd,
                "tokens": r.tokens,
                "duration_s": r.duration_s,
                "tool_calls": r.tool_calls,
                "tool_under_test_calls": r.tool_under_test_calls,
                "read_allocation_efficiency": r.read_allocation_efficiency,
            }
        )
    frame = pd.DataFrame(rows, columns=list(RUN_COLUMNS))
    frame["cost_per_pass_usd"] = _cost_per_pass(frame)
    layout_text = sweep.layout.describe() if sweep.layout is not None else "the A/B layouts"
    return TrialRuns(
        root=sweep.root,
        read_as=f"layout: {layout_text}; tool profile: {sweep.profile.describe()}",
        frame=frame,
        arms=sweep.arms,
        baseline=sweep.baseline,
        candidate=sweep.candidate,
        runs=len(sweep.rows),
        cost=sweep.cost_account,
    )


def _cost_per_pass(frame: Any) -> list[float | None]:
    """Each trial's share of its task's cost per solved task in its arm (see `trial_runs`):
    cost × (trials with a cost and an outcome) / (passes among them); None where the trial has
    no cost or outcome, or its task passed no trial in that arm."""
    known = (frame["cost_usd"].notna() & frame["passed"].notna()).tolist()
    groups: dict[tuple[Any, Any], tuple[int, float]] = {}
    for task, arm, ok, p in zip(frame["task"], frame["arm"], known, frame["passed"], strict=True):
        if ok:
            n, k = groups.get((task, arm), (0, 0.0))
            groups[(task, arm)] = (n + 1, k + float(p))
    out: list[float | None] = []
    for task, arm, ok, c in zip(frame["task"], frame["arm"], known, frame["cost_usd"], strict=True):
        n, k = groups.get((task, arm), (0, 0.0))
        out.append(float(c) * n / k if ok and k else None)
    return out


@dataclass(frozen=True)
class FigureStats:
    """Everything `compare_arms` says about one figure (the pass parts only for `passed`)."""

    figure: Figure
    table: TaskTable
    test: ExactTest
    bootstrap: DeltaInterval
    cluster: DeltaInterval | None
    probability: PairedProbability
    equivalence: Equivalence | None
    plan: Plan
    pass_rates: tuple[RateInterval, ...] = ()
    posteriors: tuple[BetaPosterior, ...] = ()
    curves: PassCurves | None = None
    flips: FlipTable | None = None

    @property
    def tasks(self) -> int:
        return len(self.table.complete)


@dataclass(frozen=True)
class ArmStats:
    """The paired statistics of two arms, figure by figure, as tidy frames."""

    baseline: str
    candidate: str
    figures: tuple[FigureStats, ...]
    tests: tuple[tuple[str, str, ExactTest], ...]  # (group, figure, test): the family
    adjusted: Adjusted
    seed: int
    level: float
    cluster: str | None
    prior: tuple[float, float]
    margins: tuple[tuple[str, float], ...]

    def figure(self, key: str) -> FigureStats:
        for f in self.figures:
            if f.figure.key == key:
                return f
        raise KeyError(
            f"no figure {key!r}; figures: {', '.join(f.figure.key for f in self.figures)}"
        )

    def _concat(self, frames):
        import pandas as pd

        frames = [f for f in frames if f is not None and len(f.columns)]
        if not frames:
            return pd.DataFrame()
        return pd.concat(frames, ignore_index=True)

    def tasks_frame(self):
        """One row per figure × task: each arm's n and mean, the delta and its class."""
        import pandas as pd

        rows = []
        for f in self.figures:
            for t in f.table.tasks:
                row = {"figure": f.figure.key, "task": t.task} | dict(t.clusters)
                row |= {
                    "baseline_n": len(t.baseline),
                    "baseline_mean": t.baseline_mean,
                    "candidate_n": len(t.candidate),
                    "candidate_mean": t.candidate_mean,
                    "delta": t.delta,
                    "class": t.cls,
                }
                rows.append(row)
        cols = ["figure", "task", *([self.cluster] if self.cluster else [])]
        cols += ["baseline_n", "baseline_mean", "candidate_n", "candidate_mean", "delta", "class"]
        return pd.DataFrame(rows, columns=cols)

    def intervals_frame(self):
        """One row per figure and interval method (hierarchical bootstrap; cluster-robust)."""
        return self._concat(
            [f.bootstrap.to_frame() for f in self.figures]
            + [f.cluster.to_frame() for f in self.figures if f.cluster is not None]
        )

    def probability_frame(self):
        """One row per figure: P(candidate > baseline) with its prior and credible interval."""
        frames = []
        for f in self.figures:
            df = f.probability.to_frame()
            df.insert(0, "figure", f.figure.key)
            frames.append(df)
        return self._concat(frames)

    def tests_frame(self):
        """Every exact test the table makes (per figure, and per cluster when one is named):
        the method, raw p (or why withheld, with the smallest attainable p), Holm and BH."""
        import pandas as pd

        adj = self.adjusted
        rows = [
            {
                "group": group,
                "figure": figure,
                "method": test.method,
                "non_tied": test.n_nonzero,
                "p_value": test.p_value,
                "p_holm": adj.holm[i],
                "p_bh": adj.bh[i],
                "min_attainable_p": test.min_attainable_p,
                "note": test.reason,
            }
            for i, (group, figure, test) in enumerate(self.tests)
        ]
        cols = ["group", "figure", "method", "non_tied", "p_value", "p_holm", "p_bh"]
        cols += ["min_attainable_p", "note"]
        return pd.DataFrame(rows, columns=cols)

    def equivalence_frame(self):
        """One row per figure given a margin: TOST and non-inferiority."""
        return self._concat([f.equivalence.to_frame() for f in self.figures if f.equivalence])

    def plan_frame(self):
        """One row per figure: minimum detectable effect and tasks needed (estimates)."""
        return self._concat([f.plan.to_frame() for f in self.figures])

    def pass_rates_frame(self):
        """Pass rates with Wilson and Clopper–Pearson intervals: per arm over tasks (a task
        passes when more than half its trials did), and per task over its trials."""
        return self._concat([r.to_frame() for f in self.figures for r in f.pass_rates])

    def posteriors_frame(self):
        """The Beta posterior of each arm's pass rate (each task counted once)."""
        return self._concat([p.to_frame() for f in self.figures for p in f.posteriors])

    def pass_k_frame(self):
        """pass@k and pass^k per arm and k, averaged over tasks."""
        return self._concat([f.curves.to_frame() for f in self.figures if f.curves])

    def flips_frame(self):
        """Tasks by pass state in each arm."""
        return self._concat([f.flips.to_frame() for f in self.figures if f.flips])


def _pass_rates(table: TaskTable) -> tuple[RateInterval, ...]:
    out = []
    for side in ("baseline", "candidate"):
        label = getattr(table, side)
        scored = [t for t in table.tasks if getattr(t, side)]
        solved = sum(1 for t in scored if t.passes(side) * 2 > len(getattr(t, side)))
        for method in ("wilson", "clopper_pearson"):
            out.append(
                pass_rate_interval(
                    solved, len(scored), method=method, arm=label,
                    unit="task (passes when more than half its trials passed)",
                )
            )  # fmt: skip
    return tuple(out)


def _figure_stats(
    runs: Any,
    fig: Figure,
    baseline: str,
    candidate: str,
    *,
    cluster: str | None,
    margin: float | None,
    seed: int,
    n_resamples: int,
    level: float,
    prior: tuple[float, float],
) -> FigureStats:
    table = task_table(runs, fig.key, baseline, candidate, clusters=(cluster,) if cluster else ())
    is_pass = fig.key == "passed" and table.binary
    return FigureStats(
        figure=fig,
        table=table,
        test=exact_paired_test(table),
        bootstrap=hierarchical_bootstrap(table, seed=seed, n_resamples=n_resamples, level=level),
        cluster=cluster_robust_interval(table, cluster, level=level) if cluster else None,
        probability=paired_probability(
            table.count("higher"),
            table.count("lower"),
            table.count("tied"),
            prior=prior,
            level=level,
        ),  # fmt: skip
        equivalence=(
            equivalence(table, margin, direction=fig.direction) if margin is not None else None
        ),
        plan=plan(table),
        pass_rates=_pass_rates(table) if is_pass else (),
        posteriors=(
            tuple(
                arm_posterior(table, s, prior=prior, level=level) for s in ("baseline", "candidate")
            )
            if is_pass
            else ()
        ),
        curves=pass_k_curves(table) if is_pass else None,
        flips=flip_table(table) if is_pass else None,
    )


def _same_as_pass(frame: Any) -> bool:
    if "passed" not in frame.columns:
        return False
    both = frame[["reward", "passed"]].dropna()
    return len(both) == frame["reward"].notna().sum() and bool(
        (both["reward"].astype(float) == both["passed"].astype(float)).all()
    )


def compare_arms(
    runs: Any,
    baseline: str,
    candidate: str,
    *,
    figures: Sequence[Figure] = FIGURES,
    margins: Mapping[str, float] | None = None,
    cluster: str | None = None,
    seed: int = 0,
    n_resamples: int = 4999,
    level: float = 0.95,
    prior: tuple[float, float] = DEFAULT_PRIOR,
) -> ArmStats:
    """Compare `candidate` with `baseline`, paired by task, figure by figure.

    Args:
        runs: A tidy per-trial frame (`TrialRuns.frame`, or any frame with `task`, `arm` and
            the figures' columns); a `TrialRuns` is read for its frame.
        baseline, candidate: The arms (deltas are candidate minus baseline).
        figures: The figures to compare (default `FIGURES`); one with no known value in either
            arm is left out, and so is `reward` when every reward is the run's pass (0 or 1).
        margins: Equivalence margin per figure key, in the figure's own unit (no margin: no
            equivalence test).
        cluster: A cluster column (`repo`, `suite`, `pass`): adds the cluster-robust interval
            and the exact tests within each cluster to the family adjusted for many tests.
        seed, n_resamples, level: Of the hierarchical bootstrap (and the level of every
            interval).
        prior: The Beta prior of the posteriors (uniform by default).
    """
    frame = getattr(runs, "frame", runs)
    margins = dict(margins or {})
    if cluster is not None and cluster not in frame.columns:
        raise ValueError(f"no column {cluster!r} to cluster by")
    out = []
    for fig in figures:
        if fig.key not in frame.columns:
            continue
        mine = frame[frame["arm"].isin([baseline, candidate])]
        if mine[fig.key].notna().sum() == 0:
            continue
        if fig.key == "reward" and _same_as_pass(mine):
            continue  # rewards of 0 and 1 only: the pass figure says it all
        out.append(
            _figure_stats(
                frame, fig, baseline, candidate, cluster=cluster, margin=margins.get(fig.key),
                seed=seed, n_resamples=n_resamples, level=level, prior=prior,
            )
        )  # fmt: skip
    tests: list[tuple[str, str, ExactTest]] = [("all tasks", f.figure.key, f.test) for f in out]
    if cluster is not None:
        for f in out:
            values = sorted(set(f.table.cluster_of(cluster)), key=str)
            for value in values if len(values) > 1 else ():  # one cluster: the row above
                sub = TaskTable(
                    f.table.figure, baseline, candidate,
                    tuple(t for t in f.table.complete if dict(t.clusters)[cluster] == value),
                    f.table.binary, f.table.cluster_names,
                )  # fmt: skip
                tests.append((f"{cluster} {value}", f.figure.key, exact_paired_test(sub)))
    adjusted = adjust_pvalues(
        [f"{g}: {fig}" for g, fig, _ in tests], [t.p_value for _, _, t in tests]
    )
    return ArmStats(
        baseline=baseline,
        candidate=candidate,
        figures=tuple(out),
        tests=tuple(tests),
        adjusted=adjusted,
        seed=seed,
        level=level,
        cluster=cluster,
        prior=tuple(prior),  # type: ignore[arg-type]
        margins=tuple(sorted(margins.items())),
    )


def parse_margins(items: list[str]) -> dict[str, float]:
    """`--margin reward=0.05`, `--margin 0.05` (pass and reward) into {figure: margin}.

    Raises:
        UsageError: An unknown figure, or a margin that is not a positive number.
    """
    out: dict[str, float] = {}
    for item in items:
        name, _, text = item.rpartition("=")
        keys = [name] if name else ["passed", "reward"]
        if name and name not in FIGURE_KEYS:
            raise UsageError(
                f"--margin {item}: no figure {name!r} (figures: {', '.join(FIGURE_KEYS)})"
            )
        try:
            value = float(text)
        except ValueError:
            raise UsageError(f"--margin {item}: {text!r} is not a number") from None
        if not math.isfinite(value) or value <= 0:
            raise UsageError(f"--margin {item}: the margin must be a positive number")
        out |= dict.fromkeys(keys, value)
    return out
