"""The sweep's output snapshot (evalkit/store/snapshot.py): a warm `evalkit sweep` prints the
stored output only when nothing it depends on changed, and is otherwise the sweep it always was."""

from __future__ import annotations

import io
import json
import os

import pytest

from evalkit.cli import main
from evalkit.store import snapshot as snapshot_mod
from evalkit.store.snapshot import tree_state
from evalkit.tables import sweep as sweep_mod
from tests.sweep_helpers import cited, put

HOUR_AGO = 3600


def corpus(root):
    cited(root, "cg22/ab-express/run-baseline-1.jsonl", 700, 300)
    cited(root, "cg22/ab-express/run-new-1.jsonl", 900, 100, calls=2)
    cited(root, "cg22/ab-express/run-new-2.jsonl", 400, 600)
    put(root, "broken.jsonl", text="null\n")  # a crash, reported
    put(root, "notes.txt", text="not a transcript\n")
    return root


def count_calls(monkeypatch, module, name):
    """A list that gets an item each time `module.name` is called (it still runs)."""
    calls = []
    real = getattr(module, name)

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, counting)
    return calls


@pytest.fixture
def counted(monkeypatch):
    """How many times the sweep itself ran (a snapshot hit runs none)."""
    return count_calls(monkeypatch, sweep_mod, "run_sweep")


def sweep(capsys, *argv):
    code = main(["sweep", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


def snapshots(cache):
    return sorted(p.name for p in cache.rglob("snapshot-*.out"))


@pytest.mark.parametrize(
    "options",
    [(), ("--json",), ("--full",), ("--list-files",), ("--tail", "1"), ("--arms", "new,baseline")],
)
def test_a_hit_prints_exactly_what_the_sweep_printed(tmp_path, capsys, trusted, counted, options):
    root = corpus(tmp_path / "c")
    cache = tmp_path / "cache"
    fresh = sweep(capsys, root, "--no-cache", *options)
    first = sweep(capsys, root, "--cache-dir", cache, *options)
    assert len(counted) == 2 and len(snapshots(cache)) == 1
    again = sweep(capsys, root, "--cache-dir", cache, *options)
    assert len(counted) == 2  # printed from the snapshot: no sweep ran
    assert fresh == first == again


def test_markdown_is_stored_and_written_again(tmp_path, capsys, trusted, counted):
    root = corpus(tmp_path / "c")
    cache = tmp_path / "cache"
    md1, md2 = tmp_path / "one.md", tmp_path / "two.md"
    first = sweep(capsys, root, "--cache-dir", cache, "--markdown", md1)
    again = sweep(capsys, root, "--cache-dir", cache, "--markdown", md2)
    assert len(counted) == 1 and first == again
    assert md2.read_bytes() == md1.read_bytes() and "| " in md1.read_text(encoding="utf-8")
    # Without --markdown the output is another snapshot: the sweep runs.
    sweep(capsys, root, "--cache-dir", cache)
    assert len(counted) == 2


def test_the_bundled_corpus_note_is_printed_on_a_hit(capsys, trusted, counted, tmp_path):
    cache = tmp_path / "cache"
    first = sweep(capsys, "--json", "--cache-dir", cache)
    again = sweep(capsys, "--json", "--cache-dir", cache)
    assert len(counted) == 1
    assert first == again and "synthetic" in again[2]


def edit_keeping_size_and_times(path):
    # The same size and modification time: only the status-change time tells.
    st = os.stat(path)
    data = path.read_bytes()
    changed = data.replace(b'"q"', b'"z"', 1)
    assert changed != data and len(changed) == len(data)
    path.write_bytes(changed)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert os.stat(path).st_mtime_ns == st.st_mtime_ns


@pytest.mark.parametrize(
    "change",
    [
        "content",
        "same-size-and-time",
        "new-file",
        "removed-file",
        "renamed",
        "hidden-dir-file",
        "new-directory",
    ],
)
def test_any_change_under_the_root_is_a_miss(tmp_path, capsys, trusted, counted, change):
    root = corpus(tmp_path / "c")
    cache = tmp_path / "cache"
    sweep(capsys, root, "--cache-dir", cache, "--list-files")
    run = root / "cg22/ab-express/run-new-2.jsonl"
    if change == "content":
        cited(root, "cg22/ab-express/run-new-2.jsonl", 100, 900)
    elif change == "same-size-and-time":
        edit_keeping_size_and_times(run)
    elif change == "new-file":
        cited(root, "cg22/ab-express/run-new-3.jsonl", 50, 950)
    elif change == "removed-file":
        run.unlink()
    elif change == "renamed":
        run.rename(root / "cg22/ab-express/run-new-7.jsonl")
    elif change == "hidden-dir-file":
        put(root, ".git/objects/x", text="x")  # discovery counts a hidden directory's files
    else:
        (root / "empty").mkdir()
    got = sweep(capsys, root, "--cache-dir", cache, "--list-files")
    assert len(counted) == 2
    assert got == sweep(capsys, root, "--no-cache", "--list-files")
    sweep(capsys, root, "--cache-dir", cache, "--list-files")
    assert len(counted) == 3  # the changed tree's output is stored: the next run is a hit


def test_a_symbolic_links_target_is_part_of_the_state(tmp_path, capsys, trusted, counted):
    root = corpus(tmp_path / "c")
    outside = cited(tmp_path / "elsewhere", "run.jsonl", 300, 700)
    (root / "cg22/ab-express/run-baseline-2.jsonl").symlink_to(outside)
    cache = tmp_path / "cache"
    sweep(capsys, root, "--cache-dir", cache)
    sweep(capsys, root, "--cache-dir", cache)
    assert len(counted) == 1
    cited(tmp_path / "elsewhere", "run.jsonl", 950, 50)  # the link is unchanged, its target not
    got = sweep(capsys, root, "--cache-dir", cache)
    assert len(counted) == 2 and got == sweep(capsys, root, "--no-cache")


def test_reading_limits_and_options_key_the_snapshot(
    tmp_path, capsys, trusted, counted, monkeypatch
):
    root = corpus(tmp_path / "c")
    cache = tmp_path / "cache"
    sweep(capsys, root, "--cache-dir", cache)
    monkeypatch.setenv("EVALKIT_MAX_SESSION_MB", "0.0001")
    low = sweep(capsys, root, "--cache-dir", cache)
    assert len(counted) == 2 and "0 sessions with at least one answered explore" in low[1]
    monkeypatch.delenv("EVALKIT_MAX_SESSION_MB")
    for options in (("--tail", "2"), ("--exclude", "raced"), ("--format", "claude-code")):
        sweep(capsys, root, "--cache-dir", cache, *options)
    assert len(counted) == 5
    sweep(capsys, root, "--cache-dir", cache)
    assert len(counted) == 5  # the first snapshot is still there, and still right


def test_verify_and_no_cache_never_read_one(tmp_path, capsys, trusted, counted):
    root = corpus(tmp_path / "c")
    cache = tmp_path / "cache"
    first = sweep(capsys, root, "--cache-dir", cache)
    assert sweep(capsys, root, "--cache-dir", cache, "--verify") == first
    assert len(counted) == 2
    sweep(capsys, root, "--no-cache", "--cache-dir", tmp_path / "other")
    assert len(counted) == 3 and not (tmp_path / "other").exists()


def test_a_tree_changed_within_two_seconds_gets_no_snapshot(tmp_path, capsys, counted):
    root = corpus(tmp_path / "c")  # just written: its times are too recent to trust
    cache = tmp_path / "cache"
    first = sweep(capsys, root, "--cache-dir", cache)
    assert snapshots(cache) == []
    assert sweep(capsys, root, "--cache-dir", cache) == first
    assert len(counted) == 2


def test_a_recent_status_change_counts_though_the_modification_time_is_old(tmp_path):
    root = corpus(tmp_path / "c")
    for path in root.rglob("*.jsonl"):
        os.utime(path, (1, 1))  # an old modification time; the status change is now
    state = tree_state(str(root))
    assert state.newest_ns > 10**18  # the status-change time, not the year 1970


@pytest.mark.parametrize("damage", ["cut", "flipped", "empty", "foreign-tree", "symlink"])
def test_a_damaged_snapshot_is_a_miss_then_replaced(tmp_path, capsys, trusted, counted, damage):
    root = corpus(tmp_path / "c")
    cache = tmp_path / "cache"
    first = sweep(capsys, root, "--cache-dir", cache, "--json")
    (path,) = cache.rglob("snapshot-*.out")
    data = path.read_bytes()
    if damage == "cut":
        path.write_bytes(data[: len(data) // 2])
    elif damage == "flipped":
        i = data.index(b'"sessions"')
        path.write_bytes(data[:i] + b'"sessionz"' + data[i + 10 :])
    elif damage == "empty":
        path.write_bytes(b"")
    elif damage == "foreign-tree":
        other = corpus(tmp_path / "d")
        cited(other, "cg22/ab-express/run-new-2.jsonl", 10, 990)
        sweep(capsys, other, "--cache-dir", tmp_path / "cache2", "--json")
        (theirs,) = (tmp_path / "cache2").rglob("snapshot-*.out")
        path.write_bytes(theirs.read_bytes())  # intact, but of another tree's state
    else:
        target = tmp_path / "target.out"
        target.write_bytes(data)
        path.unlink()
        path.symlink_to(target)
    got = sweep(capsys, root, "--cache-dir", cache, "--json")
    assert got == first
    assert len(counted) == (3 if damage == "foreign-tree" else 2)
    assert path.is_file() and not path.is_symlink() and path.read_bytes() == data
    if damage == "symlink":
        assert (tmp_path / "target.out").read_bytes() == data  # what the link pointed to is kept


def test_an_output_that_cannot_show_every_character_gets_no_snapshot(
    tmp_path, capsys, trusted, counted, monkeypatch
):
    root = corpus(tmp_path / "c")
    cache = tmp_path / "cache"
    monkeypatch.setattr("sys.stdout", io.TextIOWrapper(io.BytesIO(), encoding="cp1252"))
    codes = [main(["sweep", str(root), "--cache-dir", str(cache)]) for _ in range(2)]
    assert codes[0] == codes[1] and len(counted) == 2 and snapshots(cache) == []


def test_a_failed_sweep_stores_nothing(tmp_path, capsys, trusted, counted):
    root = corpus(tmp_path / "c")
    cache = tmp_path / "cache"
    code, _, err = sweep(capsys, root, "--cache-dir", cache, "--arms", "nosuch")
    assert code == 2 and "no session is in arm nosuch" in err
    assert snapshots(cache) == []
    assert not list(cache.rglob(".tmp-*"))


def test_cache_info_counts_snapshots_as_evalkits_files(tmp_path, capsys, trusted):
    root = corpus(tmp_path / "c")
    cache = tmp_path / "cache"
    sweep(capsys, root, "--cache-dir", cache)
    assert snapshots(cache)
    assert main(["cache", "--cache-dir", str(cache), "--json"]) == 0
    out = capsys.readouterr().out
    assert "snapshot" not in out  # not listed as a foreign file
    assert main(["cache", "clear", "--cache-dir", str(cache)]) == 0
    capsys.readouterr()
    assert snapshots(cache) == []


def test_a_file_made_and_removed_while_the_sweep_ran_is_a_change(
    tmp_path, capsys, trusted, monkeypatch
):
    # The walk ran before the file was made and the next walk runs after it was removed: the
    # names are the same both times, the directory's times are not.
    root = corpus(tmp_path / "c")
    cache = tmp_path / "cache"
    real = sweep_mod.run_sweep
    extra = root / "cg22/ab-express/run-new-3.jsonl"

    def run_sweep(*args, **kwargs):
        cited(root, "cg22/ab-express/run-new-3.jsonl", 10, 990)
        try:
            return real(*args, **kwargs)
        finally:
            extra.unlink()

    monkeypatch.setattr(sweep_mod, "run_sweep", run_sweep)
    during = sweep(capsys, root, "--cache-dir", cache, "--list-files")
    assert "run-new-3.jsonl" in during[1]
    monkeypatch.setattr(sweep_mod, "run_sweep", real)
    after = sweep(capsys, root, "--cache-dir", cache, "--list-files")
    assert "run-new-3.jsonl" not in after[1]
    assert after == sweep(capsys, root, "--no-cache", "--list-files")


@pytest.mark.parametrize("parts", [[""], ["no newline at the end"], ["a\n", "b"], ["\udcff", ""]])
def test_parts_come_back_as_written(tmp_path, trusted, parts):
    root = corpus(tmp_path / "c")
    snap = snapshot_mod.Snapshot(tmp_path / "store", str(root), {"case": len(parts)})
    writer = snap.writer()
    for part in parts:
        writer.write(part)
        writer.end_part()
    writer.commit()
    again = snapshot_mod.Snapshot(tmp_path / "store", str(root), {"case": len(parts)})
    with again.read() as stored:
        assert [stored.text(i) for i in range(len(parts))] == parts
        out = io.StringIO()
        stored.copy(len(parts) - 1, out)
        assert out.getvalue() == parts[-1]
    other = snapshot_mod.Snapshot(tmp_path / "store", str(root), {"case": -1})
    assert other.read() is None  # another name, nothing there


# --- the trial sweep (--layout, --profile, --outcomes) ----------------------------------------


@pytest.fixture
def trial_runs(monkeypatch):
    from evalkit.tables import trials

    return count_calls(monkeypatch, trials, "run_trial_sweep")


PROFILE = """\
name = "mine"

[tool_under_test]
label = "sg"
tools = ["mcp__sourcegraph__*"]
"""


@pytest.mark.parametrize("options", [(), ("--json",), ("--list-files",)])
def test_a_trial_sweep_hit_prints_what_it_printed(tmp_path, capsys, trusted, trial_runs, options):
    from tests.harbor_helpers import build_harbor_corpus

    root = tmp_path / "runs"
    csv = build_harbor_corpus(root)
    argv = (root, "--layout", "harbor", "--profile", "sourcegraph", "--outcomes", csv, *options)
    fresh = sweep(capsys, *argv, "--no-cache")
    first = sweep(capsys, *argv, "--cache-dir", tmp_path / "cache")
    again = sweep(capsys, *argv, "--cache-dir", tmp_path / "cache")
    assert len(trial_runs) == 2 and fresh == first == again and fresh[0] == 0


def test_a_trial_sweep_reads_its_outcomes_and_profile_files_again(
    tmp_path, capsys, trusted, trial_runs
):
    from tests.harbor_helpers import build_harbor_corpus

    root = tmp_path / "runs"
    csv = build_harbor_corpus(root)  # beside the corpus, not in it
    profile = tmp_path / "mine.toml"
    profile.write_text(PROFILE, encoding="utf-8")
    argv = (root, "--layout", "harbor", "--profile", profile, "--outcomes", csv)
    cache = ("--cache-dir", tmp_path / "cache")
    sweep(capsys, *argv, *cache)
    sweep(capsys, *argv, *cache)
    assert len(trial_runs) == 1
    csv.write_text(csv.read_text(encoding="utf-8").replace("t4_2,1.0", "t4_2,0.0"), "utf-8")
    got = sweep(capsys, *argv, *cache)
    assert len(trial_runs) == 2 and got == sweep(capsys, *argv, "--no-cache")
    profile.write_text(PROFILE.replace("__*", "__sg_keyword_search"), "utf-8")
    got = sweep(capsys, *argv, *cache)
    assert len(trial_runs) == 4 and got == sweep(capsys, *argv, "--no-cache")
    sweep(capsys, *argv, *cache, "--pass-threshold", "0.5")
    assert len(trial_runs) == 6


def test_no_snapshot_when_evalkits_code_changed_while_the_sweep_ran(
    tmp_path, capsys, trusted, monkeypatch
):
    from evalkit.store import keys as cache_keys

    root = corpus(tmp_path / "c")
    real = sweep_mod.run_sweep
    digest = cache_keys.code_fingerprint()

    def run_sweep(*args, **kwargs):
        # The package's files hash otherwise from now on (an edit, a checkout).
        monkeypatch.setattr(cache_keys.code_fingerprint, "__wrapped__", lambda: digest + "x")
        return real(*args, **kwargs)

    monkeypatch.setattr(sweep_mod, "run_sweep", run_sweep)
    assert sweep(capsys, root, "--cache-dir", tmp_path / "cache")[0] == 0
    assert snapshots(tmp_path / "cache") == []


def test_a_read_that_leaves_the_tree_for_later_is_current_only_for_the_same_tree(tmp_path, trusted):
    """`read(tree_later=True)` checks all but the tree and does not wait for the walk; the
    caller's `current(stored)` then says whether the tree is the one the output was stored for."""
    from concurrent.futures import ThreadPoolExecutor

    root = corpus(tmp_path / "c")
    snap = snapshot_mod.Snapshot(tmp_path / "store", str(root), {})
    writer = snap.writer()
    writer.write("out\n")
    writer.commit()
    for changed in (False, True):
        if changed:
            put(root, "new.jsonl", text="{}\n")
        again = snapshot_mod.Snapshot(tmp_path / "store", str(root), {}, later=True)
        with ThreadPoolExecutor(1) as walker:
            again.walk(walker)
            stored = again.read(tree_later=True)
            assert stored is not None and stored.text(0) == "out\n"
            assert again.current(stored) is not changed and again.walked()
        stored.close()
        assert (again.read() is None) is changed  # the plain read checks the tree first
    other = snapshot_mod.Snapshot(tmp_path / "store", str(root), {"other": 1}, later=True)
    assert other.read(tree_later=True) is None and not other.walked()


def test_the_part_sizes_are_under_the_digest(tmp_path, trusted):
    root = corpus(tmp_path / "c")
    snap = snapshot_mod.Snapshot(tmp_path / "store", str(root), {})
    writer = snap.writer()
    for part in ("md\n", "out\n"):
        writer.write(part)
        writer.end_part()
    writer.commit()
    data = snap.path.read_bytes()
    assert data.endswith(b'"parts": [3, 4], ' + data[data.rindex(b'"sha256"') :])
    snap.path.write_bytes(data.replace(b'"parts": [3, 4]', b'"parts": [4, 3]'))
    assert snapshot_mod.Snapshot(tmp_path / "store", str(root), {}).read() is None


def test_the_bundled_corpus_is_told_through_a_linked_data_folder(tmp_path, monkeypatch):
    from evalkit import paths

    (tmp_path / "real" / "corpus").mkdir(parents=True)
    (tmp_path / "data").symlink_to(tmp_path / "real")
    monkeypatch.setattr(paths, "bundled_corpus", lambda: tmp_path / "data" / "corpus")
    monkeypatch.setattr(sweep_mod, "bundled_corpus_dir", lambda: tmp_path / "data" / "corpus")
    assert paths.is_bundled_corpus(tmp_path / "real" / "corpus")
    assert sweep_mod.is_bundled_corpus(tmp_path / "data" / "corpus")
    assert not paths.is_bundled_corpus(tmp_path / "real")


def test_a_part_is_copied_a_chunk_at_a_time_across_characters(tmp_path, trusted, monkeypatch):
    # Chunks of 7 bytes cut through two-, three- and four-byte characters and an escaped byte.
    monkeypatch.setattr(snapshot_mod, "_CHUNK", 7)
    root = corpus(tmp_path / "c")
    text = "sweep — é, 😀 and \udcff; " * 40
    snap = snapshot_mod.Snapshot(tmp_path / "store", str(root), {})
    writer = snap.writer()
    writer.write(text)
    writer.commit()
    with snapshot_mod.Snapshot(tmp_path / "store", str(root), {}).read() as stored:
        out = io.StringIO()
        stored.copy(0, out)
    assert out.getvalue() == text


def test_a_trial_sweeps_snapshot_directory_says_what_it_is_for(tmp_path, capsys, trusted):
    from tests.harbor_helpers import build_harbor_corpus

    root = tmp_path / "runs"
    build_harbor_corpus(root, with_csv=False)
    cache = tmp_path / "cache"
    sweep(capsys, root, "--layout", "harbor", "--cache-dir", cache)
    assert main(["cache", "--cache-dir", str(cache), "--json"]) == 0
    stores = json.loads(capsys.readouterr().out)["stores"]
    assert {(s["kind"], s["corpus"]) for s in stores} == {
        ("trials", os.path.realpath(root)),
        ("sweep", os.path.realpath(root)),  # where the stored output lives
    }
