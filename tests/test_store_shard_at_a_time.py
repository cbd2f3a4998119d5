"""A warm sweep reads the corpus store a shard at a time (`CorpusStore.lookup_all`) and keeps a
compact record per session (issue 16: bounded memory): the same hits, payloads and records as a
lookup of each session over the whole store."""

from __future__ import annotations

import os
import shutil

from evalkit.corpus import records
from evalkit.corpus.discover import discover
from evalkit.corpus.records import analyse_with_files, record_from_payload
from evalkit.metrics.figures import RunFigures
from evalkit.store import rows
from evalkit.store import shards as store_mod
from evalkit.store.shards import CorpusStore
from evalkit.tables.sweep import run_sweep
from tests.sweep_helpers import aged, cited, put
from tests.test_corpus_store import shards


def corpus(root):
    cited(root, "cg22/ab-express/run-baseline-1.jsonl", 700, 300)
    cited(root, "cg22/ab-express/run-new-1.jsonl", 900, 100, calls=2)
    cited(root, "cg22/ab-express/run-new-2.jsonl", 400, 600)
    put(root, "cg22/ab-express/run-baseline-2.jsonl")  # no explore
    put(root, "broken.jsonl", text="null\n")  # crash
    return aged(root)


def each_lookup(cache_dir, root):
    """Hits by index, hits and misses, by `lookup` of each session over the whole store."""
    store = CorpusStore(cache_dir, root)
    refs = discover(root).sessions
    got = {i: p for i, ref in enumerate(refs) if (p := store.lookup(ref)) is not None}
    return got, store.hits, store.misses


def shard_at_a_time(cache_dir, root):
    store = CorpusStore(cache_dir, root)
    got = dict(store.lookup_all(discover(root).sessions))
    assert store._rows is None  # the whole store was never loaded
    return got, store.hits, store.misses


def many_shards(tmp_path, monkeypatch):
    """A store of one shard per session, then a newer shard for one changed session (its old
    row stays in an older shard) and a newer row with the same files for another session."""
    root = corpus(tmp_path / "c")
    cache_dir = tmp_path / "cache"
    monkeypatch.setattr(store_mod, "FLUSH_ROWS", 1)
    run_sweep(root, cache_dir=cache_dir, jobs=1)
    changed = cited(root, "cg22/ab-express/run-new-2.jsonl", 100, 900)  # its old row misses
    st = changed.stat()
    os.utime(changed, ns=(st.st_atime_ns, st.st_mtime_ns - 60 * 10**9))  # not racy
    run_sweep(root, cache_dir=cache_dir, jobs=1)
    # Two rows that both match the files of run-baseline-1: the newer (a doctored payload)
    # is the one every lookup takes.
    ref = next(r for r in discover(root).sessions if r.log.endswith("run-baseline-1.jsonl"))
    payload, manifest = analyse_with_files(str(root), ref)
    store = CorpusStore(cache_dir, root)
    store.put([(ref, {**payload, "tool_calls": 99}, manifest)])
    store.flush()
    return root, cache_dir


def test_lookup_all_gives_what_each_lookup_gives(tmp_path, monkeypatch):
    root, cache_dir = many_shards(tmp_path, monkeypatch)
    assert len(shards(cache_dir)) == 7
    each = each_lookup(cache_dir, root)
    assert shard_at_a_time(cache_dir, root) == each
    got, hits, misses = each
    assert (hits, misses) == (5, 0)
    baseline = next(i for i, r in enumerate(discover(root).sessions) if "baseline-1" in r.log)
    assert got[baseline]["tool_calls"] == 99  # the newest matching row


def test_lookup_all_reads_one_shard_before_its_first_hit(tmp_path, monkeypatch):
    root, cache_dir = many_shards(tmp_path, monkeypatch)
    store = CorpusStore(cache_dir, root)
    read = []
    real = store._read_shard
    monkeypatch.setattr(store, "_read_shard", lambda name: read.append(name) or real(name))
    it = store.lookup_all(discover(root).sessions)
    next(it)
    assert read == [shards(cache_dir)[-1].name]  # the newest shard only
    rest = list(it)
    assert len(read) == 7 and len(rest) == 4


def test_a_refused_shard_is_refused_by_both_reads_alike(tmp_path, monkeypatch):
    root, cache_dir = many_shards(tmp_path, monkeypatch)
    newest, middle = shards(cache_dir)[-1], shards(cache_dir)[-2]
    for shard in (newest, middle):
        shard.write_bytes(b"not a shard")
    one, two = tmp_path / "one", tmp_path / "two"
    shutil.copytree(cache_dir, one)
    shutil.copytree(cache_dir, two)
    each = each_lookup(one, root)
    assert shard_at_a_time(two, root) == each
    assert each[1:] == (4, 1)  # the changed session's only valid row was refused
    assert [p.name for p in shards(one)] == [p.name for p in shards(two)]
    assert newest.name not in {p.name for p in shards(two)}


def test_a_store_its_sessions_fill_is_not_merged_again(tmp_path, monkeypatch):
    root = corpus(tmp_path / "c")
    cache_dir = tmp_path / "cache"
    monkeypatch.setattr(store_mod, "FLUSH_ROWS", 1)
    monkeypatch.setattr(store_mod, "_MERGE_AT", 2)
    monkeypatch.setattr(store_mod, "_ROWS_PER_SHARD", 1)  # five sessions fill five shards
    run_sweep(root, cache_dir=cache_dir, jobs=1)
    before = [p.name for p in shards(cache_dir)]
    assert len(before) == 5
    warm = run_sweep(root, cache_dir=cache_dir, jobs=1)
    assert warm.cache_hits == 5 and [p.name for p in shards(cache_dir)] == before
    monkeypatch.setattr(store_mod, "_ROWS_PER_SHARD", 128)  # now they fit in one
    merged = run_sweep(root, cache_dir=cache_dir, jobs=1)
    assert merged.cache_hits == 5 and len(shards(cache_dir)) == 1
    assert run_sweep(root, cache_dir=cache_dir, jobs=1).records == merged.records


def test_records_share_equal_counts_and_numbers_held_twice(tmp_path):
    root = corpus(tmp_path / "c")
    found = {r.log: r for r in run_sweep(root, cache=False, jobs=1).records}
    a, b = found["cg22/ab-express/run-baseline-1.jsonl"], found["cg22/ab-express/run-new-2.jsonl"]
    assert a.figures.counts == b.figures.counts and a.figures.counts is b.figures.counts
    assert a.figures.alloc_used == a.cited_chars and a.figures.alloc_used is a.cited_chars


def test_a_compact_record_equals_the_payload_it_came_from(tmp_path):
    root = corpus(tmp_path / "c")
    for ref in discover(root).sessions:
        payload, _ = analyse_with_files(str(root), ref)
        rec = record_from_payload(ref, payload)
        assert [list(vars_of(c)) for c in rec.calls] == payload.get("calls", [])
        if "figures" in payload:
            assert rec.figures == RunFigures.from_payload(payload["figures"])
            assert type(rec.figures.counts) is dict
        for name in ("chars", "cited_chars", "path_chars"):
            assert getattr(rec, name) == payload.get(name, 0)


def vars_of(call):
    return (getattr(call, f) for f in rows.CALL_FIELDS)


def test_sharing_never_joins_values_that_differ_in_type_or_sign():
    same = records._same
    assert same(5000, 5000) == 5000
    assert type(same(5000, 5000.0)) is float and type(same(1, True)) is bool
    assert str(same(0.0, -0.0)) == "-0.0"
    one = records._shared_counts({"search": 1})
    assert records._shared_counts({"search": 1}) is one
    assert records._shared_counts({"search": 1.0}) is not one
    assert type(records._shared_counts({"search": True})["search"]) is bool
