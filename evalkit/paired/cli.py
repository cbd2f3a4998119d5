"""The command line of paired evidence: `evalkit pairs check|report` and `python -m evalkit.paired`.

Both entry points share `add_subcommands(parser)`; `evalkit.commands.pairs` registers it under
`evalkit`, and `main()` here is `python -m evalkit.paired` (errors print `evalkit-paired: ...`).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence

from evalkit.errors import EvalkitError, UsageError
from evalkit.paired.gate import Expected, strict_check
from evalkit.paired.manifest import load_cases
from evalkit.paired.report import build_report
from evalkit.paired.schema import load_evidence

__all__ = ["add_subcommands", "main"]

EXIT_CODES = """\
exit status:
  0  check: the file loads (with --strict: the strict verdict is pass); report: printed
  1  check --strict: the verdict is fail or unverifiable (a reconstructed file never passes)
  2  unusable input: unreadable or malformed file, bad option value
"""

CHECK_HELP = """\
Load an evidence file (schema v1) and run the strict gate. The gate recomputes acceptance from
the samples and never trusts a stored flag or count: it checks that every required case, pair
and lane sample is present, statuses are pass, efficiency and Host-cell attestations match the
run, fixture oracles and runtime contracts are proven, external correctness verdicts pass,
canonical Audit metadata exists, the source and case definitions are comparable and the stored
status counts add up. It prints the verdict, the unit counts and one line per finding (stable
reason codes such as missing_pair, attestation_mismatch, unverifiable_reconstruction). Output
is payload-safe: no attestation or receipt value is ever printed.
"""

REPORT_HELP = """\
Print the descriptive report of an evidence file: the per-pair table in the design's published
layout (each cell baseline / candidate, unknown values as 'unknown'), the per-pair deltas
(candidate_minus_baseline), the strict verdict, the Host-cell summary, hotspot candidates and
the caveats. --json prints the full report object instead (per-pair rows, samples,
nearest-rank distributions with missing counts, tallies, host cells, hotspots, caveats and the
embedded strict result). The report describes; it ranks nothing and claims no speedup.
"""

_COMMIT = re.compile(r"^[0-9a-f]{40}$")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


def add_subcommands(parser: argparse.ArgumentParser) -> None:
    """Add `check` and `report` to `parser` and set each one's `func` (args -> exit status)."""
    sub = parser.add_subparsers(dest="pairs_command", metavar="SUBCOMMAND")
    check = sub.add_parser(
        "check",
        help="validate an evidence file and run the strict gate",
        description=CHECK_HELP,
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    check.add_argument("file", metavar="FILE", help="evidence JSON file (schema v1)")
    check.add_argument(
        "--strict",
        action="store_true",
        help="exit 1 unless the strict verdict is pass (without it, exit 0 whenever the file loads)",
    )
    check.add_argument(
        "--expect-model-config-digest",
        metavar="HEX",
        help="pinned 64-hex model/configuration digest the file must carry",
    )
    check.add_argument(
        "--expect-base-revision", metavar="HEX", help="40-hex source commit the file must carry"
    )
    check.add_argument(
        "--expect-fixture-revision",
        metavar="HEX",
        help="40-hex frozen fixture commit the file must carry",
    )
    check.add_argument("--json", action="store_true", help="print the strict result as JSON")
    check.add_argument(
        "--case-manifest",
        metavar="PATH",
        help="case manifest the evidence ran under (default: bundled)",
    )
    check.set_defaults(func=run_check)

    report = sub.add_parser(
        "report",
        help="print the per-pair table, deltas, strict verdict and caveats",
        description=REPORT_HELP,
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    report.add_argument("file", metavar="FILE", help="evidence JSON file (schema v1)")
    report.add_argument("--json", action="store_true", help="print the report object (spec §7.1)")
    report.add_argument(
        "--case-manifest",
        metavar="PATH",
        help="case manifest the evidence ran under (default: bundled)",
    )
    report.set_defaults(func=run_report)
    parser.set_defaults(func=lambda args: _usage(parser))


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help(sys.stderr)
    return 2


def _expected(args: argparse.Namespace) -> Expected:
    digest = args.expect_model_config_digest
    if digest is not None and not _SHA256.match(digest):
        raise UsageError("--expect-model-config-digest must be an exact lowercase 64-hex SHA-256")
    for option, value in (
        ("--expect-base-revision", args.expect_base_revision),
        ("--expect-fixture-revision", args.expect_fixture_revision),
    ):
        if value is not None and not _COMMIT.match(value):
            raise UsageError(f"{option} must be an exact lowercase 40-hex Git commit")
    return Expected(digest, args.expect_base_revision, args.expect_fixture_revision)


def run_check(args: argparse.Namespace) -> int:
    expected = _expected(args)
    manifest = load_cases(args.case_manifest)
    evidence = load_evidence(args.file, manifest=manifest)
    result = strict_check(evidence, manifest=manifest, expected=expected)
    if args.json:
        from evalkit.paired._json import canonical_dumps

        sys.stdout.write(canonical_dumps(result.to_dict()))
    else:
        print(f"experiment: {result.experiment}")
        print(f"verdict: {result.verdict}")
        print(
            f"{result.unit}s: {result.required_units} required, {result.present_units} present, "
            f"{result.qualified_units} qualified ({result.qualified_basis})"
        )
        for finding in result.findings:
            print(f"finding: {finding.line()}")
    if args.strict:
        return 0 if result.verdict == "pass" else 1
    return 0


def run_report(args: argparse.Namespace) -> int:
    manifest = load_cases(args.case_manifest)
    evidence = load_evidence(args.file, manifest=manifest)
    report = build_report(evidence, manifest=manifest)
    sys.stdout.write(report.to_json() if args.json else report.render_text())
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m evalkit.paired",
        description="Paired evidence: validate, strict-check and report evidence files.",
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_subcommands(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except EvalkitError as exc:
        print(f"evalkit-paired: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
