"""The bundled 2026-10-17 Host-policy baseline (spec §9.5) and the issue's acceptance table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalkit.paired import (
    PUBLISHED_BASELINE,
    build_report,
    dump_evidence,
    load_published_baseline,
    strict_check,
)
from evalkit.paired.report import TABLE_METRICS, render_published_style_table

SEED = Path("/work/shared/seeds/003_307bf915ee472b5e.txt")

# The seed's table, verbatim (the design prints it with single spaces between cells).
SEED_TABLE = """\
Task Pair Calls Result bytes Job observes Attested nonempty cells
readonly_review 1 9 / 9 163,826 / 208,012 0 / 0 9 / 6
readonly_review 2 13 / 10 171,795 / 209,455 0 / 0 13 / 7
readonly_review 3 9 / 9 177,812 / 221,575 0 / 0 9 / 6
guarded_multi_file_edit 1 6 / 6 25,576 / 25,627 0 / 0 6 / 5
guarded_multi_file_edit 2 6 / 6 25,576 / 25,576 0 / 0 6 / 6
guarded_multi_file_edit 3 6 / 6 26,613 / 25,464 0 / 0 6 / 6
long_validation_handoff 1 10 / 8 91,903 / 84,197 2 / 2 10 / 8
long_validation_handoff 2 7 / 6 64,934 / 79,107 1 / 1 7 / 6
long_validation_handoff 3 6 / 6 81,267 / 78,373 1 / 1 6 / 6
"""

# Spec §9.1, machine form.
MACHINE_ROWS = [
    ["readonly_review", 1, 9, 9, 163826, 208012, 0, 0, 9, 6],
    ["readonly_review", 2, 13, 10, 171795, 209455, 0, 0, 13, 7],
    ["readonly_review", 3, 9, 9, 177812, 221575, 0, 0, 9, 6],
    ["guarded_multi_file_edit", 1, 6, 6, 25576, 25627, 0, 0, 6, 5],
    ["guarded_multi_file_edit", 2, 6, 6, 25576, 25576, 0, 0, 6, 6],
    ["guarded_multi_file_edit", 3, 6, 6, 26613, 25464, 0, 0, 6, 6],
    ["long_validation_handoff", 1, 10, 8, 91903, 84197, 2, 2, 10, 8],
    ["long_validation_handoff", 2, 7, 6, 64934, 79107, 1, 1, 7, 6],
    ["long_validation_handoff", 3, 6, 6, 81267, 78373, 1, 1, 6, 6],
]
MACHINE_COLUMNS = [
    "outer_calls.baseline",
    "outer_calls.candidate",
    "serialized_tool_result_bytes.baseline",
    "serialized_tool_result_bytes.candidate",
    "job_observe_calls.baseline",
    "job_observe_calls.candidate",
    "nonempty_cells.baseline",
    "nonempty_cells.candidate",
]

# Spec §9.5 distributions: scope | metric | series | total | observed_total | p50 | p95 | samples | missing
DISTRIBUTIONS = """\
| `readonly_review` | `outer_calls` | baseline | 31 | 31 | 9 | 13 | 3 | 0 |
| `readonly_review` | `outer_calls` | candidate | 28 | 28 | 9 | 10 | 3 | 0 |
| `readonly_review` | `outer_calls` | candidate_minus_baseline | -3 | -3 | 0 | 0 | 3 | 0 |
| `readonly_review` | `serialized_tool_result_bytes` | baseline | 513433 | 513433 | 171795 | 177812 | 3 | 0 |
| `readonly_review` | `serialized_tool_result_bytes` | candidate | 639042 | 639042 | 209455 | 221575 | 3 | 0 |
| `readonly_review` | `serialized_tool_result_bytes` | candidate_minus_baseline | 125609 | 125609 | 43763 | 44186 | 3 | 0 |
| `readonly_review` | `job_observe_calls` | baseline | 0 | 0 | 0 | 0 | 3 | 0 |
| `readonly_review` | `job_observe_calls` | candidate | 0 | 0 | 0 | 0 | 3 | 0 |
| `readonly_review` | `job_observe_calls` | candidate_minus_baseline | 0 | 0 | 0 | 0 | 3 | 0 |
| `readonly_review` | `nonempty_cells` | baseline | 31 | 31 | 9 | 13 | 3 | 0 |
| `readonly_review` | `nonempty_cells` | candidate | 19 | 19 | 6 | 7 | 3 | 0 |
| `readonly_review` | `nonempty_cells` | candidate_minus_baseline | -12 | -12 | -3 | -3 | 3 | 0 |
| `readonly_review` | `empty_cells` | baseline | null | 1 | 1 | 1 | 1 | 2 |
| `readonly_review` | `empty_cells` | candidate | null | 1 | 1 | 1 | 1 | 2 |
| `readonly_review` | `empty_cells` | candidate_minus_baseline | null | 0 | null | null | 0 | 3 |
| `guarded_multi_file_edit` | `outer_calls` | baseline | 18 | 18 | 6 | 6 | 3 | 0 |
| `guarded_multi_file_edit` | `outer_calls` | candidate | 18 | 18 | 6 | 6 | 3 | 0 |
| `guarded_multi_file_edit` | `outer_calls` | candidate_minus_baseline | 0 | 0 | 0 | 0 | 3 | 0 |
| `guarded_multi_file_edit` | `serialized_tool_result_bytes` | baseline | 77765 | 77765 | 25576 | 26613 | 3 | 0 |
| `guarded_multi_file_edit` | `serialized_tool_result_bytes` | candidate | 76667 | 76667 | 25576 | 25627 | 3 | 0 |
| `guarded_multi_file_edit` | `serialized_tool_result_bytes` | candidate_minus_baseline | -1098 | -1098 | 0 | 51 | 3 | 0 |
| `guarded_multi_file_edit` | `job_observe_calls` | baseline | 0 | 0 | 0 | 0 | 3 | 0 |
| `guarded_multi_file_edit` | `job_observe_calls` | candidate | 0 | 0 | 0 | 0 | 3 | 0 |
| `guarded_multi_file_edit` | `job_observe_calls` | candidate_minus_baseline | 0 | 0 | 0 | 0 | 3 | 0 |
| `guarded_multi_file_edit` | `nonempty_cells` | baseline | 18 | 18 | 6 | 6 | 3 | 0 |
| `guarded_multi_file_edit` | `nonempty_cells` | candidate | 17 | 17 | 6 | 6 | 3 | 0 |
| `guarded_multi_file_edit` | `nonempty_cells` | candidate_minus_baseline | -1 | -1 | 0 | 0 | 3 | 0 |
| `guarded_multi_file_edit` | `empty_cells` | baseline | null | 0 | null | null | 0 | 3 |
| `guarded_multi_file_edit` | `empty_cells` | candidate | null | 0 | null | null | 0 | 3 |
| `guarded_multi_file_edit` | `empty_cells` | candidate_minus_baseline | null | 0 | null | null | 0 | 3 |
| `long_validation_handoff` | `outer_calls` | baseline | 23 | 23 | 7 | 10 | 3 | 0 |
| `long_validation_handoff` | `outer_calls` | candidate | 20 | 20 | 6 | 8 | 3 | 0 |
| `long_validation_handoff` | `outer_calls` | candidate_minus_baseline | -3 | -3 | -1 | 0 | 3 | 0 |
| `long_validation_handoff` | `serialized_tool_result_bytes` | baseline | 238104 | 238104 | 81267 | 91903 | 3 | 0 |
| `long_validation_handoff` | `serialized_tool_result_bytes` | candidate | 241677 | 241677 | 79107 | 84197 | 3 | 0 |
| `long_validation_handoff` | `serialized_tool_result_bytes` | candidate_minus_baseline | 3573 | 3573 | -2894 | 14173 | 3 | 0 |
| `long_validation_handoff` | `job_observe_calls` | baseline | 4 | 4 | 1 | 2 | 3 | 0 |
| `long_validation_handoff` | `job_observe_calls` | candidate | 4 | 4 | 1 | 2 | 3 | 0 |
| `long_validation_handoff` | `job_observe_calls` | candidate_minus_baseline | 0 | 0 | 0 | 0 | 3 | 0 |
| `long_validation_handoff` | `nonempty_cells` | baseline | 23 | 23 | 7 | 10 | 3 | 0 |
| `long_validation_handoff` | `nonempty_cells` | candidate | 20 | 20 | 6 | 8 | 3 | 0 |
| `long_validation_handoff` | `nonempty_cells` | candidate_minus_baseline | -3 | -3 | -1 | 0 | 3 | 0 |
| `long_validation_handoff` | `empty_cells` | baseline | null | 2 | 1 | 1 | 2 | 1 |
| `long_validation_handoff` | `empty_cells` | candidate | null | 0 | null | null | 0 | 3 |
| `long_validation_handoff` | `empty_cells` | candidate_minus_baseline | null | 0 | null | null | 0 | 3 |
| `overall` | `outer_calls` | baseline | 72 | 72 | 7 | 13 | 9 | 0 |
| `overall` | `outer_calls` | candidate | 66 | 66 | 6 | 10 | 9 | 0 |
| `overall` | `outer_calls` | candidate_minus_baseline | -6 | -6 | 0 | 0 | 9 | 0 |
| `overall` | `serialized_tool_result_bytes` | baseline | 829302 | 829302 | 81267 | 177812 | 9 | 0 |
| `overall` | `serialized_tool_result_bytes` | candidate | 957386 | 957386 | 79107 | 221575 | 9 | 0 |
| `overall` | `serialized_tool_result_bytes` | candidate_minus_baseline | 128084 | 128084 | 51 | 44186 | 9 | 0 |
| `overall` | `job_observe_calls` | baseline | 4 | 4 | 0 | 2 | 9 | 0 |
| `overall` | `job_observe_calls` | candidate | 4 | 4 | 0 | 2 | 9 | 0 |
| `overall` | `job_observe_calls` | candidate_minus_baseline | 0 | 0 | 0 | 0 | 9 | 0 |
| `overall` | `nonempty_cells` | baseline | 72 | 72 | 7 | 13 | 9 | 0 |
| `overall` | `nonempty_cells` | candidate | 56 | 56 | 6 | 8 | 9 | 0 |
| `overall` | `nonempty_cells` | candidate_minus_baseline | -16 | -16 | -1 | 0 | 9 | 0 |
| `overall` | `empty_cells` | baseline | null | 3 | 1 | 1 | 3 | 6 |
| `overall` | `empty_cells` | candidate | null | 1 | 1 | 1 | 1 | 8 |
| `overall` | `empty_cells` | candidate_minus_baseline | null | 0 | null | null | 0 | 9 |
"""

# Spec §9.5 tallies: scope | metric | text
TALLIES = """\
| `readonly_review` | `outer_calls` | `1 of 3 improved, 0 of 3 regressed, 2 of 3 tied; 0 unknown` |
| `readonly_review` | `serialized_tool_result_bytes` | `0 of 3 improved, 3 of 3 regressed, 0 of 3 tied; 0 unknown` |
| `readonly_review` | `job_observe_calls` | `0 of 3 improved, 0 of 3 regressed, 3 of 3 tied; 0 unknown` |
| `readonly_review` | `nonempty_cells` | `3 of 3 lower, 0 of 3 higher, 0 of 3 tied; 0 unknown` |
| `readonly_review` | `empty_cells` | `no known deltas; 3 unknown` |
| `guarded_multi_file_edit` | `outer_calls` | `0 of 3 improved, 0 of 3 regressed, 3 of 3 tied; 0 unknown` |
| `guarded_multi_file_edit` | `serialized_tool_result_bytes` | `1 of 3 improved, 1 of 3 regressed, 1 of 3 tied; 0 unknown` |
| `guarded_multi_file_edit` | `job_observe_calls` | `0 of 3 improved, 0 of 3 regressed, 3 of 3 tied; 0 unknown` |
| `guarded_multi_file_edit` | `nonempty_cells` | `1 of 3 lower, 0 of 3 higher, 2 of 3 tied; 0 unknown` |
| `guarded_multi_file_edit` | `empty_cells` | `no known deltas; 3 unknown` |
| `long_validation_handoff` | `outer_calls` | `2 of 3 improved, 0 of 3 regressed, 1 of 3 tied; 0 unknown` |
| `long_validation_handoff` | `serialized_tool_result_bytes` | `2 of 3 improved, 1 of 3 regressed, 0 of 3 tied; 0 unknown` |
| `long_validation_handoff` | `job_observe_calls` | `0 of 3 improved, 0 of 3 regressed, 3 of 3 tied; 0 unknown` |
| `long_validation_handoff` | `nonempty_cells` | `2 of 3 lower, 0 of 3 higher, 1 of 3 tied; 0 unknown` |
| `long_validation_handoff` | `empty_cells` | `no known deltas; 3 unknown` |
| `overall` | `outer_calls` | `3 of 9 improved, 0 of 9 regressed, 6 of 9 tied; 0 unknown` |
| `overall` | `serialized_tool_result_bytes` | `3 of 9 improved, 5 of 9 regressed, 1 of 9 tied; 0 unknown` |
| `overall` | `job_observe_calls` | `0 of 9 improved, 0 of 9 regressed, 9 of 9 tied; 0 unknown` |
| `overall` | `nonempty_cells` | `6 of 9 lower, 0 of 9 higher, 3 of 9 tied; 0 unknown` |
| `overall` | `empty_cells` | `no known deltas; 9 unknown` |
"""

ALWAYS_UNKNOWN = (
    "task_wall_time_ms",
    "repair_turns",
    "same_kind_serial_calls",
    "observe_after_delivered_failure",
)
SCOPES = ("readonly_review", "guarded_multi_file_edit", "long_validation_handoff", "overall")


def _cells(line: str) -> list[str]:
    return [c.strip().strip("`") for c in line.strip().strip("|").split("|")]


def _int(text: str):
    return None if text == "null" else int(text)


@pytest.fixture(scope="module")
def report():
    return build_report(load_published_baseline())


def test_file_loads_and_dumps_byte_for_byte():
    evidence = load_published_baseline()
    assert dump_evidence(evidence) == PUBLISHED_BASELINE.read_text(encoding="utf-8")
    assert len(evidence.notes) == 18
    assert all(note.isascii() for note in evidence.notes)
    assert evidence.provenance.source == "reconstructed_from_published_summary"


def test_strict_gate_is_unverifiable_with_the_missing_evidence():
    result = strict_check(load_published_baseline()).to_dict()
    assert result["verdict"] == "unverifiable"
    assert result["findings"] == [
        {
            "reason": "unverifiable_reconstruction",
            "case_id": None,
            "pair": None,
            "repetition": None,
            "lane": None,
            "field": None,
            "detail": None,
            "missing_evidence": [
                {"evidence": "case_fingerprint", "count": 3},
                {"evidence": "driver_receipts", "count": 18},
                {"evidence": "efficiency_attestation", "count": 18},
                {"evidence": "host_cell_attestation", "count": 18},
                {"evidence": "model_config_digest", "count": 1},
                {"evidence": "outer_call_ids_sha256", "count": 18},
            ],
        }
    ]
    assert (result["required_units"], result["present_units"], result["qualified_units"]) == (
        9,
        9,
        9,
    )
    assert result["qualified_basis"] == "published_summary"
    counts = {"fail": 0, "partial": 0, "pass": 18, "unsupported": 0}
    assert result["recorded_status_counts"] == counts
    assert result["effective_status_counts"] == counts


def test_rendered_table_is_the_seed_table(report):
    rendered = render_published_style_table(report.published_style_table())
    normalized = [" ".join(line.split()) for line in rendered.splitlines()]
    assert normalized == SEED_TABLE.splitlines()


@pytest.mark.skipif(not SEED.exists(), reason="shared seed not available")
def test_seed_table_constant_is_verbatim_from_the_seed():
    seed_lines = SEED.read_text(encoding="utf-8").splitlines()
    start = seed_lines.index(SEED_TABLE.splitlines()[0])
    assert seed_lines[start : start + 10] == SEED_TABLE.splitlines()


def test_published_style_table_cells(report):
    table = report.published_style_table()
    assert list(table.columns) == [
        "Task",
        "Pair",
        "Calls",
        "Result bytes",
        "Job observes",
        "Attested nonempty cells",
    ]
    assert table.iloc[0].tolist() == [
        "readonly_review",
        "1",
        "9 / 9",
        "163,826 / 208,012",
        "0 / 0",
        "9 / 6",
    ]


def test_pairs_frame_matches_machine_rows_and_deltas(report):
    frame = report.pairs_frame()
    assert frame[["case_id", "pair"]].values.tolist() == [r[:2] for r in MACHINE_ROWS]
    assert frame[MACHINE_COLUMNS].astype(int).values.tolist() == [r[2:] for r in MACHINE_ROWS]
    assert frame["outer_calls.candidate_minus_baseline"].tolist() == [0, -3, 0, 0, 0, 0, -2, -1, 0]
    assert frame["serialized_tool_result_bytes.candidate_minus_baseline"].tolist() == [
        44186,
        37660,
        43763,
        51,
        0,
        -1149,
        -7706,
        14173,
        -2894,
    ]
    assert frame["task_wall_time_ms.baseline"].isna().all()
    assert frame["order"].tolist()[:2] == ["baseline,candidate", "candidate,baseline"]
    assert report.instrumentation_changed_across_pairs is True


def test_distributions(report):
    d = report.to_dict()["distributions"]
    assert list(d) == list(SCOPES)
    for scope in SCOPES:
        n = 9 if scope == "overall" else 3
        for metric in ALWAYS_UNKNOWN:
            for series in d[scope][metric].values():
                assert series == {
                    "total": None,
                    "observed_total": 0,
                    "p50": None,
                    "p95": None,
                    "samples": 0,
                    "missing": n,
                }
        for series in d[scope]["immediate_observe_calls"].values():
            assert series == {
                "total": 0,
                "observed_total": 0,
                "p50": 0,
                "p95": 0,
                "samples": n,
                "missing": 0,
            }
    rows = [_cells(line) for line in DISTRIBUTIONS.splitlines()]
    assert len(rows) == 60
    for scope, metric, series, *numbers in rows:
        keys = ["total", "observed_total", "p50", "p95", "samples", "missing"]
        assert d[scope][metric][series] == dict(zip(keys, map(_int, numbers), strict=True)), (
            scope,
            metric,
            series,
        )


def test_tallies(report):
    t = report.to_dict()["tallies"]
    for scope in SCOPES:
        n = 9 if scope == "overall" else 3
        for metric in ALWAYS_UNKNOWN:
            assert t[scope][metric]["text"] == f"no known deltas; {n} unknown"
        assert t[scope]["immediate_observe_calls"]["text"] == (
            f"0 of {n} improved, 0 of {n} regressed, {n} of {n} tied; 0 unknown"
        )
    rows = [_cells(line) for line in TALLIES.splitlines()]
    assert len(rows) == 20
    for scope, metric, text in rows:
        assert t[scope][metric]["text"] == text
    assert t["overall"]["nonempty_cells"]["direction"] == "none"
    assert t["overall"]["nonempty_cells"]["improved"] is None


def test_host_cells(report):
    cells = report.to_dict()["host_cells"]
    assert cells["source"] == "caller_ui_attestation"
    assert cells["independently_verified"] is False
    samples = cells["samples"]
    assert {s["calls_beyond_first_per_cell"] for s in samples if s["lane"] == "baseline"} == {0}
    order = {(r.case_id, r.pair): i for i, r in enumerate(report.pairs)}
    candidates = sorted(
        (s for s in samples if s["lane"] == "candidate"),
        key=lambda s: order[s["case_id"], s["pair"]],
    )
    assert [s["calls_beyond_first_per_cell"] for s in candidates] == [3, 3, 3, 1, 0, 0, 0, 0, 0]
    assert all(s["multi_call_cells"] is None and s["max_calls_per_cell"] is None for s in samples)
    summary = cells["summary"]
    assert summary == {
        "composition_allowed_samples": 9,
        "composition_observed": 4,
        "composition_not_observed": 5,
        "composition_unknown": 0,
        "single_call_samples_with_shared_cells": 0,
        "text": "composition observed in 4 of 9 composition-allowed samples",
    }


def test_hotspots_and_caveats(report):
    d = report.to_dict()
    assert d["hotspots"]["candidates"] == []
    assert d["hotspots"]["not_evaluable"] == {
        "invalid_argument_or_tool_selection_repairs": 18,
        "same_kind_serial_window_calls": 18,
        "observe_after_delivered_failure": 18,
    }
    ids = [c["id"] for c in d["caveats"]]
    assert ids[11:] == [
        "composition_permitted_not_required",
        "reconstructed_not_verifiable",
        "instrumentation_changed",
    ]
    assert len(ids) == 14


def test_report_object_shape(report):
    d = report.to_dict()
    assert d["kind"] == "paired_evidence_report"
    assert d["basis"] == "published_summary"
    assert d["metrics"] == list(TABLE_METRICS)
    assert d["strict"]["verdict"] == "unverifiable"
    assert len(d["pairs"]) == 9 and len(d["samples"]) == 18
    first = d["pairs"][0]
    assert first["instrumentation"] == ["original_v4", "no_dispatch_guard"]
    assert first["metrics"]["nonempty_cells"] == {
        "baseline": 9,
        "candidate": 6,
        "candidate_minus_baseline": -3,
    }
    assert first["metrics"]["empty_cells"] == {
        "baseline": None,
        "candidate": 1,
        "candidate_minus_baseline": None,
    }
    assert json.loads(report.to_json()) == d


def test_no_scripted_evidence_is_bundled():
    for path in PUBLISHED_BASELINE.parent.glob("*.json"):
        doc = json.loads(path.read_text(encoding="utf-8"))
        assert doc["provenance"]["driver_kind"] != "scripted", path
