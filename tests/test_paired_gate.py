"""Strict gate (spec §6): one mutation per reason code, effects, sort order, reconstruction."""

from __future__ import annotations

import pytest

from evalkit.paired import Expected, parse_evidence, strict_check
from evalkit.paired.gate import REASON_CODES, SAMPLE_EFFECTS
from tests.paired_helpers import (
    DIGEST,
    OTHER_COMMIT,
    collected_evidence,
    mutated,
    recount,
    sample_at,
    samples_of,
    sha,
)

EXPERIMENTS = ("direct_vs_host", "host_cell_policy", "nested_code_mode", "tool_selection")


@pytest.mark.parametrize("experiment", EXPERIMENTS)
def test_valid_collected_file_passes(experiment):
    result = strict_check(parse_evidence(collected_evidence(experiment)))
    assert result.verdict == "pass"
    assert result.findings == ()
    assert result.qualified_units == result.required_units == result.present_units


# --- mutations: (reason, base experiment, change, expected=None, other reasons allowed)


def _drop_last_case(doc):
    doc["case_ids"].pop()
    doc["cases"].pop()
    recount(doc)


def _drop_pair(doc):
    doc["cases"][0]["pairs"].pop()
    recount(doc)


def _null_lane(doc):
    doc["cases"][0]["pairs"][0]["samples"][1] = None
    recount(doc)


def _status_fail(doc):
    sample_at(doc)["status"] = "fail"
    recount(doc)


def _set(path, value):
    def change(doc):
        target = sample_at(doc)
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return change


def _guarded_oracle_failed(doc):
    sample_at(doc, case_index=1)["fixture_oracle"]["passed"] = False


def _fingerprint_everywhere(doc):
    entry = doc["cases"][0]
    entry["case_fingerprint"] = sha("another case definition")
    for pair in entry["pairs"]:
        for s in pair["samples"]:
            s["efficiency_attestation"]["case_fingerprint"] = entry["case_fingerprint"]


def _digest_everywhere(doc):
    doc["model_config_digest"] = sha("a different configuration")
    for s in samples_of(doc):
        s["efficiency_attestation"]["model_config_digest"] = doc["model_config_digest"]


def _policy_swapped(doc):
    s = sample_at(doc)  # pair 1 baseline: single-call
    s["policy"] = "host_composition_allowed"
    s["host_cell_attestation"]["policy"] = "host_composition_allowed"


def _direct_in_host(doc):
    s = sample_at(doc)
    s["variant"] = s["surface"] = "direct"
    s["efficiency_attestation"]["variant"] = s["efficiency_attestation"]["surface"] = "direct"


def _duplicate_cell_id(doc):
    cells = sample_at(doc)["host_cell_attestation"]["cells"]
    cells[1]["cell_id_sha256"] = cells[0]["cell_id_sha256"]


def _merge_cells(doc):
    s = sample_at(doc)  # baseline, single-call
    cells = s["host_cell_attestation"]["cells"]
    cells[0]["tool_trace_ids_sha256"] += cells.pop(1)["tool_trace_ids_sha256"]
    s["metrics"]["nonempty_cells"] = len(cells)


def _tamper_counts(doc):
    doc["status_counts"]["pass"] += 1


def _reconstructed(doc):
    doc["provenance"] = {
        "source": "reconstructed_from_published_summary",
        "driver_kind": None,
        "note": "typed in",
    }


def _instrumentation_differs(doc):
    sample_at(doc, position=0)["instrumentation"] = "original_v4"
    sample_at(doc, position=1)["instrumentation"] = "verbatim-recursion-reminder-v1"


MUTATIONS = [
    ("missing_case", "host_cell_policy", _drop_last_case, None),
    ("missing_pair", "host_cell_policy", _drop_pair, None),
    ("missing_lane_sample", "host_cell_policy", _null_lane, None),
    ("pair_count_out_of_range", "tool_selection", None, "repetition_count=11"),
    ("nonpass_status", "host_cell_policy", _status_fail, None),
    ("attestation_missing", "host_cell_policy", _set(["efficiency_attestation"], None), None),
    (
        "attestation_fields",
        "host_cell_policy",
        _set(["efficiency_attestation", "extra"], "SENTINEL"),
        None,
    ),
    (
        "attestation_mismatch",
        "host_cell_policy",
        _set(["efficiency_attestation", "base_revision"], OTHER_COMMIT),
        None,
    ),
    ("fixture_oracle_failed", "host_cell_policy", _guarded_oracle_failed, None),
    (
        "runtime_contract_unproven",
        "host_cell_policy",
        _set(["runtime_gates", "workspace_clean"], False),
        None,
    ),
    ("correctness_missing", "host_cell_policy", _set(["correctness"], None), None),
    (
        "correctness_failed",
        "host_cell_policy",
        _set(["correctness", "task_verdict"], "fail"),
        None,
    ),
    ("canonical_audit_missing", "host_cell_policy", _set(["metrics", "outer_calls"], None), None),
    ("noncomparable_source", "host_cell_policy", _instrumentation_differs, None),
    ("noncomparable_case", "host_cell_policy", _fingerprint_everywhere, None),
    ("model_config_mismatch", "host_cell_policy", _digest_everywhere, "expect_digest"),
    ("mixed_experiment", "direct_vs_host", _set(["policy"], "host_single_call"), None),
    ("policy_changed", "host_cell_policy", _policy_swapped, None),
    ("direct_sample_in_host_policy", "host_cell_policy", _direct_in_host, None),
    ("cell_evidence_missing", "host_cell_policy", _set(["host_cell_attestation"], None), None),
    ("cell_ids_not_unique", "host_cell_policy", _duplicate_cell_id, None),
    (
        "cell_coverage_incomplete",
        "host_cell_policy",
        _set(["host_cell_attestation", "complete_tool_call_coverage"], False),
        None,
    ),
    ("single_call_violation", "host_cell_policy", _merge_cells, None),
    ("status_counts_mismatch", "host_cell_policy", _tamper_counts, None),
    ("unverifiable_reconstruction", "host_cell_policy", _reconstructed, None),
]


def test_mutation_suite_covers_every_reason_code():
    assert sorted(m[0] for m in MUTATIONS) == sorted(REASON_CODES)


def _run_mutation(experiment, change, special):
    doc = collected_evidence(experiment)
    expected = None
    if special == "repetition_count=11":
        doc["repetition_count"] = 11
    elif special == "expect_digest":
        expected = Expected(model_config_digest=DIGEST)
    if change is not None:
        doc = mutated(doc, change)
    return strict_check(parse_evidence(doc), expected=expected)


@pytest.mark.parametrize(("reason", "experiment", "change", "special"), MUTATIONS)
def test_each_mutation_is_reported_with_its_code(reason, experiment, change, special):
    result = _run_mutation(experiment, change, special)
    assert reason in result.reasons
    assert result.verdict != "pass"
    # The mutation causes its own code; only these companions may come with it.
    companions = {
        "pair_count_out_of_range": {"missing_pair"},
        "missing_lane_sample": set(),
    }.get(reason, set())
    assert set(result.reasons) <= {reason} | companions


SAMPLE_MUTATIONS = [m for m in MUTATIONS if m[0] in SAMPLE_EFFECTS and m[0] != "noncomparable_case"]


@pytest.mark.parametrize(("reason", "experiment", "change", "special"), SAMPLE_MUTATIONS)
def test_sample_effects_lower_the_effective_status(reason, experiment, change, special):
    effect = SAMPLE_EFFECTS[reason]
    result = _run_mutation(experiment, change, special)
    f = next(f for f in result.findings if f.reason == reason and f.level == "sample")
    outcome = next(
        o
        for o in result.outcomes
        if (o.case_id, o.pair, o.repetition, o.lane) == (f.case_id, f.pair, f.repetition, f.lane)
    )
    assert outcome.recorded_status == "pass"
    assert outcome.effective_status == effect
    assert not result.is_qualified(f.case_id, f.pair or f.repetition)


def test_nonpass_sample_gets_only_nonpass_status_and_keeps_its_status():
    doc = mutated(collected_evidence(), _status_fail)
    sample_at(doc)["correctness"] = None  # would be correctness_missing if it were checked
    result = strict_check(parse_evidence(doc))
    assert result.reasons == ("nonpass_status",)
    assert result.findings[0].detail == "fail"
    assert result.effective_status_counts["fail"] == 1
    assert result.qualified_units == 8


def test_status_counts_are_recounted_not_trusted():
    doc = collected_evidence()
    doc["status_counts"] = {"fail": 0, "partial": 0, "pass": 0, "unsupported": 0}
    result = strict_check(parse_evidence(doc))
    assert result.reasons == ("status_counts_mismatch",)
    assert result.recorded_status_counts["pass"] == 18


def test_scripted_file_never_passes():
    result = strict_check(parse_evidence(collected_evidence(driver_kind="scripted")))
    assert result.verdict == "fail"
    assert result.findings[0].detail == "scripted_driver"
    # File-level findings do not disqualify units.
    assert result.qualified_units == 9


def test_expected_revisions_are_pinned():
    ev = parse_evidence(collected_evidence())
    result = strict_check(
        ev, expected={"base_revision": OTHER_COMMIT, "fixture_revision": OTHER_COMMIT}
    )
    assert [(f.reason, f.field) for f in result.findings] == [
        ("noncomparable_source", "base_revision"),
        ("noncomparable_source", "fixture_revision"),
    ]


def test_findings_are_sorted_by_location_then_reason():
    doc = collected_evidence()
    doc["cases"][2]["pairs"][1]["samples"][0]["correctness"] = None  # long p2 candidate
    doc["cases"][0]["pairs"][0]["samples"][1]["runtime_gates"]["workspace_clean"] = None
    doc["cases"][0]["pairs"][0]["samples"][0]["efficiency_attestation"] = None
    doc["cases"][0]["pairs"][0]["samples"][0]["runtime_gates"]["runtime_evidence"] = False
    doc["cases"][1]["pairs"].pop()  # guarded pair 3 missing
    doc["status_counts"]["fail"] = 3  # and stored counts that no longer add up
    doc["cases"][0]["case_fingerprint"] = sha("changed")
    result = strict_check(parse_evidence(doc))
    got = [(f.reason, f.case_id, f.pair, f.lane, f.field) for f in result.findings]
    assert got == [
        ("status_counts_mismatch", None, None, None, "status_counts"),
        ("noncomparable_case", "readonly_review", None, None, "case_fingerprint"),
        ("attestation_missing", "readonly_review", 1, "baseline", "efficiency_attestation"),
        ("runtime_contract_unproven", "readonly_review", 1, "baseline", "runtime_evidence"),
        (
            "attestation_mismatch",
            "readonly_review",
            1,
            "candidate",
            "efficiency_attestation.case_fingerprint",
        ),
        ("runtime_contract_unproven", "readonly_review", 1, "candidate", "workspace_clean"),
        # every other readonly sample attests the old fingerprint
        *[
            (
                "attestation_mismatch",
                "readonly_review",
                p,
                lane,
                "efficiency_attestation.case_fingerprint",
            )
            for p in (2, 3)
            for lane in ("baseline", "candidate")
        ],
        ("missing_pair", "guarded_multi_file_edit", 3, None, None),
        ("correctness_missing", "long_validation_handoff", 2, "candidate", "correctness"),
    ]
    details = {f.reason + ":" + str(f.field): f.detail for f in result.findings}
    assert details["runtime_contract_unproven:runtime_evidence"] == "false"
    assert details["runtime_contract_unproven:workspace_clean"] == "unproven"
    assert details["correctness_missing:correctness"] == "no_external_verdict"


@pytest.mark.parametrize(
    ("validation_required_case", "verdict", "reason", "detail"),
    [
        (2, "unavailable", "correctness_missing", "required_validation_unproven"),
        (2, "not_required", "correctness_missing", "required_validation_unproven"),
        (2, "fail", "correctness_failed", None),
        (0, "unavailable", "correctness_missing", None),
        (0, "fail", "correctness_failed", None),
    ],
)
def test_validation_verdict_rules(validation_required_case, verdict, reason, detail):
    doc = collected_evidence()
    sample_at(doc, case_index=validation_required_case)["correctness"]["validation_verdict"] = (
        verdict
    )
    result = strict_check(parse_evidence(doc))
    assert [(f.reason, f.field, f.detail) for f in result.findings] == [
        (reason, "validation_verdict", detail)
    ]


def test_task_verdict_unavailable_and_oracle_unavailable():
    doc = collected_evidence()
    sample_at(doc)["correctness"]["task_verdict"] = "unavailable"
    sample_at(doc, case_index=1)["fixture_oracle"] = {"available": False, "passed": None}
    result = strict_check(parse_evidence(doc))
    assert [(f.reason, f.detail) for f in result.findings] == [
        ("correctness_missing", "task_verdict_unavailable"),
        ("fixture_oracle_failed", "oracle_unavailable"),
    ]


def test_zero_outer_calls_is_an_unproven_contract():
    doc = collected_evidence("direct_vs_host")
    s = sample_at(doc)
    s["metrics"]["outer_calls"] = 0
    s["outer_call_ids_sha256"] = []
    result = strict_check(parse_evidence(doc))
    assert [(f.reason, f.field, f.detail) for f in result.findings] == [
        ("runtime_contract_unproven", "outer_calls", "no_outer_calls")
    ]


def test_nested_surface_must_match_case_definition():
    doc = collected_evidence("nested_code_mode")
    s = sample_at(doc, position=1)  # pair 1 candidate
    s["surface"] = s["efficiency_attestation"]["surface"] = "validation"
    result = strict_check(parse_evidence(doc))
    assert [(f.reason, f.field, f.lane) for f in result.findings] == [
        ("noncomparable_case", "surface", "candidate")
    ]
    assert result.outcome(parse_evidence(doc).cases[0].pairs[0].samples[1]).effective_status == (
        "fail"
    )
    assert result.qualified_units == 8


def test_tool_selection_samples_must_share_variant():
    doc = collected_evidence("tool_selection")
    s = doc["cases"][1]["repetitions"][0]
    s["variant"] = s["surface"] = "direct"
    s["efficiency_attestation"]["variant"] = s["efficiency_attestation"]["surface"] = "direct"
    result = strict_check(parse_evidence(doc))
    assert [(f.reason, f.detail) for f in result.findings] == [
        ("mixed_experiment", "variant_differs_across_samples")
    ]


def test_tool_selection_without_digest_needs_no_attestation_but_rejects_one():
    doc = collected_evidence("tool_selection")
    doc["model_config_digest"] = None
    for s in samples_of(doc):
        s["efficiency_attestation"] = None
    assert strict_check(parse_evidence(doc)).verdict == "pass"
    doc["cases"][0]["repetitions"][0]["efficiency_attestation"] = {
        "model_config_digest": DIGEST,
        "base_revision": doc["base_revision"],
        "case_fingerprint": doc["cases"][0]["case_fingerprint"],
        "variant": "host_code_mode",
        "surface": "host_code_mode",
    }
    result = strict_check(parse_evidence(doc))
    assert [(f.reason, f.field) for f in result.findings] == [
        ("attestation_mismatch", "efficiency_attestation.model_config_digest")
    ]


def test_cell_data_outside_host_policy_is_mixed_experiment():
    doc = collected_evidence("direct_vs_host")
    sample_at(doc)["metrics"]["nonempty_cells"] = 3
    result = strict_check(parse_evidence(doc))
    assert [(f.reason, f.field) for f in result.findings] == [
        ("mixed_experiment", "nonempty_cells")
    ]


def test_reconstructed_collected_style_file_lists_missing_evidence():
    doc = mutated(collected_evidence(), _reconstructed)
    doc["cases"][0]["case_fingerprint"] = None
    for pair in doc["cases"][0]["pairs"]:
        for s in pair["samples"]:
            s["efficiency_attestation"] = None
            s["host_cell_attestation"] = None
    result = strict_check(parse_evidence(doc))
    assert result.verdict == "unverifiable"
    assert result.reasons == ("unverifiable_reconstruction",)
    assert [m.to_dict() for m in result.findings[0].missing_evidence] == [
        {"evidence": "case_fingerprint", "count": 1},
        {"evidence": "driver_receipts", "count": 18},
        {"evidence": "efficiency_attestation", "count": 6},
        {"evidence": "host_cell_attestation", "count": 6},
    ]
    # Folded findings neither lower statuses nor disqualify units.
    assert result.qualified_units == 9
    # Any other finding makes it a fail.
    doc["status_counts"]["pass"] = 0
    assert strict_check(parse_evidence(doc)).verdict == "fail"


# Transcribed from the spec's §6.2 table (code, effect on the sample), independent of gate.py, so
# a dropped, renamed or reordered code, or a changed effect, fails here.
SPEC_6_2 = [
    ("missing_case", None),
    ("missing_pair", None),
    ("missing_lane_sample", None),
    ("pair_count_out_of_range", None),
    ("nonpass_status", None),
    ("attestation_missing", "fail"),
    ("attestation_fields", "fail"),
    ("attestation_mismatch", "fail"),
    ("fixture_oracle_failed", "fail"),
    ("runtime_contract_unproven", "partial"),
    ("correctness_missing", "partial"),
    ("correctness_failed", "fail"),
    ("canonical_audit_missing", "partial"),
    ("noncomparable_source", None),
    ("noncomparable_case", "fail"),
    ("model_config_mismatch", None),
    ("mixed_experiment", "fail"),
    ("policy_changed", "fail"),
    ("direct_sample_in_host_policy", "fail"),
    ("cell_evidence_missing", "partial"),
    ("cell_ids_not_unique", "partial"),
    ("cell_coverage_incomplete", "partial"),
    ("single_call_violation", "fail"),
    ("status_counts_mismatch", None),
    ("unverifiable_reconstruction", None),
]


def test_reason_codes_and_sample_effects_are_the_spec_table():
    assert list(REASON_CODES) == [code for code, _ in SPEC_6_2]
    assert SAMPLE_EFFECTS == {code: effect for code, effect in SPEC_6_2 if effect}
    assert sorted(m[0] for m in MUTATIONS) == sorted(code for code, _ in SPEC_6_2)
