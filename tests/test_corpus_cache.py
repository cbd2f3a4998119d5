"""The parsed-session cache (evalkit/sweep/cache.py): hits, misses, invalidation, same numbers."""

from __future__ import annotations

import json

from evalkit.corpus.cache import SweepCache, code_fingerprint, default_cache_dir
from evalkit.outputs.sweep_text import to_json_dict
from evalkit.tables.sweep import run_sweep
from tests.sweep_helpers import cited, put


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
    store = SweepCache(tmp_path / "cache")
    newer = SweepCache(tmp_path / "cache", fingerprint=store.fingerprint + "-next")
    files = ("cg22/ab-express/run-new-1.jsonl",)
    k_old, k_new = store.key(root, files), newer.key(root, files)
    assert k_old != k_new
    store.put(k_old, {"status": "no-explore"})
    assert store.get(k_old) == {"status": "no-explore"}
    assert newer.get(k_new) is None
    assert code_fingerprint() == SweepCache(None).fingerprint


def test_corrupt_entries_are_misses_and_get_rewritten(tmp_path):
    root = corpus(tmp_path / "c")
    cache_dir = tmp_path / "cache"
    run_sweep(root, cache_dir=cache_dir, jobs=1)
    for entry in (cache_dir / "sweep").rglob("*.json"):
        entry.write_text("{not json")
    again = run_sweep(root, cache_dir=cache_dir, jobs=1)
    assert again.cache_misses == 4
    third = run_sweep(root, cache_dir=cache_dir, jobs=1)
    assert third.cache_hits == 4
    entry = next((cache_dir / "sweep").rglob("*.json"))
    assert set(json.loads(entry.read_text())) == {"key", "payload"}


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
