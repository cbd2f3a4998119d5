"""The Codex rollout reader (evalkit/formats/codex/rollout.py; agent-formats §1)."""

from __future__ import annotations

import json

import pytest

from evalkit.errors import TranscriptError
from evalkit.formats.codex.outputs import decode_output
from evalkit.formats.codex.rollout import is_request_event, read_rollout
from tests.agent_builders import (
    assistant,
    codex_session_lines,
    event,
    function_call,
    function_output,
    meta,
    token_count,
    turn_context,
    usage,
    user_message,
    write_rollout,
)


@pytest.fixture
def session(tmp_path):
    return read_rollout(write_rollout(tmp_path / "rollout.jsonl", codex_session_lines()))


def test_tool_calls_joined_by_call_id_with_families_and_errors(session):
    calls = session.tool_calls
    assert [c.name for c in calls] == [
        "shell",
        "mcp__codegraph__codegraph_explore",
        "exec_command",
        "apply_patch",
    ]
    assert [c.family for c in calls] == ["bash", "codegraph", "bash", "edit"]
    assert [c.order for c in calls] == [0, 1, 2, 3]
    assert [c.id for c in calls] == ["call_1", "call_2", "call_3", "call_4"]
    # The structured shell JSON is unwrapped; unified exec and freeform headers give exit codes.
    assert calls[0].output == "src/net.py:10:def retry():\n"
    assert [c.exit_code for c in calls] == [0, None, 1, 0]
    assert [c.error for c in calls] == [False, False, True, False]
    assert calls[0].input == {"command": ["bash", "-lc", "rg -n retry src"]}
    assert calls[3].input.startswith("*** Begin Patch")
    assert session.errored_calls == 1
    assert session.calls_by_family() == {"bash": 2, "codegraph": 1, "edit": 1}


def test_tokens_are_the_sum_of_last_usage_over_request_events(session):
    # Hand-computed in codex_session_lines: the null info, the rate-limit repeat and the
    # compaction sentinel are not requests; cached sits inside input, reasoning inside output.
    assert [r.prompt_tokens for r in session.requests] == [1000, 1100, 400, 500]
    t = session.tokens
    assert t.prompt_tokens == 3000
    assert t.cache_read_tokens == 2100
    assert t.uncached_prompt_tokens == 900
    assert t.cache_write_tokens is None  # the format has none
    assert t.output_tokens == 180
    assert t.reasoning_tokens == 35
    # Cross-check: the last running total agrees in a plain session; never exceeded.
    assert session.reported_total_tokens == 3180
    assert session.extra["totals_agree"]
    assert t.prompt_tokens <= session.reported_total_tokens
    assert session.context_window == 100000


def test_turns_compaction_reasoning_answer_duration(session):
    assert session.turns == 2  # distinct turn ids (turn-2's context is written twice)
    assert session.aborted_turns == 0
    assert session.compactions == 1  # the compacted line; its context_compacted event is the same
    assert session.extra["reasoning_items"] == 2
    assert session.final_answer == "Backoff is in src/retry.py."
    assert session.final_answer_source == "task_complete last_agent_message"
    assert session.duration_s == len(codex_session_lines()) - 1  # lines one second apart
    assert session.model == "example-model"
    assert session.agent == "codex" and session.format == "codex-rollout"
    assert session.session_id == "00000000-0000-7000-8000-000000000001"
    assert session.cost_usd is None and session.reward is None  # not in a rollout
    assert session.extra["prompt"] == "Where is the retry logic?"


def _lines_with(*extra):
    return [meta("00000000-0000-7000-8000-000000000009"), turn_context(None), *extra]


def test_aborted_turn_and_answer_without_task_complete(tmp_path):
    lines = _lines_with(
        user_message("q1"),
        assistant("first"),
        event("turn_aborted", reason="interrupted"),
        user_message("q2"),
        assistant("commentary", phase="commentary"),
        assistant("the answer", phase="final_answer"),
        assistant("trailing note", phase="commentary"),
    )
    s = read_rollout(write_rollout(tmp_path / "r.jsonl", lines))
    assert s.aborted_turns == 1
    assert s.turns == 2  # no turn ids, no task_started: the user prompts
    assert s.final_answer == "the answer"  # phases written: the last final-answer message
    assert s.final_answer_source == "last final-answer message"


def test_window_full_and_compaction_sentinels_are_not_requests():
    previous = usage(1000, 0, 10, 0)
    window_full = {
        "total_token_usage": {**dict.fromkeys(usage(0, 0, 0, 0), 0), "total_tokens": 100000},
        "last_token_usage": {**dict.fromkeys(usage(0, 0, 0, 0), 0), "total_tokens": 98990},
    }
    assert not is_request_event(window_full, previous)
    compaction = {"total_token_usage": usage(1000, 0, 11, 0), "last_token_usage": usage(0, 0, 0, 0)}
    assert not is_request_event(compaction, previous)
    repeat = {"total_token_usage": previous, "last_token_usage": usage(1000, 0, 10, 0)}
    assert not is_request_event(repeat, previous)
    real = {"total_token_usage": usage(2000, 0, 20, 0), "last_token_usage": usage(1000, 0, 10, 0)}
    assert is_request_event(real, previous)


def test_window_full_makes_the_running_total_disagree_and_the_sum_wins(tmp_path):
    full = {**dict.fromkeys(usage(0, 0, 0, 0), 0), "total_tokens": 100000}
    lines = _lines_with(
        token_count(usage(90000, 0, 100, 0), usage(90000, 0, 100, 0)),
        token_count(full, {**dict.fromkeys(usage(0, 0, 0, 0), 0), "total_tokens": 9900}),
        # Later requests add to the replaced total, field by field (§1.9 rule 4).
        token_count(usage(500, 0, 100, 0, total=100600), usage(500, 0, 100, 0)),
    )
    s = read_rollout(write_rollout(tmp_path / "r.jsonl", lines))
    assert s.tokens.prompt_tokens == 90500
    assert s.tokens.output_tokens == 200
    assert s.reported_total_tokens == 100600
    assert not s.extra["totals_agree"]


def test_fork_copied_prefix_is_excluded_given_the_parent(tmp_path):
    parent_lines = codex_session_lines()
    parent = write_rollout(tmp_path / "parent.jsonl", parent_lines)
    cut = 16  # the fork copies everything before turn 2's context
    own = [
        turn_context("turn-9"),
        user_message("A different follow-up"),
        function_call("call_9", "shell", {"command": ["ls"]}),
        token_count(usage(3700, 3000, 200, 35), usage(700, 600, 20, 0)),
        function_output("call_9", "Exit code: 0\nOutput:\nsrc\n"),
        assistant("Listed."),
    ]
    fork_lines = [
        meta(
            "00000000-0000-7000-8000-00000000000f", forked_from_id=parent_lines[0]["payload"]["id"]
        ),
        *parent_lines[:cut],
        *own,
    ]
    fork = write_rollout(tmp_path / "fork.jsonl", fork_lines)

    alone = read_rollout(fork)
    assert alone.contains_parent_copy
    assert alone.parent_id == parent_lines[0]["payload"]["id"]
    assert len(alone.tool_calls) == 4  # 3 copied + its own, as it stands

    with_parent = read_rollout(fork, parent=str(parent))
    assert not with_parent.contains_parent_copy
    assert with_parent.excluded_copied_lines == cut
    assert [c.id for c in with_parent.tool_calls] == ["call_9"]
    assert with_parent.tokens.prompt_tokens == 700
    assert with_parent.tokens.cache_read_tokens == 600
    assert with_parent.turns == 1
    assert with_parent.final_answer == "Listed."


def test_legacy_line_format_before_september_2025(tmp_path):
    lines = [
        {"id": "legacy-1", "timestamp": "2025-08-01T10:00:00Z", "instructions": None},
        {"record_type": "state"},
        {
            "type": "function_call",
            "name": "shell",
            "arguments": '{"command":["ls"]}',
            "call_id": "c1",
        },
        {"type": "function_call_output", "call_id": "c1", "output": "Exit code: 2\nOutput:\nx"},
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "ok"}],
        },
    ]
    path = tmp_path / "rollout-old.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    s = read_rollout(path)
    assert s.session_id == "legacy-1"
    assert [(c.name, c.exit_code, c.error) for c in s.tool_calls] == [("shell", 2, True)]
    assert s.final_answer == "ok"
    assert s.tokens.prompt_tokens == 0 and s.requests == ()  # no token counts in that era


def test_damaged_lines_are_counted_and_unknown_kinds_kept(tmp_path):
    path = write_rollout(tmp_path / "r.jsonl", _lines_with(assistant("hi")))
    with path.open("a") as fh:
        fh.write('{"timestamp": "2030-01-01T10:00:09.000Z", "type": "brand_new", "payload": {}}\n')
        fh.write('{"timestamp": "2030-01-01T10:00:1\n')  # cut off
    s = read_rollout(path)
    assert s.final_answer == "hi"
    assert s.read.malformed == 1
    assert s.read.unknown == (("brand_new", 1),)
    assert s.read.damage() == "1 malformed line skipped"


def test_a_file_without_session_meta_is_refused_in_one_line(tmp_path):
    path = write_rollout(tmp_path / "r.jsonl", [assistant("hi")])
    with pytest.raises(TranscriptError) as err:
        read_rollout(path)
    assert str(err.value) == f"{path}: not a Codex rollout file (no session_meta line)"


@pytest.mark.parametrize(
    ("output", "text", "code", "error"),
    [
        ('{"output": "ok\\n", "metadata": {"exit_code": 3}}', "ok\n", 3, True),
        ("Exit code: 0\nWall time: 1 seconds\nOutput:\nExit code: 9\n", None, 0, False),
        ("Process running with session ID 4\nOutput:\nstill going", None, None, False),
        ("err: tool failed", None, None, True),
        (
            [{"type": "input_text", "text": "a"}, {"type": "input_text", "text": "b"}],
            "a\nb",
            None,
            False,
        ),
        ("Plan updated", None, None, False),
    ],
)
def test_output_shapes(output, text, code, error):
    decoded = decode_output(output)
    assert decoded.text == (output if text is None else text)
    assert decoded.exit_code == code
    assert decoded.error is error
