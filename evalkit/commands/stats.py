"""`evalkit stats DIR` — is the difference real? Paired small-n statistics by task (issue 24)."""

from __future__ import annotations

import argparse
import math
import sys

from evalkit.commands import add_prices_option
from evalkit.errors import UsageError

DESCRIPTION = """\
Is the candidate arm really different from the baseline? Reads the runs of DIR
as the trial sweep does (the same --layout, --profile, --outcomes and --arms),
summarises every figure within each task first (the mean over its trials; a
pass is c of n), and pairs the arms task by task: the task is the unit, never
the pooled trials.

Per figure (pass, reward, cost, cost per solved task, tokens, duration, tool
calls, read allocation) it prints the per-task table; the exact test (McNemar for
pass/fail tasks, the sign test otherwise), withheld with the smallest p it
could give when too few tasks differ to reach 0.05; the mean paired delta
with a seeded hierarchical bootstrap interval (tasks, then trials within each
task) and, with --cluster, a cluster-robust one; P(candidate > baseline) from
a Beta-binomial posterior (uniform prior); for the pass figure the pass rates
(Wilson, Clopper-Pearson), posteriors, pass@k and pass^k for every k up to
the trials, and the flip table; an equivalence test with --margin; and a
planner line (what this many tasks can detect, how many a given effect
needs). Then every test's raw p beside its Holm and Benjamini-Hochberg
adjusted p. No unpaired test is offered, and no normal approximation where an
exact test exists. Each verdict says what it assumed.

When the layout names no task (the harness's <pass>/ab-<repo>/run-<arm>-<i>
layout), each pass/repo directory is a task and its runs are the trials."""

EPILOG = """\
examples:
  evalkit stats runs/ --layout harbor --profile sourcegraph
  evalkit stats runs/ --layout harbor --margin reward=0.05 --margin cost_usd=0.01
  evalkit stats DIR --outcomes rewards.csv --arms baseline,mcp --cluster repo
  evalkit stats DIR --json | jq '.tests'
  python -m evalkit.synthetic harbor /tmp/h && evalkit stats /tmp/h --layout harbor

exit status: 0 printed; 2 unusable input (no such directory, bad option, an
--arms label no run has); 130 interrupted."""


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "stats",
        help="is the difference real? paired statistics by task between two arms",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("dir", metavar="DIR", help="the corpus directory")
    p.add_argument("--arms", metavar="A,B", help="BASELINE,CANDIDATE (default: as the trial sweep)")
    p.add_argument(
        "--layout",
        metavar="PATTERN",
        help="find runs by a path pattern, or `harbor` (see evalkit sweep --help)",
    )
    p.add_argument(
        "--profile",
        metavar="NAME|FILE",
        help="tool profile: codegraph (default), sourcegraph, or a TOML file",
    )
    p.add_argument(
        "--outcomes",
        metavar="FILE.csv",
        help="rewards per run: columns log, or task,arm,trial, plus reward and/or passed",
    )
    p.add_argument(
        "--pass-threshold",
        type=float,
        default=1.0,
        metavar="R",
        help="a run passed when its reward is at least R (default 1.0)",
    )
    p.add_argument(
        "--margin",
        action="append",
        default=[],
        metavar="FIGURE=M",
        help="equivalence margin in the figure's own unit (repeatable; a bare number applies to "
        "pass and reward); figures: passed, reward, cost_usd, tokens, duration_s, tool_calls, "
        "read_allocation_efficiency",
    )
    p.add_argument(
        "--cluster",
        choices=("suite", "pass", "repo"),
        help="tasks of one suite, pass or repo are not independent: add a cluster-robust "
        "interval and the exact tests within each cluster",
    )
    p.add_argument("--seed", type=int, default=0, metavar="N", help="bootstrap seed (default 0)")
    p.add_argument(
        "--resamples",
        type=int,
        default=4999,
        metavar="N",
        help="bootstrap resamples (default 4999)",
    )
    add_prices_option(p, "for the runs whose log records no cost")
    p.add_argument("--json", action="store_true", help="print one JSON document instead")
    p.add_argument(
        "-j", "--jobs", type=int, metavar="N", help="parser processes (default: every core)"
    )
    p.add_argument("--no-cache", action="store_true", help="parse everything, cache nothing")
    p.add_argument("--cache-dir", metavar="DIR", help="cache location (as evalkit sweep)")
    p.set_defaults(func=_run)


def _run(args) -> int:
    from evalkit.outputs.stats_text import render_stats_json, render_stats_text
    from evalkit.tables.ab_stats import compare_arms, parse_margins, trial_runs

    if args.jobs is not None and args.jobs < 1:
        raise UsageError(f"--jobs must be at least 1, got {args.jobs}")
    if args.resamples < 100:
        raise UsageError(f"--resamples must be at least 100, got {args.resamples}")
    if not math.isfinite(args.pass_threshold):
        raise UsageError(f"--pass-threshold must be a number, got {args.pass_threshold}")
    margins = parse_margins(args.margin)
    arms = None
    if args.arms is not None:
        arms = tuple(a.strip() for a in args.arms.split(",") if a.strip())
    runs = trial_runs(
        args.dir,
        layout=args.layout,
        profile=args.profile,
        outcomes=args.outcomes,
        pass_threshold=args.pass_threshold,
        arms=arms,
        cache=not args.no_cache,
        cache_dir=args.cache_dir,
        jobs=args.jobs,
        prices=args.prices,
    )
    stats = None
    if runs.baseline is not None and runs.candidate is not None:
        stats = compare_arms(
            runs,
            runs.baseline,
            runs.candidate,
            margins=margins,
            cluster=args.cluster,
            seed=args.seed,
            n_resamples=args.resamples,
        )
    render = render_stats_json if args.json else render_stats_text
    sys.stdout.write(render(runs, stats))
    return 0
