"""`evalkit run FILE [FILE ...]` — the reference's per-run blocks for one session."""

from __future__ import annotations

import argparse
import json
import sys

from evalkit.ecma import printable
from evalkit.report import format_run, run_json
from evalkit.session import parse_session

HELP = """\
Parse one session and print its explore allocation block exactly as the reference harness
(parse-run.mjs) does. Several FILEs are the segments of ONE multi-turn session, in order:
  evalkit run run-X.jsonl run-X.t2.jsonl run-X.t3.jsonl
.jsonl.gz files are read transparently. Blank and malformed lines are skipped and counted.

Allocation efficiency = chars explore returned for files the final answer cited / all chars
explore returned. It is a RELATIVE metric: compare builds on the same question.
"""

EPILOG = """\
examples:
  evalkit run data/examples/run-baseline-1.jsonl
  evalkit run run.jsonl --answer 'lib/**' --answer 'src/mcp/*.ts'
  evalkit run run.jsonl --json | python -m json.tool

exit status: 0 printed; 2 a file is missing, unreadable, not a regular file, or holds input
the reference harness crashes on (the message names the file and line).
"""


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "run",
        help="metrics of one session (its segment files, in order)",
        description=HELP,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "files",
        nargs="+",
        metavar="FILE",
        help="segment files of one session, in order (.jsonl or .jsonl.gz)",
    )
    parser.add_argument(
        "--envelope",
        action="store_true",
        help="also print the envelope view: every returned file's share (§4)",
    )
    parser.add_argument(
        "--answer",
        action="append",
        default=[],
        metavar="GLOB",
        help="a glob of files that answer the question (repeatable; implies "
        "--envelope). `*` stays in a path segment, `**` crosses `/`; as in "
        "the reference, `?` is a regex quantifier, not a wildcard",
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="print one JSON object (fractions, not percents) instead of text",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    session = parse_session(args.files)
    if args.json:
        text = json.dumps(run_json(session), ensure_ascii=False, indent=2)
    else:
        text = format_run(session, envelope=args.envelope, answer_globs=args.answer)
    sys.stdout.write(printable(text) + "\n")
    return 0
