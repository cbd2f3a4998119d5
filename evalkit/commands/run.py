"""`evalkit run FILE [FILE ...]` — the reference's per-run blocks for one session."""

from __future__ import annotations

import argparse
import json
import sys

from evalkit.commands import add_prices_option
from evalkit.corpus.agents import parent_search_root, read_agent_sessions
from evalkit.ecma import js_json, printable
from evalkit.errors import UsageError, one_line
from evalkit.formats.detect import FORMATS, check_format, detect_format
from evalkit.formats.profiles import load_profile
from evalkit.metrics.occupancy import js_number, window_tokens_from_env
from evalkit.metrics.summary import PROCESSED_MESSAGE_USAGE, PROCESSED_RESULT_USAGE
from evalkit.outputs.agent_text import agent_json, format_agent_sessions
from evalkit.outputs.report import format_run, run_json
from evalkit.outputs.trials_text import read_allocation_lines
from evalkit.session import parse_session

HELP = """\
Parse one session and print the reference harness's per-run report (parse-run.mjs), character
for character: the tool-call listing, then residual context occupancy, explore sufficiency and
explore allocation. Several FILEs are the segments of ONE multi-turn session, in order:
  evalkit run run-X.jsonl run-X.t2.jsonl run-X.t3.jsonl
.jsonl.gz files are read transparently. Blank and malformed lines are skipped and counted.

Occupancy = tokens each tool family's output still occupies in the context window at the end.
Sufficiency = what the agent did NEXT after each explore response (explore again, Read a file
it returned, Read one it did not, search, or move on).
Allocation efficiency = chars explore returned for files the final answer cited / all chars
explore returned. It is a RELATIVE metric: compare builds on the same question.

A Codex CLI rollout, a `codex exec --json` capture or an Inspect AI log (.eval, .json) is
recognised from its content and gets a short summary per session instead: tool calls by family,
tokens by ledger column (prompt, cache read and write, uncached, output, reasoning), turns,
compactions, duration, outcome and the final answer's length. --format forces a reader.
"""

EPILOG = """\
examples:
  evalkit run data/corpus/cg22/ab-express/run-baseline-1.jsonl
  evalkit run run.jsonl --answer 'lib/**' --answer 'src/mcp/*.ts'
  evalkit run run.jsonl --json | python -m json.tool
  evalkit run run.jsonl --brief --window-tokens 1000000
  evalkit run ~/.codex/sessions/2030/01/01/rollout-2030-01-01T10-00-00-<id>.jsonl
  evalkit run logs/2030-01-01T10-00-00_task.eval --json

A damaged file (malformed or cut-off lines, invalid UTF-8, a cut gzip stream) is still
measured over what survives, and each damaged file gets one line on stderr saying what was lost.

deliberate differences from the reference (they only show on hostile input):
  - a usage count, duration or cost that is text rather than a number stops with an error
    naming the file; the reference would glue the text into its sums and print nonsense
  - a line nested about 1,000 levels deep or more is skipped and counted as malformed, where
    the reference still parses it (shallower nesting is measured exactly)
  - tool ids are matched by value and type: the number 1 and the text "1" are two different
    ids, and an id that is an object or a list matches no other id
  - a file name holding a line break, a control character or bytes that are not UTF-8 is
    printed escaped (\\n, \\x1b, \\udcff) so it cannot break the report's lines

limits (skip with a reason instead of running out of memory; set in MB):
  EVALKIT_MAX_DECOMPRESSED_MB  per .gz file, decompressed (default 512)
  EVALKIT_MAX_LINE_MB          per line; a longer line is skipped and counted (default 64)
  EVALKIT_MAX_SESSION_MB       per session, all segment files together (default 1024)

exit status: 0 printed; 2 a file is missing, unreadable, not a regular file, or holds input
the reference harness crashes on (the message names the file and line), or an option value is
unusable.
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
        help="segment files of one session, in order (.jsonl or .jsonl.gz); or one Codex "
        "or Inspect AI file",
    )
    parser.add_argument(
        "--format",
        choices=("auto", *FORMATS),
        default="auto",
        help="which reader to use (default: recognised from the file's content)",
    )
    parser.add_argument(
        "--envelope",
        action="store_true",
        help="also print the envelope view: every returned file's share of the explore responses",
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
        "--brief",
        action="store_true",
        help="drop the numbered tool-call listing (as the reference's --brief)",
    )
    parser.add_argument(
        "--window-tokens",
        metavar="N",
        default=None,
        help="context window for the occupancy share-of-window column (default: "
        "$CG_WINDOW_TOKENS as the reference reads it, else 200000)",
    )
    parser.add_argument(
        "--processed",
        choices=(PROCESSED_RESULT_USAGE, PROCESSED_MESSAGE_USAGE),
        default=PROCESSED_RESULT_USAGE,
        help="tokens processed: Σ result.usage (the reference, default) or Σ message.usage once "
        "per message id (the harness's later revision; the report says so when used)",
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="print one JSON object (fractions, not percents) instead of text",
    )
    parser.add_argument(
        "--profile",
        metavar="NAME|FILE",
        help="tool profile: which tools are the tool under test (codegraph, the default; "
        "sourcegraph; or a TOML file); adds the profile and read allocation to the report",
    )
    add_prices_option(parser, "for the priced cost of a Codex, Inspect or ATIF file")
    parser.set_defaults(func=run)


def _window_tokens(raw: str | None) -> float:
    if raw is None:
        return window_tokens_from_env()
    value = js_number(raw)
    if not value > 0 or value == float("inf"):
        raise UsageError(f"--window-tokens must be a positive number, not {raw!r}")
    return value


def _run_agent(args: argparse.Namespace, fmt: str) -> int:
    if len(args.files) > 1:
        raise UsageError(
            "a Codex or Inspect AI file holds whole sessions: give one FILE (several FILEs are "
            "the segments of one Claude Code session)"
        )
    if args.envelope or args.answer:
        raise UsageError("--envelope and --answer are explore views of Claude Code transcripts")
    path = args.files[0]
    sessions = read_agent_sessions(path, format=fmt, root=parent_search_root(path))
    prices = None
    if args.prices is not None:
        from evalkit.metrics.prices import load_prices

        prices = load_prices(args.prices)
    if args.json:
        text = json.dumps(agent_json(path, sessions, prices=prices), ensure_ascii=False, indent=2)
    else:
        text = format_agent_sessions(path, sessions, prices=prices)
    sys.stdout.write(printable(text) + "\n")
    read = sessions[0].read if sessions else None
    if read is not None and (damage := read.damage()):
        print(one_line(f"evalkit run: {path}: {damage}"), file=sys.stderr)
    return 0


def run(args: argparse.Namespace) -> int:
    fmt = check_format(args.format)
    if fmt is None and len(args.files) == 1:
        fmt = detect_format(args.files[0])
    if fmt not in (None, "claude-code"):
        return _run_agent(args, fmt)
    profile = load_profile(args.profile) if args.profile is not None else None
    session = parse_session(
        args.files,
        window_tokens=_window_tokens(args.window_tokens),
        processed=args.processed,
        **({"profile": profile} if profile is not None else {}),
    )
    if args.json:
        # As JSON.stringify(…, null, 2) writes it: non-finite numbers are null, lone surrogates
        # are \udxxx escapes (never U+FFFD), integers in the shortest round-trip digits.
        doc = run_json(session)
        if profile is not None:
            doc["profile"] = profile.to_dict() | {"source": profile.source}
            doc["read_allocation"] = session.read_allocation.to_dict()
        text = js_json(doc, 2)
    else:
        text = format_run(
            session, brief=args.brief, envelope=args.envelope, answer_globs=args.answer
        )
        if profile is not None:
            extra = [f"Tool profile: {profile.describe()}"]
            extra += read_allocation_lines(session.read_allocation)
            text += "\n\n" + "\n".join(extra)
    sys.stdout.write(printable(text) + "\n")
    # Damage is reported, never silent: the numbers above are over the events that survived.
    for segment in session.transcript.segments:
        if damage := segment.damage():
            print(one_line(f"evalkit run: {segment.path}: {damage}"), file=sys.stderr)
    return 0
