"""The `codex exec --json` reader (evalkit/formats/codex/exec_json.py; agent-formats §2)."""

from __future__ import annotations

import json

import pytest

from evalkit.errors import TranscriptError
from evalkit.formats.codex.exec_json import read_exec_json
from tests.agent_builders import ev, exec_stream_events, it, write_events


@pytest.fixture
def session(tmp_path):
    path = write_events(tmp_path / "exec.jsonl", exec_stream_events(), banner="Reading prompt...")
    return read_exec_json(path)


def test_one_call_per_completed_tool_item(session):
    calls = session.tool_calls
    assert [c.id for c in calls] == ["item_1", "item_2", "item_3", "item_4", "item_7", "item_8"]
    assert [c.name for c in calls] == [
        "command_execution",
        "mcp__codegraph__codegraph_explore",
        "file_change",
        "web_search",
        "command_execution",
        "spawn_agent",
    ]
    assert [c.family for c in calls] == ["bash", "codegraph", "edit", "web", "bash", "agent"]
    assert [c.error for c in calls] == [False, False, False, False, True, False]
    assert [c.exit_code for c in calls] == [0, None, None, None, 2, None]
    assert calls[0].output == "src/net.py:10:def retry():\n"
    assert calls[1].output == "**`src/net.py`** — retry"
    assert calls[1].input == {"query": "retry"}
    assert calls[2].output == "update src/net.py"
    assert session.unfinished_calls == 1  # item_11 started, never completed


def test_final_answer_turns_and_tokens_from_the_last_turn_completed(session):
    assert session.final_answer == "The retry logic is in src/net.py."
    assert session.turns == 2 and session.aborted_turns == 0
    t = session.tokens
    # The last turn.completed is the running total: never summed with the first one.
    assert (t.prompt_tokens, t.cache_read_tokens, t.uncached_prompt_tokens) == (2500, 1800, 700)
    assert t.output_tokens == 120
    assert t.cache_write_tokens is None and t.reasoning_tokens is None
    assert session.requests is None  # no per-request usage in the stream
    assert session.compactions is None and session.duration_s is None
    assert session.session_id == "00000000-0000-7000-8000-000000000002"
    # The banner is not part of the stream: counted, not an error.
    assert session.read.non_object == 1 and session.read.malformed == 0


def test_an_interrupted_turn_and_older_field_names(tmp_path):
    events = [
        {"type": "session.created", "session_id": "s-1"},
        ev("turn.started"),
        {
            "type": "item.completed",
            "item": {"id": "item_0", "item_type": "assistant_message", "text": "partial"},
        },  # fmt: skip
        ev("turn.started"),  # the stream ends: interrupted
    ]
    s = read_exec_json(write_events(tmp_path / "e.jsonl", events))
    assert s.session_id == "s-1"
    assert s.final_answer == "partial"
    assert (s.turns, s.aborted_turns) == (2, 2)
    assert s.tokens.prompt_tokens is None  # no turn.completed: unknown, not 0


def test_repeated_completion_of_one_item_is_one_call(tmp_path):
    done = it("item.completed", "item_1", "command_execution", command="ls",
              aggregated_output="a", exit_code=0, status="completed")  # fmt: skip
    s = read_exec_json(write_events(tmp_path / "e.jsonl", [ev("turn.started"), done, done]))
    assert len(s.tool_calls) == 1


def test_legacy_protocol_stream_is_refused_in_one_line(tmp_path):
    path = tmp_path / "old.jsonl"
    path.write_text(json.dumps({"id": "0", "msg": {"type": "task_started"}}) + "\n")
    with pytest.raises(TranscriptError, match="legacy format"):
        read_exec_json(path)
