"""Mixed corpora: Claude Code, Codex CLI and Inspect AI logs in one corpus (evalkit/corpus/agents.py,
the agent table of evalkit/tables/agents.py, `evalkit run` and `evalkit sweep` on them; issue 15)."""

from __future__ import annotations

import json

import pandas as pd
import pytest

import evalkit
from evalkit.cli import main
from evalkit.formats.inspect.logs import inspect_available
from evalkit.store.columns import columns_of
from tests.agent_builders import (
    codex_session_lines,
    exec_stream_events,
    write_events,
    write_rollout,
)
from tests.builders import ASST, RESULT, TEXT, USE, XRES, E, lines, write_jsonl

needs_inspect = pytest.mark.skipif(
    not inspect_available(),
    reason='the Inspect AI extra is not installed (pip install -e ".[inspect]")',
)
ROLLOUT = "codex/rollout-2030-01-01T10-00-00-00000000-0000-7000-8000-000000000001.jsonl"
LEDGER = (
    "prompt_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "uncached_prompt_tokens",
    "output_tokens",
    "reasoning_tokens",
)


def claude_run(path, answer="see src/a.js"):
    events = lines(
        ASST(10, "m1", [USE("e1", E, {"query": "q"})]),
        XRES("e1", ["src/a.js", "src/b.js"]),
        ASST(20, "m2", [TEXT(answer)]),
        RESULT(answer),
    )
    return write_jsonl(path, events)


@pytest.fixture
def mixed(tmp_path):
    root = tmp_path / "corpus"
    (root / "cg" / "ab-x").mkdir(parents=True)
    claude_run(root / "cg" / "ab-x" / "run-baseline-1.jsonl")
    (root / "codex").mkdir()
    write_rollout(root / ROLLOUT, codex_session_lines())
    write_events(root / "codex" / "exec.jsonl", exec_stream_events())
    (root / "notes.md").write_text("not a log\n")
    if inspect_available():
        from tests.agent_builders import two_sample_log

        (root / "inspect").mkdir()
        two_sample_log(root / "inspect" / "log.eval")
    return root


@needs_inspect
def test_mixed_corpus_loads_every_file_accounted_with_the_agent_per_row(mixed):
    corpus = evalkit.load_corpus(mixed, cache=False, jobs=1)
    assert corpus.errors == ()
    status = {a.path: a.status for a in corpus.accounting()}
    assert status == {
        "cg/ab-x/run-baseline-1.jsonl": "parsed",
        "codex/exec.jsonl": "no-explore",
        ROLLOUT: "no-explore",
        "inspect/log.eval": "no-explore",
        "notes.md": "skipped",
    }
    df = corpus.sessions_df().set_index("log")
    assert df["agent"].to_dict() == {
        "cg/ab-x/run-baseline-1.jsonl": "claude-code",
        "codex/exec.jsonl": "codex",
        ROLLOUT: "codex",
        "inspect/log.eval#q-001:1": "inspect",
        "inspect/log.eval#q-002:1": "inspect",
    }
    # Hand-computed ledgers (tests/agent_builders.py), cached tokens never added twice.
    assert df.loc[ROLLOUT, list(LEDGER)].tolist()[:2] == [3000, 2100]
    assert df.loc[ROLLOUT, "uncached_prompt_tokens"] == 900
    assert df.loc["codex/exec.jsonl", "prompt_tokens"] == 2500
    assert pd.isna(df.loc["codex/exec.jsonl", "reasoning_tokens"])
    assert df.loc["inspect/log.eval#q-001:1", "prompt_tokens"] == 2600
    assert (
        df.loc["inspect/log.eval#q-001:1", "reward"],
        df.loc["inspect/log.eval#q-001:1", "passed"],
    ) == (0.75, True)
    # Claude-Code-only metrics are missing for other agents, never 0; tool counts are filled.
    others = df[df["agent"] != "claude-code"]
    for col in ("explore_calls", "efficiency", "next_explore_again", "chars"):
        assert others[col].isna().all(), col
    # The residual is filled where per-request prompt sizes exist: Codex rollouts, not exec --json
    # or Inspect (evalkit's analogue; hand-computed cases in tests/test_agent_occupancy.py).
    no_prompts = others[others.index != ROLLOUT]
    for col in ("residual_codegraph", "retrieval_residual", "final_context"):
        assert no_prompts[col].isna().all(), col
    assert df.loc[ROLLOUT, "final_context"] == 500  # the last request's prompt
    assert df.loc[ROLLOUT, "base_context"] == 1000
    assert not pd.isna(df.loc[ROLLOUT, "retrieval_residual"])
    assert df.loc[ROLLOUT, ["tool_calls", "bash_calls", "codegraph_calls"]].tolist() == [4, 2, 1]
    assert df.loc[ROLLOUT, "turns"] == 2 and df.loc[ROLLOUT, "compactions"] == 1
    # Mixing agents in changes no Claude Code number.
    alone = evalkit.load_corpus(mixed / "cg", cache=False, jobs=1).sessions_df().iloc[0]
    claude = df.loc["cg/ab-x/run-baseline-1.jsonl"]
    for col in ("efficiency", "chars", "cited_chars", "tool_calls", "final_context"):
        assert claude[col] == alone[col], col
    # The tool_calls frame carries every agent's calls, the explore frames Claude Code's only.
    calls = corpus.tool_calls_df()
    assert calls.groupby("agent").size().to_dict() == {"claude-code": 1, "codex": 10, "inspect": 3}
    assert set(corpus.calls_df()["agent"]) == {"claude-code"}
    # A sample is looked up by the name the frames give it.
    s = corpus.session("inspect/log.eval#q-002:1")
    assert (s.sample_id, s.passed) == ("q-002", False)
    assert corpus.session(ROLLOUT).tokens.prompt_tokens == 3000


def test_other_agents_stay_out_of_the_explore_tables(mixed):
    # A Codex run named like an arm's run is a session of that arm in the agent table, and not
    # a run of the allocation arm table (it has no explore allocation).
    write_rollout(mixed / "cg" / "ab-x" / "run-new-1.jsonl", codex_session_lines())
    claude_run(mixed / "cg" / "ab-x" / "run-new-2.jsonl")
    result = evalkit.load_corpus(mixed, cache=False, jobs=1).sweep()
    assert result.counts.sessions == 2 and result.counts.crashes == 0
    new = result.cell("cg", "x", "new")
    assert (new.runs, new.n) == (1, 1)
    rows = {(r.agent, r.arm): r for r in result.agents}
    assert rows[("codex", "new")].sessions == 1
    assert rows[("codex", "new")].prompt_tokens == 3000
    assert rows[("codex", None)].sessions == 2
    assert rows[("codex", None)].prompt_tokens == 2750  # median of 3000 (rollout) and 2500 (exec)
    assert rows[("claude-code", "baseline")].tool_calls == 1
    # Claude Code: input + cache read + cache creation once per message id (ASST: ctx, 0, 0).
    assert rows[("claude-code", "baseline")].prompt_tokens == 10 + 20


def test_a_claude_code_corpus_has_no_agent_table(tmp_path, capsys):
    claude_run(tmp_path / "run-baseline-1.jsonl")
    assert main(["sweep", str(tmp_path), "--no-cache", "--json"]) == 0
    assert "agents" not in json.loads(capsys.readouterr().out)
    assert main(["sweep", str(tmp_path), "--no-cache"]) == 0
    assert "Agents —" not in capsys.readouterr().out


def test_sweep_prints_the_agent_table_and_lists_other_agents_files(mixed, capsys):
    assert main(["sweep", str(mixed), "--no-cache"]) == 0
    out = capsys.readouterr().out
    assert "Agents — every session by agent and arm" in out
    assert "  codex        —                2         5.0          2,750            150" in out
    assert "no-explore: a Codex CLI session: the explore metrics are Claude Code metrics" in out


def test_run_prints_a_summary_for_a_codex_file(mixed, capsys):
    assert main(["run", str(mixed / ROLLOUT)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Codex CLI rollout — ")
    assert "tool calls: 4 (bash 2, codegraph 1, edit 1); 1 errored" in out
    assert "prompt (every input token, cached or not)         3,000" in out
    assert "uncached (prompt minus cache read)                900" in out
    assert "final answer: 27 chars (task_complete last_agent_message)" in out
    assert "Claude Code metrics: not computed for Codex CLI" in out
    assert main(["run", str(mixed / "codex" / "exec.jsonl"), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    (s,) = doc["sessions"]
    assert (doc["agent"], doc["format"]) == ("codex", "codex-exec")
    assert s["tokens"]["prompt_tokens"] == 2500 and s["tokens"]["reasoning_tokens"] is None
    assert s["tool_calls_by_family"] == {"bash": 2, "agent": 1, "codegraph": 1, "edit": 1, "web": 1}
    assert s["unfinished_tool_calls"] == 1


def test_run_format_option_and_its_errors(mixed, capsys):
    claude = mixed / "cg" / "ab-x" / "run-baseline-1.jsonl"
    assert main(["run", str(claude), "--format", "codex-rollout"]) == 2
    assert "not a Codex rollout file (no session_meta line)" in capsys.readouterr().err
    # Several FILEs are the segments of one Claude Code session: a rollout is not one.
    assert main(["run", str(claude), str(mixed / ROLLOUT)]) == 2
    assert "not a Claude Code transcript" in capsys.readouterr().err
    assert main(["run", str(mixed / ROLLOUT), "--envelope"]) == 2
    assert "explore views of Claude Code transcripts" in capsys.readouterr().err
    assert main(["run", str(claude), "--json"]) == 0  # detected as Claude Code
    assert json.loads(capsys.readouterr().out)["answer_source"] == "result"


@needs_inspect
def test_run_on_an_inspect_log(mixed, capsys):
    assert main(["run", str(mixed / "inspect" / "log.eval")]) == 0
    out = capsys.readouterr().out
    assert "Inspect AI eval log — " in out and "(2 sessions)" in out
    assert "sample q-001, epoch 1" in out and "outcome: reward 0.75, passed yes" in out


def test_the_dictionary_declares_the_ledger_and_agent_columns():
    names = [c.name for c in columns_of("sessions")]
    assert all(col in names for col in LEDGER)
    assert names.index("agent") < names.index("segments")
    units = {c.name: c.unit for c in columns_of("sessions")}
    assert {units[c] for c in LEDGER} == {"tokens"}


def test_a_broken_codex_file_is_a_crash_and_the_rest_still_loads(mixed):
    lines_ = codex_session_lines()[1:]  # the session_meta line lost
    write_rollout(mixed / "codex" / "rollout-cut.jsonl", lines_)
    (mixed / "codex" / "broken.eval").write_bytes(b"PK\x03\x04 cut")
    corpus = evalkit.load_corpus(mixed, cache=False, jobs=1)
    status = {a.path: (a.status, a.reason) for a in corpus.accounting()}
    assert status["codex/rollout-cut.jsonl"] == (
        "crash",
        "codex/rollout-cut.jsonl: not a Codex rollout file (no session_meta line)",
    )
    assert status["codex/broken.eval"][0] == "skipped"  # not a readable zip: not a log
    assert [e.log for e in corpus.errors] == ["codex/rollout-cut.jsonl"]
    assert ROLLOUT in set(corpus.sessions_df()["log"])


def test_other_agents_come_back_unchanged_from_the_store(mixed, tmp_path):
    cache = tmp_path / "store"
    cold = evalkit.load_corpus(mixed, cache=True, cache_dir=cache, jobs=1)
    warm = evalkit.load_corpus(mixed, cache=True, cache_dir=cache, jobs=1)
    assert warm.cache_misses == 0 and warm.cache_hits == cold.cache_misses
    pd.testing.assert_frame_equal(cold.sessions_df(), warm.sessions_df())
    assert cold.sweep().agents == warm.sweep().agents
