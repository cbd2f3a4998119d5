"""`parse_session` bundles every metric (issue 3 integration): one computation per number."""

from __future__ import annotations

import pytest

from evalkit.errors import TranscriptError
from evalkit.metrics.summary import PROCESSED_MESSAGE_USAGE
from evalkit.session import parse_session
from tests.builders import ASST, USE, lines, write_jsonl
from tests.test_occupancy import F4, F5_SEGMENT_1, F5_SEGMENT_2
from tests.test_sufficiency import S1


def test_session_carries_sufficiency_occupancy_and_summary(tmp_path):
    s = parse_session(write_jsonl(tmp_path / "s1.jsonl", S1))
    assert s.sufficiency.answered == 2
    assert s.occupancy.turns == s.summary.turns == 4
    assert s.summary.counts == {"mcp__codegraph__codegraph_explore": 2, "Read": 1}


def test_multi_turn_session_stitches_occupancy_and_summary(tmp_path):
    s = parse_session(
        [
            write_jsonl(tmp_path / "r.jsonl", F5_SEGMENT_1),
            write_jsonl(tmp_path / "r.t2.jsonl", F5_SEGMENT_2),
        ]
    )
    assert s.multi_turn and s.occupancy.final_context == 14600
    assert s.summary.subtypes == ("success", "success") and s.summary.cost == 0.2


def test_window_tokens_and_processed_options(tmp_path):
    path = write_jsonl(tmp_path / "f4.jsonl", F4)
    s = parse_session(path, window_tokens=1000000, processed=PROCESSED_MESSAGE_USAGE)
    assert s.occupancy.window_tokens == 1000000
    assert s.summary.processed == s.summary.processed_message_usage == 10002 + 14002 + 14502
    default = parse_session(path)
    assert default.occupancy.window_tokens == 200000 and default.summary.processed == 0


def test_a_crash_case_in_any_metric_fails_the_session(tmp_path):
    # §9.1 case 6: the reference's whole run stops; evalkit raises naming the file.
    path = write_jsonl(
        tmp_path / "bad.jsonl", lines(ASST(1, "m", [USE("t", "Task", {"description": 5})]))
    )
    with pytest.raises(TranscriptError, match="bad.jsonl"):
        parse_session(path)


def test_a_crash_in_a_later_segment_names_that_segment(tmp_path):
    first = write_jsonl(tmp_path / "run.jsonl", F5_SEGMENT_1)
    second = write_jsonl(
        tmp_path / "run.t2.jsonl",
        lines(ASST(1, "m9", [USE("b", "Bash", {"command": {"not": "a string"}})])),
    )
    with pytest.raises(TranscriptError) as info:
        parse_session([first, second])
    assert info.value.path == str(second) and "Bash input.command" in info.value.reason


def test_a_crash_in_the_classifier_names_the_segment_of_the_reaction(tmp_path):
    from tests.builders import XRES, E

    first = write_jsonl(
        tmp_path / "run.jsonl", lines(ASST(1, "m1", [USE("e1", E)]), XRES("e1", ["lib/a.js"]))
    )
    bad = {"type": "tool_use", "id": "x", "name": ["codegraph"], "input": {}}
    second = write_jsonl(tmp_path / "run.t2.jsonl", lines(ASST(2, "m2", [bad])))
    with pytest.raises(TranscriptError) as info:
        parse_session([first, second])
    assert info.value.path == str(second)


def test_an_empty_segment_is_refused_before_any_segment_is_read(tmp_path, monkeypatch):
    """The empty-file refusal looks at every segment before reading one (so a damaged first
    segment does not hide an empty second one), and each file is looked at once."""
    import os

    from evalkit.errors import EmptyFile
    from evalkit.formats.claude_code import transcripts

    bad = tmp_path / "run.jsonl"
    bad.write_text("not json\n")
    empty = tmp_path / "run.t2.jsonl"
    empty.write_bytes(b"")
    looked: list[str] = []
    real_stat = os.stat
    monkeypatch.setattr(
        transcripts.os, "stat", lambda p, *a, **k: looked.append(os.fspath(p)) or real_stat(p)
    )
    with pytest.raises(EmptyFile) as err:
        parse_session([bad, empty])
    assert err.value.path == str(empty)
    assert looked == [str(bad), str(empty)]
    # Without the refusal, the damaged first segment is what the reader reports.
    with pytest.raises(TranscriptError) as err:
        transcripts.read_transcript([bad, empty])
    assert err.value.path == str(bad) and not isinstance(err.value, EmptyFile)
