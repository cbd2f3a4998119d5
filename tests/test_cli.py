"""The `evalkit` command itself (evalkit/cli.py): exit codes in --help, Ctrl-C, not-a-transcript."""

from __future__ import annotations

import pytest

import evalkit.commands.columns as columns_cmd
from evalkit.cli import main


def help_text(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("argv", [["--help"], ["pairs", "--help"]])
def test_help_lists_the_exit_codes(argv, capsys):
    text = help_text(argv, capsys)
    assert "exit status:" in text
    for code in ("0 ", "1 ", "2 ", "130"):
        assert f"\n  {code}" in text


def test_ctrl_c_is_one_line_and_exit_130(monkeypatch, capsys):
    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(columns_cmd, "run", interrupted)
    assert main(["columns"]) == 130
    captured = capsys.readouterr()
    assert captured.err.strip() == "evalkit: interrupted" and captured.out == ""


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["sweep", "--tail", "x"], "evalkit sweep: argument --tail: invalid int value: 'x'"),
        (["export"], "evalkit export: the following arguments are required: --to"),
        (["nosuch"], "evalkit: argument COMMAND: invalid choice: 'nosuch'"),
        (["pairs", "check"], "evalkit pairs check: the following arguments are required: FILE"),
        (["--bogus"], "evalkit: unrecognized arguments: --bogus"),
    ],
)
def test_a_usage_error_is_one_line_and_exit_2(argv, message, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    assert captured.err.startswith(message) and captured.err.rstrip().endswith("--help)")


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("README.md", "# a readme\n\nsome text\n"),
        ("evidence.json", '{"schema_version": 1, "samples": []}\n'),
        ("app.jsonl", '{"level": "info", "msg": "started"}\n'),
    ],
)
def test_run_of_a_non_transcript_exits_2_with_one_line(tmp_path, capsys, name, content):
    path = tmp_path / name
    path.write_text(content)
    assert main(["run", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == f"evalkit run: {path}: not a Claude Code transcript\n"


def test_run_of_a_png_exits_2(tmp_path, capsys):
    path = tmp_path / "plot.png"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00")
    assert main(["run", str(path)]) == 2
    assert capsys.readouterr().err == f"evalkit run: {path}: not a Claude Code transcript\n"


def test_an_empty_file_is_refused(tmp_path, capsys):
    # Issue 23: a zero-byte file is no session of zeros.
    path = tmp_path / "empty.jsonl"
    path.write_text("")
    assert main(["run", str(path)]) == 2
    assert "an empty file (0 bytes): nothing to measure" in capsys.readouterr().err


def _command_parsers(parser, prefix=()):
    import argparse

    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield (*prefix, name), sub
                yield from _command_parsers(sub, (*prefix, name))


def test_every_option_is_in_its_usage_line():
    from evalkit.cli import build_parser

    checked = 0
    for name, parser in _command_parsers(build_parser()):
        usage = parser.format_usage()
        for action in parser._actions:
            names = [o for o in action.option_strings if o not in ("-h", "--help")]
            if names:
                assert any(o in usage for o in names), (name, names, usage)
                checked += 1
    assert checked > 40


# --- bytecode kept under the cache directory ---------------------------------------------------

_IMPORT_ONE = """
import sys
from evalkit.cli import keep_bytecode
print(keep_bytecode(sys.argv[1]))
import evalkit.metrics.envelope as m
print(type(m.__spec__.loader).__name__, m.split_sections("x") is not None)
"""


def _start(tmp_path, *env_items):
    """Run `_IMPORT_ONE` on a copy of the package that holds no bytecode beside its sources
    (a test run may have written some beside the checkout's)."""
    import os
    import shutil
    import subprocess
    import sys

    import evalkit

    copy = tmp_path / "src"
    if not copy.exists():
        shutil.copytree(
            os.path.dirname(evalkit.__file__),
            copy / "evalkit",
            ignore=shutil.ignore_patterns("__pycache__"),
        )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPYCACHEPREFIX"}
    env["PYTHONPATH"] = str(copy)
    env.update(env_items)
    out = subprocess.run(
        [sys.executable, "-c", _IMPORT_ONE, str(tmp_path / "cache")],
        capture_output=True,
        text=True,
        env=env,
        cwd=str(tmp_path),
        check=True,
    )
    return out.stdout.split()


def test_bytecode_is_kept_under_the_cache_directory_when_python_does_not_write_it(tmp_path):
    got = _start(tmp_path, ("PYTHONDONTWRITEBYTECODE", "1"))
    assert got == ["True", "_BytecodeLoader", "True"]
    assert not list((tmp_path / "src").rglob("*.pyc"))
    [pyc] = (tmp_path / "cache" / "bytecode").rglob("envelope.cpython-*.pyc")
    first = pyc.read_bytes()
    assert _start(tmp_path, ("PYTHONDONTWRITEBYTECODE", "1")) == got
    assert pyc.read_bytes() == first  # read, not written again
    pyc.write_bytes(first[:20])  # damaged: compiled again, and the module still loads
    assert _start(tmp_path, ("PYTHONDONTWRITEBYTECODE", "1")) == got
    assert pyc.read_bytes() == first


def test_no_bytecode_loader_where_python_has_a_prefix_of_its_own(tmp_path):
    got = _start(
        tmp_path, ("PYTHONDONTWRITEBYTECODE", "1"), ("PYTHONPYCACHEPREFIX", str(tmp_path / "p"))
    )
    assert got[:2] == ["False", "SourceFileLoader"]
    assert not (tmp_path / "cache").exists()


def test_the_evalkit_command_keeps_bytecode_under_the_default_cache_directory(tmp_path):
    # The command's own start-up (no cache directory given): evalkit's default cache directory
    # is found where the store layer keeps it, and the command runs as usual.
    import os
    import shutil
    import subprocess
    import sys

    import evalkit

    copy = tmp_path / "src"
    shutil.copytree(
        os.path.dirname(evalkit.__file__),
        copy / "evalkit",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPYCACHEPREFIX"}
    env.update(
        PYTHONPATH=str(copy), PYTHONDONTWRITEBYTECODE="1", XDG_CACHE_HOME=str(tmp_path / "xdg")
    )
    out = subprocess.run(
        [sys.executable, "-m", "evalkit", "columns", "models"],
        capture_output=True,
        text=True,
        env=env,
        cwd=str(tmp_path),
    )
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    assert list((tmp_path / "xdg" / "evalkit" / "bytecode").rglob("*.pyc"))
