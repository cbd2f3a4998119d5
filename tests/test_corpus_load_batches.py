"""`load_corpus` from a store, a batch of sessions at a time (evalkit/corpus/load.py, issue 16).

A warm load reads the store `LOAD_BATCH` sessions at a time and builds each frame in pieces;
the frames, errors, records and cache counts are those of a load without a store, whatever the
batch size, however the sessions are spread over shards, when some sessions changed since they
were stored, and when a shard in the middle of the store is damaged (it is refused, its
sessions parsed again).
"""

from __future__ import annotations

import pandas as pd
import pytest

import evalkit
from evalkit.corpus import load as load_mod
from evalkit.corpus.frames import FRAME_NAMES
from evalkit.store import shards as store_mod
from tests.sweep_helpers import cited, put

RUNS = 6


def corpus(root):
    for i in range(1, RUNS + 1):
        cited(root, f"cg22/ab-express/run-baseline-{i}.jsonl", 100 * i, 900, calls=1 + i % 3)
        if i == 3:
            put(root, "cg22/ab-express/broken.jsonl", text="null\n")  # a crash, in the middle
        cited(root, f"cg22/ab-express/run-new-{i}.jsonl", 900, 100 * i, calls=1 + i % 2)
    put(root, "cg22/ab-express/run-new-9.jsonl")  # no explore
    put(root, "notes.txt", text="not a transcript\n")
    return root


SESSIONS = 2 * RUNS + 2  # the transcripts, the crash included


@pytest.fixture
def small_batches(monkeypatch):
    """Batches of 2 sessions, shards of about 3 rows: several of each on a small corpus."""
    monkeypatch.setattr(load_mod, "LOAD_BATCH", 2)
    monkeypatch.setattr(store_mod, "FLUSH_ROWS", 3)


def shards(cache_dir):
    return sorted(cache_dir.rglob("shard-*.parquet"))


def assert_same(got, want, errors=("cg22/ab-express/broken.jsonl",)):
    for name in FRAME_NAMES:
        pd.testing.assert_frame_equal(got.frame(name), want.frame(name), check_exact=True)
    assert got.errors == want.errors and [e.log for e in got.errors] == list(errors)
    assert got.records == want.records


def load(root, cache_dir, jobs=1):
    return evalkit.load_corpus(root, cache_dir=cache_dir, jobs=jobs)


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_warm_load_read_in_batches_gives_the_frames_of_a_load_without_store(
    tmp_path, small_batches, jobs
):
    root = corpus(tmp_path / "c")
    fresh = evalkit.load_corpus(root, cache=False, jobs=1)
    assert len(fresh.frame("calls")) > 2 * load_mod.LOAD_BATCH  # more than one piece
    cold = load(root, tmp_path / "store", jobs)
    assert len(shards(tmp_path / "store")) >= 3
    warm = load(root, tmp_path / "store", jobs)
    assert (cold.cache_hits, cold.cache_misses) == (0, SESSIONS)
    assert (warm.cache_hits, warm.cache_misses) == (SESSIONS, 0)
    assert_same(cold, fresh)
    assert_same(warm, fresh)


def test_a_partly_stored_corpus_keeps_discovery_order(tmp_path, small_batches):
    root = corpus(tmp_path / "c")
    load(root, tmp_path / "store")
    # Two sessions changed since they were stored: misses, parsed after the hits are read.
    cited(root, "cg22/ab-express/run-baseline-2.jsonl", 333, 777, calls=2)
    cited(root, "cg22/ab-express/run-new-5.jsonl", 444, 555, calls=3)
    fresh = evalkit.load_corpus(root, cache=False, jobs=1)
    again = load(root, tmp_path / "store")
    assert (again.cache_hits, again.cache_misses) == (SESSIONS - 2, 2)
    assert_same(again, fresh)
    assert list(again.sessions_df()["log"]) == list(fresh.sessions_df()["log"])


def test_the_layout_option_skips_sessions_between_stored_ones(tmp_path, small_batches):
    root = corpus(tmp_path / "c")
    cited(root, "misc/other.jsonl", 10, 10)  # not an ab-arm session
    fresh = evalkit.load_corpus(root, layout="ab-arm", cache=False, jobs=1)
    load(root, tmp_path / "store")
    warm = evalkit.load_corpus(root, layout="ab-arm", cache_dir=tmp_path / "store", jobs=1)
    kept = [r.log for r in warm.records if r.status != "skipped"]
    assert "misc/other.jsonl" not in kept and len(kept) == SESSIONS - 1  # not the crash either
    assert (warm.cache_hits, warm.cache_misses) == (len(kept), 0)
    assert_same(warm, fresh, errors=())


def _unreadable(path):
    path.write_bytes(b"PAR1 not a shard at all PAR1")


def _bad_row(path):
    """The shard still reads as a table of the store's schema, one row's status is unknown."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    status = table.column("p_status").to_pylist()
    status[-1] = b"no such status"
    i = table.schema.get_field_index("p_status")
    table = table.set_column(i, table.schema.field(i), pa.array(status, pa.binary()))
    pq.write_table(table, path)


@pytest.mark.parametrize("damage", [_unreadable, _bad_row])
def test_a_bad_shard_in_the_middle_is_refused_and_the_frames_stay_equal(
    tmp_path, small_batches, damage
):
    root = corpus(tmp_path / "c")
    fresh = evalkit.load_corpus(root, cache=False, jobs=1)
    load(root, tmp_path / "store")
    stored = shards(tmp_path / "store")
    assert len(stored) >= 3
    middle = stored[len(stored) // 2]
    held = len(pd.read_parquet(middle, columns=["session"]))
    damage(middle)
    got = load(root, tmp_path / "store")
    assert not middle.exists()  # refused and removed
    assert got.cache_hits + got.cache_misses == SESSIONS
    assert 1 <= got.cache_misses <= held
    assert_same(got, fresh)
    # What was parsed again is stored again: the next load reads only the store.
    again = load(root, tmp_path / "store")
    assert_same(again, fresh)
