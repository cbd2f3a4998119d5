"""Explore sufficiency (spec §5): reference checks 19–46, the printed block, Bash intent and its
quirks, threads, and the crash cases of §9.1 that reach the classifier."""

from __future__ import annotations

import pytest

from evalkit.errors import TranscriptError
from evalkit.metrics.sufficiency import (
    BUCKETS,
    bash_intent,
    classify_sufficiency,
    format_sufficiency,
)
from tests.builders import ASST, DONE, RES, SUB, TEXT, USE, XRES, E, lines
from tests.refcheck import check

# --- fixtures of §11.3 (passed to the classifier as parsed events) -----------------------------

S1 = lines(
    ASST(10000, "m1", [USE("e1", E, {"query": "res.send Content-Type ETag generation"})]),
    XRES("e1", ["lib/response.js", "lib/utils.js"]),
    ASST(12000, "m2", [USE("e2", E, {"query": "response.js res.send function body"})]),
    XRES("e2", ["lib/response.js"]),
    ASST(14000, "m3", [USE("r1", "Read", {"file_path": "/private/tmp/t-base/lib/response.js"})]),
    RES("r1", 3722),
    ASST(15000, "m4", [TEXT("done")]),
    DONE,
)
S2 = lines(
    ASST(10000, "m1", [USE("e1", E, {"query": "q"})]),
    XRES("e1", ["lib/response.js"], "\n**Flow**\n1. lib/router/index.js:42 handle\n"),
    ASST(12000, "m2", [USE("r1", "Read", {"file_path": "/t/lib/router/index.js"})]),
    RES("r1", 100),
    DONE,
)
S3 = lines(
    ASST(10000, "m1", [USE("e1", E, {"query": "q"})]),
    XRES("e1", ["lib/response.js"]),
    ASST(12000, "m2", [USE("r1", "Read", {"file_path": "/t/lib/never/mentioned.js"})]),
    RES("r1", 100),
    DONE,
)


def S4(next_use):
    return lines(
        ASST(10000, "m1", [USE("e1", E, {"query": "q"})]),
        XRES("e1", ["lib/response.js"]),
        ASST(12000, "m2", [next_use]),
        RES(next_use["id"], 100),
        DONE,
    )


S5 = lines(
    ASST(10000, "m1", [USE("e1", E, {"query": "q"})]),
    XRES("e1", ["lib/response.js"]),
    ASST(12000, "m2", [TEXT("here is how it works")]),
    DONE,
)
S6 = lines(
    ASST(
        10000,
        "m1",
        [USE("e1", E, {"query": "q"}), USE("r1", "Read", {"file_path": "/t/lib/response.js"})],
    ),
    XRES("e1", ["lib/response.js"]),
    RES("r1", 100),
    ASST(12000, "m2", [USE("x1", "Edit", {"file_path": "/t/lib/response.js"})]),
    RES("x1", 20),
    DONE,
)
S7 = lines(
    ASST(10000, "m1", [USE("e1", E, {"query": "q"})]),
    XRES("e1", ["lib/response.js"]),
    ASST(12000, "m2", [USE("t1", "TodoWrite", {})]),
    RES("t1", 20),
    ASST(13000, "m3", [USE("r1", "Read", {"file_path": "/t/lib/response.js"})]),
    RES("r1", 100),
    DONE,
)
S8 = lines(
    ASST(10000, "m1", [USE("e1", E, {"query": "first"})]),
    XRES("e1", ["lib/response.js", "lib/utils.js"]),
    ASST(11000, "m2", [USE("e2", E, {"query": "second"})]),
    XRES("e2", ["lib/response.js"]),
    ASST(12000, "m3", [USE("r1", "Read", {"file_path": "/t/lib/utils.js"})]),
    RES("r1", 400),
    DONE,
)
S9 = lines(
    ASST(10000, "m1", [USE("e1", E, {"query": "q"})]),
    XRES("e1", ["lib/response.js"]),
    ASST(12000, "m2", [USE("a1", "Agent", {"subagent_type": "Explore"})]),
    SUB("a1", ASST(0, "sm1", [USE("sb1", "Bash", {"command": "grep -rn nonce lib/"})])),
    SUB("a1", RES("sb1", 400)),
    ASST(14000, "m3", [TEXT("done")]),
    RES("a1", 900),
    DONE,
)
S10 = lines(
    ASST(10000, "m1", [USE("a1", "Agent", {"subagent_type": "Explore"})]),
    SUB("a1", ASST(0, "sm1", [USE("e1", E, {"query": "sub q"})])),
    SUB("a1", XRES("e1", ["lib/response.js"])),
    ASST(11000, "m2", [USE("e2", E, {"query": "parent q"})]),
    XRES("e2", ["lib/other.js"]),
    SUB("a1", ASST(0, "sm2", [USE("sr1", "Read", {"file_path": "/t/lib/response.js"})])),
    SUB("a1", RES("sr1", 400)),
    ASST(13000, "m3", [TEXT("done")]),
    DONE,
)
S11 = lines(
    ASST(10000, "m1", [USE("e1", E, {"query": "q"})]),
    XRES("e1", [], "not indexed", error=True),
    ASST(12000, "m2", [USE("r1", "Read", {"file_path": "/t/lib/response.js"})]),
    RES("r1", 100),
    DONE,
)


def first(events):
    return classify_sufficiency(events).calls[0]


def by_query(result, query):
    return next(c for c in result.calls if c.query == query)


# --- checks 19–46 ------------------------------------------------------------------------------


def test_19_two_answered_explore_calls():
    check(classify_sufficiency(S1).answered, 2, 0)


def test_20_explore_then_explore_is_insufficient():
    c = classify_sufficiency(S1).calls[0]
    assert (c.bucket, c.next) == ("explore_again", "codegraph_explore")


def test_21_explore_then_read_of_a_returned_file_abs_path():
    c = classify_sufficiency(S1).calls[1]
    assert (c.bucket, c.next) == ("read_returned", "Read response.js")


def test_22_explore_then_read_of_a_named_but_unreturned_file():
    c = first(S2)
    assert (c.bucket, c.next) == ("read_missed", "Read index.js (named, not returned)")


def test_23_flagged_as_named():
    assert first(S2).named is True


def test_24_explore_then_read_of_a_file_never_surfaced():
    c = first(S3)
    assert (c.bucket, c.next) == ("read_missed", "Read mentioned.js")


def test_25_not_flagged_as_named():
    assert first(S3).named is False


def test_26_explore_then_grep():
    c = first(S4(USE("g1", "Grep", {"pattern": "send"})))
    assert (c.bucket, c.next) == ("search", "Grep")


def test_27_explore_then_glob():
    c = first(S4(USE("g1", "Glob", {"pattern": "**/*.js"})))
    assert (c.bucket, c.next) == ("search", "Glob")


def test_28_explore_then_bash_sed_of_a_returned_file():
    c = first(S4(USE("b1", "Bash", {"command": "sed -n '100,200p' lib/response.js"})))
    assert (c.bucket, c.next) == ("read_returned", "Bash Read response.js")


def test_29_explore_then_bash_grep():
    c = first(S4(USE("b1", "Bash", {"command": "grep -rn send lib/"})))
    assert (c.bucket, c.next) == ("search", "Bash search")


def test_30_explore_then_bash_that_writes_a_file_is_not_a_read():
    c = first(S4(USE("b1", "Bash", {"command": "cat > /tmp/note.md <<'EOF'\nx\nEOF"})))
    assert (c.bucket, c.next) == ("sufficient", "Bash")


def test_31_explore_then_bash_npm_test_is_moved_on():
    c = first(S4(USE("b1", "Bash", {"command": "npm test"})))
    assert (c.bucket, c.next) == ("sufficient", "Bash")


def test_32_explore_then_edit_is_sufficient():
    c = first(S4(USE("x1", "Edit", {"file_path": "/t/lib/response.js"})))
    assert (c.bucket, c.next) == ("sufficient", "Edit")


def test_33_explore_then_final_answer():
    assert first(S5).bucket == "sufficient"


def test_34_labelled_as_the_final_answer():
    assert first(S5).next == "(final answer)"


def test_35_same_message_read_is_not_a_reaction():
    c = first(S6)
    assert (c.bucket, c.next) == ("sufficient", "Edit")


def test_36_counted_as_concurrent_instead():
    check(classify_sufficiency(S6).concurrent, 1, 0)


def test_37_bookkeeping_tools_are_stepped_over():
    c = first(S7)
    assert (c.bucket, c.next) == ("read_returned", "Read response.js")


def test_38_re_read_of_an_earlier_explores_file_is_allocation_not_recall():
    r = classify_sufficiency(S8)
    assert r.calls[1].bucket == "read_returned"
    assert r.calls[0].bucket == "explore_again"


def test_39_and_says_which_explore_returned_it():
    assert classify_sufficiency(S8).calls[1].next == (
        "Read utils.js (returned by an earlier explore)"
    )


def test_40_delegation_is_judged_by_what_the_subagent_did():
    assert first(S9).bucket == "search"


def test_41_and_says_so():
    assert first(S9).next == "Agent → Bash search"


def test_42_both_threads_bucketed():
    r = classify_sufficiency(S10)
    check(r.answered, 2, 0)
    assert [c.query for c in r.calls] == ["parent q", "sub q"]  # main thread first


def test_43_parent_explore_is_not_blamed_for_a_subagent_read():
    c = by_query(classify_sufficiency(S10), "parent q")
    assert (c.bucket, c.next, c.thread) == ("sufficient", "(final answer)", "main")


def test_44_subagent_explore_is_judged_in_its_own_thread():
    c = by_query(classify_sufficiency(S10), "sub q")
    assert (c.bucket, c.next, c.thread) == ("read_returned", "Read response.js", "a1")


def test_45_errored_explore_is_not_bucketed():
    check(classify_sufficiency(S11).answered, 0, 0)


def test_46_but_is_counted():
    check(classify_sufficiency(S11).errors, 1, 0)


# --- the printed block (§5.8) ------------------------------------------------------------------

PUBLISHED_SAMPLE = """\
  Explore sufficiency — what the agent did NEXT (2 answered calls):
      1  50%  explore again                  insufficient: did not answer
      1  50%  Read a file we returned        allocation: right file, wrong bytes
      0   0%  Read a file we did not return  recall: file never surfaced
      0   0%  Grep/Glob                      recall (weak): still hunting for the file
      0   0%  moved on / answered            sufficient
    1. "res.send Content-Type ETag generation" [3 files] → codegraph_explore
    2. "response.js res.send function body" [3 files] → Read response.js"""


def test_s1_block_is_the_published_sample_with_its_own_file_counts():
    want = PUBLISHED_SAMPLE.replace("[3 files] → codegraph", "[2 files] → codegraph").replace(
        "[3 files] → Read", "[1 file] → Read"
    )
    assert format_sufficiency(classify_sufficiency(S1)) == want


def test_block_notes_errors_and_concurrent_accesses():
    events = lines(S6, ASST(13000, "m9", [USE("e9", E, {"query": "lost"})]))
    text = format_sufficiency(classify_sufficiency(events), indent="")
    assert text.splitlines()[-1] == (
        "  note: 1 errored/unanswered call (not bucketed) · 1 file-access call in the SAME "
        "message as an explore (not a reaction)"
    )


def test_block_with_no_answered_call():
    assert format_sufficiency(classify_sufficiency([])) == (
        "  Explore sufficiency: no answered codegraph_explore calls"
    )
    assert format_sufficiency(classify_sufficiency(S11), indent="") == (
        "Explore sufficiency: no answered codegraph_explore calls (1 errored or never returned)"
    )


def test_block_tags_subagent_calls_and_cuts_long_queries():
    long_q = "a" * 44 + "😀b"  # 47 units: cut to 45 units, through the surrogate pair
    events = lines(
        SUB("p", ASST(1, "s1", [USE("e1", E, {"query": long_q})])),
        SUB("p", XRES("e1", ["lib/a.js"])),
    )
    line = format_sufficiency(classify_sufficiency(events)).splitlines()[-1]
    assert line == '    1. [subagent] "' + "a" * 44 + '\ufffd…" [1 file] → (final answer)'


def test_empty_string_parent_is_its_own_untagged_thread():
    events = lines(
        SUB("", ASST(1, "s1", [USE("e1", E, {"query": "q"})])),
        SUB("", XRES("e1", ["lib/a.js"])),
        ASST(2, "m1", [USE("r1", "Read", {"file_path": "lib/a.js"})]),
    )
    r = classify_sufficiency(events)
    # The main-thread Read is not a reaction in thread "": the call stays sufficient.
    assert (r.calls[0].thread, r.calls[0].bucket) == ("", "sufficient")
    assert '  1. "q"' in format_sufficiency(r)


def test_subagent_thread_seen_first_is_listed_first():
    events = lines(
        SUB("a1", ASST(1, "s1", [USE("e1", E, {"query": "sub"})])),
        SUB("a1", XRES("e1", ["lib/a.js"])),
        ASST(2, "m1", [USE("e2", E, {"query": "main"})]),
        XRES("e2", ["lib/b.js"]),
    )
    assert [c.query for c in classify_sufficiency(events).calls] == ["sub", "main"]


def test_counts_have_all_buckets_in_table_order():
    r = classify_sufficiency(S1)
    assert (
        list(r.counts)
        == list(BUCKETS)
        == ["explore_again", "read_returned", "read_missed", "search", "sufficient"]
    )
    assert r.to_dict()["counts"] == {
        "explore_again": 1,
        "read_returned": 1,
        "read_missed": 0,
        "search": 0,
        "sufficient": 0,
    }


def test_to_dict_calls_carry_named_only_for_read_missed():
    d = classify_sufficiency(S2).to_dict()
    assert list(d) == ["answered", "errors", "concurrent", "counts", "calls"]
    assert d["calls"] == [
        {
            "thread": "main",
            "query": "q",
            "files": 1,
            "chars": len(S2[1]["message"]["content"][0]["content"][0]["text"]),
            "bucket": "read_missed",
            "next": "Read index.js (named, not returned)",
            "named": True,
        }
    ]
    assert classify_sufficiency(S1).to_dict()["calls"][0]["named"] is None


# --- threads, messages and results (§5.2–5.5, §9.1) ---------------------------------------------


def test_concurrent_counts_per_explore_pair():
    # Quirk 11: one Read after two explores in one message counts twice.
    events = lines(
        ASST(1, "m1", [USE("e1", E), USE("e2", E), USE("r1", "Read", {"file_path": "x/y.js"})]),
        XRES("e1", ["lib/a.js"]),
        XRES("e2", ["lib/b.js"]),
    )
    r = classify_sufficiency(events)
    assert r.concurrent == 2 and [c.bucket for c in r.calls] == ["sufficient", "sufficient"]


def test_calls_without_message_id_are_separate_messages():
    events = lines(
        ASST(1, None, [USE("e1", E), USE("r1", "Read", {"file_path": "/t/lib/a.js"})]),
        XRES("e1", ["lib/a.js"]),
    )
    r = classify_sufficiency(events)
    assert (r.concurrent, r.calls[0].bucket) == (0, "read_returned")


def test_result_before_its_tool_use_is_not_seen():
    events = lines(XRES("e1", ["lib/a.js"]), ASST(1, "m1", [USE("e1", E)]))
    r = classify_sufficiency(events)
    assert (r.answered, r.errors) == (0, 1)


def test_last_non_error_duplicate_result_wins():
    events = lines(
        ASST(1, "m1", [USE("e1", E)]),
        XRES("e1", ["lib/a.js"]),
        XRES("e1", ["lib/a.js", "lib/b.js"]),
        XRES("e1", ["c/d.js"], error=True),
    )
    assert classify_sufficiency(events).calls[0].files == 2


def test_explore_without_sections_is_answered_with_zero_files():
    events = lines(
        ASST(1, "m1", [USE("e1", E, {"query": 7})]),
        XRES("e1", [], "not indexed"),
        ASST(2, "m2", [USE("g", "Grep")]),
    )
    c = classify_sufficiency(events).calls[0]
    assert (c.files, c.query, c.bucket) == (0, "7", "search")


def test_delegation_with_nothing_substantive_is_sufficient():
    events = lines(
        ASST(1, "m1", [USE("e1", E)]),
        XRES("e1", ["lib/a.js"]),
        ASST(2, "m2", [USE("a1", "Task")]),
        SUB("a1", ASST(3, "s1", [USE("t", "TodoWrite"), USE("n", "Agent")])),
    )
    c = classify_sufficiency(events).calls[0]
    assert (c.bucket, c.next) == ("sufficient", "Task")


def test_delegation_read_uses_the_parents_returned_files():
    events = lines(
        ASST(1, "m1", [USE("e1", E)]),
        XRES("e1", ["lib/a.js"]),
        ASST(2, "m2", [USE("a1", "Task")]),
        SUB("a1", ASST(3, "s1", [USE("r", "NotebookRead", {"notebook_path": "./lib/a.js"})])),
    )
    c = classify_sufficiency(events).calls[0]
    assert (c.bucket, c.next) == ("read_returned", "Task → Read a.js")


def test_prefix_with_underscore_server_is_not_stripped():
    # Quirk 10.
    events = lines(
        ASST(1, "m1", [USE("e1", E)]),
        XRES("e1", ["lib/a.js"]),
        ASST(2, "m2", [USE("x", "mcp__code_graph__codegraph_search")]),
    )
    assert classify_sufficiency(events).calls[0].next == "mcp__code_graph__codegraph_search"


def test_non_string_codegraph_name_judged_as_a_reaction_raises():
    # §9.1 case 7.
    events = lines(
        ASST(1, "m1", [USE("e1", E)]),
        XRES("e1", ["lib/a.js"]),
        ASST(2, "m2", [{"type": "tool_use", "id": "x", "name": ["codegraph"], "input": {}}]),
    )
    with pytest.raises(TranscriptError, match="not a string"):
        classify_sufficiency(events, path="run.jsonl")


@pytest.mark.parametrize("etype", ["assistant", "user"])
def test_null_block_raises(etype):
    events = [{"type": etype, "message": {"id": "m", "content": [None]}}]
    with pytest.raises(TranscriptError, match="null block"):
        classify_sufficiency(events)


@pytest.mark.parametrize("etype, phrase", [("assistant", "an assistant"), ("user", "a user")])
def test_null_block_error_uses_the_right_article(etype, phrase):
    events = [{"type": etype, "message": {"id": "m", "content": [None]}}]
    with pytest.raises(TranscriptError, match=f"null block in {phrase} message"):
        classify_sufficiency(events)


def test_null_block_in_other_event_types_is_harmless():
    assert classify_sufficiency([{"type": "system", "message": {"content": [None]}}]).answered == 0


def test_null_element_in_an_explore_result_raises():
    events = lines(
        ASST(1, "m1", [USE("e1", E)]),
        {
            "type": "user",
            "message": {
                "content": [{"type": "tool_result", "tool_use_id": "e1", "content": [None]}]
            },
        },
    )
    with pytest.raises(TranscriptError):
        classify_sufficiency(events)


# --- Bash intent (§5.6) ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cmd", "kind", "path"),
    [
        ("sed -n '100,200p' lib/response.js", "read", "lib/response.js"),
        ("grep -rn send lib/", "search", None),
        ("cat > /tmp/note.md <<'EOF'\nx\nEOF", "none", None),
        ("npm test", "none", None),
        ("cat lib/x.js | grep foo", "read", "lib/x.js"),
        ("grep foo x 2>/dev/null", "search", None),
        # quirks, all reproduced
        ("cat lib/x.js 2>&1", "none", None),
        ("awk 'NR>=10' lib/x.js", "none", None),
        ("head -n 5 lib/x.js >", "read", "lib/x.js"),
        ("cat Makefile", "none", None),
        ("cat Makefile && cat lib/x.js", "none", None),
        ("echo $(cat lib/x.js)", "read", "lib/x.js)"),
        ("(cat lib/x.js)", "none", None),
        ("FOO=1 cat lib/x.js", "none", None),
        ("sudo tail -n 20 '/var/log/app.log'", "read", "/var/log/app.log"),
        ("cd repo && ls src", "search", None),
        ("cat\u00a0lib/x.js", "read", "lib/x.js"),
        ("cat\u0085lib/x.js", "none", None),
        ("lsé", "search", None),
        (None, "none", None),
        (42, "none", None),
    ],
)
def test_bash_intent(cmd, kind, path):
    intent = bash_intent(cmd)
    assert (intent.kind, intent.path) == (kind, path)
