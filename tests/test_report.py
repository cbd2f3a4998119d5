"""The full per-run report (spec §1.12): header, tool listing, occupancy, sufficiency, allocation
and envelope blocks, in the reference's order and text; and the JSON object of `evalkit run`."""

from __future__ import annotations

from evalkit.outputs.report import format_run, run_json
from evalkit.session import parse_session
from tests.builders import ASST, SUB, TEXT, USE, lines, write_jsonl
from tests.test_occupancy import F4
from tests.test_sufficiency import S1

# S1 of §11.3 through the whole report. Occupancy by hand: the only clean gap is the Read's
# (3,722 tool chars of 3,777 over 1,000 tokens → 3.72 chars/token, error 0); the explore results
# (98 and 50 chars) price at 26.3 + 13.4 → 40 tokens; base = 15,000 − 40 − 1,000.
S1_REPORT = """
=== run-1.jsonl ===
codegraph tools exposed: ?

Tool calls (3):
  by type: {"mcp__codegraph__codegraph_explore":2,"Read":1}
  1. mcp__codegraph__codegraph_explore "res.send Content-Type ETag generation"
  2. mcp__codegraph__codegraph_explore "response.js res.send function body"
  3. Read response.js

Result: success | duration 1s | turns 4
  tokens processed: 0 | cost $0.100

  Residual context occupancy at end of run:
    final context       15,000 tok    7.5% of 200k window
      of which fixed    10,000 tok  system + tool schemas + question, before any tool answered
    codegraph               40 tok    0.3% of ctx    0.0% of 200k win   (148 chars, 2 results)
    Read                 1,000 tok    6.7% of ctx    0.5% of 200k win   (3,722 chars, 1 result)
    Grep/Glob                0 tok    0.0% of ctx    0.0% of 200k win   (0 chars, 0 results)
    Bash                     0 tok    0.0% of ctx    0.0% of 200k win   (0 chars, 0 results)
    → file-access        1,000 tok    6.7% of ctx    0.5% of 200k win   (3,722 chars, 1 result)
    other tools              0 tok    0.0% of ctx    0.0% of 200k win   (0 chars, 0 results)
    base (prompt+prose)  13,960 tok   93.1% of ctx    7.0% of 200k win
    measure: 3.72 chars/tok measured ±0.0% · turns 4 · compactions 0

  Explore sufficiency — what the agent did NEXT (2 answered calls):
      1  50%  explore again                  insufficient: did not answer
      1  50%  Read a file we returned        allocation: right file, wrong bytes
      0   0%  Read a file we did not return  recall: file never surfaced
      0   0%  Grep/Glob                      recall (weak): still hunting for the file
      0   0%  moved on / answered            sufficient
    1. "res.send Content-Type ETag generation" [2 files] → codegraph_explore
    2. "response.js res.send function body" [1 file] → Read response.js

  Explore allocation — share of returned bytes the answer used (2 calls, 2 files):
    efficiency   0.0%  0 of 148 chars   (0/2 files cited; path-cited alone 0.0%)
    call 1:   0.0%  0/98 chars  0/2 files
    call 2:   0.0%  0/50 chars  0/1 files
       68.2%    101  lib/response.js  —
       31.8%     47  lib/utils.js  —
    note: relative metric — attribution is by citation, so compare builds on the same question, not absolutes."""


def test_full_report_blocks_in_reference_order(tmp_path):
    s = parse_session(write_jsonl(tmp_path / "run-1.jsonl", S1))
    assert format_run(s) == S1_REPORT


def test_brief_drops_only_the_numbered_listing(tmp_path):
    s = parse_session(write_jsonl(tmp_path / "run-1.jsonl", S1))
    brief = format_run(s, brief=True)
    assert brief == S1_REPORT.replace(
        '  1. mcp__codegraph__codegraph_explore "res.send Content-Type ETag generation"\n'
        '  2. mcp__codegraph__codegraph_explore "response.js res.send function body"\n'
        "  3. Read response.js\n",
        "",
    )


def test_envelope_block_comes_last(tmp_path):
    s = parse_session(write_jsonl(tmp_path / "run-1.jsonl", S1))
    text = format_run(s, answer_globs=["lib/response.js"])
    assert text.startswith(S1_REPORT + "\n\n  Explore envelope: 148 chars over 2 response(s)\n")


def test_killed_run_without_result_or_explore(tmp_path):
    events = lines(
        ASST(5000, "m1", [USE("g", "Grep", {"pattern": "x"})]),
        SUB("g", ASST(10, "s1", [TEXT("sub")])),
    )
    text = format_run(parse_session(write_jsonl(tmp_path / "killed.jsonl", events)))
    blocks = text.split("\n\n")
    assert blocks[0] == "\n=== killed.jsonl ===\ncodegraph tools exposed: ?"
    assert blocks[1] == 'Tool calls (1):\n  by type: {"Grep":1}\n  1. Grep'
    assert blocks[2].startswith("  Residual context occupancy at end of run:\n")
    assert blocks[2].endswith(
        "measure: 3.00 chars/tok (FALLBACK — no clean gap to calibrate on)"
        " · turns 2 · compactions 0"
    )
    assert blocks[3] == "  Explore sufficiency: no answered codegraph_explore calls"
    assert blocks[4] == "  Explore allocation: no codegraph_explore responses with source sections"
    assert len(blocks) == 5


def test_multi_segment_header_names_every_file(tmp_path):
    a = write_jsonl(tmp_path / "run-2.jsonl", F4)
    b = write_jsonl(tmp_path / "run-2.t2.jsonl", lines(ASST(15000, "m9", [TEXT("more")])) + F4[-1:])
    text = format_run(parse_session([a, b]))
    assert text.startswith("\n=== run-2.jsonl + run-2.t2.jsonl ===\n")
    assert "Result: success | duration 2s | turns 4 | 2 segments (success,success)\n" in text


def test_run_json_sufficiency_and_occupancy_objects(tmp_path):
    d = run_json(parse_session(write_jsonl(tmp_path / "f4.jsonl", F4)))
    assert d["occupancy"] == {
        "chars_per_token": 2.5,
        "calibrated": True,
        "dispersion": 0,
        "final_context": 14500,
        "base_context": 10000,
        "residual": {"codegraph": 500, "read": 4000, "search": 0, "bash": 0, "other": 0},
        "contributed": {"codegraph": 4000, "read": 4000, "search": 0, "bash": 0, "other": 0},
        "residual_file_access": 4000,
        "evicted": 3500,
        "compactions": 0,
        "turns": 3,
    }
    # F4's explore answer has no sections; the next action is a Read with no file_path at all.
    assert d["sufficiency"] == {
        "answered": 1,
        "errors": 0,
        "concurrent": 0,
        "counts": {
            "explore_again": 0,
            "read_returned": 0,
            "read_missed": 1,
            "search": 0,
            "sufficient": 0,
        },
        "calls": [
            {
                "thread": "main",
                "query": "",
                "files": 0,
                "chars": 10000,
                "bucket": "read_missed",
                "next": "Read ",
                "named": False,
            }
        ],
    }
    s1 = run_json(parse_session(write_jsonl(tmp_path / "s1.jsonl", S1)))["sufficiency"]
    assert s1["calls"][1] == {
        "thread": "main",
        "query": "response.js res.send function body",
        "files": 1,
        "chars": 50,
        "bucket": "read_returned",
        "next": "Read response.js",
        "named": None,
    }
