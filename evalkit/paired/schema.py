"""Evidence files, schema v1: structural loading and canonical serialization (spec §3).

`load_evidence(path)` reads a file with the hardened bounded sequence (§3.1), decodes bounded
JSON and validates the structure; `parse_evidence(obj)` validates an already decoded object.
Both return an immutable `Evidence` or raise `EvidenceError` with the first failure in document
order. Messages name a location built from known keys and indices
(`cases[1].pairs[0].samples[1].metrics.outer_calls`) and a fixed expectation; they never echo a
value from the file. `dump_evidence(evidence)` is the canonical serialization.

Experiment semantics (a Direct sample in a Host-policy file, wrong counts, mismatched
`status_counts`) are not load errors: the strict gate (`evalkit.paired.gate`) reports them, so a
report can still be built for a file that fails the gate.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from evalkit.paired._files import OpenMessages, read_bounded
from evalkit.paired._json import (
    MAX_SAFE_INTEGER,
    BoundsError,
    SyntaxProblem,
    canonical_dumps,
    decode_bounded,
    freeze,
    is_commit_hex,
    is_sha256_hex,
    thaw,
)
from evalkit.paired.errors import EvidenceError
from evalkit.paired.manifest import EXPERIMENTS, PAIRED_EXPERIMENTS, CaseManifest, load_cases

__all__ = [
    "LANES",
    "METRIC_KEYS",
    "REPAIR_REASONS",
    "STATUSES",
    "CaseEntry",
    "Correctness",
    "Evidence",
    "FixtureOracle",
    "Metrics",
    "PairEntry",
    "Provenance",
    "Sample",
    "dump_evidence",
    "freeze",
    "load_evidence",
    "parse_evidence",
    "thaw",
]

MAX_EVIDENCE_BYTES = 4 * 1024 * 1024
STATUSES = ("fail", "partial", "pass", "unsupported")
LANES = ("baseline", "candidate")
VARIANTS = ("direct", "host_code_mode", "code_mode")
SURFACES = ("direct", "host_code_mode", "read_only", "guarded_edit", "validation")
POLICIES = ("host_single_call", "host_composition_allowed")
SAMPLE_REASON_CODES = (
    "driver_receipt_missing",
    "workspace_head_changed",
    "driver_platform_unsupported",
    "driver_timeout",
    "sample_contract_error",
    "attestation_rejected",
    "cell_evidence_incomplete",
)
TASK_VERDICTS = ("pass", "fail", "unavailable")
VALIDATION_VERDICTS = ("pass", "fail", "not_required", "unavailable")
REPAIR_REASONS = (
    "invalid_arguments",
    "unknown_callable",
    "wrong_result_shape",
    "javascript_runtime",
    "tool_selection_repair",
    "other_contract_repair",
)
# §3.7, in order. `repair_turns_by_reason` is the one non-count metric.
METRIC_KEYS = (
    "task_wall_time_ms",
    "outer_calls",
    "serialized_tool_result_bytes",
    "repair_turns",
    "repair_turns_by_reason",
    "job_observe_calls",
    "immediate_observe_calls",
    "same_kind_serial_calls",
    "observe_after_delivered_failure",
    "nonempty_cells",
    "empty_cells",
)
SOURCES = ("collected", "reconstructed_from_published_summary")
DRIVER_KINDS = ("live_host", "manual_bridge", "scripted")
ODD_ORDER = ("baseline", "candidate")
EVEN_ORDER = ("candidate", "baseline")

# Matched with `fullmatch` (`$` would also accept a trailing newline).
_LABEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_GATE = re.compile(r"[a-z][a-z0-9_]{0,63}")
_TOP_KEYS = (
    "schema_version",
    "kind",
    "experiment",
    "base_revision",
    "fixture_revision",
    "model_config_digest",
    "pair_count",
    "repetition_count",
    "case_ids",
    "cases",
    "status_counts",
    "provenance",
    "notes",
)
_SAMPLE_KEYS = (
    "case_id",
    "pair",
    "ordinal",
    "repetition",
    "lane",
    "variant",
    "surface",
    "policy",
    "status",
    "correctness",
    "runtime_gates",
    "fixture_oracle",
    "instrumentation",
    "metrics",
    "outer_call_ids_sha256",
    "efficiency_attestation",
    "host_cell_attestation",
)
_SAMPLE_OPTIONAL = ("reason_code",)


# ----------------------------------------------------------------------------- value types


@dataclass(frozen=True)
class Correctness:
    """The caller's external verdicts (spec §3.6)."""

    task_verdict: str
    validation_verdict: str

    def to_dict(self) -> dict[str, str]:
        return {"task_verdict": self.task_verdict, "validation_verdict": self.validation_verdict}


@dataclass(frozen=True)
class FixtureOracle:
    """Whether a file oracle was available and whether it passed (spec §3.6)."""

    available: bool
    passed: bool | None

    def to_dict(self) -> dict[str, Any]:
        return {"available": self.available, "passed": self.passed}


@dataclass(frozen=True)
class Metrics:
    """The eleven measurements of a sample (spec §3.7). `None` is unknown, never zero."""

    task_wall_time_ms: int | None
    outer_calls: int | None
    serialized_tool_result_bytes: int | None
    repair_turns: int | None
    repair_turns_by_reason: Mapping[str, int] | None
    job_observe_calls: int | None
    immediate_observe_calls: int | None
    same_kind_serial_calls: int | None
    observe_after_delivered_failure: int | None
    nonempty_cells: int | None
    empty_cells: int | None

    def get(self, name: str) -> Any:
        return getattr(self, name)

    def to_dict(self) -> dict[str, Any]:
        return {key: thaw(getattr(self, key)) for key in METRIC_KEYS}


@dataclass(frozen=True)
class Sample:
    """One run of one case (spec §3.6). Attestations are kept frozen, exactly as stored."""

    case_id: str
    pair: int | None
    ordinal: int | None
    repetition: int | None
    lane: str | None
    variant: str
    surface: str
    policy: str | None
    status: str
    reason_code: str | None
    correctness: Correctness | None
    runtime_gates: Mapping[str, bool | None]
    fixture_oracle: FixtureOracle
    instrumentation: str | tuple[str, ...] | None
    metrics: Metrics
    outer_call_ids_sha256: tuple[str, ...] | None
    efficiency_attestation: Any
    host_cell_attestation: Any

    @property
    def instrumentation_key(self) -> tuple[str, ...]:
        """The comparison key of spec §3.8: the sorted tuple of labels."""
        if self.instrumentation is None:
            return ()
        if isinstance(self.instrumentation, str):
            return (self.instrumentation,)
        return tuple(sorted(self.instrumentation))

    @property
    def unit(self) -> int | None:
        """The pair number, or the repetition number in `tool_selection`."""
        return self.pair if self.pair is not None else self.repetition

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "case_id": self.case_id,
            "pair": self.pair,
            "ordinal": self.ordinal,
            "repetition": self.repetition,
            "lane": self.lane,
            "variant": self.variant,
            "surface": self.surface,
            "policy": self.policy,
            "status": self.status,
            "correctness": self.correctness.to_dict() if self.correctness else None,
            "runtime_gates": dict(self.runtime_gates),
            "fixture_oracle": self.fixture_oracle.to_dict(),
            "instrumentation": thaw(self.instrumentation),
            "metrics": self.metrics.to_dict(),
            "outer_call_ids_sha256": thaw(self.outer_call_ids_sha256),
            "efficiency_attestation": thaw(self.efficiency_attestation),
            "host_cell_attestation": thaw(self.host_cell_attestation),
        }
        if self.reason_code is not None:
            out["reason_code"] = self.reason_code
        return out


@dataclass(frozen=True)
class PairEntry:
    """One pair: its 1-based number, execution order and two sample positions (spec §3.5)."""

    pair: int
    order: tuple[str, str]
    samples: tuple[Sample | None, Sample | None]

    def lane(self, lane: str) -> Sample | None:
        return self.samples[self.order.index(lane)]

    def to_dict(self) -> dict[str, Any]:
        return {
            "pair": self.pair,
            "order": list(self.order),
            "samples": [s.to_dict() if s is not None else None for s in self.samples],
        }


@dataclass(frozen=True)
class CaseEntry:
    """The evidence of one case: `pairs` in paired experiments, `repetitions` in selection."""

    case_id: str
    case_fingerprint: str | None
    pairs: tuple[PairEntry, ...] | None
    repetitions: tuple[Sample, ...] | None

    def samples(self) -> tuple[Sample, ...]:
        """Present samples in file order."""
        if self.repetitions is not None:
            return self.repetitions
        return tuple(s for p in self.pairs or () for s in p.samples if s is not None)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"case_id": self.case_id, "case_fingerprint": self.case_fingerprint}
        if self.repetitions is not None:
            out["repetitions"] = [s.to_dict() for s in self.repetitions]
        else:
            out["pairs"] = [p.to_dict() for p in self.pairs or ()]
        return out


@dataclass(frozen=True)
class Provenance:
    """Where the evidence came from (spec §3.9)."""

    source: str
    driver_kind: str | None
    note: str

    @property
    def reconstructed(self) -> bool:
        return self.source == "reconstructed_from_published_summary"

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "driver_kind": self.driver_kind, "note": self.note}


@dataclass(frozen=True)
class Evidence:
    """A structurally valid evidence file (spec §3.3). Immutable; `to_dict()` round-trips."""

    schema_version: int
    kind: str
    experiment: str
    base_revision: str
    fixture_revision: str | None
    model_config_digest: str | None
    pair_count: int | None
    repetition_count: int | None
    case_ids: tuple[str, ...]
    cases: tuple[CaseEntry, ...]
    status_counts: Mapping[str, int]
    provenance: Provenance
    notes: tuple[str, ...]
    path: str | None = None

    @property
    def paired(self) -> bool:
        return self.experiment in PAIRED_EXPERIMENTS

    def case_entry(self, case_id: str) -> CaseEntry | None:
        for entry in self.cases:
            if entry.case_id == case_id:
                return entry
        return None

    def samples(self) -> tuple[Sample, ...]:
        """Every present sample in file order."""
        return tuple(s for entry in self.cases for s in entry.samples())

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": self.schema_version,
            "kind": self.kind,
            "experiment": self.experiment,
            "base_revision": self.base_revision,
            "fixture_revision": self.fixture_revision,
            "model_config_digest": self.model_config_digest,
            "pair_count": self.pair_count,
            "repetition_count": self.repetition_count,
            "case_ids": list(self.case_ids),
            "cases": [entry.to_dict() for entry in self.cases],
            "status_counts": dict(self.status_counts),
            "provenance": self.provenance.to_dict(),
            "notes": list(self.notes),
        }


def dump_evidence(evidence: Evidence) -> str:
    """Canonical serialization (spec §3.1): sorted keys, indent 2, `ensure_ascii=False`, one \\n."""
    return canonical_dumps(evidence.to_dict())


# ----------------------------------------------------------------------------- loading


def load_evidence(path: str | Path, *, manifest: CaseManifest | None = None) -> Evidence:
    """Read and structurally validate an evidence file (spec §3.1, §3.10).

    Args:
        path: The evidence file. Symlinks, FIFOs and files over 4 MiB are refused.
        manifest: The case manifest whose case ids are valid; the bundled one by default.

    Raises:
        EvidenceError: the first failure, with a payload-safe message.
    """
    messages = OpenMessages(
        lstat_failed=f"could not read evidence file: {path}",
        not_regular="evidence file must be a regular file",
        too_large="evidence file exceeds the 4 MiB limit",
        open_failed=f"could not read evidence file: {path}",
        changed_identity="evidence file changed identity before read",
    )
    data = read_bounded(path, limit=MAX_EVIDENCE_BYTES, messages=messages, error=EvidenceError)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise EvidenceError("evidence file must be UTF-8 JSON") from None
    try:
        obj = decode_bounded(text)
    except SyntaxProblem as exc:
        raise EvidenceError(f"evidence file is not valid JSON: {path}:{exc.line}") from None
    except BoundsError:
        raise EvidenceError(f"evidence file is not valid bounded JSON: {path}") from None
    return parse_evidence(obj, manifest=manifest, path=str(path))


def parse_evidence(
    obj: Any, *, manifest: CaseManifest | None = None, path: str | None = None
) -> Evidence:
    """Structurally validate a decoded evidence object; see `load_evidence`."""
    manifest = manifest or load_cases()
    return _Parser(manifest).evidence(obj, path)


def _fail(message: str) -> EvidenceError:
    return EvidenceError(message)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_count(value: Any) -> bool:
    return _is_int(value) and 0 <= value <= MAX_SAFE_INTEGER


def _one_of(values: tuple[str, ...]) -> str:
    if len(values) == 2:
        return f"one of {values[0]} or {values[1]}"
    return "one of " + ", ".join(values[:-1]) + ", or " + values[-1]


def _object(value: Any, loc: str, required: tuple[str, ...], optional: tuple[str, ...] = ()):
    if not isinstance(value, dict):
        raise _fail(f"{loc} must be a JSON object")
    for key in required:
        if key not in value:
            raise _fail(f"{loc} lacks required field {key}")
    if set(value) - set(required) - set(optional):
        raise _fail(f"{loc} contains unsupported fields")
    return value


class _Parser:
    def __init__(self, manifest: CaseManifest) -> None:
        self.manifest = manifest

    # -- format checks: each returns the value or raises with a fixed expectation

    def enum(self, value: Any, loc: str, allowed: tuple[str, ...], *, nullable=False):
        if value is None and nullable:
            return None
        if not isinstance(value, str) or value not in allowed:
            raise _fail(f"{loc} must be {_one_of(allowed)}")
        return value

    def commit(self, value: Any, loc: str, *, nullable=False):
        if value is None and nullable:
            return None
        if not isinstance(value, str) or not is_commit_hex(value):
            raise _fail(f"{loc} must be an exact lowercase 40-hex Git commit")
        return value

    def sha256(self, value: Any, loc: str, *, nullable=False):
        if value is None and nullable:
            return None
        if not isinstance(value, str) or not is_sha256_hex(value):
            raise _fail(f"{loc} must be an exact lowercase 64-hex SHA-256")
        return value

    def count(self, value: Any, loc: str, *, nullable=False):
        if value is None and nullable:
            return None
        if not _is_count(value):
            expectation = "null or a non-negative integer" if nullable else "a non-negative integer"
            raise _fail(f"{loc} must be {expectation}")
        return value

    def boolean(self, value: Any, loc: str):
        if not isinstance(value, bool):
            raise _fail(f"{loc} must be a boolean")
        return value

    def text(self, value: Any, loc: str, limit: int):
        if not isinstance(value, str) or not value or len(value) > limit:
            raise _fail(f"{loc} must be a non-empty string")
        return value

    def case_id(self, value: Any, loc: str):
        if not isinstance(value, str) or not self.manifest.has_case(value):
            raise _fail(f"{loc} must be a case id from the case manifest")
        return value

    # -- structure

    def evidence(self, obj: Any, path: str | None) -> Evidence:
        top = _object(obj, "evidence", _TOP_KEYS)
        version = top["schema_version"]
        if not _is_int(version) or version != 1:
            raise _fail("unsupported evidence schema_version")
        if top["kind"] != "paired_evidence":
            raise _fail("evidence kind must be paired_evidence")
        experiment = self.enum(top["experiment"], "experiment", EXPERIMENTS)
        paired = experiment in PAIRED_EXPERIMENTS
        base = self.commit(top["base_revision"], "base_revision")
        fixture = self.commit(top["fixture_revision"], "fixture_revision", nullable=True)
        digest = self.sha256(top["model_config_digest"], "model_config_digest", nullable=True)
        pair_count = self.count(top["pair_count"], "pair_count", nullable=True)
        repetition_count = self.count(top["repetition_count"], "repetition_count", nullable=True)
        if paired:
            if repetition_count is not None:
                raise _fail("repetition_count must be null in paired evidence")
            self.count(pair_count, "pair_count")
        else:
            if pair_count is not None:
                raise _fail("pair_count must be null in tool_selection evidence")
            self.count(repetition_count, "repetition_count")
        status_counts = _object(top["status_counts"], "status_counts", STATUSES)
        for status in STATUSES:
            self.count(status_counts[status], f"status_counts.{status}")
        provenance = self.provenance(top["provenance"])
        if digest is None and paired and not provenance.reconstructed:
            raise _fail(
                "model_config_digest may be null only in reconstructed or tool_selection evidence"
            )
        notes = top["notes"]
        if not isinstance(notes, list) or len(notes) > 64:
            raise _fail("notes must be an array of at most 64 non-empty strings")
        for i, note in enumerate(notes):
            self.text(note, f"notes[{i}]", 2000)
        case_ids = top["case_ids"]
        if not isinstance(case_ids, list) or not case_ids:
            raise _fail("case_ids must be a non-empty array of case ids from the case manifest")
        for i, case_id in enumerate(case_ids):
            self.case_id(case_id, f"case_ids[{i}]")
        if len(set(case_ids)) != len(case_ids):
            raise _fail("duplicate case id in case_ids")
        cases = top["cases"]
        if not isinstance(cases, list):
            raise _fail("cases must be an array of case entries")
        context = {
            "paired": paired,
            "reconstructed": provenance.reconstructed,
            "count": pair_count if paired else repetition_count,
        }
        entries = tuple(self.case_entry(raw, i, context) for i, raw in enumerate(cases))
        ids = [entry.case_id for entry in entries]
        if len(set(ids)) != len(ids):
            raise _fail("duplicate case id in cases")
        positions = [case_ids.index(i) if i in case_ids else -1 for i in ids]
        if -1 in positions or positions != sorted(positions):
            raise _fail("cases must follow the order of case_ids")
        return Evidence(
            schema_version=1,
            kind="paired_evidence",
            experiment=experiment,
            base_revision=base,
            fixture_revision=fixture,
            model_config_digest=digest,
            pair_count=pair_count,
            repetition_count=repetition_count,
            case_ids=tuple(case_ids),
            cases=entries,
            status_counts=MappingProxyType({s: status_counts[s] for s in STATUSES}),
            provenance=provenance,
            notes=tuple(notes),
            path=path,
        )

    def provenance(self, raw: Any) -> Provenance:
        obj = _object(raw, "provenance", ("source", "driver_kind", "note"))
        source = self.enum(obj["source"], "provenance.source", SOURCES)
        kind = self.enum(obj["driver_kind"], "provenance.driver_kind", DRIVER_KINDS, nullable=True)
        note = self.text(obj["note"], "provenance.note", 4000)
        if source == "reconstructed_from_published_summary" and kind is not None:
            raise _fail("provenance.driver_kind must be null for reconstructed evidence")
        return Provenance(source=source, driver_kind=kind, note=note)

    def case_entry(self, raw: Any, i: int, context: dict[str, Any]) -> CaseEntry:
        loc = f"cases[{i}]"
        paired = context["paired"]
        units = "pairs" if paired else "repetitions"
        if not isinstance(raw, dict):
            raise _fail(f"{loc} must be a JSON object")
        if set(raw) != {"case_id", "case_fingerprint", units}:
            if {"pairs", "repetitions"} & set(raw) and units not in raw:
                raise _fail(
                    f"{loc} must hold pairs in paired evidence"
                    if paired
                    else f"{loc} must hold repetitions in tool_selection evidence"
                )
            _object(raw, loc, ("case_id", "case_fingerprint", units))
        case_id = self.case_id(raw["case_id"], f"{loc}.case_id")
        fingerprint = self.sha256(raw["case_fingerprint"], f"{loc}.case_fingerprint", nullable=True)
        if fingerprint is None and not context["reconstructed"]:
            raise _fail(f"{loc}.case_fingerprint may be null only in reconstructed evidence")
        items = raw[units]
        if not isinstance(items, list):
            raise _fail(f"{loc}.{units} must be an array")
        count = context["count"]
        if paired:
            pairs = tuple(
                self.pair(p, f"{loc}.pairs[{j}]", case_id, count) for j, p in enumerate(items)
            )
            numbers = [p.pair for p in pairs]
            if numbers != sorted(set(numbers)):
                raise _fail(f"{loc}.pairs must be unique and ascending")
            return CaseEntry(case_id, fingerprint, pairs, None)
        samples = []
        for j, raw_sample in enumerate(items):
            sample_loc = f"{loc}.repetitions[{j}]"
            sample = self.sample(raw_sample, sample_loc, case_id=case_id, paired=False)
            if not (1 <= sample.repetition <= count):
                raise _fail(
                    f"{loc}.repetitions[{j}].repetition must be between 1 and repetition_count"
                )
            samples.append(sample)
        numbers = [s.repetition for s in samples]
        if numbers != sorted(set(numbers)):
            raise _fail(f"{loc}.repetitions must be unique and ascending")
        return CaseEntry(case_id, fingerprint, None, tuple(samples))

    def pair(self, raw: Any, loc: str, case_id: str, count: int) -> PairEntry:
        obj = _object(raw, loc, ("pair", "order", "samples"))
        number = obj["pair"]
        if not _is_int(number) or not (1 <= number <= count):
            raise _fail(f"{loc}.pair must be between 1 and pair_count")
        expected = ODD_ORDER if number % 2 == 1 else EVEN_ORDER
        if not isinstance(obj["order"], list) or tuple(obj["order"]) != expected:
            raise _fail(
                f"{loc}.order must alternate: odd pairs baseline first, even pairs candidate first"
            )
        raw_samples = obj["samples"]
        if not isinstance(raw_samples, list) or len(raw_samples) != 2:
            raise _fail(f"{loc}.samples must hold exactly two entries")
        samples = []
        for k, raw_sample in enumerate(raw_samples):
            sample_loc = f"{loc}.samples[{k}]"
            if raw_sample is None:
                samples.append(None)
                continue
            sample = self.sample(raw_sample, sample_loc, case_id=case_id, paired=True)
            if sample.pair != number:
                raise _fail(f"{sample_loc}.pair must equal the enclosing pair")
            if sample.ordinal != k + 1:
                raise _fail(f"{sample_loc}.ordinal must equal its position in samples")
            if sample.lane != expected[k]:
                raise _fail(f"{sample_loc}.lane must equal order at its position")
            samples.append(sample)
        return PairEntry(number, expected, (samples[0], samples[1]))

    def sample(self, raw: Any, loc: str, *, case_id: str, paired: bool) -> Sample:
        obj = _object(raw, loc, _SAMPLE_KEYS, _SAMPLE_OPTIONAL)
        if obj["case_id"] != case_id:
            raise _fail(f"{loc}.case_id must equal the enclosing case_id")
        if paired:
            self.count(obj["pair"], f"{loc}.pair")
            if type(obj["ordinal"]) is not int or obj["ordinal"] not in (1, 2):  # not 2.0, not true
                raise _fail(f"{loc}.ordinal must be one of 1 or 2")
            if obj["repetition"] is not None:
                raise _fail(f"{loc}.repetition must be null in paired evidence")
            self.enum(obj["lane"], f"{loc}.lane", LANES)
        else:
            for field in ("pair", "ordinal", "lane"):
                if obj[field] is not None:
                    raise _fail(f"{loc}.{field} must be null in tool_selection evidence")
            self.count(obj["repetition"], f"{loc}.repetition")
        variant = self.enum(obj["variant"], f"{loc}.variant", VARIANTS)
        surface = self.enum(obj["surface"], f"{loc}.surface", SURFACES)
        fits = surface == variant if variant != "code_mode" else surface in SURFACES[2:]
        if not fits:
            raise _fail(f"{loc}.surface does not fit {loc}.variant")
        policy = self.enum(obj["policy"], f"{loc}.policy", POLICIES, nullable=True)
        status = self.enum(obj["status"], f"{loc}.status", STATUSES)
        reason = None
        if "reason_code" in obj:
            reason = self.enum(obj["reason_code"], f"{loc}.reason_code", SAMPLE_REASON_CODES)
        correctness = None
        if obj["correctness"] is not None:
            c_loc = f"{loc}.correctness"
            c = _object(obj["correctness"], c_loc, ("task_verdict", "validation_verdict"))
            correctness = Correctness(
                self.enum(c["task_verdict"], f"{c_loc}.task_verdict", TASK_VERDICTS),
                self.enum(
                    c["validation_verdict"], f"{c_loc}.validation_verdict", VALIDATION_VERDICTS
                ),
            )
        gates = obj["runtime_gates"]
        if not isinstance(gates, dict):
            raise _fail(f"{loc}.runtime_gates must be a JSON object")
        if len(gates) > 32:
            raise _fail(f"{loc}.runtime_gates must hold at most 32 gates")
        for i, (name, value) in enumerate(gates.items()):
            if not _GATE.fullmatch(name):
                raise _fail(f"{loc}.runtime_gates key {i} must be a gate name")
            if value is not None and not isinstance(value, bool):
                raise _fail(f"{loc}.runtime_gates key {i} must map to null or a boolean")
        oracle = self.oracle(obj["fixture_oracle"], f"{loc}.fixture_oracle")
        instrumentation = self.instrumentation(obj["instrumentation"], f"{loc}.instrumentation")
        metrics = self.metrics(obj["metrics"], f"{loc}.metrics")
        ids = obj["outer_call_ids_sha256"]
        if ids is not None:
            if not isinstance(ids, list) or len(ids) > 10_000:
                raise _fail(f"{loc}.outer_call_ids_sha256 must be an array of at most 10000 hashes")
            for i, value in enumerate(ids):
                self.sha256(value, f"{loc}.outer_call_ids_sha256[{i}]")
            if ids != sorted(set(ids)):
                raise _fail(f"{loc}.outer_call_ids_sha256 must be unique and sorted")
            if metrics.outer_calls is not None and len(ids) != metrics.outer_calls:
                raise _fail(
                    f"{loc}.outer_call_ids_sha256 must hold exactly metrics.outer_calls values"
                )
            ids = tuple(ids)
        for field in ("efficiency_attestation", "host_cell_attestation"):
            if obj[field] is not None and not isinstance(obj[field], dict):
                raise _fail(f"{loc}.{field} must be a JSON object")
        return Sample(
            case_id=case_id,
            pair=obj["pair"],
            ordinal=obj["ordinal"],
            repetition=obj["repetition"],
            lane=obj["lane"],
            variant=variant,
            surface=surface,
            policy=policy,
            status=status,
            reason_code=reason,
            correctness=correctness,
            runtime_gates=MappingProxyType(dict(gates)),
            fixture_oracle=oracle,
            instrumentation=instrumentation,
            metrics=metrics,
            outer_call_ids_sha256=ids,
            efficiency_attestation=freeze(obj["efficiency_attestation"]),
            host_cell_attestation=freeze(obj["host_cell_attestation"]),
        )

    def oracle(self, raw: Any, loc: str) -> FixtureOracle:
        obj = _object(raw, loc, ("available", "passed"))
        available = self.boolean(obj["available"], f"{loc}.available")
        passed = obj["passed"]
        if not available and passed is not None:
            raise _fail(f"{loc}.passed must be null when available is false")
        if available and not isinstance(passed, bool):
            raise _fail(f"{loc}.passed must be a boolean when available is true")
        return FixtureOracle(available, passed)

    def instrumentation(self, raw: Any, loc: str):
        bad = _fail(f"{loc} must be a label or an array of 1..8 unique labels")
        if raw is None:
            return None
        if isinstance(raw, str):
            if not _LABEL.fullmatch(raw):
                raise bad
            return raw
        if (
            not isinstance(raw, list)
            or not 1 <= len(raw) <= 8
            or not all(isinstance(x, str) and _LABEL.fullmatch(x) for x in raw)
            or len(set(raw)) != len(raw)
        ):
            raise bad
        return tuple(raw)

    def metrics(self, raw: Any, loc: str) -> Metrics:
        obj = _object(raw, loc, METRIC_KEYS)
        values: dict[str, Any] = {}
        for key in METRIC_KEYS:
            if key == "repair_turns_by_reason":
                continue
            values[key] = self.count(obj[key], f"{loc}.{key}", nullable=True)
        by_reason = obj["repair_turns_by_reason"]
        if by_reason is not None:
            r_loc = f"{loc}.repair_turns_by_reason"
            if not isinstance(by_reason, dict):
                raise _fail(f"{r_loc} must be a JSON object")
            if values["repair_turns"] is None:
                raise _fail(f"{r_loc} requires repair_turns")
            if set(by_reason) - set(REPAIR_REASONS):
                raise _fail(f"{r_loc} contains unsupported fields")
            for key in REPAIR_REASONS:
                if key in by_reason:
                    self.count(by_reason[key], f"{r_loc}.{key}")
            if sum(by_reason.values()) != values["repair_turns"]:
                raise _fail(f"{loc}.repair_turns must equal the repair_turns_by_reason sum")
            by_reason = MappingProxyType(dict(by_reason))
        return Metrics(repair_turns_by_reason=by_reason, **values)
