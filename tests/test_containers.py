"""Claude Code containers recognised by content (evalkit/formats/claude_code/containers.py)."""

from __future__ import annotations

import json
from pathlib import Path

from evalkit.formats.claude_code.containers import CAPTURE_KEY
from evalkit.formats.claude_code.transcripts import read_segment, read_transcript
from evalkit.session import session_from_transcript
from tests.builders import ASST, RES, RESULT, USE, XRES, lines, write_jsonl

E = "mcp__codegraph__codegraph_explore"


def run_events():
    """A small run with the newer fields: `caller` on tool_use, `tool_use_result` on user."""
    events = lines(
        {"type": "system", "subtype": "init", "tools": ["Read", E]},
        ASST(1000, "m1", [USE("e1", E, {"query": "where"}) | {"caller": {"type": "direct"}}]),
        XRES("e1", ["src/net.py", "src/io.py"]),
        {"type": "rate_limit_event", "rate_limit_info": {"status": "allowed"}},
        ASST(2000, "m2", [USE("r1", "Read", {"file_path": "/w/src/net.py"})]),
        RES("r1", 300),
        {"type": "rate_limit_event", "rate_limit_info": {"status": "allowed_warning"}},
        {"type": "stream_event", "event": {"type": "message_stop"}},
        RESULT("It is in src/net.py."),
    )
    events[5] = events[5] | {"tool_use_result": {"type": "text", "file": {"numLines": 3}}}
    return events


def write_array(path: Path, events: list[dict]) -> Path:
    """The pretty-printed array claude-code-action writes (JSON.stringify(messages, null, 2))."""
    path.write_text(json.dumps(events, indent=2), encoding="utf-8")
    return path


def write_wrapped(path: Path, events: list[dict]) -> Path:
    rows = [{"timestamp": 1900000000.25 + i, "raw": e} for i, e in enumerate(events)]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def test_a_json_array_under_any_name_reads_as_its_messages(tmp_path):
    events = run_events()
    got, account = read_segment(str(write_array(tmp_path / "claude-execution-output.json", events)))
    assert got == events
    assert (account.container, account.lines, account.events, account.skipped) == (
        "json-array",
        len(events),
        len(events),
        0,
    )
    assert account.damage() is None


def test_the_same_run_in_three_containers_gives_the_same_metrics(tmp_path):
    events = run_events()
    plain = session_from_transcript(
        read_transcript(write_jsonl(tmp_path / "claude-code.txt", events))
    )
    array = session_from_transcript(read_transcript(write_array(tmp_path / "a.json", events)))
    wrapped = session_from_transcript(read_transcript(write_wrapped(tmp_path / "w.jsonl", events)))
    for s in (array, wrapped):
        assert s.allocation == plain.allocation
        assert s.summary == plain.summary
        assert s.occupancy == plain.occupancy
        assert s.sufficiency == plain.sufficiency
        assert s.read_allocation == plain.read_allocation
    assert plain.allocation.efficiency > 0 and plain.summary.reads == 1


def test_wrapped_lines_are_unwrapped_and_keep_the_capture_time(tmp_path):
    events = run_events()
    got, account = read_segment(str(write_wrapped(tmp_path / "w.jsonl", events)))
    assert account.wrapped == len(events) and account.container == "jsonl"
    assert got[0][CAPTURE_KEY] == 1900000000.25
    assert [{k: v for k, v in e.items() if k != CAPTURE_KEY} for e in got] == events


def test_unknown_event_types_are_counted_per_type_never_malformed(tmp_path):
    _, account = read_segment(str(write_jsonl(tmp_path / "claude-code.txt", run_events())))
    assert account.other_types == (("rate_limit_event", 2), ("stream_event", 1))
    assert account.malformed == 0 and account.damage() is None
    weird = write_jsonl(tmp_path / "x.jsonl", [{"type": ["x"]}, {"no": "type"}, {"type": "user"}])
    assert read_segment(str(weird))[1].other_types == (("(no type)", 2),)


def test_event_types_counted_while_reading_are_those_of_the_events_read(tmp_path):
    """The reader counts the types it does not use as it reads each line; the count must be
    `other_types` of the events it returns: lines decoded by either decoder (a `-0` or a big
    integer takes the exact one), wrapped lines (unwrapped, then counted), `raw` keys that
    are not a wrapper."""
    from evalkit.formats.claude_code.containers import other_types

    p = tmp_path / "mixed.jsonl"
    p.write_text(
        "\n".join(
            [
                '{"type": "rate_limit_event"}',
                '{"type": "x", "n": -0}',
                '{"type": "y", "n": 123456789012345678901}',
                '{"no": "type", "n": -0}',
                '{"type": 3}',
                '{"type": "x", "raw": "not a wrapper"}',
                '{"type": "user"}',
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    events, account = read_segment(str(p))
    assert account.wrapped == 0
    assert account.other_types == other_types(events)
    assert account.other_types == (("rate_limit_event", 1), ("x", 2), ("y", 1), ("(no type)", 2))
    w = write_wrapped(tmp_path / "w.jsonl", run_events())
    events, account = read_segment(str(w))
    assert account.wrapped and account.other_types == other_types(events)
    assert account.other_types == (("rate_limit_event", 2), ("stream_event", 1))


def test_jsonl_starting_with_an_array_line_stays_jsonl(tmp_path):
    p = tmp_path / "r.jsonl"
    p.write_bytes(b'[1,2]\n{"type":"x"}\n')
    events, account = read_segment(str(p))
    assert events == [{"type": "x"}] and account.container == "jsonl" and account.non_object == 1


def test_an_array_with_odd_elements_counts_them(tmp_path):
    p = tmp_path / "a.json"
    p.write_text('[{"type": "result", "result": "ok"}, 3, null, "s"]', encoding="utf-8")
    events, account = read_segment(str(p))
    assert events == [{"type": "result", "result": "ok"}]
    assert (account.lines, account.non_object) == (4, 3)
    assert "3 non-object JSON elements ignored" in account.damage()
