"""`evalkit cache` (evalkit/store/admin.py, evalkit/outputs/cache_text.py,
evalkit/commands/cache.py): what the store holds, prune and clear, and that they never remove
what evalkit did not create."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest

from evalkit.cli import main
from evalkit.corpus.discover import discover
from evalkit.corpus.parse import analyse_sessions
from evalkit.outputs.cache_text import age_text, size_text
from evalkit.store import shards as store_mod
from evalkit.store.admin import (
    STORE_SUBDIR,
    TEMP_AGE_NS,
    cache_info,
    clear_cache,
    prune_cache,
)
from evalkit.store.shards import RECORD, CorpusStore, code_fingerprint, fingerprint_parts
from evalkit.tables.sweep import run_sweep
from tests.sweep_helpers import cited, put

SHARD_NAME = "shard-0000000000000001-" + "0" * 32 + ".parquet"


def corpus(root: Path) -> Path:
    cited(root, "cg22/ab-express/run-baseline-1.jsonl", 700, 300)
    cited(root, "cg22/ab-express/run-new-1.jsonl", 900, 100, calls=2)
    put(root, "cg22/ab-express/run-new-2.jsonl")  # no explore
    put(root, "broken.jsonl", text="null\n")  # crash
    return root


def refuse(name):
    raise ValueError(f"not strict JSON: {name}")


def cli(capsys, *argv) -> tuple[int, str, str]:
    code = main(["cache", *argv])
    got = capsys.readouterr()
    return code, got.out, got.err


def cli_json(capsys, *argv) -> dict:
    code, out, err = cli(capsys, *argv, "--json")
    assert code == 0, err
    return json.loads(out, parse_constant=refuse)


def stale_store(cache: Path, root: Path, suffix: str = "-older") -> CorpusStore:
    """A store as another evalkit code version writes it (the `fingerprint=` override)."""
    s = CorpusStore(cache, root, fingerprint=code_fingerprint() + suffix)
    analyse_sessions(root, discover(root).sessions, cache=s, jobs=1)
    assert s.directory is not None and s.directory.is_dir()
    return s


def current_store(cache: Path, root: Path) -> CorpusStore:
    s = CorpusStore(cache, root)
    analyse_sessions(root, discover(root).sessions, cache=s, jobs=1)
    return s


def older_entries(cache: Path, n: int) -> list[Path]:
    """Per-session cache files laid out as evalkit's old SweepCache wrote them:
    `sweep/<key[:2]>/<key>.json` holding {"key", "payload"}."""
    out = []
    for i in range(n):
        key = hashlib.sha256(f"session {i}".encode()).hexdigest()
        path = cache / "sweep" / key[:2] / f"{key}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"key": key, "payload": {"status": "parsed"}}))
        out.append(path)
    return out


def files_under(path: Path) -> list[str]:
    return sorted(p.relative_to(path).as_posix() for p in path.rglob("*") if not p.is_dir())


# --- info ---------------------------------------------------------------------------------------


def test_info_on_a_missing_and_an_empty_cache(tmp_path, capsys):
    missing = tmp_path / "nowhere"
    code, out, err = cli(capsys, "--cache-dir", str(missing))
    assert code == 0 and not err
    assert "does not exist yet" in out and "evalkit cache: " in out
    assert not missing.exists()  # looking never creates it
    (tmp_path / "empty").mkdir()
    code, out, _ = cli(capsys, "info", "--cache-dir", str(tmp_path / "empty"))
    assert code == 0 and "holds nothing evalkit stored" in out
    doc = cli_json(capsys, "--cache-dir", str(tmp_path / "empty"))
    assert doc["exists"] is True and doc["stores"] == [] and doc["size_bytes"] == 0
    assert cli_json(capsys, "--cache-dir", str(missing))["exists"] is False


def test_info_after_a_sweep(tmp_path, capsys):
    root = corpus(tmp_path / "c")
    cache = tmp_path / "cache"
    run_sweep(root, cache_dir=cache, jobs=1)
    doc = cli_json(capsys, "--cache-dir", str(cache))
    (s,) = doc["stores"]
    assert s["corpus"] == os.path.realpath(root) and s["corpus_as_given"] == str(root)
    assert s["kind"] == "sweep" and s["format"] is None
    assert s["evalkit_version"] == store_mod.evalkit.__version__
    assert s["current"] is True and s["corpus_present"] is True and s["prune"] is None
    assert s["sessions"] == len(discover(root).sessions) == 4
    store_dir = cache / s["path"]
    on_disk = [p for p in store_dir.iterdir()]
    assert s["files"] == len(on_disk) and s["size_bytes"] == sum(p.stat().st_size for p in on_disk)
    assert doc["size_bytes"] == s["size_bytes"] and s["last_used"].endswith("Z")
    code, out, _ = cli(capsys, "--cache-dir", str(cache))
    assert code == 0
    line = next(x for x in out.splitlines() if x.split()[:1] == [os.path.realpath(root)])
    assert line.split()[1:5] == ["sweep", store_mod.evalkit.__version__, "current", "present"]
    assert "Nothing to prune" in out


def test_the_record_is_written_once_with_what_the_store_is_for(tmp_path):
    root = corpus(tmp_path / "c")
    cache = tmp_path / "cache"
    s = current_store(cache, root)
    record = s.directory / RECORD
    doc = json.loads(record.read_text())
    assert doc["fingerprint"] == code_fingerprint() and doc["code"] == code_fingerprint()
    assert doc["corpus"] == str(root) and doc["corpus_resolved"] == os.path.realpath(root)
    assert (doc["kind"], doc["format"], doc["evalkit"]) == ("sweep", None, "0.1.0")
    before = record.read_bytes(), record.stat().st_mtime_ns
    cited(root, "cg22/ab-express/run-baseline-1.jsonl", 100, 900)  # a miss: a new shard
    again = current_store(cache, root)
    assert again.misses == 1
    assert (record.read_bytes(), record.stat().st_mtime_ns) == before
    assert not [p for p in s.directory.iterdir() if p.name.startswith(".tmp-")]


def test_kinds_and_forced_formats_are_recorded(tmp_path, capsys):
    from evalkit.tables.corpus import load_corpus

    root = corpus(tmp_path / "c")
    cache = tmp_path / "cache"
    run_sweep(root, cache_dir=cache, jobs=1, format="claude-code")
    load_corpus(root, cache_dir=cache, jobs=1)
    got = {(s["kind"], s["format"]) for s in cli_json(capsys, "--cache-dir", str(cache))["stores"]}
    # The loader writes to the sweep's store (one store for every command).
    assert got == {("sweep", "claude-code"), ("sweep", None)}
    code, out, _ = cli(capsys, "--cache-dir", str(cache))
    assert "sweep --format claude-code" in out
    assert fingerprint_parts("abc:frames:0123456789abcdef:format:codex-exec") == {
        "code": "abc",
        "kind": "frames",
        "format": "codex-exec",
        "profile": "0123456789abcdef",
        "limits": None,
    }
    assert fingerprint_parts("abc:trials:0123")["kind"] == "trials"


def test_info_after_a_code_fingerprint_change(tmp_path, capsys):
    root = corpus(tmp_path / "c")
    cache = tmp_path / "cache"
    current_store(cache, root)
    stale_store(cache, root)
    stores = cli_json(capsys, "--cache-dir", str(cache))["stores"]
    assert sorted((s["current"], s["prune"]) for s in stores) == [(False, "stale"), (True, None)]
    code, out, _ = cli(capsys, "--cache-dir", str(cache))
    assert "(1 current, 1 stale)" in out and "would free" in out


def test_a_store_without_its_record_is_unknown_never_an_error(tmp_path, capsys):
    root = corpus(tmp_path / "c")
    cache = tmp_path / "cache"
    old = stale_store(cache, root)
    (old.directory / RECORD).unlink()
    cur = current_store(cache, root)
    (cur.directory / RECORD).write_text("{not json")  # damaged: as good as absent
    stores = {s["current"]: s for s in cli_json(capsys, "--cache-dir", str(cache))["stores"]}
    assert stores[False]["evalkit_version"] is None and stores[False]["corpus"] is None
    assert stores[False]["prune"] == "unknown" and stores[False]["sessions"] == 4
    # This evalkit's sweep store is known by its directory name even without a record.
    assert stores[True]["kind"] == "sweep" and stores[True]["prune"] is None
    code, out, _ = cli(capsys, "--cache-dir", str(cache))
    assert code == 0 and "unknown (corpus-store-v1/" in out
    prune_cache(cache)
    assert not old.directory.exists() and cur.directory.is_dir()


def test_this_evalkits_stores_are_known_by_name_without_a_record(tmp_path):
    from evalkit.tables.corpus import load_corpus
    from evalkit.tables.trials import run_trial_sweep

    root = corpus(tmp_path / "c")
    cache = tmp_path / "cache"
    run_sweep(root, cache_dir=cache, jobs=1)
    run_sweep(root, cache_dir=cache, jobs=1, format="claude-code")
    load_corpus(root, cache_dir=cache, jobs=1)
    load_corpus(root, cache_dir=cache, jobs=1, profile="sourcegraph")
    run_trial_sweep(root, cache_dir=cache, jobs=1)
    # Every file a store holds is named as evalkit's (what prune and clear may remove).
    assert cache_info(cache).foreign == () and cache_info(cache).files == len(files_under(cache))
    with_records = {(s.kind, s.format) for s in cache_info(cache).stores}
    # One store per set of reading options: the loader shares the sweep's and, with a
    # profile, the trial sweep's (sourcegraph's; the trial sweep's own is codegraph's).
    assert with_records == {
        ("sweep", None),
        ("sweep", "claude-code"),
        ("trials", None),
    }
    for record in cache.glob(f"{STORE_SUBDIR}/*/*/{RECORD}"):
        record.unlink()
    stores = cache_info(cache).stores
    assert len(stores) == 4 and all(s.current and s.version is None for s in stores)
    assert {(s.kind, s.format) for s in stores} == with_records
    assert prune_cache(cache).files == 0


def test_a_record_that_names_another_directory_is_not_trusted(tmp_path, capsys):
    root = corpus(tmp_path / "c")
    other = corpus(tmp_path / "other")
    cache = tmp_path / "cache"
    s = stale_store(cache, root)
    doc = json.loads((s.directory / RECORD).read_text())
    doc["corpus_resolved"] = str(other)  # copied or edited: does not hash to this directory
    (s.directory / RECORD).write_text(json.dumps(doc))
    (st,) = cli_json(capsys, "--cache-dir", str(cache))["stores"]
    assert st["corpus"] is None and st["corpus_present"] is None


# --- prune --------------------------------------------------------------------------------------


def test_prune_dry_run_then_for_real_keeps_the_store_in_use(tmp_path, capsys):
    root = corpus(tmp_path / "c")
    cache = tmp_path / "cache"
    run_sweep(root, cache_dir=cache, jobs=1)
    old = stale_store(cache, root)
    entries = older_entries(cache, 3)
    before = files_under(cache)
    code, out, _ = cli(capsys, "prune", "--dry-run", "--cache-dir", str(cache))
    assert code == 0 and files_under(cache) == before  # nothing removed
    assert "would remove 1 store directory and 3 older per-session cache files" in out
    assert "made by another evalkit version" in out
    dry = cli_json(capsys, "prune", "--dry-run", "--cache-dir", str(cache))
    code, out, _ = cli(capsys, "prune", "--cache-dir", str(cache))
    assert code == 0 and "removed 1 store directory and 3 older per-session cache files" in out
    assert not old.directory.exists() and not any(p.exists() for p in entries)
    assert not (cache / "sweep").exists() and not old.directory.parent.exists()
    removed = len(before) - len(files_under(cache))
    assert dry["files"] == removed and dry["older_entries"] == 3
    assert [s["reason"] for s in dry["stores"]] == ["stale"]
    warm = run_sweep(root, cache_dir=cache, jobs=1)  # the current store was kept
    assert (warm.cache_hits, warm.cache_misses) == (4, 0)
    code, out, _ = cli(capsys, "prune", "--cache-dir", str(cache))
    assert code == 0 and "nothing to remove" in out


def test_prune_removes_the_store_of_a_corpus_that_no_longer_exists(tmp_path, capsys):
    kept = corpus(tmp_path / "kept")
    gone = corpus(tmp_path / "gone")
    cache = tmp_path / "cache"
    run_sweep(kept, cache_dir=cache, jobs=1)
    run_sweep(gone, cache_dir=cache, jobs=1)
    shutil.rmtree(gone)
    stores = {s["corpus"]: s for s in cli_json(capsys, "--cache-dir", str(cache))["stores"]}
    assert stores[os.path.realpath(gone)]["corpus_present"] is False
    assert stores[os.path.realpath(gone)]["prune"] == "missing"
    doc = cli_json(capsys, "prune", "--cache-dir", str(cache))
    assert [(s["corpus"], s["reason"]) for s in doc["stores"]] == [
        (os.path.realpath(gone), "missing")
    ]
    (left,) = cli_json(capsys, "--cache-dir", str(cache))["stores"]
    assert left["corpus"] == os.path.realpath(kept)


def test_prune_removes_old_temporary_files_of_a_current_store_only(tmp_path):
    root = corpus(tmp_path / "c")
    cache = tmp_path / "cache"
    s = current_store(cache, root)
    old_tmp = s.directory / ".tmp-abcd1234.parquet"
    new_tmp = s.directory / ".tmp-efgh5678.json"
    old_tmp.write_bytes(b"half a shard")
    new_tmp.write_bytes(b"a write in progress")
    now = old_tmp.stat().st_mtime_ns + TEMP_AGE_NS + 1
    os.utime(new_tmp, ns=(now, now))
    dry = prune_cache(cache, dry_run=True, now_ns=now)
    assert (dry.temp_files, dry.files, dry.stores) == (1, 1, ())
    assert old_tmp.exists()
    done = prune_cache(cache, now_ns=now)
    assert done.temp_files == 1 and not old_tmp.exists() and new_tmp.exists()
    assert (s.directory / RECORD).exists() and any(s.directory.glob("shard-*.parquet"))


# --- clear --------------------------------------------------------------------------------------


def test_clear_dry_run_then_for_real(tmp_path, capsys):
    root = corpus(tmp_path / "c")
    cache = tmp_path / "cache"
    run_sweep(root, cache_dir=cache, jobs=1)
    stale_store(cache, root)
    older_entries(cache, 2)
    before = files_under(cache)
    code, out, _ = cli(capsys, "clear", "--dry-run", "--cache-dir", str(cache))
    assert code == 0 and files_under(cache) == before and "would remove" in out
    code, out, _ = cli(capsys, "clear", "--cache-dir", str(cache))
    assert code == 0 and "removed 2 store directories and 2 older" in out
    assert f"{len(before)} files" in out
    assert cache.is_dir() and list(cache.iterdir()) == []  # the cache directory itself stays
    code, out, _ = cli(capsys, "clear", "--cache-dir", str(cache))
    assert code == 0 and "nothing to remove" in out
    run_sweep(root, cache_dir=cache, jobs=1)  # a cleared cache fills again
    assert len(cache_info(cache).stores) == 1


# --- safety -------------------------------------------------------------------------------------


def test_a_foreign_file_inside_a_store_survives_with_its_directories(tmp_path, capsys):
    root = corpus(tmp_path / "c")
    cache = tmp_path / "cache"
    s = stale_store(cache, root)
    notes = s.directory / "notes.txt"
    notes.write_text("mine")
    lookalike = s.directory / "shard-x.parquet"  # not evalkit's name pattern
    lookalike.write_text("mine too")
    mine_dir = s.directory / SHARD_NAME  # evalkit's name, but a directory: not evalkit's
    mine_dir.mkdir()
    (cache / "mine.txt").write_text("beside evalkit's folders")
    doc = cli_json(capsys, "--cache-dir", str(cache))
    assert len(doc["foreign"]) == 3
    code, out, _ = cli(capsys, "prune", "--cache-dir", str(cache))
    assert code == 0 and "left alone, not created by evalkit: 3" in out
    for p in (notes, lookalike, mine_dir, cache / "mine.txt"):
        assert p.exists()
    assert sorted(p.name for p in s.directory.iterdir()) == sorted(
        ["notes.txt", "shard-x.parquet", SHARD_NAME]
    )
    # What is left is no store any more: listed as left alone, never pruned again.
    assert cache_info(cache).stores == ()
    code, out, _ = cli(capsys, "prune", "--cache-dir", str(cache))
    assert code == 0 and "nothing to remove" in out and "left alone" in out
    clear_cache(cache)
    assert notes.read_text() == "mine" and lookalike.exists() and mine_dir.is_dir()
    assert (cache / "mine.txt").exists()


def test_a_symlink_to_outside_is_never_followed(tmp_path, capsys):
    root = corpus(tmp_path / "c")
    cache = tmp_path / "cache"
    outside = tmp_path / "outside"
    outside.mkdir()
    precious = outside / SHARD_NAME
    precious.write_bytes(b"not a shard")
    (outside / RECORD).write_text("{}")
    (entry,) = older_entries(outside, 1)  # outside/sweep/<xx>/<key>.json
    outside = outside / "sweep"  # the links point here: evalkit's names at both levels
    precious.rename(outside / SHARD_NAME)
    (outside.parent / RECORD).rename(outside / RECORD)
    precious = outside / SHARD_NAME
    s = stale_store(cache, root)
    # A link named as a shard, and a link standing for a whole store directory.
    link_file = s.directory / ("shard-0000000000000002-" + "1" * 32 + ".parquet")
    link_file.symlink_to(precious)
    link_dir = s.directory.parent / ("f" * 20)
    link_dir.symlink_to(outside, target_is_directory=True)
    (cache / "sweep").symlink_to(outside, target_is_directory=True)
    for argv in (["prune"], ["clear"]):
        code, out, _ = cli(capsys, *argv, "--cache-dir", str(cache))
        assert code == 0
        assert sorted(p.name for p in outside.iterdir()) == sorted(
            [SHARD_NAME, RECORD, entry.parent.name]
        )
        assert precious.read_bytes() == b"not a shard" and entry.exists()
    assert link_file.is_symlink() and link_dir.is_symlink() and (cache / "sweep").is_symlink()
    info = cache_info(cache)
    assert "sweep" in info.refused
    assert all(
        st.path != f"{STORE_SUBDIR}/{link_dir.parent.name}/{link_dir.name}" for st in info.stores
    )


def test_a_symlinked_store_folder_is_refused(tmp_path, capsys):
    root = corpus(tmp_path / "c")
    elsewhere = tmp_path / "elsewhere"
    run_sweep(root, cache_dir=elsewhere, jobs=1)
    before = files_under(elsewhere)
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / STORE_SUBDIR).symlink_to(elsewhere / STORE_SUBDIR, target_is_directory=True)
    code, out, _ = cli(capsys, "--cache-dir", str(cache))
    assert code == 0 and "corpus-store-v1 is a symbolic link or not a directory" in out
    code, out, _ = cli(capsys, "clear", "--cache-dir", str(cache))
    assert code == 0 and files_under(elsewhere) == before
    assert (cache / STORE_SUBDIR).is_symlink()


def test_a_file_that_cannot_be_removed_is_listed_and_exit_1(tmp_path, capsys, monkeypatch):
    root = corpus(tmp_path / "c")
    cache = tmp_path / "cache"
    s = stale_store(cache, root)
    unlink = os.unlink

    def refusing(name, *args, **kwargs):  # as a read-only directory refuses (root ignores modes)
        if name == RECORD:
            raise PermissionError(13, "Permission denied")
        return unlink(name, *args, **kwargs)

    monkeypatch.setattr(os, "unlink", refusing)
    code, out, err = cli(capsys, "prune", "--cache-dir", str(cache))
    monkeypatch.undo()
    assert code == 1 and not err
    assert (
        f"could not remove 1 file:\n  {s.directory.relative_to(cache).as_posix()}/{RECORD}" in out
    )
    assert "Permission denied" in out
    assert [p.name for p in s.directory.iterdir()] == [RECORD]  # the rest went; it stays


# --- errors and exit codes ----------------------------------------------------------------------


def test_cache_dir_that_is_a_file_is_one_line_exit_2(tmp_path, capsys):
    f = tmp_path / "file"
    f.write_text("x")
    for argv in ([], ["info"], ["prune"], ["clear", "--dry-run"], ["--json"]):
        code, out, err = cli(capsys, *argv, "--cache-dir", str(f))
        assert code == 2 and not out
        assert err.count("\n") == 1 and "not a directory" in err and str(f) in err
        assert "Traceback" not in err
    assert f.read_text() == "x"


def test_options_before_or_after_the_action(tmp_path, capsys):
    cache = tmp_path / "cache"
    older_entries(cache, 1)
    doc = json.loads(
        main_out(capsys, ["cache", "--json", "--cache-dir", str(cache), "prune", "--dry-run"])
    )
    assert doc["command"] == "cache prune" and doc["dry_run"] is True and doc["older_entries"] == 1
    with pytest.raises(SystemExit) as done:
        main(["cache", "prune", "--bogus"])
    err = capsys.readouterr().err
    assert done.value.code == 2 and err.count("\n") == 1 and "--bogus" in err


def main_out(capsys, argv) -> str:
    assert main(argv) == 0
    return capsys.readouterr().out


def test_default_location_follows_xdg_cache_home(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    older_entries(tmp_path / "xdg" / "evalkit", 2)
    doc = json.loads(main_out(capsys, ["cache", "--json"]))
    assert doc["cache_dir"] == str(tmp_path / "xdg" / "evalkit")
    assert doc["older_entries"]["entries"] == 2


# --- words --------------------------------------------------------------------------------------


def test_sizes_and_ages_in_words():
    assert [size_text(n) for n in (0, 1, 999, 1000, 215_156, 9_400_000, 3 * 10**12)] == [
        "0 bytes",
        "1 byte",
        "999 bytes",
        "1.0 kB",
        "215.2 kB",
        "9.4 MB",
        "3000.0 GB",
    ]
    s = 10**9
    assert [age_text(t, 10**6 * s) for t in (None, 10**6 * s + 5 * s)] == ["unknown", "just now"]
    assert age_text(10**6 * s - 61 * s, 10**6 * s) == "1 minute ago"
    assert age_text(10**6 * s - 7200 * s, 10**6 * s) == "2 hours ago"
    assert age_text(10**6 * s - 3 * 86400 * s, 10**6 * s) == "3 days ago"


def test_an_empty_store_directory_is_pruned_once(tmp_path, capsys):
    cache = tmp_path / "cache"
    empty = cache / STORE_SUBDIR / ("a" * 20) / ("b" * 20)
    empty.mkdir(parents=True)
    (st,) = cache_info(cache).stores
    assert (st.files, st.sessions, st.current, st.version) == (0, 0, False, None)
    code, out, _ = cli(capsys, "prune", "--cache-dir", str(cache))
    assert code == 0 and "removed 1 store directory: 0 files, 0 bytes" in out
    assert not empty.parent.exists() and (cache / STORE_SUBDIR).is_dir()
    code, out, _ = cli(capsys, "prune", "--cache-dir", str(cache))
    assert "nothing to remove" in out


def test_a_corpus_name_that_is_not_utf8(tmp_path, capsys):
    root = corpus(tmp_path / os.fsdecode(b"c\xff\x1b"))
    cache = tmp_path / "cache"
    run_sweep(root, cache_dir=cache, jobs=1)
    (st,) = cli_json(capsys, "--cache-dir", str(cache))["stores"]
    assert st["corpus"] == os.path.realpath(root) and st["corpus_present"] is True
    code, out, _ = cli(capsys, "--cache-dir", str(cache))
    assert code == 0 and "c\\udcff\\x1b" in out and "\x1b" not in out
    shutil.rmtree(root)
    (gone,) = prune_cache(cache).stores
    assert gone[1] == "missing" and cache_info(cache).stores == ()


def test_the_test_run_has_a_cache_of_its_own():
    # tests/conftest.py: no test writes into the user's own ~/.cache/evalkit.
    from evalkit.store.shards import default_cache_dir

    home = os.path.realpath(os.path.expanduser("~"))
    assert not os.path.realpath(default_cache_dir()).startswith(os.path.join(home, ".cache"))
    assert os.path.basename(os.path.dirname(default_cache_dir())).startswith("evalkit-test-cache-")
