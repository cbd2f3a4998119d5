"""The session index (evalkit/formats/claude_code/index.py): one walk that lists what the
metrics read, held to account against the walks it replaced."""

from __future__ import annotations

import random

import pytest

from evalkit.errors import TranscriptError
from evalkit.formats.claude_code.index import ABSENT, index_events
from evalkit.formats.claude_code.transcripts import parse_line, tool_results
from evalkit.metrics.sufficiency import UNDEFINED
from tests.builders import ASST, RESULT, USE, XRES, lines
from tests.hostile import hostile_session


def _events(data: bytes) -> list:
    out = []
    for raw in data.split(b"\n"):
        ok, value = parse_line(raw.decode("utf-8", "replace"))
        if ok and isinstance(value, dict):
            out.append(value)
    return out


def _listed(events):
    """`tool_results` as a list, or the error it raises."""
    try:
        return list(tool_results(events)), None
    except TranscriptError as exc:
        return None, exc


@pytest.mark.parametrize("seed", range(60))
def test_the_index_lists_the_tool_results_tool_results_lists(seed):
    events = _events(hostile_session(random.Random(seed)))
    index = index_events(events)
    listed, error = _listed(events)
    if error is not None:
        assert index.error is not None
        assert (index.error.reason, index.error.event_index) == (error.reason, error.event_index)
        return
    assert index.error is None
    got = [(r.event, r.id, r.name, r.is_error, r.text) for r in index.results]
    assert got == [(r.index, r.tool_use_id, r.name, r.is_error, r.text) for r in listed]


def test_a_result_is_matched_to_the_last_use_seen_with_its_id():
    events = lines(
        XRES("a", ["x.py"]),  # before any use: no name (§9.1)
        ASST(10, "m1", [USE("a", "Read", {"file_path": "x.py"})]),
        ASST(10, "m2", [USE("a", "Grep", {"pattern": "p"})]),
        XRES("a", ["x.py"]),
        RESULT("done"),
    )
    index = index_events(events)
    assert [r.name for r in index.results] == ["", "Grep"]
    assert index.results[1].use is index.uses[1]
    assert index.plain_ids


def test_non_string_ids_are_told_and_a_missing_name_is_undefined():
    events = [
        {"type": "assistant", "message": {"id": "m", "content": [{"type": "tool_use", "id": 5}]}},
        {"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": 5.0}]}},
    ]
    index = index_events(events)
    assert not index.plain_ids
    assert index.uses[0].name is ABSENT is UNDEFINED
    assert index.results[0].name == "null"  # `String(undefined ?? null)` as `tool_results` has it
    assert index.results[0].raw_name is None


def test_a_null_block_is_kept_as_the_error_and_the_walk_goes_on():
    events = [
        {
            "type": "user",
            "message": {"content": [None, {"type": "tool_result", "content": [None]}]},
        },
        {"type": "assistant", "message": {"id": "m", "content": [{"type": "text", "text": "hi"}]}},
    ]
    index = index_events(events)
    assert index.error is not None and "null block in a user" in index.error.reason
    assert index.views[0].null_pos == 0
    [result] = index.results
    assert result.text is None and "null element" in result.error.reason
    assert len(index.assistants) == 1
