"""Per-session summary fields and the run-report header (spec §1.11, §1.12): reference check 18,
display strings, both `processed` definitions, race and CLI contamination, crash cases 5 and 6."""

from __future__ import annotations

import pytest

from evalkit.errors import TranscriptError
from evalkit.formats.claude_code.transcripts import read_transcript
from evalkit.metrics.summary import (
    PROCESSED_MESSAGE_USAGE,
    format_run_header,
    is_cli_call,
    summarize,
    tool_call_display,
)
from tests.builders import ASST, DONE, RES, RESULT, SUB, TEXT, USE, E, lines, write_jsonl
from tests.refcheck import check
from tests.test_occupancy import F5_SEGMENT_1, F5_SEGMENT_2


def test_18_stitched_cost_sums_segments(tmp_path):
    t = read_transcript(
        [
            write_jsonl(tmp_path / "run.jsonl", F5_SEGMENT_1),
            write_jsonl(tmp_path / "run.t2.jsonl", F5_SEGMENT_2),
        ]
    )
    s = summarize(t.events)
    check(s.cost * 100, 20, 0.1)
    assert s.cost == 0.1 + 0.1 and s.dur == 2 and s.turns == 3 and s.ok


# --- display strings (§1.11) -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("block", "want"),
    [
        (
            USE("t", "Task", {"subagent_type": "Explore", "description": "d" * 45}),
            "Task [subagent_type=Explore] " + "d" * 40,
        ),
        (USE("t", "Task", {}), "Task [subagent_type=?] "),
        (USE("t", "Task", {"description": ["a", "b"]}), "Task [subagent_type=?] a,b"),
        (USE("e", E, {"query": "q" * 70}), E + ' "' + "q" * 59),  # closing quote cut (quirk 19)
        (USE("e", E, {"task": "find it"}), E + ' "find it"'),
        (USE("e", E, {"query": None, "symbol": "Foo"}), E + ' "Foo"'),
        (USE("e", "mcp__codegraph__codegraph_node", {}), 'mcp__codegraph__codegraph_node ""'),
        (USE("e", E, {"query": 12}), E + " 12"),
        (USE("b", "Bash", {"command": "x" * 60}), "Bash " + "x" * 50),
        (USE("b", "Bash", {}), "Bash "),
        (USE("r", "Read", {"file_path": "/t/lib/response.js"}), "Read response.js"),
        (USE("r", "Read", {"file_path": None}), "Read "),
        (USE("g", "Grep", {"pattern": "x"}), "Grep"),
        ({"type": "tool_use", "id": "n"}, "undefined"),
    ],
)
def test_tool_call_display(block, want):
    assert tool_call_display(block) == want


@pytest.mark.parametrize(
    "block",
    [
        USE("t", "Task", {"description": 5}),
        USE("t", "Task", {"description": False}),
        USE("t", "Task", {"description": {"a": 1}}),
        USE("b", "Bash", {"command": 3}),
        USE("b", "Bash", {"command": True}),
        USE("r", "Read", {"file_path": 7}),
        USE("r", "Read", {"file_path": ["a", "b"]}),
    ],
)
def test_display_crash_cases_raise(block):
    # §9.1 case 6: the reference crashes on these; evalkit names the file.
    with pytest.raises(TranscriptError, match="run.jsonl"):
        summarize(lines(ASST(1, "m", [block])), path="run.jsonl")


def test_init_tools_not_an_array_raises():
    # §9.1 case 5.
    with pytest.raises(TranscriptError, match="not an array"):
        summarize([{"type": "system", "subtype": "init", "tools": "codegraph"}])


def test_string_cost_raises_rather_than_inventing_a_number():
    # §9.1 case 8 (the Result: line cannot format a string cost).
    with pytest.raises(TranscriptError, match="total_cost_usd"):
        summarize(RESULT("a", total_cost_usd="0.1"))


# --- counts and totals -------------------------------------------------------------------------


SESSION = lines(
    {"type": "system", "subtype": "init", "tools": ["Task", "Bash", E, "mcp__codegraph__x"]},
    ASST(100, "m1", [TEXT("let me look"), USE("ts", "ToolSearch", {"query": "select"})]),
    RES("ts", 10),
    ASST(200, "m2", [USE("e1", E, {"query": "where"}), USE("r1", "Read", {"file_path": "a/b.js"})]),
    RES("e1", 50),
    RES("r1", 50),
    SUB("a1", ASST(50, "s1", [USE("g1", "Grep"), USE("g2", "Glob"), USE("b1", "Bash")])),
    ASST(300, "m3", [TEXT("done")]),
    RESULT(
        "answer one", usage={"input_tokens": 10, "output_tokens": 5, "cache_read_input_tokens": 100}
    ),
    RESULT(
        "answer two",
        subtype="error_max_turns",
        duration_ms=2500,
        usage={"cache_creation_input_tokens": 7},
    ),
)


def test_counts_in_first_seen_order_and_derived_fields():
    s = summarize(SESSION)
    assert s.counts == {"ToolSearch": 1, E: 1, "Read": 1, "Grep": 1, "Glob": 1, "Bash": 1}
    assert len(s.tool_calls) == 6 and s.tools == 5  # ToolSearch is not a tool call
    assert (s.reads, s.grep, s.bash, s.cg) == (1, 2, 1, 1)
    assert s.turns == 4  # m1, m2, s1, m3: subagent messages are requests too
    assert s.init_tools == (E, "mcp__codegraph__x")


def test_ok_needs_every_result_to_succeed():
    assert not summarize(SESSION).ok
    assert summarize(DONE).ok
    assert not summarize(lines(ASST(1, "m", [TEXT("x")]))).ok  # no result event (§9.1)


def test_dur_cost_and_processed_reference_definition():
    s = summarize(SESSION)
    assert s.dur == 3.5 and s.cost == 0.2
    assert s.processed == s.processed_result_usage == 10 + 5 + 100 + 7
    assert s.processed_definition == "result-usage"


def test_processed_later_revision_counts_each_message_once():
    # ASST usage is input_tokens = ctx and output_tokens = 2, repeated on every block event.
    s = summarize(SESSION, processed=PROCESSED_MESSAGE_USAGE)
    assert s.processed == s.processed_message_usage == (100 + 2) + (200 + 2) + (50 + 2) + (300 + 2)
    assert s.processed_result_usage == 122


def test_no_result_event_gives_zero_totals():
    s = summarize(lines(ASST(1, "m", [TEXT("x")])))
    assert (s.dur, s.cost, s.processed, s.subtypes) == (0, 0, 0, ())


def test_unknown_processed_definition_is_refused():
    with pytest.raises(ValueError):
        summarize([], processed="tokens")


# --- race and CLI contamination ----------------------------------------------------------------


def test_raced_when_any_tool_result_says_no_such_tool():
    events = lines(
        ASST(1, "m", [USE("e", E)]),
        {
            "type": "user",
            "message": {
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "e",
                        "is_error": True,
                        "content": "<tool_use_error>Error: No such tool available: x",
                    }
                ]
            },
        },
    )
    assert summarize(events).raced
    assert not summarize(SESSION).raced


@pytest.mark.parametrize(
    "cmd",
    [
        "codegraph explore foo",
        "./node_modules/.bin/codegraph status",
        "cd repo && codegraph",
        "FOO=1 BAR=x codegraph sync",
        "echo $(codegraph q)",
        "(codegraph x)",
        "true; ~/bin/codegraph x",
        "a || codegraph\tx",
    ],
)
def test_cli_call_matches(cmd):
    assert is_cli_call(cmd)


@pytest.mark.parametrize(
    "cmd",
    [
        "grep codegraph src/",
        "ls .codegraph",
        "which codegraph",
        "codegraph-cli x",
        "cat codegraph.md",
        "npm i @colbymchenry/codegraph",
        "npx codegraph query x",
    ],  # not in a command position: the pattern does not see it
)
def test_cli_call_does_not_match(cmd):
    assert not is_cli_call(cmd)


def _bash_result(id, error):
    block = {"type": "tool_result", "tool_use_id": id, "content": "out"}
    if error:
        block["is_error"] = True
    return {"type": "user", "message": {"content": [block]}}


def test_cli_calls_and_contamination():
    events = lines(
        ASST(
            1,
            "m",
            [
                USE("b1", "Bash", {"command": "codegraph explore x"}),
                USE("b2", "Bash", {"command": "codegraph query y"}),
                USE("b3", "Bash", {"command": "grep codegraph ."}),
            ],
        ),
        _bash_result("b1", error=False),
        _bash_result("b2", error=True),
        _bash_result("b3", error=False),
    )
    s = summarize(events)
    assert (s.cli_calls, s.cli_contaminated) == (2, 1)


# --- the report header (§1.12) -----------------------------------------------------------------


def test_header_full():
    s = summarize(SESSION)
    assert format_run_header(s, ["out/run-1.jsonl", "out/run-1.t2.jsonl"]) == "\n".join(
        [
            "",
            "=== run-1.jsonl + run-1.t2.jsonl ===",
            "codegraph tools exposed: 2",
            "",
            "Tool calls (6):",
            '  by type: {"ToolSearch":1,"mcp__codegraph__codegraph_explore":1,"Read":1,"Grep":1,'
            '"Glob":1,"Bash":1}',
            "  1. ToolSearch",
            '  2. mcp__codegraph__codegraph_explore "where"',
            "  3. Read b.js",
            "  4. Grep",
            "  5. Glob",
            "  6. Bash ",
            "",
            "Result: error_max_turns | duration 4s | turns 4 | 2 segments (success,error_max_turns)",
            "  tokens processed: 122 | cost $0.200",
        ]
    )


def test_header_brief_no_init_no_result_race_and_contamination():
    events = lines(
        ASST(
            1,
            "m",
            [
                USE("b1", "Bash", {"command": "codegraph explore x"}),
                USE("b2", "Bash", {"command": "codegraph explore y"}),
            ],
        ),
        _bash_result("b1", error=False),
        _bash_result("b2", error=False),
        {
            "type": "user",
            "message": {
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "zz",
                        "content": "No such tool available",
                    }
                ]
            },
        },
    )
    assert format_run_header(summarize(events), ["a/b/run.jsonl"], brief=True) == "\n".join(
        [
            "",
            "=== run.jsonl ===",
            'codegraph tools exposed: ?  [MCP COLD-START RACE — tool call hit "No such tool available"]',
            "!! 2 codegraph CLI calls RETURNED OUTPUT via Bash — if this is a without-arm, the run is "
            "CONTAMINATED",
            "",
            "Tool calls (2):",
            '  by type: {"Bash":2}',
        ]
    )


def test_header_blocked_cli_attempt_and_single_segment():
    events = lines(
        ASST(1, "m", [USE("b1", "Bash", {"command": "codegraph x"})]),
        _bash_result("b1", error=True),
        DONE,
    )
    text = format_run_header(summarize(events), ["run.jsonl"])
    assert "   (1 codegraph CLI attempt blocked — no output entered the window)" in text
    assert text.endswith(
        "Result: success | duration 1s | turns 1\n  tokens processed: 0 | cost $0.100"
    )


def test_header_announces_the_later_processed_definition():
    s = summarize(SESSION, processed=PROCESSED_MESSAGE_USAGE)
    last = format_run_header(s, ["r.jsonl"]).splitlines()[-1]
    assert last == (
        "  tokens processed: 658 (per-message usage, later revision — not the "
        "reference's figure) | cost $0.200"
    )


def test_by_type_json_puts_array_index_names_first():
    s = summarize(lines(ASST(1, "m", [USE("a", "Read"), USE("b", "7")])))
    assert '  by type: {"7":1,"Read":1}' in format_run_header(s, ["r.jsonl"])


def test_result_subtype_null_prints_null_and_absent_prints_undefined():
    from evalkit.metrics.summary import format_run_header, summarize
    from tests.builders import ASST, RESULT, TEXT, lines

    null = summarize(lines(ASST(100, "m1", [TEXT("hi")]), RESULT("a", subtype=None)))
    assert "Result: null | duration 1s" in format_run_header(null, ["r.jsonl"])
    absent = [{k: v for k, v in e.items() if k != "subtype"} for e in RESULT("a")]
    gone = summarize(lines(ASST(100, "m1", [TEXT("hi")]), absent))
    assert "Result: undefined | duration 1s" in format_run_header(gone, ["r.jsonl"])


def test_every_cli_attempt_counts_even_with_a_repeated_id():
    from evalkit.metrics.summary import summarize
    from tests.builders import ASST, USE, lines

    bash = USE("b1", "Bash", {"command": "codegraph explore x"})
    assert summarize(lines(ASST(1, "m1", [bash]), ASST(2, "m2", [bash]))).cli_calls == 2
