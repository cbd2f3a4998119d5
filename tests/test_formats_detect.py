"""Format detection from content and the one entry point for non-Claude-Code files
(evalkit/formats/detect.py), with the shared tool families (evalkit/formats/common.py)."""

from __future__ import annotations

import gzip

import pytest

from evalkit.errors import TranscriptError, UsageError
from evalkit.formats import detect
from evalkit.formats.common import tool_family
from evalkit.formats.inspect import logs
from tests.agent_builders import (
    codex_session_lines,
    exec_stream_events,
    write_events,
    write_rollout,
)
from tests.builders import ASST, DONE, TEXT, lines, write_jsonl


def test_detects_each_format_by_content_not_name(tmp_path):
    # Names that say nothing (or the wrong thing) do not decide.
    rollout = write_rollout(tmp_path / "a.txt", codex_session_lines())
    stream = write_events(tmp_path / "b.json", exec_stream_events(), banner="banner")
    claude = write_jsonl(tmp_path / "c.jsonl", lines(ASST(10, "m1", [TEXT("hi")]), DONE))
    assert detect.detect_format(rollout) == "codex-rollout"
    assert detect.detect_format(stream) == "codex-exec"
    assert detect.detect_format(claude) == "claude-code"
    packed = tmp_path / "d.jsonl.gz"
    packed.write_bytes(gzip.compress(rollout.read_bytes()))
    assert detect.detect_format(packed) == "codex-rollout"


def test_a_long_first_line_a_fifo_and_a_missing_file(tmp_path):
    import json
    import os

    lines_ = codex_session_lines()
    lines_[0]["payload"]["base_instructions"] = {"text": "x" * 100_000}
    assert detect.detect_format(write_rollout(tmp_path / "long.jsonl", lines_)) == "codex-rollout"
    assert (
        json.loads((tmp_path / "long.jsonl").read_text().split("\n")[0])["type"] == "session_meta"
    )
    os.mkfifo(tmp_path / "pipe.jsonl")  # never opened: it would block
    assert detect.detect_format(tmp_path / "pipe.jsonl") == "claude-code"
    assert detect.detect_format(tmp_path / "missing.jsonl") == "claude-code"


@pytest.mark.skipif(not logs.inspect_available(), reason="the Inspect AI extra is not installed")
def test_detects_inspect_logs(tmp_path):
    from tests.agent_builders import two_sample_log

    zipped = two_sample_log(tmp_path / "x.eval")
    renamed = two_sample_log(tmp_path / "x.json").rename(tmp_path / "renamed.log")
    for path in (zipped, renamed):
        assert detect.detect_format(path) == "inspect", path.name
    assert [s.sample_id for s in detect.read_agent_file(path)] == ["q-001", "q-002"]


def test_read_agent_file_dispatches_and_format_can_be_forced(tmp_path):
    rollout = write_rollout(tmp_path / "a.jsonl", codex_session_lines())
    (s,) = detect.read_agent_file(rollout)
    assert s.format == "codex-rollout"
    with pytest.raises(TranscriptError, match="no thread or turn event"):
        list(detect.read_agent_file(rollout, format="codex-exec"))
    claude = write_jsonl(tmp_path / "c.jsonl", lines(ASST(10, "m1", [TEXT("hi")]), DONE))
    with pytest.raises(TranscriptError, match="Claude Code transcript"):
        list(detect.read_agent_file(claude))


def test_check_format_names_the_choices():
    assert detect.check_format("auto") is None and detect.check_format(None) is None
    assert detect.check_format("codex-exec") == "codex-exec"
    with pytest.raises(UsageError, match="choose one of: auto, claude-code, codex-rollout"):
        detect.check_format("codex")
    assert [detect.agent_of(f) for f in detect.FORMATS] == [
        "claude-code",
        "codex",
        "codex",
        "inspect",
        "atif",  # the trajectory's own agent name replaces it when the file is read
    ]


def test_without_the_extra_an_inspect_log_names_the_install_command(tmp_path, monkeypatch):
    monkeypatch.setattr(logs, "inspect_available", lambda: False)
    path = tmp_path / "x.eval"
    path.write_bytes(b"PK\x03\x04")
    with pytest.raises(TranscriptError) as err:
        list(logs.read_inspect_log(path))
    assert (
        str(err.value)
        == f'{path}: reading Inspect AI logs needs the optional extra: pip install "evalkit[inspect]"'
    )


@pytest.mark.parametrize(
    ("name", "family"),
    [
        ("shell", "bash"),
        ("exec_command", "bash"),
        ("apply_patch", "edit"),
        ("mcp__codegraph__codegraph_explore", "codegraph"),
        ("mcp__sourcegraph__sg_read_file", "sourcegraph"),
        ("sourcegraph__sg_keyword_search", "sourcegraph"),  # Codex before October 2025
        ("web_search", "web"),
        ("update_plan", "plan"),
        ("spawn_agent", "agent"),
        ("Read", "read"),
        ("Grep", "search"),
        ("view_image", "read"),
        ("something_new", "other"),
    ],
)
def test_tool_family(name, family):
    assert tool_family(name) == family


def test_other_json_is_not_taken_for_an_inspect_log(tmp_path):
    other = tmp_path / "evidence.json"
    other.write_text('{"status": "ok", "eval": {"version": 2}}\n')
    assert detect.detect_format(other) == "claude-code"  # i.e. not another agent's log
    from evalkit.corpus.discover import discover

    (entry,) = discover(tmp_path).files
    assert entry.session is None and entry.reason.startswith("not a transcript")


@pytest.mark.skipif(not logs.inspect_available(), reason="the Inspect AI extra is not installed")
def test_is_inspect_file_is_detect_formats_answer_from_the_head_alone(tmp_path):
    # Discovery asks only "an Inspect log?" of its .json and .eval files (issue 26): the same
    # answer as detect_format on every kind of file, without the other readers' modules.
    import json
    import os

    from tests.agent_builders import two_sample_log

    files = [
        two_sample_log(tmp_path / "x.eval"),
        two_sample_log(tmp_path / "y.json"),
        write_rollout(tmp_path / "a.json", codex_session_lines()),
        write_events(tmp_path / "b.json", exec_stream_events(), banner="banner"),
        write_jsonl(tmp_path / "c.json", lines(ASST(10, "m1", [TEXT("hi")]), DONE)),
        tmp_path / "missing.json",
    ]
    (tmp_path / "d.json").write_text(json.dumps({"schema_version": "ATIF-v1.4", "steps": []}))
    (tmp_path / "e.eval").write_bytes(b"PK\x03\x04 not a zip")
    (tmp_path / "f.json").write_bytes(b"\xff\xfe{")
    os.mkfifo(tmp_path / "g.json")
    files += [tmp_path / n for n in ("d.json", "e.eval", "f.json", "g.json")]
    for path in files:
        assert detect.is_inspect_file(path) == (detect.detect_format(path) == "inspect"), path
    assert [detect.is_inspect_file(p) for p in files[:3]] == [True, True, False]
