"""The sweep's tables, computed from session records (spec §8.1, §8.2, §8.4; Decisions 2–4, 7).

Everything here returns frozen dataclasses or DataFrames of raw fractions; rounding happens only
where a table is printed (`evalkit.outputs.sweep_text`, via `evalkit.ecma.pct1`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from evalkit.corpus.discover import identity, natural_key
from evalkit.corpus.records import CallRecord, SessionRecord
from evalkit.ecma import fix, jround
from evalkit.tables.compare import ArmFigures, Span, arm_figures, select_runs
from evalkit.tables.quantile import median, quantile

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "SliceRow",
    "PerCall",
    "ArmCell",
    "ArmRow",
    "CorpusCounts",
    "SLICES",
    "corpus_counts",
    "slice_table",
    "per_call",
    "arm_table",
    "tail",
    "span",
    "pct_cell",
    "DEFAULT_ARMS",
    "all_calls",
    "sessions_frame",
    "calls_frame",
    "slices_frame",
    "arm_frame",
    "full_arm_frame",
    "arm_changes_frame",
]

SLICES = ("all", "single-question", "multi-turn")
# The new-vs-baseline comparison (§7.1): baseline first, as the published table prints it.
DEFAULT_ARMS = ("baseline", "new")


@dataclass(frozen=True)
class CorpusCounts:
    """The corpus line (§8.2 step 5)."""

    sessions: int
    single: int
    multi: int
    calls: int
    sections: int
    crashes: int
    no_explore: int


# The columns of a slice row, in the order `--json` and `slices_frame` give them.
SLICE_COLUMNS = ("slice", "n", "pooled", "median", "p25", "p75", "min", "path_cited")


@dataclass(frozen=True)
class SliceRow:
    """One row of the baseline slice table (§8.2 step 4). Fractions; None when `n` is 0.

    Attributes:
        slice: `all`, `single-question` or `multi-turn`.
        n: Sessions in the slice.
        pooled: Σ cited chars / Σ chars.
        median, p25, p75: Quantiles of the per-session efficiencies (Decision 2).
        min: The smallest per-session efficiency.
        path_cited: Σ path-cited chars / Σ chars (Decision 3).
        turns: The segment count shared by every session of the slice, else None (the published
            slice reads "multi-turn (3 turns)" because all of its sessions had three).
    """

    slice: str
    n: int
    pooled: float | None
    median: float | None
    p25: float | None
    p75: float | None
    min: float | None
    path_cited: float | None
    turns: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """The row as the sweep's `--json` and `slices_frame` give it (no `turns`)."""
        return {c: getattr(self, c) for c in SLICE_COLUMNS}


@dataclass(frozen=True)
class PerCall:
    """Median and p25 over the efficiencies of every allocation call (§8.2 step 6)."""

    n: int
    median: float | None
    p25: float | None


@dataclass(frozen=True)
class ArmCell:
    """One arm of one pass/repo (§8.4, allocation rows): per-session efficiencies.

    Attributes:
        pass_, repo, arm: The group.
        n: Sessions with an envelope (the values of the span).
        runs: Every discovered, non-crashed run of the arm, with or without explore calls.
        median, min, max: Of the per-session efficiencies (fractions).
        pooled: Σ cited chars / Σ chars over the arm's sessions.
        values: `(run, efficiency)` per session with an envelope, in run order.
        logs: The sessions' logs, aligned with `values`.
        figures: Every ARM COMPARISON figure of the arm (§8.4) over its headless runs (None
            when it has none, e.g. only interactive sessions).
        dropped: Runs each run-hygiene rule dropped (`exclude` of `arm_table`).
    """

    pass_: str | None
    repo: str | None
    arm: str
    n: int
    runs: int
    median: float | None
    min: float | None
    max: float | None
    pooled: float | None
    values: tuple[tuple[str | None, float], ...] = field(default=())
    logs: tuple[str, ...] = field(default=())
    figures: ArmFigures | None = field(default=None, repr=False, compare=False)
    dropped: dict[str, int] = field(default_factory=dict, compare=False)

    @property
    def percents(self) -> list[float]:
        """The values as compare-arms.mjs holds them: `(used / envelope) × 100` (§8.4)."""
        return [v * 100 for _, v in self.values]


@dataclass(frozen=True)
class ArmRow:
    """One pass/repo with a cell per arm (None where that arm has no runs)."""

    pass_: str | None
    repo: str | None
    cells: tuple[ArmCell | None, ...]


def _ratio(num: int, den: int) -> float | None:
    return num / den if den else None


def corpus_counts(records: Sequence[SessionRecord]) -> CorpusCounts:
    swept = [r for r in records if r.in_sweep]
    return CorpusCounts(
        sessions=len(swept),
        single=sum(1 for r in swept if not r.multi_turn),
        multi=sum(1 for r in swept if r.multi_turn),
        calls=sum(len(r.calls) for r in swept),
        sections=sum(r.sections for r in swept),
        crashes=sum(1 for r in records if r.status == "crash"),
        no_explore=sum(1 for r in records if r.status == "no-explore"),
    )


def _slice_row(name: str, recs: Sequence[SessionRecord]) -> SliceRow:
    env = sum(r.chars for r in recs)
    effs = [r.efficiency for r in recs]
    turns = {len(r.segments) for r in recs}
    return SliceRow(
        slice=name,
        n=len(recs),
        pooled=_ratio(sum(r.cited_chars for r in recs), env),
        median=quantile(effs, 0.5),
        p25=quantile(effs, 0.25),
        p75=quantile(effs, 0.75),
        min=min(effs) if effs else None,
        path_cited=_ratio(sum(r.path_chars for r in recs), env),
        turns=turns.pop() if len(turns) == 1 else None,
    )


def slice_table(records: Sequence[SessionRecord]) -> tuple[SliceRow, ...]:
    """The three slices of §8.2 step 3 over the sessions in the sweep (Decision 7)."""
    swept = [r for r in records if r.in_sweep]
    return (
        _slice_row("all", swept),
        _slice_row("single-question", [r for r in swept if not r.multi_turn]),
        _slice_row("multi-turn", [r for r in swept if r.multi_turn]),
    )


def all_calls(records: Iterable[SessionRecord]) -> list[tuple[SessionRecord, CallRecord]]:
    return [(r, c) for r in records if r.in_sweep for c in r.calls]


def per_call(records: Sequence[SessionRecord]) -> PerCall:
    effs = [c.efficiency for _, c in all_calls(records)]
    return PerCall(len(effs), quantile(effs, 0.5), quantile(effs, 0.25))


def _group_key(r: SessionRecord) -> tuple:
    return (natural_key(r.pass_ or ""), r.pass_ is None, natural_key(r.repo or ""), r.repo is None)


def arm_table(
    records: Sequence[SessionRecord],
    arms: Sequence[str] | None = None,
    *,
    exclude: Sequence[str] = (),
) -> tuple[tuple[str, ...], tuple[ArmRow, ...]]:
    """The pass/repo × arm table of per-session allocation efficiency (§8.4 allocation rows).

    Args:
        records: Every session record (crashes and non-transcripts are left out; runs without an envelope count as
            runs but contribute no value, as in compare-arms.mjs).
        arms: Arm labels to compare, in column order. Default: `baseline`, `new` when any session
            has one of them, else every arm label found (sorted).
        exclude: Run-hygiene rules (`evalkit.tables.compare.EXCLUDE_RULES`: `failed`, `raced`,
            `contaminated`) dropping runs from the arm table; default none (the reference).

    Returns:
        `(arms, rows)`: rows for every pass/repo with a run in one of the arms, passes and repos in
        natural order.
    """
    # Crashed sessions and files that are not transcripts are not runs; nor are other agents'
    # logs, which have no explore allocation (they are in the agent table, issue 15).
    labelled = [
        r
        for r in records
        if r.arm is not None and r.status not in ("crash", "skipped") and r.agent == "claude-code"
    ]
    if arms is None:
        found = {r.arm for r in labelled}
        arms = DEFAULT_ARMS if found & set(DEFAULT_ARMS) else tuple(sorted(found, key=natural_key))
    arms = tuple(arms)
    groups: dict[tuple[str | None, str | None], dict[str, list[SessionRecord]]] = {}
    for r in sorted(labelled, key=lambda r: (_group_key(r), natural_key(r.run or r.log))):
        if r.arm in arms:
            groups.setdefault((r.pass_, r.repo), {}).setdefault(r.arm, []).append(r)
    rows = []
    for (pass_, repo), by_arm in groups.items():
        cells = []
        for arm in arms:
            recs = by_arm.get(arm)
            if not recs:
                cells.append(None)
                continue
            recs, dropped = _hygiene(recs, exclude)
            headless = [(r.run or r.log, r.figures) for r in recs if r.figures is not None]
            swept = [r for r in recs if r.chars > 0]
            effs = [r.efficiency for r in swept]
            cells.append(
                ArmCell(
                    pass_=pass_,
                    repo=repo,
                    arm=arm,
                    n=len(swept),
                    runs=len(recs),
                    median=median(effs),
                    min=min(effs) if effs else None,
                    max=max(effs) if effs else None,
                    pooled=_ratio(sum(r.cited_chars for r in swept), sum(r.chars for r in swept)),
                    values=tuple((r.run, r.efficiency) for r in swept),
                    logs=tuple(r.log for r in swept),
                    figures=arm_figures(arm, headless, dropped=dropped) if headless else None,
                    dropped=dropped,
                )
            )
        rows.append(ArmRow(pass_, repo, tuple(cells)))
    return arms, tuple(rows)


def _hygiene(
    recs: list[SessionRecord], exclude: Sequence[str]
) -> tuple[list[SessionRecord], dict[str, int]]:
    """Drop the runs the rules name (a run without figures is never dropped)."""
    if not exclude:
        return recs, {}
    with_figs = [(r.log, r.figures) for r in recs if r.figures is not None]
    kept, dropped = select_runs(with_figs, exclude)
    keep = {log for log, _ in kept}
    return [r for r in recs if r.figures is None or r.log in keep], dropped


def tail(records: Sequence[SessionRecord], n: int = 5) -> tuple[SessionRecord, ...]:
    """The `n` lowest sessions of the sweep by efficiency (ties in log order): where the signal is."""
    n = max(n, 0)
    swept = [r for r in records if r.in_sweep]
    if n == 0:
        return ()
    if n < len(swept):  # only sessions as low as the n-th lowest can be among the n lowest
        cut = sorted(r.efficiency for r in swept)[n - 1]
        swept = [r for r in swept if r.efficiency <= cut]
    return tuple(sorted(swept, key=lambda r: (r.efficiency, natural_key(r.log)))[:n])


# --- §8.4 cell conventions ------------------------------------------------------------------


def pct_cell(x: float) -> str:
    """compare-arms.mjs's `p(x)`: `fix(x, 1) + "%"`, x already in percent (§8.4)."""
    return fix(x, 1) + "%"


def span(
    values: Iterable[float | None], f: Callable[[float], str] = lambda x: str(jround(x))
) -> str:
    """compare-arms.mjs's `span(values, f)` (§8.4).

    Missing and non-finite values are dropped; none left → `—`; one → `f(median)`; otherwise
    `f(median) + " [" + f(min) + "–" + f(max) + "]"`, or just `f(median)` when the two ends
    format the same.
    """
    return Span.of(values).cell(f)  # one span rule (compare-arms.mjs `span`)


# --- DataFrames for notebooks ---------------------------------------------------------------


def sessions_frame(records: Sequence[SessionRecord]) -> pd.DataFrame:
    """One row per discovered session (all statuses), identity columns first; fractions.

    The `sweep_sessions` frame of the column dictionary (`evalkit columns sweep_sessions`);
    names are those of `evalkit.corpus.frames.sessions_df` for the same quantities.
    """
    rows = [
        {
            **identity(r),  # a record has the labels of its SessionRef
            "question": 1 if len(r.segments) == 1 else None,
            "layout": r.layout,
            "status": r.status,
            "segments": len(r.segments),
            "explore_calls": len(r.calls),
            "sections": r.sections,
            "chars": r.chars,
            "cited_chars": r.cited_chars,
            "path_cited_chars": r.path_chars,
            "efficiency": r.efficiency if r.in_sweep else None,
            "path_efficiency": r.path_efficiency if r.in_sweep else None,
            "files_returned": r.files_returned,
            "files_cited": r.files_used,
            "has_answer": r.has_answer if r.status in ("parsed", "no-explore") else None,
            "reason": r.reason,
        }
        for r in records
    ]
    from evalkit.store.columns import build_frame  # the column dictionary: frames only

    return build_frame("sweep_sessions", rows)


def calls_frame(records: Sequence[SessionRecord]) -> pd.DataFrame:
    """One row per allocation call of the sessions in the sweep, identity columns first.

    The `sweep_calls` frame of the column dictionary; names are those of
    `evalkit.corpus.frames.calls_df` for the same quantities.
    """
    rows = [
        {
            **identity(r),
            "question": 1 if len(r.segments) == 1 else None,
            "call": c.index,
            "chars": c.envelope,
            "cited_chars": c.used,
            "path_cited_chars": c.used_path,
            "sections": c.files,
            "cited_sections": c.cited_files,
            "efficiency": c.efficiency,
        }
        for r, c in all_calls(records)
    ]
    from evalkit.store.columns import build_frame

    return build_frame("sweep_calls", rows)


def slices_frame(rows: Sequence[SliceRow]) -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame([s.to_dict() for s in rows], columns=list(SLICE_COLUMNS))


def arm_frame(rows: Sequence[ArmRow], *, per_run: bool = False) -> pd.DataFrame:
    """The arm table as a DataFrame: one row per pass/repo/arm, or per run with `per_run`.

    Columns: `pass, repo, arm, n, runs, median, min, max, pooled` (fractions); with `per_run`:
    `pass, repo, arm, run, log, efficiency`.
    """
    import pandas as pd

    cells = [c for row in rows for c in row.cells if c is not None]
    if per_run:
        return pd.DataFrame(
            [
                {
                    "pass": c.pass_,
                    "repo": c.repo,
                    "arm": c.arm,
                    "run": run,
                    "log": log,
                    "efficiency": eff,
                }
                for c in cells
                for (run, eff), log in zip(c.values, c.logs, strict=True)
            ],
            columns=["pass", "repo", "arm", "run", "log", "efficiency"],
        )
    return pd.DataFrame(
        [
            {
                "pass": c.pass_,
                "repo": c.repo,
                "arm": c.arm,
                "n": c.n,
                "runs": c.runs,
                "median": c.median,
                "min": c.min,
                "max": c.max,
                "pooled": c.pooled,
            }
            for c in cells
        ],
        columns=["pass", "repo", "arm", "n", "runs", "median", "min", "max", "pooled"],
    )


def full_arm_frame(rows: Sequence[ArmRow]) -> pd.DataFrame:
    """`arm_frame(rows)` followed by every ARM COMPARISON figure of each cell (§8.4)."""
    import pandas as pd

    from evalkit.tables.compare import arms_frame

    base = arm_frame(rows)
    cells = [c for row in rows for c in row.cells if c is not None]
    extra = arms_frame(
        ({"pass": c.pass_, "repo": c.repo}, c.figures) for c in cells if c.figures is not None
    )
    if extra.empty:
        return base
    return pd.merge(base, extra, on=["pass", "repo", "arm"], how="left")


def arm_changes_frame(rows: Sequence[ArmRow], arms: Sequence[str]) -> pd.DataFrame:
    """Per pass/repo, the second arm against the first (new against baseline).

    Columns: `pass, repo`, then for each of the two arms `<arm>_median`, `<arm>_min`,
    `<arm>_max`, `<arm>_n`, then `change` (the second median minus the first, a difference of
    fractions: 0.05 is five percentage points) and `direction` (`up`, `down`, `same`; None when
    an arm is missing). Sorted as the arm table. Every value is a fraction, as in every frame.
    """
    import pandas as pd

    first, second = arms[0], arms[1]
    out = []
    for row in rows:
        by_arm = {c.arm: c for c in row.cells if c is not None}
        rec: dict = {"pass": row.pass_, "repo": row.repo}
        for arm in (first, second):
            c = by_arm.get(arm)
            for stat in ("median", "min", "max", "n"):
                rec[f"{arm}_{stat}"] = getattr(c, stat) if c is not None else None
        a, b = rec[f"{first}_median"], rec[f"{second}_median"]
        change = None if a is None or b is None else b - a
        rec["change"] = change
        rec["direction"] = (
            None if change is None else "up" if change > 0 else "down" if change < 0 else "same"
        )
        out.append(rec)
    return pd.DataFrame(out)
