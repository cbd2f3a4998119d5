"""The collector cannot be turned against its machine (issue 11, items 6–10)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from evalkit.errors import UsageError
from evalkit.paired import EvidenceError, load_cases, parse_evidence
from evalkit.paired import collect as collect_module
from evalkit.paired.collect import (
    EvidenceWriteError,
    _check_receipt_is_new,
    _clock_mark,
    collect,
    write_atomically,
)
from evalkit.paired.driver import run_driver
from evalkit.paired.errors import ReceiptError
from evalkit.paired.manifest import decode_cases
from evalkit.paired.worktrees import add_worktree, remove_worktree
from tests.paired_helpers import (
    BENCH_GIT_ENV,
    collected_evidence,
    git_run,
    make_bench_repo,
    mutated,
    process_alive,
    sample_at,
    scripted_driver,
)
from tests.test_paired_collect import SMALL_MANIFEST, _assert_cleaned, bench, owned_tmp, pycache
from tests.test_paired_collect_units import _selection_options

__all__ = ["bench", "owned_tmp", "pycache"]  # fixtures used here


@pytest.fixture()
def selection(tmp_path, monkeypatch):
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    monkeypatch.setenv("PYTHONPYCACHEPREFIX", str(tmp_path / "pycache"))
    repo, head = make_bench_repo(tmp_path)
    return repo, head


# --- item 6: the output --------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["fifo", "directory", "symlink"])
def test_an_output_that_is_not_a_regular_file_is_refused_before_any_sample(
    tmp_path, selection, kind
):
    repo, head = selection
    target = tmp_path / "out.json"
    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "directory":
        target.mkdir()
    else:
        target.symlink_to(tmp_path / "elsewhere.json")
    log = tmp_path / "env.jsonl"
    options = _selection_options(tmp_path, repo, head, "--env-log", str(log), output=target)
    with pytest.raises(UsageError, match="output exists and is not a regular file"):
        collect(options, echo=lambda line: None)
    assert not log.exists()  # no driver ever ran
    assert not (tmp_path / "elsewhere.json").exists()


def test_the_atomic_write_never_replaces_a_non_regular_file(tmp_path):
    fifo = tmp_path / "device-like"
    os.mkfifo(fifo)
    with pytest.raises(EvidenceWriteError):
        write_atomically(fifo, "{}\n")
    assert fifo.is_fifo()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".device-like")]


def test_a_failed_evidence_write_keeps_the_samples_beside_the_output(
    tmp_path, selection, monkeypatch
):
    repo, head = selection
    options = _selection_options(tmp_path, repo, head)
    lines: list[str] = []

    def disk_full(path, text):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(collect_module, "write_atomically", disk_full)
    with pytest.raises(EvidenceWriteError) as info:
        collect(options, echo=lines.append)
    saved = info.value.saved
    assert saved is not None and saved.parent == tmp_path and str(saved) in str(info.value)
    assert "\n" not in str(info.value) and "No space left on device" in str(info.value)
    assert f"evidence kept in: {saved}" in lines
    doc = json.loads(saved.read_text(encoding="utf-8"))
    assert doc["kind"] == "paired_evidence" and doc["status_counts"]["pass"] == 4


# --- item 7: worktree cleanup --------------------------------------------------------------------


def test_cleanup_never_follows_a_rewritten_gitdir_into_another_repository(tmp_path):
    repo, head = make_bench_repo(tmp_path / "ours")
    other, other_head = make_bench_repo(tmp_path / "theirs")
    git_run(other, "worktree", "add", "--detach", "-q", str(tmp_path / "their-wt"), other_head)
    their_admin = Path(git_run(other, "rev-parse", "--git-common-dir"))
    their_admin = (other / their_admin if not their_admin.is_absolute() else their_admin) / (
        "worktrees/their-wt"
    )
    assert their_admin.is_dir()
    for recorded in (True, False):  # by the recorded admin dir, and by the later cleanup scan
        ours = tmp_path / f"wt-{recorded}"
        admin = add_worktree(repo, ours, head)
        assert admin is not None and admin.is_dir()
        # A hostile driver points the worktree's .git file at the other repository's entry.
        (ours / ".git").write_text(f"gitdir: {their_admin}\n", encoding="utf-8")
        remove_worktree(repo, ours, admin if recorded else None)
        assert their_admin.is_dir(), "another repository's registration was deleted"
        assert not ours.exists() and not admin.exists()
    assert "their-wt" in git_run(other, "worktree", "list")


# --- item 8: receipts and daemonised drivers -----------------------------------------------------


def test_receipt_paths_are_random_per_sample(tmp_path, selection):
    repo, head = selection
    log = tmp_path / "env.jsonl"
    options = _selection_options(tmp_path, repo, head, "--env-log", str(log), repetitions=2)
    collect(options, echo=lambda line: None)
    paths = [json.loads(line)["env"]["WEBCODEX_BENCH_DRIVER_RESULT"] for line in open(log)]
    assert len(paths) == 8 and len(set(paths)) == 8
    assert not any(Path(p).name.startswith(("readonly", "multi", "long", "guarded")) for p in paths)
    assert all(len(Path(p).stem) == 32 for p in paths)


def test_a_receipt_older_than_the_driver_start_is_rejected(tmp_path):
    old = tmp_path / "receipt.json"
    old.write_text('{"status":"pass"}', encoding="utf-8")
    time.sleep(0.05)  # past the file-system clock's granularity
    started = _clock_mark(tmp_path)
    with pytest.raises(ReceiptError, match="existed before the driver started"):
        _check_receipt_is_new(old, started)
    new = tmp_path / "new.json"
    new.write_text("{}", encoding="utf-8")
    _check_receipt_is_new(new, started)  # written after the start: accepted


def test_a_daemonised_grandchild_in_a_new_session_is_killed(tmp_path):
    pid_file = tmp_path / "daemon.pid"
    code = textwrap.dedent(
        f"""
        import os, sys, time
        if os.fork() == 0:
            os.setsid()  # leaves the driver's session and process group
            if os.fork() == 0:
                open({str(pid_file)!r} + ".tmp", "w").write(str(os.getpid()))
                os.rename({str(pid_file)!r} + ".tmp", {str(pid_file)!r})
                time.sleep(600)
            os._exit(0)
        while not os.path.exists({str(pid_file)!r}):
            time.sleep(0.01)
        """
    )
    try:
        run = run_driver(
            [sys.executable, "-c", code], cwd=str(tmp_path), env=dict(os.environ), kill_grace=0.3
        )
        assert run.exit_code == 0
        pid = int(pid_file.read_text())
        deadline = time.monotonic() + 5
        while process_alive(pid) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not process_alive(pid)
    finally:
        if pid_file.exists() and process_alive(int(pid_file.read_text())):
            os.kill(int(pid_file.read_text()), signal.SIGKILL)


# --- item 9: SIGHUP ------------------------------------------------------------------------------


def test_sighup_cleans_up_as_sigint_does(bench, tmp_path, owned_tmp):
    repo, head, config, digest = bench
    pids = tmp_path / "pids"
    out = tmp_path / "never.json"
    argv = [sys.executable, "-m", "evalkit.paired", "collect", "--repo", str(repo)]
    argv += ["--base-revision", head, "--scripted-driver", "--model-config-digest", digest]
    argv += ["--driver", scripted_driver(config, "--mode", "hang", "--pid-file", str(pids))]
    argv += ["--pairs", "1", "--case-manifest", SMALL_MANIFEST, "--output", str(out)]
    proc = subprocess.Popen(
        argv,
        env={**os.environ, **BENCH_GIT_ENV},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 30
    while not pids.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert pids.exists()
    proc.send_signal(signal.SIGHUP)
    _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 130
    assert stderr == "evalkit-paired: interrupted; worktrees and temporary files removed\n"
    assert not any(process_alive(int(p)) for p in pids.read_text().split())
    assert not out.exists()
    _assert_cleaned(owned_tmp, repo)


# --- item 10: identity strings on the whole string -----------------------------------------------


def _set(path, value):
    def change(doc):
        target = sample_at(doc)
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return change


def _rename_gate(doc):
    gates = sample_at(doc)["runtime_gates"]
    name = next(iter(gates))
    gates[name + "\n"] = gates.pop(name)


@pytest.mark.parametrize(
    "change",
    [
        _rename_gate,
        _set(["instrumentation"], "original_v4\n"),
        _set(["instrumentation"], ["original_v4\n"]),
        _set(["ordinal"], 1.0),
    ],
    ids=["gate-name", "label", "label-in-array", "ordinal-float"],
)
def test_identity_strings_and_ordinals_are_exact(change):
    with pytest.raises(EvidenceError):
        parse_evidence(mutated(collected_evidence(), change))


def test_a_gate_value_error_names_the_position_not_the_key():
    def bad_value(doc):
        gates = sample_at(doc)["runtime_gates"]
        gates[next(iter(gates))] = "yes"

    with pytest.raises(EvidenceError) as info:
        parse_evidence(mutated(collected_evidence(), bad_value))
    assert "runtime_gates key 0" in str(info.value)
    assert not any(name in str(info.value) for name in load_cases().case_ids)


def test_a_case_id_with_a_trailing_newline_is_refused():
    cases = json.loads(
        (Path(collect_module.__file__).parent / "data" / "paired-evidence-cases.json").read_text(
            encoding="utf-8"
        )
    )
    cases["cases"][0]["case_id"] += "\n"
    with pytest.raises(Exception, match="case_id must match"):
        decode_cases(json.dumps(cases).encode(), path="cases.json")
