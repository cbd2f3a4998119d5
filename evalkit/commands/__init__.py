"""The `evalkit` subcommands, one module each; every module has `register(subparsers)`.

Each `register` adds its parser and sets `func`, a callable taking the parsed arguments and
returning the exit status. `evalkit.cli` lists the modules in the order `--help` shows them.
"""

from __future__ import annotations

import argparse


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
