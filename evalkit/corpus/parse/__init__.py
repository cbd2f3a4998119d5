"""Analysing every discovered session: the store first, then parallel parsing over the cores.

The results come back in discovery order whatever order the workers finish in, so a sweep's
output never depends on scheduling. A progress bar goes to stderr only when stderr is a terminal.

Parallelism pays only when the work is worth a worker: the pool is started once per sweep,
with one process fewer than `jobs` because this process parses too (it would otherwise sit
idle waiting). A sweep that will parse every session starts it before discovery
(`workers_ahead`), so the workers start meanwhile (and the sweep command's first walks the
tree for the output snapshot); sessions are sent as their discovery references (a few hundred bytes) in chunks,
largest first so no worker is left with a long tail, and each session comes back as its
compact payload (numbers and paths, never a parsed session). Each finished chunk is stored as
it arrives: its rows are gathered, and a sweep's shards are written by the workers once they
have nothing left to parse (`CorpusStore.write_with`), so this process does no Parquet work.
Every chunk is queued for the workers up front, so that none waits while this process stores
results, and the chunks no worker has started are taken back at the end (`_share`).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TextIO

from evalkit.corpus.discover import SessionRef
from evalkit.corpus.records import Analysed, SessionRecord, analyse_chunk, record_from_payload
from evalkit.store.manifest import session_files
from evalkit.store.shards import CorpusStore, holds_shards

__all__ = [
    "analyse_sessions",
    "analyse_payloads",
    "analyse_chunk",
    "plan_chunks",
    "Progress",
    "workers_ahead",
    "started_ahead",
    "jobs_ahead",
]

# Below this much work (sessions, bytes) a process pool costs more than it saves.
_MIN_PARALLEL = 4
_MIN_PARALLEL_BYTES = 1_000_000
_SHARES_PER_JOB = 8  # a chunk: this share of the work still to plan, per job (`plan_chunks`)
_MIN_CHUNK_BYTES = 256 * 1024  # about 3 ms of parsing
# What parsing a session costs beyond its bytes, in bytes of parsing (measured on the
# synthetic 10x corpus: 0.37 ms a session against 6.5 ms a MB).
_SESSION_COST = 56 * 1024
_MAX_CHUNK = 64
# Chunks queued for each worker (see `_share`): in practice every chunk of the parse (guided
# self-scheduling plans 68 chunks for the 10x corpus, 108 for the 30x one).
_AHEAD_PER_WORKER = 1024


class Progress:
    """`[#####     ] 52/103 sessions` redrawn in place on a terminal; silent otherwise."""

    def __init__(self, total: int, stream: TextIO | None = None, enabled: bool | None = None):
        self.stream = stream if stream is not None else sys.stderr
        if enabled is None:
            enabled = bool(getattr(self.stream, "isatty", lambda: False)())
        self.enabled = enabled and total > 0
        self.total = total
        self.done = 0

    def advance(self, n: int = 1) -> None:
        self.done += n
        if self.enabled:
            width = 30
            filled = width * self.done // self.total
            self.stream.write(
                f"\r[{'#' * filled}{' ' * (width - filled)}] {self.done}/{self.total} sessions"
            )
            self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self.stream.write("\r" + " " * 60 + "\r")
            self.stream.flush()


# How often a worker checks that its parent is alive (the fallback of `_death_signal`).
_PARENT_CHECK_S = 0.5
_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def _worker_start(parent: int) -> None:
    """A parser worker's set-up: it leaves Ctrl-C to the main process (which stops the pool and
    reports it once), and it never outlives that process (issue 21).

    Killed alone (an out-of-memory killer picks the largest process), the main process left
    each worker blocked forever on its pipe, holding standard output open, so `evalkit sweep
    DIR | jq` never finished. On Linux the kernel kills the worker when its parent dies
    (`PR_SET_PDEATHSIG`); everywhere, a thread checks every `_PARENT_CHECK_S` seconds that the
    parent is still the process that started it, and ends the worker when it is not. A worker
    holds nothing to clean up: it parses, and the main process stores what it returns.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _death_signal()
    if os.getppid() != parent:  # the parent died before the signal was asked for
        os._exit(1)
    import threading

    threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()


def _death_signal() -> None:
    """Ask Linux to kill this process when its parent dies; nothing elsewhere."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):  # no prctl: the parent check alone
        pass


def _watch_parent(parent: int) -> None:
    import time

    while os.getppid() == parent:
        time.sleep(_PARENT_CHECK_S)
    os._exit(1)


# The parser workers started ahead of the sweep (`workers_ahead`): (pool, workers), taken over
# by the next local parse that starts that many workers (`_pool`).
_ahead: tuple[Any, int] | None = None


@contextlib.contextmanager
def workers_ahead(jobs: int) -> Iterator[Any]:
    """The parser workers of a parse about to come (`jobs` processes, this one included),
    started now, so that they start while this process still discovers the sessions; the
    pool is yielded, to give a worker a task before the parse (the sweep's snapshot walks the
    tree there). The next local parse with `jobs` takes the pool over, and ends it as its own;
    one left untaken (nothing to parse, or too little for the pool) is ended with the block.

    The parsing stack is imported first (each parse needs it; forked workers inherit it
    instead of importing it each), so this is for a run that parses: a store that holds
    nothing, or none."""
    global _ahead
    from concurrent.futures import ProcessPoolExecutor

    import evalkit.session  # noqa: F401

    outer = _ahead
    pool = ProcessPoolExecutor(
        max_workers=jobs - 1, initializer=_worker_start, initargs=(os.getpid(),)
    )
    _ahead = (pool, jobs - 1)
    try:
        pool.submit(os.getpid)  # the workers start at the first task
        yield pool
    finally:
        left, _ahead = _ahead, outer
        if left is not None and left[0] is pool:
            pool.shutdown(wait=True, cancel_futures=True)


def jobs_ahead(jobs: int | None, engine: str, store: str | os.PathLike[str] | None) -> int | None:
    """The processes of a parse worth starting before discovery (`workers_ahead`), or None: a
    local parse over more than one process that will parse every session, its store directory
    `store` holding no shard (None: no store)."""
    jobs = jobs or os.cpu_count() or 1
    if engine != "local" or jobs < 2:
        return None
    if store is not None and holds_shards(store):
        return None
    return jobs


def started_ahead() -> bool:
    """Whether parser workers started ahead (`workers_ahead`) wait for a parse to take them."""
    return _ahead is not None


def _pool(workers: int) -> Any:
    """A pool of `workers` parser workers: the one started ahead (`workers_ahead`), else one
    started now."""
    global _ahead
    if _ahead is not None and _ahead[1] == workers:
        pool, _ahead = _ahead[0], None
        return pool
    from concurrent.futures import ProcessPoolExecutor

    return ProcessPoolExecutor(
        max_workers=workers, initializer=_worker_start, initargs=(os.getpid(),)
    )


def _size(root: str, ref: SessionRef) -> int:
    total = 0
    for f in session_files(ref):
        try:
            total += os.stat(os.path.join(root, f)).st_size
        except OSError:
            pass
    return total


def plan_chunks(root: str, refs: Sequence[SessionRef], todo: Sequence[int], jobs: int):
    """Chunks of indices into `refs`, and the bytes to parse: the largest sessions at the front
    (the workers' end of the queue), the smallest at the back (this process's, `_share`), and
    the chunks smaller the nearer they are to where the two ends meet.

    Guided self-scheduling from both ends: each chunk is a share (`_SHARES_PER_JOB` per job)
    of the work still unplanned, a session's work being its bytes plus `_SESSION_COST`. So the
    last chunks parsed anywhere are small, and no process waits long at the end for a large
    chunk another one started (a worker's chunk cannot be taken back once started, and its
    pool commits two to it: with 64-session chunks, a cold 10x sweep's parent waited 0.09 s
    of its 0.67 s for the worker's last two). The next chunk is planned at the end with less
    work planned so far, the front's counted once per worker (`jobs - 1` draw from it), so
    the two ends meet where the chunks are smallest. A chunk holds one to `_MAX_CHUNK`
    sessions.
    """
    sizes = {i: _size(root, refs[i]) for i in todo}
    order = sorted(todo, key=lambda i: -sizes[i])
    nbytes = sum(sizes.values())
    # The work of a session: its bytes, and what every session costs whatever its size.
    costs = {i: size + _SESSION_COST for i, size in sizes.items()}
    total = sum(costs.values())
    least = min(_MIN_CHUNK_BYTES, total // (jobs * _SHARES_PER_JOB * 8))
    front: list[list[int]] = []
    back: list[list[int]] = []
    lo, hi, left = 0, len(order), total
    planned = [0, 0]  # work planned at the front, at the back

    def take(step: int) -> list[int]:
        nonlocal lo, hi, left
        target = max(least, left // (jobs * _SHARES_PER_JOB))
        chunk: list[int] = []
        got = 0
        while lo < hi and len(chunk) < _MAX_CHUNK and (not chunk or got < target):
            if step > 0:
                i, lo = order[lo], lo + 1
            else:
                hi -= 1
                i = order[hi]
            chunk.append(i)
            got += costs[i]
        left -= got
        planned[step < 0] += got
        return chunk

    while lo < hi:
        if planned[0] <= max(1, jobs - 1) * planned[1]:
            front.append(take(1))
        else:
            back.append(take(-1))
    return front + back[::-1], nbytes


def analyse_sessions(
    root: str | os.PathLike[str],
    refs: Sequence[SessionRef],
    *,
    cache: CorpusStore | None = None,
    jobs: int | None = None,
    progress: Progress | None = None,
    engine: str = "local",
    scheduler: Any = None,
) -> list[SessionRecord]:
    """One `SessionRecord` per ref, in the order of `refs`.

    Args:
        root: The swept directory the refs' paths are relative to.
        refs: Sessions from `discover`.
        cache: The store analysed sessions are looked up in and written to; None = no store.
        jobs: Worker processes (default: the machine's cores); 1 parses in this process.
        progress: Optional progress display.
        engine: `local` (processes on this machine) or `dask` (tasks on a Dask cluster).
        scheduler: For `dask`: a `distributed.Client`, a scheduler address, or None for a
            local cluster of `jobs` workers.
    """
    return analyse_payloads(  # type: ignore[return-value]
        root,
        refs,
        cache=cache,
        jobs=jobs,
        progress=progress,
        engine=engine,
        scheduler=scheduler,
        keep=record_from_payload,
    )


def analyse_payloads(
    root: str | os.PathLike[str],
    refs: Sequence[SessionRef],
    *,
    cache: CorpusStore | None = None,
    jobs: int | None = None,
    progress: Progress | None = None,
    frames: bool = False,
    profile: Any = None,
    engine: str = "local",
    scheduler: Any = None,
    finish_store: bool = True,
    keep: Callable[[SessionRef, dict[str, Any]], Any] | None = None,
) -> list[Any]:
    """One `analyse_session` payload per ref, in the order of `refs` (`analyse_sessions`'s
    arguments; `frames` also builds every corpus frame's rows from the same parse — give such
    a run a store of its own, as `evalkit.corpus.load` does). `finish_store=False` leaves
    `cache.finish` to the caller: a caller analysing a corpus in batches calls it once with
    every live session (merging shards keeps only the sessions it is given).

    `keep(ref, payload)` says what to keep of each payload (`record_from_payload` for the
    sweep): it is called as each session's payload arrives (from the store, or with its chunk
    once the chunk is stored), and the list holds what it returns, so no payload outlives its
    chunk (issue 16: memory grows by what is kept per session, not by whole payloads)."""
    root = os.fspath(Path(root))
    store = cache if cache is not None else CorpusStore(None, root)
    payloads: list[Any] = [None] * len(refs)
    found = bytearray(len(refs))
    # The store is read a shard at a time, and each hit kept as it comes (`lookup_all`).
    for i, hit in store.lookup_all(refs):
        payloads[i] = hit if keep is None else keep(refs[i], hit)
        found[i] = 1
        if progress:
            progress.advance()
    todo = [i for i, done in enumerate(found) if not done]

    def finish(indices: list[int], results: list[Analysed]) -> None:
        store.put((refs[i], p, m) for i, (p, m) in zip(indices, results, strict=True))
        for i, (payload, _) in zip(indices, results, strict=True):
            payloads[i] = payload if keep is None else keep(refs[i], payload)
        if progress:
            progress.advance(len(indices))

    if todo:
        jobs = jobs or os.cpu_count() or 1
        if engine == "dask":
            _run_dask(root, refs, todo, jobs, finish, scheduler, frames, profile)
        else:
            # With no store, the sweep makes no manifest: its files are neither examined twice
            # nor hashed. Frames keep the manifest step: without it, one row of the hostile
            # corpus's sessions frame (twenty Codex captures sharing a thread id) changed,
            # though every payload handed to the frames was the same (an open question for
            # the frames' owners).
            manifests = store.enabled or frames
            _run_local(root, refs, todo, jobs, finish, scheduler, frames, profile, manifests, store)
    if finish_store:
        store.finish(refs)
    if progress:
        progress.close()
    return payloads


Finish = Callable[[list[int], list[Analysed]], None]


def _run_local(
    root: str,
    refs: Sequence[SessionRef],
    todo: list[int],
    jobs: int,
    finish: Finish,
    _: Any,
    frames: bool,
    profile: Any,
    manifests: bool = True,
    store: CorpusStore | None = None,
) -> None:
    chunks, nbytes = plan_chunks(root, refs, todo, jobs)
    pending = deque(chunks)  # largest first
    if jobs > 1 and len(todo) >= _MIN_PARALLEL and nbytes >= _MIN_PARALLEL_BYTES:
        # This process is one of the `jobs` workers: it takes the smallest chunks from the end of
        # the queue and collects the others' results between two of its own.
        workers = jobs - 1
        # Imported here: a sweep that parses nothing (warm) does not pay for multiprocessing.
        # This process parses too, so it imports the parsing stack anyway: before the workers
        # start, so that forked workers inherit it instead of importing it each.
        import evalkit.session  # noqa: F401

        pool = _pool(workers)
        # The workers also write the shards, once they have no more sessions to parse, so
        # this process does no Parquet work for them (a sweep's never imports pyarrow). A
        # load's frame files are written here (it reads them back for its frames) before the
        # shards that name them are handed over.
        writes = store if store is not None and store.enabled else None
        if writes is not None:
            writes.write_with(pool)
        done = False
        try:
            _share(
                pool,
                workers,
                pending,
                lambda idx: [refs[i] for i in idx],
                root,
                frames,
                profile,
                finish,
                manifests,
                dispatched=writes.release_writes if writes is not None else None,
            )
            if writes is not None:
                writes.flush()  # the last rows too, while the workers are there to write them
            done = True
        finally:
            if writes is not None:
                writes.write_with(None, drop=not done)
            # Shards still being written are waited for by the store (`CorpusStore.finish`,
            # or after the output is printed), which then ends the pool; after a failure they
            # are dropped.
            if done and writes is not None and writes.writing:
                writes.end_after_writes(pool)
            else:
                pool.shutdown(wait=True, cancel_futures=not done)
    else:
        for idx in pending:
            finish(idx, analyse_chunk(root, [refs[i] for i in idx], frames, profile, manifests))


def _share(
    pool: Any,
    workers: int,
    pending: deque[list[int]],
    work_of: Callable[[list[int]], list[SessionRef]],
    root: str,
    frames: bool,
    profile: Any,
    finish: Finish,
    manifests: bool = True,
    dispatched: Callable[[], None] | None = None,
) -> None:
    """Parse the `pending` chunks (largest first) between `pool`'s workers and this process.

    The workers take chunks from the front of the queue, this process from the end, and it
    stores the workers' results between two chunks of its own. The chunks are queued for the
    workers up front (up to `_AHEAD_PER_WORKER` each, in practice all of them): this process
    queues more only between two of its own chunks, and storing a result can hold it for a while
    (the loader's frame files: the first imports the Parquet library, 0.1–0.2 s). With 16
    queued, a cold 10x load's worker ran dry five to ten times, 0.2–0.3 s in all, as the chunks
    grew small near the end while this process parsed and stored. This process takes its own
    chunks back from the end of the queue, those no worker has started yet, so the deep queue
    never leaves it waiting on work it could do. `dispatched()` is called once no chunk is left
    that is not parsed or being parsed: work the workers should do only once they have no more
    sessions to parse (writing the store's shards) is given to them then, and never delays a
    parse.
    """
    from concurrent.futures import FIRST_COMPLETED, wait

    inflight: dict[Any, list[int]] = {}

    def collect(block: bool) -> None:
        if block:
            wait(inflight, return_when=FIRST_COMPLETED)
        for fut in [f for f in inflight if f.done()]:
            finish(inflight.pop(fut), fut.result())

    def take_back() -> list[int] | None:
        for fut in reversed(list(inflight)):  # the last submitted: the smallest
            if fut.cancel():  # no worker has started it
                return inflight.pop(fut)
        return None

    while pending or inflight:
        while pending and len(inflight) < _AHEAD_PER_WORKER * workers:
            idx = pending.popleft()
            inflight[pool.submit(analyse_chunk, root, work_of(idx), frames, profile, manifests)] = (
                idx
            )
        collect(block=False)
        idx = pending.pop() if pending else take_back()
        if idx is None and dispatched is not None:
            # Every chunk is parsed or being parsed (nothing left to take back): what the
            # workers are given now comes after all their parsing.
            dispatched()
            dispatched = None
        if idx is not None:
            finish(idx, analyse_chunk(root, work_of(idx), frames, profile, manifests))
        elif inflight:
            collect(block=True)


def _run_dask(
    root: str,
    refs: Sequence[SessionRef],
    todo: list[int],
    jobs: int,
    finish: Finish,
    scheduler: Any,
    frames: bool,
    profile: Any,
) -> None:
    from evalkit.corpus.parse.dask_cluster import run_chunks

    chunks, _ = plan_chunks(root, refs, todo, jobs)
    run_chunks(
        root,
        refs,
        chunks,
        finish,
        scheduler=scheduler,
        workers=jobs,
        frames=frames,
        profile=profile,
    )
