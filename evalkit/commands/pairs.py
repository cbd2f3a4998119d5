"""`evalkit pairs check|report|collect` — paired evidence: gate, per-pair tables, collector.

The subcommands live in `evalkit.paired.cli` (shared with `python -m evalkit.paired`); this
module only registers them under `evalkit`.
"""

from __future__ import annotations

import argparse

from evalkit.paired.cli import add_subcommands


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "pairs",
        help="paired A/B evidence: strict gate (check), per-pair tables (report), collector (collect)",
        description=(
            "Paired evidence about agent tool use: Direct vs Host Code Mode, Host single-call vs\n"
            "composition policy, nested Code Mode, free tool selection.\n\n"
            "  check FILE [--strict]   validate a schema-v1 evidence file and run the strict gate\n"
            "  report FILE [--json]    the per-pair table, deltas, p50/p95, k of n, caveats\n"
            "  collect ...             run a driver over the tasks in alternating pairs, in fresh\n"
            "                          git worktrees, and write evidence the gate can judge\n\n"
            "Each subcommand has its own --help with examples and exit codes."
        ),
        epilog=(
            "examples:\n"
            "  evalkit pairs report data/evidence/host-policy-2026-10-17.json\n"
            "  evalkit pairs check data/evidence/host-policy-2026-10-17.json --strict\n\n"
            "exit status:\n"
            "  0    check: the file loads (with --strict: the verdict is pass); report: printed;\n"
            "       collect: no sample failed\n"
            "  1    check --strict: the verdict is fail or unverifiable; collect: a sample failed\n"
            "  2    unusable input: unreadable or malformed file, bad option value\n"
            "  130  interrupted (Ctrl-C)\n"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_subcommands(parser)
