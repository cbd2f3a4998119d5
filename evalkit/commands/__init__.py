"""The `evalkit` subcommands, one module each; every module has `register(subparsers)`.

Each `register` adds its parser and sets `func`, a callable taking the parsed arguments and
returning the exit status. `evalkit.cli` lists the modules in the order `--help` shows them.
"""
