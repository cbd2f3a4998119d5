"""The Codex rollout residual (evalkit's analogue of the Claude Code residual), by hand.

Every expected number below is worked out in the comments from the fixture's sizes: tool outputs
of known lengths between requests of known prompt sizes (agent-formats §1.9; reference-metrics
§6.3–6.7 for the arithmetic).
"""

from __future__ import annotations

import json

import pandas as pd
import pytest

from evalkit.cli import main
from evalkit.corpus.agents import agent_rows
from evalkit.formats.codex.rollout import read_rollout
from evalkit.formats.detect import read_agent_file
from evalkit.formats.profiles import load_profile
from evalkit.metrics.agent_occupancy import agent_occupancy, occupancy_family
from tests.agent_builders import (
    assistant,
    codex_session_lines,
    exec_stream_events,
    function_call,
    function_output,
    item,
    meta,
    reasoning,
    token_count,
    turn_context,
    usage,
    write_events,
    write_rollout,
)

CG = "mcp__codegraph__codegraph_explore"


def _user(text: str) -> dict:
    return item("message", role="user", content=[{"type": "input_text", "text": text}])


def _tc(prompt: int, running: int) -> dict:
    # Only `last_token_usage.input_tokens` (the request's prompt) matters to occupancy; the
    # running total just has to change so the event counts as a request.
    return token_count(usage(running, 0, running // 100, 0), usage(prompt, 0, 10, 0))


def _two_gap_lines(token_count_first: bool) -> list[dict]:
    """Three requests (prompts 10000, 11200, 13400). Response 1: reasoning (100 chars) and a
    shell call (name 5 + arguments 34 = 39 chars) answered by 3000 chars. Response 2: reasoning
    of 1000 chars and an explore call answered by 5000 chars. Response 3: the final answer.

    `token_count_first` writes each request's `token_count` before the items of its response
    (autumn-2025 builds), else after them (current builds, agent-formats §1.9).
    """
    responses = [
        [
            reasoning("r" * 100),
            function_call("call_1", "shell", {"command": ["bash", "-lc", "ls"]}),
        ],
        [reasoning("s" * 1000), function_call("call_2", CG, {"query": "retry"})],
        [assistant("Retry is in net.py.", phase="final_answer")],
    ]
    outputs = [[function_output("call_1", "x" * 3000)], [function_output("call_2", "y" * 5000)], []]
    prompts = [10000, 11200, 13400]
    lines = [meta("00000000-0000-7000-8000-00000000000a"), turn_context("turn-1"), _user("q" * 40)]
    for k in range(3):
        tc = _tc(prompts[k], 20000 * (k + 1))
        lines += [tc, *responses[k]] if token_count_first else [*responses[k], tc]
        lines += outputs[k]
    return lines


@pytest.mark.parametrize("token_count_first", [True, False])
def test_rollout_residual_by_hand_in_either_token_count_order(tmp_path, token_count_first):
    path = write_rollout(tmp_path / "rollout.jsonl", _two_gap_lines(token_count_first))
    o = agent_occupancy(read_rollout(path))
    assert o is not None
    # Gap 1→2: delta 1200; tool chars 3000 (bash); all chars 100 + 39 + 3000 = 3139.
    # Gap 2→3: delta 2200; tool chars 5000 (codegraph); all chars 1000 + (33 + 18) + 5000.
    # Response 2's reasoning sits in gap 2→3 in both orders (placed with the next tool output);
    # left at its file position in the current order it would make gap 1 not tool-dominated
    # (3000 / 4190 < 0.8) and the price would be gap 2's alone (5000 / 2200).
    (g1, g2) = o.gaps
    assert (g1.delta, g1.chars, g1.tool_chars) == (1200, 3139, 3000)
    assert (g2.delta, g2.chars, g2.tool_chars) == (2200, 6051, 5000)
    # Both gaps are clean; ratios 3000/1200 = 2.5 and 5000/2200 = 2.27, lower median 2.27,
    # 2.5 is not above 1.5 × 2.27: price = (3000 + 5000) / (1200 + 2200) = 8000 / 3400.
    assert o.calibrated and o.chars_per_token == pytest.approx(8000 / 3400)
    # Only gap 1 is ≥ 95% tool output: |3000 / (8000/3400) − 1200| / 1200 = 75 / 1200.
    assert o.dispersion == pytest.approx(0.0625)
    # Tokens: bash 3000 × 3400 / 8000 = 1275, codegraph 5000 × 3400 / 8000 = 2125; gap 1 overshoots
    # its delta by 75 < 200, so nothing is evicted.
    assert o.residual == {"codegraph": 2125, "read": 0, "search": 0, "bash": 1275, "other": 0}
    assert (o.residual_file_access, o.evicted) == (1275, 0)
    assert (o.final_context, o.base_context, o.turns) == (13400, 10000, 3)
    assert o.chars["bash"] == 3000 and o.results["codegraph"] == 1
    assert o.window_tokens == 100000  # the rollout's model_context_window


def test_rollout_residual_columns_in_the_sessions_rows(tmp_path):
    path = write_rollout(tmp_path / "rollout.jsonl", _two_gap_lines(False))
    row = agent_rows([read_rollout(path)], "rollout.jsonl")["sessions"][0]
    assert (row["residual_codegraph"], row["residual_bash"], row["residual_file_access"]) == (
        2125,
        1275,
        1275,
    )
    # Retrieval residual = the tool under test's + file access = 2125 + 1275.
    assert row["retrieval_residual"] == 3400
    assert row["retrieval_residual_share"] == pytest.approx(3400 / 13400)
    assert row["retrieval_residual_window_share"] == pytest.approx(3400 / 100000)
    assert row["final_context_window_share"] == pytest.approx(13400 / 100000)
    assert (row["final_context"], row["base_context"], row["contributed_codegraph"]) == (
        13400,
        10000,
        2125,
    )


def test_compaction_drop_and_unknown_call_id_by_hand(tmp_path):
    lines = [
        meta("00000000-0000-7000-8000-00000000000b"),
        turn_context("turn-1"),
        _tc(5000, 10000),
        function_call("c1", "shell", {"cmd": "ls"}),  # 5 + 13 = 18 chars
        function_output("c1", "a" * 2000),
        _tc(5800, 20000),
        token_count(usage(20000, 0, 200, 0), usage(5800, 0, 10, 0)),  # a repeat: no request
        function_call("c2", CG, {"query": "retry"}),
        function_output("c2", "b" * 4000),
        _tc(6000, 30000),
        assistant("First answer."),
        {"type": "compacted", "payload": {"message": "summary", "replacement_history": []}},
        token_count(usage(30000, 0, 300, 0), usage(0, 0, 0, 0, total=900)),  # sentinel
        turn_context("turn-2"),
        _user("q" * 50),
        _tc(3000, 40000),
        function_call("c3", "shell", {"cmd": "ls"}),
        function_output("c3", "c" * 500),
        function_output("nobody", "d" * 250),  # names no call: `other`
        _tc(3300, 50000),
    ]
    s = read_rollout(write_rollout(tmp_path / "rollout.jsonl", lines))
    o = agent_occupancy(s)
    assert o is not None and o.turns == 5
    # Clean gaps: 2000/800 = 2.5, 4000/200 = 20, 750/300 = 2.5; lower median 2.5; 20 > 3.75 is
    # left out: price (2000 + 750) / (800 + 300) = 2.5.
    assert o.chars_per_token == pytest.approx(2.5)
    # Errors on the ≥ 95% gaps: 0, |1600 − 200| / 200 = 7, 0 → lower median 0.
    assert o.dispersion == pytest.approx(0.0)
    # Gap 2→3 adds 1600 codegraph tokens to a window that grew by 200: 1400 evicted oldest first
    # (all 800 bash tokens, then 600 of codegraph). The compaction then clears the 1000 left.
    # Gap 4→5: bash 500 / 2.5 = 200, other 250 / 2.5 = 100.
    assert o.evicted == 1400 + 1000
    assert o.residual == {"codegraph": 0, "read": 0, "search": 0, "bash": 200, "other": 100}
    assert o.contributed == {"codegraph": 1600, "read": 0, "search": 0, "bash": 1000, "other": 100}
    assert o.compactions == 1 and s.compactions == 1
    assert (o.final_context, o.base_context) == (3300, 5000)
    assert (o.chars["bash"], o.results["bash"], o.chars["other"]) == (2500, 2, 250)


def test_families_follow_the_tool_profile(tmp_path):
    assert occupancy_family("exec_command", "bash") == "bash"
    assert occupancy_family(CG, "codegraph") == "codegraph"
    assert occupancy_family("apply_patch", "edit") == "other"
    assert occupancy_family("mcp__sourcegraph__sg_read_file", "sourcegraph") == "other"
    sg = load_profile("sourcegraph")
    assert occupancy_family("mcp__sourcegraph__sg_read_file", "sourcegraph", sg) == "sourcegraph"
    lines = _two_gap_lines(False)
    for line in lines:
        if line["payload"].get("name") == CG:
            line["payload"]["name"] = "mcp__sourcegraph__sg_keyword_search"
    o = agent_occupancy(read_rollout(write_rollout(tmp_path / "r.jsonl", lines)), sg)
    assert o is not None and o.tool_family == "sourcegraph"
    assert (o.residual["sourcegraph"], o.residual["bash"]) == (2125, 1275)


def test_no_residual_without_per_request_prompt_sizes(tmp_path):
    # `codex exec --json` has cumulative usage only (agent-formats §2.4): no timeline, <NA>.
    (s,) = read_agent_file(write_events(tmp_path / "exec.jsonl", exec_stream_events()))
    assert s.context is None and agent_occupancy(s) is None
    row = agent_rows([s], "exec.jsonl")["sessions"][0]
    assert "retrieval_residual" not in row and "residual_codegraph" not in row
    # A rollout with no request event (every token_count null) has no residual either.
    empty = [meta("00000000-0000-7000-8000-00000000000c"), token_count(None), assistant("hi")]
    s2 = read_rollout(write_rollout(tmp_path / "r.jsonl", empty))
    assert agent_occupancy(s2) is None


def test_a_forks_copied_parent_lines_stay_out_of_the_timeline(tmp_path):
    # A fork's copied parent lines (agent-formats §1.11) stay out of the timeline once excluded.
    parent_lines = _two_gap_lines(False)
    parent = write_rollout(tmp_path / "parent.jsonl", parent_lines)
    parent_id = parent_lines[0]["payload"]["id"]
    fork_own = [
        _tc(14000, 90000),
        function_call("call_9", "shell", {"cmd": "ls"}),
        function_output("call_9", "z" * 1000),
        _tc(14500, 100000),
    ]
    fork = [meta("00000000-0000-7000-8000-00000000000d", forked_from_id=parent_id)]
    fork += parent_lines + fork_own
    s = read_rollout(write_rollout(tmp_path / "fork.jsonl", fork), parent=str(parent))
    kinds = [c.kind for c in s.context or ()]
    assert kinds == ["request", "assistant", "output", "request"]
    o = agent_occupancy(s)
    assert o is not None and (o.base_context, o.final_context) == (14000, 14500)
    # 1000 chars over a 500-token gap: price 2.0, residual bash 500.
    assert o.residual["bash"] == 500


def test_the_acceptance_rollout_by_hand(tmp_path):
    s = read_rollout(write_rollout(tmp_path / "r.jsonl", codex_session_lines()))
    o = agent_occupancy(s)
    assert o is not None
    # Requests 1000, 1100, 400 (after the compaction), 500. Gap 1 holds the three turn-1
    # outputs as the model saw them: 27 + 55 + 113 = 195 chars (the errored one included).
    assert [(g.delta, g.tool_chars, g.compacted) for g in o.gaps] == [
        (100, 195, False),
        (-700, 0, True),
        (100, 53, False),  # apply_patch's output: `other`
    ]
    # No gap is over 500 chars: the price falls back to all chars over all growing gaps.
    g1, _, g3 = o.gaps
    assert o.chars_per_token == pytest.approx((g1.chars + g3.chars) / 200)
    # Turn 1's 195 / price tokens are cleared by the compaction; apply_patch's 53 / price stay.
    assert o.evicted == round(195 / o.chars_per_token)
    assert o.residual["other"] == round(53 / o.chars_per_token) and o.residual_file_access == 0


def test_run_prints_and_returns_the_rollout_residual(tmp_path, capsys):
    path = write_rollout(tmp_path / "rollout.jsonl", _two_gap_lines(False))
    assert main(["run", str(path)]) == 0
    out = capsys.readouterr().out
    assert (
        "    codegraph 2,125, file access 1,275, other 0 tokens; retrieval residual 3,400 of a "
        "final context of 13,400"
    ) in out
    assert "    2.35 chars per token measured, 0 tokens evicted" in out
    assert "The residual is evalkit's own analogue of the Claude Code one." in out
    assert main(["run", str(path), "--json"]) == 0
    (s,) = json.loads(capsys.readouterr().out)["sessions"]
    assert s["occupancy"]["retrieval_residual"] == 3400
    assert s["occupancy"]["residual"]["bash"] == 1275
    exec_path = write_events(tmp_path / "exec.jsonl", exec_stream_events())
    assert main(["run", str(exec_path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["sessions"][0]["occupancy"] is None


def test_the_glance_residual_keeps_to_claude_code_sessions(tmp_path):
    import evalkit
    from evalkit.outputs import glance
    from tests.test_corpus_agents import claude_run

    root = tmp_path / "corpus"
    (root / "ab-x").mkdir(parents=True)
    claude_run(root / "ab-x" / "run-baseline-1.jsonl")
    alone = glance.residual_data(evalkit.load_corpus(root, cache=False, jobs=1))
    write_rollout(root / "ab-x" / "run-baseline-2.jsonl", _two_gap_lines(False))
    corpus = evalkit.load_corpus(root, cache=False, jobs=1)
    df = corpus.sessions_df().set_index("log")
    assert df.loc["ab-x/run-baseline-2.jsonl", "retrieval_residual"] == 3400  # in the frame
    pd.testing.assert_frame_equal(glance.residual_data(corpus), alone)  # not in the glance
