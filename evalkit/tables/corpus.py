"""`evalkit.load_corpus(DIR)` → `Corpus`: one entry point for a corpus directory.

The loading is `evalkit.corpus.load` (discover → parse records → frames); `Corpus` adds the
sweep's tables over the same records, so the frames and `Corpus.sweep()` come from one
discovery and one parse of every session.

    >>> import evalkit
    >>> corpus = evalkit.load_corpus("path/to/logs")
    >>> corpus.sessions_df().groupby(["group", "arm"])["efficiency"].median()
    >>> corpus.sweep().slices_frame()
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from evalkit.corpus.load import LoadedCorpus, load_corpus_frames
from evalkit.tables.aggregate import arm_table
from evalkit.tables.sweep import SweepResult, is_bundled_corpus

if TYPE_CHECKING:
    import pandas as pd

    from evalkit.tables.ab_stats import ArmStats

__all__ = ["Corpus", "load_corpus"]


@dataclass(frozen=True, repr=False)
class Corpus(LoadedCorpus):
    """A loaded corpus (`LoadedCorpus`: frames, `session(log)`, `accounting()`, `errors`,
    export) with the sweep over the same records."""

    def sweep(
        self, arms: tuple[str, ...] | None = None, *, exclude: tuple[str, ...] = ()
    ) -> SweepResult:
        """The `SweepResult` of this corpus, from the records already parsed (nothing is read
        again): the same numbers as `evalkit sweep DIR`.

        Args:
            arms: Arm labels for the arm table (default `baseline`, `new` when present).
            exclude: Run-hygiene rules for the arm table (`failed`, `raced`, `contaminated`).
        """
        arm_labels, rows = arm_table(self.records, arms, exclude=exclude)
        return SweepResult(
            root=self.root,
            bundled=is_bundled_corpus(self.root),
            discovery=self.discovery,
            records=self.records,
            arms=arm_labels,
            arm_rows=rows,
            exclude=tuple(exclude),
            cache_hits=self.cache_hits,
            cache_misses=self.cache_misses,
        )

    def compare_arms(
        self,
        baseline: str | None = None,
        candidate: str | None = None,
        *,
        layout: Any = None,
        profile: Any = None,
        outcomes: str | os.PathLike[str] | None = None,
        pass_threshold: float = 1.0,
        margins: dict[str, float] | None = None,
        cluster: str | None = None,
        seed: int = 0,
        n_resamples: int = 4999,
        cache: bool = True,
    ) -> ArmStats:
        """Is the difference real? `candidate` against `baseline`, paired by task, every figure:
        the same numbers as `evalkit stats DIR` (`evalkit.tables.ab_stats.compare_arms`; its
        frames: `tasks_frame()`, `intervals_frame()`, `probability_frame()`, `tests_frame()`,
        `equivalence_frame()`, `plan_frame()`, `pass_rates_frame()`, `pass_k_frame()`, …).

        The runs are read as `evalkit stats` reads them (`ab_stats.trial_runs`): `layout`
        defaults to `harbor` when this corpus was found as a harbor tree, and `profile`,
        `outcomes` and `pass_threshold` are the trial sweep's. The arms default as the trial
        sweep's do (an arm named `baseline`, then the next).

        Raises:
            UsageError: An arm no run has, or unusable options.
        """
        from evalkit.errors import UsageError
        from evalkit.tables.ab_stats import compare_arms, trial_runs

        if layout is None and any(r.layout == "harbor" for r in self.discovery.sessions):
            layout = "harbor"
        asked = None if baseline is None and candidate is None else (baseline, candidate)
        if asked is not None and None in asked:
            raise UsageError("compare_arms takes both arms, or neither")
        runs = trial_runs(
            self.root, layout=layout, profile=profile, outcomes=outcomes,
            pass_threshold=pass_threshold, arms=asked, cache=cache,
        )  # fmt: skip
        if runs.baseline is None or runs.candidate is None:
            raise UsageError(f"two arms are needed (arms found: {', '.join(runs.arms) or 'none'})")
        return compare_arms(
            runs, runs.baseline, runs.candidate, margins=margins, cluster=cluster, seed=seed,
            n_resamples=n_resamples,
        )  # fmt: skip

    def arms_df(
        self, arms: tuple[str, ...] | None = None, *, exclude: tuple[str, ...] = ()
    ) -> pd.DataFrame:
        """One row per pass × repo × arm with every ARM COMPARISON figure (§8.4): the arm
        table's allocation columns, then median / min / max / n of each span row, pooled
        sufficiency and allocation, contamination, and runs dropped by `exclude`."""
        return self.sweep(arms, exclude=exclude).arm_frame(full=True)


def load_corpus(
    path: str | os.PathLike[str],
    *,
    layout: str | None = None,
    jobs: int | None = None,
    cache: bool = True,
    cache_dir: str | os.PathLike[str] | None = None,
    progress: bool | None = None,
    strict: bool = False,
    profile: Any = None,
    verify: bool = False,
    engine: str = "local",
    scheduler: object = None,
    format: str | None = None,  # noqa: A002 — the CLI option's name
    outcomes: str | os.PathLike[str] | None = None,
    pass_threshold: float = 1.0,
    prices: Any = None,
) -> Corpus:
    """Load a corpus directory: every session once, its frames, its sweep.

    Sessions are discovered exactly as `evalkit sweep` discovers them, parsed in parallel
    (or on a Dask cluster, `engine="dask"`) through the corpus store, and kept once each. See
    `evalkit.corpus.load.load_corpus_frames` for the arguments (`format` forces one reader;
    `outcomes` a CSV of rewards joined, with each harbor trial's `result.json`, into the
    sessions frame's `reward`, `passed` and `outcome_source`; `prices` your own prices, a
    `--prices FILE.toml` path or `UserPrices`, for the priced cost columns).

    Returns:
        A `Corpus`: `sessions_df()`, `calls_df()`, `sections_df()`, `files_df()`,
        `tool_calls_df()`, `session(log)`, `sweep()`, `accounting()`, `errors`,
        `to_parquet(dir)`, `to_csv(dir)`.

    Raises:
        UsageError: `path` is not a directory, or an argument is unusable.
        CorpusError: `strict=True` and a session could not be read.
    """
    loaded = load_corpus_frames(
        path,
        layout=layout,
        jobs=jobs,
        cache=cache,
        cache_dir=cache_dir,
        progress=progress,
        strict=strict,
        profile=profile,
        verify=verify,
        engine=engine,
        scheduler=scheduler,
        format=format,
        outcomes=outcomes,
        pass_threshold=pass_threshold,
        prices=prices,
    )
    return loaded.retyped(Corpus)
