"""The trial sweep: an A/B of any retrieval tool over trial runs with outcomes (issue 14, Build 6).

`evalkit sweep DIR --layout harbor --profile sourcegraph` (or `--outcomes FILE.csv`) reads every
run of the corpus with the tool profile, joins each run's outcome, and builds:

* the per-arm comparison of `evalkit compare` (`evalkit.tables.compare`), one per suite, with
  the profile's families (the tool under test's calls and residual);
* the per-task paired outcome table between a baseline and a candidate arm
  (`evalkit.tables.outcomes`), with cost, tokens, duration and tool calls beside it;
* file-attributed read allocation per arm (evalkit's own metric, `evalkit.metrics.read_allocation`);
* the accounting of every file of the tree.

Every run is a row whatever its explore calls: the baseline sweep's rule that a session needs an
answered explore call (Decision 4) belongs to explore allocation and is not applied here.

The runs are loaded as `evalkit.load_corpus` loads them (`evalkit.corpus.load.load_corpus_frames`,
one parse, one store): each run's outcome (`reward`, `passed`, `outcome_source`) and run status
(`status`, `status_detail`: `evalkit.metrics.status`) are read from the sessions frame, their one
home. The outcome and cost comparisons (the arm comparison, the outcome table and its cost view,
read allocation, the arm summary) leave out the runs whose status is not `ok` and count them per
arm (`left_out`); `include_failed=True` keeps them.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from evalkit.corpus.discover import HARBOR_NO_TRANSCRIPT, Discovery
from evalkit.corpus.layouts import CorpusLayout, detect_layout, parse_layout
from evalkit.corpus.load import LoadedCorpus, load_corpus_frames
from evalkit.corpus.outcomes import OutcomeJoin
from evalkit.corpus.records import FileDamage
from evalkit.errors import UsageError
from evalkit.formats.profiles import ToolProfile, load_profile
from evalkit.metrics.status import STATUSES
from evalkit.session import RunFigures
from evalkit.store.columns import name_text
from evalkit.tables.compare import Comparison, arm_figures, select_runs
from evalkit.tables.costs import CostAccount, cost_account
from evalkit.tables.outcomes import DEFAULT_PASS_THRESHOLD, OutcomeTable, outcome_table

__all__ = [
    "TrialRow",
    "ArmReads",
    "ArmStatus",
    "TrialSweep",
    "run_trial_sweep",
    "choose_arms",
]

NO_SUITE = "(no suite)"


@dataclass(frozen=True)
class TrialRow:
    """One run (session) of the trial sweep.

    Attributes:
        log: The transcript, relative to the corpus.
        suite, task, arm, trial, pass_, repo, run: Labels from the path.
        status: `parsed`, `crash` or `skipped` (not a transcript).
        reason: Why it is not parsed.
        reward, passed: The joined outcome (None when there is none), from the sessions frame.
        outcome_source: Its kind (`result.json`, `outcomes-csv`, `inspect-score`), or None.
        outcome_ref: Its place: the `result.json` path, or `FILE.csv:line`.
        run_status, status_detail: How the run ended (`evalkit.metrics.status`: `ok`,
            `rate_limited`, …), from the sessions frame; None for a file that is not a run.
        tool_calls, tool_under_test_calls: Every tool_use block; the tool under test's.
        read: File-attributed read allocation (`ReadAllocation.to_dict()`), or None.
        cost_usd, tokens, duration_s: The run's cost, tokens (prompt + output) and duration;
            the cost is the sessions frame's `cost_usd`: recorded where the log records one,
            else priced from its token ledger (issue 27).
        cost_source: `recorded`, `priced`, or None (neither: `price_reason` says why).
        priced_cost_usd, recorded_cost_usd, cost_difference_share, price_reason, price_table:
            The sessions frame's cost columns of the run (`evalkit columns sessions`).
        figures: The run's figures as the arm comparison reads them.
        other_types: Event types the metrics do not read, counted.
        damage: `(file, what was lost)` for each damaged file of the run (e.g. stderr lines
            interleaved in harbor's claude-code.txt); the numbers are over what survived.
        damage_counts: One `FileDamage` per damaged file, the same files as `damage` (the
            `--json` damage account, as the sweep's).
    """

    log: str
    suite: str | None
    task: str | None
    arm: str | None
    trial: str | None
    pass_: str | None
    repo: str | None
    run: str | None
    status: str
    reason: str | None
    reward: float | None = None
    passed: bool | None = None
    outcome_source: str | None = None
    outcome_ref: str | None = None
    run_status: str | None = None
    status_detail: str | None = None
    tool_calls: int | None = None
    tool_under_test_calls: int | None = None
    read: dict[str, Any] | None = None
    cost_usd: float | None = None
    tokens: float | None = None
    duration_s: float | None = None
    figures: RunFigures | None = None
    other_types: tuple[tuple[str, int], ...] = ()
    damage: tuple[tuple[str, str], ...] = ()
    damage_counts: tuple[FileDamage, ...] = ()
    cost_source: str | None = None
    priced_cost_usd: float | None = None
    recorded_cost_usd: float | None = None
    cost_difference_share: float | None = None
    price_reason: str | None = None
    price_table: str | None = None

    @property
    def read_allocation_efficiency(self) -> float | None:
        return None if self.read is None else self.read["read_allocation_efficiency"]

    def outcome_row(self) -> dict[str, Any]:
        """The mapping `evalkit.tables.outcomes.outcome_table` pairs."""
        return {
            "task": self.task,
            "arm": self.arm,
            "trial": self.trial,
            "reward": self.reward,
            "passed": self.passed,
            "cost_usd": self.cost_usd,
            "tokens": self.tokens,
            "duration_s": self.duration_s,
            "tool_calls": self.tool_calls,
        }


@dataclass(frozen=True)
class ArmReads:
    """Read allocation of one arm, pooled over its runs (evalkit's own metric)."""

    arm: str
    runs: int
    runs_with_reads: int
    attributed_chars: int
    cited_chars: int
    unattributed_chars: int
    per_run: tuple[float, ...]

    @property
    def pooled(self) -> float | None:
        return self.cited_chars / self.attributed_chars if self.attributed_chars else None


@dataclass(frozen=True)
class ArmStatus:
    """How the runs of one arm ended: runs per status (`STATUSES` order), and how many the
    comparisons leave out (every status but `ok`, unless `include_failed`)."""

    arm: str
    runs: int
    counts: dict[str, int]
    left_out: int

    @property
    def infra_error_rate(self) -> float | None:
        """Runs harbor (or the harness) failed around, as a share of the arm's runs."""
        return self.counts.get("infra_error", 0) / self.runs if self.runs else None

    def left_out_text(self) -> str | None:
        """`2 of 3 mcp runs rate_limited, 1 infra_error: left out`, or None when none is."""
        if not self.left_out:
            return None
        parts = [(st, n) for st, n in self.counts.items() if st != "ok" and n]
        runs = f"{self.left_out} of {self.runs} {self.arm} {'run' if self.runs == 1 else 'runs'}"
        if len(parts) == 1:
            return f"{runs} {parts[0][0]}: left out"
        return f"{runs} left out: " + ", ".join(f"{n} {st}" for st, n in parts)


@dataclass(frozen=True)
class TrialSweep:
    """The trial sweep of one corpus (see the module docstring).

    `compared` are the runs the outcome and cost comparisons use: the parsed runs whose status
    is `ok`, or every parsed run with `include_failed`. `corpus` is the loaded corpus the rows
    were read from (its frames: `corpus.sessions_df()`)."""

    root: Path
    layout: CorpusLayout | None
    profile: ToolProfile
    discovery: Discovery
    rows: tuple[TrialRow, ...]
    join: OutcomeJoin
    baseline: str | None
    candidate: str | None
    pass_threshold: float = DEFAULT_PASS_THRESHOLD
    exclude: tuple[str, ...] = ()
    cache_hits: int = 0
    cache_misses: int = 0
    # issue 23: how the profile was chosen (`ProfileChoice`) and a layout recognised when none
    # was given (`LayoutChoice`), for the report's first lines.
    profile_choice: Any = None
    layout_choice: Any = None
    include_failed: bool = False
    corpus: LoadedCorpus | None = field(default=None, repr=False, compare=False)

    @property
    def parsed(self) -> tuple[TrialRow, ...]:
        return tuple(r for r in self.rows if r.status == "parsed")

    @cached_property
    def compared(self) -> tuple[TrialRow, ...]:
        """The runs the outcome and cost comparisons read: status `ok` (every parsed run when
        `include_failed`)."""
        if self.include_failed:
            return self.parsed
        return tuple(r for r in self.parsed if r.run_status == "ok")

    def status_of(self, rows: Sequence[TrialRow] | None = None) -> tuple[ArmStatus, ...]:
        """Runs per status, per arm (`arms` order), over `rows` (default: every parsed run)."""
        rows = self.parsed if rows is None else rows
        out = []
        for arm in self.arms:
            mine = [r for r in rows if r.arm == arm]
            counts = dict.fromkeys(STATUSES, 0)
            for r in mine:
                counts[r.run_status or "unknown"] += 1
            left = 0 if self.include_failed else sum(1 for r in mine if r.run_status != "ok")
            out.append(ArmStatus(arm, len(mine), counts, left))
        return tuple(out)

    @cached_property
    def arm_status(self) -> tuple[ArmStatus, ...]:
        """`status_of()` over every parsed run: the run status table and the infra-error rate."""
        return self.status_of()

    def left_out(self, rows: Sequence[TrialRow] | None = None) -> list[str]:
        """One line per arm with runs the comparisons leave out (`ArmStatus.left_out_text`)."""
        return [t for a in self.status_of(rows) if (t := a.left_out_text()) is not None]

    @cached_property
    def arms(self) -> tuple[str, ...]:
        found = sorted({r.arm for r in self.parsed if r.arm is not None})
        head = [a for a in (self.baseline, self.candidate) if a in found]
        return tuple(head + [a for a in found if a not in head])

    @cached_property
    def outcomes(self) -> OutcomeTable | None:
        """The paired outcome table, or None without two arms to compare."""
        if self.baseline is None or self.candidate is None:
            return None
        # A run left out still names its task, without an outcome or a cost: a task whose runs
        # all failed is incomplete, never a tie of two failures.
        kept = set(map(id, self.compared))
        runs = [
            r.outcome_row() if id(r) in kept else {**r.outcome_row(), **_NOTHING}
            for r in self.parsed
        ]
        if len({r.suite for r in self.parsed}) > 1:  # the same task name in two suites is two tasks
            for run, r in zip(runs, self.parsed, strict=True):
                if r.task is not None:
                    run["task"] = f"{r.suite or NO_SUITE}/{r.task}"
        return outcome_table(
            runs, self.baseline, self.candidate, pass_threshold=self.pass_threshold
        )

    @cached_property
    def comparisons(self) -> tuple[Comparison, ...]:
        """The per-arm comparison, one per suite (arms in `arms` order); without a suite, one per
        pass/repo as the harness's layouts name them."""
        suites = sorted({_group(r) for r in self.rows if r.arm is not None})
        out = []
        for suite in suites:
            mine = [r for r in self.rows if _group(r) == suite]
            arms, missing = [], []
            for label in self.arms:
                runs = [r for r in mine if r.arm == label]
                if not runs:
                    missing.append(label)
                    continue
                if not self.include_failed:  # a crash is listed as the block lists it
                    runs = [r for r in runs if r.status != "parsed" or r.run_status == "ok"]
                read = [(r.trial or r.log, r.figures) for r in runs if r.figures is not None]
                crashed = [(r.trial or r.log, r.reason or "") for r in runs if r.status == "crash"]
                kept, dropped = select_runs(read, self.exclude)  # type: ignore[arg-type]
                arms.append(arm_figures(label, kept, dropped=dropped, crashed=crashed))
            out.append(Comparison(suite, self.arms, tuple(arms), tuple(missing), self.exclude))
        return tuple(out)

    @cached_property
    def reads(self) -> tuple[ArmReads, ...]:
        """Read allocation pooled per arm."""
        out = []
        for arm in self.arms:
            runs = [r for r in self.compared if r.arm == arm]
            reads = [r.read for r in runs if r.read is not None]
            out.append(
                ArmReads(
                    arm=arm,
                    runs=len(runs),
                    runs_with_reads=sum(1 for d in reads if d["attributed_chars"]),
                    attributed_chars=sum(d["attributed_chars"] for d in reads),
                    cited_chars=sum(d["cited_chars"] for d in reads),
                    unattributed_chars=sum(d["unattributed_chars"] for d in reads),
                    per_run=tuple(
                        d["read_allocation_efficiency"]
                        for d in reads
                        if d["read_allocation_efficiency"] is not None
                    ),
                )
            )
        return tuple(out)

    @property
    def cost_account(self) -> CostAccount:
        """How the compared runs' costs were found: recorded, priced, unknown, and how many
        runs' recorded and priced costs differ by more than 5% (issue 27)."""
        runs = self.compared
        return cost_account(
            [r.cost_source for r in runs],
            [r.cost_difference_share for r in runs],
            [r.price_table for r in runs if r.priced_cost_usd is not None],
            [r.price_reason for r in runs],
        )

    @cached_property
    def accounting(self) -> tuple[tuple[str, str, str | None], ...]:
        """`(path, status, reason)` for every entry of the tree, in path order."""
        by_log = {r.log: r for r in self.rows}
        out = []
        for f in self.discovery.files:
            if f.session is None:
                out.append((f.path, "skipped", f.reason))
            else:
                r = by_log.get(f.session) or next(  # an Inspect log's first sample
                    r for r in self.rows if r.log.startswith(f.session + "#")
                )
                out.append((f.path, r.status, r.reason))
        return tuple(out)

    def runs_frame(self):
        """One row per run: labels, outcome, tool calls, read allocation, cost, tokens."""
        import pandas as pd

        cols = [
            "log", "suite", "task", "arm", "trial", "status", "run_status", "reward", "passed",
            "outcome_source", "tool_calls", "tool_under_test_calls", "read_allocation_efficiency",
            "cost_usd", "tokens", "duration_s",
        ]  # fmt: skip
        rows = [
            {c: getattr(r, c) for c in cols if c != "read_allocation_efficiency"}
            | {"read_allocation_efficiency": r.read_allocation_efficiency}
            for r in self.rows
        ]
        return pd.DataFrame(rows, columns=cols)

    def arm_summary_frame(self):
        """One row per arm: runs, pass rate, and the median run's cost, tokens, duration, tool
        calls and tool-under-test calls (medians by the one quantile rule, Decision 2), over the
        runs compared (`compared`); then the runs left out and the infra-error rate."""
        import pandas as pd

        from evalkit.tables.quantile import median

        def med(values: list[Any]) -> float | None:
            known = [v for v in values if v is not None]
            return median(known) if known else None

        cols = ["arm", "runs", "with_outcome", "passed", "mean_reward", "median_cost_usd"]
        cols += ["median_tokens", "median_duration_s", "median_tool_calls"]
        cols += ["median_tool_under_test_calls", "left_out", "infra_error_rate"]
        status = {a.arm: a for a in self.arm_status}
        rows = []
        for arm in self.arms:
            runs = [r for r in self.compared if r.arm == arm]
            rewards = [r.reward for r in runs if r.reward is not None]
            rows.append(
                {
                    "arm": arm,
                    "runs": len(runs),
                    "with_outcome": sum(1 for r in runs if r.passed is not None),
                    "passed": sum(1 for r in runs if r.passed),
                    "mean_reward": sum(rewards) / len(rewards) if rewards else None,
                    "median_cost_usd": med([r.cost_usd for r in runs]),
                    "median_tokens": med([r.tokens for r in runs]),
                    "median_duration_s": med([r.duration_s for r in runs]),
                    "median_tool_calls": med([r.tool_calls for r in runs]),
                    "median_tool_under_test_calls": med([r.tool_under_test_calls for r in runs]),
                    "left_out": status[arm].left_out,
                    "infra_error_rate": status[arm].infra_error_rate,
                }
            )
        return pd.DataFrame(rows, columns=cols)

    def status_frame(self):
        """One row per arm: runs, runs per status, the infra-error rate, runs left out."""
        import pandas as pd

        cols = ["arm", "runs", *STATUSES, "infra_error_rate", "left_out"]
        rows = [
            {"arm": a.arm, "runs": a.runs, **a.counts, "infra_error_rate": a.infra_error_rate}
            | {"left_out": a.left_out}
            for a in self.arm_status
        ]
        return pd.DataFrame(rows, columns=cols)

    def reads_frame(self):
        """One row per arm: read allocation pooled, chars charged, cited and unattributed, and
        the runs left out (not ok)."""
        import pandas as pd

        cols = ["arm", "runs", "runs_with_reads", "read_allocation_pooled", "attributed_chars"]
        cols += ["cited_chars", "unattributed_chars", "left_out"]
        left = {a.arm: a.left_out for a in self.arm_status}
        rows = [
            {
                "arm": a.arm,
                "runs": a.runs,
                "runs_with_reads": a.runs_with_reads,
                "read_allocation_pooled": a.pooled,
                "attributed_chars": a.attributed_chars,
                "cited_chars": a.cited_chars,
                "unattributed_chars": a.unattributed_chars,
                "left_out": left.get(a.arm, 0),
            }
            for a in self.reads
        ]
        return pd.DataFrame(rows, columns=cols)


_NOTHING = dict.fromkeys(("reward", "passed", "cost_usd", "tokens", "duration_s", "tool_calls"))


def _group(r: TrialRow) -> str:
    return r.suite or "/".join(p for p in (r.pass_, r.repo) if p) or NO_SUITE


def choose_arms(found: Sequence[str], asked: Sequence[str] | None) -> tuple[str | None, str | None]:
    """`--arms BASELINE,CANDIDATE`, or by default an arm named `baseline` first and the first
    other arm (name order) as the candidate.

    Raises:
        UsageError: `asked` is not two arms, or names an arm no run has.
    """
    if asked is not None:
        if len(asked) != 2:
            raise UsageError("--arms takes two arms for the outcome table: BASELINE,CANDIDATE")
        absent = [a for a in asked if a not in found]
        if absent:
            raise UsageError(
                f"--arms: no run in arm {absent[0]!r} (arms found: {', '.join(found) or 'none'})"
            )
        return asked[0], asked[1]
    ordered = sorted(found)
    if "baseline" in ordered:
        rest = [a for a in ordered if a != "baseline"]
        return "baseline", (rest[0] if rest else None)
    if len(ordered) >= 2:
        return ordered[0], ordered[1]
    return (ordered[0] if ordered else None), None


def _row(
    ref: Any,
    log: str,
    rec: Any,
    status: str,
    reason: str | None,
    run: Any,
    got: dict[str, Any],
    **labels: Any,
) -> TrialRow:
    """One `TrialRow` from a session's labels, its record and run, and its frame row's outcome
    and status (`got`: the sessions frame's values, the one home of outcomes and status)."""
    return TrialRow(
        log=log,
        suite=ref.suite,
        task=labels.get("task", ref.task),
        arm=ref.arm,
        trial=labels.get("trial", ref.trial),
        pass_=ref.pass_,
        repo=ref.repo,
        run=ref.run,
        status=status,
        reason=None if status == "parsed" else reason,
        reward=got["reward"],
        passed=got["passed"],
        outcome_source=got["outcome_source"],
        outcome_ref=got["outcome_ref"],
        run_status=got["status"] if status == "parsed" else None,
        status_detail=got["status_detail"] if status == "parsed" else None,
        tool_calls=run["tool_calls"] if run else None,
        tool_under_test_calls=run["tool_under_test_calls"] if run else None,
        read=run["read_allocation"] if run else None,
        cost_usd=got["cost_usd"] if run else None,
        tokens=run["tokens"] if run else None,
        duration_s=run["duration_s"] if run else None,
        figures=RunFigures.from_payload(run["figures"]) if run else None,
        other_types=tuple(run["other_types"].items()) if run else (),
        damage=rec.damage,
        damage_counts=rec.damage_counts,
        **({c: got[c] for c in _COST_VALUES} if run else {}),
    )


# The sessions frame's cost columns a run keeps beside `cost_usd` (issue 27).
_COST_VALUES = (
    "cost_source",
    "priced_cost_usd",
    "recorded_cost_usd",
    "cost_difference_share",
    "price_reason",
    "price_table",
)


def _agent_rows(ref: Any, rec: Any, runs: list[dict[str, Any]], frame_values) -> list[TrialRow]:
    """The runs of a Codex, Inspect or ATIF file (issue 23): one per session. An Inspect log's
    samples are runs of their own (`<file>#<sample>:<epoch>`), the sample its task where the
    path names none; outcome and status are the sessions frame's for each session's log (an
    Inspect score is the outcome there where no result file or outcomes CSV gives one)."""
    out = []
    for r in runs:
        labels: dict[str, Any] = {}
        if r["sample"] is not None and len(runs) > 1:
            labels["trial"] = r["log"].rpartition("#")[2]
            if ref.task is None:
                labels["task"] = str(r["sample"])
        out.append(
            _row(ref, r["log"], rec, "parsed", None, r["run"], frame_values(r["log"]), **labels)
        )
    return out


def run_trial_sweep(
    root: str | os.PathLike[str],
    *,
    layout: str | CorpusLayout | None = None,
    profile: str | os.PathLike[str] | ToolProfile | None = None,
    outcomes: str | os.PathLike[str] | None = None,
    pass_threshold: float = DEFAULT_PASS_THRESHOLD,
    arms: Sequence[str] | None = None,
    exclude: Sequence[str] = (),
    cache: bool = True,
    cache_dir: str | os.PathLike[str] | None = None,
    jobs: int | None = None,
    progress: bool | None = False,
    include_failed: bool = False,
    prices: Any = None,
) -> TrialSweep:
    """Load the corpus (by `layout`, else the harness's rules) with `profile`, outcomes joined.

    Args:
        root: The corpus directory.
        layout: `harbor`, a pattern (`evalkit.corpus.layouts`), or None.
        profile: A tool profile, preset name or TOML file; None = chosen from the tools the
            runs call (`choose_profile`), said in `profile_choice`.
        layout: None = the harness's rules, or `harbor` for a harbor run tree
            (`detect_layout`, said in `layout_choice`).
        outcomes: A CSV of outcomes (`evalkit.corpus.outcomes`).
        pass_threshold: The reward a run needs to count as passed.
        arms: `(baseline, candidate)` for the outcome table (default: see `choose_arms`).
        exclude: Run-hygiene rules for the arm comparison (`evalkit.tables.compare`).
        cache, cache_dir, jobs, progress: As for `run_sweep`.
        include_failed: Keep the runs whose status is not `ok` in the comparisons.
        prices: User prices (`UserPrices` or a `--prices FILE.toml` path) for the runs whose
            log records no cost (and the priced cost beside every recorded one).

    Raises:
        UsageError: The directory, layout, profile, outcomes file or arms are not usable.
    """
    layout_choice = None
    if layout is None and Path(root).is_dir():
        layout_choice = detect_layout(root)  # a harbor tree is read as one (issue 23)
        layout = layout_choice.layout if layout_choice is not None else None
    spec = parse_layout(layout)
    prof = load_profile(profile)
    root = Path(root)
    corpus = load_corpus_frames(
        root,
        layout=spec,
        profile=prof if profile is not None else None,  # read once (a pipe reads only once)
        outcomes=outcomes,
        pass_threshold=pass_threshold,
        cache=cache,
        cache_dir=cache_dir,
        jobs=jobs,
        progress=progress,
        keep_runs=True,
        prices=prices,
    )
    choice = corpus.profile_choice
    prof = choice.profile if choice is not None else prof
    found = corpus.discovery
    frame = corpus.tables["sessions"]
    cols = ["reward", "passed", "outcome_source", "outcome_ref", "status", "status_detail"]
    cols += ["cost_usd", *_COST_VALUES]
    at = {log: i for i, log in enumerate(frame["log"].tolist())}
    values = {c: frame[c].astype(object).where(frame[c].notna(), None).tolist() for c in cols}

    def frame_values(log: str) -> dict[str, Any]:
        i = at.get(name_text(log))
        return {c: values[c][i] if i is not None else None for c in cols}

    rows = []
    for ref, rec in zip(found.sessions, corpus.records, strict=True):
        run = corpus.runs.get(ref.log)
        if run is not None and "agent_runs" in run:  # Codex, Inspect, ATIF: a run per session
            rows.extend(_agent_rows(ref, rec, run["agent_runs"], frame_values))
            continue
        status = rec.status if rec.status in ("crash", "skipped") else "parsed"
        reason = rec.reason
        if status == "parsed" and run is None and ref.format != HARBOR_NO_TRANSCRIPT:
            if rec.agent != "claude-code":  # another agent's file read without a profile
                status = "skipped"
            else:  # an interactive log: no trial figures
                status, reason = "skipped", "interactive log: not a trial run"
        rows.append(_row(ref, ref.log, rec, status, reason, run, frame_values(ref.log)))
    arm_names = sorted({r.arm for r in rows if r.arm is not None and r.status == "parsed"})
    baseline, candidate = choose_arms(arm_names, arms)
    assert corpus.outcomes is not None
    return TrialSweep(
        root=root,
        layout=spec,
        profile=prof,
        discovery=found,
        rows=tuple(rows),
        join=corpus.outcomes,
        baseline=baseline,
        candidate=candidate,
        pass_threshold=pass_threshold,
        exclude=tuple(exclude),
        profile_choice=choice,
        layout_choice=layout_choice,
        cache_hits=corpus.cache_hits,
        cache_misses=corpus.cache_misses,
        include_failed=include_failed,
        corpus=corpus,
    )
