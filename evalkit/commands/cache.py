"""`evalkit cache [info|prune|clear]` — what the sweep's store holds, and pruning or clearing it
(issue 16: the store's life cycle)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

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

It also keeps evalkit's compiled modules (bytecode/) when Python cannot write them
beside the installed package (a read-only install, PYTHONDONTWRITEBYTECODE): each
command then starts without compiling evalkit again. A compiled module is stale once
its source changed or is gone (after an upgrade), or another Python version wrote it.

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
                         older evalkit's per-session cache files (sweep/), stale
                         compiled modules (bytecode/), and temporary files whose writer
                         was interrupted (a sweep also removes those of its own store)
  evalkit cache clear    remove everything evalkit stored there, its compiled modules
                         included (the next command compiles them again)

Prune and clear remove only files evalkit itself writes, by their names, inside its own
folders (corpus-store-v1/, sweep/, bytecode/); they never follow a symbolic link, leave any other
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
    from evalkit.commands.cache_bytecode import bytecode_info, remove_bytecode
    from evalkit.ecma import grp, pl
    from evalkit.outputs.cache_text import (
        render_info_json,
        render_info_text,
        render_removal_json,
        render_removal_text,
        size_text,
    )
    from evalkit.store.admin import cache_info, clear_cache, prune_cache

    action = args.action or "info"
    if action == "info":
        info = cache_info(args.cache_dir)
        compiled = bytecode_info(info.directory)
        if args.json:
            doc = render_info_json(info)
            if compiled.files or compiled.refused:
                doc = _with_json(doc, "bytecode", _bytecode_json(compiled))
            sys.stdout.write(doc)
        else:
            sys.stdout.write(render_info_text(info) + _bytecode_text(compiled))
        return 0
    remove = prune_cache if action == "prune" else clear_cache
    removal = remove(args.cache_dir, dry_run=args.dry_run)
    files, size, failed = remove_bytecode(
        removal.directory, stale_only=action == "prune", dry_run=args.dry_run
    )
    command = f"cache {action}"
    if args.json:
        doc = render_removal_json(removal, command)
        if files or failed:
            doc = _with_json(
                doc, "bytecode", {"files": files, "size_bytes": size, "failed": failed}
            )
        sys.stdout.write(doc)
    else:
        text = render_removal_text(removal, command)
        if files or failed:
            verb = "would remove" if args.dry_run else "removed"
            what = "compiled" if action == "clear" else "stale compiled"
            line = (
                f"{verb} {grp(files)} {what} {pl(files, 'module')} (bytecode/), {size_text(size)}"
            )
            head, _, rest = text.partition("\n")
            if rest.startswith("  nothing to remove:"):  # the modules were all there was
                text = f"{head}\n  {line}\n" + rest.partition("\n")[2]
            else:
                text += f"  and {line}\n"
            text += "".join(f"  could not remove {path}\n" for path in failed)
        sys.stdout.write(text)
    return 1 if removal.failed or failed else 0


def _with_json(doc: str, key: str, value: Any) -> str:
    """`doc` (a JSON object as `render_*_json` writes it) with one more key, last."""
    from evalkit.ecma import js_json

    return js_json({**json.loads(doc), key: value}, 2) + "\n"


def _bytecode_json(b: Any) -> dict[str, Any]:
    return {
        "files": b.files,
        "size_bytes": b.size,
        "stale_files": b.stale,
        "stale_size_bytes": b.stale_size,
        "refused": b.refused,
    }


def _bytecode_text(b: Any) -> str:
    """The compiled modules' line of `evalkit cache` (nothing when there are none)."""
    from evalkit.ecma import grp, pl
    from evalkit.outputs.cache_text import size_text

    if b.refused:
        return "\nbytecode/ is not a folder (a symbolic link or a file): left alone\n"
    if not b.files:
        return ""
    stale = (
        f"; {grp(b.stale)} stale ({size_text(b.stale_size)}): `evalkit cache prune` removes them"
        if b.stale
        else "; none stale"
    )
    return (
        f"\ncompiled modules (bytecode/, so that a command need not compile evalkit again): "
        f"{grp(b.files)} {pl(b.files, 'file')}, {size_text(b.size)}{stale}\n"
    )
