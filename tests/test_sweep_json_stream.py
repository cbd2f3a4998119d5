"""`evalkit sweep --json` is written piece by piece (`write_json`) and is byte for byte
`JSON.stringify(doc, null, 2)` of the whole document (`js_json(to_json_dict(...), 2)`)."""

from __future__ import annotations

import io
import os
import subprocess
import sys

import pytest

from evalkit.ecma import js_json
from evalkit.outputs import sweep_text
from evalkit.outputs.sweep_text import render_json, to_json_dict, write_json
from evalkit.tables.sweep import run_sweep
from tests.hostile import write_hostile_corpus
from tests.sweep_helpers import cited


def _whole(result) -> str:
    return js_json(to_json_dict(result), 2) + "\n"


def _streamed(result) -> str:
    out = io.StringIO()
    write_json(result, out)
    return out.getvalue()


@pytest.mark.parametrize("rows_per_piece", [1, 2, 3, 512])
def test_streamed_json_is_the_whole_documents_text(tmp_path, monkeypatch, rows_per_piece):
    # Pieces of one, two and three rows put a boundary at every place in the lists.
    monkeypatch.setattr(sweep_text, "_ROWS_PER_PIECE", rows_per_piece)
    write_hostile_corpus(tmp_path / "hostile", 24, seed=7)
    for rel in ("p/repo/run1/run-baseline.jsonl", "p/repo/run1/run-new.jsonl"):
        cited(tmp_path / "hostile", rel, 300, 700, calls=2)
    result = run_sweep(tmp_path / "hostile", cache=False, jobs=1)
    assert result.records and result.accounting
    assert _streamed(result) == _whole(result) == render_json(result)


def test_streamed_json_of_an_empty_corpus(tmp_path):
    (tmp_path / "empty").mkdir()
    result = run_sweep(tmp_path / "empty", cache=False, jobs=1)
    text = _streamed(result)
    assert text == _whole(result)
    assert '"session_rows": []' in text and '"files": []' in text


def test_streamed_json_of_the_bundled_corpus():
    result = run_sweep(cache=False)
    assert _streamed(result) == _whole(result)


def test_the_command_writes_the_same_json(tmp_path):
    for rel in ("p/repo/run1/run-baseline.jsonl", "p/repo/run2/run-new.jsonl"):
        cited(tmp_path / "c", rel, 200, 800)
    proc = subprocess.run(
        [sys.executable, "-m", "evalkit", "sweep", str(tmp_path / "c"), "--json", "--no-cache"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert proc.stdout == _whole(run_sweep(tmp_path / "c", cache=False, jobs=1))


def test_an_output_that_cannot_show_a_name_gets_nothing_and_one_line(tmp_path):
    # Streaming stops at the first character the output's encoding lacks: such an output gets
    # the whole text or nothing (never a cut-off JSON document), and the error says what to do.
    cited(tmp_path / "c", "p²/repo/run1/run-new.jsonl", 200, 800)
    argv = [sys.executable, "-m", "evalkit", "sweep", str(tmp_path / "c"), "--no-cache"]
    env = {**os.environ, "PYTHONIOENCODING": "ascii"}
    for extra in (["--json"], []):
        proc = subprocess.run([*argv, *extra], capture_output=True, env=env)
        assert proc.returncode == 2 and proc.stdout == b""
        (line,) = proc.stderr.decode().splitlines()
        assert "cannot write the output" in line and "PYTHONIOENCODING=utf-8" in line
    env["PYTHONIOENCODING"] = "utf-8"
    proc = subprocess.run([*argv, "--json"], capture_output=True, env=env, check=True)
    assert "p²/repo" in proc.stdout.decode()
