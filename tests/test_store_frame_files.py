"""Stored frame rows (evalkit/store/frame_files.py): typed Parquet files named by their digest,
never trusted (size, digest, schema, whose rows), and removed once no stored row names them."""

from __future__ import annotations

import os
import random

import pandas as pd
import pytest

import evalkit
from evalkit.corpus.frames import FRAME_NAMES
from evalkit.store import frame_files
from evalkit.store import shards as store_mod
from evalkit.store.columns import columns_of
from evalkit.store.frame_files import assemble, identity_table, read_frame_file, write_frame_files
from tests.sweep_helpers import aged, cited, put


def corpus(root):
    for i in range(1, 5):
        cited(root, f"cg22/ab-express/run-new-{i}.jsonl", 100 * i, 50, calls=1 + i % 2)
    put(root, "broken.jsonl", text="null\n")
    return aged(root)


def ident(log):
    return {"log": log, "arm": "new", "slice": "single-question", "kind": "headless"}


def rows(n, question=1):
    return {"calls": [{"question": question, "call": k + 1} for k in range(n)]}


def test_rows_written_come_back_with_discovery_identity_and_their_own(tmp_path):
    refs = write_frame_files(tmp_path, [("a.jsonl", rows(2)), ("b.jsonl", rows(1, None))])
    assert refs is not None and set(refs) == {"a.jsonl", "b.jsonl"}
    (hex_, start, n) = refs["b.jsonl"]["calls"]
    assert (start, n) == (2, 1) and refs["a.jsonl"]["calls"] == [hex_, 0, 2]
    table = read_frame_file(tmp_path, "calls", hex_)
    idents = identity_table([ident("b.jsonl"), ident("a.jsonl")])
    df, lost = assemble(
        "calls", {hex_: table}, [(1, refs["a.jsonl"]["calls"]), (0, [hex_, 2, 1])], idents
    )
    assert lost == []
    assert df["log"].tolist() == ["a.jsonl", "a.jsonl", "b.jsonl"]
    assert df["call"].tolist() == [1, 2, 1]
    # `question` is the row's own (it gave one, even <NA>); `arm` is discovery's.
    assert df["question"].tolist()[:2] == [1, 1] and pd.isna(df["question"].iloc[2])
    assert df["arm"].tolist() == ["new"] * 3


def test_a_frame_file_is_compressed_with_lz4_and_a_snappy_one_still_reads(tmp_path):
    """LZ4 is what a warm load decodes fastest of the codecs that keep the files small; a file
    an earlier version wrote (Snappy) is read as before."""
    import hashlib

    import pyarrow.parquet as pq

    refs = write_frame_files(tmp_path, [("a.jsonl", rows(3))])
    hex_, _, _ = refs["a.jsonl"]["calls"]
    path = tmp_path / frame_files.file_name("calls", hex_)
    meta = pq.ParquetFile(path).metadata
    assert {meta.row_group(0).column(k).compression for k in range(meta.num_columns)} == {"LZ4"}
    table = read_frame_file(tmp_path, "calls", hex_)
    old = tmp_path / "old.parquet"
    pq.write_table(table, old, compression="snappy")
    data = old.read_bytes()
    old_hex = hashlib.sha256(data).hexdigest()[:32]
    old.rename(tmp_path / frame_files.file_name("calls", old_hex))
    assert read_frame_file(tmp_path, "calls", old_hex).equals(table)


def test_rows_that_are_not_the_sessions_are_refused(tmp_path):
    refs = write_frame_files(tmp_path, [("a.jsonl", rows(2))])
    hex_, _, _ = refs["a.jsonl"]["calls"]
    table = read_frame_file(tmp_path, "calls", hex_)
    idents = identity_table([ident("a.jsonl"), ident("other.jsonl")])
    df, lost = assemble("calls", {hex_: table}, [(0, [hex_, 0, 1]), (1, [hex_, 1, 1])], idents)
    assert df is None and lost == [1]
    df, lost = assemble("calls", {hex_: table}, [(0, [hex_, 1, 5])], idents)  # past its end
    assert df is None and lost == [0]
    df, lost = assemble("calls", {}, [(0, [hex_, 0, 2])], idents)  # a file not read
    assert df is None and lost == [0]


def test_rows_are_gathered_in_the_order_asked_with_each_sessions_identity(tmp_path):
    # Three sessions in one file, asked for in another order (a gather), and asked for in file
    # order (none): the same rows either way, each with its session's identity; an identity
    # column no session has a value of comes back empty with its dtype.
    refs = write_frame_files(tmp_path, [(f"{x}.jsonl", rows(k + 1)) for k, x in enumerate("abc")])
    hex_ = refs["a.jsonl"]["calls"][0]
    idents = identity_table([{"log": f"{x}.jsonl", "arm": x} for x in "cab"])
    wanted = [(1, refs["a.jsonl"]["calls"]), (0, refs["c.jsonl"]["calls"])]
    table = read_frame_file(tmp_path, "calls", hex_)
    df, lost = assemble("calls", {hex_: table}, wanted, idents)
    assert lost == []
    assert df["log"].tolist() == ["a.jsonl"] + ["c.jsonl"] * 3
    assert df["arm"].tolist() == ["a", "c", "c", "c"] and df["call"].tolist() == [1, 1, 2, 3]
    assert df["task"].isna().all() and str(df["task"].dtype) == "string"
    in_order = [(1, refs["a.jsonl"]["calls"]), (2, refs["b.jsonl"]["calls"])]
    in_order.append((0, refs["c.jsonl"]["calls"]))
    df, lost = assemble("calls", {hex_: table}, in_order, idents)
    assert lost == [] and df["arm"].tolist() == ["a", "b", "b", "c", "c", "c"]
    df, lost = assemble("calls", {hex_: table}, [], idents)  # no session: the empty frame
    assert lost == [] and len(df) == 0 and list(df.columns) == [c.name for c in columns_of("calls")]


def test_an_entry_past_any_file_is_refused_however_large(tmp_path):
    refs = write_frame_files(tmp_path, [("a.jsonl", rows(2))])
    hex_, _, _ = refs["a.jsonl"]["calls"]
    table = read_frame_file(tmp_path, "calls", hex_)
    idents = identity_table([ident("a.jsonl"), ident("b.jsonl")])
    huge = [(0, [hex_, 0, 1]), (1, [hex_, 2**70, 1])]
    df, lost = assemble("calls", {hex_: table}, huge, idents)
    assert df is None and lost == [1]


def test_a_file_is_read_only_when_it_is_exactly_what_its_name_says(tmp_path, monkeypatch):
    refs = write_frame_files(tmp_path, [("a.jsonl", rows(3))])
    hex_, _, _ = refs["a.jsonl"]["calls"]
    path = tmp_path / frame_files.file_name("calls", hex_)
    assert read_frame_file(tmp_path, "calls", hex_).num_rows == 3
    assert read_frame_file(tmp_path, "sessions", hex_) is None  # another frame's name: missing
    monkeypatch.setattr(frame_files, "MAX_FRAME_FILE_BYTES", path.stat().st_size - 1)
    assert read_frame_file(tmp_path, "calls", hex_) is None  # too large to be ours
    monkeypatch.undo()
    data = path.read_bytes()
    link = tmp_path / "elsewhere.parquet"
    link.write_bytes(data)
    path.unlink()
    os.symlink(link, path)
    assert read_frame_file(tmp_path, "calls", hex_) is None  # a symbolic link is not followed
    path.unlink()
    path.write_bytes(data[:-1])
    assert read_frame_file(tmp_path, "calls", hex_) is None  # cut short: another digest


def test_a_frame_file_read_with_or_without_pyarrow_parquets_wrapper_is_the_same_table(
    tmp_path, monkeypatch
):
    """`parquet_table` reads with the reader `pyarrow.parquet` wraps (no file systems imported);
    where that reader cannot be used, the wrapper gives the very same table."""
    import pyarrow._parquet

    written: dict = {}
    write_frame_files(tmp_path, [(f"s{i}.jsonl", rows(3 + i)) for i in range(4)], written)
    ((frame, hex_), want), *_ = written.items()
    data = (tmp_path / frame_files.file_name(frame, hex_)).read_bytes()
    direct = frame_files.parquet_table(data)
    assert direct.equals(want) and direct.schema.equals(want.schema)

    class Changed:  # another pyarrow's reader, whose `open` takes other arguments
        def open(self, *args, unknown_argument):
            raise AssertionError("not called with these arguments")

    monkeypatch.setattr(pyarrow._parquet, "ParquetReader", Changed)
    wrapped = frame_files.parquet_table(data)
    assert wrapped.equals(want) and wrapped.schema.equals(want.schema)
    with pytest.raises(Exception):  # noqa: B017 — not Parquet: the caller's miss
        frame_files.parquet_table(b"PAR1 not really")


def test_frame_files_no_row_names_are_removed_once_old(tmp_path, monkeypatch):
    root = corpus(tmp_path / "c")
    cache_dir = tmp_path / "cache"
    evalkit.load_corpus(root, cache_dir=cache_dir, jobs=1)
    (store,) = {p.parent for p in cache_dir.rglob("shard-*.parquet")}
    named = sorted(p.name for p in store.glob("frames-*.parquet"))
    orphan_old = store / frame_files.file_name("calls", "0" * 32)
    orphan_new = store / frame_files.file_name("calls", "1" * 32)
    for p in (orphan_old, orphan_new):
        p.write_bytes(b"left by an interrupted run")
    st = orphan_old.stat()
    os.utime(orphan_old, ns=(st.st_atime_ns, st.st_mtime_ns - 2 * store_mod.FRAME_FILE_GRACE_NS))
    warm = evalkit.load_corpus(root, cache_dir=cache_dir, jobs=1)
    assert warm.cache_misses == 0
    assert not orphan_old.exists()  # no row names it, and it is old: removed
    assert orphan_new.exists()  # may be another process's, still writing its shard
    assert sorted(p.name for p in store.glob("frames-*.parquet")) == sorted(
        [*named, orphan_new.name]
    )
    # A file another session's row names is never removed, whatever its age.
    for p in store.glob("frames-*.parquet"):
        if p != orphan_new:
            os.utime(p, ns=(0, 0))
    again = evalkit.load_corpus(root, cache_dir=cache_dir, jobs=1)
    assert again.cache_misses == 0


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_warm_load_is_the_load_without_a_store(tmp_path, jobs):
    root = corpus(tmp_path / "c")
    fresh = evalkit.load_corpus(root, cache=False, jobs=1)
    evalkit.load_corpus(root, cache_dir=tmp_path / "cache", jobs=jobs)
    warm = evalkit.load_corpus(root, cache_dir=tmp_path / "cache", jobs=jobs)
    assert warm.cache_misses == 0
    for name in FRAME_NAMES:
        pd.testing.assert_frame_equal(warm.frame(name), fresh.frame(name), check_exact=True)
    assert warm.errors == fresh.errors and warm.records == fresh.records


def assert_same_frames(got, want):
    for name in FRAME_NAMES:
        pd.testing.assert_frame_equal(got.frame(name), want.frame(name), check_exact=True)
    assert got.errors == want.errors and got.records == want.records


def test_a_cold_load_reads_its_rows_from_the_tables_the_store_wrote(tmp_path, monkeypatch):
    # The parsed sessions' rows become frames once, as the store's frame tables (issue 22):
    # no frame is built again from the rows' dicts, and the frames are the storeless load's.
    root = corpus(tmp_path / "c")
    fresh = evalkit.load_corpus(root, cache=False, jobs=1)
    from evalkit.corpus import load as load_mod

    def no_rebuild(self, i, ref, payload):
        assert "rows" not in payload, "a stored session's rows built again"
        return built(self, i, ref, payload)

    built = load_mod._FrameParts.add
    monkeypatch.setattr(load_mod._FrameParts, "add", no_rebuild)
    cold = evalkit.load_corpus(root, cache_dir=tmp_path / "cache", jobs=1)
    assert cold.cache_misses == len(cold.records)
    assert_same_frames(cold, fresh)


def test_frame_files_that_cannot_be_written_still_give_the_frames(tmp_path, monkeypatch):
    root = corpus(tmp_path / "c")
    fresh = evalkit.load_corpus(root, cache=False, jobs=1)
    monkeypatch.setattr(frame_files, "_put", lambda directory, name, data: False)
    cache_dir = tmp_path / "cache"
    cold = evalkit.load_corpus(root, cache_dir=cache_dir, jobs=1)
    assert_same_frames(cold, fresh)
    assert not list(cache_dir.rglob("frames-*.parquet"))
    monkeypatch.undo()
    again = evalkit.load_corpus(root, cache_dir=cache_dir, jobs=1)  # stored without frames
    assert again.cache_misses == sum(r.status != "crash" for r in again.records)
    assert_same_frames(again, fresh)


def test_a_cold_load_reads_back_the_frame_files_it_wrote_and_reparses_a_lost_one(
    tmp_path, monkeypatch
):
    """The tables a cold load wrote are not held until its frames are assembled: they are read
    back from their files, a frame at a time; a file gone meanwhile (another process pruned
    it) has its sessions parsed again, never a row lost."""
    from evalkit.corpus import load as load_mod

    root = corpus(tmp_path / "c")
    fresh = evalkit.load_corpus(root, cache=False, jobs=1)
    read, reads = load_mod.read_frame_file, []

    def first_one_lost(directory, frame, hex_):
        reads.append(frame)
        return None if len(reads) == 1 else read(directory, frame, hex_)

    monkeypatch.setattr(load_mod, "read_frame_file", first_one_lost)
    cold = evalkit.load_corpus(root, cache_dir=tmp_path / "cache", jobs=1)
    assert len(reads) > len(set(reads))  # the lost frame's file read again, once rewritten
    assert_same_frames(cold, fresh)


def test_rows_no_table_can_be_built_of_are_built_as_frames_by_the_loader(tmp_path, monkeypatch):
    root = corpus(tmp_path / "c")
    fresh = evalkit.load_corpus(root, cache=False, jobs=1)

    def fail(sessions):
        raise ValueError("no table")

    monkeypatch.setattr(frame_files, "frame_tables", fail)  # the store imports it when it writes
    cold = evalkit.load_corpus(root, cache_dir=tmp_path / "cache", jobs=1)
    assert_same_frames(cold, fresh)


def test_a_frame_file_holds_the_sessions_of_frame_file_shards_shards(tmp_path, monkeypatch):
    monkeypatch.setattr(store_mod, "FLUSH_ROWS", 1)  # a shard per session
    monkeypatch.setattr(store_mod, "FRAME_FILE_SHARDS", 2)  # several files on a small corpus
    root = corpus(tmp_path / "c")
    cache_dir = tmp_path / "cache"
    cold = evalkit.load_corpus(root, cache_dir=cache_dir, jobs=1)
    shards = list(cache_dir.rglob("shard-*.parquet"))
    files = list(cache_dir.rglob("frames-sessions-*.parquet"))
    parsed = sum(r.status != "crash" for r in cold.records)
    assert len(shards) == len(cold.records)
    assert len(files) == -(-parsed // store_mod.FRAME_FILE_SHARDS) > 1
    warm = evalkit.load_corpus(root, cache_dir=cache_dir, jobs=1)
    assert warm.cache_misses == 0
    assert_same_frames(warm, cold)


def test_a_shards_frame_references_are_checked_as_a_column_as_each_one_is():
    # The whole-column check of the `frames` field gives the answer of checking each value.
    from evalkit.store.rows import PAYLOAD_FIELDS

    field = next(f for f in PAYLOAD_FIELDS if f.name == "frames")
    good = {"calls": ["a" * 32, 0, 3], "sessions": ["0123456789abcdef" * 2, 5, 1]}
    variants = [
        good,
        {},
        {"Calls": ["a" * 32, 0, 3]},  # not a frame name
        {"ca-lls": ["a" * 32, 0, 3]},
        {1: ["a" * 32, 0, 3]},
        {"calls": ["A" * 32, 0, 3]},  # not lower-case hex
        {"calls": ["g" * 32, 0, 3]},
        {"calls": ["a" * 31, 0, 3]},
        {"calls": ["a" * 32 + "\n", 0, 3]},
        {"calls": ["a" * 16, 0, 3], "files": ["b" * 48, 0, 1]},  # 64 hex, but not two of 32
        {"calls": [None, 0, 3]},
        {"calls": ["a" * 32, -1, 3]},
        {"calls": ["a" * 32, 0, 0]},  # a session with no rows of a frame has no entry
        {"calls": ["a" * 32, True, 3]},
        {"calls": ["a" * 32, 0, 3.0]},
        {"calls": ("a" * 32, 0, 3)},
        {"calls": ["a" * 32, 0]},
        {"calls": ["a" * 32, 0, 3, 4]},
        [["a" * 32, 0, 3]],
        None,
    ]
    rng = random.Random(22)
    for _ in range(2000):
        column = [rng.choice(variants) for _ in range(rng.randint(0, 4))]
        assert field.check_column(column) == all(map(field.check, column)), column
