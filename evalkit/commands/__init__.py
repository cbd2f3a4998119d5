"""The `evalkit` subcommands, one module each; every module has `register(subparsers)`.

Each `register` adds its parser and sets `func`, a callable taking the parsed arguments and
returning the exit status. `evalkit.cli` lists the modules in the order `--help` shows them.
"""

from __future__ import annotations

import argparse
from pathlib import Path


def add_engine_options(p: argparse.ArgumentParser) -> None:
    """`--engine` and `--scheduler`, as every command that parses a corpus offers them."""
    p.add_argument(
        "--engine",
        choices=("local", "dask"),
        default="local",
        help="where sessions are parsed: local processes (default) or a Dask cluster",
    )
    p.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="with --engine dask: the scheduler to use (default: start a local cluster)",
    )


def add_prices_option(p: argparse.ArgumentParser | argparse._ArgumentGroup, what: str) -> None:
    """`--prices FILE.toml`, as every command that shows a priced cost offers it; `what` ends
    the help (which costs the prices apply to)."""
    p.add_argument(
        "--prices",
        metavar="FILE.toml",
        type=Path,
        help='your own prices in dollars per million tokens ([models."NAME"] input, '
        "cached_input, cache_write, cache_write_1h, output, valid_from), over the bundled price "
        f"table's, {what}",
    )
