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
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from evalkit.corpus.discover import Discovery, discover
from evalkit.corpus.layouts import CorpusLayout, detect_layout, discover_layout, parse_layout
from evalkit.corpus.outcomes import OutcomeJoin, join_outcomes
from evalkit.corpus.parse import Progress, analyse_payloads
from evalkit.corpus.records import FileDamage
from evalkit.errors import UsageError
from evalkit.formats.profiles import ProfileChoice, ToolProfile, choose_profile, load_profile
from evalkit.session import RunFigures
from evalkit.store.keys import store_fingerprint
from evalkit.store.shards import CorpusStore, default_cache_dir
from evalkit.tables.compare import Comparison, arm_figures, select_runs
from evalkit.tables.outcomes import DEFAULT_PASS_THRESHOLD, OutcomeTable, outcome_table

__all__ = ["TrialRow", "ArmReads", "TrialSweep", "run_trial_sweep", "choose_arms"]

NO_SUITE = "(no suite)"


@dataclass(frozen=True)
class TrialRow:
    """One run (session) of the trial sweep.

    Attributes:
        log: The transcript, relative to the corpus.
        suite, task, arm, trial, pass_, repo, run: Labels from the path.
        status: `parsed`, `crash` or `skipped` (not a transcript).
        reason: Why it is not parsed.
        reward, passed, outcome_source: The joined outcome (None when there is none).
        tool_calls, tool_under_test_calls: Every tool_use block; the tool under test's.
        read: File-attributed read allocation (`ReadAllocation.to_dict()`), or None.
        cost_usd, tokens, duration_s: The run's cost, tokens (prompt + output) and duration.
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
class TrialSweep:
    """The trial sweep of one corpus (see the module docstring)."""

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

    @property
    def parsed(self) -> tuple[TrialRow, ...]:
        return tuple(r for r in self.rows if r.status == "parsed")

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
        runs = [r.outcome_row() for r in self.parsed]
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
            runs = [r for r in self.parsed if r.arm == arm]
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
            "log", "suite", "task", "arm", "trial", "status", "reward", "passed",
            "tool_calls", "tool_under_test_calls", "read_allocation_efficiency",
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
        calls and tool-under-test calls (medians by the one quantile rule, Decision 2)."""
        import pandas as pd

        from evalkit.tables.quantile import median

        def med(values: list[Any]) -> float | None:
            known = [v for v in values if v is not None]
            return median(known) if known else None

        cols = ["arm", "runs", "with_outcome", "passed", "mean_reward", "median_cost_usd"]
        cols += ["median_tokens", "median_duration_s", "median_tool_calls"]
        cols += ["median_tool_under_test_calls"]
        rows = []
        for arm in self.arms:
            runs = [r for r in self.parsed if r.arm == arm]
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
                }
            )
        return pd.DataFrame(rows, columns=cols)

    def reads_frame(self):
        """One row per arm: read allocation pooled, chars charged, cited and unattributed."""
        import pandas as pd

        cols = ["arm", "runs", "runs_with_reads", "read_allocation_pooled", "attributed_chars"]
        cols += ["cited_chars", "unattributed_chars"]
        rows = [
            {
                "arm": a.arm,
                "runs": a.runs,
                "runs_with_reads": a.runs_with_reads,
                "read_allocation_pooled": a.pooled,
                "attributed_chars": a.attributed_chars,
                "cited_chars": a.cited_chars,
                "unattributed_chars": a.unattributed_chars,
            }
            for a in self.reads
        ]
        return pd.DataFrame(rows, columns=cols)


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


def _row(ref: Any, log: str, status: str, p: dict[str, Any], run: Any, o: Any, **labels: Any):
    """One `TrialRow` from a session's labels, its payload and run, and its joined outcome."""
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
        reason=None if status == "parsed" else p.get("reason"),
        reward=o.reward if o else labels.get("reward"),
        passed=o.passed if o else labels.get("passed"),
        outcome_source=o.source if o else labels.get("outcome_source"),
        tool_calls=run["tool_calls"] if run else None,
        tool_under_test_calls=run["tool_under_test_calls"] if run else None,
        read=run["read_allocation"] if run else None,
        cost_usd=run["cost_usd"] if run else None,
        tokens=run["tokens"] if run else None,
        duration_s=run["duration_s"] if run else None,
        figures=RunFigures.from_payload(run["figures"]) if run else None,
        other_types=tuple(run["other_types"].items()) if run else (),
        damage=tuple((d[0], d[1]) for d in p.get("damage", ())),
        damage_counts=tuple(FileDamage(*d) for d in p.get("damage", ())),
    )


def _agent_rows(ref: Any, p: dict[str, Any], join: OutcomeJoin, threshold: float) -> list[TrialRow]:
    """The runs of a Codex, Inspect or ATIF file (issue 23): one per session. An Inspect log's
    samples are runs of their own (`<file>#<sample>:<epoch>`), the sample its task where the
    path names none, its score the outcome where no result file or outcomes CSV gives one."""
    runs = p["runs"]
    o = join.outcomes.get(ref.log)
    out = []
    for r in runs:
        labels: dict[str, Any] = {}
        if r["sample"] is not None and len(runs) > 1:
            labels["trial"] = r["log"].rpartition("#")[2]
            if ref.task is None:
                labels["task"] = str(r["sample"])
        if o is None and (r["reward"] is not None or r["passed"] is not None):
            passed = r["passed"]
            if passed is None and r["reward"] is not None:
                passed = r["reward"] >= threshold
            labels |= {"reward": r["reward"], "passed": passed}
            labels["outcome_source"] = "inspect-score"
        out.append(_row(ref, r["log"], "parsed", p, r["run"], o, **labels))
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
) -> TrialSweep:
    """Discover (by `layout`, else the harness's rules), parse with `profile`, join outcomes.

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
    found = discover_layout(root, spec) if spec is not None else discover(root)

    def parse(prof: ToolProfile) -> tuple[CorpusStore, list[Any]]:
        store = CorpusStore(
            (cache_dir or default_cache_dir()) if cache else None,
            root,
            fingerprint=store_fingerprint(profile=prof.fingerprint()),
        )
        bar = None if progress is False else Progress(len(found.sessions), enabled=progress)
        return store, analyse_payloads(
            root, found.sessions, cache=store, jobs=jobs, progress=bar, profile=prof
        )

    store, payloads = parse(prof)
    if profile is None:
        # No profile given: chosen from the tools the runs call (read with the default first);
        # runs whose tool under test is not codegraph's are read again with their profile.
        names = [p["run"].get("tool_names", []) for p in payloads if p.get("run")]
        choice = choose_profile(names)
        if choice.profile != prof:
            prof = choice.profile
            store, payloads = parse(prof)
    else:
        choice = ProfileChoice(prof, "given", detected=False)
    join = join_outcomes(root, found.sessions, csv_path=outcomes, threshold=pass_threshold)
    rows = []
    for ref, p in zip(found.sessions, payloads, strict=True):
        if p["status"] != "crash" and p.get("runs") is not None:  # Codex, Inspect, ATIF
            rows.extend(_agent_rows(ref, p, join, pass_threshold))
            continue
        run = p.get("run")
        status = (
            "crash"
            if p["status"] == "crash"
            else "skipped"
            if p["status"] == "skipped"
            else "parsed"
        )
        if status == "parsed" and run is None and p.get("agent"):  # read without a profile
            status = "skipped"
        elif status == "parsed" and run is None:  # an interactive log: no trial figures
            status, p = "skipped", {**p, "reason": "interactive log: not a trial run"}
        o = join.outcomes.get(ref.log)
        rows.append(_row(ref, ref.log, status, p, run, o))
    arm_names = sorted({r.arm for r in rows if r.arm is not None and r.status == "parsed"})
    baseline, candidate = choose_arms(arm_names, arms)
    return TrialSweep(
        root=root,
        layout=spec,
        profile=prof,
        discovery=found,
        rows=tuple(rows),
        join=join,
        baseline=baseline,
        candidate=candidate,
        pass_threshold=pass_threshold,
        exclude=tuple(exclude),
        cache_hits=store.hits,
        cache_misses=store.misses,
        profile_choice=choice,
        layout_choice=layout_choice,
    )
