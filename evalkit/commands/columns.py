"""`evalkit columns [FRAME]` — the column dictionary: every frame's columns, dtype, unit, meaning."""

from __future__ import annotations

import argparse
import json
import sys

from evalkit.errors import UsageError
from evalkit.store.columns import FRAMES, columns_of, dictionary_json

HELP = """\
Print the column dictionary: for each frame evalkit builds, every column in order with its
dtype, unit and meaning. The same declaration builds the frames of `evalkit.load_corpus`
(sessions, calls, sections, files, tool_calls: `sessions_df` & co., and the files
`evalkit export` writes, with columns.json) and the sweep's own frames (sweep_sessions,
sweep_calls: `SweepResult.sessions_frame()`, `.calls_frame()`).

Every frame starts with the identity columns log, pass, repo, arm, run, question, slice, kind
and group (group is never missing, so a groupby never drops a session). A value a transcript
does not carry is <NA>, never 0 or False. Efficiencies and shares are fractions (0 to 1);
chars are UTF-16 code units, as the reference harness counts them.
"""

EPILOG = """\
examples:
  evalkit columns                 every frame
  evalkit columns sessions        one frame
  evalkit columns families        the tool families every agent's calls are counted in
  evalkit columns --json          machine-readable (the same as an export's columns.json)

exit status: 0 printed; 2 no such frame.
"""


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "columns",
        help="the column dictionary of the frames (name, dtype, unit, meaning)",
        description=HELP,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "frame",
        nargs="?",
        metavar="FRAME",
        help=f"one of: {', '.join(FRAMES)}; or families (the tool-family scheme)",
    )
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.set_defaults(func=run)


def format_dictionary(frames: list[str]) -> str:
    """The dictionary as aligned text, one block per frame."""
    blocks = []
    for frame in frames:
        cols = columns_of(frame)
        w_name = max(len(c.name) for c in cols)
        w_type = max(len(c.dtype) for c in cols)
        w_unit = max(len(c.unit) for c in cols)
        lines = [f"{frame} ({len(cols)} columns)"]
        for c in cols:
            lines.append(
                f"  {c.name:<{w_name}}  {c.dtype:<{w_type}}  {c.unit:<{w_unit}}  {c.meaning}"
            )
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n"


def format_families() -> str:
    """The cross-agent tool-family scheme (the tool_calls frame's `tool_family`), one per line."""
    from evalkit.formats.families import FAMILY_MEANINGS

    width = max(len(f) for f, _ in FAMILY_MEANINGS)
    lines = [f"tool families ({len(FAMILY_MEANINGS)}: tool_calls.tool_family, every agent)"]
    lines += [f"  {f:<{width}}  {meaning}" for f, meaning in FAMILY_MEANINGS]
    return "\n".join(lines) + "\n"


def run(args: argparse.Namespace) -> int:
    if args.frame == "families":
        if args.json:
            from evalkit.formats.families import FAMILY_MEANINGS

            doc = [{"family": f, "meaning": m} for f, m in FAMILY_MEANINGS]
            sys.stdout.write(json.dumps({"families": doc}, indent=2) + "\n")
        else:
            sys.stdout.write(format_families())
        return 0
    if args.frame is not None and args.frame not in FRAMES:
        raise UsageError(f"no frame {args.frame!r}; frames: {', '.join(FRAMES)}")
    frames = [args.frame] if args.frame else list(FRAMES)
    if args.json:
        doc = dictionary_json()
        sys.stdout.write(json.dumps({f: doc[f] for f in frames}, indent=2) + "\n")
    else:
        sys.stdout.write(format_dictionary(frames))
        if args.frame is None:
            sys.stdout.write("\n" + format_families())
    return 0
