"""The corpus store's side index (evalkit/store/shards.py): a warm sweep reads its rows as JSON,
without pyarrow, only when the index describes exactly the shard's bytes and every row passes
the checks a shard's rows pass; otherwise the shard itself is read, as without an index."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from evalkit.outputs.sweep_text import to_json_dict
from evalkit.store import shards as store_mod
from evalkit.tables.sweep import run_sweep
from tests.sweep_helpers import cited, put

REPO = Path(__file__).resolve().parent.parent


def corpus(root):
    cited(root, "cg22/ab-express/run-baseline-1.jsonl", 700, 300)
    cited(root, "cg22/ab-express/run-new-1.jsonl", 900, 100, calls=2)
    put(root, "cg22/ab-express/run-new-2.jsonl")  # no explore
    put(root, "broken.jsonl", text="null\n")  # crash
    for path in root.rglob("*"):  # in the past: no row is stored as racy (re-hashed)
        st = path.stat()
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns - 60 * 10**9))
    return root


def indexes(cache_dir):
    return sorted((cache_dir / "corpus-store-v1").rglob("shard-*.index.json"))


def shards(cache_dir):
    return sorted((cache_dir / "corpus-store-v1").rglob("shard-*.parquet"))


def no_parquet(monkeypatch):
    def refuse(data):
        raise AssertionError("a shard was read from its Parquet")

    monkeypatch.setattr(store_mod.CorpusStore, "_parquet_rows", staticmethod(refuse))


def test_every_shard_has_an_index_and_a_warm_sweep_reads_only_the_index(tmp_path, monkeypatch):
    root = corpus(tmp_path / "c")
    cache_dir = tmp_path / "cache"
    cold = run_sweep(root, cache_dir=cache_dir, jobs=1)
    assert [p.name[: -len(".index.json")] for p in indexes(cache_dir)] == [
        p.name[: -len(".parquet")] for p in shards(cache_dir)
    ]
    no_parquet(monkeypatch)
    warm = run_sweep(root, cache_dir=cache_dir, jobs=1)
    assert (warm.cache_hits, warm.cache_misses) == (4, 0)
    assert warm.records == cold.records
    assert to_json_dict(warm) == to_json_dict(cold) == to_json_dict(run_sweep(root, cache=False))


_PROBE = """
import sys
from evalkit.cli import main
status = main(sys.argv[1:])
heavy = ("pyarrow", "numpy", "pandas", "scipy", "matplotlib", "evalkit.session")
print(" ".join(m for m in heavy if m in sys.modules) or "-", file=sys.stderr)
sys.exit(status)
"""


@pytest.mark.parametrize("fmt", [["--json"], []])
def test_a_warm_sweep_command_imports_no_frame_or_parsing_library(tmp_path, fmt):
    root = corpus(tmp_path / "c")
    cache = str(tmp_path / "cache")
    env = {**os.environ, "PYTHONPATH": str(REPO)}

    def sweep(*extra):
        argv = [sys.executable, "-c", _PROBE, "sweep", str(root), *fmt, *extra]
        return subprocess.run(argv, capture_output=True, text=True, env=env, cwd=REPO, check=True)

    cold = sweep("--cache-dir", cache)
    warm = sweep("--cache-dir", cache)
    assert warm.stderr.splitlines()[-1] == "-"
    assert warm.stdout == cold.stdout == sweep("--no-cache").stdout


def _edit_index(path, edit):
    # The document edited, then framed with its digest made anew, so that the checks of the
    # values themselves must refuse it (an edit that leaves the old digest is refused by that).
    from evalkit.store import shards as store_mod

    doc = json.loads(path.read_text())["index"]
    edit(doc)
    path.write_bytes(store_mod._frame_index(json.dumps(doc).encode()))


def _set(column, i, value):
    def edit(doc):
        doc["columns"][column][i] = value

    return edit


@pytest.mark.parametrize(
    "edit",
    [
        lambda p: p.write_text("{not json"),
        lambda p: _edit_index(p, lambda d: d.update(shard_sha256="0" * 64)),  # another shard
        lambda p: _edit_index(p, lambda d: d.update(version=0)),
        lambda p: _edit_index(p, lambda d: d.update(rows=d["rows"] + 1)),
        lambda p: _edit_index(p, lambda d: d["columns"].pop("p_chars")),
        lambda p: _edit_index(p, _set("p_chars", 0, "700")),  # a number as text
        lambda p: _edit_index(p, _set("p_chars", 0, 1.5)),  # not an integer
        lambda p: _edit_index(p, _set("racy", 0, 0)),  # not a boolean
        lambda p: _edit_index(p, _set("states", 0, [[1, 2, 3]])),  # a state of the wrong shape
        lambda p: _edit_index(p, _set("p_status", 0, "finished")),  # not a status
        lambda p: _edit_index(p, _set("files", 0, [7])),  # not a path
        lambda p: _edit_index(p, _set("p_figures", 0, "[1]")),  # figures of the wrong shape
    ],
)
def test_an_index_that_is_not_exactly_right_is_not_used(tmp_path, monkeypatch, edit):
    root = corpus(tmp_path / "c")
    cache_dir = tmp_path / "cache"
    cold = run_sweep(root, cache_dir=cache_dir, jobs=1)
    (index,) = indexes(cache_dir)
    edit(index)
    read = []
    original = store_mod.CorpusStore._parquet_rows
    monkeypatch.setattr(
        store_mod.CorpusStore,
        "_parquet_rows",
        staticmethod(lambda data: read.append(1) or original(data)),
    )
    warm = run_sweep(root, cache_dir=cache_dir, jobs=1)
    assert read, "the shard itself should have been read"
    assert (warm.cache_hits, warm.cache_misses) == (4, 0)  # the shard is good: still hits
    assert to_json_dict(warm) == to_json_dict(cold)


def test_a_shard_rewritten_under_its_index_is_read_itself_and_both_go(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    root = corpus(tmp_path / "c")
    cache_dir = tmp_path / "cache"
    run_sweep(root, cache_dir=cache_dir, jobs=1)
    (shard,) = shards(cache_dir)
    (index,) = indexes(cache_dir)
    rows = pq.read_table(shard).to_pylist()
    next(r for r in rows if r["p_status"] == b"no-explore")["p_chars"] = None
    pq.write_table(pa.Table.from_pylist(rows, schema=store_mod._schema()), shard)
    again = run_sweep(root, cache_dir=cache_dir, jobs=1)
    assert again.cache_misses == 4  # the index no longer describes the shard's bytes
    assert not shard.exists() and not index.exists()
    assert to_json_dict(again) == to_json_dict(run_sweep(root, cache=False, jobs=1))


def test_paths_that_are_not_utf8_survive_the_index(tmp_path, monkeypatch):
    root = corpus(tmp_path / "c")
    name = "cg22/ab-express/run-new-3\udcff.jsonl"  # a file name byte that is not UTF-8
    try:
        cited(root, name, 600, 400)
    except (OSError, UnicodeError):
        pytest.skip("the file system does not take such a name")
    st = (root / name).stat()
    os.utime(root / name, ns=(st.st_atime_ns, st.st_mtime_ns - 60 * 10**9))
    cache_dir = tmp_path / "cache"
    cold = run_sweep(root, cache_dir=cache_dir, jobs=1)
    no_parquet(monkeypatch)
    warm = run_sweep(root, cache_dir=cache_dir, jobs=1)
    assert (warm.cache_hits, warm.cache_misses) == (5, 0)
    assert warm.record(name) == cold.record(name)
    assert to_json_dict(warm) == to_json_dict(cold)


def test_the_corpus_loader_shards_keep_an_index_the_sweep_reads(tmp_path):
    # One store: the loader's rows are as small as the sweep's (its frame rows are in frame
    # files), so its shards get a side index, and a sweep after a load reads only that.
    import evalkit

    root = corpus(tmp_path / "c")
    cache_dir = tmp_path / "cache"
    evalkit.load_corpus(root, cache_dir=cache_dir, jobs=1)
    assert shards(cache_dir) and len(indexes(cache_dir)) == len(shards(cache_dir))
    warm = evalkit.load_corpus(root, cache_dir=cache_dir, jobs=1)
    assert (warm.cache_hits, warm.cache_misses) == (4, 0)
    swept = run_sweep(root, cache_dir=cache_dir, jobs=1)
    assert (swept.cache_hits, swept.cache_misses) == (4, 0)
    assert to_json_dict(swept) == to_json_dict(run_sweep(root, cache=False, jobs=1))
