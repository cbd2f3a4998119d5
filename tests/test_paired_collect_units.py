"""Unit tests of the collector's parts: Audit summary, driver runs, sample pipeline, oracle, writes.

The end-to-end runs live in `tests/test_paired_collect.py`; these tests pin single rules of
spec §2.3, §3.7, §5.3, §8.3 and §8.4 where a full run would hide them.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

from evalkit.paired import collect as collect_module
from evalkit.paired import load_cases
from evalkit.paired.audit import AuditError, OuterCall, call_hash, read_audit, summarize_calls
from evalkit.paired.collect import (
    CollectOptions,
    _Run,
    collect,
    plan_samples,
    run_sample,
    write_atomically,
)
from evalkit.paired.driver import driver_environment, run_driver
from evalkit.paired.oracle import run_fixture_oracle
from evalkit.paired.worktrees import GitError, add_worktree, remove_worktree
from tests.paired_helpers import git_run, make_bench_repo, pinned_config, process_alive


def _call(seq, tool, *, window="w1", job=None, event=None, exit_code=None, **kw) -> OuterCall:
    return OuterCall(
        seq=seq,
        server_trace_id=kw.get("trace", f"t{seq}"),
        tool_name=tool,
        outcome=kw.get("outcome", "ok"),
        result_bytes=kw.get("size", 100),
        window_id=window,
        job_id=job,
        job_event=event,
        exit_code=exit_code,
        complete=kw.get("complete", True),
    )


# ----------------------------------------------------------------------------- Audit summary


def test_metrics_from_calls():
    calls = [
        _call(1, "cargo_test", job="j", event="launch_pending"),
        _call(2, "observe_jobs", job="j", event="observe_terminal", exit_code=1),
        _call(3, "observe_jobs", job="j", event="observe_terminal", exit_code=1),
        _call(4, "read_files", window="w2"),
        _call(5, "read_files", window="w1"),
        _call(6, "read_files", window="w2", size=None),
    ]
    s = summarize_calls(calls)
    assert s.outer_calls == 6
    assert s.serialized_tool_result_bytes is None  # one call lacks a byte count
    assert s.job_observe_calls == 2
    assert s.immediate_observe_calls == 1  # pending handoff, then at once an observe of it
    assert s.observe_after_delivered_failure == 1  # the second observe after exit code 1
    assert s.same_kind_serial_calls == 2  # observe->observe in w1, read->read in w2
    assert s.outer_call_ids_sha256 == tuple(sorted(call_hash(f"t{i}") for i in range(1, 7)))
    assert call_hash("t1") == hashlib.sha256(b"t1").hexdigest()


def test_serial_proxy_is_unknown_without_windows_and_bytes_sum_when_known():
    s = summarize_calls([_call(1, "read_files", window=None), _call(2, "read_files")])
    assert s.same_kind_serial_calls is None
    assert s.serialized_tool_result_bytes == 200


def test_duplicate_rows_are_a_summary_error():
    with pytest.raises(AuditError, match="malformed"):
        summarize_calls([_call(1, "read_files", trace="x"), _call(2, "read_files", trace="x")])


MULTI = [
    _call(1, "search_project"),
    _call(2, "read_files"),
    _call(3, "read_files"),
    _call(4, "edit_project_files"),
    _call(5, "git_diff"),
]


@pytest.mark.parametrize(
    ("calls", "expected"),
    [
        (MULTI, True),
        ([*MULTI, _call(6, "edit_project_files")], False),  # two guarded edits
        ([c for c in MULTI if c.tool_name != "search_project"], False),  # no search
        ([MULTI[0], MULTI[1], MULTI[3]], False),  # one read only
        ([*MULTI[:4], _call(5, "git_diff", outcome="unknown")], False),  # an unknown call
    ],
)
def test_multi_file_edit_contract(calls, expected):
    assert summarize_calls(calls).multi_file_edit is expected


HANDOFF = [
    _call(1, "cargo_test", job="j", event="launch_pending"),
    _call(2, "read_files"),
    _call(3, "observe_jobs", job="j", event="observe_terminal", exit_code=0),
]


@pytest.mark.parametrize(
    ("calls", "expected"),
    [
        (HANDOFF, True),
        ([HANDOFF[0], HANDOFF[2], _call(4, "read_files")], False),  # work only after the end
        (
            [
                HANDOFF[0],
                HANDOFF[1],
                _call(3, "observe_jobs", job="j", event="observe_terminal", exit_code=2),
            ],
            False,
        ),
        (
            [_call(1, "cargo_test", job="j", event="launch_completed", exit_code=0), HANDOFF[1]],
            False,
        ),  # finished synchronously: no handoff
        ([*HANDOFF, _call(4, "cargo_test", job="k", event="launch_pending")], False),  # twice
        (
            [
                HANDOFF[0],
                HANDOFF[1],
                _call(3, "observe_jobs", job="other", event="observe_terminal", exit_code=0),
            ],
            False,
        ),
    ],
)
def test_long_handoff_contract(calls, expected):
    assert summarize_calls(calls).long_handoff is expected


def test_selection_admission_and_runtime_evidence():
    reads = [_call(1, "search_file_context"), _call(2, "read_files")]
    assert summarize_calls(reads).selection_admission is True
    assert summarize_calls([*reads, _call(3, "edit_project_files")]).selection_admission is False
    assert summarize_calls([_call(1, "unknown_tool")]).selection_admission is False
    s = summarize_calls(reads)
    assert s.runtime_evidence("direct", "direct") is True
    assert s.runtime_evidence("code_mode", "read_only") is False  # no nested call
    nested = summarize_calls([_call(1, "execute_code_mode"), *reads[1:]])
    assert nested.runtime_evidence("code_mode", "read_only") is True
    assert nested.runtime_evidence("code_mode", "guarded_edit") is False
    assert nested.runtime_evidence("host_code_mode", "host_code_mode") is False
    assert summarize_calls([]).runtime_evidence("direct", "direct") is False
    incomplete = summarize_calls([_call(1, "read_files", complete=False)])
    assert incomplete.runtime_evidence("direct", "direct") is False


def _audit_db(path: Path, rows: list[tuple]) -> Path:
    db = sqlite3.connect(path)
    db.execute(
        "CREATE TABLE outer_calls (workflow_session_id TEXT, seq INTEGER, server_trace_id TEXT, "
        "tool_name TEXT, outcome TEXT, result_bytes INTEGER, window_id TEXT, job_id TEXT, "
        "job_event TEXT, exit_code INTEGER, complete INTEGER)"
    )
    db.executemany("INSERT INTO outer_calls VALUES (?,?,?,?,?,?,?,?,?,?,?)", rows)
    db.commit()
    db.close()
    return path


def test_read_audit_selects_the_session(tmp_path):
    path = _audit_db(
        tmp_path / "a.sqlite3",
        [
            ("s1", 2, "b", "read_files", "ok", 5, "w", None, None, None, 1),
            ("s1", 1, "a", "git_status", "ok", 7, "w", None, None, None, 1),
            ("s2", 1, "c", "read_files", "ok", 9, "w", None, None, None, 1),
        ],
    )
    s = read_audit(path, "s1")
    assert (s.outer_calls, s.serialized_tool_result_bytes) == (2, 12)
    assert read_audit(path, "absent").outer_calls == 0


@pytest.mark.parametrize("kind", ["missing", "fifo", "not_sqlite", "bad_row"])
def test_read_audit_errors_never_block_or_echo(tmp_path, kind):
    path = tmp_path / "a.sqlite3"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "not_sqlite":
        path.write_text("SECRET-not-a-database", encoding="utf-8")
    elif kind == "bad_row":
        _audit_db(
            path, [("s", 1, "a", "read_files", "SECRET-outcome", 1, "w", None, None, None, 1)]
        )
    with pytest.raises(AuditError) as info:
        read_audit(path, "s")
    assert "SECRET" not in str(info.value)


# ----------------------------------------------------------------------------- driver runs


def _pid_script(pids: Path, *, ignore_term: bool, exit_now: bool) -> list[str]:
    """A driver that starts a grandchild in its process group and then writes the pids
    "driver grandchild" to `pids` (atomically). It writes them only once the grandchild says it
    is running, and with `ignore_term` only once both have set SIGTERM to be ignored: the file
    exists exactly when the run reached the state under test, however slowly Python started."""
    ready = f"{pids}.ready"
    code = textwrap.dedent(
        f"""
        import os, signal, subprocess, sys, time
        child = "import signal, time\\n"
        if {ignore_term}:
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            child += "signal.signal(signal.SIGTERM, signal.SIG_IGN)\\n"
        child += "open({ready!r}, 'w').close()\\n"
        child += "time.sleep(600)\\n"
        p = subprocess.Popen([sys.executable, "-c", child])
        while not os.path.exists({ready!r}):
            time.sleep(0.01)
        with open({str(pids)!r} + ".tmp", "w") as fh:
            fh.write(f"{{os.getpid()}} {{p.pid}}")
        os.replace({str(pids)!r} + ".tmp", {str(pids)!r})
        if not {exit_now}:
            time.sleep(600)
        """
    )
    return [sys.executable, "-c", code]


def _two_pids(pids: Path) -> list[int]:
    found = [int(p) for p in pids.read_text().split()]
    assert len(found) == 2, found
    return found


def test_timeout_kills_grandchildren_that_ignore_sigterm(tmp_path):
    # The time limit runs from the driver's start, so on a loaded machine the driver may not
    # have started its grandchild (or set SIGTERM aside) before the limit: such a run did not
    # reach the case under test, so it is repeated with a longer limit instead of being judged
    # (once, a fixed 1 s limit made this test fail, or pass without a SIGTERM-proof child).
    for attempt, limit in enumerate((1.0, 2.0, 4.0, 8.0, 16.0)):
        pids = tmp_path / f"pids-{attempt}"
        run = run_driver(
            _pid_script(pids, ignore_term=True, exit_now=False),
            cwd=str(tmp_path),
            env=dict(os.environ),
            time_limit=limit,
            kill_grace=0.3,
        )
        assert run.timed_out and run.exit_code is None
        if pids.exists():
            break
    else:
        pytest.fail("the driver never started its grandchild within 16 s")
    assert not any(process_alive(p) for p in _two_pids(pids))


def test_group_is_reaped_after_a_normal_exit(tmp_path):
    pids = tmp_path / "pids"
    run = run_driver(
        _pid_script(pids, ignore_term=False, exit_now=True),
        cwd=str(tmp_path),
        env=dict(os.environ),
        time_limit=30,
        kill_grace=0.3,
    )
    assert not run.timed_out and run.exit_code == 0
    assert not any(process_alive(p) for p in _two_pids(pids))


def test_driver_gets_no_stdin(tmp_path):
    out = tmp_path / "stdin"
    script = f"import sys; open({str(out)!r}, 'w').write(repr(sys.stdin.read()))"
    run_driver([sys.executable, "-c", script], cwd=str(tmp_path), env=dict(os.environ))
    assert out.read_text() == "''"


def test_driver_environment_contract():
    base = {
        "PATH": "/bin",
        "WEBCODEX_BENCH_HOST_CELL_POLICY": "host_single_call",
        "WEBCODEX_BENCH_EXTRA": "x",
    }
    kwargs = dict(
        workspace="/w",
        case_id="c",
        prompt="p",
        variant="direct",
        surface="direct",
        base_revision="b",
        case_fingerprint="f",
        receipt="/r.json",
    )
    env = driver_environment(base, host_cell_policy=None, **kwargs)
    assert "WEBCODEX_BENCH_HOST_CELL_POLICY" not in env  # unset, not empty
    assert "WEBCODEX_BENCH_EXTRA" not in env and env["PATH"] == "/bin"
    assert env["WEBCODEX_BENCH_DRIVER_RESULT"] == "/r.json"
    env = driver_environment(base, host_cell_policy="host_composition_allowed", **kwargs)
    assert env["WEBCODEX_BENCH_HOST_CELL_POLICY"] == "host_composition_allowed"


# ----------------------------------------------------------------------------- sample pipeline


def _selection_options(
    tmp_path: Path, repo: Path, head: str, *driver_args: str, **changes
) -> CollectOptions:
    """Options for one-repetition tool_selection runs with the scripted driver."""
    config, digest = pinned_config(tmp_path)
    argv = [sys.executable, "-m", "evalkit.paired.scripted_driver", "--pinned-config", str(config)]
    fields = dict(
        repo=repo,
        base_revision=head,
        driver_command=(*argv, *driver_args),
        output=tmp_path / "e.json",
        experiment="tool_selection",
        variant="direct",
        repetitions=1,
        model_config_digest=digest,
        driver_kind="scripted",
    )
    return CollectOptions(**{**fields, **changes})


@pytest.fixture()
def unit_run(tmp_path, monkeypatch):
    """A `_Run` for one tool_selection sample and a factory that sets the driver mode."""
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    monkeypatch.setenv("PYTHONPYCACHEPREFIX", str(tmp_path / "pycache"))
    root = tmp_path / "owned"
    (root / "worktrees").mkdir(parents=True)
    (root / "receipts").mkdir()
    manifest = load_cases()
    repo, head = make_bench_repo(tmp_path)

    def make(*driver_args: str, driver_kind: str = "scripted") -> _Run:
        o = _selection_options(tmp_path, repo, head, *driver_args, driver_kind=driver_kind)
        return _Run(o, "tool_selection", o.repo, o.base_revision, o.base_revision, manifest, root)

    spec = plan_samples("tool_selection", manifest, 1, "direct")[0]
    return make, spec, root


def test_a_receipt_planted_before_the_driver_started_is_rejected(unit_run, monkeypatch):
    """The sample pipeline applies the rule, not only its helper (test_paired_hardening tests
    `_check_receipt_is_new` alone): a receipt that is already at the sample's receipt path when
    its driver starts never counts, even a good one, and even from a driver that writes none."""
    make, spec, _ = unit_run
    fresh = collect_module._fresh_receipt_path
    paths: list[Path] = []
    monkeypatch.setattr(
        collect_module, "_fresh_receipt_path", lambda *a: paths.append(fresh(*a)) or paths[-1]
    )
    good = run_sample(make(), spec)
    assert good.sample["status"] == "pass"
    good_receipt = paths[-1].read_bytes()

    def planted(*args):
        path = fresh(*args)  # the path the sample will hand its driver, receipt already there
        path.write_bytes(good_receipt)
        time.sleep(0.05)  # past the file-system clock's granularity
        return path

    monkeypatch.setattr(collect_module, "_fresh_receipt_path", planted)
    result = run_sample(make("--mode", "no-receipt"), spec)
    assert (result.sample["status"], result.sample["reason_code"]) == (
        "fail",
        "sample_contract_error",
    )
    assert result.message == "driver result existed before the driver started"


def test_manual_bridge_must_state_task_timing(unit_run):
    make, spec, _ = unit_run
    result = run_sample(make("--mode", "no-task-timing", driver_kind="manual_bridge"), spec)
    assert (result.sample["status"], result.sample["reason_code"]) == (
        "fail",
        "sample_contract_error",
    )
    assert result.message == "manual bridge result must state task_timing explicitly"


def test_unclean_fresh_worktree_is_a_contract_error(unit_run, monkeypatch, tmp_path):
    make, spec, _ = unit_run
    log = tmp_path / "env.jsonl"
    monkeypatch.setattr(collect_module, "is_clean", lambda path: False)
    result = run_sample(make("--env-log", str(log)), spec)
    assert result.message == "fresh benchmark worktree is not clean"
    assert result.sample["reason_code"] == "sample_contract_error"
    assert not log.exists()  # the driver never started


def test_non_posix_platform_is_unsupported(unit_run, monkeypatch):
    make, spec, _ = unit_run
    run = make()
    monkeypatch.setattr(os, "name", "nt")
    try:
        result = run_sample(run, spec)
    finally:
        monkeypatch.undo()
    assert (result.sample["status"], result.sample["reason_code"]) == (
        "unsupported",
        "driver_platform_unsupported",
    )


def test_failed_checkout_rolls_back_its_registration(tmp_path):
    repo, _ = make_bench_repo(tmp_path)
    target = tmp_path / "wt"
    with pytest.raises(GitError):
        add_worktree(repo, target, "0" * 40)
    assert not target.exists()
    assert len(git_run(repo, "worktree", "list", "--porcelain").split("\n\n")) == 1


def test_setup_error_after_the_temporary_directory_still_cleans_up(tmp_path, monkeypatch):
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    monkeypatch.setenv("PYTHONPYCACHEPREFIX", str(tmp_path / "pycache"))
    owned = tmp_path / "tmp"
    owned.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(owned))
    options = _selection_options(tmp_path, *make_bench_repo(tmp_path))

    def broken_write(path, text):
        raise OSError("disk full")

    monkeypatch.setattr(collect_module, "write_atomically", broken_write)
    with pytest.raises(OSError):
        collect(options, echo=lambda line: None)
    assert list(owned.iterdir()) == []
    assert len(git_run(options.repo, "worktree", "list", "--porcelain").split("\n\n")) == 1


# ----------------------------------------------------------------------------- fixture oracle


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (
            {
                "alpha.txt": ("ALPHA=before", "ALPHA=after"),
                "beta.txt": ("BETA=before", "BETA=after"),
            },
            True,
        ),
        ({"alpha.txt": ("ALPHA=before", "ALPHA=after")}, False),  # one target left
        (
            {
                "alpha.txt": ("ALPHA=before", "ALPHA=after"),
                "beta.txt": ("BETA=before", "BETA=after"),
                "gamma.txt": (None, "new file"),
            },
            False,
        ),  # another file changed
        (
            {"alpha.txt": ("=keep", "=changed"), "beta.txt": ("BETA=before", "BETA=after")},
            False,
        ),  # a sentinel changed
    ],
)
def test_guarded_edit_oracle(tmp_path, edit, expected):
    repo, head = make_bench_repo(tmp_path)
    wt = tmp_path / "wt"
    add_worktree(repo, wt, head)
    try:
        base = wt / "tests/fixtures/agent-loop-multi-file"
        for name, (old, new) in edit.items():
            path = base / name
            if old is None:
                path.write_text(new, encoding="utf-8")
            else:
                path.write_text(path.read_text(encoding="utf-8").replace(old, new), "utf-8")
        oracle = run_fixture_oracle("guarded_multi_file_edit", repo=repo, source=head, workspace=wt)
        assert (oracle.available, oracle.passed) == (True, expected)
        other = run_fixture_oracle("readonly_review", repo=repo, source=head, workspace=wt)
        assert (other.available, other.passed) == (False, None)
    finally:
        remove_worktree(repo, wt)


def test_oracle_unavailable_without_fixture(tmp_path):
    repo, head = make_bench_repo(tmp_path, {"README.md": "no fixtures\n"})
    oracle = run_fixture_oracle("guarded_multi_file_edit", repo=repo, source=head, workspace=repo)
    assert (oracle.available, oracle.passed) == (False, None)


# ----------------------------------------------------------------------------- atomic writes


def test_failed_rename_keeps_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    target = tmp_path / "evidence.json"
    target.write_text("old\n", encoding="utf-8")

    def interrupted(src, dst):
        raise KeyboardInterrupt

    monkeypatch.setattr(collect_module.os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_atomically(target, "new\n" * 1000)
    monkeypatch.undo()
    assert target.read_text(encoding="utf-8") == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["evidence.json"]


def test_evidence_file_is_never_half_written_when_killed(tmp_path):
    """SIGKILL a process that keeps rewriting the file: every state seen is a whole version."""
    target = tmp_path / "evidence.json"
    versions = [json.dumps({"v": i, "pad": "x" * 400_000}) + "\n" for i in range(2)]
    script = textwrap.dedent(
        f"""
        import json
        from pathlib import Path
        from evalkit.paired.collect import write_atomically
        versions = [json.dumps({{"v": i, "pad": "x" * 400_000}}) + "\\n" for i in range(2)]
        i = 0
        while True:
            write_atomically(Path({str(target)!r}), versions[i % 2])
            i += 1
        """
    )
    for delay in (0.0, 0.05, 0.2):
        target.unlink(missing_ok=True)
        proc = subprocess.Popen([sys.executable, "-c", script])
        deadline = time.monotonic() + 30
        while not target.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        assert target.read_text(encoding="utf-8") in versions
