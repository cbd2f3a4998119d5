"""Interactive sessions (spec §1.10, §7.4): the newest log of a project, subagents merged with
their `.meta.json` parent ids, interactive-only records tolerated, and `evalkit session`."""

from __future__ import annotations

import json
import os

import pytest

from evalkit.cli import main
from evalkit.formats.claude_code.interactive import (
    NoSessionLogs,
    newest_session_log,
    project_log_dir,
)
from evalkit.outputs.report import format_interactive
from evalkit.session import read_interactive_session
from tests.builders import E, xres_text

# --- an interactive projects directory, built from records of every interactive kind ----------


def iasst(msg_id, block, usage, **extra):
    """An interactive assistant record: one block, usage, uuid fields and a sidechain flag."""
    return {
        "parentUuid": None,
        "isSidechain": False,
        "type": "assistant",
        "uuid": f"u-{msg_id}",
        "message": {
            "id": msg_id,
            "type": "message",
            "role": "assistant",
            "content": [block],
            "usage": usage,
        },
        **extra,
    }


def iresult(tool_use_id, text, **extra):
    return {
        "parentUuid": None,
        "isSidechain": False,
        "type": "user",
        "message": {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": tool_use_id,
                    "content": [{"type": "text", "text": text}],
                }
            ],
        },
        "toolUseResult": {"stdout": text[:10]},
        **extra,
    }


def use(id, name, input=None):
    return {"type": "tool_use", "id": id, "name": name, "input": input or {}}


ANSWER = "It is decided in `lib/response.js` by `res.send`."
INTERACTIVE_ONLY = [
    {"type": "summary", "summary": "Explaining res.send", "leafUuid": "u-9"},
    {
        "type": "file-history-snapshot",
        "messageId": "u-0",
        "snapshot": {"messageId": "u-0", "trackedFileBackups": {}, "timestamp": "2026-11-29"},
        "isSnapshotUpdate": False,
    },
    {
        "type": "queue-operation",
        "operation": "enqueue",
        "timestamp": "2026-11-29T00:00:00Z",
        "content": "and the ETag?",
        "sessionId": "b-new",
    },
    {
        "type": "queue-operation",
        "operation": "remove",
        "timestamp": "2026-11-29T00:00:01Z",
        "sessionId": "b-new",
    },
    {
        "type": "system",
        "subtype": "informational",
        "content": "Conversation resumed",
        "level": "info",
        "isMeta": False,
    },
    {
        "type": "system",
        "subtype": "local_command",
        "content": "<command-name>/cost</command-name>",
        "level": "info",
    },
    {
        "type": "user",
        "isSidechain": False,
        "isMeta": True,
        "message": {"role": "user", "content": "<command-message>init</command-message>"},
    },
]
MAIN = [
    *INTERACTIVE_ONLY[:3],
    {
        "type": "user",
        "isSidechain": False,
        "message": {"role": "user", "content": "How does res.send pick the Content-Type?"},
    },
    *INTERACTIVE_ONLY[3:],
    iasst(
        "m1",
        use("e1", E, {"query": "res.send"}),
        {
            "input_tokens": 100,
            "cache_creation_input_tokens": 1000,
            "cache_read_input_tokens": 5000,
            "output_tokens": 50,
        },
    ),
    iresult("e1", xres_text(["lib/response.js", "lib/utils.js"])),
    iasst(
        "m2",
        use("a1", "Agent", {"subagent_type": "Explore", "description": "dig"}),
        {"input_tokens": 10, "cache_read_input_tokens": 6000, "output_tokens": 20},
    ),
    iresult("a1", "found it"),
    # One record per block: both carry the message's usage (TOKENS counts both, quirk 18).
    iasst(
        "m3",
        {"type": "thinking", "thinking": "so"},
        {"input_tokens": 5, "cache_read_input_tokens": 7000, "output_tokens": 300},
    ),
    iasst(
        "m3",
        {"type": "text", "text": ANSWER},
        {"input_tokens": 5, "cache_read_input_tokens": 7000, "output_tokens": 300},
    ),
]
SUB_A1 = [
    {"type": "user", "isSidechain": True, "message": {"role": "user", "content": "dig"}},
    iasst(
        "s1",
        use("sr1", "Read", {"file_path": "/repo/lib/response.js"}),
        {"input_tokens": 3, "output_tokens": 7},
        isSidechain=True,
    ),
    iresult("sr1", "x" * 40, isSidechain=True),
    iasst(
        "s2",
        use("sg1", "Grep", {"pattern": "send"}),
        {"input_tokens": 4, "output_tokens": 8},
        isSidechain=True,
    ),
    iasst(
        "s3",
        {"type": "text", "text": "report: lib/response.js"},
        {"input_tokens": 1, "output_tokens": 9},
        isSidechain=True,
    ),
]
SUB_B = [
    iasst(
        "b1",
        use("e2", E, {"query": "sub q"}),
        {"input_tokens": 2, "output_tokens": 1},
        parent_tool_use_id="stale-id",
    ),
    iresult("e2", xres_text(["lib/view.js"])),
    iasst(
        "b2",
        use("bb", "Bash", {"command": "cat lib/view.js"}),
        {"input_tokens": 2, "output_tokens": 1},
    ),
]
FALSY_LINES = ["null", "false", "0", '""', "{broken"]


def write_records(path, records, extra_lines=()):
    text = "\n".join([*(json.dumps(r, ensure_ascii=False) for r in records), *extra_lines])
    path.write_text(text + "\n", encoding="utf-8")
    return path


def build_projects(tmp_path):
    """projects/<escaped>/{a-old,b-new}.jsonl, b-new/subagents/agent-{a1,b}.jsonl (+ a1's meta)."""
    project = tmp_path / "work" / "proj"
    project.mkdir(parents=True)
    projects = tmp_path / "projects"
    log_dir = projects / str(project.resolve()).replace("/", "-")
    subs = log_dir / "b-new" / "subagents"
    subs.mkdir(parents=True)
    old = write_records(log_dir / "a-old.jsonl", [iasst("o1", use("w", "Write"), {})])
    new = write_records(log_dir / "b-new.jsonl", MAIN, FALSY_LINES)
    (log_dir / "notes.txt").write_text("not a session\n")
    write_records(subs / "agent-a1.jsonl", SUB_A1, ["null"])
    (subs / "agent-a1.meta.json").write_text(
        json.dumps({"agentType": "Explore", "toolUseId": "a1"})
    )
    write_records(subs / "agent-b.jsonl", SUB_B)
    os.utime(old, ns=(2_000_000_000 * 10**9, 2_000_000_000 * 10**9))
    os.utime(new, ns=(1_000_000_000 * 10**9 + 1, 2_000_000_001 * 10**9))
    os.utime(log_dir / "notes.txt", ns=(3_000_000_000 * 10**9, 3_000_000_000 * 10**9))
    return project, projects, log_dir


EXPECTED_HEAD = """\
session: b-new

MAIN thread tools:
      1  mcp__codegraph__codegraph_explore
      1  Agent

SUBAGENT tools (2 subagent transcripts):
      1  Read
      1  Grep
      1  mcp__codegraph__codegraph_explore
      1  Bash

VERDICT: codegraph_explore used 1x | Read 1 | Grep/Bash 2
TOKENS: gen 0.7k | fresh-in 1.1k | cached-in 25.0k | billable≈ 1.8k

Explore sufficiency — what the agent did NEXT (2 answered calls):
    0   0%  explore again                  insufficient: did not answer
    2 100%  Read a file we returned        allocation: right file, wrong bytes
    0   0%  Read a file we did not return  recall: file never surfaced
    0   0%  Grep/Glob                      recall (weak): still hunting for the file
    0   0%  moved on / answered            sufficient
  1. "res.send" [2 files] → Agent → Read response.js
  2. [subagent] "sub q" [1 file] → Bash Read view.js

Explore allocation — share of returned bytes the answer used (2 calls, 3 files):
"""


def test_evalkit_session_prints_the_newest_session_with_subagents_merged(tmp_path, capsys):
    project, projects, _ = build_projects(tmp_path)
    status = main(["session", str(project), "--projects-dir", str(projects)])
    out, err = capsys.readouterr()
    assert (status, err) == (0, "")
    assert out.startswith(EXPECTED_HEAD)
    # Sections of 51 (50 + the joining "\n") + 47 chars (call 1) and 46 (call 2); only
    # lib/response.js is cited: 51 / 144.
    assert out[len(EXPECTED_HEAD) :].splitlines()[:3] == [
        "  efficiency  35.4%  51 of 144 chars   (1/3 files cited; path-cited alone 35.4%)",
        "  call 1:  52.0%  51/98 chars  1/2 files",
        "  call 2:   0.0%  0/46 chars  0/1 files",
    ]


def test_interactive_records_of_every_kind_are_tolerated(tmp_path):
    _, projects, log_dir = build_projects(tmp_path)
    s = read_interactive_session(log_dir=str(log_dir))
    # Falsy and broken lines dropped; summaries, snapshots, queue operations, system info and
    # meta prompts kept as events but ignored by every metric.
    assert len(s.events) == len(MAIN) + len(SUB_A1) + len(SUB_B)
    assert s.answer.text == ANSWER and s.answer.source == "assistant_fallback"
    assert s.allocation.files_used == 1


def test_subagent_events_are_stamped_with_the_meta_parent_id(tmp_path):
    _, _, log_dir = build_projects(tmp_path)
    s = read_interactive_session(log_dir=str(log_dir))
    assert [os.path.basename(x.path) for x in s.subagents] == ["agent-a1.jsonl", "agent-b.jsonl"]
    assert [x.parent_id for x in s.subagents] == ["a1", "subagent:agent-b.jsonl"]
    # Every event of the file gets the parent id, replacing what it had ("stale-id").
    assert {e["parent_tool_use_id"] for e in s.subagents[1].events} == {"subagent:agent-b.jsonl"}
    # Main-file events first, then each subagent file's, file by file.
    assert s.events[len(MAIN)]["message"]["content"] == "dig"


@pytest.mark.parametrize(
    ("meta", "parent"),
    [
        (None, "subagent:agent-x.jsonl"),
        ("{not json", "subagent:agent-x.jsonl"),
        ("\ufeff" + json.dumps({"toolUseId": "t"}), "subagent:agent-x.jsonl"),  # BOM: invalid
        (json.dumps({"toolUseId": None}), "subagent:agent-x.jsonl"),
        (json.dumps(5), "subagent:agent-x.jsonl"),
        (json.dumps({"toolUseId": "toolu_9"}), "toolu_9"),
        (json.dumps({"toolUseId": ""}), ""),
    ],
)
def test_meta_parent_id_rules(tmp_path, meta, parent):
    log_dir = tmp_path / "log"
    subs = log_dir / "s" / "subagents"
    subs.mkdir(parents=True)
    write_records(log_dir / "s.jsonl", [])
    write_records(
        subs / "agent-x.jsonl", [iasst("x1", use("r", "Read"), {}, parent_tool_use_id="own")]
    )
    if meta is not None:
        (subs / "agent-x.meta.json").write_text(meta, encoding="utf-8")
    s = read_interactive_session(log_dir=str(log_dir))
    assert s.subagents[0].parent_id == parent
    # An empty-string toolUseId leaves the events untouched.
    assert s.events[0]["parent_tool_use_id"] == (parent or "own")


def test_newest_by_mtime_ties_keep_byte_order(tmp_path):
    for name in ("b.jsonl", "a.jsonl", "é.jsonl", "z.jsonl"):
        (tmp_path / name).write_text("")
        os.utime(tmp_path / name, ns=(10**18, 10**18))
    assert os.path.basename(newest_session_log(str(tmp_path))) == "a.jsonl"
    os.utime(tmp_path / "é.jsonl", ns=(10**18, 10**18 + 1))
    assert os.path.basename(newest_session_log(str(tmp_path))) == "é.jsonl"


def test_session_id_drops_the_first_jsonl_only(tmp_path):
    write_records(tmp_path / "a.jsonl.b.jsonl", [])
    assert read_interactive_session(log_dir=str(tmp_path)).session_id == "a.b.jsonl"


def test_project_log_dir_escapes_every_slash_of_the_real_path(tmp_path):
    real = tmp_path / "my.proj"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    want = "/p/" + str(real.resolve()).replace("/", "-")
    assert project_log_dir(link, "/p") == want


def test_empty_session_prints_none_and_no_answered_calls(tmp_path):
    write_records(tmp_path / "s.jsonl", INTERACTIVE_ONLY)
    text = format_interactive(read_interactive_session(log_dir=str(tmp_path)))
    assert text == "\n".join(
        [
            "session: s",
            "",
            "MAIN thread tools:",
            "    (none)",
            "",
            "SUBAGENT tools (0 subagent transcripts):",
            "    (none)",
            "",
            "VERDICT: codegraph_explore used 0x | Read 0 | Grep/Bash 0",
            "TOKENS: gen 0.0k | fresh-in 0.0k | cached-in 0.0k | billable≈ 0.0k",
            "",
            "Explore sufficiency: no answered codegraph_explore calls",
            "",
            "Explore allocation: no codegraph_explore responses with source sections",
        ]
    )


def test_verdict_uses_the_main_count_when_subagents_did_not_explore(tmp_path):
    _, _, log_dir = build_projects(tmp_path)
    (log_dir / "b-new" / "subagents" / "agent-b.jsonl").unlink()
    s = read_interactive_session(log_dir=str(log_dir))
    assert (s.explore_calls, s.reads, s.grep_bash) == (1, 1, 1)


# --- evalkit session: errors and defaults --------------------------------------------------------


def test_no_log_dir_exits_1(tmp_path, capsys):
    project = tmp_path / "proj"
    project.mkdir()
    assert main(["session", str(project), "--projects-dir", str(tmp_path / "none")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("evalkit session: no session logs at ") and err.count("\n") == 1


def test_no_jsonl_session_exits_1(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    assert main(["session", "--log-dir", str(tmp_path / "empty")]) == 1
    assert "no .jsonl sessions in " in capsys.readouterr().err


def test_a_log_dir_that_is_a_file_exits_2_in_one_line(tmp_path, capsys):
    write_records(tmp_path / "s.jsonl", [{"type": "system"}])
    assert main(["session", "--log-dir", str(tmp_path / "s.jsonl")]) == 2
    err = capsys.readouterr().err
    assert "s.jsonl is not a directory" in err and err.count("\n") == 1


def test_missing_project_dir_exits_2(tmp_path, capsys):
    assert main(["session", str(tmp_path / "nope")]) == 2
    assert "no such project directory" in capsys.readouterr().err


def test_crash_input_exits_2_naming_the_file(tmp_path, capsys):
    write_records(tmp_path / "s.jsonl", [{"type": "assistant", "message": {"content": [None]}}])
    assert main(["session", "--log-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "s.jsonl" in err and "null block" in err and err.count("\n") == 1


def test_defaults_are_the_current_directory_and_home_projects(tmp_path, capsys, monkeypatch):
    project, projects, log_dir = build_projects(tmp_path)
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    os.rename(projects, home / ".claude" / "projects")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(project)
    assert main(["session"]) == 0
    assert capsys.readouterr().out.startswith("session: b-new\n")


def test_no_session_logs_is_an_evalkit_error():
    with pytest.raises(NoSessionLogs):
        newest_session_log("/nonexistent/dir/for/evalkit")


def test_read_session_file_reads_a_given_log_with_its_subagents(tmp_path):
    from evalkit.session import read_session_file

    _, _, log_dir = build_projects(tmp_path)
    old = read_session_file(str(log_dir / "a-old.jsonl"))
    assert (old.session_id, old.main_counts, old.subagents) == ("a-old", {"Write": 1}, ())
    new = read_session_file(str(log_dir / "b-new.jsonl"))
    assert len(new.subagents) == 2 and len(new.explore_texts) == 2
