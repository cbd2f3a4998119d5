"""The command line of paired evidence: `evalkit pairs check|report|collect`, `python -m evalkit.paired`.

Both entry points share `add_subcommands(parser)`; `evalkit.commands.pairs` registers it under
`evalkit`, and `main()` here is `python -m evalkit.paired` (errors print `evalkit-paired: ...`).
"""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Sequence

from evalkit.errors import EvalkitError, UsageError, one_line, unexpected_error
from evalkit.paired._json import is_commit_hex, is_sha256_hex
from evalkit.paired.driver import DEFAULT_TIME_LIMIT
from evalkit.paired.errors import EvidenceError
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

CHECK_EXAMPLES = """\
examples:
  evalkit pairs check data/evidence/host-policy-2026-10-17.json            # loads: exit 0
  evalkit pairs check data/evidence/host-policy-2026-10-17.json --strict   # unverifiable: exit 1
  evalkit pairs check evidence.json --strict --json | python -m json.tool

"""

REPORT_EXAMPLES = """\
examples:
  evalkit pairs report data/evidence/host-policy-2026-10-17.json
  evalkit pairs report evidence.json --json > report.json   # the whole report as one JSON object

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
Print the descriptive report of an evidence file: the per-pair table in its published
layout (each cell baseline / candidate, unknown values as 'unknown'), the per-pair deltas
(candidate_minus_baseline), the strict verdict, the Host-cell summary, hotspot candidates and
the caveats. --json prints the full report object instead (per-pair rows, samples,
nearest-rank distributions with missing counts, tallies, host cells, hotspots, caveats and the
embedded strict result). The report describes; it ranks nothing and claims no speedup.
"""

COLLECT_HELP = """\
Run a caller-supplied driver over the experiment's cases and write schema-v1 evidence.

Each sample runs in a fresh detached git worktree of --base-revision (or --fixture-revision),
which must be the checkout HEAD of --repo. The driver is split with shell-style quoting and run
without a shell, in its own process group, with no stdin and its output discarded; it gets the
WEBCODEX_BENCH_* environment (workspace, case id, prompt, variant, surface, base revision, case
fingerprint, receipt path, and WEBCODEX_BENCH_HOST_CELL_POLICY in host_cell_policy) but never
the model/configuration digest: it must attest the configuration it actually runs. At the time
limit (default 30 minutes) the whole group is killed and the sample fails with driver_timeout.

Pairs alternate: odd pairs run baseline first, even pairs candidate first. The collector reads
the bounded receipt, the Audit rows of the receipt's workflow session, the fixture oracle and
the runtime contracts, checks the attestations, and keeps failed samples as samples. No receipt
field beyond the validated values, and no driver output, is ever stored or printed. Worktrees,
receipts and scratch files live in one temporary directory that is always removed. The
evidence is written atomically in canonical form; --strict then runs the strict gate.

What the driver cannot do: its receipt path is a random name created when its sample starts,
and a receipt older than the driver is rejected; on Linux the collector adopts orphaned
processes (a child subreaper) and kills every process the driver started, daemons in a new
session included (without /proc only the process group is killed; a process that is never
seen alive and re-parents itself under a subreaper of its own can still escape). Worktrees
are removed by the registration recorded when they were created, never through a .git file
the driver could rewrite. An --output that exists and is not a regular file (a device, a
directory, a FIFO, a link) is refused before any sample runs; if writing the evidence fails,
it is kept in a new file beside OUTPUT and that path is printed. SIGINT, SIGTERM and SIGHUP
all clean up.

experiments:
  direct_vs_host     Direct (baseline) vs Host Code Mode (candidate); 3 tasks x --pairs x 2
  host_cell_policy   Host single-call (baseline) vs composition allowed (candidate)
  tool_selection     4 free-selection scenarios x --repetitions, one --variant, no pairs
  --experimental-nested adds the isolated nested Code Mode group to direct_vs_host, written to
  OUTPUT with .nested_code_mode before the extension (36 samples at 3 pairs, 18 per file).

examples:
  python -m evalkit.paired collect --repo . --base-revision "$(git rev-parse HEAD)" \\
    --driver-command '/abs/live-driver --pinned-config /private/config.json' \\
    --model-config-digest <64-hex> --pairs 3 --output /private/evidence.json --strict
  evalkit pairs collect --experiment tool_selection --variant host_code_mode \\
    --repo . --base-revision HEAD --driver /abs/selection-driver --output sel.json
  # collector testing only (never real-model evidence):
  evalkit pairs collect --repo . --base-revision HEAD --scripted-driver \\
    --driver 'python -m evalkit.paired.scripted_driver --pinned-config cfg.json' \\
    --model-config-digest <64-hex> --pairs 1 --output /tmp/scripted.json
"""

COLLECT_EXIT_CODES = """\
exit status:
  0  no sample has recorded status fail (with --strict: every written file's verdict is pass)
  1  some sample failed (with --strict: a verdict is fail; scripted evidence never passes)
  2  setup or usage error (bad option, base revision not HEAD, unreadable manifest)
"""


def add_subcommands(parser: argparse.ArgumentParser) -> None:
    """Add `check` and `report` to `parser` and set each one's `func` (args -> exit status)."""
    sub = parser.add_subparsers(dest="pairs_command", metavar="SUBCOMMAND")
    check = sub.add_parser(
        "check",
        help="validate an evidence file and run the strict gate",
        description=CHECK_HELP,
        epilog=CHECK_EXAMPLES + EXIT_CODES,
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
        epilog=REPORT_EXAMPLES + EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    report.add_argument("file", metavar="FILE", help="evidence JSON file (schema v1)")
    report.add_argument(
        "--json",
        action="store_true",
        help="print the whole report as one JSON object instead of text",
    )
    report.add_argument(
        "--case-manifest",
        metavar="PATH",
        help="case manifest the evidence ran under (default: bundled)",
    )
    report.add_argument(
        "--html",
        metavar="OUT",
        help="also write the report as a page, OUT/index.html (a new or empty folder, or one "
        "an earlier report wrote)",
    )
    report.set_defaults(func=run_report)
    _add_collect(sub)
    parser.set_defaults(func=lambda args: _usage(parser))


def _add_collect(sub) -> None:
    collect = sub.add_parser(
        "collect",
        help="run a driver in alternating pairs and write evidence",
        description=COLLECT_HELP,
        epilog=COLLECT_EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add = collect.add_argument
    add("--repo", default=".", metavar="DIR", help="checkout under test (default: .)")
    add("--base-revision", required=True, metavar="REV", help="exact commit; must be HEAD")
    add(
        "--experiment",
        default="direct_vs_host",
        choices=("direct_vs_host", "host_cell_policy", "tool_selection"),
        help="default: direct_vs_host",
    )
    add(
        "--experimental-nested",
        action="store_true",
        help="also run the isolated nested Code Mode group (direct_vs_host only)",
    )
    add(
        "--driver-command",
        "--driver",
        dest="driver_command",
        required=True,
        metavar="CMD",
        help="driver executable and arguments (shell-style quoting, run without a shell)",
    )
    add("--model-config-digest", metavar="HEX", help="pinned 64-hex digest (paired: required)")
    add(
        "--model-config-record",
        metavar="PATH",
        help="the pinned record; refuse to start unless its digest equals --model-config-digest",
    )
    add("--pairs", type=int, metavar="N", help="pairs per case, 1..10 (default 3)")
    add(
        "--repetitions", type=int, metavar="N", help="tool_selection repetitions, 1..10 (default 3)"
    )
    add("--variant", choices=("direct", "host_code_mode"), help="tool_selection lane (required)")
    add("--fixture-revision", metavar="REV", help="create workspaces from this frozen commit")
    add(
        "--case-manifest",
        metavar="PATH",
        help="case manifest committed at the base revision (repo-relative); default: bundled",
    )
    kind = collect.add_mutually_exclusive_group()
    kind.add_argument(
        "--manual-bridge", action="store_true", help="record driver_kind manual_bridge"
    )
    kind.add_argument(
        "--scripted-driver",
        action="store_true",
        help="record driver_kind scripted (collector testing only; never strict-pass)",
    )
    add("--output", required=True, metavar="FILE", help="evidence file to write (atomically)")
    add("--strict", action="store_true", help="run the strict gate; exit 0 only on pass")
    add(
        "--driver-timeout",
        type=float,
        default=DEFAULT_TIME_LIMIT,
        metavar="SECONDS",
        help="per-driver time limit (default 1800; shorter limits are for tests)",
    )
    collect.set_defaults(func=run_collect)


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help(sys.stderr)
    return 2


def _expected(args: argparse.Namespace) -> Expected:
    digest = args.expect_model_config_digest
    if digest is not None and not is_sha256_hex(digest):
        raise UsageError("--expect-model-config-digest must be an exact lowercase 64-hex SHA-256")
    for option, value in (
        ("--expect-base-revision", args.expect_base_revision),
        ("--expect-fixture-revision", args.expect_fixture_revision),
    ):
        if value is not None and not is_commit_hex(value):
            raise UsageError(f"{option} must be an exact lowercase 40-hex Git commit")
    return Expected(digest, args.expect_base_revision, args.expect_fixture_revision)


def _load(path: str, manifest):
    """`load_evidence`, its error naming the file when the message does not already (the
    message itself is the specification's, word for word)."""
    try:
        return load_evidence(path, manifest=manifest)
    except EvidenceError as exc:
        if str(path) in str(exc):
            raise
        raise EvidenceError(f"{path}: {exc}") from None


def run_check(args: argparse.Namespace) -> int:
    expected = _expected(args)
    manifest = load_cases(args.case_manifest)
    evidence = _load(args.file, manifest)
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
    evidence = _load(args.file, manifest)
    report = build_report(evidence, manifest=manifest)
    if args.html is not None:
        from evalkit.outputs.html.pairs import write_pairs_report

        write_pairs_report(report, args.html)
    sys.stdout.write(report.to_json() if args.json else report.render_text())
    return 0


def run_collect(args: argparse.Namespace) -> int:
    from pathlib import Path

    from evalkit.paired.collect import CollectOptions, collect, split_driver_command

    kind = "scripted" if args.scripted_driver else "manual_bridge" if args.manual_bridge else None
    options = CollectOptions(
        repo=Path(args.repo),
        base_revision=args.base_revision,
        driver_command=split_driver_command(args.driver_command),
        output=Path(args.output),
        experiment=args.experiment,
        model_config_digest=args.model_config_digest,
        model_config_record=(
            Path(args.model_config_record) if args.model_config_record is not None else None
        ),
        pairs=args.pairs,
        repetitions=args.repetitions,
        variant=args.variant,
        fixture_revision=args.fixture_revision,
        driver_kind=kind or "live_host",
        case_manifest=args.case_manifest,
        nested=args.experimental_nested,
        strict=args.strict,
        time_limit=args.driver_timeout,
    )
    # SIGTERM and SIGHUP (a closed terminal) clean up exactly as Ctrl-C does.
    previous = {sig: signal.signal(sig, _interrupt) for sig in _CLEANUP_SIGNALS}
    try:
        return collect(options).exit_code
    except KeyboardInterrupt:
        print("evalkit-paired: interrupted; worktrees and temporary files removed", file=sys.stderr)
        return 130
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


_CLEANUP_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name)
)


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m evalkit.paired",
        description="Paired evidence: validate, strict-check, report and collect evidence files.",
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
        print(one_line(f"evalkit-paired: {exc}"), file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    except Exception as exc:  # noqa: BLE001 — never a traceback (issue 11)
        subject = getattr(args, "file", None) or getattr(args, "output", None) or "(input)"
        print(one_line(f"evalkit-paired: {unexpected_error(str(subject), exc)}"), file=sys.stderr)
        return 2
