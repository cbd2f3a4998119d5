"""Residual context occupancy (spec §6): reference checks 1–17, the extra fixture values of §11.4,
the printed block, CG_WINDOW_TOKENS, and the crash cases of §9.1 that reach the timeline."""

from __future__ import annotations

import math

import pytest

from evalkit.errors import TranscriptError
from evalkit.formats.claude_code.transcripts import read_transcript
from evalkit.metrics.occupancy import (
    compute_occupancy,
    format_occupancy,
    js_number,
    window_tokens_from_env,
)
from tests.builders import (
    ASST,
    COMPACT,
    DONE,
    RES,
    SUB,
    TEXT,
    THINK,
    USE,
    E,
    lines,
    write_jsonl,
)
from tests.refcheck import check

# --- fixtures of §11.3 (written to files and read by the full reader, as the reference does) ---

F1 = lines(
    ASST(10000, "m1", [USE("t1", E)]),
    RES("t1", 10000),
    ASST(14000, "m2", [USE("t2", "Read")]),
    RES("t2", 5000),
    ASST(16000, "m3", [TEXT("done")]),
    DONE,
)
F2 = lines(
    ASST(10000, "m1", [THINK, USE("t1", E)]),
    RES("t1", 10000),
    ASST(14000, "m2", [THINK, USE("t2", "Read")]),
    RES("t2", 5000),
    ASST(16000, "m3", [TEXT("done")]),
    DONE,
)
F3 = lines(
    ASST(10000, "m1", [USE("t1", E)]),
    RES("t1", 10000),
    ASST(14000, "m2", [USE("t2", E)]),
    COMPACT,
    RES("t2", 5000),
    ASST(8000, "m3", [TEXT("done")]),
    DONE,
)
F4 = lines(
    ASST(10000, "m1", [USE("t1", E)]),
    RES("t1", 10000),
    ASST(14000, "m2", [USE("t2", "Read")]),
    RES("t2", 10000),
    ASST(14500, "m3", [TEXT("done")]),
    DONE,
)
F5_SEGMENT_1 = lines(
    ASST(10000, "m1", [USE("t1", E)]),
    RES("t1", 10000),
    ASST(14000, "m2", [TEXT("answer one")]),
    DONE,
)
F5_SEGMENT_2 = lines(ASST(14600, "m3", [TEXT("answer two, from what is already here")]), DONE)


def transcript(tmp_path, *segments):
    paths = [write_jsonl(tmp_path / f"run-{i}.jsonl", seg) for i, seg in enumerate(segments)]
    return read_transcript(paths)


def occupancy(tmp_path, *segments, **kw):
    return compute_occupancy(transcript(tmp_path, *segments).events, **kw)


# --- checks 1–17 -------------------------------------------------------------------------------


def test_01_chars_per_token(tmp_path):
    o = occupancy(tmp_path, F1)
    check(o.chars_per_token * 1000, 2500, 30)
    assert o.chars_per_token == 2.5 and o.calibrated


def test_02_codegraph_residual(tmp_path):
    o = occupancy(tmp_path, F1)
    check(o.residual["codegraph"], 4000, 60)
    assert o.residual["codegraph"] == 4000


def test_03_read_residual(tmp_path):
    o = occupancy(tmp_path, F1)
    check(o.residual["read"], 2000, 40)
    assert o.residual["read"] == 2000


def test_04_file_access_residual(tmp_path):
    o = occupancy(tmp_path, F1)
    check(o.residual_file_access, 2000, 40)
    assert o.residual_file_access == 2000


def test_05_final_context(tmp_path):
    o = occupancy(tmp_path, F1)
    check(o.final_context, 16000, 0)


def test_06_fixed_base(tmp_path):
    o = occupancy(tmp_path, F1)
    check(o.base_context, 10000, 0)


def test_07_nothing_evicted(tmp_path):
    o = occupancy(tmp_path, F1)
    check(o.evicted, 0, 1)
    assert o.evicted == 0


def test_08_turns_deduped_by_message_id(tmp_path):
    o = occupancy(tmp_path, F2)
    check(o.turns, 3, 0)


def test_09_codegraph_residual_deduped(tmp_path):
    o = occupancy(tmp_path, F2)
    check(o.residual["codegraph"], 4000, 60)
    assert o.residual["codegraph"] == 4000


def test_10_post_compaction_residual_is_last_result_only(tmp_path):
    o = occupancy(tmp_path, F3)
    check(o.residual["codegraph"], 2000, 40)
    assert o.residual["codegraph"] == 2000


def test_11_contributed_still_counts_both(tmp_path):
    o = occupancy(tmp_path, F3)
    check(o.contributed["codegraph"], 6000, 80)
    assert o.contributed["codegraph"] == 6000


def test_12_fifo_evicted_the_older_codegraph_result(tmp_path):
    o = occupancy(tmp_path, F4)
    check(o.residual["codegraph"], 500, 60)
    assert o.residual["codegraph"] == 500


def test_13_newer_read_result_survives(tmp_path):
    o = occupancy(tmp_path, F4)
    check(o.residual["read"], 4000, 60)
    assert o.residual["read"] == 4000


def test_14_eviction_recorded(tmp_path):
    o = occupancy(tmp_path, F4)
    check(o.evicted, 3500, 60)
    assert o.evicted == 3500


def test_15_stitched_turns(tmp_path):
    o = occupancy(tmp_path, F5_SEGMENT_1, F5_SEGMENT_2)
    check(o.turns, 3, 0)


def test_16_residual_carries_into_turn_2(tmp_path):
    o = occupancy(tmp_path, F5_SEGMENT_1, F5_SEGMENT_2)
    check(o.residual["codegraph"], 4000, 60)
    assert o.residual["codegraph"] == 4000


def test_17_stitched_final_context(tmp_path):
    o = occupancy(tmp_path, F5_SEGMENT_1, F5_SEGMENT_2)
    check(o.final_context, 14600, 0)


# (check 18, "stitched cost sums segments", is a summary field: tests/test_summary.py)

# --- the further values §11.4 lists ------------------------------------------------------------


def test_f1_calibration_uses_both_gaps_and_dispersion_is_zero(tmp_path):
    o = occupancy(tmp_path, F1)
    assert [(g.tool_chars, g.delta) for g in o.gaps] == [(10000, 4000), (5000, 2000)]
    assert o.chars_per_token == (10000 + 5000) / (4000 + 2000)
    assert o.dispersion == 0


def test_f3_compaction_evicts_4000_and_the_new_result_contributes_2000(tmp_path):
    o = occupancy(tmp_path, F3)
    assert [g.compacted for g in o.gaps] == [False, True]
    assert o.evicted == 4000 and o.compactions == 1
    assert o.contributed_exact["codegraph"] - 4000 == 2000


def test_f4_second_gap_is_skipped_for_calibration_and_dispersion_is_lower_median(tmp_path):
    o = occupancy(tmp_path, F4)
    ratios = [g.tool_chars / g.delta for g in o.gaps]
    assert ratios == [2.5, 20.0] and 20.0 > 1.5 * 2.5
    assert o.chars_per_token == 2.5  # from the first gap alone
    assert o.dispersion == 0  # lower median of [0, 7]


F4_BLOCK = """\
  Residual context occupancy at end of run:
    final context       14,500 tok    7.2% of 200k window
      of which fixed    10,000 tok  system + tool schemas + question, before any tool answered
    codegraph              500 tok    3.4% of ctx    0.3% of 200k win   (10,000 chars, 1 result)
    Read                 4,000 tok   27.6% of ctx    2.0% of 200k win   (10,000 chars, 1 result)
    Grep/Glob                0 tok    0.0% of ctx    0.0% of 200k win   (0 chars, 0 results)
    Bash                     0 tok    0.0% of ctx    0.0% of 200k win   (0 chars, 0 results)
    → file-access        4,000 tok   27.6% of ctx    2.0% of 200k win   (10,000 chars, 1 result)
    other tools              0 tok    0.0% of ctx    0.0% of 200k win   (0 chars, 0 results)
    base (prompt+prose)  10,000 tok   69.0% of ctx    5.0% of 200k win
    measure: 2.50 chars/tok measured ±0.0% · turns 3 · compactions 0 · evicted 3,500 tok"""


def test_f4_printed_block_is_the_spec_example(tmp_path):
    assert format_occupancy(occupancy(tmp_path, F4)) == F4_BLOCK


def test_block_keeps_operation_order_7_2_not_7_3(tmp_path):
    # (14500 / 200000) × 100 = 7.249999999999999 → 7.2%; 14500 × 100 / 200000 would print 7.3%.
    assert "    7.2% of 200k window" in format_occupancy(occupancy(tmp_path, F4))


def test_block_with_empty_indent_and_no_eviction(tmp_path):
    text = format_occupancy(occupancy(tmp_path, F1), indent="")
    assert text.splitlines()[0] == "Residual context occupancy at end of run:"
    assert (
        text.splitlines()[-1]
        == "  measure: 2.50 chars/tok measured ±0.0% · turns 3 · compactions 0"
    )


# --- timeline rules (§6.2–6.6) -------------------------------------------------------------------


def test_fewer_than_two_requests_fall_back_to_3_chars_per_token():
    o = compute_occupancy(lines(ASST(5000, "m1", [TEXT("hi")]), DONE))
    assert (o.chars_per_token, o.calibrated, o.dispersion) == (3.0, False, None)
    assert all(v == 0 for v in o.residual.values()) and o.turns == 1
    assert "measure: 3.00 chars/tok (FALLBACK — no clean gap to calibrate on) · turns 1" in (
        format_occupancy(o)
    )


def test_all_chars_fallback_is_still_called_calibrated():
    # Quirk 7 (§9.2): no clean gap (tool share < 0.8), so all chars over all deltas.
    events = lines(
        ASST(1000, "m1", [TEXT("y" * 600)]),
        RES("t0", 100),
        ASST(1300, "m2", [TEXT("z")]),
    )
    o = compute_occupancy(events)
    assert o.calibrated
    assert o.chars_per_token == 700 / 300
    assert "measured" in format_occupancy(o).splitlines()[-1]


def test_subagent_requests_enter_the_one_timeline():
    # Decision 5: a subagent assistant event with its own message.id adds a request.
    events = lines(
        ASST(10000, "m1", [USE("a1", "Agent")]),
        SUB("a1", ASST(3000, "s1", [TEXT("sub")])),
        ASST(11000, "m2", [TEXT("done")]),
    )
    o = compute_occupancy(events)
    assert o.turns == 3 and [g.delta for g in o.gaps] == [-7000, 8000]


def test_assistant_without_id_adds_no_request_but_its_chars_count():
    events = lines(
        ASST(10000, "m1", [TEXT("a")]),
        ASST(99999, None, [TEXT("bcd")]),
        ASST(10010, "m2", [TEXT("e")]),
    )
    o = compute_occupancy(events)
    assert o.turns == 2 and o.gaps[0].chars == 1 + 3


def test_string_assistant_content_is_priced_per_code_point():
    events = [
        {"type": "assistant", "message": {"id": "m1", "usage": {"input_tokens": 1}}},
        {"type": "assistant", "message": {"content": 'ab😀"\x01'}},
        {"type": "assistant", "message": {"id": "m2", "usage": {"input_tokens": 2}}},
    ]
    # "a" → 3, "b" → 3, "😀" → 4, '"' → 4, "\x01" → 8 (JSON serialisation lengths, §6.2)
    assert compute_occupancy(events).gaps[0].chars == 3 + 3 + 4 + 4 + 8


def test_every_tool_result_counts_even_unknown_ids_and_outside_gaps():
    events = lines(RES("ghost", 70), ASST(100, "m1", [TEXT("x")]), RES("ghost2", 30))
    o = compute_occupancy(events)
    assert (o.chars["other"], o.results["other"]) == (100, 2)


def test_tool_use_block_chars_are_input_json_plus_name():
    events = lines(
        ASST(1, "m1", [TEXT("")]),
        ASST(1, None, [USE("t", "Grep", {"pattern": "é"})]),
        ASST(2, "m2", [TEXT("")]),
    )
    assert compute_occupancy(events).gaps[0].chars == len('{"pattern":"é"}') + len("Grep")


def test_nan_text_drops_a_gap_from_calibration_but_not_from_dispersion():
    # §9.1: a number `text` has no length; the gap's chars become NaN.
    events = lines(
        ASST(10000, "m1", [USE("t1", E)]),
        RES("t1", 10000),
        ASST(14000, "m2", [{"type": "text", "text": 5}]),
        RES("t2", 4000),
        ASST(16000, "m3", [TEXT("done")]),
    )
    o = compute_occupancy(events)
    assert math.isnan(o.gaps[1].chars)
    assert o.chars_per_token == 2.5  # the NaN gap (ratio 2.0) did not enter calibration
    # …but its error |4000/2.5 − 2000| / 2000 = 0.2 entered the dispersion: lower median of [0, 0.2]
    assert o.dispersion == 0
    assert len([g for g in o.gaps if not g.compacted]) == 2


def test_file_access_residual_is_rounded_from_the_unrounded_sum():
    # read 0.5 + search 0.5 + bash 0.4 tokens: rounded one by one 1 + 1 + 0, together jround(1.4) = 1.
    events = lines(
        ASST(0, "m0", [TEXT("")]),
        ASST(0, None, [USE("c", E)]),
        RES("c", 3000),
        ASST(1000, "m1", [TEXT("")]),  # calibrates 3000 chars / 1000 tok = 3.0
        ASST(0, None, [USE("r", "Read"), USE("g", "Grep"), USE("b", "Bash")]),
        RES("r", 1),
        RES("g", 1),
        {
            "type": "user",
            "message": {"content": [{"type": "tool_result", "tool_use_id": "b", "content": "x"}]},
        },
        ASST(1001, "m2", [TEXT("")]),
    )
    o = compute_occupancy(events)
    assert o.chars_per_token == 3.0
    exact = [o.residual_exact[f] for f in ("read", "search", "bash")]
    assert exact == [1 / 3, 1 / 3, 1 / 3]
    assert o.residual_file_access == 1
    assert sum(o.residual[f] for f in ("read", "search", "bash")) == 0


# --- CG_WINDOW_TOKENS (§10.7) ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "want"),
    [
        ("300000", 300000),
        (" 1e5\n", 100000),
        ("0x10", 16),
        ("0b11", 3),
        ("0o17", 15),
        ("Infinity", math.inf),
        ("-Infinity", -math.inf),
        (".5", 0.5),
        ("5.", 5.0),
        ("", 0.0),
    ],
)
def test_js_number(raw, want):
    assert js_number(raw) == want


@pytest.mark.parametrize("raw", ["200_000", "inf", "nan", "12abc", "-0x10", "1e", "0x"])
def test_js_number_nan(raw):
    assert math.isnan(js_number(raw))


def test_window_tokens_from_env():
    assert window_tokens_from_env({}) == 200000
    assert window_tokens_from_env({"CG_WINDOW_TOKENS": ""}) == 200000
    assert window_tokens_from_env({"CG_WINDOW_TOKENS": "1000000"}) == 1000000


def test_window_tokens_changes_only_the_share_of_window_column(tmp_path):
    o = occupancy(tmp_path, F4, window_tokens=1000000)
    text = format_occupancy(o)
    # (14500 / 1e6) × 100 = 1.4500000000000002 → 1.5
    assert "    1.5% of 1000k window" in text and "of 1000k win" in text
    assert text.replace("1000k", "200k").count("of ctx") == 7


def test_window_tokens_not_a_number_prints_nan_and_zero_prints_infinity(tmp_path):
    o = occupancy(tmp_path, F4)
    nan_text = format_occupancy(o, window_tokens=js_number("200_000"))
    assert "   NaN% of NaNk window" in nan_text
    zero_text = format_occupancy(o, window_tokens=0)
    assert "Infinity% of 0k window" in zero_text
    assert "   NaN% of 0k win" in zero_text  # 0 tokens of a 0 window


# --- crash cases (§9.1) ------------------------------------------------------------------------


def test_null_block_in_assistant_content_raises():
    events = [{"type": "assistant", "message": {"id": "m", "content": [None]}}]
    with pytest.raises(TranscriptError, match="null block"):
        compute_occupancy(events, path="run.jsonl")


def test_null_block_in_user_content_raises():
    events = [{"type": "user", "message": {"content": [None]}}]
    with pytest.raises(TranscriptError, match="null block"):
        compute_occupancy(events)


def test_null_element_in_tool_result_content_raises():
    events = [
        {
            "type": "user",
            "message": {
                "content": [{"type": "tool_result", "tool_use_id": "t", "content": [None]}]
            },
        }
    ]
    with pytest.raises(TranscriptError):
        compute_occupancy(events)


@pytest.mark.parametrize("content", [5, True, {"a": 1}])
def test_non_iterable_assistant_content_raises(content):
    events = [{"type": "assistant", "message": {"id": "m", "content": content}}]
    with pytest.raises(TranscriptError, match="run.jsonl"):
        compute_occupancy(events, path="run.jsonl")


@pytest.mark.parametrize("content", [None, "", False, 0])
def test_falsy_assistant_content_contributes_nothing(content):
    events = [{"type": "assistant", "message": {"id": "m", "content": content}}]
    assert compute_occupancy(events).turns == 1


def test_null_inside_other_event_types_is_harmless():
    events = [{"type": "system", "subtype": "init", "message": {"content": [None]}}]
    assert compute_occupancy(events).turns == 0


def test_to_dict_has_the_issue_keys(tmp_path):
    d = occupancy(tmp_path, F4).to_dict()
    assert list(d) == [
        "chars_per_token",
        "calibrated",
        "dispersion",
        "final_context",
        "base_context",
        "residual",
        "contributed",
        "residual_file_access",
        "evicted",
        "compactions",
        "turns",
    ]
    assert list(d["residual"]) == ["codegraph", "read", "search", "bash", "other"]
    assert d["evicted"] == 3500 and d["residual"]["codegraph"] == 500
