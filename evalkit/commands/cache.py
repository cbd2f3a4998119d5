"""`evalkit cache [info|prune|clear]` — what the sweep's store holds, and pruning or clearing it
(issue 16: the store's life cycle)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HELP = """\
Show what evalkit keeps in its cache directory, and remove what is no longer used.

The cache holds the sessions a sweep has parsed (`evalkit sweep`, `evalkit export`,
`evalkit.load_corpus`), so that sweeping an unchanged corpus again reads no transcript,
and the output `evalkit sweep` printed, so that the same command on a tree where nothing
changed prints it again at once. It lives in $XDG_CACHE_HOME/evalkit, else
~/.cache/evalkit, or where --cache-dir says. It never changes a number: a stored session
is used only while its files are unchanged (the same size, modification time and inode;
`evalkit sweep --verify` re-reads and re-hashes them instead), and only by the evalkit
that stored it. `evalkit sweep --no-cache` neither reads nor writes it. Deleting it only
costs time: the next sweep parses again.

There is one store directory per corpus, per kind (the sweep's, the frames of
load_corpus and export, the trial sweep's) and per evalkit code version. A store is
current when this evalkit wrote it, stale when another version (or an edited copy) of
evalkit did: a new evalkit never reads an older one's store, so stale stores only take
space. When to prune: after upgrading evalkit, or once corpora you swept are deleted.

commands:
  evalkit cache [info]   where the cache is, its size, and one line per store directory:
                         corpus, kind, evalkit version, current or stale, corpus present
                         or missing, size, sessions, last used
  evalkit cache prune    remove stale stores, stores of corpora that no longer exist,
                         older evalkit's per-session cache files (sweep/), and temporary
                         files whose writer was interrupted (a sweep also removes those
                         of its own store)
  evalkit cache clear    remove everything evalkit stored there

Prune and clear remove only files evalkit itself writes, by their names, inside its own
folders (corpus-store-v1/, sweep/); they never follow a symbolic link, leave any other
file where it is (with the folders holding it), and touch nothing outside the cache
directory. --dry-run says what would go and removes nothing.
"""

EPILOG = """\
examples:
  evalkit cache                          what is stored, and what prune would free
  evalkit cache --json                   the same as JSON (sizes in bytes, UTC times)
  evalkit cache prune --dry-run          what prune would remove
  evalkit cache prune                    remove it
  evalkit cache clear --cache-dir /tmp/c everything evalkit stored in /tmp/c

exit status: 0 done (also when there is nothing to remove); 1 some files could not be
removed (listed); 2 unusable input (--cache-dir is a file or cannot be read).
"""

_SUB = {
    "info": "where the cache is, its size, one line per store directory (the default)",
    "prune": "remove stale stores, stores of missing corpora and older cache files",
    "clear": "remove everything evalkit stored in the cache directory",
}


def _options(p: argparse.ArgumentParser, *, sub: bool) -> None:
    # On the subcommands the defaults are suppressed, so an option given before the
    # subcommand (`evalkit cache --json prune`) is not reset by it.
    default = argparse.SUPPRESS if sub else None
    p.add_argument(
        "--cache-dir",
        metavar="DIR",
        type=Path,
        default=default,
        help="the cache directory (default $XDG_CACHE_HOME/evalkit or ~/.cache/evalkit), "
        "as on evalkit sweep",
    )
    p.add_argument(
        "--json",
        action="store_true",
        default=argparse.SUPPRESS if sub else False,
        help="print JSON instead of text",
    )


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "cache",
        usage="evalkit cache [info | prune | clear] [--dry-run] [--cache-dir DIR] [--json]",
        help="what the sweep's store holds; prune or clear it",
        description=HELP,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _options(p, sub=False)
    p.set_defaults(func=run, action="info", dry_run=False)
    actions = p.add_subparsers(dest="action", metavar="ACTION")
    for name, text in _SUB.items():
        sub = actions.add_parser(
            name,
            usage=f"evalkit cache {name}{'' if name == 'info' else ' [--dry-run]'} "
            "[--cache-dir DIR] [--json]",
            help=text,
            description=f"evalkit cache {name}: {text}.\n\n" + HELP.split("\n\n", 1)[1],
            epilog=EPILOG,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        _options(sub, sub=True)
        if name != "info":
            sub.add_argument(
                "--dry-run",
                action="store_true",
                help="say what would be removed, and remove nothing",
            )


def run(args: argparse.Namespace) -> int:
    from evalkit.outputs.cache_text import (
        render_info_json,
        render_info_text,
        render_removal_json,
        render_removal_text,
    )
    from evalkit.store.admin import cache_info, clear_cache, prune_cache

    action = args.action or "info"
    if action == "info":
        info = cache_info(args.cache_dir)
        sys.stdout.write(render_info_json(info) if args.json else render_info_text(info))
        return 0
    remove = prune_cache if action == "prune" else clear_cache
    removal = remove(args.cache_dir, dry_run=args.dry_run)
    command = f"cache {action}"
    if args.json:
        sys.stdout.write(render_removal_json(removal, command))
    else:
        sys.stdout.write(render_removal_text(removal, command))
    return 1 if removal.failed else 0
