"""`evalkit sweep [DIR]` — the baseline sweep and the new-vs-baseline arm table (spec §7, §8)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from evalkit.corpus.discover import natural_key
from evalkit.errors import UsageError
from evalkit.outputs import caveats

DESCRIPTION = """\
Sweep every session in a corpus directory and print the explore allocation
baseline: the corpus line, the slice table (all / single-question /
multi-turn: n, pooled, median, p25, p75, min, path-cited only), the per-call
median and p25, the pass/repo x arm table (median [min–max], n, pooled), the
lowest sessions with their calls, the quantile method, the caveats, and what
became of every file in the tree.

Sessions are found by the reference harness's directory layout:
  <pass>/ab-<repo>/run-{baseline,new}-<i>.jsonl          A/B arms
  <pass>/<repo>/run<n>/run-<label>.jsonl + .t2, .t3       campaign runs
  X.jsonl + X.t2.jsonl + X.t3.jsonl …                     one multi-turn session
  <project-log-dir>/<uuid>.jsonl (+ <uuid>/subagents/)   Claude Code interactive
Any other *.jsonl(.gz) is a session labelled only as far as its path says.
run-<label>.jsonl beside run-<label>-<i>.jsonl makes the indexed runs ignored,
and a zero-padded index (run-new-01) is a crash, as in the reference harness
(compare-arms.mjs).
A session whose parse raises is a crash: counted, reported, excluded.

With no DIR, sweeps the bundled synthetic corpus (data/corpus), whose numbers
demonstrate the pipeline and say nothing about any real tool."""

EPILOG = """\
examples:
  evalkit sweep                          the bundled corpus
  evalkit sweep /private/tmp             every A/B log under /private/tmp
  evalkit sweep DIR --markdown sweep.md  also write the tables as markdown
  evalkit sweep DIR --json | jq .arms    machine-readable (fractions, not percents)
  evalkit sweep DIR --no-cache -j 1      re-parse everything in one process

Parsed sessions are cached by file content and evalkit version (default
$XDG_CACHE_HOME/evalkit or ~/.cache/evalkit); the cache never changes a number.
A progress bar is drawn on stderr when stderr is a terminal.

A file over a reading limit (EVALKIT_MAX_DECOMPRESSED_MB, EVALKIT_MAX_LINE_MB,
EVALKIT_MAX_SESSION_MB; see `evalkit run --help`) is skipped with its reason, not fatal.

exit status: 0 swept (crashed sessions are reported, not fatal); 2 unusable
input (no such directory, bad option, an --arms label no session has);
130 interrupted."""


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "sweep",
        help="baseline sweep and new-vs-baseline arm table over a corpus directory",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "dir",
        nargs="?",
        metavar="DIR",
        help="corpus directory (default: the bundled synthetic corpus)",
    )
    p.add_argument(
        "--json", action="store_true", help="print one JSON document instead of the text report"
    )
    p.add_argument(
        "--markdown", metavar="FILE", type=Path, help="also write the tables as markdown to FILE"
    )
    p.add_argument(
        "--arms",
        metavar="A,B",
        help="arm labels for the arm table, in column order "
        "(default: baseline,new when present, else every arm found)",
    )
    p.add_argument(
        "--full",
        action="store_true",
        help="also print the full ARM COMPARISON (behaviour, occupancy, sufficiency, "
        "allocation, contamination) for every pass / repo in the text report (in Python: "
        "arm_frame(full=True))",
    )
    p.add_argument(
        "--exclude",
        metavar="RULES",
        help="drop runs from the arm table by rule: any of raced, contaminated, failed, "
        "comma-separated (default: none, as compare-arms.mjs); the report says how many "
        "each rule dropped, per arm",
    )
    p.add_argument(
        "--tail",
        type=int,
        default=5,
        metavar="N",
        help="how many of the lowest sessions to show (default 5)",
    )
    p.add_argument(
        "--list-files",
        action="store_true",
        help="list every parsed file too, not only the ones outside the sweep",
    )
    p.add_argument(
        "-j", "--jobs", type=int, metavar="N", help="parser processes (default: every core)"
    )
    p.add_argument("--no-cache", action="store_true", help="parse everything, cache nothing")
    p.add_argument(
        "--cache-dir",
        metavar="DIR",
        type=Path,
        help="cache location (default $XDG_CACHE_HOME/evalkit or ~/.cache/evalkit)",
    )
    p.set_defaults(func=_run)


def _run(args) -> int:
    from evalkit.outputs.sweep_text import render_json, render_markdown, render_text
    from evalkit.tables.sweep import run_sweep

    if args.jobs is not None and args.jobs < 1:
        raise UsageError(f"--jobs must be at least 1, got {args.jobs}")
    if args.tail < 0:
        raise UsageError(f"--tail must be 0 or more, got {args.tail}")
    arms = None
    if args.arms is not None:
        arms = tuple(a.strip() for a in args.arms.split(",") if a.strip())
        if not arms:
            raise UsageError("--arms needs at least one arm label")
    from evalkit.tables.compare import parse_exclude

    exclude = parse_exclude(args.exclude)
    result = run_sweep(
        args.dir,
        arms=arms,
        exclude=exclude,
        cache=not args.no_cache,
        cache_dir=args.cache_dir,
        jobs=args.jobs,
        progress=None,
    )
    if arms is not None:
        present = sorted(
            {r.arm for r in result.records if r.arm and r.status not in ("crash", "skipped")},
            key=natural_key,
        )
        missing = [a for a in arms if a not in present]
        if missing:
            raise UsageError(
                f"--arms: no session is in arm {', '.join(missing)}; arms found: "
                + (", ".join(present) if present else "none (no file name gives an arm)")
            )
    if args.markdown is not None:
        try:
            args.markdown.write_text(render_markdown(result, tail=args.tail), encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"--markdown {args.markdown}: cannot write ({exc.strerror})") from None
    if args.json:
        if result.bundled:
            print(f"note: {caveats.SYNTHETIC_CORPUS}", file=sys.stderr)
        sys.stdout.write(render_json(result))
    else:
        sys.stdout.write(
            render_text(result, tail=args.tail, every_file=args.list_files, full=args.full)
        )
    return 0
