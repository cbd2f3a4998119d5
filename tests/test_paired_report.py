"""The descriptive report (spec §7) on built fixtures: nearest rank, tallies, hotspots, caveats."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from evalkit.paired import CAVEATS, build_report, parse_evidence
from evalkit.paired.report import CONDITIONAL_CAVEATS, TABLE_METRICS, tally
from evalkit.stats import describe, nearest_rank
from tests.paired_helpers import collected_evidence, recount, sample_at, samples_of, spec_example


def test_nearest_rank_examples():
    assert nearest_rank([4, 1, 3, 2], 50) == 2
    assert nearest_rank([4, 1, 3, 2], 95) == 4
    assert nearest_rank(list(range(1, 20)), 95) == 19
    assert nearest_rank(list(range(1, 21)), 95) == 19
    assert nearest_rank([], 50) is None
    assert nearest_rank([7], 95) == 7


def test_distribution_with_missing_values():
    d = describe([3, None, 5])
    assert d.to_dict() == {
        "total": None,
        "observed_total": 8,
        "p50": 3,
        "p95": 5,
        "samples": 2,
        "missing": 1,
    }
    assert describe([]).to_dict() == {
        "total": 0,
        "observed_total": 0,
        "p50": None,
        "p95": None,
        "samples": 0,
        "missing": 0,
    }


def test_tally_texts():
    assert tally([-1, 0, 0, 2, None], "lower_is_better").text == (
        "1 of 4 improved, 1 of 4 regressed, 2 of 4 tied; 1 unknown"
    )
    t = tally([-1, -2, 0], "none")
    assert t.text == "2 of 3 lower, 0 of 3 higher, 1 of 3 tied; 0 unknown"
    assert (t.improved, t.regressed) == (None, None)
    assert tally([None, None], "lower_is_better").text == "no known deltas; 2 unknown"


def test_deltas_stay_null_when_one_side_is_null():
    doc = collected_evidence("direct_vs_host")
    sample_at(doc, position=1)["metrics"]["serialized_tool_result_bytes"] = None
    report = build_report(parse_evidence(doc))
    row = report.pairs[0]
    b, c, d = row.values["serialized_tool_result_bytes"]
    assert b is not None and c is None and d is None
    frame = report.pairs_frame()
    col = "serialized_tool_result_bytes.candidate_minus_baseline"
    assert frame[col].dtype == "Int64"
    assert frame[col].isna().tolist()[0] and not frame[col].isna().tolist()[1]
    dist = report.distributions["readonly_review"]["serialized_tool_result_bytes"]
    assert dist["candidate"].missing == 1 and dist["candidate"].total is None
    assert report.tallies["readonly_review"]["serialized_tool_result_bytes"].unknown == 1


def test_hotspot_ordering_on_the_spec_example():
    report = build_report(parse_evidence(spec_example()))
    got = [
        (h.rank, h.category, h.case_id, h.pair, h.lane, h.count, h.to_dict()["label"])
        for h in report.hotspots
    ]
    assert got == [
        (
            1,
            "invalid_argument_or_tool_selection_repairs",
            "readonly_review",
            1,
            "candidate",
            1,
            "candidate; needs inspection",
        ),
        (
            2,
            "same_kind_serial_window_calls",
            "readonly_review",
            1,
            "baseline",
            1,
            "candidate; needs inspection",
        ),
    ]
    assert report.not_evaluable == {
        "invalid_argument_or_tool_selection_repairs": 0,
        "same_kind_serial_window_calls": 0,
        "observe_after_delivered_failure": 0,
    }


def test_hotspots_sort_by_category_then_count_then_location():
    doc = collected_evidence("direct_vs_host")
    sample_at(doc, case_index=2, pair_index=0, position=0)["metrics"]["same_kind_serial_calls"] = 2
    sample_at(doc, case_index=0, pair_index=1, position=1)["metrics"]["same_kind_serial_calls"] = 2
    sample_at(doc, case_index=0, pair_index=0, position=1)["metrics"]["same_kind_serial_calls"] = 5
    s = sample_at(doc, case_index=1)
    s["metrics"]["observe_after_delivered_failure"] = 1
    s["metrics"]["repair_turns"] = 3
    s["metrics"]["repair_turns_by_reason"] = {"tool_selection_repair": 1, "javascript_runtime": 2}
    sample_at(doc, case_index=1, position=1)["metrics"]["repair_turns_by_reason"] = None
    sample_at(doc, case_index=1, position=1)["metrics"]["repair_turns"] = None
    report = build_report(parse_evidence(doc))
    got = [(h.category[:6], h.case_id[:4], h.pair, h.lane, h.count) for h in report.hotspots]
    assert got == [
        ("invali", "guar", 1, "baseline", 1),
        ("same_k", "read", 1, "candidate", 5),
        ("same_k", "read", 2, "baseline", 2),  # pair 2 runs candidate first: position 1
        ("same_k", "long", 1, "baseline", 2),
        ("observ", "guar", 1, "baseline", 1),
    ]
    assert report.not_evaluable["invalid_argument_or_tool_selection_repairs"] == 1


def test_hotspot_lane_order_within_a_pair():
    doc = collected_evidence("direct_vs_host")
    for position in (0, 1):
        sample_at(doc, pair_index=1, position=position)["metrics"]["same_kind_serial_calls"] = 1
    report = build_report(parse_evidence(doc))
    assert [h.lane for h in report.hotspots] == ["baseline", "candidate"]


def test_caveat_order_and_conditions():
    core = [cid for cid, _ in CAVEATS]
    assert len(core) == 11
    report = build_report(parse_evidence(collected_evidence("direct_vs_host")))
    assert [cid for cid, _ in report.caveats] == core
    nested = build_report(parse_evidence(collected_evidence("nested_code_mode")))
    assert [cid for cid, _ in nested.caveats] == [*core, "nested_isolated"]
    scripted = build_report(
        parse_evidence(collected_evidence("tool_selection", driver_kind="scripted"))
    )
    assert [cid for cid, _ in scripted.caveats] == [
        *core,
        "selection_admission_only",
        "scripted_not_real_model",
    ]
    assert [cid for cid, _ in CONDITIONAL_CAVEATS] == [
        "composition_permitted_not_required",
        "nested_isolated",
        "selection_admission_only",
        "reconstructed_not_verifiable",
        "scripted_not_real_model",
        "instrumentation_changed",
    ]


def test_host_policy_labels_never_say_direct():
    report = build_report(parse_evidence(collected_evidence("host_cell_policy")))
    d = report.to_dict()
    assert d["delta_name"] == "candidate_minus_baseline"
    assert "Direct" not in json.dumps(d["lanes"])
    assert not any("Direct" in c or "direct" in c for c in report.pairs_frame().columns)
    assert "Direct" not in report.render_text()
    assert "Direct" not in " ".join(report.published_style_table().columns)
    assert report.to_dict()["lanes"]["baseline"]["label"] == "Host single-call"


def test_direct_vs_host_lanes_and_no_cell_block():
    report = build_report(parse_evidence(collected_evidence("direct_vs_host")))
    assert report.lanes["baseline"]["label"] == "Direct"
    assert report.to_dict()["host_cells"] is None
    assert list(report.published_style_table().columns) == [
        "Task",
        "Pair",
        "Calls",
        "Result bytes",
        "Job observes",
    ]


def test_host_cells_use_the_attestation():
    report = build_report(parse_evidence(collected_evidence("host_cell_policy")))
    cells = report.to_dict()["host_cells"]
    assert cells["independently_verified"] is False
    candidates = [s for s in cells["samples"] if s["lane"] == "candidate"]
    assert {s["multi_call_cells"] for s in candidates} == {1}
    assert {s["max_calls_per_cell"] for s in candidates} == {2}
    assert cells["summary"]["composition_observed"] == 9
    assert cells["summary"]["single_call_samples_with_shared_cells"] == 0


def test_unqualified_pairs_are_shown_but_not_pooled():
    doc = collected_evidence("direct_vs_host")
    sample_at(doc)["status"] = "partial"
    recount(doc)
    report = build_report(parse_evidence(doc))
    assert [r.qualified for r in report.pairs][:2] == [False, True]
    assert report.pairs[0].baseline_status == "partial"
    assert report.distributions["readonly_review"]["outer_calls"]["baseline"].samples == 2
    assert report.distributions["overall"]["outer_calls"]["baseline"].samples == 8


def test_missing_lane_sample_row():
    doc = collected_evidence("direct_vs_host")
    doc["cases"][0]["pairs"][0]["samples"][1] = None
    recount(doc)
    report = build_report(parse_evidence(doc))
    row = report.pairs[0]
    assert row.candidate_status is None and row.qualified is False
    assert row.values["outer_calls"][1] is None
    assert report.published_style_table().iloc[0]["Calls"] == "4 / unknown"


def test_instrumentation_row_value_and_change_flag():
    doc = collected_evidence("direct_vs_host")
    for s in samples_of(doc):
        s["instrumentation"] = ["original_v4", "no_dispatch_guard"]
    report = build_report(parse_evidence(doc))
    assert report.instrumentation_changed_across_pairs is False
    assert report.pairs_frame()["instrumentation"].iloc[0] == "original_v4+no_dispatch_guard"
    sample_at(doc, pair_index=2, position=0)["instrumentation"] = "other"
    report = build_report(parse_evidence(doc))
    assert report.instrumentation_changed_across_pairs is True
    assert report.pairs[2].instrumentation is None
    assert pd.isna(report.pairs_frame()["instrumentation"].iloc[2])
    assert "noncomparable_source" in report.strict.reasons


def test_samples_frame_types():
    report = build_report(parse_evidence(spec_example()))
    frame = report.samples_frame()
    assert len(frame) == 2
    for metric in TABLE_METRICS:
        assert frame[metric].dtype == "Int64"
    assert frame["repair_turns_by_reason.invalid_arguments"].tolist() == [0, 1]
    assert frame["empty_cells"].isna().tolist() == [True, False]
    assert frame["efficiency_attested"].tolist() == [True, True]
    assert frame["cells_attested"].tolist() == [True, True]
    assert frame["runtime_gates.workspace_clean"].tolist() == [True, True]


def test_report_holds_no_floats():
    report = build_report(parse_evidence(spec_example()))

    def walk(value):
        assert not isinstance(value, float)
        if isinstance(value, dict):
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    walk(report.to_dict())


def test_tool_selection_report():
    doc = collected_evidence("tool_selection")
    doc["cases"][0]["repetitions"][1]["correctness"] = None
    report = build_report(parse_evidence(doc))
    d = report.to_dict()
    assert d["lanes"] is None and d["delta_name"] is None and d["tallies"] is None
    assert d["pairs"] == [] and d["host_cells"] is None
    assert (d["selection_variant"], d["selection_surface"]) == ("host_code_mode", "host_code_mode")
    reps = d["repetitions"]
    assert len(reps) == 12
    assert [(r["case_id"], r["repetition"]) for r in reps[:3]] == [
        ("selection_single_read", 1),
        ("selection_single_read", 2),
        ("selection_single_read", 3),
    ]
    assert [r["qualified"] for r in reps[:3]] == [True, False, True]
    assert reps[1]["status"] == "partial"
    dist = d["distributions"]["selection_single_read"]["outer_calls"]
    assert list(dist) == ["value"]
    assert dist["value"] == {
        "total": 8,
        "observed_total": 8,
        "p50": 3,
        "p95": 5,
        "samples": 2,
        "missing": 0,
    }
    with pytest.raises(ValueError):
        report.published_style_table()
    assert "selection_single_read" in report.render_text()


@pytest.mark.parametrize(
    "module",
    ["evalkit.paired", "evalkit.paired.manifest", "evalkit.paired.gate", "evalkit.paired.report"],
)
def test_docstring_examples_run(module):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(module))
    assert result.failed == 0 and result.attempted > 0


def test_tidy_frames_carry_the_report_numbers():
    report = build_report(parse_evidence(spec_example()))
    dist = report.distributions_frame()
    row = dist[
        (dist.scope == "readonly_review")
        & (dist.metric == "outer_calls")
        & (dist.series == "candidate")
    ]
    assert row[["total", "p50", "p95", "samples", "missing"]].iloc[0].tolist() == [4, 4, 4, 1, 0]
    assert dist["total"].dtype == "Int64"
    tallies = report.tallies_frame()
    outer = tallies[(tallies.scope == "overall") & (tallies.metric == "outer_calls")].iloc[0]
    assert outer["text"] == "0 of 1 improved, 1 of 1 regressed, 0 of 1 tied; 0 unknown"
    assert report.hotspots_frame()["category"].tolist() == [
        "invalid_argument_or_tool_selection_repairs",
        "same_kind_serial_window_calls",
    ]
    findings = report.strict.findings_frame()
    assert findings["reason"].tolist() == ["missing_case", "missing_case"]
    assert findings["case_id"].tolist() == ["guarded_multi_file_edit", "long_validation_handoff"]
