"""Paired evidence: schema, strict gate and per-pair tables (paired-evidence spec).

The data flows through one module per step:

* `evalkit.paired.manifest` — the case manifest and case fingerprints (§2)
* `evalkit.paired.schema` — evidence files, schema v1: loading, validation, canonical dump (§3)
* `evalkit.paired.attest` — efficiency and Host-cell attestation checks (§4)
* `evalkit.paired.receipts` — the bounded driver-receipt reader (§5)
* `evalkit.paired.gate` — the strict gate with its stable reason codes (§6)
* `evalkit.paired.report` — the descriptive report, frames and the published-style table (§7)
* `evalkit.paired.baseline` — the bundled 2026-10-17 Host-policy baseline (§9)
* `evalkit.paired.collect` — the collector: alternating pairs in fresh worktrees (§8), with
  `driver`, `worktrees`, `audit`, `oracle` and the test-only `scripted_driver`
* `evalkit.paired.cli` — `evalkit pairs check|report|collect` and `python -m evalkit.paired`

Typical notebook use:

    >>> from evalkit.paired import PUBLISHED_BASELINE, build_report, load_evidence, strict_check
    >>> evidence = load_evidence(PUBLISHED_BASELINE)  # data/evidence/host-policy-2026-10-17.json
    >>> result = strict_check(evidence)          # verdict, findings, unit counts
    >>> result.verdict
    'unverifiable'
    >>> report = build_report(evidence)          # embeds the strict result
    >>> table = report.published_style_table()   # the design's table, cell for cell
    >>> frame = report.pairs_frame()             # Int64 columns, <NA> for unknown
    >>> report.tallies["overall"]["outer_calls"].text
    '3 of 9 improved, 0 of 9 regressed, 6 of 9 tied; 0 unknown'

Small-n statistics for other datasets (Hodges–Lehmann, exact tests, intervals) live in
`evalkit.stats`; this report never calls them (§1.2). The collector (§8) reuses `read_receipt`,
the `receipt_*` field helpers, the attestation checks and the strict gate.
"""

from evalkit.paired.attest import (
    AttestationFinding,
    check_efficiency_attestation,
    check_host_cell_attestation,
)
from evalkit.paired.baseline import PUBLISHED_BASELINE, load_published_baseline
from evalkit.paired.errors import CaseManifestError, EvidenceError, PairedError, ReceiptError
from evalkit.paired.gate import REASON_CODES, Expected, Finding, StrictResult, strict_check
from evalkit.paired.manifest import CaseManifest, case_fingerprint, load_cases, model_config_digest
from evalkit.paired.receipts import Receipt, read_receipt
from evalkit.paired.report import CAVEATS, PairedReport, build_report
from evalkit.paired.schema import Evidence, dump_evidence, load_evidence, parse_evidence

__all__ = [
    "CAVEATS",
    "PUBLISHED_BASELINE",
    "REASON_CODES",
    "AttestationFinding",
    "CaseManifest",
    "CaseManifestError",
    "Evidence",
    "EvidenceError",
    "Expected",
    "Finding",
    "PairedError",
    "PairedReport",
    "Receipt",
    "ReceiptError",
    "StrictResult",
    "build_report",
    "case_fingerprint",
    "check_efficiency_attestation",
    "check_host_cell_attestation",
    "dump_evidence",
    "load_cases",
    "load_evidence",
    "load_published_baseline",
    "model_config_digest",
    "parse_evidence",
    "read_receipt",
    "strict_check",
]
