"""The case manifest and case fingerprints (spec §2).

The manifest names the cases of each experiment and defines each case: prompt, surfaces, oracle
and validation requirements, runtime contracts. It is bundled as
`evalkit/paired/data/paired-evidence-cases.json`; `load_cases()` loads and validates it, and
`case_fingerprint(case)` hashes one case object (§2.5). Evidence collected under another manifest
is checked against that manifest: pass `load_cases(path)` to the gate.

Example:
    >>> from evalkit.paired import load_cases, case_fingerprint
    >>> cases = load_cases()
    >>> case_fingerprint(cases.case("readonly_review").raw)[:12]
    '52ddd75a701c'
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from evalkit.paired._files import OpenMessages, read_bounded
from evalkit.paired._json import (
    BoundsError,
    SyntaxProblem,
    decode_bounded,
    fingerprint_dumps,
    thaw,
)
from evalkit.paired.errors import CaseManifestError

__all__ = [
    "BUNDLED_MANIFEST",
    "EXPERIMENTS",
    "RUNTIME_CONTRACTS",
    "Case",
    "CaseManifest",
    "case_fingerprint",
    "decode_cases",
    "load_cases",
    "model_config_digest",
    "parse_cases",
]

BUNDLED_MANIFEST = Path(__file__).with_name("data") / "paired-evidence-cases.json"
EXPERIMENTS = ("direct_vs_host", "host_cell_policy", "nested_code_mode", "tool_selection")
PAIRED_EXPERIMENTS = EXPERIMENTS[:3]
RUNTIME_CONTRACTS = (
    "runtime_evidence",
    "workspace_clean",
    "multi_file_edit",
    "long_handoff",
    "selection_admission",
)
NESTED_SURFACES = ("read_only", "guarded_edit", "validation")
CASE_ID = re.compile(r"[a-z][a-z0-9_]{0,63}")  # matched with fullmatch: no trailing newline
_CASE_KEYS = (
    "case_id",
    "title",
    "prompt",
    "surfaces",
    "validation_required",
    "fixture_oracle_required",
    "runtime_contracts",
)
_LIMIT = 1024 * 1024  # §2.7: the manifest file is bounded to 1 MiB


def case_fingerprint(case: Mapping[str, Any]) -> str:
    """SHA-256 hex of one case object: sorted keys, `(",", ":")`, UTF-8 (spec §2.5)."""
    return hashlib.sha256(fingerprint_dumps(thaw(case))).hexdigest()


@dataclass(frozen=True)
class Case:
    """One validated case object (spec §2.2); `raw` is the object as loaded, for hashing."""

    case_id: str
    title: str
    prompt: str
    surfaces: Mapping[str, str]
    validation_required: bool
    fixture_oracle_required: bool
    runtime_contracts: tuple[str, ...]
    fingerprint: str
    raw: Mapping[str, Any]

    @property
    def nested_surface(self) -> str | None:
        """The case's `code_mode` surface, or None when it has no nested variant."""
        return self.surfaces.get("code_mode")


@dataclass(frozen=True)
class CaseManifest:
    """A validated manifest: experiment → ordered case ids, and the cases in file order."""

    experiments: Mapping[str, tuple[str, ...]]
    cases: tuple[Case, ...]
    path: str | None = None

    def case(self, case_id: str) -> Case:
        for case in self.cases:
            if case.case_id == case_id:
                return case
        raise KeyError(case_id)

    def has_case(self, case_id: str) -> bool:
        return any(case.case_id == case_id for case in self.cases)

    @property
    def case_ids(self) -> tuple[str, ...]:
        return tuple(case.case_id for case in self.cases)

    def experiment_cases(self, experiment: str) -> tuple[str, ...]:
        return self.experiments.get(experiment, ())

    def case_rank(self, experiment: str, case_id: str | None) -> int:
        """Sort rank of a case (spec §6.1): the experiment's cases first, then the others."""
        required = self.experiment_cases(experiment)
        if case_id in required:
            return required.index(case_id)
        if case_id in self.case_ids:
            return len(required) + self.case_ids.index(case_id)
        return len(required) + len(self.cases)


_MESSAGES = OpenMessages(
    lstat_failed="could not read case manifest: {path}",
    not_regular="could not read case manifest: {path}",
    too_large="case manifest exceeds the 1 MiB limit",
    open_failed="could not read case manifest: {path}",
    changed_identity="could not read case manifest: {path}",
)


def load_cases(path: str | Path | None = None) -> CaseManifest:
    """Load and validate a case manifest; the default is the bundled one (spec §2).

    Raises:
        CaseManifestError: with the first failure, worded as in spec §2.7.
    """
    path = Path(path) if path is not None else BUNDLED_MANIFEST
    messages = OpenMessages(**{k: v.format(path=path) for k, v in vars(_MESSAGES).items()})
    data = read_bounded(path, limit=_LIMIT, messages=messages, error=CaseManifestError)
    return decode_cases(data, path=str(path))


def decode_cases(data: bytes, *, path: str) -> CaseManifest:
    """Decode and validate manifest bytes read elsewhere (the collector reads them from a commit).

    `path` names the source in messages, e.g. `<commit>:<path>`.
    """
    if len(data) > _LIMIT:
        raise CaseManifestError("case manifest exceeds the 1 MiB limit")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise CaseManifestError(f"case manifest must be UTF-8: {path}") from None
    try:
        obj = decode_bounded(text)
    except SyntaxProblem as exc:
        raise CaseManifestError(f"case manifest is not valid JSON: {path}:{exc.line}") from None
    except BoundsError:
        raise CaseManifestError(f"case manifest is not valid bounded JSON: {path}") from None
    return parse_cases(obj, path=path)


def parse_cases(obj: Any, *, path: str | None = None) -> CaseManifest:
    """Validate an already decoded manifest object (spec §2.1–2.2, messages of §2.7)."""
    if not isinstance(obj, dict):
        raise CaseManifestError("case manifest must be a JSON object")
    version = obj.get("schema_version")
    if not _is_int(version) or version != 1:
        raise CaseManifestError("unsupported case manifest schema_version")
    if obj.get("kind") != "paired_evidence_cases":
        raise CaseManifestError("case manifest kind must be paired_evidence_cases")
    if set(obj) - {"schema_version", "kind", "experiments", "cases"}:
        # §2.1 fixes the key set; §2.7 lists no message for extra keys, so this one is ours.
        raise CaseManifestError("case manifest contains unsupported fields")
    raw_cases = obj.get("cases")
    if not isinstance(raw_cases, list) or not raw_cases:
        raise CaseManifestError("case manifest cases must be a non-empty array")
    cases: list[Case] = []
    seen: set[str] = set()
    for i, raw in enumerate(raw_cases):
        case = _parse_case(raw, i)
        if case.case_id in seen:
            raise CaseManifestError(f"duplicate case id: {case.case_id}")
        seen.add(case.case_id)
        cases.append(case)
    experiments = obj.get("experiments")
    bad = CaseManifestError("case manifest experiments must map each experiment to known case ids")
    if not isinstance(experiments, dict) or set(experiments) - set(EXPERIMENTS):
        raise bad
    mapped: dict[str, tuple[str, ...]] = {}
    for name in EXPERIMENTS:
        ids = experiments.get(name, [])
        if (
            not isinstance(ids, list)
            or not all(isinstance(i, str) and i in seen for i in ids)
            or len(set(ids)) != len(ids)
        ):
            raise bad
        mapped[name] = tuple(ids)
    used = {case_id for ids in mapped.values() for case_id in ids}
    if used != seen:  # §2.1: every case belongs to at least one experiment
        raise bad
    return CaseManifest(experiments=MappingProxyType(mapped), cases=tuple(cases), path=path)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _parse_case(raw: Any, i: int) -> Case:
    loc = f"cases[{i}]"
    if not isinstance(raw, dict):
        raise CaseManifestError(f"{loc} must be an object")
    for field in ("case_id", "title", "prompt"):
        if not isinstance(raw.get(field), str) or not raw[field]:
            raise CaseManifestError(f"{loc}.{field} must be a non-empty string")
    if not CASE_ID.fullmatch(raw["case_id"]):
        raise CaseManifestError(f"{loc}.case_id must match ^[a-z][a-z0-9_]{{0,63}}$")
    surfaces = raw.get("surfaces")
    if (
        not isinstance(surfaces, dict)
        or surfaces.get("direct") != "direct"
        or surfaces.get("host_code_mode") != "host_code_mode"
        or set(surfaces) - {"direct", "host_code_mode", "code_mode"}
        or ("code_mode" in surfaces and surfaces["code_mode"] not in NESTED_SURFACES)
    ):
        raise CaseManifestError(
            f"{loc}.surfaces must map direct and host_code_mode to themselves and code_mode "
            "to read_only, guarded_edit, or validation"
        )
    for field in ("validation_required", "fixture_oracle_required"):
        if not isinstance(raw.get(field), bool):
            raise CaseManifestError(f"{loc}.{field} must be a boolean")
    contracts = raw.get("runtime_contracts")
    if (
        not isinstance(contracts, list)
        or not all(isinstance(c, str) and c in RUNTIME_CONTRACTS for c in contracts)
        or len(set(contracts)) != len(contracts)
    ):
        raise CaseManifestError(
            f"{loc}.runtime_contracts must be unique names from runtime_evidence, "
            "workspace_clean, multi_file_edit, long_handoff, selection_admission"
        )
    if set(raw) != set(_CASE_KEYS):
        raise CaseManifestError(f"{loc} contains unsupported fields")
    return Case(
        case_id=raw["case_id"],
        title=raw["title"],
        prompt=raw["prompt"],
        surfaces=MappingProxyType(dict(surfaces)),
        validation_required=raw["validation_required"],
        fixture_oracle_required=raw["fixture_oracle_required"],
        runtime_contracts=tuple(contracts),
        fingerprint=case_fingerprint(raw),
        raw=MappingProxyType(raw),
    )


def model_config_digest(record: Mapping[str, Any]) -> str:
    """SHA-256 hex of a model/configuration record, hashed like a case (spec §8.5)."""
    if not isinstance(record, Mapping):
        raise TypeError("a model/configuration record is a JSON object")
    return hashlib.sha256(fingerprint_dumps(thaw(record))).hexdigest()
