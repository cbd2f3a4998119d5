"""The bundled published baseline: `data/evidence/host-policy-2026-10-17.json` (spec §9).

A reconstruction, typed in from the table and prose of the completed 2026-10-17 Host-policy
baseline in the efficiency-evidence design; no receipts or attestations stand behind it, so the
strict gate answers `unverifiable` for it, never `pass`.
"""

from __future__ import annotations

from pathlib import Path

from evalkit.paired.manifest import CaseManifest
from evalkit.paired.schema import Evidence, load_evidence
from evalkit.paths import bundled_evidence

__all__ = ["PUBLISHED_BASELINE", "evidence_dir", "load_published_baseline"]


def evidence_dir() -> Path:
    """`data/evidence/` under the repository root (this file is `evalkit/paired/baseline.py`)."""
    return bundled_evidence().parent


PUBLISHED_BASELINE = evidence_dir() / "host-policy-2026-10-17.json"


def load_published_baseline(*, manifest: CaseManifest | None = None) -> Evidence:
    """Load the bundled 2026-10-17 Host-policy baseline (spec §9)."""
    return load_evidence(PUBLISHED_BASELINE, manifest=manifest)
