"""The parse's fast paths (issue 16): each one fires on the usual input and steps aside, to the
exact code, on the input where it could differ; either way the result is the exact one.

The orjson reading and writing paths are in `test_fastjson.py`.
"""

from __future__ import annotations

import os
import pickle

import pytest

from evalkit.corpus import records
from evalkit.ecma import js_add
from evalkit.formats import files
from evalkit.formats.claude_code.index import index_events
from evalkit.formats.claude_code.transcripts import tool_results
from evalkit.formats.profiles import CODEGRAPH, Globs
from evalkit.metrics.allocation import same_as_any, same_path
from evalkit.metrics.occupancy import compute_occupancy
from evalkit.metrics.summary import summarize
from tests.builders import ASST, RESULT, TEXT, USE, XRES, lines

BIG = 2**53


# --- reading a file by its size ---------------------------------------------------------------


def test_a_file_is_read_whole_by_its_size(tmp_path):
    path = tmp_path / "a.jsonl"
    path.write_bytes(b"x" * 100)
    with open(path, "rb") as fh:
        assert files.read_at_most(fh, 1000) == b"x" * 100
    with open(path, "rb") as fh:
        assert files.read_at_most(fh, 40) == b"x" * 40  # the bound still holds


def test_a_file_that_grew_after_its_size_was_taken_is_read_on_to_the_bound(tmp_path, monkeypatch):
    path = tmp_path / "a.jsonl"
    path.write_bytes(b"y" * 100)

    class Small:  # the size fstat saw before the file grew
        st_size = 3

    monkeypatch.setattr(files.os, "fstat", lambda fd: Small)
    with open(path, "rb") as fh:
        assert files.read_at_most(fh, 1000) == b"y" * 100
    with open(path, "rb") as fh:
        assert files.read_at_most(fh, 50) == b"y" * 50


# --- remembered answers of globs and families --------------------------------------------------


NAMES = [
    "Read",
    "mcp__codegraph__codegraph_explore",
    "mcp__x__codegraph_node",
    "Grep",
    "Glob",
    "Bash",
    "NotebookRead",
    "",
    "read",
    "Task",
    "mcp__sourcegraph__search",
]


def test_glob_answers_are_remembered_and_equal_the_match():
    globs = Globs(["Read", "*codegraph*", "mcp__*__search", "Gl?b"])
    for name in NAMES * 2:  # the second round answers from memory
        assert globs(name) == globs._match(name)
    assert set(globs._memo) == set(NAMES)
    copy = pickle.loads(pickle.dumps(globs))
    assert copy._memo == {} and all(copy(n) == globs(n) for n in NAMES)


def test_remembered_answers_are_bounded(monkeypatch):
    from evalkit.formats import profiles

    monkeypatch.setattr(profiles, "_MEMO", 3)
    globs = Globs(["*a*"])
    answers = [globs(f"n{i}a" if i % 2 else f"n{i}") for i in range(10)]
    assert answers == [bool(i % 2) for i in range(10)]
    assert len(globs._memo) == 3


def test_profile_families_are_remembered_and_equal_the_rule():
    for name in NAMES * 2:
        assert CODEGRAPH.family(name) == CODEGRAPH._family(name)


# --- paths compared against many -------------------------------------------------------------


@pytest.mark.parametrize(
    "a",
    ["src/a.py", "a.py", "./src/a.py", "././src/a.py", "src\\a.py", "", None, "/abs/src/a.py"],
)
def test_same_as_any_is_any_same_path(a):
    others = ["a.py", "./a.py", "././src/a.py", "b/src/a.py", "", None, "src", "/abs/src/a.py"]
    for k in range(len(others) + 1):
        assert same_as_any(a, others[:k]) == any(same_path(a, b) for b in others[:k])


# --- integer usage sums ------------------------------------------------------------------------


def _usage_events(counts: list[int]) -> list[dict]:
    return [
        {
            "type": "assistant",
            "message": {
                "id": f"m{i}",
                "content": [TEXT("t")],
                "usage": {"input_tokens": n, "cache_read_input_tokens": 0, "output_tokens": n},
            },
        }
        for i, n in enumerate(counts)
    ]


def test_usage_sums_past_2_53_round_as_javascript_does():
    # Small integers are added directly (the fast path); a sum past 2^53 goes through js_add.
    counts = [5, BIG - 3, 7, 1]
    want: float = 0
    for n in counts:  # each message's usage summed from 0, then added (input and output)
        want = js_add(want, js_add(js_add(0, n), n))
    summary = summarize(_usage_events(counts), processed="message-usage")
    assert summary.processed_message_usage == want
    assert type(summary.processed_message_usage) is float
    small = summarize(_usage_events([5, 7]), processed="message-usage")
    assert small.processed_message_usage == 24 and type(small.processed_message_usage) is int


def test_occupancy_context_sums_past_2_53_round_as_javascript_does():
    usage = {
        "input_tokens": BIG - 1,
        "cache_read_input_tokens": 3,
        "cache_creation_input_tokens": 0,
    }
    events = [{"type": "assistant", "message": {"id": "m", "content": [], "usage": usage}}]
    assert compute_occupancy(events).final_context == js_add(BIG - 1, 3)
    usage = {"input_tokens": 10, "cache_read_input_tokens": 3, "cache_creation_input_tokens": 0}
    events = [{"type": "assistant", "message": {"id": "m", "content": [], "usage": usage}}]
    assert compute_occupancy(events).final_context == 13


# --- occupancy's inlined blocks ----------------------------------------------------------------


@pytest.mark.parametrize("odd", [None, {"type": "text", "text": 5}])
def test_text_blocks_are_sized_as_the_block_rule_sizes_them(odd):
    from evalkit.metrics.occupancy import _block_chars

    blocks = [
        TEXT("héllo 😀"),
        TEXT(""),
        {"type": "text", "text": ["a", "b"]},
        {"type": "text"},
        USE("t1", "Read", {"file_path": "/a.py", "n": 1.5}),
        {"type": "other", "x": [1, 2]},
    ]
    if odd is not None:  # not a string: `(x || "").length` is undefined, and the sum NaN
        blocks.append(odd)
    events = lines(ASST(10, "m1", blocks), ASST(20, "m2", [TEXT("z")]))
    (gap,) = compute_occupancy(events).gaps
    want = sum(_block_chars(b, "(t)") for b in blocks)
    if odd is None:
        assert gap.chars == want == 69
    else:
        assert gap.chars != gap.chars and want != want


# --- tool results listed once ------------------------------------------------------------------


def test_the_summary_over_the_session_index_is_the_summary():
    events = lines(
        ASST(10, "m1", [USE("e1", "mcp__codegraph__codegraph_explore", {"query": "q"})]),
        XRES("e1", ["src/a.py"], extra="No such tool available"),
        ASST(20, "m2", [USE("b1", "Bash", {"command": "codegraph query x"})]),
        {
            "type": "user",
            "message": {
                "content": [{"type": "tool_result", "tool_use_id": "b1", "content": "out"}]
            },
        },
        RESULT("done"),
    )
    listed = list(tool_results(events))
    assert [r.text for r in listed][1] == "out"  # a string content is the text itself
    index = index_events(events)
    assert [r.text for r in index.results] == [r.text for r in listed]
    summary = summarize(events, index=index)
    assert summary == summarize(events)
    assert summary.raced and summary.cli_contaminated == 1


# --- digests keyed by the given segment name ---------------------------------------------------


@pytest.mark.parametrize(
    "given", ["a/run-new-1.jsonl", "run.jsonl", "a/./b.jsonl", "a//b.jsonl", "../x.jsonl", "."]
)
def test_a_segment_name_is_its_relative_path_exactly_when_relpath_says_so(tmp_path, given):
    root = str(tmp_path / "corpus")
    path = os.path.join(root, given)
    assert records._relative_to(path, root, given) == records._relative(path, root)
    assert records._relative_to(path, root, None) == records._relative(path, root)


# --- scans remembered by the text's identity ---------------------------------------------------


def test_a_scan_is_remembered_for_the_same_text_and_redone_for_an_equal_copy():
    from evalkit.metrics.envelope import ScanMemo, forget_scans, split_sections

    calls = []
    memo = ScanMemo(lambda t: calls.append(t) or len(t), size=2)
    text = "".join(["**`a/b.py`**", " x" * 10])
    assert memo(text) == memo(text) == len(text) and len(calls) == 1  # fires
    copy = "".join([text[:5], text[5:]])
    assert copy == text and copy is not text
    assert memo(copy) == len(text) and len(calls) == 2  # an equal copy is scanned again
    memo("other")
    assert len(memo._memo) == 2  # bounded: the oldest went
    memo.cache_clear()
    assert memo._memo == {}
    # The splits the metrics share are the same whichever object asks.
    assert split_sections(text) == split_sections(copy)
    forget_scans()
