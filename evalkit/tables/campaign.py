"""The 7-repo campaign tables of `parse-bench-readme.mjs` (spec §7.3, §8.5), as figures.

A campaign tree is `<root>/<repo>/run<n>/run-headless-{with,without}.jsonl` (+ `.tN` turns).
Runs are selected as the reference selects them (§7.3): a run whose result is not success is
dropped (either arm); a with-arm run that hit the MCP cold-start race is dropped unless
`include_raced`; a without-arm run in which the codegraph CLI returned output is dropped unless
`include_contaminated` (both default off, as the reference's `CG_INCLUDE_RACED` /
`CG_INCLUDE_CONTAMINATED`). Per arm and repo every figure is a median over runs (0 for no run,
§8.1). Sufficiency and allocation are pooled over the with-arm runs. Nothing is rounded here;
`evalkit.outputs.campaign_text` prints it.

    >>> from evalkit.tables.campaign import campaign
    >>> c = campaign("data/corpus/ab-readme")
    >>> [r.repo for r in c.repos]
    ['vscode', 'excalidraw', 'django', 'tokio', 'okhttp', 'gin', 'alamofire']
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalkit.corpus.discover import turn_files
from evalkit.ecma import jround
from evalkit.errors import UsageError
from evalkit.metrics.occupancy import DEFAULT_WINDOW_TOKENS
from evalkit.metrics.summary import PROCESSED_RESULT_USAGE, ProcessedDefinition
from evalkit.session import RunFigures
from evalkit.tables.compare import ArmFigures, arm_figures, read_run
from evalkit.tables.quantile import median

__all__ = [
    "CAMPAIGN_REPOS",
    "WITH",
    "WITHOUT",
    "ArmMedians",
    "RepoRow",
    "Campaign",
    "campaign",
    "save",
    "avg",
]

# §7.3: the fixed repo order of bench-readme.sh / parse-bench-readme.mjs.
CAMPAIGN_REPOS = ("vscode", "excalidraw", "django", "tokio", "okhttp", "gin", "alamofire")
WITH, WITHOUT = "headless-with", "headless-without"


def _median0(values: Sequence[float]) -> float:
    """parse-bench-readme.mjs's median: 0 for no values (§8.1)."""
    m = median(values)
    return 0 if m is None else m


def save(w: float, wo: float) -> int | float:
    """`save(w, wo)` (§8.5): the % reduction from the without-arm to the with-arm, 0 when the
    without-arm is 0. Negative means the with-arm is larger."""
    return jround((1 - w / wo) * 100) if wo > 0 else 0


def avg(values: Sequence[float]) -> int | float:
    """`avg(list)` (§8.5): the rounded mean, 0 for an empty list."""
    return jround(sum(values) / len(values)) if values else 0


@dataclass(frozen=True)
class ArmMedians:
    """One arm of one repo: medians over its selected runs (§8.5; 0 when it has none).

    Attributes:
        n: Runs.
        time: Duration (s).
        tools: Tool calls.
        tokens: Tokens processed (the reference's definition unless asked otherwise).
        cost: Σ total_cost_usd per run.
        turns: Requests per session.
        ctx: Final context (tokens).
        ctx_base: First request's context (the fixed overhead is the arms' difference).
        residual: Retrieval residual `occ_self` (tokens).
        share_ctx: `occ_self / ctx × 100`.
        share_window: `occ_self / window × 100`.
    """

    n: int
    time: float
    tools: float
    tokens: float
    cost: float
    turns: float
    ctx: float
    ctx_base: float
    residual: float
    share_ctx: float
    share_window: float


def _medians(
    runs: Sequence[tuple[str, RunFigures]], window: float, processed: ProcessedDefinition
) -> ArmMedians:
    figs = [f for _, f in runs]

    def med(get) -> float:
        return _median0([get(f) for f in figs])

    return ArmMedians(
        n=len(figs),
        time=med(lambda f: f.dur),
        tools=med(lambda f: f.tools),
        tokens=med(
            lambda f: (
                f.processed if processed == PROCESSED_RESULT_USAGE else f.processed_message_usage
            )
        ),
        cost=med(lambda f: f.cost),
        turns=med(lambda f: f.turns),
        ctx=med(lambda f: f.ctx),
        ctx_base=med(lambda f: f.ctx_base),
        residual=med(lambda f: f.occ_self),
        share_ctx=med(lambda f: f.occ_share),
        share_window=med(lambda f: (f.occ_self / window) * 100),
    )


@dataclass(frozen=True)
class RepoRow:
    """One repo of the campaign.

    Attributes:
        repo: The repo name.
        with_runs / without_runs: `(run directory, figures)` of the selected runs, in the
            reference's (lexicographic) run order.
        raced_excluded: With-arm runs dropped for the cold-start race.
        with_ / without: Medians per arm.
        pooled: The with-arm runs pooled as an ARM COMPARISON column (sufficiency, allocation).
    """

    repo: str
    with_runs: tuple[tuple[str, RunFigures], ...]
    without_runs: tuple[tuple[str, RunFigures], ...]
    raced_excluded: int
    with_: ArmMedians
    without: ArmMedians
    pooled: ArmFigures

    @property
    def complete(self) -> bool:
        return bool(self.with_runs) and bool(self.without_runs)

    @property
    def savings(self) -> dict[str, int | float]:
        """`save(with, without)` of cost, tokens, time and tool calls (Table 1)."""
        w, wo = self.with_, self.without
        return {
            "cost": save(w.cost, wo.cost),
            "tokens": save(w.tokens, wo.tokens),
            "time": save(w.time, wo.time),
            "tools": save(w.tools, wo.tools),
            "residual": save(w.residual, wo.residual),
            "share_ctx": save(w.share_ctx, wo.share_ctx),
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "repo": self.repo,
            "complete": self.complete,
            "with_runs": [r for r, _ in self.with_runs],
            "without_runs": [r for r, _ in self.without_runs],
            "raced_excluded": self.raced_excluded,
            "with": self.with_.__dict__,
            "without": self.without.__dict__,
            "saved_pct": self.savings if self.complete else None,
            "fixed_overhead_tokens": self.with_.ctx_base - self.without.ctx_base
            if self.complete
            else None,
            "with_arm_pooled": {
                "answered": self.pooled.answered,
                "counts": dict(self.pooled.counts),
                "alloc_calls": self.pooled.alloc_calls,
                "alloc_used": self.pooled.alloc_used,
                "alloc_envelope": self.pooled.alloc_envelope,
                "pooled_efficiency_pct": self.pooled.pooled_efficiency,
            },
        }


@dataclass(frozen=True)
class Campaign:
    """The campaign tables' figures (§8.5).

    Attributes:
        root: The campaign root as given.
        repos: One row per listed repo, in list order.
        contaminated: `(repo, run, n)` per without-arm run dropped for CLI output.
        failed: `(repo, run, arm)` per run dropped because its result is not success.
        crashed: `(repo, run, arm, reason)` per run that could not be read (left out).
        damaged: `(segment file, what was lost)` per damaged file of a run that was read.
        unlisted: Directories under the root that are not in the repo list (not read).
        include_raced / include_contaminated: The include switches.
        window_tokens: The window of the share-of-window column.
        processed: The tokens-processed definition of Table 1.
    """

    root: str
    repos: tuple[RepoRow, ...]
    contaminated: tuple[tuple[str, str, int], ...] = ()
    failed: tuple[tuple[str, str, str], ...] = ()
    crashed: tuple[tuple[str, str, str, str], ...] = ()
    damaged: tuple[tuple[str, str], ...] = ()
    unlisted: tuple[str, ...] = ()
    include_raced: bool = False
    include_contaminated: bool = False
    window_tokens: float = DEFAULT_WINDOW_TOKENS
    processed: ProcessedDefinition = PROCESSED_RESULT_USAGE
    _pooled: ArmFigures | None = field(default=None, repr=False)

    @property
    def complete(self) -> tuple[RepoRow, ...]:
        return tuple(r for r in self.repos if r.complete)

    @property
    def multi_turn(self) -> bool:
        """Some selected run has more than one segment (the occupancy table's label)."""
        return any(f.segments > 1 for r in self.repos for _, f in (*r.with_runs, *r.without_runs))

    def average_saved(self, key: str) -> int | float:
        """The AVERAGE of the per-repo savings over the complete repos."""
        return avg([r.savings[key] for r in self.complete])

    @property
    def fixed_overhead(self) -> int | float:
        """Average over complete repos of median with-arm − median without-arm `ctxBase`."""
        return avg([r.with_.ctx_base - r.without.ctx_base for r in self.complete])

    @property
    def pooled(self) -> ArmFigures:
        """Every with-arm run of every repo pooled (the POOLED lines)."""
        assert self._pooled is not None
        return self._pooled

    def to_dict(self) -> dict[str, Any]:
        p = self.pooled
        return {
            "root": self.root,
            "include_raced": self.include_raced,
            "include_contaminated": self.include_contaminated,
            "window_tokens": self.window_tokens,
            "processed": self.processed,
            "multi_turn": self.multi_turn,
            "repos": [r.to_dict() for r in self.repos],
            "average_saved_pct": {
                k: self.average_saved(k) for k in ("cost", "tokens", "time", "tools")
            },
            "average_residual_saved_pct": self.average_saved("residual"),
            "average_share_ctx_saved_pct": self.average_saved("share_ctx"),
            "fixed_overhead_tokens": self.fixed_overhead,
            "pooled": {
                "answered": p.answered,
                "counts": dict(p.counts),
                "alloc_calls": p.alloc_calls,
                "alloc_envelope": p.alloc_envelope,
                "pooled_efficiency_pct": p.pooled_efficiency,
            },
            "excluded": {
                "contaminated": [
                    {"repo": a, "run": b, "cli_outputs": n} for a, b, n in self.contaminated
                ],
                "failed": [{"repo": a, "run": b, "arm": c} for a, b, c in self.failed],
                "crashed": [
                    {"repo": a, "run": b, "arm": c, "reason": d} for a, b, c, d in self.crashed
                ],
            },
            "unlisted": list(self.unlisted),
        }


def _segments(run_dir: Path, label: str) -> list[str] | None:
    try:
        names = os.listdir(run_dir)
    except OSError:
        return None
    first = f"run-{label}.jsonl"
    if first not in names:
        return None
    return [os.fspath(run_dir / n) for n in (first, *turn_files(names, f"run-{label}"))]


def campaign(
    root: str | os.PathLike[str],
    *,
    repos: Sequence[str] = CAMPAIGN_REPOS,
    include_raced: bool = False,
    include_contaminated: bool = False,
    window_tokens: float = DEFAULT_WINDOW_TOKENS,
    processed: ProcessedDefinition = PROCESSED_RESULT_USAGE,
) -> Campaign:
    """`parse-bench-readme.mjs <root>` as figures (§7.3, §8.5).

    Args:
        root: The campaign root (`/tmp/ab-readme` in the harness).
        repos: The repos to read, in table order (default the campaign's seven).
        include_raced: Keep with-arm runs that hit the MCP cold-start race.
        include_contaminated: Keep without-arm runs in which the codegraph CLI returned output.
        window_tokens: The window of the share-of-window column (the reference's, 200k).
        processed: Table 1's tokens: the reference's `result-usage` or `message-usage`.

    Raises:
        UsageError: The root does not exist or is not a directory.
    """
    base = Path(root)
    if not base.is_dir():
        raise UsageError(
            f"{os.fspath(root)}: no such directory"
            if not base.exists()
            else f"{os.fspath(root)}: not a directory"
        )
    contaminated, failed, crashed, damaged, rows = [], [], [], [], []
    all_with: list[tuple[str, RunFigures]] = []
    for repo in repos:
        repo_dir = base / repo
        try:
            names = sorted(n for n in os.listdir(repo_dir) if _is_run_dir(repo_dir / n, n))
        except OSError:
            names = []
        kept: dict[str, list[tuple[str, RunFigures]]] = {WITH: [], WITHOUT: []}
        raced = 0
        for run in names:
            for label in (WITH, WITHOUT):
                segs = _segments(repo_dir / run, label)
                if segs is None:
                    continue
                figs, why, damage = read_run(segs)
                damaged += damage
                if figs is None:
                    crashed.append((repo, run, label, why))
                    continue
                if not figs.ok:
                    failed.append((repo, run, label))
                    continue
                if label == WITH and figs.raced and not include_raced:
                    raced += 1
                    continue
                if label == WITHOUT and figs.cli_contaminated > 0 and not include_contaminated:
                    contaminated.append((repo, run, figs.cli_contaminated))
                    continue
                kept[label].append((run, figs))
        all_with += kept[WITH]
        rows.append(
            RepoRow(
                repo=repo,
                with_runs=tuple(kept[WITH]),
                without_runs=tuple(kept[WITHOUT]),
                raced_excluded=raced,
                with_=_medians(kept[WITH], window_tokens, processed),
                without=_medians(kept[WITHOUT], window_tokens, processed),
                pooled=arm_figures(WITH, kept[WITH]),
            )
        )
    try:
        present = sorted(
            n for n in os.listdir(base) if (base / n).is_dir() and not n.startswith(".")
        )
    except OSError:
        present = []
    return Campaign(
        root=os.fspath(root),
        repos=tuple(rows),
        contaminated=tuple(contaminated),
        failed=tuple(failed),
        crashed=tuple(crashed),
        damaged=tuple(damaged),
        unlisted=tuple(n for n in present if n not in repos),
        include_raced=include_raced,
        include_contaminated=include_contaminated,
        window_tokens=window_tokens,
        processed=processed,
        _pooled=arm_figures(WITH, all_with),
    )


def _is_run_dir(path: Path, name: str) -> bool:
    """§7.3: entries named `run<digits>` (directories)."""
    return name.startswith("run") and name[3:].isdigit() and name[3:].isascii() and path.is_dir()
