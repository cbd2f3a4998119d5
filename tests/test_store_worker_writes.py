"""A parallel sweep's shards are written by its parser workers, and a command prints its output
before it waits for the last of them (issue 22: the store never slows a cold run much).

The main process then does no Parquet work (it never imports pyarrow), the store it leaves is
the one a serial sweep leaves (every session a hit next time, the same output), and a write not
yet started when the command fails is dropped, never half-kept."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from evalkit.corpus import parse
from evalkit.corpus.discover import discover
from evalkit.corpus.records import analyse_with_files
from evalkit.store import shards as store_mod
from evalkit.store import snapshot as snapshot_mod
from evalkit.store.shards import CorpusStore, writes_after_output
from evalkit.tables.sweep import run_sweep
from tests.sweep_helpers import aged, cited, put
from tests.test_corpus_store import shards

REPO = Path(__file__).resolve().parents[1]


def corpus(root, n=12):
    for i in range(1, n + 1):
        cited(root, f"cg/ab-r/run-new-{i}.jsonl", 100 * i, 50, calls=1 + i % 3)
    put(root, "cg/ab-r/run-baseline-1.jsonl", text="null\n")  # a crash is stored too
    return aged(root)


def _written_here(directory, fingerprint, root, rows):
    """`write_shard`, leaving a note of the process that wrote (the test's own process or a
    forked worker: both see this module)."""
    name = _real_write_shard(directory, fingerprint, root, rows)
    with open(os.path.join(_NOTES, f"{os.getpid()}-{name}"), "w"):
        pass
    return name


_real_write_shard = store_mod.write_shard
_NOTES = ""


def _noted_writes(tmp_path, monkeypatch):
    """The folder where each shard written leaves its note (`_written_here`), with the pool
    used even for a tiny corpus and several shards written: the writer processes are told."""
    notes = tmp_path / "notes"
    notes.mkdir()
    monkeypatch.setattr(sys.modules[__name__], "_NOTES", str(notes))
    monkeypatch.setattr(parse, "_MIN_PARALLEL_BYTES", 0)
    monkeypatch.setattr(store_mod, "FLUSH_ROWS", 4)
    monkeypatch.setattr(store_mod, "write_shard", _written_here)
    return notes


def test_a_parallel_sweep_writes_its_shards_in_its_workers(tmp_path, monkeypatch):
    root = corpus(tmp_path / "c")
    notes = _noted_writes(tmp_path, monkeypatch)
    cold = run_sweep(root, cache_dir=tmp_path / "cache", jobs=2)
    written = sorted(p.name for p in notes.iterdir())
    assert len(written) >= 3
    # Every shard by a worker, none by this process; each has its side index.
    assert {n.split("-", 1)[0] for n in written} - {str(os.getpid())}
    assert not [n for n in written if n.startswith(f"{os.getpid()}-")]
    names = {p.name for p in shards(tmp_path / "cache")}
    assert names == {n.split("-", 1)[1] for n in written}
    for shard in shards(tmp_path / "cache"):
        assert shard.with_name(shard.name[: -len(".parquet")] + ".index.json").is_file()
    # The store is complete when `run_sweep` returns: every session a hit, the same records.
    warm = run_sweep(root, cache_dir=tmp_path / "cache", jobs=1)
    assert warm.cache_misses == 0 and warm.cache_hits == len(cold.records)
    assert warm.records == cold.records == run_sweep(root, cache=False, jobs=1).records


def test_a_parallel_load_writes_its_frame_files_here_and_its_shards_in_its_workers(
    tmp_path, monkeypatch
):
    """A corpus load writes the frame files itself (it reads them back for its frames) and
    hands the shards that name them to its workers, which write them once they have no more
    sessions to parse; the load waits for them, so the store it leaves is complete."""
    import glob

    import pandas as pd

    from evalkit.corpus.frames import FRAME_NAMES
    from evalkit.corpus.load import load_corpus_frames

    root = corpus(tmp_path / "c")
    notes = _noted_writes(tmp_path, monkeypatch)
    cold = load_corpus_frames(root, cache_dir=tmp_path / "cache", jobs=2)
    written = sorted(p.name for p in notes.iterdir())
    assert len(written) >= 3
    assert not [n for n in written if n.startswith(f"{os.getpid()}-")]  # none by this process
    assert {p.name for p in shards(tmp_path / "cache")} == {n.split("-", 1)[1] for n in written}
    frame_files = glob.glob(str(tmp_path / "cache" / "**" / "frames-*.parquet"), recursive=True)
    assert frame_files
    # Every session a hit next time, its frames read from the files the shards name.
    for plan in (tmp_path / "cache").rglob("plan-*.out"):
        plan.unlink()
    warm = load_corpus_frames(root, cache_dir=tmp_path / "cache", jobs=1)
    assert (warm.cache_hits, warm.cache_misses) == (cold.cache_misses, 0)
    want = load_corpus_frames(root, cache=False, jobs=1)
    for name in FRAME_NAMES:
        pd.testing.assert_frame_equal(warm.frame(name), want.frame(name))
        pd.testing.assert_frame_equal(cold.frame(name), want.frame(name))


def _noted_walk(root):
    """`tree_state`, leaving a note of the process that walked (a forked worker runs it too)."""
    with open(os.path.join(_NOTES, f"walk-{os.getpid()}"), "w"):
        pass
    return _real_tree_state(root)


_real_tree_state = snapshot_mod.tree_state


def test_a_cold_parallel_load_walks_its_tree_in_a_worker_and_writes_a_plan_that_is_used(
    tmp_path, monkeypatch, trusted
):
    """No plan and no shard: the parser workers start before discovery and the first walks
    the tree for the plan; the plan, written while the workers write the shards, is kept once
    they are all written, and the next load uses it."""
    import pandas as pd

    from evalkit.corpus import load as load_mod
    from evalkit.corpus.frames import FRAME_NAMES
    from evalkit.corpus.load import load_corpus_frames

    root = corpus(tmp_path / "c")
    notes = _noted_writes(tmp_path, monkeypatch)
    monkeypatch.setattr(snapshot_mod, "tree_state", _noted_walk)
    started = []
    real_ahead = load_mod.workers_ahead
    monkeypatch.setattr(
        load_mod, "workers_ahead", lambda jobs: started.append(jobs) or real_ahead(jobs)
    )
    cache = tmp_path / "cache"
    cold = load_corpus_frames(root, cache_dir=cache, jobs=2)
    assert started == [2] and not parse.started_ahead()  # taken by the parse, and ended
    walkers = [p.name for p in notes.iterdir() if p.name.startswith("walk-")]
    assert walkers and f"walk-{os.getpid()}" not in walkers  # walked by a worker, not here
    shard_writers = {p.name.split("-", 1)[0] for p in notes.iterdir()} - {"walk"}
    assert shard_writers and str(os.getpid()) not in shard_writers
    assert len(list(cache.rglob("plan-*.out"))) == 1
    used = []
    from_plan = load_mod._from_plan
    monkeypatch.setattr(load_mod, "_from_plan", lambda *a: used.append(1) or from_plan(*a))
    warm = load_corpus_frames(root, cache_dir=cache, jobs=2)
    assert used == [1] and started == [2]  # the plan read, no worker started
    assert (warm.cache_hits, warm.cache_misses) == (cold.cache_misses, 0)
    want = load_corpus_frames(root, cache=False, jobs=1)
    for name in FRAME_NAMES:
        pd.testing.assert_frame_equal(warm.frame(name), want.frame(name))
        pd.testing.assert_frame_equal(cold.frame(name), want.frame(name))
    assert warm.records == cold.records == want.records


def test_a_plan_written_while_a_worker_failed_to_write_a_shard_is_not_kept(
    tmp_path, monkeypatch, trusted
):
    """The plan is written before the workers' shards are waited for: one they could not write
    means the next load would parse its sessions, so the plan is dropped, and nothing of it
    is left in the store."""
    from evalkit.corpus import load as load_mod
    from evalkit.corpus.load import load_corpus_frames

    root = corpus(tmp_path / "c")
    _noted_writes(tmp_path, monkeypatch)
    cache = tmp_path / "cache"
    written = []
    write_plan = load_mod._write_plan
    monkeypatch.setattr(
        load_mod, "_write_plan", lambda *a: written.append(write_plan(*a)) or written[-1]
    )
    with pytest.MonkeyPatch.context() as lost:
        lost.setattr(store_mod, "write_pickled_shard", lambda *args: None)  # a lost write
        cold = load_corpus_frames(root, cache_dir=cache, jobs=2)
    assert cold.cache_misses == len(cold.records)
    assert len(written) == 1 and written[0] is not None  # written, then dropped
    assert not list(cache.rglob("plan-*.out")) and not list(cache.rglob(".tmp-*"))
    again = load_corpus_frames(root, cache_dir=cache, jobs=1)  # parses them again, then plans
    assert again.cache_misses > 0 and len(list(cache.rglob("plan-*.out"))) == 1


def test_the_main_process_of_a_parallel_cold_sweep_never_imports_pyarrow(tmp_path):
    # The bundled corpus is large enough for the pool; the store is an empty one of the test's.
    code = (
        "import sys\n"
        "from evalkit.cli import main\n"
        "code = main(sys.argv[1:])\n"
        "print('pyarrow' in sys.modules, file=sys.stderr)\n"
        "sys.exit(code)\n"
    )
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg")}

    def sweep(*extra):
        return subprocess.run(
            [sys.executable, "-c", code, "sweep", "--json", "-j", "2", *extra],
            capture_output=True,
            text=True,
            cwd=REPO,
            env=env,
            check=True,
        )

    cold = sweep()
    assert cold.stderr.rstrip().endswith("False"), cold.stderr
    store = tmp_path / "xdg" / "evalkit" / "corpus-store-v1"
    assert list(store.rglob("shard-*.parquet")) and list(store.rglob("shard-*.index.json"))
    for snapshot in store.rglob("snapshot-*.out"):
        snapshot.unlink()  # the next sweep reads every session from the shards
    warm = sweep()
    assert json.loads(warm.stdout) == json.loads(cold.stdout)
    assert json.loads(warm.stdout) == json.loads(sweep("--no-cache").stdout)


def _stored_rows(tmp_path):
    root = corpus(tmp_path / "c", n=3)
    refs = discover(root).sessions
    store = CorpusStore(tmp_path / "cache", root)
    store.put((ref, *analyse_with_files(str(root), ref)) for ref in refs)
    return store, refs


class _Held:
    """A one-thread pool whose thread is kept busy until `release()`: what is submitted
    meanwhile waits, not started (as a shard behind a worker's last chunks)."""

    def __init__(self):
        self.gate = threading.Event()
        self.pool = ThreadPoolExecutor(1)
        self.pool.submit(self.gate.wait)

    def release(self):
        self.gate.set()
        self.pool.shutdown(wait=True)


def test_the_output_comes_before_the_last_shards_are_waited_for(tmp_path):
    store, refs = _stored_rows(tmp_path)
    held = _Held()
    with writes_after_output():
        store.write_with(held.pool)
        store.flush()
        store.write_with(None)
        store.finish(refs)  # does not wait: the caller prints first
        assert store.writing and not shards(tmp_path / "cache")
        held.release()  # the worker gets to it meanwhile
    assert not store.writing and len(shards(tmp_path / "cache")) == 1
    assert CorpusStore(tmp_path / "cache", tmp_path / "c").lookup(refs[0]) is not None


def test_outside_a_command_finish_waits_for_the_workers_shards(tmp_path):
    store, refs = _stored_rows(tmp_path)
    with ThreadPoolExecutor(1) as pool:
        store.write_with(pool)
        store.flush()
        store.write_with(None)
        store.finish(refs)
        assert not store.writing and len(shards(tmp_path / "cache")) == 1


def test_an_error_after_the_parse_still_keeps_the_shards(tmp_path):
    store, refs = _stored_rows(tmp_path)
    held = _Held()
    with pytest.raises(ValueError), writes_after_output():
        store.write_with(held.pool)
        store.flush()
        store.write_with(None)
        store.finish(refs)
        held.release()
        raise ValueError("--arms: no session is in arm x")
    assert len(shards(tmp_path / "cache")) == 1


def test_an_interrupted_command_drops_the_shards_not_yet_started(tmp_path):
    store, refs = _stored_rows(tmp_path)
    held = _Held()
    with pytest.raises(KeyboardInterrupt), writes_after_output():
        store.write_with(held.pool)
        store.flush()
        store.write_with(None)
        store.finish(refs)
        raise KeyboardInterrupt
    held.release()
    assert not shards(tmp_path / "cache")
    assert not [p for p in (tmp_path / "cache").rglob("*") if p.name.startswith(".tmp-")]


def test_the_sweep_command_prints_before_it_waits_for_the_store(tmp_path, monkeypatch, capsys):
    from evalkit.cli import main

    root = corpus(tmp_path / "c")
    monkeypatch.setattr(parse, "_MIN_PARALLEL_BYTES", 0)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    printed = []
    real_wait = CorpusStore.wait_writes

    def wait_writes(self, **kw):
        printed.append(capsys.readouterr().out)  # what was out when the wait began
        return real_wait(self, **kw)

    monkeypatch.setattr(CorpusStore, "wait_writes", wait_writes)
    assert main(["sweep", str(root), "--json", "-j", "2"]) == 0
    assert printed and json.loads(printed[0])["sessions"]
    warm = run_sweep(root, cache_dir=tmp_path / "xdg" / "evalkit", jobs=1)
    assert warm.cache_misses == 0


class _Recording:
    """A pool that only records what it is given."""

    def __init__(self):
        self.jobs = []

    def submit(self, fn, *args):
        from concurrent.futures import Future

        self.jobs.append((fn, args))
        return Future()


def test_shards_wait_until_the_workers_have_nothing_left_to_parse(tmp_path, monkeypatch):
    store, refs = _stored_rows(tmp_path)
    pool = _Recording()
    store.write_with(pool)
    store.flush()
    assert pool.jobs == []  # held back: the workers are still parsing
    store.release_writes()
    assert len(pool.jobs) == 1 and pool.jobs[0][0] is store_mod.write_pickled_shard
    assert pool.jobs[0][1][-1] is True  # the workers have nothing left to parse
    # Once released, a shard goes at once; and a store never holds more than HELD_WRITES.
    store.put((ref, *analyse_with_files(str(tmp_path / "c"), ref)) for ref in refs)
    store.flush()
    assert len(pool.jobs) == 2
    monkeypatch.setattr(store_mod, "HELD_WRITES", 1)
    store.write_with(pool)
    for _ in range(3):
        store.put((ref, *analyse_with_files(str(tmp_path / "c"), ref)) for ref in refs)
        store.flush()
    assert len(pool.jobs) == 4  # the first two together once a second was held, then one held
    assert [job[1][-1] for job in pool.jobs[2:]] == [False, False]  # given while parsing
    store.write_with(None)  # hands over what is still held
    assert len(pool.jobs) == 5 and pool.jobs[4][1][-1] is True
    # A failed run drops what is still held: nothing is written after a failure.
    store.write_with(pool)
    store.put((ref, *analyse_with_files(str(tmp_path / "c"), ref)) for ref in refs)
    store.flush()
    store.write_with(None, drop=True)
    assert len(pool.jobs) == 5 and not store._queued


@pytest.mark.parametrize("start", [True, False])
def test_the_parent_releases_the_shards_once_no_chunk_is_left_to_take_back(
    tmp_path, monkeypatch, start
):
    # start=False: no worker starts anything, so this process takes every chunk back first.
    from tests.test_corpus_parse import _Pool, _shared_out

    pool = _Pool(start=start)
    calls = []
    real_share = parse._share

    def share(*args, **kw):
        def dispatched():  # every chunk queued for a worker is started or taken back by now
            calls.append([f for f in pool.futures if not (f.done() or f.running())])

        return real_share(*args, dispatched=dispatched, **kw)

    monkeypatch.setattr(parse, "_share", share)
    chunks, here, got, expected = _shared_out(tmp_path, monkeypatch, pool)
    # Released once; or never, when this process parsed the last chunk itself and nothing was
    # left to wait for (the shards then go when the store stops writing with the pool).
    assert got == expected and calls == ([[]] if start else [])


_WORKER = r"""
import multiprocessing, pickle, sys

def parquet(rows):
    import pyarrow as pa
    import pyarrow.parquet as pq
    from evalkit.store import shards

    sink = pa.BufferOutputStream()
    pq.write_table(shards._table(rows), sink)
    return sink.getvalue().to_pybytes()

def in_worker(rows):
    from evalkit.store import shards

    shards._pyarrow_without_numpy()
    return parquet(rows), "numpy" in sys.modules

if __name__ == "__main__":
    rows = pickle.loads(open(sys.argv[1], "rb").read())
    with multiprocessing.get_context("fork").Pool(1) as pool:
        there, numpy = pool.apply(in_worker, (rows,))
    here = parquet(rows)  # this process: pyarrow as usual, with numpy
    print(numpy, "numpy" in sys.modules, there == here)
"""


def test_a_worker_writes_a_shard_with_pyarrow_alone_and_the_same_bytes(tmp_path):
    import pickle

    store, _ = _stored_rows(tmp_path)
    (tmp_path / "rows.pkl").write_bytes(pickle.dumps(store._pending))
    (tmp_path / "worker.py").write_text(_WORKER)
    got = subprocess.run(
        [sys.executable, str(tmp_path / "worker.py"), str(tmp_path / "rows.pkl")],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        check=True,
    )
    # The worker never loaded numpy; this process did; the shard's bytes are the same.
    assert got.stdout.split() == ["False", "True", "True"], got.stderr


def test_a_serial_command_writes_its_last_shards_after_its_output(tmp_path, monkeypatch):
    store, refs = _stored_rows(tmp_path)
    monkeypatch.setattr(store_mod, "HELD_WRITES", 2)
    with writes_after_output():
        for _ in range(4):  # four shards: the first two written at once, the last two kept
            store.put((ref, *analyse_with_files(str(tmp_path / "c"), ref)) for ref in refs)
            store.flush()
        assert len(shards(tmp_path / "cache")) == 2
        store.finish(refs)
        assert store.writing and len(shards(tmp_path / "cache")) == 2  # the output comes first
    assert not store.writing and len(shards(tmp_path / "cache")) == 4
    # Outside a command nothing waits: every shard is written as it is flushed.
    other = CorpusStore(tmp_path / "cache2", tmp_path / "c")
    other.put((ref, *analyse_with_files(str(tmp_path / "c"), ref)) for ref in refs)
    other.flush()
    assert len(shards(tmp_path / "cache2")) == 1


def test_an_interrupted_serial_command_writes_no_held_shard(tmp_path):
    store, refs = _stored_rows(tmp_path)
    with pytest.raises(KeyboardInterrupt), writes_after_output():
        store.flush()
        store.finish(refs)
        raise KeyboardInterrupt
    assert not shards(tmp_path / "cache")


def test_the_serial_sweep_command_prints_before_it_writes_its_shards(tmp_path, monkeypatch, capsys):
    from evalkit.cli import main

    root = corpus(tmp_path / "c")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    printed = []
    real_write = CorpusStore._write

    def write(self, rows):
        printed.append(capsys.readouterr().out)  # what was out when the shard was written
        return real_write(self, rows)

    monkeypatch.setattr(CorpusStore, "_write", write)
    assert main(["sweep", str(root), "--json", "-j", "1"]) == 0
    assert printed and json.loads(printed[0])["sessions"]
    warm = run_sweep(root, cache_dir=tmp_path / "xdg" / "evalkit", jobs=1)
    assert warm.cache_misses == 0


@pytest.mark.parametrize("workers", [False, True])
def test_a_shard_written_after_the_output_holds_the_payloads_as_they_were_parsed(tmp_path, workers):
    # A row is built only when its shard is written (after the output, or by a worker):
    # what the caller does meanwhile with the payloads it was handed never reaches the store.
    root = corpus(tmp_path / "c", n=3)
    refs = discover(root).sessions
    parsed = [(ref, *analyse_with_files(str(root), ref)) for ref in refs]
    want = {ref.log: json.dumps(p, sort_keys=True) for ref, p, _ in parsed}
    store = CorpusStore(tmp_path / "cache", root)
    held = _Held()
    with writes_after_output():
        if workers:
            store.write_with(held.pool)
        store.put(parsed)
        store.flush()
        store.write_with(None)
        store.finish(refs)
        for _, p, _ in parsed:  # the caller changes every payload it was handed
            p["chars"] = -1
            p.setdefault("calls", []).append("changed")
        assert store.writing
        held.release()
    again = CorpusStore(tmp_path / "cache", root)
    got = {ref.log: json.dumps(again.lookup(ref), sort_keys=True) for ref in refs}
    assert got == want


def test_a_store_holds_back_shards_within_a_byte_budget_too(tmp_path, monkeypatch):
    # Within HELD_WRITES, the bytes held decide: shards wait until they pass HELD_BYTES.
    store, refs = _stored_rows(tmp_path)
    pool = _Recording()
    store.write_with(pool)
    store.flush()
    (one,) = store._queued
    monkeypatch.setattr(store_mod, "HELD_BYTES", len(one) + len(one) // 2)

    def again():
        store.put((ref, *analyse_with_files(str(tmp_path / "c"), ref)) for ref in refs)

    again()
    store.flush()
    assert len(pool.jobs) == 2 and not store._queued  # two shards pass it: both handed over
    assert [job[1][-1] for job in pool.jobs] == [False, False]  # while the workers parse
    again()
    store.flush()
    assert len(pool.jobs) == 2 and len(store._queued) == 1  # one fits: held
    store.write_with(None)
    # A serial command keeps what fits for after its output, and writes the oldest now.
    other = CorpusStore(tmp_path / "cache2", tmp_path / "c")
    with writes_after_output():
        for _ in range(3):
            other.put((ref, *analyse_with_files(str(tmp_path / "c"), ref)) for ref in refs)
            other.flush()
        assert len(shards(tmp_path / "cache2")) == 2 and len(other._later) == 1
        other.finish(refs)
    assert len(shards(tmp_path / "cache2")) == 3


_COMMAND = r"""
import sys
import evalkit.cli

sys.argv = ["evalkit", *sys.argv[1:]]
code = evalkit.cli.main({argv})
print(code, "numpy" in sys.modules, "pyarrow" in sys.modules, file=sys.stderr)
"""


@pytest.mark.parametrize("command_line", [True, False])
def test_the_command_line_writes_its_serial_shards_with_pyarrow_alone(tmp_path, command_line):
    """`evalkit sweep -j 1` ends once its last shards are written after the output: pyarrow is
    then imported without numpy (most of its import). A caller of `main(argv)` goes on after
    it, so its pyarrow is always the usual one, with numpy (a pyarrow imported without numpy
    crashes on numpy's values). The store is the same either way."""
    root = corpus(tmp_path / "c")
    cache = tmp_path / "cache"
    args = ["sweep", str(root), "--json", "-j", "1", "--cache-dir", str(cache)]
    script = _COMMAND.format(argv="None" if command_line else "sys.argv[1:]")
    cold = subprocess.run(
        [sys.executable, "-c", script, *args], capture_output=True, text=True, cwd=REPO
    )
    assert cold.stderr.split()[-3:] == ["0", str(not command_line), "True"], cold.stderr
    assert shards(cache)
    warm = run_sweep(root, cache_dir=cache, jobs=1)
    assert warm.cache_misses == 0 and warm.cache_hits == len(discover(root).sessions)
    assert json.loads(cold.stdout) == json.loads(
        subprocess.run(
            [sys.executable, "-m", "evalkit", *args[:-2], "--no-cache"],
            capture_output=True,
            text=True,
            cwd=REPO,
            check=True,
        ).stdout
    )


_PARALLEL_COMMAND = r"""
import os, sys, time
import evalkit.cli
from evalkit.corpus import parse
from evalkit.store import shards

parse._MIN_PARALLEL_BYTES = 0  # the pool even for a tiny corpus
shards.FLUSH_ROWS = 1  # a shard a session
shards.TAKE_BACK_AT = {at}
real = shards.write_shard

def write_shard(*args):
    if os.getpid() != MAIN:
        time.sleep(0.2)  # a slow worker: this process's output is out before it is done
    name = real(*args)
    print("wrote", "here" if os.getpid() == MAIN else "worker", file=sys.stderr, flush=True)
    return name

MAIN = os.getpid()
shards.write_shard = write_shard
sys.argv = ["evalkit", *sys.argv[1:]]
code = evalkit.cli.main({argv})
print("numpy", "numpy" in sys.modules, file=sys.stderr)
"""


@pytest.mark.parametrize(("command_line", "at"), [(True, 4), (True, 1000), (False, 4)])
def test_the_command_line_takes_back_the_shards_no_worker_started_by_its_output(
    tmp_path, command_line, at
):
    """The workers are handed the shards once the parse is over; the command line's own
    process, which has only its output left to print, then takes back those no worker has
    started and writes them itself (its pyarrow without numpy), from the last. A caller of
    `main(argv)` leaves them all to the workers. Either way the store holds every session, and
    the output is the same. With fewer waiting than `TAKE_BACK_AT`, the workers write them
    all (this process's own import of pyarrow would cost more than it saves)."""
    root = corpus(tmp_path / "c")
    cache = tmp_path / "cache"
    args = ["sweep", str(root), "--json", "-j", "2", "--cache-dir", str(cache)]
    script = _PARALLEL_COMMAND.format(argv="None" if command_line else "sys.argv[1:]", at=at)
    cold = subprocess.run(
        [sys.executable, "-c", script, *args], capture_output=True, text=True, cwd=REPO
    )
    notes = cold.stderr.split()
    writers = [notes[i + 1] for i, w in enumerate(notes) if w == "wrote"]
    here, workers = writers.count("here"), writers.count("worker")
    # The worker, slow here, started a shard or two; this process wrote the rest (13 shards).
    takes = command_line and at < 10
    assert (here > 0 and workers > 0) if takes else (here == 0 < workers), cold.stderr
    assert notes[-2:] == ["numpy", "False"]
    warm = run_sweep(root, cache_dir=cache, jobs=1)
    assert warm.cache_misses == 0 and warm.cache_hits == len(discover(root).sessions)
    plain = subprocess.run(
        [sys.executable, "-m", "evalkit", *args[:-2], "--no-cache"],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=True,
    )
    assert json.loads(cold.stdout) == json.loads(plain.stdout)
