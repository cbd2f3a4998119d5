"""The strict gate (spec §6): recompute acceptance from the samples, never trust a stored flag.

`strict_check(evidence, *, manifest=None, expected=None)` runs every check of §6.3 and returns a
`StrictResult`: the verdict (`pass`, `fail` or `unverifiable`), unit counts, recorded and
effective status counts, and the findings with their stable reason codes (§6.2), deduplicated
and sorted as §6.1 prescribes. It never reads `status_counts` except to compare it with the
recount, and never consults a sample's stored `reason_code`.

A reconstructed file (`provenance.source == "reconstructed_from_published_summary"`) is never a
pass: the findings that only a published summary's missing evidence causes are folded into one
`unverifiable_reconstruction` finding that lists the missing evidence (§6.5).

Example:
    >>> from evalkit.paired import load_published_baseline, strict_check
    >>> strict_check(load_published_baseline()).verdict
    'unverifiable'
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from evalkit.paired.attest import check_efficiency_attestation, check_host_cell_attestation
from evalkit.paired.manifest import CaseManifest, load_cases
from evalkit.paired.schema import LANES, STATUSES, Evidence, PairEntry, Sample

__all__ = [
    "REASON_CODES",
    "SAMPLE_EFFECTS",
    "Expected",
    "Finding",
    "MissingEvidence",
    "SampleOutcome",
    "StrictResult",
    "correctness_problems",
    "strict_check",
]

# §6.2, in sort order.
REASON_CODES = (
    "missing_case",
    "missing_pair",
    "missing_lane_sample",
    "pair_count_out_of_range",
    "nonpass_status",
    "attestation_missing",
    "attestation_fields",
    "attestation_mismatch",
    "fixture_oracle_failed",
    "runtime_contract_unproven",
    "correctness_missing",
    "correctness_failed",
    "canonical_audit_missing",
    "noncomparable_source",
    "noncomparable_case",
    "model_config_mismatch",
    "mixed_experiment",
    "policy_changed",
    "direct_sample_in_host_policy",
    "cell_evidence_missing",
    "cell_ids_not_unique",
    "cell_coverage_incomplete",
    "single_call_violation",
    "status_counts_mismatch",
    "unverifiable_reconstruction",
)
# §6.2 "Effect on the sample", for findings located at a sample.
SAMPLE_EFFECTS = {
    "attestation_missing": "fail",
    "attestation_fields": "fail",
    "attestation_mismatch": "fail",
    "fixture_oracle_failed": "fail",
    "runtime_contract_unproven": "partial",
    "correctness_missing": "partial",
    "correctness_failed": "fail",
    "canonical_audit_missing": "partial",
    "noncomparable_case": "fail",
    "mixed_experiment": "fail",
    "policy_changed": "fail",
    "direct_sample_in_host_policy": "fail",
    "cell_evidence_missing": "partial",
    "cell_ids_not_unique": "partial",
    "cell_coverage_incomplete": "partial",
    "single_call_violation": "fail",
}
LANE_POLICIES = {"baseline": "host_single_call", "candidate": "host_composition_allowed"}


@dataclass(frozen=True)
class Expected:
    """Values the caller knows from outside the file (spec §6.1 `expected`)."""

    model_config_digest: str | None = None
    base_revision: str | None = None
    fixture_revision: str | None = None


@dataclass(frozen=True)
class MissingEvidence:
    """One entry of `unverifiable_reconstruction.missing_evidence` (spec §6.5)."""

    evidence: str
    count: int

    def to_dict(self) -> dict[str, Any]:
        return {"evidence": self.evidence, "count": self.count}


@dataclass(frozen=True)
class Finding:
    """One strict-gate finding (spec §6.1). `level` places it; it is not serialized."""

    reason: str
    level: str
    case_id: str | None = None
    pair: int | None = None
    repetition: int | None = None
    lane: str | None = None
    field: str | None = None
    detail: str | None = None
    missing_evidence: tuple[MissingEvidence, ...] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "reason": self.reason,
            "case_id": self.case_id,
            "pair": self.pair,
            "repetition": self.repetition,
            "lane": self.lane,
            "field": self.field,
            "detail": self.detail,
            "missing_evidence": (
                [m.to_dict() for m in self.missing_evidence]
                if self.missing_evidence is not None
                else None
            ),
        }

    def line(self) -> str:
        """One payload-safe text line for the command line."""
        where = [
            f"{key}={value}"
            for key, value in (
                ("case", self.case_id),
                ("pair", self.pair),
                ("repetition", self.repetition),
                ("lane", self.lane),
                ("field", self.field),
                ("detail", self.detail),
            )
            if value is not None
        ]
        if self.missing_evidence is not None:
            where.append(
                "missing=" + ",".join(f"{m.evidence}:{m.count}" for m in self.missing_evidence)
            )
        return " ".join([self.reason, *where])


@dataclass(frozen=True)
class SampleOutcome:
    """The gate's view of one present sample: statuses and whether attestations held."""

    case_id: str
    pair: int | None
    repetition: int | None
    lane: str | None
    recorded_status: str
    effective_status: str
    efficiency_attested: bool
    cells_attested: bool


@dataclass(frozen=True)
class StrictResult:
    """The strict gate's result (spec §6.1). `to_dict()` is the JSON object of §6.1."""

    experiment: str
    verdict: str
    unit: str
    required_units: int
    present_units: int
    qualified_units: int
    qualified_basis: str
    recorded_status_counts: Mapping[str, int]
    effective_status_counts: Mapping[str, int]
    findings: tuple[Finding, ...]
    outcomes: tuple[SampleOutcome, ...] = field(repr=False, default=())
    qualified: frozenset[tuple[str, int]] = field(repr=False, default=frozenset())

    @property
    def passed(self) -> bool:
        return self.verdict == "pass"

    @property
    def reasons(self) -> tuple[str, ...]:
        """The reason codes of the findings, in finding order."""
        return tuple(f.reason for f in self.findings)

    def outcome(self, sample: Sample) -> SampleOutcome:
        for outcome in self.outcomes:
            if (outcome.case_id, outcome.pair, outcome.repetition, outcome.lane) == _key(sample):
                return outcome
        raise KeyError(_key(sample))

    def is_qualified(self, case_id: str, unit: int) -> bool:
        """Whether the pair (or repetition) `unit` of `case_id` qualified (spec §6.4)."""
        return (case_id, unit) in self.qualified

    def findings_frame(self):
        """One row per finding, in finding order; `missing_evidence` as `token:count` text."""
        import pandas as pd

        columns = ["reason", "case_id", "pair", "repetition", "lane", "field", "detail"]
        rows = []
        for f in self.findings:
            row = {k: v for k, v in f.to_dict().items() if k != "missing_evidence"}
            row["missing_evidence"] = (
                ",".join(f"{m.evidence}:{m.count}" for m in f.missing_evidence)
                if f.missing_evidence is not None
                else None
            )
            rows.append(row)
        frame = pd.DataFrame(rows, columns=[*columns, "missing_evidence"])
        return frame.astype({"pair": "Int64", "repetition": "Int64"})

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": 1,
            "kind": "paired_evidence_strict",
            "experiment": self.experiment,
            "verdict": self.verdict,
            "unit": self.unit,
            "required_units": self.required_units,
            "present_units": self.present_units,
            "qualified_units": self.qualified_units,
            "qualified_basis": self.qualified_basis,
            "recorded_status_counts": dict(self.recorded_status_counts),
            "effective_status_counts": dict(self.effective_status_counts),
            "findings": [f.to_dict() for f in self.findings],
        }


def _key(sample: Sample) -> tuple[str, int | None, int | None, str | None]:
    return (sample.case_id, sample.pair, sample.repetition, sample.lane)


def _at(sample: Sample, reason: str, field: str | None = None, detail: str | None = None):
    return Finding(
        reason,
        "sample",
        case_id=sample.case_id,
        pair=sample.pair,
        repetition=sample.repetition,
        lane=sample.lane,
        field=field,
        detail=detail,
    )


def _clamp(count: int | None) -> int:
    return min(max(count or 0, 1), 10)


def strict_check(
    evidence: Evidence,
    *,
    manifest: CaseManifest | None = None,
    expected: Expected | Mapping[str, str | None] | None = None,
) -> StrictResult:
    """Run the strict gate of spec §6 on loaded evidence.

    Args:
        evidence: A loaded `Evidence` (a file that fails to load never reaches the gate).
        manifest: The case manifest the evidence was collected under; bundled by default.
        expected: Optional pins for `model_config_digest`, `base_revision`, `fixture_revision`.

    Returns:
        The `StrictResult`; `verdict` is `pass` only for collected evidence without findings.
    """
    manifest = manifest or load_cases()
    if isinstance(expected, Mapping):
        expected = Expected(**expected)
    return _Gate(evidence, manifest, expected or Expected()).run()


class _Gate:
    def __init__(self, evidence: Evidence, manifest: CaseManifest, expected: Expected) -> None:
        self.ev = evidence
        self.manifest = manifest
        self.expected = expected
        self.findings: list[Finding] = []
        self.folded: list[Finding] = []  # reconstructed-only findings (§6.5)
        self.reconstructed = evidence.provenance.reconstructed

    # -- file level

    def file_checks(self) -> None:
        ev, exp = self.ev, self.expected
        count = ev.pair_count if ev.paired else ev.repetition_count
        if count is None or not 1 <= count <= 10:
            name = "pair_count" if ev.paired else "repetition_count"
            self.findings.append(Finding("pair_count_out_of_range", "file", field=name))
        present = {entry.case_id for entry in ev.cases}
        for case_id in self.manifest.experiment_cases(ev.experiment):
            if case_id not in ev.case_ids:
                self.findings.append(Finding("missing_case", "file", case_id=case_id))
        for case_id in ev.case_ids:
            if case_id not in present:
                self.findings.append(Finding("missing_case", "file", case_id=case_id))
        recount = Counter(s.status for s in ev.samples())
        if any(recount[s] != ev.status_counts[s] for s in STATUSES):
            self.findings.append(Finding("status_counts_mismatch", "file", field="status_counts"))
        if (
            exp.model_config_digest is not None
            and ev.model_config_digest != exp.model_config_digest
        ):
            finding = Finding("model_config_mismatch", "file", field="model_config_digest")
            if self.reconstructed and ev.model_config_digest is None and ev.paired:
                self.folded.append(finding)
            else:
                self.findings.append(finding)
        for name in ("base_revision", "fixture_revision"):
            pinned = getattr(exp, name)
            if pinned is not None and getattr(ev, name) != pinned:
                self.findings.append(Finding("noncomparable_source", "file", field=name))
        if ev.provenance.driver_kind == "scripted":
            self.findings.append(
                Finding(
                    "noncomparable_source",
                    "file",
                    field="provenance.driver_kind",
                    detail="scripted_driver",
                )
            )

    # -- case and unit level

    def case_checks(self) -> None:
        ev = self.ev
        required = self.manifest.experiment_cases(ev.experiment)
        count = _clamp(ev.pair_count if ev.paired else ev.repetition_count)
        first_identity: tuple[str, str] | None = None
        for entry in ev.cases:
            case = self.manifest.case(entry.case_id)
            if entry.case_id not in required:
                self.findings.append(
                    Finding("mixed_experiment", "case", case_id=entry.case_id, field="case_id")
                )
            if entry.case_fingerprint != case.fingerprint:
                finding = Finding(
                    "noncomparable_case", "case", case_id=entry.case_id, field="case_fingerprint"
                )
                if self.reconstructed and entry.case_fingerprint is None:
                    self.folded.append(finding)
                else:
                    self.findings.append(finding)
            if ev.paired:
                numbers = {p.pair for p in entry.pairs or ()}
                for number in range(1, count + 1):
                    if number not in numbers:
                        self.findings.append(
                            Finding("missing_pair", "pair", case_id=entry.case_id, pair=number)
                        )
                for pair in entry.pairs or ():
                    self.pair_checks(entry.case_id, pair)
            else:
                numbers = {s.repetition for s in entry.repetitions or ()}
                for number in range(1, count + 1):
                    if number not in numbers:
                        self.findings.append(
                            Finding(
                                "missing_pair", "pair", case_id=entry.case_id, repetition=number
                            )
                        )
            for sample in entry.samples():
                if not ev.paired:
                    identity = (sample.variant, sample.surface)
                    if first_identity is None:
                        first_identity = identity
                    elif identity != first_identity:
                        self.findings.append(
                            _at(
                                sample,
                                "mixed_experiment",
                                "variant",
                                "variant_differs_across_samples",
                            )
                        )
                self.identity_checks(sample, entry)
                if sample.status != "pass":
                    self.findings.append(_at(sample, "nonpass_status", "status", sample.status))
                else:
                    self.acceptance_checks(sample, entry)

    def pair_checks(self, case_id: str, pair: PairEntry) -> None:
        for lane, sample in zip(pair.order, pair.samples, strict=True):
            if sample is None:
                self.findings.append(
                    Finding(
                        "missing_lane_sample", "pair", case_id=case_id, pair=pair.pair, lane=lane
                    )
                )
        a, b = pair.samples
        if a is not None and b is not None and a.instrumentation_key != b.instrumentation_key:
            self.findings.append(
                Finding(
                    "noncomparable_source",
                    "pair",
                    case_id=case_id,
                    pair=pair.pair,
                    field="instrumentation",
                    detail="instrumentation_differs_within_pair",
                )
            )

    # -- sample level

    def identity_checks(self, sample: Sample, entry) -> None:
        experiment, out = self.ev.experiment, self.findings
        case = self.manifest.case(entry.case_id)
        if experiment == "direct_vs_host":
            want = "direct" if sample.lane == "baseline" else "host_code_mode"
            for name in ("variant", "surface"):
                if getattr(sample, name) != want:
                    out.append(_at(sample, "mixed_experiment", name))
        elif experiment == "host_cell_policy":
            bad = [n for n in ("variant", "surface") if getattr(sample, n) != "host_code_mode"]
            direct = [n for n in bad if getattr(sample, n) == "direct"]
            if direct:
                out.append(_at(sample, "direct_sample_in_host_policy", direct[0]))
            else:
                out.extend(_at(sample, "mixed_experiment", n) for n in bad)
            if sample.policy != LANE_POLICIES.get(sample.lane or ""):
                out.append(_at(sample, "policy_changed", "policy"))
        elif experiment == "nested_code_mode":
            if sample.lane == "baseline":
                for name in ("variant", "surface"):
                    if getattr(sample, name) != "direct":
                        out.append(_at(sample, "mixed_experiment", name))
            elif sample.variant != "code_mode":
                out.append(_at(sample, "mixed_experiment", "variant"))
            elif sample.surface != case.nested_surface:
                out.append(_at(sample, "noncomparable_case", "surface"))
        elif sample.variant not in ("direct", "host_code_mode"):
            out.append(_at(sample, "mixed_experiment", "variant"))
        if experiment != "host_cell_policy":
            if sample.policy is not None:
                out.append(_at(sample, "mixed_experiment", "policy"))
            if sample.host_cell_attestation is not None:
                out.append(_at(sample, "mixed_experiment", "host_cell_attestation"))
            for name in ("nonempty_cells", "empty_cells"):
                if sample.metrics.get(name) is not None:
                    out.append(_at(sample, "mixed_experiment", name))

    def efficiency_findings(self, sample: Sample, entry):
        ev = self.ev
        required = ev.paired or ev.model_config_digest is not None
        expected = {
            "model_config_digest": ev.model_config_digest,
            "base_revision": ev.base_revision,
            "case_fingerprint": entry.case_fingerprint,
            "variant": sample.variant,
            "surface": sample.surface,
        }
        return check_efficiency_attestation(
            sample.efficiency_attestation, expected=expected, required=required
        )

    def cell_findings(self, sample: Sample):
        if self.ev.experiment != "host_cell_policy":
            return ()
        return check_host_cell_attestation(
            sample.host_cell_attestation,
            policy=sample.policy,
            outer_call_ids_sha256=sample.outer_call_ids_sha256,
            nonempty_cells=sample.metrics.nonempty_cells,
            empty_cells=sample.metrics.empty_cells,
        )

    def acceptance_checks(self, sample: Sample, entry) -> None:
        out: list[Finding] = []
        fold = self.reconstructed
        for f in self.efficiency_findings(sample, entry):
            out.append(_at(sample, f.reason, f.field, f.detail))
        for f in self.cell_findings(sample):
            out.append(_at(sample, f.reason, f.field, f.detail))
        metrics = sample.metrics
        if metrics.outer_calls is None:
            out.append(_at(sample, "canonical_audit_missing", "outer_calls"))
        if self.ev.experiment == "host_cell_policy" and sample.outer_call_ids_sha256 is None:
            out.append(_at(sample, "canonical_audit_missing", "outer_call_ids_sha256"))
        case = self.manifest.case(entry.case_id)
        for name in case.runtime_contracts:
            value = sample.runtime_gates.get(name)
            if value is not True:
                detail = "false" if value is False else "unproven"
                out.append(_at(sample, "runtime_contract_unproven", name, detail))
        if metrics.outer_calls == 0:
            out.append(_at(sample, "runtime_contract_unproven", "outer_calls", "no_outer_calls"))
        oracle = sample.fixture_oracle
        if oracle.available and oracle.passed is False:
            out.append(_at(sample, "fixture_oracle_failed", "fixture_oracle", "oracle_failed"))
        if case.fixture_oracle_required and not oracle.available:
            out.append(_at(sample, "fixture_oracle_failed", "fixture_oracle", "oracle_unavailable"))
        out.extend(self.correctness_findings(sample, case.validation_required))
        for finding in out:
            if fold and _folds(finding):
                self.folded.append(finding)
            else:
                self.findings.append(finding)

    def correctness_findings(self, sample: Sample, validation_required: bool) -> list[Finding]:
        return [
            _at(sample, reason, field, detail)
            for reason, field, detail in correctness_problems(
                sample.correctness, validation_required
            )
        ]

    # -- assembly

    def missing_evidence(self) -> tuple[MissingEvidence, ...]:
        ev = self.ev
        samples = ev.samples()
        required_eff = ev.paired or ev.model_config_digest is not None
        host = ev.experiment == "host_cell_policy"
        counts = {
            "case_fingerprint": sum(1 for e in ev.cases if e.case_fingerprint is None),
            "driver_receipts": len(samples),
            "efficiency_attestation": (
                sum(1 for s in samples if s.efficiency_attestation is None) if required_eff else 0
            ),
            "host_cell_attestation": (
                sum(1 for s in samples if s.host_cell_attestation is None) if host else 0
            ),
            "model_config_digest": int(ev.paired and ev.model_config_digest is None),
            "outer_call_ids_sha256": (
                sum(1 for s in samples if s.outer_call_ids_sha256 is None) if host else 0
            ),
        }
        return tuple(MissingEvidence(k, n) for k, n in sorted(counts.items()) if n)

    def run(self) -> StrictResult:
        ev = self.ev
        self.file_checks()
        self.case_checks()
        if self.reconstructed:
            self.findings.append(
                Finding(
                    "unverifiable_reconstruction",
                    "file",
                    missing_evidence=self.missing_evidence(),
                )
            )
        findings = sorted(set(self.findings), key=self.sort_key)
        by_sample: dict[tuple, list[Finding]] = {}
        for f in findings:
            if f.level == "sample":
                by_sample.setdefault((f.case_id, f.pair, f.repetition, f.lane), []).append(f)
        outcomes = []
        for entry in ev.cases:
            for sample in entry.samples():
                own = by_sample.get(_key(sample), [])
                effective = sample.status
                if effective in ("pass", "partial"):
                    effects = {SAMPLE_EFFECTS.get(f.reason) for f in own}
                    if "fail" in effects:
                        effective = "fail"
                    elif "partial" in effects and effective == "pass":
                        effective = "partial"
                eff = self.efficiency_findings(sample, entry)
                required_eff = ev.paired or ev.model_config_digest is not None
                outcomes.append(
                    SampleOutcome(
                        *_key(sample),
                        recorded_status=sample.status,
                        effective_status=effective,
                        efficiency_attested=sample.efficiency_attestation is not None
                        and required_eff
                        and not eff,
                        cells_attested=sample.host_cell_attestation is not None
                        and not self.cell_findings(sample),
                    )
                )
        qualified = self.qualify(
            findings, {(o.case_id, o.pair, o.repetition, o.lane): o for o in outcomes}
        )
        required = self.manifest.experiment_cases(ev.experiment)
        present = sum(
            len(e.pairs) if ev.paired else len(e.repetitions or ())
            for e in ev.cases
            if e.case_id in required
        )
        count = _clamp(ev.pair_count if ev.paired else ev.repetition_count)
        if self.reconstructed:
            only = [f.reason for f in findings] == ["unverifiable_reconstruction"]
            verdict = "unverifiable" if only else "fail"
        else:
            verdict = "pass" if not findings else "fail"
        return StrictResult(
            experiment=ev.experiment,
            verdict=verdict,
            unit="pair" if ev.paired else "repetition",
            required_units=len(required) * count,
            present_units=present,
            qualified_units=sum(1 for case_id, _ in qualified if case_id in required),
            qualified_basis="published_summary" if self.reconstructed else "collected",
            recorded_status_counts=_counts(o.recorded_status for o in outcomes),
            effective_status_counts=_counts(o.effective_status for o in outcomes),
            findings=tuple(findings),
            outcomes=tuple(outcomes),
            qualified=frozenset(qualified),
        )

    def qualify(self, findings: list[Finding], outcomes: dict) -> set[tuple[str, int]]:
        flagged_cases = {f.case_id for f in findings if f.level == "case"}
        flagged_units = {
            (f.case_id, f.pair if f.pair is not None else f.repetition)
            for f in findings
            if f.level in ("pair", "sample")
        }
        qualified: set[tuple[str, int]] = set()
        for entry in self.ev.cases:
            if entry.case_id in flagged_cases:
                continue
            if self.ev.paired:
                for pair in entry.pairs or ():
                    if (entry.case_id, pair.pair) in flagged_units or None in pair.samples:
                        continue
                    if all(outcomes[_key(s)].effective_status == "pass" for s in pair.samples):
                        qualified.add((entry.case_id, pair.pair))
            else:
                for sample in entry.repetitions or ():
                    unit = (entry.case_id, sample.repetition)
                    if (
                        unit not in flagged_units
                        and outcomes[_key(sample)].effective_status == "pass"
                    ):
                        qualified.add(unit)
        return qualified

    def sort_key(self, f: Finding):
        lane_rank = 0 if f.lane is None else 1 + LANES.index(f.lane)
        unit = f.pair if f.pair is not None else f.repetition
        return (
            0 if f.level == "file" else 1,
            -1 if f.case_id is None else self.manifest.case_rank(self.ev.experiment, f.case_id),
            -1 if unit is None else unit,
            lane_rank,
            REASON_CODES.index(f.reason),
            f.field or "",
            f.detail or "",
        )


def correctness_problems(
    correctness: Any, validation_required: bool
) -> list[tuple[str, str, str | None]]:
    """The correctness rule of spec §6.3 (WebCodex's rule, §5.3 step 2) as `(reason, field, detail)`.

    `correctness` is a `Correctness`, a `{"task_verdict", "validation_verdict"}` mapping or None.
    The gate locates each problem at its sample; the collector (§8.4) caps a sample's status with
    the same list, so the rule lives here once.
    """
    if correctness is None:
        return [("correctness_missing", "correctness", "no_external_verdict")]
    if isinstance(correctness, Mapping):
        task, v = correctness["task_verdict"], correctness["validation_verdict"]
    else:
        task, v = correctness.task_verdict, correctness.validation_verdict
    out: list[tuple[str, str, str | None]] = []
    if task == "fail":
        out.append(("correctness_failed", "task_verdict", None))
    elif task == "unavailable":
        out.append(("correctness_missing", "task_verdict", "task_verdict_unavailable"))
    if v == "fail":
        out.append(("correctness_failed", "validation_verdict", None))
    elif validation_required and v != "pass":
        out.append(("correctness_missing", "validation_verdict", "required_validation_unproven"))
    elif not validation_required and v == "unavailable":
        out.append(("correctness_missing", "validation_verdict", None))
    return out


def _folds(finding: Finding) -> bool:
    """Whether a sample finding is one §6.5 folds into `unverifiable_reconstruction`."""
    return finding.reason in ("attestation_missing", "cell_evidence_missing") or (
        finding.reason == "canonical_audit_missing" and finding.field == "outer_call_ids_sha256"
    )


def _counts(statuses) -> dict[str, int]:
    counter = Counter(statuses)
    return {status: counter[status] for status in STATUSES}
