"""`evalkit session [PROJECT_DIR]` — the newest interactive Claude Code session of a project."""

from __future__ import annotations

import argparse
import sys

from evalkit.errors import one_line
from evalkit.formats.claude_code.interactive import NoSessionLogs
from evalkit.outputs.report import format_interactive
from evalkit.session import read_interactive_session

HELP = """\
Report the newest interactive Claude Code session of a project, as the reference's session
reader (parse-session.mjs) does: tool counts for the main thread and for subagents, token
totals, explore sufficiency and explore allocation (the reference's session reader computes no
occupancy and no envelope view).

The log directory is <projects dir>/<escaped project dir>, where the escaped name is the
project's real path with every "/" replaced by "-" (as the reference does); when no such
directory exists, the name Claude Code itself writes (every character that is not a letter or
digit replaced by "-", so ".", "_" and spaces too) is tried. The session is the
.jsonl file there with the newest modification time; its subagent transcripts
(<session>/subagents/*.jsonl) are merged, each event stamped with the delegating tool_use id from
the sibling .meta.json. Summaries, file-history snapshots, queue operations and other
interactive-only records are ignored.
"""

EPILOG = """\
examples:
  evalkit session                      # the current directory's newest session
  evalkit session ~/src/myproject
  evalkit session ~/src/myproject --projects-dir /backup/claude/projects
  evalkit session --log-dir ~/.claude/projects/-Users-me-my-project

If the log directory has yet another name, point --log-dir at it.

exit status: 0 printed; 1 no log directory for the project, or no .jsonl session in it (as the
reference); 2 the project directory does not exist, or a log is unreadable or holds input the
reference harness crashes on.
"""


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "session",
        help="the newest interactive Claude Code session of a project",
        description=HELP,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "project_dir",
        nargs="?",
        default=None,
        metavar="PROJECT_DIR",
        help="the project's directory (default: the current directory)",
    )
    parser.add_argument(
        "--projects-dir",
        metavar="DIR",
        default=None,
        help="Claude Code's projects directory (default: ~/.claude/projects)",
    )
    parser.add_argument(
        "--log-dir",
        metavar="DIR",
        default=None,
        help="the project's log directory itself (skips the path escaping)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        session = read_interactive_session(
            args.project_dir, projects_dir=args.projects_dir, log_dir=args.log_dir
        )
    except NoSessionLogs as exc:
        print(f"evalkit session: {exc}", file=sys.stderr)
        return 1
    sys.stdout.write(format_interactive(session) + "\n")
    # A subagent file that could not be read is reported, never silently dropped.
    for read in session.segment_reads:
        if read.unreadable:
            print(one_line(f"evalkit session: {read.path}: {read.damage()}"), file=sys.stderr)
    return 0
