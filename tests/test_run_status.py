"""Run status and outcomes in the frames (issue 23, Build 1, 2, 5, 9): the status of every
session from its log and its harbor result.json, `success` only for `ok`, outcomes joined when
the corpus is loaded, the trial sweep reading both from the frames and leaving non-ok runs out,
interactive logs complete and told by content, and the small ones (an empty file, `.ndjson`,
`compare` with an arm without runs, `sessions_df` of another agent's file)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest

import evalkit
from evalkit.cli import main
from evalkit.corpus.frames import sessions_df
from evalkit.formats.harbor import TrialResult
from evalkit.metrics.status import (
    STATUSES,
    RunStatus,
    claude_code_status,
    codex_status,
    harbor_status,
    inspect_status,
    success_of,
)
from evalkit.tables.trials import run_trial_sweep
from tests.agent_builders import (
    codex_session_lines,
    ev,
    event,
    exec_stream_events,
    write_events,
    write_rollout,
)
from tests.builders import ASST, RESULT, TEXT, USE, lines, write_jsonl
from tests.harbor_helpers import (
    FAILURE_STATUS,
    LIMIT_TEXT,
    build_failures_corpus,
    build_harbor_corpus,
    rate_limited_events,
)

INTERACTIVE = Path(__file__).resolve().parent.parent / "data" / "corpus" / "interactive"


# --- the status of one Claude Code log -------------------------------------------------------


def status(events, **kw) -> str:
    return claude_code_status(events, **kw).status


def test_claude_code_results_decide_the_status():
    body = ASST(100, "m1", [TEXT("done")])
    assert status(lines(body, RESULT("done"))) == "ok"
    assert status(rate_limited_events()) == "rate_limited"
    assert status(lines(body, RESULT(subtype="error_max_turns", is_error=True))) == "max_turns"
    budget = claude_code_status(lines(body, RESULT(subtype="error_max_budget_usd")))
    assert (budget.status, "budget limit" in budget.detail) == ("max_turns", True)
    http = RESULT("API Error", is_error=True, api_error_status=529)
    assert status(lines(body, http)) == "rate_limited"
    failed = RESULT(subtype="error_during_execution", is_error=True, errors=["boom"])
    got = claude_code_status(lines(body, failed))
    assert (got.status, got.detail) == (
        "agent_error",
        "result error_during_execution (is_error): boom",
    )
    aborted = RESULT(subtype="error_during_execution", terminal_reason="aborted_streaming")
    assert status(lines(body, aborted)) == "cancelled"
    # A rejected rate_limit_event explains a failed run; a run that recovered from it is ok.
    rejected = {"type": "rate_limit_event", "rate_limit_info": {"status": "rejected"}}
    assert status(lines(rejected, body, RESULT("done"))) == "ok"
    assert status(lines(rejected, body, RESULT(subtype="error_during_execution"))) == (
        "rate_limited"
    )
    assert status(lines(body, rejected)) == "rate_limited"  # no result: the rejection ended it
    # No result: the log cannot tell; no assistant turn at all: empty.
    assert status(body) == "unknown"
    assert status([{"type": "system", "subtype": "init"}]) == "empty"
    assert status(lines(RESULT("done"))) == "empty"
    # Every segment needs its result.
    assert status(lines(body, RESULT("done")), segments=2) == "unknown"


def test_interactive_logs_end_by_their_last_turn():
    prompt = {"type": "user", "sessionId": "s", "message": {"role": "user", "content": "why?"}}
    turn = {"type": "assistant", "sessionId": "s", "message": {"id": "m", "content": [TEXT("ok")]}}
    api = {
        "type": "assistant",
        "isApiErrorMessage": True,
        "message": {"id": "e", "content": [TEXT('API Error: 529 {"type":"overloaded_error"}')]},
    }
    other = {**api, "message": {"id": "e2", "content": [TEXT("API Error: 400 bad request")]}}
    stop = {"type": "user", "message": {"content": [TEXT("[Request interrupted by user]")]}}
    assert status([prompt, turn], interactive=True) == "ok"
    assert status([prompt, turn, api], interactive=True) == "rate_limited"
    assert status([prompt, turn, other], interactive=True) == "agent_error"
    assert status([prompt, turn, stop], interactive=True) == "cancelled"
    assert status([prompt], interactive=True) == "empty"


def test_success_is_true_only_for_ok():
    assert [success_of(s) for s in STATUSES] == [True] + [False] * 7 + [None]
    with pytest.raises(ValueError):
        RunStatus("fine", "")


# --- Codex, Inspect, harbor ------------------------------------------------------------------


def test_codex_rollouts_and_exec_streams(tmp_path):
    from evalkit.formats.detect import read_agent_file

    def rollout(extra):
        path = write_rollout(
            tmp_path / f"rollout-{len(extra)}.jsonl", codex_session_lines() + extra
        )
        return next(read_agent_file(path))

    assert codex_status(rollout([])).status == "ok"
    aborted = rollout([event("turn_aborted", reason="interrupted")])
    assert (codex_status(aborted).status, codex_status(aborted).detail) == (
        "cancelled",
        "turn_aborted (interrupted)",
    )
    limit = rollout(
        [event("turn_aborted", reason="x"), event("error", message="You've hit your usage limit.")]
    )
    assert codex_status(limit).status == "rate_limited"

    def stream(name, events):
        return next(read_agent_file(write_events(tmp_path / name, events)))

    assert codex_status(stream("ok.jsonl", exec_stream_events())).status == "ok"
    failed = [
        ev("thread.started", thread_id="t"),
        ev("turn.started"),
        ev("error", message="stream error: 429 Too Many Requests"),
        ev("turn.failed", error={"message": "exceeded retry limit, last status: 429"}),
    ]
    got = stream("failed.jsonl", failed)
    assert codex_status(got).status == "rate_limited" and got.extra["errors"]
    crash = [*failed[:2], ev("turn.failed", error={"message": "sandbox denied"})]
    assert codex_status(stream("crash.jsonl", crash)).status == "agent_error"


def test_inspect_samples_by_error_and_limit(tmp_path):
    from evalkit.formats.detect import read_agent_file

    path = write_rollout(tmp_path / "rollout.jsonl", codex_session_lines())
    base = replace(next(read_agent_file(path)), agent="inspect", format="inspect", extra={})
    assert inspect_status(base).status == "ok"
    cases = {
        "time": "timeout",
        "working": "timeout",
        "message": "max_turns",
        "token": "max_turns",
        "operator": "cancelled",
    }
    for limit, expected in cases.items():
        assert inspect_status(replace(base, extra={"limit": limit})).status == expected
    assert inspect_status(replace(base, extra={"error": "RateLimitError: 429"})).status == (
        "rate_limited"
    )
    assert inspect_status(replace(base, extra={"error": "KeyError: x"})).status == "agent_error"
    nothing = replace(base, tool_calls=(), final_answer="", requests=None)
    assert inspect_status(nothing).status == "empty"


def test_harbor_exceptions_over_the_log():
    ok, cut = RunStatus("ok", "result: success"), RunStatus("unknown", "no result")
    timeout = TrialResult(None, exception="AgentTimeoutError", exception_message="after 900s")
    assert harbor_status(cut, timeout) == RunStatus(
        "timeout", "harbor AgentTimeoutError: after 900s"
    )
    infra = TrialResult(1.0, exception="DaytonaError")
    assert harbor_status(ok, infra).status == "infra_error"
    limited = RunStatus("rate_limited", "result: limit")
    assert harbor_status(limited, timeout) is limited  # the log's own failure stands
    assert harbor_status(ok, TrialResult(1.0)) is ok


# --- a harbor tree with every kind of failure ------------------------------------------------


@pytest.fixture
def failures(tmp_path):
    return build_failures_corpus(tmp_path / "runs")


def key(row) -> tuple[str, str, int]:
    return (row["arm"], row["task"], int(row["trial"].rsplit("_", 1)[1]))


def test_the_frames_hold_status_and_outcome_of_every_trial(failures, tmp_path):
    corpus = evalkit.load_corpus(failures, layout="harbor", profile="sourcegraph", cache=False)
    df = corpus.sessions_df()
    assert {key(r): r["status"] for _, r in df.iterrows()} == FAILURE_STATUS
    assert (df["success"] == (df["status"] == "ok")).all()
    assert not corpus.errors
    by = {key(r): r for _, r in df.iterrows()}
    limited = by[("mcp", "t3", 1)]
    assert limited["status_detail"] == f"result success (is_error): {LIMIT_TEXT}"
    assert (limited["tool_calls"], limited["prompt_tokens"], limited["reward"]) == (0, 0, 0.0)
    assert by[("mcp", "t1", 2)]["status_detail"] == (
        "harbor AgentTimeoutError: Agent timed out after 900s"
    )
    infra = by[("mcp", "t4", 1)]
    assert infra["log"] == "suite/mcp/t4/t4_1/result.json" and pd.isna(infra["reward"])
    assert "EnvironmentStartTimeoutError" in infra["status_detail"]
    assert by[("baseline", "t1", 1)]["outcome_source"] == "result.json"
    assert by[("baseline", "t1", 1)]["outcome_ref"] == "suite/baseline/t1/t1_1/result.json"
    assert pd.isna(infra["outcome_source"])
    # The export carries the same columns.
    files = corpus.export(tmp_path / "out")
    exported = pd.read_parquet(files[0])
    assert exported["status"].tolist() == df["status"].tolist()
    assert exported["reward"].tolist() == df["reward"].tolist()


def test_a_changed_result_json_is_read_again_though_the_transcript_is_not(failures, tmp_path):
    cache = tmp_path / "cache"

    def load():
        return evalkit.load_corpus(failures, layout="harbor", cache_dir=cache, jobs=1)

    first = load().sessions_df().set_index("log")
    result = failures / "suite" / "baseline" / "t1" / "t1_1" / "result.json"
    doc = json.loads(result.read_text())
    doc["verifier_result"]["rewards"]["reward"] = 0.25
    doc["exception_info"] = {"exception_type": "VerifierTimeoutError"}
    result.write_text(json.dumps(doc))
    again = load()
    assert again.cache_misses == 0  # the transcripts were stored
    row = again.sessions_df().set_index("log").loc["suite/baseline/t1/t1_1/agent/claude-code.txt"]
    assert first.loc[row.name, "reward"] == 1.0 and row["reward"] == 0.25
    assert (row["status"], row["success"]) == ("infra_error", False)


def test_the_trial_sweep_leaves_failed_runs_out_and_counts_them(failures, capsys, tmp_path):
    t = run_trial_sweep(failures, layout="harbor", profile="sourcegraph", cache=False, jobs=1)
    assert {(r.arm, r.task, int(r.trial[-1])): r.run_status for r in t.parsed} == FAILURE_STATUS
    base, mcp = t.arm_status
    assert (base.runs, base.left_out, base.counts["rate_limited"]) == (6, 2, 1)
    assert (mcp.runs, mcp.left_out, mcp.infra_error_rate) == (6, 4, 1 / 6)
    assert t.left_out() == [
        "2 of 6 baseline runs left out: 1 rate_limited, 1 max_turns",
        "4 of 6 mcp runs left out: 1 agent_error, 1 rate_limited, 1 timeout, 1 infra_error",
    ]
    tasks = {r.task: r for r in t.outcomes.tasks}
    # The two usage-limit refusals of t3 are no tie: the task has no outcome in either arm.
    assert (tasks["t3"].cls, tasks["t3"].baseline_n, tasks["t3"].candidate_n) == (
        "incomplete",
        0,
        0,
    )
    assert (tasks["t1"].candidate_n, tasks["t1"].cls) == (1, "tie")
    assert [a.runs for a in t.comparisons[0].arms] == [4, 2]
    assert t.status_frame()["infra_error"].tolist() == [0, 1]
    kept = run_trial_sweep(failures, layout="harbor", cache=False, jobs=1, include_failed=True)
    assert kept.left_out() == [] and {r.task: r.cls for r in kept.outcomes.tasks}["t3"] == "tie"
    argv = ["sweep", str(failures), "--layout", "harbor", "--no-cache", "-j", "1"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "  arm       runs  ok  agent_error  rate_limited  max_turns  timeout  infra_error" in out
    assert "  mcp          6   2            1             1          0        1            1" in out
    assert "16.7%" in out and "(--include-failed keeps them)" in out
    assert out.count("  4 of 6 mcp runs left out:") == 3  # arm comparison, outcomes, reads
    assert main([*argv, "--include-failed"]) == 0
    assert "left out" not in capsys.readouterr().out
    assert main([*argv, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["run_status"][1]["counts"]["infra_error"] == 1
    assert {r["status"] for r in doc["session_rows"]} == set(FAILURE_STATUS.values())
    # A harbor tree is a trial sweep with no flag (recognised); a tree of plain transcripts
    # is not, and --include-failed says what it is for.
    capsys.readouterr()
    assert main(["sweep", str(failures), "--include-failed"]) == 0
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "run-new-1.jsonl").write_text('{"type":"system","subtype":"init"}\n')
    assert main(["sweep", str(plain), "--include-failed"]) == 2
    assert "--include-failed is for a trial sweep" in capsys.readouterr().err


def test_outcomes_csv_in_the_loader(tmp_path):
    root = tmp_path / "runs"
    csv = build_harbor_corpus(root)
    plain = evalkit.load_corpus(root, layout="harbor", profile="sourcegraph", cache=False)
    df = plain.sessions_df()
    assert df["reward"].notna().sum() == 14 and plain.outcomes.missing  # mcp/t4 unscored
    scored = evalkit.load_corpus(root, layout="harbor", outcomes=csv, cache=False).sessions_df()
    assert scored["reward"].notna().all() and set(scored["outcome_source"]) == {
        "result.json",
        "outcomes-csv",
    }
    # A CSV by log, on a pattern layout without result.json files.
    other = tmp_path / "other"
    shutil.copytree(root / "suite" / "mcp" / "t1", other / "mcp" / "t1")
    rows = "log,reward\nmcp/t1/t1_1/agent/claude-code.txt,0.5\n"
    (tmp_path / "o.csv").write_text(rows)
    layout = "{arm}/{task}/{trial}/agent/claude-code.txt"
    df = sessions_df_of(other, layout, tmp_path / "o.csv")
    assert df.set_index("trial").loc["t1_1", ["reward", "passed", "outcome_source"]].tolist() == [
        0.5,
        False,
        "outcomes-csv",
    ]


def sessions_df_of(root, layout, outcomes):
    return evalkit.load_corpus(root, layout=layout, outcomes=outcomes, cache=False).sessions_df()


# --- interactive logs by content, complete in the frames ----------------------------------------


def test_a_renamed_interactive_log_is_interactive_and_complete(tmp_path):
    src = sorted(INTERACTIVE.glob("*/*.jsonl"))[0]
    logs = tmp_path / "c" / "logs"
    logs.mkdir(parents=True)
    renamed = logs / "my-session.jsonl"
    shutil.copy(src, renamed)
    cache = tmp_path / "cache"
    for _ in range(2):  # parsed, then read back from the store's frame files
        corpus = evalkit.load_corpus(tmp_path / "c", cache_dir=cache, jobs=1)
        row = corpus.sessions_df().iloc[0]
        assert row["kind"] == "interactive"
        assert set(corpus.tool_calls_df()["kind"]) == {"interactive"}
    assert corpus.cache_hits == 1
    out = subprocess.run(
        [sys.executable, "-m", "evalkit", "run", "--json", str(renamed)],
        capture_output=True,
        text=True,
        check=True,
    )
    occ = json.loads(out.stdout)["occupancy"]
    assert row["final_context"] == occ["final_context"]
    assert row["base_context"] == occ["base_context"]
    assert row["compactions"] == occ["compactions"] == 0
    assert row["turns"] == 1 and row["output_tokens"] > 0
    assert (row["status"], row["success"]) == ("ok", True)
    # The original, in its project folder, gives the same numbers.
    original = sessions_df([src]).iloc[0]
    for col in ("final_context", "turns", "output_tokens", "prompt_tokens", "status", "kind"):
        assert original[col] == row[col], col
    # sessions_df of the renamed file alone reads it by content too.
    assert sessions_df([renamed]).iloc[0]["kind"] == "interactive"


def test_a_headless_run_stays_headless():
    from evalkit.session import is_interactive_log

    body = ASST(100, "m1", [USE("r", "Read", {"file_path": "a"})])
    assert not is_interactive_log(lines({"type": "system", "subtype": "init"}, body))
    assert not is_interactive_log(body)  # no project-log line
    assert is_interactive_log([{**e, "parentUuid": None} for e in body])
    assert not is_interactive_log([*({**e, "sessionId": "s"} for e in body), *RESULT()])


# --- the small ones ------------------------------------------------------------------------------


def test_an_empty_file_is_refused(tmp_path, capsys):
    empty = tmp_path / "c" / "run-new-1.jsonl"
    empty.parent.mkdir()
    empty.write_bytes(b"")
    assert main(["run", str(empty)]) == 2
    assert "an empty file (0 bytes): nothing to measure" in capsys.readouterr().err
    acc = {a.path: a for a in evalkit.load_corpus(tmp_path / "c", cache=False).accounting()}
    assert (acc["run-new-1.jsonl"].status, acc["run-new-1.jsonl"].reason) == (
        "skipped",
        "an empty file (0 bytes): nothing to measure",
    )
    with pytest.raises(evalkit.errors.EmptyFile):
        sessions_df([empty])


def test_ndjson_is_read_as_jsonl(tmp_path):
    events = lines(ASST(100, "m1", [TEXT("It is in a.py")]), RESULT("It is in a.py"))
    (tmp_path / "c" / "ab-x").mkdir(parents=True)
    write_jsonl(tmp_path / "c" / "ab-x" / "run-new-1.ndjson", events)
    df = evalkit.load_corpus(tmp_path / "c", cache=False).sessions_df()
    assert df["log"].tolist() == ["ab-x/run-new-1.ndjson"] and df["arm"].tolist() == ["new"]
    assert df["status"].tolist() == ["ok"]


def test_compare_names_the_arms_that_exist(capsys):
    from evalkit.paths import bundled_corpus

    d = str(bundled_corpus() / "cg22" / "ab-express")
    assert main(["compare", d, "new", "foo"]) == 0
    err = capsys.readouterr().err
    assert f"  WARN: no run logs for arm 'foo' in {d}\n" in err
    assert f"  arms with runs in {d}: baseline, new\n" in err
    assert main(["compare", d, "foo"]) == 1


def test_sessions_df_of_a_codex_file_reads_it_as_load_corpus_does(tmp_path):
    path = write_rollout(tmp_path / "rollout-2030-01-01T10-00-00-x.jsonl", codex_session_lines())
    df = sessions_df([path])
    assert (df["agent"].tolist(), df["status"].tolist(), df["tool_calls"].tolist()) == (
        ["codex"],
        ["ok"],
        [4],
    )
    loaded = evalkit.load_corpus(tmp_path, cache=False).sessions_df()
    for col in ("agent", "tool_calls", "prompt_tokens", "status", "turns"):
        assert df[col].tolist() == loaded[col].tolist(), col


def test_notebook_06_reads_status_and_outcomes_from_the_frames(tmp_path, monkeypatch, caplog):
    from tests.test_notebook_templates import repo_root, run_template

    root = build_failures_corpus(tmp_path / "failing-bench")
    path = repo_root() / "notebooks" / "06_outcomes_and_cost.ipynb"
    printed = "\n".join(
        run_template(path, tmp_path, monkeypatch, caplog, corpus=str(root), profile="sourcegraph")
    )
    assert "4 of 6 mcp runs left out: 1 agent_error, 1 rate_limited, 1 timeout" in printed
    assert "mcp helps on 0 of 2 tasks, hurts on 0, ties on 2; 2 incomplete" in printed
    assert "infra_error" in printed and "rate_limited" in printed


def test_a_stored_trial_sweep_output_is_keyed_by_include_failed(failures, tmp_path, capsys):
    argv = ["sweep", str(failures), "--layout", "harbor", "--cache-dir", str(tmp_path / "c")]
    outs = []
    for extra in ([], ["--include-failed"], []):
        assert main([*argv, *extra, "-j", "1"]) == 0
        outs.append(capsys.readouterr().out)
    assert "left out" in outs[0] and "left out" not in outs[1] and outs[2] == outs[0]


def test_inspect_scores_are_outcomes_and_a_csv_names_a_sample(tmp_path):
    from evalkit.formats.inspect.logs import inspect_available
    from tests.agent_builders import two_sample_log

    if not inspect_available():
        pytest.skip(
            'reading Inspect AI logs needs the optional extra: pip install "evalkit[inspect]"'
        )
    (tmp_path / "c").mkdir()
    two_sample_log(tmp_path / "c" / "log.eval")
    df = evalkit.load_corpus(tmp_path / "c", cache=False).sessions_df().set_index("log")
    first = df.loc["log.eval#q-001:1"]
    assert (first["reward"], first["passed"], first["outcome_source"]) == (
        0.75,
        True,
        "inspect-score",
    )
    assert first["outcome_ref"] == "reward, match" and first["status"] == "ok"
    (tmp_path / "o.csv").write_text("log,reward\nlog.eval#q-002:1,1.0\n")
    joined = sessions_df_of(tmp_path / "c", None, tmp_path / "o.csv").set_index("log")
    second = joined.loc["log.eval#q-002:1"]
    assert (second["reward"], second["passed"], second["outcome_source"]) == (
        1.0,
        True,
        "outcomes-csv",
    )
    assert second["outcome_ref"] == "o.csv:2"
    assert joined.loc["log.eval#q-001:1", "outcome_source"] == "inspect-score"
