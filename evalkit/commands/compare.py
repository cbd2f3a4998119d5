"""`evalkit compare DIR LABEL [LABEL ...]` — the reference's ARM COMPARISON (spec §7.2, §8.4)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from evalkit.errors import UsageError
from evalkit.outputs import caveats

DESCRIPTION = """\
Compare the arms of one A/B directory the way the harness's compare-arms.mjs
does, and print its ARM COMPARISON table character for character: per arm,
behaviour (duration, tool calls, Read, Grep/Glob, Bash, codegraph calls),
residual context occupancy (final context, codegraph and file-access residual,
the retrieval residual and its share of the final context), explore
sufficiency pooled over every answered explore call, explore allocation
efficiency pooled over bytes and per run, and codegraph-CLI contamination.
Cells are median [min–max] over runs.

Runs of an arm (as compare-arms.mjs finds them):
  DIR/run-LABEL.jsonl (+ run-LABEL.t2.jsonl …)    one multi-turn session
  DIR/run-LABEL-1.jsonl, run-LABEL-2.jsonl …      one run each (+ their .tN)

No run is dropped by default: non-success and MCP cold-start-race runs are
only counted, as in the reference. --exclude drops them (evalkit's run
hygiene) and says on stderr how many runs each rule dropped, per arm.
Anything evalkit adds goes to stderr, so stdout stays the reference's text."""

EPILOG = """\
examples:
  evalkit compare data/corpus/cg22/ab-express new baseline
  evalkit compare /tmp/agent-eval headless-with headless-without
  evalkit compare DIR new baseline --exclude raced,failed
  evalkit compare cg22/ab-express new baseline --dir cg22/ab-excalidraw --markdown
  evalkit compare DIR new baseline --json | jq '.arms[0].dur'

exit status: 0 printed; 1 no directory or label given, or no arm has runs (as
compare-arms.mjs); 2 unusable input (no such directory, a bad option value).
A run that cannot be read is left out of its arm and named on stderr."""


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "compare",
        usage="evalkit compare DIR LABEL [LABEL ...] [--dir DIR] [--exclude RULES] "
        "[--profile NAME|FILE] [--json | --markdown]",
        help="the reference's ARM COMPARISON table for the arms of one directory",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "items",
        nargs="*",
        metavar="DIR LABEL [LABEL ...]",
        help="the arm directory, then the arm labels in column order",
    )
    p.add_argument(
        "--dir",
        action="append",
        default=[],
        metavar="DIR",
        dest="more_dirs",
        help="another directory with the same arms (repeatable): one block each, and one "
        "column per repo × arm in --markdown",
    )
    p.add_argument(
        "--exclude",
        metavar="RULES",
        help="drop runs by rule before comparing: any of raced, contaminated, failed, "
        "comma-separated (default: none, as the reference)",
    )
    p.add_argument(
        "--profile",
        metavar="NAME|FILE",
        help="tool profile: which tools are the tool under test (codegraph, the default and the "
        "reference's; sourcegraph; or a TOML file); the table's tool rows follow it",
    )
    out = p.add_mutually_exclusive_group()
    out.add_argument(
        "--json",
        action="store_true",
        help="print the same figures as one JSON object (unrounded; shares in percent)",
    )
    out.add_argument(
        "--markdown",
        action="store_true",
        help="print the transposed table of the A/B write-ups (one column per arm)",
    )
    p.set_defaults(func=_run)


def _is_bundled(path: str) -> bool:
    from evalkit.paths import bundled_corpus

    try:
        resolved = Path(path).resolve()
        return resolved == bundled_corpus() or bundled_corpus() in resolved.parents
    except OSError:
        return False


def _run(args) -> int:
    from evalkit.formats.profiles import load_profile
    from evalkit.outputs.compare_text import (
        USAGE,
        comparison_json,
        comparison_markdown,
        comparison_notes,
        comparison_warnings,
        format_comparison,
        no_runs_message,
    )
    from evalkit.tables.compare import arms_in, compare_arms, parse_exclude

    if len(args.items) < 2:
        print(USAGE, file=sys.stderr)
        return 1
    exclude = parse_exclude(args.exclude)
    directory, labels = args.items[0], args.items[1:]
    dirs = [directory, *args.more_dirs]
    for d in dirs:
        if not Path(d).is_dir():
            raise UsageError(
                f"{d}: no such directory" if not Path(d).exists() else f"{d}: not a directory"
            )
    profile = load_profile(args.profile) if args.profile is not None else None
    cmps = [compare_arms(d, labels, exclude=exclude, profile=profile) for d in dirs]
    if any(_is_bundled(d) for d in dirs):
        print(f"note: {caveats.SYNTHETIC_CORPUS}", file=sys.stderr)
    status = 0
    for cmp, d in zip(cmps, dirs, strict=True):
        for line in comparison_warnings(cmp):
            print(line, file=sys.stderr)
        if cmp.missing:  # evalkit's own help, after the reference's warnings
            found = arms_in(d)
            print(
                f"  arms with runs in {cmp.directory}: {', '.join(found) if found else 'none'}",
                file=sys.stderr,
            )
        if not cmp.arms:
            print(no_runs_message(cmp), file=sys.stderr)
            status = 1
        for line in comparison_notes(cmp):
            print(line, file=sys.stderr)
    if status:
        return status
    if args.json:
        sys.stdout.write(comparison_json(cmps))
    elif args.markdown:
        sys.stdout.write(comparison_markdown(cmps))
    else:
        for cmp in cmps:
            if profile is None:
                sys.stdout.write(format_comparison(cmp))
            else:
                print(f"Tool profile: {profile.describe()}")
                explore = bool(profile.explore.globs)
                sys.stdout.write(format_comparison(cmp, tool=profile.label, explore=explore))
    return 0
