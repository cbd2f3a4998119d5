"""Final answer text (spec §1.7): reference checks 64–65 and the fallback rules."""

from __future__ import annotations

import pytest

from evalkit.errors import TranscriptError
from evalkit.metrics.answer import final_answer
from tests.builders import DONE, RESULT, TEXT


def asst(text, parent=None, id="m", **extra):
    event = {"type": "assistant", "message": {"id": id, "content": [TEXT(text)]}}
    if parent is not None:
        event["parent_tool_use_id"] = parent
    event.update(extra)
    return event


def test_64_final_answer_comes_from_the_result_event():
    a = final_answer(DONE + [{"type": "result", "result": "the answer"}])
    assert (a.text, a.source, a.has_answer) == ("the answer", "result", True)


def test_65_else_the_last_main_thread_assistant_text():
    events = [
        asst("let me look", id="m1"),
        asst("subagent report", parent="a1", id="s1"),
        asst("the answer", id="m2"),
    ]
    a = final_answer(events)
    assert (a.text, a.source) == ("the answer", "assistant_fallback")


def test_every_segment_result_is_joined_including_empty_ones():
    events = RESULT("a") + RESULT("") + RESULT("b")
    assert final_answer(events).text == "a\n\n\n\nb"


def test_empty_result_suppresses_fallback():
    a = final_answer([asst("main text")] + RESULT(""))
    assert (a.text, a.source, a.has_answer) == ("", "result", False)


def test_non_string_results_are_ignored_and_fallback_runs():
    events = [asst("from narration")] + RESULT(None) + [{"type": "result", "result": 5}]
    assert final_answer(events).text == "from narration"


def test_empty_string_parent_is_a_subagent():
    assert final_answer([asst("main"), asst("sub", parent="")]).text == "main"


def test_is_sidechain_is_ignored():
    assert final_answer([asst("main"), asst("side", isSidechain=True)]).text == "side"


def test_whitespace_only_text_does_not_replace_but_nel_does():
    assert final_answer([asst("real"), asst("\ufeff\u00a0\u2028 ")]).text == "real"
    a = final_answer([asst("real"), asst("\u0085")])
    assert a.text == "\u0085" and a.has_answer


def test_accepted_text_is_kept_untrimmed_and_blocks_are_not_joined():
    events = [asst("  first block  ", id="m"), asst("second block", id="m")]
    assert final_answer(events).text == "second block"
    assert final_answer([asst("  kept  ")]).text == "  kept  "


def test_no_answer_at_all():
    a = final_answer([{"type": "system", "subtype": "init"}])
    assert (a.text, a.source, a.has_answer) == ("", "none", False)


def test_string_content_in_main_thread_raises_without_result():
    events = [{"type": "assistant", "message": {"id": "m", "content": "plain text"}}]
    with pytest.raises(TranscriptError, match="crashes"):
        final_answer(events)
    assert final_answer(events + RESULT("ok")).text == "ok"
