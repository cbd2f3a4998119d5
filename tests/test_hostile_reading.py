"""Reading hostile files and names (issue 11, items 11, 13, 14, 15, and the named deviations)."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys

import pytest

from evalkit.cli import main
from evalkit.ecma import js_json
from evalkit.formats.claude_code.transcripts import ReadLimits, read_segment
from evalkit.session import parse_session, read_session_file
from evalkit.tables.sweep import run_sweep
from tests.builders import ASST, RESULT, TEXT, USE, E, lines, write_jsonl
from tests.sweep_helpers import cited, put

MB = 1024 * 1024


def _session(answer="done"):
    return lines(ASST(10, "m1", [TEXT(answer)]), RESULT(answer))


# --- item 11: bounded reading -------------------------------------------------------------------


def test_a_gzip_bomb_is_skipped_with_its_reason(tmp_path, capsys, monkeypatch):
    bomb = tmp_path / "bomb.jsonl.gz"
    with gzip.open(bomb, "wb") as fh:
        fh.write(json.dumps(_session()[0]).encode() + b"\n" + b" " * (3 * MB))
    assert bomb.stat().st_size < 64 * 1024
    monkeypatch.setenv("EVALKIT_MAX_DECOMPRESSED_MB", "1")
    assert main(["run", str(bomb)]) == 2
    err = capsys.readouterr().err
    assert err == f"evalkit run: {bomb}: decompressed size over limit\n"
    # In a sweep the rest still loads; the bomb is a crashed session with that reason.
    cited(tmp_path, "run-new-1.jsonl", 100, 50)
    result = run_sweep(tmp_path, cache=False, jobs=1)
    crashed = [r for r in result.records if r.status == "crash"]
    assert [r.reason for r in crashed] == ["bomb.jsonl.gz: decompressed size over limit"]
    assert result.counts.sessions == 1


def test_a_line_over_the_length_limit_is_skipped_and_counted(tmp_path):
    path = tmp_path / "long.jsonl"
    events = _session()
    text = "\n".join(json.dumps(e) for e in events)
    text += "\n" + json.dumps({"type": "user", "message": {"content": "x" * (2 * MB)}}) + "\n"
    path.write_text(text, encoding="utf-8")
    kept, account = read_segment(str(path), limits=ReadLimits(line_bytes=MB))
    assert len(kept) == 2 and account.too_long == 1 and account.skipped == 1
    assert account.damage() == "1 line over the length limit skipped"


def test_a_session_over_the_memory_budget_is_skipped_with_a_reason(tmp_path, capsys, monkeypatch):
    path = write_jsonl(tmp_path / "big.jsonl", _session("y" * (2 * MB)))
    monkeypatch.setenv("EVALKIT_MAX_SESSION_MB", "1")
    assert main(["run", str(path)]) == 2
    assert "session over the memory budget" in capsys.readouterr().err


def test_deeply_nested_tool_input_and_results_are_measured(tmp_path):
    deep: object = {"a": 1}
    for _ in range(900):
        deep = [deep]
    events = lines(
        ASST(10, "m1", [USE("x1", E, {"query": deep})]),
        [
            {
                "type": "user",
                "message": {
                    "content": [{"type": "tool_result", "tool_use_id": "x1", "content": [deep]}]
                },
            }
        ],
        ASST(20, "m2", [USE("b1", "Bash", {"command": deep})]),
        RESULT("done"),
    )
    path = tmp_path / "deep.jsonl"
    # json.dumps itself recurses; write the line with evalkit's iterative serialiser.
    path.write_text("\n".join(js_json(e) for e in events) + "\n", encoding="utf-8")
    session = parse_session(path)
    assert session.transcript.segments[0].malformed == 0  # parsed, not skipped
    assert session.sufficiency.errors == 0 and len(session.sufficiency.calls) == 1


# --- item 13: file names ------------------------------------------------------------------------


def _strict_run(args, **kw):
    env = {**os.environ, "PYTHONIOENCODING": "utf-8:strict"}
    return subprocess.run(
        [sys.executable, "-m", "evalkit", *args], capture_output=True, env=env, **kw
    )


def test_names_not_utf8_or_with_line_breaks_are_escaped_and_json_stays_valid(tmp_path):
    root = tmp_path / "corpus"
    cited(root, "run-new-1.jsonl", 100, 50)
    bad = cited(root, "run-new-2.jsonl", 100, 50)
    os.rename(bad, os.fsencode(root) + b"/run-new-\xff2.jsonl")
    broken = cited(root, "run-new-3.jsonl", 100, 50)
    os.rename(broken, root / "run-new-\n\x1b[31m3.jsonl")
    done = _strict_run(["sweep", str(root), "--no-cache", "--json"])
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    logs = {r["log"] for r in doc["session_rows"]}
    assert logs == {"run-new-1.jsonl", "run-new-\n\x1b[31m3.jsonl", "run-new-\udcff2.jsonl"}
    assert b"\\udcff" in done.stdout
    text = _strict_run(["sweep", str(root), "--no-cache", "--list-files"])
    assert text.returncode == 0, text.stderr
    out = text.stdout.decode("utf-8")
    assert "run-new-\\udcff2.jsonl" in out and "run-new-\\n\\x1b[31m3.jsonl" in out
    assert "\x1b" not in out
    run = _strict_run(["run", os.fsencode(root) + b"/run-new-\xff2.jsonl", "--json"])
    assert run.returncode == 0 and json.loads(run.stdout)


# --- item 14: the sweep's --json accounting -----------------------------------------------------


def test_sweep_json_carries_the_damage_account_and_every_file(tmp_path):
    root = tmp_path / "corpus"
    cited(root, "run-new-1.jsonl", 100, 50)
    # One intact event keeps the file a transcript (a file of nothing but damage is not one).
    put(root, "run-new-2.jsonl", text='{"type":"system"}\n{"type":"result"\n[1]\n')
    (root / "run-new-3.jsonl").write_bytes(b'{"type":"user","message":{"content":"\xff"}}\n')
    done = _strict_run(["sweep", str(root), "--no-cache", "--json"])
    doc = json.loads(done.stdout)
    damage = {d["file"]: d for d in doc["damage"]}
    assert (damage["run-new-2.jsonl"]["malformed"], damage["run-new-2.jsonl"]["non_object"]) == (
        1,
        1,
    )
    assert damage["run-new-2.jsonl"]["skipped"] == 2
    assert damage["run-new-3.jsonl"]["invalid_utf8"] == 1
    assert [f["file"] for f in doc["files"]] == [
        "run-new-1.jsonl",
        "run-new-2.jsonl",
        "run-new-3.jsonl",
    ]


def test_an_unreadable_subagent_file_is_reported_not_dropped(tmp_path, capsys):
    log_dir = tmp_path / "proj"
    main_log = put(log_dir, "s1.jsonl", _session())
    subagents = log_dir / "s1" / "subagents"
    put(subagents, "agent-a.jsonl", _session("sub"))
    os.mkfifo(subagents / "agent-b.jsonl")  # not a regular file: cannot be read
    session = read_session_file(str(main_log))
    reads = {os.path.basename(r.path): r for r in session.segment_reads}
    assert reads["agent-b.jsonl"].unreadable == "not a regular file"
    assert "could not be read" in reads["agent-b.jsonl"].damage()
    assert main(["session", "--log-dir", str(log_dir)]) == 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "agent-b.jsonl" in err and "could not be read" in err


# --- item 15: an unreadable log directory -------------------------------------------------------


def test_session_on_an_unreadable_log_directory_is_one_line(tmp_path, capsys, monkeypatch):
    log_dir = tmp_path / "logs"
    put(log_dir, "s1.jsonl", _session())
    real_listdir = os.listdir

    def denied(path):
        if os.fspath(path) == str(log_dir):
            raise PermissionError(13, "Permission denied")
        return real_listdir(path)

    monkeypatch.setattr(os, "listdir", denied)  # root can read any directory: simulate it
    assert main(["session", "--log-dir", str(log_dir)]) == 2
    err = capsys.readouterr().err
    assert err == f"evalkit session: {log_dir}: cannot read the directory (Permission denied)\n"


# --- the documented deviations are named in `evalkit run --help` -------------------------------


def test_run_help_names_each_deliberate_deviation(capsys):
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "text rather than a number stops with an error" in text
    assert "nested about 1,000 levels deep or more is skipped" in text
    assert 'the number 1 and the text "1" are two different ids' in text
    assert "EVALKIT_MAX_DECOMPRESSED_MB" in text and "EVALKIT_MAX_SESSION_MB" in text
