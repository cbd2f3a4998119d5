"""File-attributed read allocation (evalkit/metrics/read_allocation.py), on hand-built sessions."""

from __future__ import annotations

from evalkit.formats.profiles import CODEGRAPH, SOURCEGRAPH, load_profile
from evalkit.metrics.read_allocation import compute_read_allocation, pooled_read_allocation
from evalkit.session import session_from_transcript
from tests.builders import (
    ASST,
    DONE,
    RES,
    RESULT,
    TEXT,
    USE,
    XRES,
    _result_event,
    lines,
    write_jsonl,
)
from tests.test_profiles import USER_TOML, sourcegraph_session


def test_sourcegraph_reads_are_charged_to_their_files():
    events = sourcegraph_session()
    a = compute_read_allocation(events, "See pkg/net/retry.go.", profile=SOURCEGRAPH)
    # sg_read_file pkg/net/retry.go: 1200 chars, cited; Read /w/pkg/net/dial.go: 600, not cited.
    assert [(f.path, f.chars, f.reads, f.cited) for f in a.files] == [
        ("pkg/net/retry.go", 1200, 1, True),
        ("/w/pkg/net/dial.go", 600, 1, False),
    ]
    assert (a.attributed_chars, a.cited_chars) == (1800, 1200)
    # keyword search 900 + Grep 300 + Bash 90 name no one file.
    assert a.unattributed_chars == 1290
    assert a.efficiency == 1200 / 1800 and a.files_cited == 1 and a.has_answer


def test_the_default_profile_charges_read_only():
    a = compute_read_allocation(sourcegraph_session(), "dial.go is it", profile=CODEGRAPH)
    assert [(f.path, f.cited) for f in a.files] == [("/w/pkg/net/dial.go", True)]
    # the sourcegraph tools are `other` under codegraph: neither charged nor unattributed.
    assert a.unattributed_chars == 300 + 90 and a.efficiency == 1.0


def test_errors_are_not_charged_and_repeat_reads_pool():
    events = lines(
        ASST(100, "m1", [USE("a", "Read", {"file_path": "src/x.py"})]),
        RES("a", 50),
        ASST(200, "m2", [USE("b", "Read", {"file_path": "src/x.py"})]),
        RES("b", 70),
        ASST(300, "m3", [USE("c", "Read", {"file_path": "src/y.py"})]),
        _result_event("c", "File does not exist.", error=True),
        DONE,
    )
    a = compute_read_allocation(events, "")
    assert [(f.path, f.chars, f.reads) for f in a.files] == [("src/x.py", 120, 2)]
    assert a.cited_chars == 0 and a.efficiency == 0.0 and not a.has_answer


def test_no_file_read_has_no_figure():
    a = compute_read_allocation(lines(ASST(1, "m", [TEXT("hi")]), DONE), "hi")
    assert a.efficiency is None and a.files == ()
    assert pooled_read_allocation([a, None]) is None


def test_pooled_over_sessions_is_chars_weighted():
    one = compute_read_allocation(sourcegraph_session(), "pkg/net/retry.go", profile=SOURCEGRAPH)
    two = compute_read_allocation(sourcegraph_session(), "nothing", profile=SOURCEGRAPH)
    assert pooled_read_allocation([one, two]) == 1200 / 3600


def test_a_user_profile_file_declares_its_read_tool(tmp_path):
    f = tmp_path / "acme.toml"
    f.write_text(USER_TOML, encoding="utf-8")
    profile = load_profile(f)
    events = lines(
        ASST(100, "m1", [USE("a", "mcp__acme__open", {"file": "lib/core.c"})]),
        RES("a", 400),
        ASST(200, "m2", [USE("b", "mcp__acme__find", {"q": "core"})]),
        RES("b", 100),
        DONE,
    )
    a = compute_read_allocation(events, "Fixed in `lib/core.c`.", profile=profile)
    assert (a.attributed_chars, a.cited_chars, a.unattributed_chars) == (400, 400, 100)


def test_the_session_carries_it_and_explore_allocation_is_untouched(tmp_path):
    from evalkit.formats.claude_code.transcripts import read_transcript

    events = lines(
        ASST(100, "m1", [USE("e", "mcp__codegraph__codegraph_explore", {"query": "q"})]),
        XRES("e", ["src/a.ts"]),
        ASST(200, "m2", [USE("r", "Read", {"file_path": "src/b.ts"})]),
        RES("r", 10),
        RESULT("src/a.ts and src/b.ts"),
    )
    t = read_transcript(write_jsonl(tmp_path / "run.jsonl", events))
    s = session_from_transcript(t)
    assert s.allocation.envelope > 0 and s.allocation.efficiency == 1.0
    assert s.read_allocation.attributed_chars == 10 and s.read_allocation.efficiency == 1.0
    sg = session_from_transcript(t, profile=SOURCEGRAPH)
    assert sg.allocation.envelope == 0 and sg.explore_texts == ()
    assert sg.sufficiency.calls == () and sg.read_allocation.files == s.read_allocation.files
    # the explore result is the tool under test's under codegraph, `other` under sourcegraph.
    assert (s.read_allocation.unattributed_chars, sg.read_allocation.unattributed_chars) == (43, 0)
