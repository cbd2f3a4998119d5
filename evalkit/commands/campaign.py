"""`evalkit campaign [ROOT]` — the 7-repo campaign tables of parse-bench-readme.mjs (§7.3, §8.5)."""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from pathlib import Path

from evalkit.metrics.summary import PROCESSED_MESSAGE_USAGE, PROCESSED_RESULT_USAGE
from evalkit.outputs import caveats

DESCRIPTION = """\
Print the campaign tables of the harness's parse-bench-readme.mjs, character
for character: (1) throughput per repo, with-arm vs without-arm (time, tool
calls, tokens processed, cost, each with % saved) and the AVERAGE line;
(2) residual context occupancy (turns, final context, retrieval residual,
share of context and of the window), the AVERAGE line, the FIXED overhead of
codegraph's tool schema and the per-run tool mix; (3) with-arm explore
sufficiency and allocation efficiency per repo and POOLED. Per-arm figures
are medians over runs.

A campaign tree (bench-readme.sh):
  ROOT/<repo>/run<n>/run-headless-with.jsonl (+ .t2, .t3)   with codegraph
  ROOT/<repo>/run<n>/run-headless-without.jsonl (+ …)       without it

Runs are selected as the reference selects them: a run whose result is not
success is dropped; a with-arm run that hit the MCP cold-start race is
dropped (--include-raced keeps it); a without-arm run in which the codegraph
CLI returned output is dropped with an [excluded] line on stderr
(--include-contaminated keeps it). The fixed explanatory paragraphs are
evalkit's wording of the reference's; every figure and table line is the
reference's. Anything evalkit adds goes to stderr."""

EPILOG = """\
examples:
  evalkit campaign                                 the bundled (synthetic) campaign
  evalkit campaign /tmp/ab-readme
  evalkit campaign ROOT --repos django,gin         two repos only, in that order
  evalkit campaign ROOT --include-contaminated --json

exit status: 0 printed; 2 unusable input (no such directory, a bad option)."""


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "campaign",
        help="the 7-repo campaign tables (throughput, occupancy, sufficiency + allocation)",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "root",
        nargs="?",
        metavar="ROOT",
        help="campaign root (default: the bundled synthetic campaign, data/corpus/ab-readme)",
    )
    p.add_argument(
        "--repos",
        metavar="A,B,…",
        help="repos in table order (default: vscode, excalidraw, django, tokio, okhttp, gin, "
        "alamofire)",
    )
    p.add_argument(
        "--include-raced",
        action="store_true",
        default=os.environ.get("CG_INCLUDE_RACED") == "1",
        help="keep with-arm runs that hit the MCP cold-start race (also CG_INCLUDE_RACED=1)",
    )
    p.add_argument(
        "--include-contaminated",
        action="store_true",
        default=os.environ.get("CG_INCLUDE_CONTAMINATED") == "1",
        help="keep without-arm runs in which the codegraph CLI returned output "
        "(also CG_INCLUDE_CONTAMINATED=1)",
    )
    p.add_argument(
        "--processed",
        choices=(PROCESSED_RESULT_USAGE, PROCESSED_MESSAGE_USAGE),
        default=PROCESSED_RESULT_USAGE,
        help="tokens processed: Σ result.usage (the reference, default) or Σ message.usage once "
        "per message id (the harness's later revision; a note on stderr says so)",
    )
    p.add_argument(
        "--window-tokens",
        metavar="N",
        help="window of the share-of-window column (default: $CG_WINDOW_TOKENS, else 200000)",
    )
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print every figure as one JSON object")
    out.add_argument(
        "--markdown", action="store_true", help="print the transposed repo × arm table"
    )
    p.set_defaults(func=_run)


def _run(args) -> int:
    from evalkit.commands.run import _window_tokens
    from evalkit.errors import UsageError
    from evalkit.outputs.campaign_text import (
        campaign_excluded,
        campaign_json,
        campaign_markdown,
        campaign_notes,
        format_campaign,
    )
    from evalkit.paths import bundled_corpus
    from evalkit.tables.campaign import CAMPAIGN_REPOS, campaign

    root = args.root if args.root is not None else os.fspath(bundled_corpus() / "ab-readme")
    repos = CAMPAIGN_REPOS
    if args.repos is not None:
        repos = tuple(r.strip() for r in args.repos.split(",") if r.strip())
        if not repos:
            raise UsageError("--repos needs at least one repo name")
    c = campaign(
        root,
        repos=repos,
        include_raced=args.include_raced,
        include_contaminated=args.include_contaminated,
        window_tokens=_window_tokens(args.window_tokens),
        processed=args.processed,
    )
    try:
        bundled = bundled_corpus() in Path(root).resolve().parents
    except OSError:
        bundled = False
    if bundled:
        print(f"note: {caveats.SYNTHETIC_CORPUS}", file=sys.stderr)
    if args.root is None:  # the bundled campaign by its place in the checkout, not a machine path
        c = dataclasses.replace(c, root="data/corpus/ab-readme")
    for line in campaign_excluded(c) + campaign_notes(c):
        print(line, file=sys.stderr)
    if args.processed != PROCESSED_RESULT_USAGE:
        print(
            "note: tokens are Σ message.usage once per message id (the harness's later "
            "revision), not the reference's Σ result.usage",
            file=sys.stderr,
        )
    if args.json:
        sys.stdout.write(campaign_json(c))
    elif args.markdown:
        sys.stdout.write(campaign_markdown(c))
    else:
        sys.stdout.write(format_campaign(c))
    return 0
