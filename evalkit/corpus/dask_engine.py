"""The Dask engine: the per-session parse as tasks on a `distributed` cluster (extra `dask`).

Each task is one chunk of sessions (`parse.analyse_chunk`): it receives discovery references
(paths relative to the corpus root, a few hundred bytes each) and returns each session's compact
payload with the manifest the store keeps, exactly what a local worker returns, so the records
are identical to the local engine's. Results are consumed as tasks finish, so the store is
written chunk by chunk here too. Only the process that runs the sweep touches the store; the
workers only read transcripts, so every worker must see the corpus at the same path (a shared
file system, or the same mount on every node).

`sessions_frame` builds the per-session table as a Dask DataFrame (`dask.dataframe.from_map`
over chunks of sessions), for corpora whose frames do not fit in one process's memory.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

from evalkit.corpus.discover import SessionRef, discover
from evalkit.corpus.parse import Analysed, analyse_chunk
from evalkit.corpus.records import PAYLOAD_FIELDS, record_from_payload
from evalkit.errors import UsageError

__all__ = ["run_chunks", "client_for", "sessions_frame", "SESSION_COLUMNS", "CONNECT_TIMEOUT"]

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
) -> None:
    """Run `analyse_chunk` for every chunk as a Dask task; `finish` each as it completes."""
    from evalkit.corpus.store import code_fingerprint

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
            client.submit(analyse_chunk, root, [refs[i] for i in idx], pure=False): idx
            for idx in chunks
        }
        for fut in distributed.as_completed(futures):
            finish(futures[fut], fut.result())


# --- the session table as a Dask DataFrame -------------------------------------------------

# Labels from the path, then the payload's scalar numbers (one declaration: PAYLOAD_FIELDS).
_LABELS = ("log", "pass_", "repo", "arm", "run", "layout", "segments")
SESSION_COLUMNS = _LABELS + tuple(
    f.name for f in PAYLOAD_FIELDS if f.kind in ("str", "str?", "int", "float", "bool")
)


def _partition(root: str, refs: Sequence[SessionRef]):
    import pandas as pd

    rows = []
    for ref, (payload, _) in zip(refs, analyse_chunk(root, refs), strict=True):
        rec = record_from_payload(ref, payload)
        row = {c: getattr(rec, c) for c in SESSION_COLUMNS}
        row["segments"] = len(rec.segments)
        rows.append(row)
    return _typed(pd.DataFrame(rows, columns=list(SESSION_COLUMNS)))


def _typed(df):
    kinds = {f.name: f.kind for f in PAYLOAD_FIELDS}
    dtypes = {c: "string" for c in _LABELS if c != "segments"} | {"segments": "int64"}
    for c in SESSION_COLUMNS:
        kind = kinds.get(c)
        if kind in ("str", "str?"):
            dtypes[c] = "string"
        elif kind == "int":
            dtypes[c] = "int64"
        elif kind == "float":
            dtypes[c] = "float64"
        elif kind == "bool":
            dtypes[c] = "bool"
    return df.astype(dtypes)


def sessions_frame(root: str | os.PathLike[str], *, sessions_per_partition: int = 256):
    """One row per discovered session as a lazy `dask.dataframe.DataFrame`.

    Columns: the path labels (`log`, `pass_`, `repo`, `arm`, `run`, `layout`), `segments`
    (how many segment files) and every scalar payload field (`status`, `reason`, `chars`,
    `cited_chars`, `path_chars`, …), as `SweepResult.records` holds them. Each partition parses
    its sessions when computed, so the corpus is never in memory at once.
    """
    try:
        import dask.dataframe as dd
    except ImportError:
        raise UsageError('the Dask engine needs Dask: pip install "evalkit[dask]"') from None
    root = os.fspath(root)
    refs = discover(root).sessions
    parts = [
        list(refs[k : k + sessions_per_partition])
        for k in range(0, len(refs), sessions_per_partition)
    ] or [[]]
    meta = _typed(__import__("pandas").DataFrame(columns=list(SESSION_COLUMNS)))
    return dd.from_map(_partition, [root] * len(parts), parts, meta=meta, enforce_metadata=False)
