"""The baseline sweep and the new-vs-baseline arm table over a corpus directory (spec §7, §8).

`run_sweep` puts the layers together:

* `evalkit.corpus.discover` — sessions from a directory tree by the harness's layout rules (§7.1–7.5)
* `evalkit.corpus.records` — parse one session into its allocation numbers (§8.2 steps 1–2)
* `evalkit.store.shards`, `evalkit.corpus.parse` — stored, parallel analysis of every session
* `evalkit.tables.quantile` — the one quantile rule (§8.1, Decision 2)
* `evalkit.tables.aggregate` — corpus line, slice table, per-call line, arm table, tail (§8.2, §8.4)
* `evalkit.outputs.sweep_text` — text, markdown and JSON output (`evalkit sweep`)

For notebooks::

    from evalkit.sweep import run_sweep
    result = run_sweep()                 # the bundled synthetic corpus
    result.slices_frame()                # the baseline slice table (fractions)
    result.arm_frame(per_run=True)       # per-run efficiencies per pass/repo/arm
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from evalkit import paths
from evalkit.corpus.discover import Discovery, FileEntry, SessionRef, discover, force_format
from evalkit.corpus.parse import Progress, analyse_sessions
from evalkit.corpus.records import (
    Accounting,
    CallRecord,
    SessionRecord,
    account_files,
    read_ref,
)
from evalkit.errors import UsageError
from evalkit.formats.detect import check_format
from evalkit.paths import bundled_corpus
from evalkit.store.keys import sweep_fingerprint
from evalkit.store.shards import CorpusStore, default_cache_dir
from evalkit.tables.agents import AgentRow, agent_table, has_other_agents
from evalkit.tables.aggregate import (
    ArmCell,
    ArmRow,
    CorpusCounts,
    PerCall,
    SliceRow,
    arm_changes_frame,
    arm_frame,
    arm_table,
    calls_frame,
    corpus_counts,
    full_arm_frame,
    per_call,
    sessions_frame,
    slice_table,
    slices_frame,
    tail,
)
from evalkit.tables.quantile import QUANTILE_METHOD, median, quantile

if TYPE_CHECKING:
    from collections.abc import Sequence

    import pandas as pd

    from evalkit.session import InteractiveSession, Session

__all__ = [
    "run_sweep",
    "load_session",
    "bundled_corpus_dir",
    "is_bundled_corpus",
    "SweepResult",
    "Accounting",
    "SessionRecord",
    "CallRecord",
    "SessionRef",
    "FileEntry",
    "Discovery",
    "SliceRow",
    "PerCall",
    "ArmCell",
    "ArmRow",
    "CorpusCounts",
    "CorpusStore",
    "default_cache_dir",
    "discover",
    "quantile",
    "median",
    "QUANTILE_METHOD",
]


def bundled_corpus_dir() -> Path:
    """The bundled synthetic corpus (`data/corpus`), as `evalkit.paths.bundled_corpus` says."""
    return bundled_corpus()


def is_bundled_corpus(path: str | os.PathLike[str]) -> bool:
    """`evalkit.paths.is_bundled_corpus`: the one rule the sweep and its stored output share."""
    return paths.is_bundled_corpus(path, bundled_corpus_dir())


@dataclass(frozen=True)
class SweepResult:
    """A swept corpus: every session record and the tables computed from them (fractions).

    Attributes:
        root: The swept directory.
        bundled: The root is the bundled synthetic corpus (the sweep prints its label).
        discovery: Sessions and file entries found.
        records: One record per discovered session, in discovery order (every status).
        arms: Arm labels compared in `arm_rows`, in column order.
        exclude: Run-hygiene rules applied to the arm table (`failed`, `raced`,
            `contaminated`; default none, as compare-arms.mjs).
        cache_hits, cache_misses: How many sessions came from the cache.
    """

    root: Path
    bundled: bool
    discovery: Discovery
    records: tuple[SessionRecord, ...]
    arms: tuple[str, ...]
    arm_rows: tuple[ArmRow, ...]
    exclude: tuple[str, ...] = ()
    cache_hits: int = 0
    cache_misses: int = 0

    @cached_property
    def counts(self) -> CorpusCounts:
        return corpus_counts(self.records)

    @cached_property
    def slices(self) -> tuple[SliceRow, ...]:
        return slice_table(self.records)

    @cached_property
    def per_call(self) -> PerCall:
        return per_call(self.records)

    @property
    def sessions(self) -> tuple[SessionRecord, ...]:
        """The sessions in the sweep (at least one allocation call)."""
        return tuple(r for r in self.records if r.in_sweep)

    def record(self, log: str) -> SessionRecord:
        """The record whose log (first segment, relative to the root) is `log`."""
        for r in self.records:
            if r.log == log:
                return r
        raise KeyError(log)

    @cached_property
    def _refs(self) -> dict[str, SessionRef]:
        return {ref.log: ref for ref in self.discovery.sessions}

    def session(self, log: str) -> Session | InteractiveSession:
        """Parse the session whose log is `log` in full, as the sweep read it.

        A dictionary lookup in what the sweep discovered (discovery is not run again).

        Raises:
            KeyError: No session of the sweep has that log.
        """
        try:
            ref = self._refs[log]
        except KeyError:
            raise KeyError(log) from None
        return read_ref(self.root, ref)

    def tail(self, n: int = 5) -> tuple[SessionRecord, ...]:
        return tail(self.records, n)

    def cell(self, pass_: str | None, repo: str | None, arm: str) -> ArmCell | None:
        for row in self.arm_rows:
            if row.pass_ == pass_ and row.repo == repo:
                for c in row.cells:
                    if c is not None and c.arm == arm:
                        return c
        return None

    @cached_property
    def agents(self) -> tuple[AgentRow, ...]:
        """Sessions per agent and arm (tool calls, tokens, outcomes) when the corpus holds
        another agent's logs than Claude Code's; empty otherwise (issue 15)."""
        return agent_table(self.records) if has_other_agents(self.records) else ()

    @cached_property
    def accounting(self) -> tuple[Accounting, ...]:
        """Every entry of the tree with what became of it, in path order."""
        return account_files(self.discovery, self.records)

    # DataFrames (pandas is imported lazily)
    def sessions_frame(self) -> pd.DataFrame:
        return sessions_frame(self.records)

    def calls_frame(self) -> pd.DataFrame:
        return calls_frame(self.records)

    def slices_frame(self) -> pd.DataFrame:
        return slices_frame(self.slices)

    def arm_frame(self, *, per_run: bool = False, full: bool = False) -> pd.DataFrame:
        """The arm table: one row per pass × repo × arm (or per run with `per_run`).

        `full=True` adds every ARM COMPARISON figure (§8.4) after the allocation columns: for
        each span row `<row>_median`, `_min`, `_max`, `_n`, the pooled sufficiency counts and
        allocation totals, the contamination counts and the runs each `exclude` rule dropped
        (see `evalkit.tables.compare.arms_frame`).
        """
        if full and not per_run:
            return full_arm_frame(self.arm_rows)
        return arm_frame(self.arm_rows, per_run=per_run)

    def arm_changes_frame(self) -> pd.DataFrame:
        """Per pass/repo: the second arm's median against the first's, with both ranges."""
        return arm_changes_frame(self.arm_rows, self.arms)


def load_session(
    root: str | os.PathLike[str], log: str | Sequence[str]
) -> Session | InteractiveSession:
    """One session of a corpus, parsed in full, named by its log relative to `root`.

    It is read the way the sweep read it: an interactive Claude Code log (§7.4) by the
    interactive reader, with its subagent files merged (an `InteractiveSession`, which has
    allocation and sufficiency but no occupancy); anything else as headless segments.

    Args:
        root: The corpus directory.
        log: The session's first segment relative to `root` (as `evalkit sweep` lists it; its
            `.tN` segments are found by the discovery rules), or every segment, in order.

    Raises:
        UsageError: No session of the corpus starts with that file.
    """
    from evalkit.session import parse_session

    root = Path(root)
    if not isinstance(log, str):
        return parse_session([root / s for s in log], log=log[0])
    refs = [ref for ref in discover(root).sessions if ref.log == log]
    if not refs:
        raise UsageError(f"no session {log!r} in {root.name}/ (`evalkit sweep --list-files`)")
    return read_ref(root, refs[0])


def _workers_ahead(store: CorpusStore, jobs: int | None, engine: str):
    """The parser workers started before discovery (`evalkit.corpus.parse.workers_ahead`) when
    every session will be parsed (`parse.jobs_ahead`) and no command started them already, so
    that they start while this process discovers the sessions; else nothing."""
    import contextlib

    from evalkit.corpus import parse

    ahead = None if parse.started_ahead() else parse.jobs_ahead(jobs, engine, store.directory)
    return contextlib.nullcontext() if ahead is None else parse.workers_ahead(ahead)


def run_sweep(
    root: str | os.PathLike[str] | None = None,
    *,
    arms: tuple[str, ...] | None = None,
    cache: bool = True,
    cache_dir: str | os.PathLike[str] | None = None,
    jobs: int | None = None,
    progress: bool | None = False,
    exclude: tuple[str, ...] = (),
    verify: bool = False,
    engine: str = "local",
    scheduler: object = None,
    format: str | None = None,
) -> SweepResult:
    """Discover, parse and aggregate a corpus directory (spec §7, §8.2, §8.4).

    Args:
        root: The corpus directory; default the bundled synthetic corpus (`data/corpus`).
        arms: Arm labels for the arm table (default `baseline`, `new` when present).
        cache: Use the corpus store (it never changes a number, only the time taken).
        cache_dir: Store location (default `$XDG_CACHE_HOME/evalkit` or `~/.cache/evalkit`).
        jobs: Worker processes for parsing (default: every core); Dask workers for a local
            Dask cluster.
        progress: Progress bar on stderr: True, False, or None = only when stderr is a terminal.
        exclude: Run-hygiene rules for the arm table (`failed`, `raced`, `contaminated`);
            the baseline sweep's tables always cover every session.
        verify: Re-hash the files of every stored session instead of trusting their size,
            modification time and inode.
        engine: `local` (processes on this machine) or `dask` (tasks on a Dask cluster; needs
            the `dask` extra). Both give the same records.
        scheduler: For `dask`: a scheduler address (`tcp://host:8786`), a `distributed.Client`,
            or None to start a local cluster.
        format: Read every session with one reader (`claude-code`, `codex-rollout`,
            `codex-exec`, `inspect`) instead of the one its content calls for; None or `auto`
            detects (`evalkit.corpus.discover.force_format`). A session the forced reader cannot
            read is a crash naming its file; the rest still load.

    Raises:
        UsageError: The directory does not exist (or, by default, the bundled corpus is absent),
            the engine is unknown or not installed, or `format` is not a format name.
    """
    if engine not in ("local", "dask"):
        raise UsageError(f"unknown engine {engine!r} (choose local or dask)")
    if root is None:
        root = bundled_corpus_dir()
        if not root.is_dir():
            raise UsageError(
                f"the bundled corpus is missing (expected {root.parent.name}/{root.name} in the "
                "evalkit repository); pass a corpus directory: evalkit sweep DIR"
            )
    root = Path(root)
    fmt = check_format(format)
    # A forced reader gives other payloads for the same files: a store of its own. A store
    # that is off keys nothing, so its fingerprint (a digest of every source file of evalkit)
    # is not taken.
    store = CorpusStore(
        (cache_dir or default_cache_dir()) if cache else None,
        root,
        verify=verify,
        fingerprint=sweep_fingerprint(fmt) if cache else "",
    )
    with _workers_ahead(store, jobs, engine):
        found = force_format(discover(root), fmt)
        bar = None if progress is False else Progress(len(found.sessions), enabled=progress)
        records = tuple(
            analyse_sessions(
                root,
                found.sessions,
                cache=store,
                jobs=jobs,
                progress=bar,
                engine=engine,
                scheduler=scheduler,
            )
        )
    arm_labels, rows = arm_table(records, arms, exclude=exclude)
    return SweepResult(
        root=root,
        bundled=is_bundled_corpus(root),
        discovery=found,
        records=records,
        arms=arm_labels,
        arm_rows=rows,
        exclude=tuple(exclude),
        cache_hits=store.hits,
        cache_misses=store.misses,
    )
