"""The `evalkit` command line: `evalkit run`, `session`, `sweep`, `compare`, `campaign`,
`columns`, `export`, `report`, `view`, `pairs`, `cache` and `stats`.

Exit status: 0 success, 1 a negative verdict where a command has one (see its --help), 2 unusable
input (a missing file, a bad option value), 130 interrupted (Ctrl-C). Errors are one line on
stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from evalkit import __version__
from evalkit.commands.bytecode import keep_bytecode
from evalkit.errors import EvalkitError, one_line, unexpected_error

__all__ = ["COMMANDS", "build_parser", "main"]

# Order is the order `evalkit --help` lists them.
COMMANDS = (
    "run",
    "session",
    "sweep",
    "compare",
    "campaign",
    "columns",
    "export",
    "report",
    "view",
    "pairs",
    "cache",
    "stats",
)

EXIT_CODES = """\
exit status:
  0    done
  1    a negative verdict, for the commands that give one (evalkit pairs check: rejected;
       evalkit session: no session logs for the project; evalkit compare: no directory or
       label given, or no arm has runs, as the harness's compare-arms.mjs; evalkit cache
       prune/clear: a file could not be removed); see each command's --help
  2    unusable input: a missing or unreadable file, a file that is not a transcript, a bad
       option value (one line on stderr naming it, never a traceback)
  130  interrupted (Ctrl-C)"""


class _Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line on stderr, exit status 2, like every
    other evalkit error (argparse's own prints the whole usage block first). Subcommand
    parsers are made of the same class (`add_subparsers` uses the parent's type)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, one_line(f"{self.prog}: {message} (see {self.prog} --help)") + "\n")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The `evalkit` parser with every command, or with command `only` alone.

    `main` builds the parser for the one command named on the command line, so a command
    imports only its own module: `evalkit sweep` on a stored corpus does not pay for the
    modules of `run`, `pairs` or `campaign` (their imports cost more than the sweep itself).
    """
    parser = _Parser(
        prog="evalkit",
        description=(
            "Judge A/B evaluations of coding-agent tools from Claude Code transcripts: explore\n"
            "allocation efficiency, sufficiency and occupancy per run; the baseline sweep and\n"
            "new-vs-baseline arm table over a corpus; every session, explore call and tool call\n"
            "as DataFrames (evalkit.load_corpus, evalkit export); per-pair tables from paired\n"
            "evidence."
        ),
        epilog=(
            "Start with `evalkit sweep` (the bundled synthetic corpus) or\n"
            "`evalkit run path/to/run.jsonl`. Each command has its own --help.\n\n" + EXIT_CODES
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"evalkit {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS if only is None else (only,):
        importlib.import_module(f"evalkit.commands.{name}").register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    command_line = argv is None  # the command line itself (not a caller passing arguments)
    if command_line:
        keep_bytecode()
    try:
        argv = list(sys.argv[1:] if argv is None else argv)
        # A known command as the first word: only its parser is needed to parse the rest.
        parser = build_parser(argv[0] if argv and argv[0] in COMMANDS else None)
        args = parser.parse_args(argv)
        # Whether the process ends when the command does (`evalkit ...`, `python -m evalkit`),
        # so that a command may leave the process in a state no later caller could use.
        args.command_line = command_line
        if not getattr(args, "func", None):
            parser.print_help(sys.stderr)
            return 2
        try:
            return int(args.func(args) or 0)
        except EvalkitError as exc:
            print(one_line(f"evalkit {args.command}: {exc}"), file=sys.stderr)
            return 2
        except BrokenPipeError:  # `evalkit sweep | head` is not an error
            return 0
        except Exception as exc:  # noqa: BLE001 — the last line of defence: never a traceback
            if isinstance(exc, UnicodeEncodeError) and _is_output_encoding(exc.encoding):
                what = (
                    "cannot write the output: it holds characters that standard output's "
                    f"encoding ({exc.encoding}) cannot show; set PYTHONIOENCODING=utf-8 (or a "
                    "UTF-8 locale) and run it again"
                )
            else:
                what = str(unexpected_error(_subject(args), exc))
            print(one_line(f"evalkit {args.command}: {what}"), file=sys.stderr)
            return 2
    except KeyboardInterrupt:
        # Ctrl-C: one line, the conventional 128 + SIGINT status; nothing half-written is kept
        # by the commands (the cache writes then renames, exports write whole files).
        print("\nevalkit: interrupted", file=sys.stderr)
        return 130


def _is_output_encoding(encoding: str | None) -> bool:
    """Whether `encoding` is the one standard output writes in (its error is about output)."""
    import codecs

    try:
        return codecs.lookup(encoding or "").name == codecs.lookup(sys.stdout.encoding).name
    except (LookupError, TypeError, AttributeError):
        return False


def _subject(args: argparse.Namespace) -> str:
    """What the command was reading, to name in an unexpected error: its files or directory."""
    for name in ("files", "dir", "log_dir", "project_dir", "file", "output"):
        value = getattr(args, name, None)
        if value:
            return ", ".join(map(str, value)) if isinstance(value, list) else str(value)
    return "(input)"


if __name__ == "__main__":
    sys.exit(main())
