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


@pytest.mark.parametrize("seed", range(40))
def test_each_request_is_counted_at_its_first_event_as_request_count_counts_it(seed):
    """`Event.first` marks the first assistant event of each request key; their number is the
    reference's `turns` (`request_count`), on hostile sessions too (ids that are numbers,
    booleans, objects, empty or absent; messages that are not objects)."""
    from evalkit.formats.claude_code.transcripts import message_key
    from evalkit.metrics.occupancy import request_count

    events = _events(hostile_session(random.Random(seed)))
    ids = [None, "", "m1", "m1", 1, 1.0, True, {"o": 1}, [], 0, "m2"]
    rng = random.Random(seed)
    for _ in range(12):  # more assistant events, with the ids the metrics must tell apart
        message = rng.choice([{"id": rng.choice(ids)}, {}, None, "text", {"id": {"o": 1}}])
        events.insert(rng.randint(0, len(events)), {"type": "assistant", "message": message})
    index = index_events(events)
    firsts = [v for v in index.assistants if v.first]
    assert len(firsts) == request_count(events)
    seen = set()
    for view in index.assistants:
        message = view.message
        if type(message) is not dict:
            assert (view.key, view.first) == (None, False)
            continue
        assert view.msg_id is message.get("id")
        key = message_key(message.get("id"))
        assert (view.key is None) == (key is None)
        if type(key) is not object:  # an object or array id is a new identity each time
            assert view.key == key
            assert view.first == (key is not None and key not in seen)
            if key is not None:
                seen.add(key)
