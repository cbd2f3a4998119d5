"""Cached, parallel analysis in discovery order (evalkit/sweep/parse.py)."""

from __future__ import annotations

import io
import threading

from evalkit.corpus.discover import discover
from evalkit.corpus.parse import Progress, analyse_sessions
from tests.sweep_helpers import cited, put


def test_parallel_results_equal_serial_and_keep_discovery_order(tmp_path):
    for i in range(1, 9):
        cited(tmp_path, f"cg/ab-r/run-new-{i}.jsonl", 100 * i, 50, calls=1 + i % 3)
    put(tmp_path, "cg/ab-r/run-baseline-1.jsonl", text="null\n")
    refs = discover(tmp_path).sessions
    serial = analyse_sessions(tmp_path, refs, jobs=1)
    parallel = analyse_sessions(tmp_path, refs, jobs=2)
    assert serial == parallel
    assert [r.log for r in parallel] == [r.log for r in refs]
    assert [r.status for r in parallel].count("crash") == 1


class Tty(io.StringIO):
    def isatty(self):
        return True


def test_progress_bar_only_on_a_terminal():
    quiet = io.StringIO()
    p = Progress(3, stream=quiet)
    p.advance()
    p.close()
    assert quiet.getvalue() == ""
    tty = Tty()
    p = Progress(2, stream=tty)
    p.advance()
    p.advance()
    p.close()
    assert "2/2 sessions" in tty.getvalue() and tty.getvalue().endswith("\r")


def test_the_process_pool_gives_the_serial_records(tmp_path, monkeypatch):
    from evalkit.corpus import parse

    monkeypatch.setattr(parse, "_MIN_PARALLEL_BYTES", 0)  # the pool even for a tiny corpus
    for i in range(1, 13):
        cited(tmp_path, f"cg/ab-r/run-new-{i}.jsonl", 100 * i, 50, calls=1 + i % 3)
    put(tmp_path, "cg/ab-r/run-baseline-1.jsonl", text="null\n")
    refs = discover(tmp_path).sessions
    chunks, nbytes = parse.plan_chunks(str(tmp_path), refs, range(len(refs)), 2)
    assert len(chunks) > 2 and nbytes > 0
    assert sorted(i for c in chunks for i in c) == list(range(len(refs)))
    assert analyse_sessions(tmp_path, refs, jobs=2) == analyse_sessions(tmp_path, refs, jobs=1)


class _Pool:
    """A stand-in for the process pool: `submit` hands back futures the test runs or leaves."""

    def __init__(self, start: bool):
        self.start = start  # True: each chunk is started (and parsed) by a "worker" at once
        self.futures = []

    def submit(self, fn, *args):
        from concurrent.futures import Future

        fut = Future()
        if self.start:
            fut.set_running_or_notify_cancel()
            fut.set_result(fn(*args))
        else:  # never started: fail (rather than hang) if nothing takes it back within seconds
            timer = threading.Timer(5, self._fail, (fut,))
            timer.daemon = True
            timer.start()
        self.futures.append(fut)
        return fut

    @staticmethod
    def _fail(fut):
        if fut.set_running_or_notify_cancel():
            fut.set_exception(AssertionError("a chunk no worker started was waited for"))


def _shared_out(tmp_path, monkeypatch, pool):
    from collections import deque

    from evalkit.corpus import parse

    for i in range(1, 13):
        cited(tmp_path, f"cg/ab-r/run-new-{i}.jsonl", 100 * i, 50, calls=1 + i % 3)
    refs = discover(tmp_path).sessions
    chunks, _ = parse.plan_chunks(str(tmp_path), refs, range(len(refs)), 2)
    here = []
    real = parse.analyse_chunk

    def counted(root, work, frames, profile, *manifests):
        here.append(len(work))
        return real(root, work, frames, profile, *manifests)

    monkeypatch.setattr(parse, "_AHEAD_PER_WORKER", 4)
    got = {}

    def finish(idx, results):
        got.update(zip(idx, (p for p, _ in results), strict=True))

    # The pool's "workers" call the real parser; this process's own chunks go through `counted`.
    monkeypatch.setattr(parse, "analyse_chunk", counted)
    pool_fn = pool.submit
    pool.submit = lambda fn, *a: pool_fn(real, *a)
    parse._share(
        pool,
        1,
        deque(chunks),
        lambda idx: [refs[i] for i in idx],
        str(tmp_path),
        False,
        None,
        finish,
    )
    expected = {
        i: p
        for c in chunks
        for i, (p, _) in zip(c, real(str(tmp_path), [refs[i] for i in c]), strict=True)
    }
    return chunks, here, got, expected


def test_chunks_no_worker_started_are_taken_back(tmp_path, monkeypatch):
    # Fires: the workers never start what was queued for them, so this process parses it all.
    pool = _Pool(start=False)
    chunks, here, got, expected = _shared_out(tmp_path, monkeypatch, pool)
    assert len(chunks) > 4 and len(pool.futures) >= 4  # queued four ahead for the one worker
    assert all(f.cancelled() for f in pool.futures)
    assert sum(here) == sum(len(c) for c in chunks) and got == expected


def test_chunks_a_worker_started_are_waited_for(tmp_path, monkeypatch):
    # Steps aside: every queued chunk was started (and finished) by a worker: none is taken back.
    pool = _Pool(start=True)
    chunks, here, got, expected = _shared_out(tmp_path, monkeypatch, pool)
    assert not any(f.cancelled() for f in pool.futures)
    assert sum(here) + sum(len(c) for c in chunks[: len(pool.futures)]) == sum(
        len(c) for c in chunks
    )
    assert got == expected


def test_every_chunk_is_queued_for_the_workers_before_this_process_parses_one(
    tmp_path, monkeypatch
):
    # This process queues chunks only between two of its own: what it did not queue before its
    # first, a worker could not start while it parsed (and stored) that one.
    from collections import deque

    from evalkit.corpus import parse

    for i in range(1, 41):
        cited(tmp_path, f"cg/ab-r/run-new-{i}.jsonl", 100 * i, 50, calls=1 + i % 3)
    refs = discover(tmp_path).sessions
    chunks, _ = parse.plan_chunks(str(tmp_path), refs, range(len(refs)), 2)
    assert len(chunks) > 16
    pool = _Pool(start=False)
    queued = []
    real = parse.analyse_chunk

    def counted(*args):
        queued.append(len(pool.futures))
        return real(*args)

    monkeypatch.setattr(parse, "analyse_chunk", counted)
    got = {}

    def finish(idx, results):
        got.update(zip(idx, results, strict=True))

    def work(idx):
        return [refs[i] for i in idx]

    parse._share(pool, 1, deque(chunks), work, str(tmp_path), False, None, finish)
    assert queued[0] == len(chunks)  # every chunk queued before this process parsed one
    assert sorted(got) == list(range(len(refs)))  # and each parsed once, taken back here


def _planned(monkeypatch, sizes, jobs):
    from evalkit.corpus import parse

    monkeypatch.setattr(parse, "_size", lambda root, ref: sizes[ref])
    chunks, nbytes = parse.plan_chunks("", list(range(len(sizes))), range(len(sizes)), jobs)
    cost = [sum(sizes[i] + parse._SESSION_COST for i in c) for c in chunks]
    return chunks, nbytes, cost


def test_chunks_shrink_towards_where_the_workers_and_this_process_meet(monkeypatch):
    # 2,000 sessions of 2 KB to 400 KB, in no order: the largest go to the workers' end.
    sizes = [2_000 + (i * 7_919) % 400_000 for i in range(2_000)]
    chunks, nbytes, cost = _planned(monkeypatch, sizes, jobs=2)
    assert sorted(i for c in chunks for i in c) == list(range(2_000)) and nbytes == sum(sizes)
    assert all(1 <= len(c) <= 64 for c in chunks)
    assert min(sizes[i] for i in chunks[0]) >= max(sizes[i] for i in chunks[-1])
    meet = cost.index(min(cost))
    assert 0 < meet < len(chunks) - 1
    # Each end's chunks shrink towards the meeting point, and the ends hold even work.
    assert cost[0] > 4 * cost[meet] and cost[-1] > 4 * cost[meet]
    assert all(a >= b for a, b in zip(cost[: meet - 1], cost[1:meet], strict=True))
    front, back = sum(cost[: meet + 1]), sum(cost[meet + 1 :])
    assert abs(front - back) < 0.05 * (front + back)


def test_with_more_workers_the_front_holds_their_share_of_the_work(monkeypatch):
    sizes = [2_000 + (i * 7_919) % 400_000 for i in range(2_000)]
    chunks, _, cost = _planned(monkeypatch, sizes, jobs=4)
    meet = cost.index(min(cost))
    front = sum(cost[: meet + 1])
    assert abs(front / sum(cost) - 3 / 4) < 0.05  # three workers draw from the front
