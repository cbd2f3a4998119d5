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
) -> Corpus:
    """Load a corpus directory: every session once, its frames, its sweep.

    Sessions are discovered exactly as `evalkit sweep` discovers them, parsed in parallel
    (or on a Dask cluster, `engine="dask"`) through the corpus store, and kept once each. See
    `evalkit.corpus.load.load_corpus_frames` for the arguments (`format` forces one reader;
    `outcomes` a CSV of rewards joined, with each harbor trial's `result.json`, into the
    sessions frame's `reward`, `passed` and `outcome_source`).

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
    )
    return Corpus(**{f: getattr(loaded, f) for f in loaded.__dataclass_fields__})
