"""The corpus store (evalkit/store/shards.py): hits, misses, invalidation, same numbers, and a
store that is never trusted blindly."""

from __future__ import annotations

import os

import pytest

from evalkit.corpus import records
from evalkit.corpus.discover import discover
from evalkit.corpus.parse import analyse_sessions
from evalkit.outputs.sweep_text import to_json_dict
from evalkit.store import keys
from evalkit.store import shards as store_mod
from evalkit.store.shards import CorpusStore, code_fingerprint, default_cache_dir
from evalkit.tables.sweep import run_sweep
from tests.sweep_helpers import aged, cited, put


def corpus(root):
    cited(root, "cg22/ab-express/run-baseline-1.jsonl", 700, 300)
    cited(root, "cg22/ab-express/run-new-1.jsonl", 900, 100, calls=2)
    put(root, "cg22/ab-express/run-new-2.jsonl")  # no explore
    put(root, "broken.jsonl", text="null\n")  # crash
    return root


def test_hit_miss_and_identical_results(tmp_path):
    root = corpus(tmp_path / "c")
    cache_dir = tmp_path / "cache"
    cold = run_sweep(root, cache_dir=cache_dir, jobs=1)
    assert (cold.cache_hits, cold.cache_misses) == (0, 4)
    warm = run_sweep(root, cache_dir=cache_dir, jobs=1)
    assert (warm.cache_hits, warm.cache_misses) == (4, 0)
    none = run_sweep(root, cache=False, jobs=1)
    assert none.cache_hits == 0
    assert to_json_dict(cold) == to_json_dict(warm) == to_json_dict(none)
    assert cold.records == warm.records == none.records


def test_a_sweep_without_the_store_takes_no_code_digest(tmp_path, monkeypatch):
    # The digest reads and hashes every source file of evalkit; a store that is off keys nothing.
    root = corpus(tmp_path / "c")
    expected = to_json_dict(run_sweep(root, cache=False, jobs=1))

    def refuse() -> str:
        raise AssertionError("a sweep without the store took the code digest")

    monkeypatch.setattr(keys, "code_fingerprint", refuse)
    monkeypatch.setattr(store_mod, "code_fingerprint", refuse)
    assert to_json_dict(run_sweep(root, cache=False, jobs=1)) == expected
    assert not CorpusStore(None, root).enabled  # made by the parsing step when given none
    with pytest.raises(AssertionError, match="took the code digest"):
        run_sweep(root, cache_dir=tmp_path / "cache", jobs=1)


def test_content_change_invalidates_only_that_session(tmp_path):
    root = corpus(tmp_path / "c")
    cache_dir = tmp_path / "cache"
    run_sweep(root, cache_dir=cache_dir, jobs=1)
    before = run_sweep(root, cache_dir=cache_dir, jobs=1).record(
        "cg22/ab-express/run-baseline-1.jsonl"
    )
    cited(root, "cg22/ab-express/run-baseline-1.jsonl", 100, 900)  # same name, new content
    after = run_sweep(root, cache_dir=cache_dir, jobs=1)
    assert (after.cache_hits, after.cache_misses) == (3, 1)
    rec = after.record("cg22/ab-express/run-baseline-1.jsonl")
    assert rec.efficiency < before.efficiency
    assert rec == run_sweep(root, cache=False).record("cg22/ab-express/run-baseline-1.jsonl")


def test_a_later_segment_change_invalidates_the_session(tmp_path):
    root = tmp_path / "c"
    cited(root, "x/run-a.jsonl", 500, 500)
    cited(root, "x/run-a.t2.jsonl", 500, 500)
    cache_dir = tmp_path / "cache"
    run_sweep(root, cache_dir=cache_dir)
    cited(root, "x/run-a.t2.jsonl", 10, 990)
    again = run_sweep(root, cache_dir=cache_dir)
    assert again.cache_misses == 1


def test_version_change_invalidates(tmp_path):
    root = corpus(tmp_path / "c")
    refs = discover(root).sessions
    current = CorpusStore(tmp_path / "cache", root)
    analyse_sessions(root, refs, cache=current, jobs=1)
    again = CorpusStore(tmp_path / "cache", root)
    analyse_sessions(root, refs, cache=again, jobs=1)
    assert again.hits == 4
    newer = CorpusStore(tmp_path / "cache", root, fingerprint=current.fingerprint + "-next")
    analyse_sessions(root, refs, cache=newer, jobs=1)
    assert (newer.hits, newer.misses) == (0, 4)
    assert code_fingerprint() == CorpusStore(tmp_path / "cache", root).fingerprint


def shards(cache_dir):
    return sorted((cache_dir / "corpus-store-v1").rglob("shard-*.parquet"))


def test_corrupt_entries_are_misses_and_get_rewritten(tmp_path):
    root = corpus(tmp_path / "c")
    cache_dir = tmp_path / "cache"
    run_sweep(root, cache_dir=cache_dir, jobs=1)
    for entry in shards(cache_dir):
        entry.write_text("{not parquet")
    again = run_sweep(root, cache_dir=cache_dir, jobs=1)
    assert again.cache_misses == 4
    third = run_sweep(root, cache_dir=cache_dir, jobs=1)
    assert third.cache_hits == 4
    assert all(s.read_bytes()[:4] == b"PAR1" for s in shards(cache_dir))


def test_unwritable_cache_dir_only_costs_speed(tmp_path):
    root = corpus(tmp_path / "c")
    blocker = tmp_path / "file"
    blocker.write_text("")
    res = run_sweep(root, cache_dir=blocker, jobs=1)  # cannot mkdir under a file
    assert res.counts.sessions == 2


def test_default_location_follows_xdg(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert default_cache_dir() == tmp_path / "evalkit"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/dir")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_cache_dir() == tmp_path / "home" / ".cache" / "evalkit"


def test_fifo_and_device_links_are_crashes_not_hangs_with_the_cache_on(tmp_path):
    import os

    root = tmp_path / "corpus"
    corpus(root)
    os.mkfifo(root / "pipe.jsonl")
    os.symlink("/dev/zero", root / "zero.jsonl")
    result = run_sweep(root, cache_dir=tmp_path / "cache", jobs=1)
    reasons = {r.log: r.reason for r in result.records if r.status == "crash"}
    assert "not a regular file" in reasons["pipe.jsonl"]
    assert "not a regular file" in reasons["zero.jsonl"]


def test_a_warm_sweep_reads_no_transcript_bytes(tmp_path, monkeypatch):
    root = aged(corpus(tmp_path / "c"))
    cache_dir = tmp_path / "cache"
    cold = run_sweep(root, cache_dir=cache_dir, jobs=1)

    def no_reading(*args, **kwargs):
        raise AssertionError("a warm sweep read a transcript")

    from evalkit.formats.claude_code import transcripts

    monkeypatch.setattr(transcripts, "read_file_bytes", no_reading)
    monkeypatch.setattr(records, "regular_file_digest", no_reading)
    monkeypatch.setattr(store_mod, "regular_file_digest", no_reading)
    warm = run_sweep(root, cache_dir=cache_dir, jobs=1)
    assert (warm.cache_hits, warm.cache_misses) == (4, 0)
    assert to_json_dict(warm) == to_json_dict(cold)


def test_verify_rehashes_and_catches_an_edit_that_kept_every_timestamp(tmp_path, monkeypatch):
    root = aged(corpus(tmp_path / "c"))
    cache_dir = tmp_path / "cache"
    run_sweep(root, cache_dir=cache_dir, jobs=1)
    path = root / "cg22/ab-express/run-baseline-1.jsonl"
    states = {}
    real_state = records.file_state

    def frozen_state(p):  # a file system whose timestamps cannot see the edit below
        return states.setdefault(p, real_state(p))

    monkeypatch.setattr(records, "file_state", frozen_state)
    monkeypatch.setattr(store_mod, "file_state", frozen_state)
    frozen_state(str(path))
    data = path.read_bytes()
    path.write_bytes(data.replace(b"lib/", b"lid/"))  # same size, different content
    trusting = run_sweep(root, cache_dir=cache_dir, jobs=1)
    assert trusting.cache_hits == 4  # trusted by state: the documented cost of not reading
    verified = run_sweep(root, cache_dir=cache_dir, jobs=1, verify=True)
    assert (verified.cache_hits, verified.cache_misses) == (3, 1)
    fresh = run_sweep(root, cache=False, jobs=1)
    assert to_json_dict(verified) == to_json_dict(fresh)


def test_a_file_changed_during_its_parse_is_never_stored(tmp_path, monkeypatch):
    root = aged(corpus(tmp_path / "c"))
    cache_dir = tmp_path / "cache"
    target = root / "cg22/ab-express/run-new-1.jsonl"
    real = records._analyse

    def analyse_then_edit(root_, segments, log, *rest):
        out = real(root_, segments, log, *rest)
        if log.endswith("run-new-1.jsonl"):
            cited(root, "cg22/ab-express/run-new-1.jsonl", 10, 990)  # rewritten meanwhile
        return out

    monkeypatch.setattr(records, "_analyse", analyse_then_edit)
    first = run_sweep(root, cache_dir=cache_dir, jobs=1)
    monkeypatch.setattr(records, "_analyse", real)
    second = run_sweep(root, cache_dir=cache_dir, jobs=1)
    assert (second.cache_hits, second.cache_misses) == (3, 1)
    assert second.record(target.relative_to(root).as_posix()) != first.record(
        target.relative_to(root).as_posix()
    )
    assert to_json_dict(second) == to_json_dict(run_sweep(root, cache=False, jobs=1))


def test_the_stored_digest_is_of_the_bytes_the_parse_read(tmp_path):
    import hashlib

    root = aged(corpus(tmp_path / "c"))
    refs = discover(root).sessions
    ref = next(r for r in refs if r.log.endswith("run-new-1.jsonl"))
    payload, manifest = records.analyse_with_files(str(root), ref)
    assert payload["status"] == "parsed" and manifest is not None and not manifest.racy
    want = hashlib.sha256((root / ref.log).read_bytes()).hexdigest()
    assert manifest.digests == (want,)


def store_dir(cache_dir):
    (d,) = {s.parent for s in shards(cache_dir)}
    return d


def test_only_regular_files_are_opened_and_nothing_else_is_removed(tmp_path):
    root = aged(corpus(tmp_path / "c"))
    cache_dir = tmp_path / "cache"
    run_sweep(root, cache_dir=cache_dir, jobs=1)
    d = store_dir(cache_dir)
    (good,) = shards(cache_dir)
    elsewhere = tmp_path / "elsewhere.parquet"
    good.rename(elsewhere)
    fifo = d / ("shard-" + "0" * 16 + "-" + "a" * 32 + ".parquet")
    os.mkfifo(fifo)
    link = d / ("shard-" + "0" * 16 + "-" + "b" * 32 + ".parquet")
    link.symlink_to(elsewhere)
    again = run_sweep(root, cache_dir=cache_dir, jobs=1)  # would hang on the FIFO
    assert again.cache_misses == 4  # the link is not followed
    assert fifo.exists() and link.is_symlink() and elsewhere.exists()


def test_an_oversized_shard_is_a_miss_and_removed(tmp_path, monkeypatch):
    root = aged(corpus(tmp_path / "c"))
    cache_dir = tmp_path / "cache"
    run_sweep(root, cache_dir=cache_dir, jobs=1)
    (shard,) = shards(cache_dir)
    monkeypatch.setattr(store_mod, "MAX_SHARD_BYTES", shard.stat().st_size - 1)
    again = run_sweep(root, cache_dir=cache_dir, jobs=1)
    assert again.cache_misses == 4 and not shard.exists()


@pytest.mark.parametrize(
    "column, value",
    [
        ("p_status", b"parsed-ish"),  # not a status
        ("p_reason", None),  # a no-explore session needs its reason
        ("p_chars", None),  # a number missing
        ("p_calls", [[1, 2, 3]]),  # a call row of the wrong shape
        ("p_reason", b"\xff\xfe"),  # not text
        ("states", [[1, 2, 3]]),  # a file state of the wrong shape
        ("digests", [b"not-a-digest"]),
        ("files", []),
    ],
)
def test_a_shard_with_a_bad_value_is_a_miss_and_removed(tmp_path, column, value):
    root = aged(corpus(tmp_path / "c"))
    cache_dir = tmp_path / "cache"
    run_sweep(root, cache_dir=cache_dir, jobs=1)
    (shard,) = shards(cache_dir)
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = pq.read_table(shard).to_pylist()
    victim = next(r for r in rows if r["p_status"] == b"no-explore")
    victim[column] = value
    shard.unlink()
    pq.write_table(pa.Table.from_pylist(rows, schema=store_mod._schema()), shard)
    again = run_sweep(root, cache_dir=cache_dir, jobs=1)
    assert again.cache_misses == 4 and not shard.exists()
    assert to_json_dict(again) == to_json_dict(run_sweep(root, cache=False, jobs=1))


def test_a_shard_of_another_shape_is_a_miss_and_removed(tmp_path):
    import pyarrow.parquet as pq

    root = aged(corpus(tmp_path / "c"))
    cache_dir = tmp_path / "cache"
    run_sweep(root, cache_dir=cache_dir, jobs=1)
    (shard,) = shards(cache_dir)
    table = pq.read_table(shard)
    shard.unlink()
    pq.write_table(table.drop_columns(["p_chars"]), shard)
    assert run_sweep(root, cache_dir=cache_dir, jobs=1).cache_misses == 4
    assert not shard.exists()


def test_many_shards_are_merged_and_rows_of_removed_sessions_dropped(tmp_path, monkeypatch):
    root = aged(corpus(tmp_path / "c"))
    cache_dir = tmp_path / "cache"
    monkeypatch.setattr(store_mod, "FLUSH_ROWS", 1)
    run_sweep(root, cache_dir=cache_dir, jobs=1)
    assert len(shards(cache_dir)) == 4  # one per session (a crash is stored like any other)
    monkeypatch.setattr(store_mod, "_MERGE_AT", 2)
    (root / "cg22/ab-express/run-new-2.jsonl").unlink()
    merged = run_sweep(root, cache_dir=cache_dir, jobs=1)
    assert merged.cache_hits == 3 and len(shards(cache_dir)) == 1
    again = run_sweep(root, cache_dir=cache_dir, jobs=1)
    assert (again.cache_hits, again.cache_misses) == (3, 0)


def test_a_merge_drops_the_rows_of_a_session_whose_files_changed(tmp_path, monkeypatch):
    # A session that gains a segment gets a new row; its old row (the old file list) can never
    # be a hit again. Were it kept through merges, such rows would pile up until every run
    # merged the store again.
    root = aged(corpus(tmp_path / "c"))
    cache_dir = tmp_path / "cache"
    monkeypatch.setattr(store_mod, "FLUSH_ROWS", 1)
    monkeypatch.setattr(store_mod, "_ROWS_PER_SHARD", 1)
    monkeypatch.setattr(store_mod, "_MERGE_AT", 1)
    run_sweep(root, cache_dir=cache_dir, jobs=1)
    for k in (2, 3):  # the session gains a second segment, then a third
        segment = root / f"cg22/ab-express/run-baseline-1.t{k}.jsonl"
        cited(root, str(segment.relative_to(root)), 500, 500)
        os.utime(segment, ns=(0, segment.stat().st_mtime_ns - 60 * 10**9))  # not racy
        assert run_sweep(root, cache_dir=cache_dir, jobs=1).cache_misses == 1

    import pyarrow.parquet as pq

    def stored():
        return sorted(
            (row["session"], len(row["files"]))
            for shard in shards(cache_dir)
            for row in pq.read_table(shard, columns=["session", "files"]).to_pylist()
        )

    assert len(stored()) == 4  # one row for each session, its current one
    assert (b"cg22/ab-express/run-baseline-1.jsonl", 3) in stored()
    names = shards(cache_dir)
    again = run_sweep(root, cache_dir=cache_dir, jobs=1)
    assert (again.cache_hits, again.cache_misses) == (4, 0)
    assert shards(cache_dir) == names  # settled: nothing merged or written again


def test_warm_frames_of_load_corpus_come_from_the_store_without_reading(tmp_path, monkeypatch):
    import evalkit
    from evalkit.formats.claude_code import transcripts

    root = aged(corpus(tmp_path / "c"))
    cache_dir = tmp_path / "cache"
    cold = evalkit.load_corpus(root, cache_dir=cache_dir, jobs=1)

    def no_reading(*args, **kwargs):
        raise AssertionError("a warm load read a transcript")

    monkeypatch.setattr(transcripts, "read_file_bytes", no_reading)
    warm = evalkit.load_corpus(root, cache_dir=cache_dir, jobs=1)
    assert (warm.cache_hits, warm.cache_misses) == (4, 0)
    for name in ("sessions", "calls", "sections", "files", "tool_calls"):
        assert warm.frame(name).equals(cold.frame(name)), name
    assert warm.errors == cold.errors


def test_cli_verify_and_engine_options(tmp_path, capsys, monkeypatch):
    import sys

    from evalkit.cli import main

    root = aged(corpus(tmp_path / "c"))
    cache = str(tmp_path / "cache")
    assert main(["sweep", str(root), "--json", "--cache-dir", cache]) == 0
    cold = capsys.readouterr().out
    assert main(["sweep", str(root), "--json", "--cache-dir", cache, "--verify"]) == 0
    assert capsys.readouterr().out == cold
    assert main(["sweep", str(root), "--scheduler", "tcp://x:1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--scheduler needs --engine dask" in err[0]
    monkeypatch.setitem(sys.modules, "distributed", None)  # as if Dask were not installed
    assert main(["sweep", str(root), "--no-cache", "--engine", "dask"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and 'pip install "evalkit[dask]"' in err[0]


def test_a_shard_that_grew_while_read_is_read_on_up_to_the_bound(tmp_path, monkeypatch):
    # The store reads a buffer of the file's size (not of the 256 MB bound); a file that grew
    # after its size was taken is read on, and one that grew past the bound is refused.
    from evalkit.store import shards as store_mod

    f = tmp_path / "shard"
    f.write_bytes(b"a" * 5000)
    real = os.fstat

    def stale_size(fd):
        st = real(fd)
        return os.stat_result((st.st_mode, st.st_ino, st.st_dev, st.st_nlink, 0, 0, 100, 0, 0, 0))

    monkeypatch.setattr(os, "fstat", stale_size)
    assert store_mod._read_bounded(str(f)) == b"a" * 5000
    monkeypatch.setattr(store_mod, "MAX_SHARD_BYTES", 1000)
    assert store_mod._read_bounded(str(f)) is None


def test_reading_limits_are_part_of_the_key(tmp_path, monkeypatch):
    # A session refused under a low limit must be parsed again once the limit is lifted (and
    # the other way round): the limits change what the parse gives, so they key the store.
    root = corpus(tmp_path / "c")
    cache_dir = tmp_path / "cache"
    monkeypatch.setenv("EVALKIT_MAX_SESSION_MB", "0.0001")
    low = run_sweep(root, cache_dir=cache_dir, jobs=1)
    assert low.record("cg22/ab-express/run-new-1.jsonl").status == "crash"
    assert run_sweep(root, cache_dir=cache_dir, jobs=1).cache_hits == 4
    monkeypatch.delenv("EVALKIT_MAX_SESSION_MB")
    lifted = run_sweep(root, cache_dir=cache_dir, jobs=1)
    assert lifted.cache_hits == 0
    assert lifted.record("cg22/ab-express/run-new-1.jsonl").status == "parsed"
    assert to_json_dict(lifted) == to_json_dict(run_sweep(root, cache=False, jobs=1))
    assert run_sweep(root, cache_dir=cache_dir, jobs=1).cache_hits == 4


def test_limits_suffix_names_only_set_limits():
    assert store_mod.limits_suffix({}) == ""
    assert store_mod.limits_suffix({"EVALKIT_MAX_LINE_MB": ""}) == ""
    one = store_mod.limits_suffix({"EVALKIT_MAX_LINE_MB": "1"})
    assert one.startswith(":limits:") and one != store_mod.limits_suffix(
        {"EVALKIT_MAX_LINE_MB": "2"}
    )
    parts = store_mod.fingerprint_parts("c0de" + one + ":format:codex-exec")
    assert parts["limits"] == one.split(":")[2] and parts["format"] == "codex-exec"
