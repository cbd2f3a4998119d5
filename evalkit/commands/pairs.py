"""`evalkit pairs check|report|collect` — paired evidence: gate, per-pair tables, collector.

The subcommands live in `evalkit.paired.cli` (shared with `python -m evalkit.paired`); this
module only registers them under `evalkit`.
"""

from __future__ import annotations

import argparse

from evalkit.paired.cli import CHECK_HELP, EXIT_CODES, add_subcommands


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "pairs",
        help="paired A/B evidence: strict gate (check), per-pair tables (report), collector (collect)",
        description=(
            "Paired evidence about agent tool use (Direct vs Host Code Mode, Host single-call vs "
            "composition policy, nested Code Mode, free tool selection). `check FILE [--strict]` "
            "validates a schema-v1 evidence file and runs the strict gate; `report FILE [--json]` "
            "prints the per-pair table in the design's layout with deltas and caveats; `collect` runs "
            "a driver over the tasks in alternating pairs in fresh git worktrees and writes "
            "evidence the gate can judge.\n\n" + CHECK_HELP
        ),
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_subcommands(parser)
