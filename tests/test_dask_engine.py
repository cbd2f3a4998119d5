"""The Dask engine gives the local engine's records, on a LocalCluster of 2 workers."""

from __future__ import annotations

import pytest

pytest.importorskip("distributed")

from evalkit.outputs.sweep_text import to_json_dict  # noqa: E402
from evalkit.tables.sweep import run_sweep  # noqa: E402
from tests.sweep_helpers import cited, put  # noqa: E402


@pytest.fixture(scope="module")
def client():
    import distributed

    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    )
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


def corpus(root):
    for i in range(1, 7):
        cited(root, f"cg22/ab-express/run-new-{i}.jsonl", 100 * i, 300, calls=1 + i % 2)
        cited(root, f"cg22/ab-express/run-baseline-{i}.jsonl", 50 * i, 500)
    cited(root, "multi/run-a.jsonl", 500, 500)
    cited(root, "multi/run-a.t2.jsonl", 200, 800)
    put(root, "broken.jsonl", text="null\n")
    return root


def test_dask_records_and_json_equal_the_local_engine(tmp_path, client):
    root = corpus(tmp_path / "c")
    local = run_sweep(root, cache=False, jobs=1)
    remote = run_sweep(root, cache=False, engine="dask", scheduler=client)
    assert remote.records == local.records
    assert to_json_dict(remote) == to_json_dict(local)


def test_dask_results_are_stored_and_reused(tmp_path, client):
    root = corpus(tmp_path / "c")
    cache_dir = tmp_path / "cache"
    cold = run_sweep(root, cache_dir=cache_dir, engine="dask", scheduler=client)
    warm = run_sweep(root, cache_dir=cache_dir, jobs=1)
    assert cold.cache_misses == len(cold.records) and warm.cache_misses == 0
    assert warm.records == cold.records


def test_frames_as_dask_dataframes_equal_load_corpus(tmp_path, client):
    import evalkit
    from evalkit.corpus.parse.dask_cluster import frame

    root = corpus(tmp_path / "c")
    loaded = evalkit.load_corpus(root, cache=False, jobs=1)
    for name in ("sessions", "calls", "tool_calls"):
        ddf = frame(root, name, sessions_per_partition=4)
        assert ddf.npartitions == 4
        got = ddf.compute().reset_index(drop=True)
        want = loaded.frame(name).reset_index(drop=True)
        assert got.equals(want), name
    sessions = frame(root, "sessions", sessions_per_partition=4)
    assert int(sessions["chars"].sum().compute()) == int(loaded.sessions_df()["chars"].sum())


def test_load_corpus_on_dask_equals_local(tmp_path, client):
    import evalkit

    root = corpus(tmp_path / "c")
    local = evalkit.load_corpus(root, cache=False, jobs=1)
    remote = evalkit.load_corpus(root, cache=False, engine="dask", scheduler=client)
    for name in ("sessions", "calls", "sections", "files", "tool_calls"):
        assert remote.frame(name).equals(local.frame(name)), name


def test_an_unreachable_scheduler_is_one_line_exit_2(tmp_path, capsys, monkeypatch):
    from evalkit.cli import main
    from evalkit.corpus.parse import dask_cluster as dask_engine

    monkeypatch.setattr(dask_engine, "CONNECT_TIMEOUT", "1s")

    root = corpus(tmp_path / "c")
    code = main(
        ["sweep", str(root), "--no-cache", "--engine", "dask", "--scheduler", "tcp://127.0.0.1:9"]
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "cannot reach a Dask scheduler" in err[0]


def exported_frames(out):
    import pandas as pd

    from evalkit.corpus.frames import FRAME_NAMES

    return {name: pd.read_parquet(out / f"{name}.parquet") for name in FRAME_NAMES}


def test_export_on_dask_writes_the_local_engine_files(tmp_path, client, monkeypatch):
    from evalkit.corpus import load as load_mod
    from evalkit.corpus.frames import FRAME_NAMES
    from evalkit.corpus.load import export_corpus

    monkeypatch.setattr(load_mod, "LOAD_BATCH", 3)  # several pieces of parsed rows
    monkeypatch.setattr(load_mod, "CHUNK_ROWS", 4)
    root = corpus(tmp_path / "c")
    local = export_corpus(root, tmp_path / "local", jobs=1, cache=False)
    remote = export_corpus(root, tmp_path / "dask", cache=False, engine="dask", scheduler=client)
    assert remote.rows == local.rows and remote.errors == local.errors and local.errors
    want, got = exported_frames(tmp_path / "local"), exported_frames(tmp_path / "dask")
    for name in FRAME_NAMES:
        assert got[name].equals(want[name]), name
    assert len(want["calls"]) > 4  # more than one chunk
    for name in [*(f"{n}.parquet" for n in FRAME_NAMES), "columns.json"]:
        assert (tmp_path / "dask" / name).read_bytes() == (tmp_path / "local" / name).read_bytes()


def test_export_on_dask_stores_what_a_warm_local_export_reads(tmp_path, client):
    from evalkit.corpus.load import export_corpus

    root = corpus(tmp_path / "c")
    cache_dir = tmp_path / "cache"
    export_corpus(root, tmp_path / "cold", cache_dir=cache_dir, engine="dask", scheduler=client)
    import evalkit

    warm = evalkit.load_corpus(root, cache_dir=cache_dir, jobs=1)
    assert warm.cache_misses == 0 and warm.cache_hits == len(warm.records)
    export_corpus(root, tmp_path / "warm", cache_dir=cache_dir, jobs=1)
    assert exported_frames(tmp_path / "warm").keys() == exported_frames(tmp_path / "cold").keys()
    for name, df in exported_frames(tmp_path / "cold").items():
        assert exported_frames(tmp_path / "warm")[name].equals(df), name


def test_evalkit_export_engine_dask_command(tmp_path, client, capsys):
    from evalkit.cli import main

    root = corpus(tmp_path / "c")
    assert main(["export", str(root), "--to", str(tmp_path / "l"), "--no-cache", "-j", "1"]) == 0
    local_out = capsys.readouterr().out
    address = client.scheduler.address
    argv = ["export", str(root), "--to", str(tmp_path / "d"), "--no-cache"]
    assert main([*argv, "--engine", "dask", "--scheduler", address]) == 0
    assert capsys.readouterr().out == local_out.replace(str(tmp_path / "l"), str(tmp_path / "d"))
    for name, df in exported_frames(tmp_path / "l").items():
        assert exported_frames(tmp_path / "d")[name].equals(df), name


def test_export_scheduler_needs_engine_dask(tmp_path, capsys):
    from evalkit.cli import main

    root = corpus(tmp_path / "c")
    code = main(["export", str(root), "--to", str(tmp_path / "o"), "--scheduler", "tcp://x:1"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "--scheduler needs --engine dask" in err[0]
    assert not (tmp_path / "o").exists()
