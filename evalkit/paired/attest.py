"""Attestation checks: efficiency attestations and Host-cell attestations (spec §4).

Both checks are plain functions over a stored (or received) attestation value. They never raise
on bad content: they return `AttestationFinding`s with a stable reason code, a field name built
from known keys and a fixed detail token, and never a value copied from the attestation. The
strict gate (`evalkit.paired.gate`) turns the findings into located `Finding`s; the collector
(spec §8, a later stage) uses the same functions plus `efficiency_attestation_error` and
`host_cell_attestation_error`, which give the first collector message of §4.2 / §4.3 for a raw
receipt value.

Cell grouping comes only from the attestation (spec §4.3): nothing here reads any other sample
field than the measured call hashes and the stored cell counts, and nothing derives or repairs
cells from Audit data.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evalkit.paired._json import is_sha256_hex

__all__ = [
    "EFFICIENCY_FIELDS",
    "HOST_CELL_FIELDS",
    "AttestationFinding",
    "CellCounts",
    "cell_counts",
    "check_efficiency_attestation",
    "check_host_cell_attestation",
    "efficiency_attestation_error",
    "host_cell_attestation_error",
]

EFFICIENCY_FIELDS = (
    "model_config_digest",
    "base_revision",
    "case_fingerprint",
    "variant",
    "surface",
)
HOST_CELL_FIELDS = (
    "policy",
    "source",
    "ui_evidence_sha256",
    "complete_tool_call_coverage",
    "cells",
)
CELL_FIELDS = ("cell_id_sha256", "tool_trace_ids_sha256")
CELL_SOURCE = "caller_ui_attestation"
MAX_CELLS = 10_000
MAX_CELL_CALLS = 10_000


@dataclass(frozen=True)
class AttestationFinding:
    """One problem with an attestation: a reason code of spec §6.2, a field, a detail token."""

    reason: str
    field: str | None
    detail: str | None = None


def _is_sha(value: Any) -> bool:
    return isinstance(value, str) and is_sha256_hex(value)


# ----------------------------------------------------------------------------- efficiency (§4.2)


def check_efficiency_attestation(
    attestation: Any, *, expected: Mapping[str, str | None], required: bool = True
) -> tuple[AttestationFinding, ...]:
    """Check one `efficiency_attestation` against the values it must equal (spec §4.2).

    Args:
        attestation: The stored value (a mapping) or None.
        expected: The five expected values, keyed by `EFFICIENCY_FIELDS`. A None value (an
            unpinned digest in `tool_selection`) can never be matched.
        required: Whether a None attestation is a finding.

    Returns:
        Findings in the order of §4.2: `attestation_missing`, else `attestation_fields` (checks
        stop there), else one `attestation_mismatch` per differing field in field order.
    """
    prefix = "efficiency_attestation"
    if attestation is None:
        return (AttestationFinding("attestation_missing", prefix),) if required else ()
    if not isinstance(attestation, Mapping):
        return (AttestationFinding("attestation_fields", prefix),)
    findings = [
        AttestationFinding("attestation_fields", f"{prefix}.{name}")
        for name in EFFICIENCY_FIELDS
        if name not in attestation
    ]
    findings += [
        AttestationFinding("attestation_fields", f"{prefix}.{name}")
        for name in EFFICIENCY_FIELDS
        if name in attestation and not isinstance(attestation[name], str)
    ]
    if set(attestation) - set(EFFICIENCY_FIELDS):
        findings.append(AttestationFinding("attestation_fields", None))
    if findings:
        return tuple(findings)
    return tuple(
        AttestationFinding("attestation_mismatch", f"{prefix}.{name}")
        for name in EFFICIENCY_FIELDS
        if attestation[name] != expected.get(name)
    )


def efficiency_attestation_error(
    receipt: Mapping[str, Any], *, expected: Mapping[str, str | None]
) -> str | None:
    """The collector's first message for a receipt's `efficiency_attestation` (spec §4.2)."""
    value = receipt.get("efficiency_attestation")
    if value is None:
        return "driver result lacks efficiency_attestation"
    if not isinstance(value, Mapping):
        return "efficiency_attestation must be a JSON object"
    for name in EFFICIENCY_FIELDS:
        if name not in value:
            return f"efficiency_attestation lacks required field {name}"
    if set(value) - set(EFFICIENCY_FIELDS):
        return "efficiency_attestation contains unsupported fields"
    for name in EFFICIENCY_FIELDS:
        if not isinstance(value[name], str):
            return f"efficiency_attestation.{name} must be a string"
    for name in EFFICIENCY_FIELDS:
        if value[name] != expected.get(name):
            return f"efficiency_attestation.{name} does not match the run"
    return None


# ----------------------------------------------------------------------------- host cells (§4.3)


@dataclass(frozen=True)
class CellCounts:
    """Counts recomputed from a structurally valid Host-cell attestation (spec §4.3 step 6)."""

    nonempty_cells: int
    empty_cells: int | None  # None: no empty cell listed, which is not evidence of none
    multi_call_cells: int
    max_calls_per_cell: int | None  # None when no cell holds a call
    attested_calls: int


def _structure_problem(value: Any) -> tuple[str, str] | None:
    """The first structural problem as (field, collector message), or None (§4.3 step 2)."""
    p = "host_cell_attestation"
    if not isinstance(value, Mapping):
        return p, f"{p} must be a JSON object"
    for name in HOST_CELL_FIELDS:
        if name not in value:
            return f"{p}.{name}", f"{p} lacks required field {name}"
    if set(value) - set(HOST_CELL_FIELDS):
        return p, f"{p} contains unsupported fields"
    if not _is_sha(value["ui_evidence_sha256"]):
        return (
            f"{p}.ui_evidence_sha256",
            f"{p}.ui_evidence_sha256 must be an exact lowercase 64-hex SHA-256",
        )
    if not isinstance(value["complete_tool_call_coverage"], bool):
        return (
            f"{p}.complete_tool_call_coverage",
            f"{p}.complete_tool_call_coverage must be true",
        )
    cells = value["cells"]
    if not isinstance(cells, Sequence) or isinstance(cells, str) or len(cells) > MAX_CELLS:
        return f"{p}.cells", f"{p}.cells must be an array"
    total = 0
    for i, cell in enumerate(cells):
        loc = f"{p}.cells[{i}]"
        if not isinstance(cell, Mapping):
            return loc, f"{loc} must be an object"
        if set(cell) != set(CELL_FIELDS):
            return loc, f"{loc} contains unsupported fields"
        if not _is_sha(cell["cell_id_sha256"]):
            return (
                f"{loc}.cell_id_sha256",
                f"{loc}.cell_id_sha256 must be an exact lowercase 64-hex SHA-256",
            )
        calls = cell["tool_trace_ids_sha256"]
        total += len(calls) if isinstance(calls, Sequence) else 0
        if (
            not isinstance(calls, Sequence)
            or isinstance(calls, str)
            or not all(_is_sha(c) for c in calls)
            or total > MAX_CELL_CALLS
        ):
            return (
                f"{loc}.tool_trace_ids_sha256",
                f"{loc}.tool_trace_ids_sha256 must be an array of exact lowercase 64-hex "
                "SHA-256 values",
            )
    return None


def cell_counts(attestation: Any) -> CellCounts | None:
    """Recompute cell counts from an attestation; None when absent or structurally invalid."""
    if attestation is None or _structure_problem(attestation) is not None:
        return None
    sizes = [len(cell["tool_trace_ids_sha256"]) for cell in attestation["cells"]]
    listed_empty = sum(1 for n in sizes if n == 0)
    return CellCounts(
        nonempty_cells=sum(1 for n in sizes if n > 0),
        empty_cells=listed_empty if listed_empty else None,
        multi_call_cells=sum(1 for n in sizes if n > 1),
        max_calls_per_cell=max(sizes) if any(sizes) else None,
        attested_calls=sum(sizes),
    )


def check_host_cell_attestation(
    attestation: Any,
    *,
    policy: str | None,
    outer_call_ids_sha256: Sequence[str] | None,
    nonempty_cells: int | None,
    empty_cells: int | None,
    required: bool = True,
) -> tuple[AttestationFinding, ...]:
    """Check one `host_cell_attestation` (spec §4.3, checks 1–7).

    Args:
        attestation: The stored value or None.
        policy: The sample's `policy`; the attestation's policy must equal it.
        outer_call_ids_sha256: The measured call hashes, or None when the call set is unknown.
        nonempty_cells, empty_cells: The stored metrics, compared with the recomputed counts.
        required: Whether a None attestation is a finding.
    """
    p = "host_cell_attestation"
    if attestation is None:
        return (AttestationFinding("cell_evidence_missing", p),) if required else ()
    problem = _structure_problem(attestation)
    if problem is not None:
        return (AttestationFinding("attestation_fields", problem[0]),)
    findings: list[AttestationFinding] = []
    if attestation["policy"] != policy:
        findings.append(AttestationFinding("attestation_mismatch", f"{p}.policy"))
    if attestation["source"] != CELL_SOURCE:
        findings.append(AttestationFinding("attestation_mismatch", f"{p}.source"))
    cells = attestation["cells"]
    cell_ids = [cell["cell_id_sha256"] for cell in cells]
    if len(set(cell_ids)) != len(cell_ids):
        findings.append(AttestationFinding("cell_ids_not_unique", "cell_id_sha256"))
    calls = [call for cell in cells for call in cell["tool_trace_ids_sha256"]]
    if len(set(calls)) != len(calls):
        findings.append(AttestationFinding("cell_ids_not_unique", "tool_trace_ids_sha256"))
    if attestation["complete_tool_call_coverage"] is not True:
        findings.append(
            AttestationFinding(
                "cell_coverage_incomplete",
                f"{p}.complete_tool_call_coverage",
                "coverage_not_claimed",
            )
        )
    if outer_call_ids_sha256 is None:
        findings.append(AttestationFinding("canonical_audit_missing", "outer_call_ids_sha256"))
    else:
        measured, attested = set(outer_call_ids_sha256), set(calls)
        if measured - attested:
            findings.append(
                AttestationFinding(
                    "cell_coverage_incomplete", "outer_call_ids_sha256", "calls_not_attested"
                )
            )
        if attested - measured:
            findings.append(
                AttestationFinding(
                    "cell_coverage_incomplete",
                    "outer_call_ids_sha256",
                    "attested_calls_not_measured",
                )
            )
    counts = cell_counts(attestation)
    assert counts is not None  # the structure passed above
    if nonempty_cells != counts.nonempty_cells:
        findings.append(
            AttestationFinding("cell_coverage_incomplete", "nonempty_cells", "cell_count_disagrees")
        )
    if empty_cells != counts.empty_cells:
        findings.append(
            AttestationFinding("cell_coverage_incomplete", "empty_cells", "cell_count_disagrees")
        )
    if policy == "host_single_call" and counts.multi_call_cells:
        findings.append(AttestationFinding("single_call_violation", f"{p}.cells"))
    return tuple(findings)


def host_cell_attestation_error(
    receipt: Mapping[str, Any], *, policy: str, outer_call_ids_sha256: Sequence[str]
) -> str | None:
    """The collector's first message for a receipt's `host_cell_attestation` (spec §4.3).

    The collector reports in the order of the §4.3 message list: presence, object, key set,
    policy, source, UI evidence hash, coverage flag, cells, uniqueness, coverage, single-call.
    """
    p = "host_cell_attestation"
    value = receipt.get(p)
    if value is None:
        return f"driver result lacks {p}"
    if not isinstance(value, Mapping):
        return f"{p} must be a JSON object"
    for name in HOST_CELL_FIELDS:
        if name not in value:
            return f"{p} lacks required field {name}"
    if set(value) - set(HOST_CELL_FIELDS):
        return f"{p} contains unsupported fields"
    if value["policy"] != policy:
        return f"{p}.policy does not match the run"
    if value["source"] != CELL_SOURCE:
        return f"{p}.source must be {CELL_SOURCE}"
    if value["complete_tool_call_coverage"] is not True and _is_sha(value["ui_evidence_sha256"]):
        return f"{p}.complete_tool_call_coverage must be true"
    problem = _structure_problem(value)
    if problem is not None:
        return problem[1]
    findings = check_host_cell_attestation(
        value,
        policy=policy,
        outer_call_ids_sha256=outer_call_ids_sha256,
        nonempty_cells=None,
        empty_cells=None,
    )
    keys = {(f.reason, f.field) for f in findings}
    if ("cell_ids_not_unique", "cell_id_sha256") in keys:
        return f"{p} cell identities must be unique"
    if ("cell_ids_not_unique", "tool_trace_ids_sha256") in keys:
        return f"{p} call identities must be unique"
    if ("cell_coverage_incomplete", "outer_call_ids_sha256") in keys:
        return f"{p} does not cover every measured outer call exactly once"
    if any(f.reason == "single_call_violation" for f in findings):
        return "host_single_call requires exactly one WebCodex call per non-empty cell"
    return None
