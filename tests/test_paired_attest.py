"""Attestation checks (spec §4) and privacy: no attestation value is ever echoed."""

from __future__ import annotations

import copy
import inspect
import json

import pytest

import evalkit.paired.attest as attest_module
from evalkit.paired import build_report, parse_evidence, strict_check
from evalkit.paired.attest import (
    cell_counts,
    check_efficiency_attestation,
    check_host_cell_attestation,
    efficiency_attestation_error,
    host_cell_attestation_error,
)
from tests.paired_helpers import BASE, DIGEST, SENTINEL, collected_evidence, sample_at, sha

EXPECTED = {
    "model_config_digest": DIGEST,
    "base_revision": BASE,
    "case_fingerprint": sha("case"),
    "variant": "host_code_mode",
    "surface": "host_code_mode",
}


def _codes(findings):
    return [(f.reason, f.field) for f in findings]


# --- efficiency (§4.2)


def test_efficiency_attestation_checks_in_order():
    assert check_efficiency_attestation(dict(EXPECTED), expected=EXPECTED) == ()
    assert _codes(check_efficiency_attestation(None, expected=EXPECTED)) == [
        ("attestation_missing", "efficiency_attestation")
    ]
    assert check_efficiency_attestation(None, expected=EXPECTED, required=False) == ()
    assert _codes(check_efficiency_attestation([1], expected=EXPECTED)) == [
        ("attestation_fields", "efficiency_attestation")
    ]
    missing = {k: v for k, v in EXPECTED.items() if k != "variant"}
    assert _codes(check_efficiency_attestation(missing, expected=EXPECTED)) == [
        ("attestation_fields", "efficiency_attestation.variant")
    ]
    extra = {**EXPECTED, SENTINEL: "x"}
    assert _codes(check_efficiency_attestation(extra, expected=EXPECTED)) == [
        ("attestation_fields", None)
    ]
    typed = {**EXPECTED, "surface": 1, "variant": "direct"}  # type error stops the checks
    assert _codes(check_efficiency_attestation(typed, expected=EXPECTED)) == [
        ("attestation_fields", "efficiency_attestation.surface")
    ]
    wrong = {**EXPECTED, "surface": SENTINEL, "model_config_digest": SENTINEL}
    assert _codes(check_efficiency_attestation(wrong, expected=EXPECTED)) == [
        ("attestation_mismatch", "efficiency_attestation.model_config_digest"),
        ("attestation_mismatch", "efficiency_attestation.surface"),
    ]
    upper = {**EXPECTED, "base_revision": BASE.upper()}  # hex case is a mismatch, not an alias
    assert _codes(check_efficiency_attestation(upper, expected=EXPECTED)) == [
        ("attestation_mismatch", "efficiency_attestation.base_revision")
    ]


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (None, "driver result lacks efficiency_attestation"),
        ("x", "efficiency_attestation must be a JSON object"),
        (
            {"base_revision": BASE},
            "efficiency_attestation lacks required field model_config_digest",
        ),
        ({**EXPECTED, SENTINEL: 1}, "efficiency_attestation contains unsupported fields"),
        ({**EXPECTED, "variant": 3}, "efficiency_attestation.variant must be a string"),
        (
            {**EXPECTED, "surface": SENTINEL},
            "efficiency_attestation.surface does not match the run",
        ),
        (dict(EXPECTED), None),
    ],
)
def test_collector_efficiency_messages(value, message):
    assert efficiency_attestation_error({"efficiency_attestation": value}, expected=EXPECTED) == (
        message
    )


# --- host cells (§4.3)


def _cells(*groups, coverage=True, policy="host_composition_allowed"):
    return {
        "policy": policy,
        "source": "caller_ui_attestation",
        "ui_evidence_sha256": sha("ui"),
        "complete_tool_call_coverage": coverage,
        "cells": [
            {"cell_id_sha256": sha(f"cell{i}"), "tool_trace_ids_sha256": list(g)}
            for i, g in enumerate(groups)
        ],
    }


A, B, C = sha("a"), sha("b"), sha("c")
MEASURED = sorted([A, B, C])


def _check(att, *, policy="host_composition_allowed", measured=MEASURED, nonempty=None, empty=None):
    counts = cell_counts(att)
    return check_host_cell_attestation(
        att,
        policy=policy,
        outer_call_ids_sha256=measured,
        nonempty_cells=counts.nonempty_cells if nonempty is None and counts else nonempty,
        empty_cells=counts.empty_cells if empty is None and counts else empty,
    )


def test_empty_cells_are_accepted_under_both_policies():
    for policy in ("host_single_call", "host_composition_allowed"):
        att = _cells([A], [B], [C], [], policy=policy)
        assert _check(att, policy=policy) == ()
        assert cell_counts(att).empty_cells == 1


def test_two_calls_in_one_cell_fail_only_under_single_call():
    comp = _cells([A, B], [C])
    assert _check(comp) == ()
    single = _cells([A, B], [C], policy="host_single_call")
    assert _codes(_check(single, policy="host_single_call")) == [
        ("single_call_violation", "host_cell_attestation.cells")
    ]


def test_cell_findings():
    assert _codes(_check(None)) == [("cell_evidence_missing", "host_cell_attestation")]
    dup_call = _cells([A, B], [B, C])
    assert ("cell_ids_not_unique", "tool_trace_ids_sha256") in _codes(_check(dup_call))
    dup_cell = _cells([A], [B], [C])
    dup_cell["cells"][1]["cell_id_sha256"] = dup_cell["cells"][0]["cell_id_sha256"]
    assert _codes(_check(dup_cell)) == [("cell_ids_not_unique", "cell_id_sha256")]
    unmeasured = _cells([A], [B], [C], [sha("d")])
    assert [f.detail for f in _check(unmeasured)] == ["attested_calls_not_measured"]
    unattested = _cells([A], [B])
    assert [f.detail for f in _check(unattested)] == ["calls_not_attested"]
    assert [f.detail for f in _check(_cells([A], [B], [C]), nonempty=4)] == ["cell_count_disagrees"]
    # Absent empty cells are unknown, not zero: a stored 0 disagrees with the attestation.
    assert [(f.field, f.detail) for f in _check(_cells([A], [B], [C]), empty=0)] == [
        ("empty_cells", "cell_count_disagrees")
    ]
    assert [f.detail for f in _check(_cells([A], [B], [C], coverage=False))] == [
        "coverage_not_claimed"
    ]
    assert _codes(_check(_cells([A], [B], [C]), measured=None)) == [
        ("canonical_audit_missing", "outer_call_ids_sha256")
    ]
    wrong = _cells([A], [B], [C])
    wrong["policy"], wrong["source"] = "host_single_call", SENTINEL
    assert _codes(_check(wrong)) == [
        ("attestation_mismatch", "host_cell_attestation.policy"),
        ("attestation_mismatch", "host_cell_attestation.source"),
    ]


@pytest.mark.parametrize(
    "change",
    [
        lambda a: a.pop("cells"),
        lambda a: a.update(extra=SENTINEL),
        lambda a: a.update(ui_evidence_sha256=SENTINEL),
        lambda a: a.update(complete_tool_call_coverage="yes"),
        lambda a: a.update(cells={}),
        lambda a: a["cells"].append("cell"),
        lambda a: a["cells"][0].update(extra=1),
        lambda a: a["cells"][0].update(cell_id_sha256=sha("x").upper()),
        lambda a: a["cells"][0].update(tool_trace_ids_sha256=[SENTINEL]),
    ],
)
def test_structural_problems_are_attestation_fields_and_stop(change):
    att = _cells([A], [B], [C])
    change(att)
    findings = _check(att, nonempty=3)
    assert [f.reason for f in findings] == ["attestation_fields"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda a: None, None),
        (
            lambda a: a.update(policy="host_single_call"),
            "host_cell_attestation.policy does not match the run",
        ),
        (
            lambda a: a.update(source=SENTINEL),
            "host_cell_attestation.source must be caller_ui_attestation",
        ),
        (
            lambda a: a.update(complete_tool_call_coverage=False),
            "host_cell_attestation.complete_tool_call_coverage must be true",
        ),
        (lambda a: a.update(extra=SENTINEL), "host_cell_attestation contains unsupported fields"),
        (
            lambda a: a["cells"][1]["tool_trace_ids_sha256"].append(A),
            "host_cell_attestation call identities must be unique",
        ),
        (
            lambda a: a["cells"].pop(),
            "host_cell_attestation does not cover every measured outer call exactly once",
        ),
        (
            lambda a: a["cells"][0].update(cell_id_sha256="x"),
            "host_cell_attestation.cells[0].cell_id_sha256 must be an exact lowercase 64-hex SHA-256",
        ),
    ],
)
def test_collector_host_cell_messages(change, message):
    att = _cells([A, B], [C])
    change(att)
    got = host_cell_attestation_error(
        {"host_cell_attestation": att},
        policy="host_composition_allowed",
        outer_call_ids_sha256=MEASURED,
    )
    assert got == message
    single = _cells([A, B], [C], policy="host_single_call")
    assert (
        host_cell_attestation_error(
            {"host_cell_attestation": single},
            policy="host_single_call",
            outer_call_ids_sha256=MEASURED,
        )
        == "host_single_call requires exactly one WebCodex call per non-empty cell"
    )


# --- privacy and no inference (§10 item 8)


def test_sentinels_never_reach_findings_reports_or_output(capsys, tmp_path):
    doc = collected_evidence()
    s0 = sample_at(doc)
    s0["efficiency_attestation"]["surface"] = SENTINEL  # mismatched value
    s1 = sample_at(doc, pair_index=1)
    s1["efficiency_attestation"][SENTINEL] = SENTINEL  # extra field
    s2 = sample_at(doc, pair_index=2)
    s2["host_cell_attestation"]["source"] = SENTINEL
    s2["host_cell_attestation"][SENTINEL] = 1
    evidence = parse_evidence(copy.deepcopy(doc))
    result = strict_check(evidence)
    assert {"attestation_mismatch", "attestation_fields"} <= set(result.reasons)
    assert SENTINEL not in json.dumps(result.to_dict())
    report = build_report(evidence)
    assert SENTINEL not in report.to_json()
    assert SENTINEL not in report.render_text()
    assert SENTINEL not in report.samples_frame().to_csv()

    from evalkit.cli import main

    path = tmp_path / "e.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    for argv in (
        ["pairs", "check", str(path), "--strict"],
        ["pairs", "report", str(path), "--json"],
    ):
        main(argv)
        out, err = capsys.readouterr()
        assert SENTINEL not in out + err


def test_cell_logic_reads_no_timing_or_window_data():
    source = inspect.getsource(attest_module).lower()
    for word in ("_at_ms", "timestamp", "window"):
        assert word not in source
