"""Streamed export (evalkit/corpus/load.py): `Corpus.export` writes each frame chunk by chunk,
and `export_corpus` / `evalkit export` load the corpus a batch of sessions at a time; the files
hold exactly the rows, order and dtypes of `load_corpus`'s frames."""

from __future__ import annotations

import hashlib
import os

import pandas as pd
import pytest

import evalkit
from evalkit.corpus import load as load_mod
from evalkit.corpus.frames import FRAME_NAMES
from evalkit.corpus.load import export_corpus
from evalkit.errors import UsageError
from tests.sweep_helpers import aged, cited, put


def corpus(root):
    for i in range(1, 6):
        cited(root, f"cg22/ab-express/run-baseline-{i}.jsonl", 100 * i, 900, calls=1 + i % 3)
        cited(root, f"cg22/ab-express/run-new-{i}.jsonl", 900, 100 * i, calls=1 + i % 2)
    put(root, "cg22/ab-express/run-new-9.jsonl")  # no explore
    put(root, "broken.jsonl", text="null\n")  # a crash: left out, listed
    put(root, "notes.txt", text="not a transcript\n")
    return aged(root)  # no row stored as racy: a warm load under load rewrites none


@pytest.fixture
def small_chunks(monkeypatch):
    monkeypatch.setattr(load_mod, "CHUNK_ROWS", 3)


def assert_same_as_frames(loaded, out, fmt):
    for name in FRAME_NAMES:
        want = loaded.frame(name)
        if fmt == "parquet":
            got = pd.read_parquet(out / f"{name}.parquet")
            pd.testing.assert_frame_equal(got, want, check_exact=True)
        else:
            text = (out / f"{name}.csv").read_text(encoding="utf-8")
            assert text == want.to_csv(index=False), name


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_chunked_export_of_a_loaded_corpus_is_its_frames(tmp_path, small_chunks, fmt):
    loaded = evalkit.load_corpus(corpus(tmp_path / "c"), cache=False, jobs=1)
    assert len(loaded.frame("calls")) > 3  # more than one chunk
    written = loaded.export(tmp_path / "out", fmt)
    assert [p.name for p in written] == [f"{n}.{fmt}" for n in FRAME_NAMES] + ["columns.json"]
    assert_same_as_frames(loaded, tmp_path / "out", fmt)
    if fmt == "parquet":
        import pyarrow.parquet as pq

        meta = pq.ParquetFile(tmp_path / "out" / "calls.parquet").metadata
        assert meta.num_row_groups == -(-len(loaded.frame("calls")) // 3)


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
@pytest.mark.parametrize("cache", [False, True])
def test_export_corpus_streams_the_same_files(tmp_path, small_chunks, fmt, cache):
    root = corpus(tmp_path / "c")
    cache_dir = tmp_path / "cache"
    loaded = evalkit.load_corpus(root, cache=False, jobs=1)
    for attempt in ("cold", "warm"):  # the second reads the store when there is one
        out = tmp_path / f"out-{attempt}"
        done = export_corpus(root, out, fmt, jobs=1, cache=cache, cache_dir=cache_dir)
        assert_same_as_frames(loaded, out, fmt)
        assert done.errors == loaded.errors and done.errors
        assert done.rows == {name: len(loaded.frame(name)) for name in FRAME_NAMES}
        assert [p.name for p in done.files] == [f"{n}.{fmt}" for n in FRAME_NAMES] + [
            "columns.json"
        ]
    if cache:
        warm = evalkit.load_corpus(root, cache_dir=cache_dir, jobs=1)
        assert warm.cache_misses == 0  # the streamed export stored every session


def test_a_batched_export_keeps_every_session_in_the_store(tmp_path, small_chunks, monkeypatch):
    from evalkit.store import shards as store_mod

    root = corpus(tmp_path / "c")
    monkeypatch.setattr(store_mod, "FLUSH_ROWS", 1)  # a shard per session ...
    monkeypatch.setattr(store_mod, "_MERGE_AT", 2)  # ... merged as soon as there are three
    export_corpus(root, tmp_path / "out", jobs=1, cache_dir=tmp_path / "cache")
    warm = evalkit.load_corpus(root, cache_dir=tmp_path / "cache", jobs=1)
    assert warm.cache_misses == 0  # merging after one batch kept the other batches' sessions


def test_export_corpus_empty_frames_still_get_their_files(tmp_path):
    root = tmp_path / "c"
    put(root, "broken.jsonl", text="null\n")
    done = export_corpus(root, tmp_path / "out", jobs=1, cache=False)
    assert done.rows == dict.fromkeys(FRAME_NAMES, 0)
    for name in FRAME_NAMES:
        assert pd.read_parquet(tmp_path / "out" / f"{name}.parquet").empty


def test_export_corpus_refuses_an_output_it_did_not_write_before_reading(tmp_path, monkeypatch):
    root = corpus(tmp_path / "c")
    out = tmp_path / "out"
    out.mkdir()
    (out / "calls.parquet").write_text("mine")

    def no_parsing(*args, **kwargs):
        raise AssertionError("parsed before checking the output")

    monkeypatch.setattr(load_mod, "analyse_payloads", no_parsing)
    with pytest.raises(UsageError, match="not written by evalkit"):
        export_corpus(root, out, jobs=1, cache=False)
    assert (out / "calls.parquet").read_text() == "mine"


def test_evalkit_export_command_streams(tmp_path, small_chunks, capsys):
    from evalkit.cli import main

    root = corpus(tmp_path / "c")
    loaded = evalkit.load_corpus(root, cache=False, jobs=1)
    assert main(["export", str(root), "--to", str(tmp_path / "o"), "--no-cache", "-j", "1"]) == 0
    captured = capsys.readouterr()
    assert captured.out == (
        f"wrote {len(FRAME_NAMES) + 1} files to {tmp_path / 'o'}: "
        f"{len(loaded.frame('sessions'))} sessions, {len(loaded.frame('calls'))} calls, "
        f"{len(loaded.frame('tool_calls'))} tool calls\n"
    )
    assert "not exported: broken.jsonl" in captured.err
    assert_same_as_frames(loaded, tmp_path / "o", "parquet")


def test_a_stored_row_names_its_frame_rows_which_are_typed_parquet(tmp_path):
    import pyarrow.parquet as pq

    from evalkit.store import shards as store_mod
    from evalkit.store.columns import arrow_schema
    from evalkit.store.keys import store_fingerprint

    root = corpus(tmp_path / "c")
    loaded = evalkit.load_corpus(root, cache_dir=tmp_path / "cache", jobs=1)
    store = store_mod.CorpusStore(tmp_path / "cache", root, fingerprint=store_fingerprint())
    payloads = [r.payload for rows in store._load().values() for r in rows]
    parsed = [p for p in payloads if p["status"] in ("parsed", "no-explore")]
    assert parsed and all("rows" not in p and set(p["frames"]) <= set(FRAME_NAMES) for p in parsed)
    assert sum(p["frames"]["sessions"][2] for p in parsed) == len(loaded.frame("sessions"))
    for path in (tmp_path / "cache").rglob("frames-*.parquet"):
        frame = path.name.split("-")[1]
        schema = pq.read_schema(path)
        assert [(f.name, f.type) for f in schema][2:] == arrow_schema(frame)


def test_a_file_name_that_is_not_utf8_loads_and_exports_escaped(tmp_path):
    # A lone surrogate cannot be stored as UTF-8 text: frames and exports carry the same
    # \udcff escape the sweep's JSON shows, and nothing is lost.
    root = tmp_path / "corpus"
    cited(root, "run-new-1.jsonl", 100, 50)
    cited(root, os.fsdecode(b"run-\xff.jsonl"), 100, 50)
    loaded = evalkit.load_corpus(root, cache=False, jobs=1)
    assert sorted(loaded.sessions_df()["log"]) == ["run-\\udcff.jsonl", "run-new-1.jsonl"]
    out = tmp_path / "out"
    export_corpus(root, out, "parquet", jobs=1, cache=False)
    got = pd.read_parquet(out / "sessions.parquet")
    assert sorted(got["log"]) == ["run-\\udcff.jsonl", "run-new-1.jsonl"]
    cold = evalkit.load_corpus(root, cache_dir=tmp_path / "cache", jobs=1)
    warm = evalkit.load_corpus(root, cache_dir=tmp_path / "cache", jobs=1)
    assert warm.cache_misses == 0
    for name in FRAME_NAMES:
        assert warm.frame(name).equals(loaded.frame(name)) and cold.frame(name).equals(
            loaded.frame(name)
        )


def exported_bytes(out):
    return {p.name: p.read_bytes() for p in sorted(out.iterdir())}


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_a_warm_export_writes_the_no_cache_files_byte_for_byte_without_building_rows(
    tmp_path, small_chunks, monkeypatch, fmt
):
    from evalkit.store import frame_files
    from evalkit.store import shards as store_mod

    monkeypatch.setattr(store_mod, "FLUSH_ROWS", 3)  # several shards, so several frame files
    root = corpus(tmp_path / "c")
    cache_dir = tmp_path / "cache"
    export_corpus(root, tmp_path / "none", fmt, jobs=1, cache=False)
    export_corpus(root, tmp_path / "cold", fmt, jobs=1, cache_dir=cache_dir)
    read, built = [], []
    original_read, original_build = frame_files.read_frame_file, load_mod.build_frame

    def counted_read(directory, frame, hex_):
        read.append((frame, hex_))
        return original_read(directory, frame, hex_)

    def counted_build(name, rows):
        built.append(len(rows))
        return original_build(name, rows)

    monkeypatch.setattr(load_mod, "read_frame_file", counted_read)
    monkeypatch.setattr(load_mod, "build_frame", counted_build)
    shards = sorted(cache_dir.rglob("shard-*.parquet"))
    files = sorted(cache_dir.rglob("frames-*.parquet"))
    warm = export_corpus(root, tmp_path / "warm", fmt, jobs=1, cache_dir=cache_dir)
    warm_read, warm_built = list(read), list(built)  # the warm export's own
    assert sorted(cache_dir.rglob("shard-*.parquet")) == shards  # every shard read, none refused
    assert sorted(cache_dir.rglob("frames-*.parquet")) == files
    assert exported_bytes(tmp_path / "warm") == exported_bytes(tmp_path / "none")
    assert exported_bytes(tmp_path / "cold") == exported_bytes(tmp_path / "none")
    assert (
        warm.errors
        and warm.errors == export_corpus(root, tmp_path / "again", fmt, jobs=1, cache=False).errors
    )
    # Every frame file read once, and no row built again (only empty frames are made).
    assert warm_read and len(warm_read) == len(set(warm_read)) == len(files)
    assert set(warm_built) <= {0}
    assert evalkit.load_corpus(root, cache_dir=cache_dir, jobs=1).cache_misses == 0


def test_the_sweep_and_the_loader_share_one_store(tmp_path, monkeypatch):
    from evalkit.outputs.sweep_text import render_json
    from evalkit.tables.sweep import run_sweep

    root = corpus(tmp_path / "c")
    cache_dir = tmp_path / "cache"
    fresh = render_json(run_sweep(root, cache=False, jobs=1))
    swept = run_sweep(root, cache_dir=cache_dir, jobs=1)
    assert swept.cache_misses > 0 and not list(cache_dir.rglob("frames-*.parquet"))
    # A sweep's rows carry no frame rows: the loader parses those sessions once more and
    # stores them with their frame rows, in the same store (a crash has no rows to store).
    cold = evalkit.load_corpus(root, cache_dir=cache_dir, jobs=1)
    crashes = sum(r.status == "crash" for r in swept.records)
    assert crashes and cold.cache_hits == crashes
    assert cold.cache_misses == swept.cache_misses - crashes
    assert list(cache_dir.rglob("frames-*.parquet"))
    assert len({p.parent for p in cache_dir.rglob("shard-*.parquet")}) == 1  # one store
    again = run_sweep(root, cache_dir=cache_dir, jobs=1)
    assert again.cache_misses == 0 and render_json(again) == fresh
    warm = evalkit.load_corpus(root, cache_dir=cache_dir, jobs=1)
    assert warm.cache_misses == 0
    for name in cold.tables:
        assert warm.frame(name).equals(cold.frame(name))


def test_a_damaged_frame_file_is_a_miss_and_the_files_are_the_same(
    tmp_path, small_chunks, monkeypatch
):
    from evalkit.store import shards as store_mod

    monkeypatch.setattr(store_mod, "FLUSH_ROWS", 3)
    monkeypatch.setattr(store_mod, "FRAME_FILE_SHARDS", 2)  # several frame files per frame
    root = corpus(tmp_path / "c")
    cache_dir = tmp_path / "cache"
    export_corpus(root, tmp_path / "none", jobs=1, cache=False)
    export_corpus(root, tmp_path / "cold", jobs=1, cache_dir=cache_dir)
    files = sorted(cache_dir.rglob("frames-calls-*.parquet"))
    assert len(files) > 1
    data = bytearray(files[0].read_bytes())
    data[len(data) // 2] ^= 0xFF  # one byte: the digest its name gives no longer holds
    files[0].write_bytes(bytes(data))
    loaded = evalkit.load_corpus(root, cache_dir=cache_dir, jobs=1)
    assert loaded.cache_misses > 0  # the sessions it held were parsed again
    # Refused and removed; stored again by the parse (same rows, same name) with sound bytes.
    assert (
        not files[0].exists()
        or hashlib.sha256(files[0].read_bytes()).hexdigest()[:32] == files[0].stem.rsplit("-", 1)[1]
    )
    export_corpus(root, tmp_path / "warm", jobs=1, cache_dir=cache_dir)
    assert exported_bytes(tmp_path / "warm") == exported_bytes(tmp_path / "none")
    fresh = evalkit.load_corpus(root, cache=False, jobs=1)
    for name in fresh.tables:
        assert loaded.frame(name).equals(fresh.frame(name))


def test_a_warm_export_refuses_a_bad_shard_and_still_writes_the_same_files(
    tmp_path, small_chunks, monkeypatch
):
    from evalkit.store import shards as store_mod

    monkeypatch.setattr(store_mod, "FLUSH_ROWS", 3)
    root = corpus(tmp_path / "c")
    cache_dir = tmp_path / "cache"
    export_corpus(root, tmp_path / "none", jobs=1, cache=False)
    export_corpus(root, tmp_path / "cold", jobs=1, cache_dir=cache_dir)
    shards = sorted(cache_dir.rglob("shard-*.parquet"))
    assert len(shards) > 2
    shards[1].write_bytes(b"PAR1 not a shard PAR1")
    warm = export_corpus(root, tmp_path / "warm", jobs=1, cache_dir=cache_dir)
    assert exported_bytes(tmp_path / "warm") == exported_bytes(tmp_path / "none")
    assert warm.errors
    assert not shards[1].exists()  # refused and removed, as the store does
