"""Every agent in every layout (issue 23, Build 7): Codex, Inspect and ATIF sessions in harbor
trees and pattern layouts, in the frames and in the trial sweep's arms.

Fixtures: `tests.agent_trees` (a harbor tree with Codex `agent/codex.txt` trials and ATIF-only
trials beside the Claude Code ones; a `{arm}/{task}/{trial}/*` tree mixing Claude Code, Codex
and Inspect). Expected values are hand-computed in the builders' docstrings.
"""

from __future__ import annotations

import json

import pytest

from evalkit.corpus.layouts import discover_layout
from evalkit.formats.atif.trajectory import read_atif
from evalkit.formats.detect import detect_format, read_agent_file
from evalkit.tables.corpus import load_corpus
from evalkit.tables.trials import run_trial_sweep
from tests.agent_trees import (
    ATIF_AGENT,
    ATIF_REWARDS,
    CODEX_REWARDS,
    MIXED_LAYOUT,
    atif_trajectory,
    build_harbor_agents,
    build_mixed_pattern,
)

pytest.importorskip("inspect_ai")


@pytest.fixture(scope="module")
def harbor(tmp_path_factory):
    root = tmp_path_factory.mktemp("harbor") / "runs"
    root.mkdir()
    build_harbor_agents(root)
    return root


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    root = tmp_path_factory.mktemp("mixed") / "runs"
    root.mkdir()
    csv = build_mixed_pattern(root)
    return root, csv


# --- the ATIF reader ------------------------------------------------------------------------


def test_atif_trajectory_is_detected_and_read(tmp_path):
    path = tmp_path / "trajectory.json"
    path.write_text(json.dumps(atif_trajectory("t1"), indent=2), encoding="utf-8")
    assert detect_format(path) == "atif"
    (s,) = read_agent_file(path)
    assert (s.agent, s.format, s.session_id, s.model) == (
        ATIF_AGENT,
        "atif",
        "oh-t1",
        "example-model",
    )
    assert [c.name for c in s.tool_calls] == ["execute_bash", "str_replace_editor"]
    # observations joined by source_call_id; content parts read as text
    assert [c.output for c in s.tool_calls] == ["t1.py util.py", "def f(): ..."]
    assert s.tool_calls[0].input == {"command": "ls src"}
    assert s.final_answer == "Fixed in src/t1.py."
    assert s.turns == 1
    assert s.duration_s == 30.0
    assert s.cost_usd == pytest.approx(0.12)
    t = s.tokens
    assert (t.prompt_tokens, t.cache_read_tokens, t.uncached_prompt_tokens) == (4300, 2000, 2300)
    assert (t.output_tokens, t.cache_write_tokens, t.reasoning_tokens) == (150, None, None)
    assert [r.prompt_tokens for r in s.requests] == [1000, 1500, 1800]


def test_atif_without_final_metrics_sums_the_steps(tmp_path):
    doc = atif_trajectory("t2")
    del doc["final_metrics"]
    path = tmp_path / "t.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    s = read_atif(path)
    assert (s.tokens.prompt_tokens, s.tokens.cache_read_tokens, s.tokens.output_tokens) == (
        4300,
        2000,
        150,
    )
    assert s.cost_usd is None  # no step has a cost: unknown, never 0


def test_atif_copied_context_steps_are_not_counted_again(tmp_path):
    doc = atif_trajectory("t1")
    copied = dict(doc["steps"][1], step_id=9, is_copied_context=True)
    doc["steps"].insert(1, copied)
    del doc["final_metrics"]
    path = tmp_path / "t.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    s = read_atif(path)
    assert len(s.tool_calls) == 2 and s.tokens.prompt_tokens == 4300


def test_a_json_that_is_not_atif_is_not_detected_as_atif(tmp_path):
    path = tmp_path / "trajectory.json"
    path.write_text('{"steps": []}\n', encoding="utf-8")
    assert detect_format(path) != "atif"


# --- harbor trees ---------------------------------------------------------------------------


def test_harbor_reads_codex_and_atif_only_trials(harbor):
    found = discover_layout(harbor, "harbor")
    logs = {s.log for s in found.sessions}
    assert "suite/codex/t1/t1_1/agent/codex.txt" in logs
    assert f"suite/{ATIF_AGENT}/t1/t1_1/agent/trajectory.json" in logs
    # beside a native log, the ATIF copy and the rollout copy are the same run
    reasons = {f.path: f.reason for f in found.files}
    assert reasons["suite/codex/t1/t1_1/agent/trajectory.json"] == (
        "ATIF copy of the same run, not counted again"
    )
    rollout = next(p for p in reasons if p.startswith("suite/codex/t1/t1_1/agent/sessions/"))
    assert reasons[rollout] == "copy of the same run (agent/codex.txt is read)"
    assert reasons["suite/baseline/t2/t2_2/agent/trajectory.json"] == (
        "ATIF copy of the same run, not counted again"
    )
    assert len(found.sessions) == 16 + 2 + 2


def test_harbor_frames_hold_every_agent(harbor):
    df = load_corpus(harbor, layout="harbor", cache=False).sessions_df().set_index("log")
    codex = df.loc["suite/codex/t2/t2_1/agent/codex.txt"]
    assert (codex["agent"], codex["arm"], codex["task"], codex["trial"]) == (
        "codex",
        "codex",
        "t2",
        "t2_1",
    )
    assert codex["tool_calls"] == 6
    assert (codex["prompt_tokens"], codex["output_tokens"]) == (2500, 120)
    oh = df.loc[f"suite/{ATIF_AGENT}/t1/t1_1/agent/trajectory.json"]
    assert (oh["agent"], oh["arm"], oh["task"], oh["trial"]) == (
        ATIF_AGENT,
        ATIF_AGENT,
        "t1",
        "t1_1",
    )
    assert (oh["tool_calls"], oh["prompt_tokens"], oh["output_tokens"]) == (2, 4300, 150)
    assert oh["cost_usd"] == pytest.approx(0.12)
    calls = load_corpus(harbor, layout="harbor", cache=False).tool_calls_df()
    mine = calls[calls["log"] == f"suite/{ATIF_AGENT}/t1/t1_1/agent/trajectory.json"]
    assert list(mine["name"]) == ["execute_bash", "str_replace_editor"]
    assert list(mine["agent"]) == [ATIF_AGENT, ATIF_AGENT]


def test_harbor_trial_sweep_counts_every_run_in_its_arm(harbor, tmp_path):
    t = run_trial_sweep(harbor, layout="harbor", profile="sourcegraph", cache=False)
    runs = t.runs_frame().set_index("log")
    assert set(t.arms) == {"baseline", "mcp", "codex", ATIF_AGENT}
    summary = t.arm_summary_frame().set_index("arm")
    assert summary.loc["codex", "runs"] == 2 and summary.loc[ATIF_AGENT, "runs"] == 2
    assert summary.loc["baseline", "runs"] == 8 and summary.loc["mcp", "runs"] == 8
    for task, reward in CODEX_REWARDS.items():
        row = runs.loc[f"suite/codex/{task}/{task}_1/agent/codex.txt"]
        assert (row["status"], row["reward"], row["tool_calls"], row["tokens"]) == (
            "parsed",
            reward,
            6,
            2620,
        )
    for task, reward in ATIF_REWARDS.items():
        row = runs.loc[f"suite/{ATIF_AGENT}/{task}/{task}_1/agent/trajectory.json"]
        assert (row["status"], row["reward"], row["tool_calls"], row["tokens"]) == (
            "parsed",
            reward,
            2,
            4450,
        )
        assert row["cost_usd"] == pytest.approx(0.12) and row["duration_s"] == 30.0
    (cmp,) = t.comparisons
    by_arm = {a.label: a for a in cmp.arms}
    assert by_arm["codex"].runs == 2 and by_arm[ATIF_AGENT].runs == 2
    # the arm of two Codex runs against the baseline: paired per task
    pair = run_trial_sweep(
        harbor, layout="harbor", arms=("baseline", "codex"), cache=False
    ).outcomes
    assert pair is not None and {r.task for r in pair.tasks} == {"t1", "t2", "t3", "t4"}


# --- a pattern layout mixing Claude Code, Codex and Inspect ---------------------------------


def test_pattern_frames_hold_every_agent(mixed):
    root, _csv = mixed
    df = load_corpus(root, layout=MIXED_LAYOUT, cache=False).sessions_df()
    df = df.sort_values("log").reset_index(drop=True)
    got = df[["agent", "arm", "task", "trial", "tool_calls", "prompt_tokens"]]
    rows = [tuple(r) for r in got.itertuples(index=False)]
    assert rows == [
        ("claude-code", "claude", "t1", "1", 2, 3600),
        ("claude-code", "claude", "t2", "1", 2, 3600),
        ("codex", "codex", "t1", "1", 4, 3000),
        ("codex", "codex", "t2", "1", 4, 3000),
        ("inspect", "inspect", "t1", "1", 1, 2600),
        ("inspect", "inspect", "t2", "1", 1, 2600),
    ]
    assert list(df["output_tokens"][2:]) == [180, 180, 300, 300]


def test_pattern_trial_sweep_counts_every_run_in_its_arm(mixed):
    root, csv = mixed
    t = run_trial_sweep(root, layout=MIXED_LAYOUT, outcomes=csv, cache=False)
    summary = t.arm_summary_frame().set_index("arm")
    assert dict(summary["runs"]) == {"claude": 2, "codex": 2, "inspect": 2}
    runs = t.runs_frame().set_index("log")
    codex = runs.loc["codex/t2/1/rollout-2030-01-01T10-00-00-x.jsonl"]
    assert (codex["arm"], codex["task"], codex["trial"], codex["reward"]) == (
        "codex",
        "t2",
        "1",
        0.0,
    )
    assert (codex["tool_calls"], codex["tool_under_test_calls"], codex["tokens"]) == (4, 1, 3180)
    ins = runs.loc["inspect/t1/1/log.eval#t1:1"]
    # the Inspect score is the outcome where the CSV names none
    assert (ins["arm"], ins["task"], ins["reward"], ins["passed"]) == ("inspect", "t1", 0.5, False)
    assert (ins["tool_calls"], ins["tokens"]) == (1, 2900)
    assert t.join is not None
    pair = run_trial_sweep(
        root, layout=MIXED_LAYOUT, outcomes=csv, arms=("claude", "codex"), cache=False
    ).outcomes
    assert pair is not None and len(pair.tasks) == 2
