"""`evalkit report [DIR] --to OUT` — the corpus as a static HTML site (`evalkit.outputs.html`)."""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from evalkit.commands import add_prices_option
from evalkit.errors import UsageError
from evalkit.formats.names import FORMATS

DESCRIPTION = """\
Write a static HTML report of a corpus to OUT: open OUT/index.html in any
browser, from disk, or hand the folder to a colleague. Nothing is fetched from
the network when it is viewed, and no server is needed.

  index.html           the corpus line, the sweep's tables (or the trial sweep's:
                       outcomes per task with helps / hurts, cost, tokens, read
                       allocation), the figures, a sortable, filterable table of
                       every session, the tasks, and every file of the tree
                       with what became of it
  sessions/*.html      one page per session: the transcript as a timeline (user
                       prompts, assistant text, every tool call with its input
                       and result, long results folded, subagent threads under
                       the call that started them, compactions, the final
                       answer); explore results by file section, cited or not,
                       and the answer's citations linked to the sections they
                       credit; the session's figures beside it. #call-7 links
                       to call 7.
  tasks/*.html         one page per task: its runs side by side, arm by arm

Sessions are found as `evalkit sweep` finds them, with the same options
(--layout, --profile and --outcomes make it a trial sweep). OUT must be new,
empty, or a report evalkit wrote before: a folder holding anything else is
refused, and nothing is written through a symlink."""

EPILOG = """\
examples:
  evalkit report --to /tmp/report            the bundled corpus
  evalkit report runs/ --to report --layout harbor --profile sourcegraph
  evalkit view runs/ --layout harbor         build it and serve it on 127.0.0.1

exit status: 0 written; 2 unusable input (no such directory, bad option, an OUT
holding files evalkit did not write); 130 interrupted."""


def add_corpus_options(p: argparse.ArgumentParser) -> None:
    """The sweep's discovery and table options, as `report` and `view` take them."""
    p.add_argument(
        "dir", nargs="?", metavar="DIR", help="corpus directory (default: the bundled corpus)"
    )
    p.add_argument("--arms", metavar="A,B", help="arm labels, as for evalkit sweep")
    p.add_argument(
        "--exclude", metavar="RULES", help="raced, contaminated, failed (as for evalkit sweep)"
    )
    p.add_argument(
        "--format",
        choices=("auto", *FORMATS),
        default="auto",
        help="which reader reads every session (default auto)",
    )
    p.add_argument(
        "-j", "--jobs", type=int, metavar="N", help="parser processes (default: every core)"
    )
    p.add_argument("--no-cache", action="store_true", help="parse everything, cache nothing")
    p.add_argument("--cache-dir", metavar="DIR", type=Path, help="cache location")
    add_prices_option(p, "for the runs whose log records no cost")
    t = p.add_argument_group("trial sweep (as for evalkit sweep)")
    t.add_argument("--layout", metavar="PATTERN", help="harbor, or a path pattern")
    t.add_argument("--profile", metavar="NAME|FILE", help="tool profile")
    t.add_argument("--outcomes", metavar="FILE.csv", type=Path, help="rewards per run")
    t.add_argument(
        "--pass-threshold",
        type=float,
        default=1.0,
        metavar="R",
        help="a run passed when its reward is at least R (default 1.0)",
    )


def report_options(args: argparse.Namespace):
    """The parsed options as `evalkit.outputs.html.site.ReportOptions`."""
    from evalkit.outputs.html.site import ReportOptions
    from evalkit.tables.compare import parse_exclude

    if args.jobs is not None and args.jobs < 1:
        raise UsageError(f"--jobs must be at least 1, got {args.jobs}")
    if not math.isfinite(args.pass_threshold):
        raise UsageError(f"--pass-threshold must be a number, got {args.pass_threshold}")
    arms = None
    if args.arms is not None:
        arms = tuple(a.strip() for a in args.arms.split(",") if a.strip())
        if not arms:
            raise UsageError("--arms needs at least one arm label")
    opts = ReportOptions(
        layout=args.layout,
        profile=args.profile,
        outcomes=args.outcomes,
        arms=arms,
        exclude=tuple(parse_exclude(args.exclude)),
        pass_threshold=args.pass_threshold,
        cache=not args.no_cache,
        cache_dir=args.cache_dir,
        jobs=args.jobs,
        format=None if args.format == "auto" else args.format,
        prices=args.prices,
    )
    if opts.trials and opts.format is not None:
        raise UsageError("--format is not used by a trial sweep (--layout, --profile, --outcomes)")
    if opts.trials and args.dir is None:
        raise UsageError("a trial sweep (--layout, --profile, --outcomes) needs DIR")
    return opts


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "report",
        help="the corpus as a static HTML site: index, session pages, task pages",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_corpus_options(p)
    p.add_argument("--to", metavar="OUT", type=Path, required=True, help="the folder to write")
    p.set_defaults(func=_run)


def _run(args) -> int:
    from evalkit.outputs.html.site import write_report

    written = write_report(args.dir, args.to, report_options(args))
    print(
        f"wrote {args.to}/index.html: {written.sessions} session pages, {written.tasks} task "
        f"pages, {len(written.files)} files"
    )
    for log, why in written.unreadable:
        print(f"  a session could not be read again: {log} ({why})")
    return 0
