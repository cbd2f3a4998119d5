"""The `evalkit` command line: `evalkit run`, `session`, `sweep` and `pairs`.

Exit status: 0 success, 1 a negative verdict where a command has one (see its --help), 2 unusable
input (a missing file, a bad option value). Errors are one line on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from evalkit import __version__
from evalkit.errors import EvalkitError

__all__ = ["COMMANDS", "build_parser", "main"]

# Order is the order `evalkit --help` lists them.
COMMANDS = ("run", "session", "sweep", "compare", "campaign", "pairs")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="evalkit",
        description=(
            "Judge A/B evaluations of coding-agent tools from Claude Code stream-json transcripts: "
            "explore allocation efficiency, sufficiency and occupancy per run; the baseline sweep "
            "and new-vs-baseline arm table over a corpus; per-pair tables from paired evidence."
        ),
        epilog=(
            "Start with `evalkit sweep` (the bundled synthetic corpus) or "
            "`evalkit run path/to/run.jsonl`. Each command has its own --help."
        ),
    )
    parser.add_argument("--version", action="version", version=f"evalkit {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"evalkit.commands.{name}").register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return 2
    try:
        return int(args.func(args) or 0)
    except EvalkitError as exc:
        print(f"evalkit {args.command}: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `evalkit sweep | head` is not an error
        return 0


if __name__ == "__main__":
    sys.exit(main())
