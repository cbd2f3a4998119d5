"""`evalkit session` — placeholder until its issue lands (it prints that and exits 2)."""

from __future__ import annotations

import sys


def register(subparsers) -> None:
    parser = subparsers.add_parser("session", help="(not built yet)")
    parser.set_defaults(func=_run)


def _run(args) -> int:
    print("evalkit session: not built yet", file=sys.stderr)
    return 2
