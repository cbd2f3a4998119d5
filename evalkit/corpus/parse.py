"""Analysing every discovered session: cache first, then parallel parsing over the cores.

The results come back in discovery order whatever order the workers finish in, so a sweep's
output never depends on scheduling. A progress bar goes to stderr only when stderr is a terminal.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any, TextIO

from evalkit.corpus.cache import SweepCache
from evalkit.corpus.discover import SessionRef
from evalkit.corpus.records import SessionRecord, analyse_session, record_from_payload

__all__ = ["analyse_sessions", "analyse_payloads", "Progress"]

# Below this many cache misses a process pool costs more than it saves.
_MIN_PARALLEL = 4


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


Work = tuple[str, tuple[str, ...], str, str | None, bool, bool, Any]


def _ignore_interrupt() -> None:
    # Workers leave Ctrl-C to the main process, which stops the pool and reports it once.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _work_chunk(chunk: list[Work]) -> list[dict[str, Any]]:
    return [analyse_session(*w) for w in chunk]


def analyse_sessions(
    root: str | os.PathLike[str],
    refs: Sequence[SessionRef],
    *,
    cache: SweepCache | None = None,
    jobs: int | None = None,
    progress: Progress | None = None,
) -> list[SessionRecord]:
    """One `SessionRecord` per ref, in the order of `refs`.

    Args:
        root: The swept directory the refs' paths are relative to.
        refs: Sessions from `discover`.
        cache: Where analysed payloads are looked up and stored; None = no cache.
        jobs: Worker processes (default: the machine's cores); 1 parses in this process.
        progress: Optional progress display.
    """
    payloads = analyse_payloads(root, refs, cache=cache, jobs=jobs, progress=progress)
    return [record_from_payload(ref, p) for ref, p in zip(refs, payloads, strict=True)]


def analyse_payloads(
    root: str | os.PathLike[str],
    refs: Sequence[SessionRef],
    *,
    cache: SweepCache | None = None,
    jobs: int | None = None,
    progress: Progress | None = None,
    frames: bool = False,
    profile: Any = None,
) -> list[dict[str, Any]]:
    """One `analyse_session` payload per ref, in the order of `refs` (`analyse_sessions`'s
    arguments; `frames` also builds every corpus frame's rows from the same parse — give such
    a run a cache of its own, as `evalkit.corpus.load` does)."""
    root = os.fspath(Path(root))
    cache = cache if cache is not None else SweepCache(None)
    payloads: list[dict[str, Any] | None] = [None] * len(refs)
    keys: list[str | None] = [None] * len(refs)
    todo: list[int] = []
    for i, ref in enumerate(refs):
        keys[i] = cache.key(root, ref.segments + ref.subagents)
        hit = cache.get(keys[i])
        if hit is not None:
            payloads[i] = hit
            if progress:
                progress.advance()
        else:
            todo.append(i)

    jobs = jobs or os.cpu_count() or 1
    work: list[Work] = [
        (
            root,
            refs[i].segments,
            refs[i].log,
            refs[i].problem,
            refs[i].layout == "interactive",
            frames,
            profile,
        )
        for i in todo
    ]
    # Chunks of a few sessions keep inter-process traffic low; each chunk's payloads are cached
    # as soon as it is done, so an interrupted sweep keeps what it parsed.
    size = max(1, min(16, len(todo) // (jobs * 4)))
    chunks = [(todo[k : k + size], work[k : k + size]) for k in range(0, len(todo), size)]

    def finish(indices: list[int], results: list[dict[str, Any]]) -> None:
        for i, payload in zip(indices, results, strict=True):
            payloads[i] = payload
            cache.put(keys[i], payload)
        if progress:
            progress.advance(len(indices))

    if jobs > 1 and len(todo) >= _MIN_PARALLEL:
        pool = ProcessPoolExecutor(
            max_workers=min(jobs, len(chunks)), initializer=_ignore_interrupt
        )
        try:
            futures = {pool.submit(_work_chunk, w): idx for idx, w in chunks}
            for fut in as_completed(futures):
                finish(futures[fut], fut.result())
        finally:
            pool.shutdown(cancel_futures=True)
    else:
        for idx, w in chunks:
            finish(idx, _work_chunk(w))
    if progress:
        progress.close()
    return payloads  # type: ignore[return-value]
