"""Review of the sweep's output snapshot (evalkit/store/snapshot.py, issue 16): cases where a
snapshot hit printed, wrote or exited otherwise than the sweep itself (`--no-cache`) does now."""

from __future__ import annotations

import os

import pytest

from evalkit.cli import main
from evalkit.store import snapshot as snapshot_mod
from evalkit.tables import sweep as sweep_mod
from tests.harbor_helpers import build_harbor_corpus
from tests.sweep_helpers import cited, put
from tests.test_sweep_snapshot import PROFILE

NARROW = PROFILE.replace("__*", "__sg_keyword_search")


@pytest.fixture
def trial_runs(monkeypatch):
    """How many times the trial sweep ran (a hit runs none); `hooks` run before each."""
    from evalkit.tables import trials

    calls: list[int] = []
    hooks: list = []
    real = trials.run_trial_sweep

    def run_trial_sweep(*args, **kwargs):
        calls.append(1)
        for hook in hooks:
            hook()
        return real(*args, **kwargs)

    monkeypatch.setattr(trials, "run_trial_sweep", run_trial_sweep)
    return calls, hooks


def sweep(capsys, *argv):
    code = main(["sweep", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


def corpus(root):
    cited(root, "cg22/ab-express/run-baseline-1.jsonl", 700, 300)
    cited(root, "cg22/ab-express/run-new-1.jsonl", 900, 100, calls=2)
    put(root, "notes.txt", text="not a transcript\n")
    return root


PIPE_FD = 63  # what bash gives `<(...)`


def sweep_piped(capsys, text: str, *argv):
    """The sweep with `--profile /dev/fd/N`, a pipe holding `text`, as a shell's `<(cat FILE)`
    gives; always the same N (the same path as given), as a shell reuses it."""
    r, w = os.pipe()
    with os.fdopen(w, "wb") as fh:
        fh.write(text.encode())
    fd = os.dup2(r, PIPE_FD)
    os.close(r)
    try:
        return sweep(capsys, *argv, "--profile", f"/dev/fd/{fd}")
    finally:
        os.close(fd)


@pytest.mark.skipif(not os.path.isdir("/dev/fd"), reason="needs /dev/fd")
def test_a_profile_read_from_a_pipe_is_not_taken_for_another(tmp_path, capsys, trusted, trial_runs):
    # `--profile <(...)`: the path is the same every time and is no regular file, so its
    # content cannot key the snapshot; a hit would print the output of another profile.
    calls, _ = trial_runs
    root = tmp_path / "runs"
    csv = build_harbor_corpus(root)
    argv = (root, "--layout", "harbor", "--outcomes", csv)
    cache = ("--cache-dir", tmp_path / "cache")
    wide = sweep_piped(capsys, PROFILE, *argv, *cache)
    narrow = sweep_piped(capsys, NARROW, *argv, "--no-cache")
    assert wide[0] == narrow[0] == 0 and wide[1] != narrow[1]
    assert sweep_piped(capsys, NARROW, *argv, *cache) == narrow
    assert len(calls) == 3


def test_a_profile_name_that_is_also_a_folder_here_errs_on_a_hit_too(
    tmp_path, capsys, trusted, trial_runs, monkeypatch
):
    # `--profile codegraph` run from a folder holding a `codegraph` checkout: the sweep reads
    # the path, not the preset, and says it is a directory; a hit must not print instead.
    root = tmp_path / "runs"
    csv = build_harbor_corpus(root)
    argv = (root, "--layout", "harbor", "--profile", "sourcegraph", "--outcomes", csv)
    cache = ("--cache-dir", tmp_path / "cache")
    first = sweep(capsys, *argv, *cache)
    assert first[0] == 0
    here = tmp_path / "src"
    (here / "sourcegraph").mkdir(parents=True)
    monkeypatch.chdir(here)
    fresh = sweep(capsys, *argv, "--no-cache")
    assert fresh[0] == 2 and "is a directory" in fresh[2]
    assert sweep(capsys, *argv, *cache) == fresh


@pytest.mark.parametrize("which", ["outcomes", "profile"])
def test_an_input_edited_while_the_trial_sweep_ran_then_restored_is_read_again(
    tmp_path, capsys, trusted, trial_runs, which
):
    # The outcomes and profile files are keyed by their content, read when the command
    # starts; the sweep reads them again later. An edit in between (an editor saving while the
    # sweep ran) stored the new file's output under the old content: once the old content is
    # back (undo, `git checkout`), a hit printed the edited file's output.
    calls, hooks = trial_runs
    root = tmp_path / "runs"
    csv = build_harbor_corpus(root)
    profile = tmp_path / "mine.toml"
    profile.write_text(PROFILE, encoding="utf-8")
    argv = (root, "--layout", "harbor", "--profile", profile, "--outcomes", csv)
    cache = ("--cache-dir", tmp_path / "cache")
    path = csv if which == "outcomes" else profile
    before = path.read_text(encoding="utf-8")
    after = before.replace("t4_2,1.0", "t4_2,0.0") if which == "outcomes" else NARROW
    assert after != before
    hooks.append(lambda: path.write_text(after, encoding="utf-8"))
    during = sweep(capsys, *argv, *cache)
    hooks.clear()
    assert during == sweep(capsys, *argv, "--no-cache")  # the edited file's output
    path.write_text(before, encoding="utf-8")
    fresh = sweep(capsys, *argv, "--no-cache")
    assert fresh != during
    assert sweep(capsys, *argv, *cache) == fresh
    assert len(calls) == 4


def test_the_bundled_corpus_note_on_a_hit_is_the_sweeps(tmp_path, capsys, trusted, monkeypatch):
    # Where the checkout's data folder is a symbolic link, the sweep does not call the bundled
    # corpus bundled (it compares the resolved directory with the unresolved bundled path);
    # the snapshot's own test resolved both, so a `--json` hit printed the synthetic corpus
    # note the sweep never printed.
    real = corpus(tmp_path / "real" / "corpus")
    (tmp_path / "data").symlink_to(tmp_path / "real")
    linked = tmp_path / "data" / "corpus"
    monkeypatch.setattr("evalkit.paths.bundled_corpus", lambda: linked)
    monkeypatch.setattr(sweep_mod, "bundled_corpus", lambda: linked)
    assert os.path.realpath(linked) == os.path.realpath(real)
    fresh = sweep(capsys, "--json", "--no-cache")
    cache = ("--cache-dir", tmp_path / "cache")
    first = sweep(capsys, "--json", *cache)
    assert first == fresh and list((tmp_path / "cache").rglob("snapshot-*.out"))
    assert sweep(capsys, "--json", *cache) == fresh


def test_an_outcomes_file_changed_a_moment_ago_gets_no_snapshot_yet(
    tmp_path, capsys, trial_runs, monkeypatch
):
    # As for the tree's entries: a second edit in the same clock tick could keep its times.
    import time

    monkeypatch.setattr(snapshot_mod, "RACY_NS", 300_000_000)
    root = tmp_path / "runs"
    csv = build_harbor_corpus(root)
    time.sleep(0.4)  # the tree is old enough to trust
    csv.write_text(csv.read_text(encoding="utf-8").replace("t4_2,1.0", "t4_2,0.0"), "utf-8")
    cache = tmp_path / "cache"
    argv = (root, "--layout", "harbor", "--outcomes", csv, "--cache-dir", cache)
    sweep(capsys, *argv)
    assert not list(cache.rglob("snapshot-*.out"))
    time.sleep(0.4)
    sweep(capsys, *argv)
    assert list(cache.rglob("snapshot-*.out"))
