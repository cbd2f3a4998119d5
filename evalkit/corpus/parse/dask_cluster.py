"""The Dask engine: the per-session parse as tasks on a `distributed` cluster (extra `dask`).

Each task is one chunk of sessions (`records.analyse_chunk`): it receives discovery references
(paths relative to the corpus root, a few hundred bytes each) and returns each session's compact
payload with the manifest the store keeps, exactly what a local worker returns, so the records
are identical to the local engine's. Results are consumed as tasks finish, so the store is
written chunk by chunk here too. Only the process that runs the sweep touches the store; the
workers only read transcripts, so every worker must see the corpus at the same path (a shared
file system, or the same mount on every node).

`frame` builds any frame of `load_corpus` as a Dask DataFrame (`dask.dataframe.from_map` over
chunks of sessions), for corpora whose frames do not fit in one process's memory.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

from evalkit.corpus.discover import SessionRef, discover
from evalkit.corpus.records import Analysed, analyse_chunk
from evalkit.errors import UsageError

__all__ = ["run_chunks", "client_for", "frame", "CONNECT_TIMEOUT"]

CONNECT_TIMEOUT = "20s"  # how long to wait for a --scheduler address to answer


def _distributed():
    try:
        import distributed
    except ImportError:
        raise UsageError('the Dask engine needs Dask: pip install "evalkit[dask]"') from None
    return distributed


class client_for:  # noqa: N801 — used as a context manager, like `open`
    """A `distributed.Client` for `scheduler` (a Client, an address, or None for a local cluster
    of `workers` single-threaded worker processes); one started here is closed on exit."""

    def __init__(self, scheduler: Any = None, workers: int = 2) -> None:
        self.scheduler = scheduler
        self.workers = workers
        self._owned: list[Any] = []

    def __enter__(self):
        distributed = _distributed()
        if isinstance(self.scheduler, distributed.Client):
            return self.scheduler
        if self.scheduler is None:
            cluster = distributed.LocalCluster(
                n_workers=self.workers,
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
                silence_logs=40,
            )
            self._owned.append(cluster)
            client = distributed.Client(cluster)
        else:
            try:
                client = distributed.Client(str(self.scheduler), timeout=CONNECT_TIMEOUT)
            except (OSError, TimeoutError) as exc:
                raise UsageError(
                    f"--scheduler {self.scheduler}: cannot reach a Dask scheduler ({exc})"
                ) from None
        self._owned.insert(0, client)
        return client

    def __exit__(self, *exc: object) -> None:
        for thing in self._owned:
            thing.close()


def run_chunks(
    root: str,
    refs: Sequence[SessionRef],
    chunks: Sequence[list[int]],
    finish: Callable[[list[int], list[Analysed]], None],
    *,
    scheduler: Any = None,
    workers: int = 2,
    frames: bool = False,
    profile: Any = None,
) -> None:
    """Run `analyse_chunk` for every chunk as a Dask task; `finish` each as it completes."""
    from evalkit.store.shards import code_fingerprint

    distributed = _distributed()
    with client_for(scheduler, workers) as client:
        # A worker running other evalkit code could give other numbers: refuse it.
        theirs = set(client.run(code_fingerprint).values())
        if theirs - {code_fingerprint()}:
            raise UsageError(
                "the Dask workers run a different evalkit (version or source) than this "
                "command: install the same evalkit on every worker"
            )
        futures = {
            client.submit(
                analyse_chunk, root, [refs[i] for i in idx], frames, profile, pure=False
            ): idx
            for idx in chunks
        }
        for fut in distributed.as_completed(futures):
            finish(futures[fut], fut.result())


# --- the frames as Dask DataFrames ---------------------------------------------------------


def _partition(root: str, refs: Sequence[SessionRef], name: str):
    """One partition of frame `name`: its sessions parsed, their rows as `load_corpus` keeps
    them (identity columns first; a session that cannot be read has no rows)."""
    from evalkit.corpus.discover import identity
    from evalkit.corpus.pricing import PRICED_COLUMNS, priced_frame

    wanted = {name, *PRICED_COLUMNS} if name in PRICED_COLUMNS else {name}
    rows: dict[str, list[dict]] = {f: [] for f in wanted}
    for ref, (payload, _) in zip(refs, analyse_chunk(root, refs, frames=True), strict=True):
        got = payload.get("rows")
        if payload["status"] == "crash" or "rows_error" in payload or got is None:
            continue
        ident = identity(ref)
        for f in wanted:
            rows[f].extend({**ident, **r} for r in got[f])
    return priced_frame(name, rows)  # the priced cost, never stored (issue 27)


def frame(
    root: str | os.PathLike[str], name: str = "sessions", *, sessions_per_partition: int = 256
):
    """Frame `name` of `load_corpus(root)` (`sessions`, `calls`, `sections`, `files`,
    `tool_calls`) as a lazy `dask.dataframe.DataFrame`, built with `dask.dataframe.from_map`.

    Each partition parses its own sessions when it is computed (on the cluster of the current
    `distributed.Client`, if any), so the corpus is never in one process's memory at once. Its
    rows and columns are those of `load_corpus(root).frame(name)`, partition after partition in
    discovery order.

    Raises:
        UsageError: Dask is not installed, or `name` is not a frame.
    """
    from evalkit.corpus.frame_rows import FRAME_NAMES
    from evalkit.store.columns import build_frame

    try:
        import dask.dataframe as dd
    except ImportError:
        raise UsageError('the Dask engine needs Dask: pip install "evalkit[dask]"') from None
    if name not in FRAME_NAMES:
        raise UsageError(f"unknown frame {name!r} (one of {', '.join(FRAME_NAMES)})")
    root = os.fspath(root)
    refs = discover(root).sessions
    parts = [
        list(refs[k : k + sessions_per_partition])
        for k in range(0, len(refs), sessions_per_partition)
    ] or [[]]
    n = len(parts)
    return dd.from_map(_partition, [root] * n, parts, [name] * n, meta=build_frame(name, []))
