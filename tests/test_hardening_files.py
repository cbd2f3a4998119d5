"""Issue 21, items 2, 3, 5 and 7a: one bad file never stops a corpus, detection skips what the
readers skip, and every reader skips and counts a bad line with its reason.

* item 2: a file `{"type":[]}` (a non-string `type`) or a Codex rollout with one line nested
  1,100 deep is that file's skip or crash reason; `sweep`, `export` and `load_corpus` load the
  rest (format detection ran without the readers' guards);
* item 3: `evalkit run` measures a valid Claude Code session whose top lines hold a list or
  dict `type`, or a deeply nested line, exactly as `--format claude-code` does;
* item 5: the Codex readers skip and count a line whose `type` is not text, with the reason,
  as the Claude Code reader keeps going past such a line;
* item 7a: a file whose only line is over the line limit names the limit.
"""

from __future__ import annotations

import contextlib
import io
import json

import pytest

import evalkit
from evalkit.cli import main
from evalkit.corpus.load import export_corpus
from evalkit.formats.codex.exec_json import read_exec_json
from evalkit.formats.codex.rollout import read_rollout
from evalkit.formats.detect import detect_format
from tests.agent_builders import (
    codex_session_lines,
    exec_stream_events,
    write_events,
    write_rollout,
)
from tests.sweep_helpers import cited

DEEP = 1100


def _run(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def _deep(depth: int) -> str:
    return "[" * depth + "]" * depth


def _hostile_corpus(root):
    """Two measurable sessions, a `{"type":[]}` file and a rollout with a 1,100-deep line."""
    cited(root, "cg22/ab-express/run-new-1.jsonl", 100, 50)
    cited(root, "cg22/ab-express/run-baseline-1.jsonl", 50, 100)
    (root / "list-type.jsonl").write_bytes(b'{"type":[]}')
    rollout = write_rollout(root / "rollout-deep.jsonl", codex_session_lines())
    lines = rollout.read_text().splitlines()
    lines.insert(1, '{"type":"response_item","payload":' + _deep(DEEP) + "}")
    rollout.write_text("\n".join(lines) + "\n")
    return root


# --- item 2: one file never stops the corpus ---------------------------------------------------


def test_detection_never_raises_on_a_non_string_type_or_deep_nesting(tmp_path):
    for i, text in enumerate(
        [
            '{"type":[]}',
            '{"type":{}}',
            '{"type":["response_item"],"payload":{}}',
            _deep(DEEP),
            '{"type":' + _deep(DEEP) + "}",
        ]
    ):
        path = tmp_path / f"f{i}.jsonl"
        path.write_text(text + "\n")
        assert detect_format(path) == "claude-code"


def test_a_deep_line_does_not_hide_the_rollout_lines_around_it(tmp_path):
    root = _hostile_corpus(tmp_path / "c")
    assert detect_format(root / "rollout-deep.jsonl") == "codex-rollout"


def test_the_sweep_skips_the_bad_files_and_measures_the_rest(tmp_path):
    root = _hostile_corpus(tmp_path / "c")
    code, out, err = _run(["sweep", str(root), "--json", "--no-cache", "-j", "1"])
    assert code == 0, err
    doc = json.loads(out)
    files = {f["file"]: f["status"] for f in doc["files"]}
    reasons = {s["log"]: s["reason"] for s in doc["skipped"]}
    assert files["list-type.jsonl"] == "skipped"
    assert reasons["list-type.jsonl"] == "not a Claude Code transcript"
    assert files["rollout-deep.jsonl"] == "no-explore"  # read as Codex, in the agent table
    assert files["cg22/ab-express/run-new-1.jsonl"] == "parsed"


def test_load_corpus_and_export_load_the_rest(tmp_path):
    root = _hostile_corpus(tmp_path / "c")
    loaded = evalkit.load_corpus(root, cache=False, jobs=1)
    logs = set(loaded.sessions_df()["log"])
    assert {"cg22/ab-express/run-new-1.jsonl", "rollout-deep.jsonl"} <= logs
    assert "list-type.jsonl" not in logs and not loaded.errors
    done = export_corpus(root, tmp_path / "out", "csv", jobs=1, cache=False)
    assert done.rows["sessions"] == len(logs)
    code, _, err = _run(["export", str(root), "--to", str(tmp_path / "out2"), "--no-cache"])
    assert code == 0, err


def test_an_unexpected_failure_in_one_file_is_that_files_crash(tmp_path, monkeypatch):
    from evalkit.corpus import records

    root = tmp_path / "c"
    cited(root, "run-new-1.jsonl", 100, 50)
    (root / "other.jsonl").write_text('{"kind":"log line"}\n')

    def boom(path):
        raise ZeroDivisionError("detector bug")

    monkeypatch.setattr(records, "detect_format", boom)
    loaded = evalkit.load_corpus(root, cache=False, jobs=1)
    assert list(loaded.sessions_df()["log"]) == ["run-new-1.jsonl"]
    (error,) = loaded.errors
    assert error.log == "other.jsonl" and "ZeroDivisionError" in error.error


# --- item 3: `evalkit run` measures what the reader measures -----------------------------------


@pytest.mark.parametrize(
    "line",
    ['{"type":[]}', '{"type":{"a":1}}', '{"type":["response_item"],"payload":{}}', _deep(DEEP)],
)
def test_run_measures_a_session_with_an_odd_line_at_the_top(tmp_path, line):
    path = cited(tmp_path, "run-new-1.jsonl", 100, 50)
    path.write_text(line + "\n" + path.read_text())
    forced = _run(["run", str(path), "--json", "--format", "claude-code"])
    auto = _run(["run", str(path), "--json"])
    assert forced[0] == 0, forced[2]
    assert auto[:2] == forced[:2]


# --- item 5: the Codex readers skip and count a bad line ---------------------------------------


@pytest.mark.parametrize(
    "bad",
    [
        '{"type":"response_item","payload":{"type":{}}}',
        '{"type":"response_item","payload":{"type":[]}}',
        '{"type":["event_msg"],"payload":{"type":"token_count"}}',
        '{"type":{},"payload":{}}',
    ],
)
def test_a_rollout_line_with_a_non_string_type_is_skipped_and_counted(tmp_path, bad):
    clean = read_rollout(write_rollout(tmp_path / "clean.jsonl", codex_session_lines()))
    path = write_rollout(tmp_path / "r.jsonl", codex_session_lines())
    lines = path.read_text().splitlines()
    lines.insert(3, bad)
    path.write_text("\n".join(lines) + "\n")
    s = read_rollout(path)
    assert s.tool_calls == clean.tool_calls and s.tokens == clean.tokens
    assert s.read.skipped == 1
    assert "type that is not text" in s.read.damage()


def test_a_rollout_with_a_deep_line_is_read_with_that_line_counted(tmp_path):
    path = _hostile_corpus(tmp_path / "c") / "rollout-deep.jsonl"
    s = read_rollout(path)
    assert s.read.malformed == 1 and len(s.tool_calls) == 4


@pytest.mark.parametrize("depth", [400, 900])
def test_a_rollout_with_deep_values_below_the_parse_limit_is_measured(tmp_path, depth):
    path = write_rollout(tmp_path / "r.jsonl", codex_session_lines())
    lines = path.read_text().splitlines()
    deep = _deep(depth)
    lines[5:5] = [
        '{"type":"response_item","payload":{"type":"function_call","call_id":"d1",'
        f'"name":"shell","arguments":{deep}}}}}',
        '{"type":"response_item","payload":{"type":"function_call_output","call_id":"d1",'
        f'"output":{deep}}}}}',
        '{"type":"response_item","payload":{"type":"function_call_output","call_id":"d2",'
        f'"output":{json.dumps("{" + chr(34) + "x" + chr(34) + ":" + _deep(DEEP) + "}")}}}}}',
    ]
    path.write_text("\n".join(lines) + "\n")
    s = read_rollout(path)
    assert len(s.tool_calls) == 5 and s.read.skipped == 0


def test_dumps_writes_what_json_dumps_writes_however_deep():
    import random

    from evalkit.formats.common import _dumps_walk, dumps

    rng = random.Random(5)

    def value(depth):
        if depth > 6 or rng.random() < 0.3:
            return rng.choice([None, True, False, 0, -3, 2.5, 1e300, "x", 'é"\\\n', ""])
        if rng.random() < 0.5:
            return [value(depth + 1) for _ in range(rng.randrange(4))]
        return {rng.choice("abcé"): value(depth + 1) for _ in range(rng.randrange(4))}

    for _ in range(300):
        v = value(0)
        for sort_keys in (False, True):
            want = json.dumps(v, ensure_ascii=False, sort_keys=sort_keys)
            assert _dumps_walk(v, sort_keys) == want
    deep: object = "x"
    for i in range(5000):
        deep = [deep] if i % 2 else {"k": deep}
    assert dumps(deep).count("[") == 2500


def test_an_exec_stream_line_with_a_non_string_type_is_skipped_and_counted(tmp_path):
    events = exec_stream_events()
    clean = read_exec_json(write_events(tmp_path / "clean.jsonl", events))
    bad = [*events[:2], {"type": []}, {"type": {"a": 1}}, *events[2:]]
    s = read_exec_json(write_events(tmp_path / "e.jsonl", bad))
    assert s.tool_calls == clean.tool_calls
    assert s.read.skipped == 2 and "type that is not text" in s.read.damage()


def test_run_of_a_rollout_with_a_bad_line_prints_its_damage(tmp_path):
    path = write_rollout(tmp_path / "r.jsonl", codex_session_lines())
    lines = path.read_text().splitlines()
    lines.insert(3, '{"type":"response_item","payload":{"type":{}}}')
    path.write_text("\n".join(lines) + "\n")
    code, out, err = _run(["run", str(path)])
    assert code == 0 and "type that is not text" in err


# --- item 7a: a line over the line limit is named --------------------------------------------


def test_a_file_whose_only_line_is_over_the_limit_names_the_limit(tmp_path, monkeypatch):
    monkeypatch.setenv("EVALKIT_MAX_LINE_MB", "0.001")  # 1,000 bytes
    root = tmp_path / "c"
    cited(root, "run-new-1.jsonl", 10, 5)
    long = root / "run-new-2.jsonl"
    long.write_text(json.dumps({"type": "user", "message": {"content": "x" * 5000}}) + "\n")
    code, out, err = _run(["sweep", str(root), "--json", "--no-cache", "-j", "1"])
    assert code == 0, err
    reason = {s["log"]: s["reason"] for s in json.loads(out)["skipped"]}["run-new-2.jsonl"]
    assert "over the length limit" in reason and "EVALKIT_MAX_LINE_MB" in reason
    code, _, err = _run(["run", str(long)])
    assert code == 2 and "over the length limit" in err and "EVALKIT_MAX_LINE_MB" in err


def test_the_sweep_reads_another_agents_file_with_a_null_line_as_run_does(tmp_path):
    # The Claude Code reader stops on a `null` line before it sees that the file is not its
    # own; `evalkit run` detects the format first. Both read it with the exec reader now.
    root = tmp_path / "c"
    root.mkdir()
    events = exec_stream_events()
    path = write_events(root / "exec.jsonl", events)
    path.write_text(path.read_text() + "null\n")
    assert _run(["run", str(path), "--json"])[0] == 0
    code, out, err = _run(["sweep", str(root), "--json", "--no-cache", "-j", "1"])
    assert code == 0, err
    assert {f["file"]: f["status"] for f in json.loads(out)["files"]} == {
        "exec.jsonl": "no-explore"
    }
