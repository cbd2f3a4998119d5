"""A cold parallel sweep starts its parser workers before it discovers the sessions, and the
first walks the tree for the output snapshot meanwhile (issue 26: parallelism that pays on two
cores); the store's side index is written from the rows' JSON texts (issue 22: the store never
slows a cold run much). Neither changes an output, a stored row or a snapshot."""

from __future__ import annotations

import json
import os
from concurrent.futures import Future

import pytest

from evalkit.cli import main
from evalkit.corpus import parse
from evalkit.store import shards as store_mod
from evalkit.store import snapshot as snapshot_mod
from evalkit.tables import sweep as sweep_mod
from tests.sweep_helpers import aged, cited, put, stored_row

_NOTES = ""
_real_tree_state = snapshot_mod.tree_state


def _noted_walk(root):
    """`tree_state`, leaving a note of the process that walked (pickled by name, so a forked
    worker runs it too)."""
    with open(os.path.join(_NOTES, str(os.getpid())), "w"):
        pass
    return _real_tree_state(root)


def corpus(root, n=8):
    for i in range(1, n + 1):
        cited(root, f"cg22/ab-express/run-new-{i}.jsonl", 100 * i, 50, calls=1 + i % 3)
        cited(root, f"cg22/ab-express/run-baseline-{i}.jsonl", 50 * i, 90)
    put(root, "broken.jsonl", text="null\n")
    return aged(root)


def sweep(capsys, *argv):
    code = main(["sweep", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def pool_for_any_size(monkeypatch):
    monkeypatch.setattr(parse, "_MIN_PARALLEL_BYTES", 0)


@pytest.fixture
def ahead(monkeypatch):
    """The `jobs` of every `workers_ahead` the sweep starts (it still runs)."""
    started = []
    real = parse.workers_ahead

    def counting(jobs):
        started.append(jobs)
        return real(jobs)

    monkeypatch.setattr(parse, "workers_ahead", counting)
    return started


def test_a_cold_sweep_walks_its_tree_in_a_worker_and_prints_what_it_always_did(
    tmp_path, monkeypatch, capsys, pool_for_any_size, ahead, trusted
):
    root = corpus(tmp_path / "c")
    notes = tmp_path / "notes"
    notes.mkdir()
    monkeypatch.setattr(__import__(__name__, fromlist=["_NOTES"]), "_NOTES", str(notes))
    monkeypatch.setattr(snapshot_mod, "tree_state", _noted_walk)
    cache = tmp_path / "cache"
    code, cold, _ = sweep(capsys, root, "--json", "--cache-dir", cache, "-j", "2")
    assert code == 0 and ahead == [2]
    walkers = {int(p.name) for p in notes.iterdir()}
    assert walkers and os.getpid() not in walkers  # walked by the worker, not here
    assert list(cache.rglob("snapshot-*.out"))  # and the snapshot written from that walk
    # The same output as a serial sweep with no store, and the stored output replayed next.
    _, serial, _ = sweep(capsys, root, "--json", "--no-cache", "-j", "1")
    assert json.loads(cold) == json.loads(serial)
    ran = []
    monkeypatch.setattr(sweep_mod, "run_sweep", lambda *a, **k: ran.append(1))
    _, replayed, _ = sweep(capsys, root, "--json", "--cache-dir", cache, "-j", "2")
    assert replayed == cold and not ran and ahead == [2]


def test_the_workers_start_ahead_only_when_every_session_will_be_parsed(
    tmp_path, capsys, pool_for_any_size, ahead, trusted
):
    root = corpus(tmp_path / "c")
    cache = tmp_path / "cache"
    _, first, _ = sweep(capsys, root, "--json", "--cache-dir", cache, "-j", "2")
    assert ahead == [2]
    for snapshot in cache.rglob("snapshot-*.out"):
        snapshot.unlink()
    # A store with shards: the sessions are read from it, no worker is started ahead.
    _, warm, _ = sweep(capsys, root, "--json", "--cache-dir", cache, "-j", "2")
    assert ahead == [2] and warm == first
    _, serial, _ = sweep(capsys, root, "--json", "--no-cache", "-j", "1")
    assert ahead == [2]  # one process: no worker at all
    _, parallel, _ = sweep(capsys, root, "--json", "--no-cache", "-j", "2")
    assert ahead == [2, 2]  # nothing stored: every session parsed
    assert json.loads(serial) == json.loads(parallel) == json.loads(first)


def test_a_pool_started_ahead_is_taken_over_once_or_ended_with_its_block():
    with parse.workers_ahead(2) as pool:
        assert parse._pool(1) is pool  # the parse takes it over, and ends it as its own
        other = parse._pool(1)
        assert other is not pool
        other.shutdown()
        pool.shutdown()
    with parse.workers_ahead(3) as pool:
        assert pool.submit(os.getpid).result() != os.getpid()
    with pytest.raises(RuntimeError):  # not taken: ended when the block ended
        pool.submit(os.getpid)
    assert parse._ahead is None


class _Failing:
    """An executor whose every task fails, as when its worker died."""

    def submit(self, fn, *args):
        job: Future = Future()
        job.set_exception(RuntimeError("the worker died"))
        return job


def test_a_walk_that_failed_in_its_worker_writes_and_reads_no_snapshot(tmp_path, trusted):
    root = corpus(tmp_path / "c", n=1)
    snap = snapshot_mod.Snapshot(tmp_path / "store", str(root), {}, later=True)
    snap.walk(_Failing())
    assert snap.writer() is None
    good = snapshot_mod.Snapshot(tmp_path / "store", str(root), {})
    writer = good.writer()
    writer.write("out")
    writer.commit()
    assert good.exists() and good.read() is not None
    failed = snapshot_mod.Snapshot(tmp_path / "store", str(root), {}, later=True)
    failed.walk(_Failing())
    assert failed.exists() and failed.read() is None  # a miss, never an error


def test_a_snapshot_walked_later_has_the_state_of_one_walked_at_once(tmp_path):
    root = corpus(tmp_path / "c", n=2)
    now = snapshot_mod.Snapshot(tmp_path / "store", str(root), {})
    later = snapshot_mod.Snapshot(tmp_path / "store", str(root), {}, later=True)
    later.walk()
    assert later.tree.digest == now.tree.digest and later.path == now.path


def _index(columns_json):
    row = stored_row(columns_json)
    data = store_mod._index_doc([row], b"shard bytes")
    return json.loads(data)["index"]["fast"], store_mod._index_columns(data, b"shard bytes")


@pytest.mark.parametrize(
    ("value", "fast"),
    [
        ([2**63 - 1, -(2**63), 2**64 - 1], True),  # orjson reads these exactly
        ([2**64], False),
        ([-(2**63) - 1], False),
        (["12345678901234567890123"], False),  # digits in a string: only the speed
        ([1.5, "1234567890123456789"], True),
        ({"x": [float("nan")]}, False),
    ],
)
def test_the_index_of_json_texts_says_whether_orjson_reads_it_exactly(value, fast):
    text = json.dumps(value, ensure_ascii=True, allow_nan=True, separators=(",", ":")).encode()
    got_fast, columns = _index(text)
    assert got_fast is fast
    read = columns["p_ledger"][0]
    assert json.dumps(read, allow_nan=True) == json.dumps(value, allow_nan=True)


def test_the_index_of_json_texts_is_the_index_of_their_values(tmp_path):
    # The document holds exactly what encoding the decoded values gives (the former way).
    texts = [b'{"a":[1,2.5,"\\ud83d\\ude00"],"b":null}', b"[]", None, b'"\\u00e9"']
    rows = [
        {
            "session": f"s{i}".encode(),
            "files": [b"f"],
            "states": [[1, 2, 3, 4]],
            "digests": [b""],
            "racy": False,
            "p_ledger": t,
        }
        for i, t in enumerate(texts)
    ]
    body = store_mod._index_body(store_mod._index_doc(rows, b"x"))
    columns = {
        c: [store_mod._to_index(r.get(c), how) for r in rows] for c, how in store_mod._INDEX_COLUMNS
    }
    expected = json.dumps(columns, ensure_ascii=True, separators=(",", ":")).encode()
    assert body.endswith(b'"columns":' + expected + b"}")


def test_run_sweep_starts_its_workers_ahead_when_it_will_parse_every_session(
    tmp_path, pool_for_any_size, ahead
):
    root = corpus(tmp_path / "c")
    cold = sweep_mod.run_sweep(root, cache_dir=tmp_path / "cache", jobs=2)
    assert ahead == [2]
    warm = sweep_mod.run_sweep(root, cache_dir=tmp_path / "cache", jobs=2)
    assert ahead == [2] and warm.cache_misses == 0  # read from the store: no worker
    serial = sweep_mod.run_sweep(root, cache=False, jobs=1)
    assert ahead == [2]
    parallel = sweep_mod.run_sweep(root, cache=False, jobs=2)
    assert ahead == [2, 2]
    assert cold.records == warm.records == serial.records == parallel.records
    assert parse._ahead is None  # every pool taken over or ended


class _Pool:
    def __init__(self):
        self.shut = []

    def shutdown(self, **kw):
        self.shut.append(kw)


@pytest.mark.parametrize("cancel", [False, True])
def test_the_pool_writing_the_shards_is_ended_once_they_are_written(tmp_path, cancel):
    # Ended (its threads joined, its pipes closed) before the command exits: Python 3.11's exit
    # otherwise woke a pool closing its pipe meanwhile, and printed a traceback.
    store = store_mod.CorpusStore(tmp_path / "cache", tmp_path)
    pool = _Pool()
    store.end_after_writes(pool)
    store.wait_writes(cancel=cancel)
    assert pool.shut == [{"wait": True, "cancel_futures": cancel}]
    store.wait_writes()
    assert len(pool.shut) == 1  # once


def test_a_parallel_cold_command_prints_nothing_on_stderr_and_leaves_no_worker(tmp_path):
    import subprocess
    import sys

    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    code = (
        "import sys, multiprocessing\n"
        "from evalkit.cli import main\n"
        "code = main(sys.argv[1:])\n"
        "print(len(multiprocessing.active_children()), file=sys.stderr)\n"
        "sys.exit(code)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, "sweep", "--json", "-j", "2"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    assert done.stderr.strip().splitlines()[-1] == "0"  # every worker ended before the exit
    assert json.loads(done.stdout)["sessions"] > 0
