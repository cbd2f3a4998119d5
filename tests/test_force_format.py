"""`evalkit sweep --format` / `run_sweep(format=...)`: one reader forced on every session (issue 15)."""

from __future__ import annotations

import json

import pytest

from evalkit.cli import main
from evalkit.corpus.discover import discover, force_format
from evalkit.errors import UsageError
from evalkit.tables.sweep import run_sweep
from tests.agent_builders import (
    codex_session_lines,
    exec_stream_events,
    write_events,
    write_rollout,
)
from tests.test_corpus_agents import claude_run

ROLLOUT = "codex/rollout.jsonl"


@pytest.fixture
def corpus(tmp_path):
    root = tmp_path / "corpus"
    (root / "cg" / "ab-x").mkdir(parents=True)
    claude_run(root / "cg" / "ab-x" / "run-baseline-1.jsonl")
    claude_run(root / "multi.jsonl")
    claude_run(root / "multi.t2.jsonl")
    (root / "codex").mkdir()
    write_rollout(root / ROLLOUT, codex_session_lines())
    write_events(root / "codex" / "exec.jsonl", exec_stream_events())
    (root / "notes.md").write_text("not a log\n")
    return root


def _status(result):
    return {r.log: (r.status, r.agent) for r in result.records}


def test_detected_by_content_without_format(corpus):
    got = _status(run_sweep(corpus, cache=False, jobs=1))
    assert got == {
        "cg/ab-x/run-baseline-1.jsonl": ("parsed", "claude-code"),
        "codex/exec.jsonl": ("no-explore", "codex"),
        ROLLOUT: ("no-explore", "codex"),
        "multi.jsonl": ("parsed", "claude-code"),
    }


def test_a_forced_reader_reads_every_session_and_names_the_files_it_cannot(corpus):
    result = run_sweep(corpus, cache=False, jobs=1, format="codex-rollout")
    got = {r.log: (r.status, r.agent, r.reason) for r in result.records}
    assert got[ROLLOUT] == ("no-explore", "codex", got[ROLLOUT][2])
    # Every other session is read as a rollout, and none is one: a crash naming its file.
    for log in ("cg/ab-x/run-baseline-1.jsonl", "codex/exec.jsonl"):
        status, _, reason = got[log]
        assert status == "crash"
        assert reason == f"{log}: not a Codex rollout file (no session_meta line)"
    # A session of two segment files is never read in part by a one-file reader.
    status, _, reason = got["multi.jsonl"]
    assert status == "crash" and "2 segment files" in reason and "--format codex-rollout" in reason
    # Every file is still accounted for; what is not a session stays skipped.
    skipped = {f.path for f in result.discovery.skipped}
    assert skipped == {"notes.md"}


def test_forcing_the_right_reader_changes_nothing(corpus):
    auto = run_sweep(corpus, cache=False, jobs=1)
    forced = run_sweep(corpus, cache=False, jobs=1, format="codex-exec")
    a = next(r for r in auto.records if r.log == "codex/exec.jsonl")
    f = next(r for r in forced.records if r.log == "codex/exec.jsonl")
    assert (a.status, a.agent, a.agent_sessions) == (f.status, f.agent, f.agent_sessions)
    # Forced to Claude Code, a Codex file is not a Claude Code transcript: skipped, with why.
    cc = run_sweep(corpus, cache=False, jobs=1, format="claude-code")
    r = next(r for r in cc.records if r.log == ROLLOUT)
    assert r.status == "skipped" and r.agent == "claude-code"
    assert next(r for r in cc.records if r.log == "multi.jsonl").status == "parsed"


def test_a_forced_sweep_keeps_a_store_of_its_own(corpus, tmp_path):
    store = tmp_path / "store"
    first = _status(run_sweep(corpus, cache_dir=store, jobs=1))
    forced = _status(run_sweep(corpus, cache_dir=store, jobs=1, format="codex-rollout"))
    assert forced["codex/exec.jsonl"][0] == "crash"  # not the stored detected payload
    again = run_sweep(corpus, cache_dir=store, jobs=1)
    assert _status(again) == first and again.cache_misses == 0


def test_force_format_leaves_auto_alone_and_refuses_unknown_names(corpus):
    found = discover(corpus)
    assert force_format(found, None) is found and force_format(found, "auto") is found
    with pytest.raises(UsageError, match="unknown format 'codex'"):
        run_sweep(corpus, cache=False, format="codex")


def test_sweep_cli_format(corpus, capsys):
    assert (
        main(["sweep", str(corpus), "--no-cache", "-j", "1", "--format", "codex-exec", "--json"])
        == 0
    )
    doc = json.loads(capsys.readouterr().out)
    assert "codex/exec.jsonl" in json.dumps(doc)
    with pytest.raises(SystemExit) as bad:
        main(["sweep", str(corpus), "--format", "nope"])
    assert bad.value.code == 2
    assert "invalid choice: 'nope'" in capsys.readouterr().err
    assert main(["sweep", str(corpus), "--format", "codex-exec", "--profile", "sourcegraph"]) == 2
    assert "--format is not used by a trial sweep" in capsys.readouterr().err


def test_load_corpus_forces_a_reader_as_the_sweep_does(corpus):
    from evalkit import load_corpus

    detected = load_corpus(corpus, cache=False, jobs=1)
    forced = load_corpus(corpus, cache=False, jobs=1, format="codex-rollout")
    agents = dict(zip(detected.sessions_df()["log"], detected.sessions_df()["agent"], strict=True))
    assert agents["cg/ab-x/run-baseline-1.jsonl"] == "claude-code"
    # Forced: only the rollout reads; every other session is an error naming its file, as the
    # sweep's crashes do, and the rollout's row is the same as when its format was detected.
    assert list(forced.sessions_df()["log"]) == [ROLLOUT]
    failed = {e.log for e in forced.errors}
    assert {"cg/ab-x/run-baseline-1.jsonl", "codex/exec.jsonl"} <= failed
    same = forced.sessions_df().reset_index(drop=True)
    want = detected.sessions_df()[detected.sessions_df()["log"] == ROLLOUT].reset_index(drop=True)
    assert same.equals(want)


def test_load_corpus_refuses_an_unknown_format(corpus):
    from evalkit import load_corpus

    with pytest.raises(UsageError):
        load_corpus(corpus, cache=False, jobs=1, format="gemini")
