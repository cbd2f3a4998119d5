"""Property-style check over generated hostile sessions (issue 11, acceptance).

A few hundred sessions from `tests/hostile.py` (lone surrogates, non-finite and huge numbers,
odd ids, names and threads, deep nesting, wrong content types, damaged bytes, cut gzip
streams, hostile file names). Every command must exit 0 or 2, write at most one line on
stderr, never a traceback, and its --json output must be valid JSON that a strict UTF-8
terminal can print.

Issue 21: the sessions also hold `type` values that are not text and values nested deeply in
any position, and beside them lie hostile files for every other reader (Codex rollouts,
`codex exec --json` captures, Inspect logs): each goes through `run`, and the whole corpus
through `sweep`, `load_corpus` and `export`, where one bad file is that file's reason and the
rest of the corpus loads.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import random

import pytest

import evalkit
from evalkit.cli import main
from evalkit.corpus.load import export_corpus
from tests.hostile import hostile_session, write_hostile_agents, write_hostile_corpus

N_SESSIONS = 240
N_AGENT_FILES = 30  # of each Codex format, and a few Inspect logs


def _run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse
            code = exc.code if isinstance(exc.code, int) else 2
    return code, out.getvalue(), err.getvalue()


def _strict_json(text: str):
    def refuse(name):
        raise ValueError(f"{name} in JSON output")

    return json.loads(text, parse_constant=refuse)


def _check(argv: list[str], *, is_json: bool) -> int:
    code, out, err = _run(argv)
    where = f"{argv!r}: {err!r}"
    assert code in (0, 2), where
    assert err.count("\n") <= 1 and "Traceback" not in err, where
    out.encode("utf-8")  # a strict UTF-8 stdout can print it (no lone surrogate)
    err.encode("utf-8", "backslashreplace")
    if is_json and code == 0:
        _strict_json(out)
    if code == 2:
        assert err.startswith(f"evalkit {argv[0]}: "), where
        # Issue 21: every refusal is a reason evalkit gives, never an error it did not foresee
        # (a `type` that is not text, a line nested too deeply near the top).
        assert "unexpected" not in err and "nested too deeply" not in err, where
    return code


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile") / "corpus"
    paths = write_hostile_corpus(root, N_SESSIONS, seed=11)
    return root, paths + write_hostile_agents(root / "agents", N_AGENT_FILES, seed=21)


def test_every_hostile_session_exits_0_or_2_with_one_line(corpus):
    _, paths = corpus
    codes = []
    for path in paths[:N_SESSIONS]:
        codes.append(_check(["run", str(path), "--json"], is_json=True))
        _check(["run", str(path), "--envelope", "--brief"], is_json=False)
    # The generator is hostile but not hopeless: most sessions are still measured.
    assert codes.count(0) > len(codes) // 2 and codes.count(2) > 0


def test_every_hostile_file_of_another_agent_exits_0_or_2_with_one_line(corpus):
    _, paths = corpus
    codes = []
    for path in paths[N_SESSIONS:]:
        codes.append(_check(["run", str(path), "--json"], is_json=True))
        _check(["run", str(path)], is_json=False)
    # One bad line is skipped and counted (issue 21): most files are still read.
    assert codes.count(0) > len(codes) // 2


def test_load_corpus_and_export_over_the_hostile_corpus_account_for_every_file(corpus, tmp_path):
    root, paths = corpus
    loaded = evalkit.load_corpus(root, cache=False, jobs=1)
    accounted = {a.path for a in loaded.accounting()}
    assert len(accounted) == len(paths)
    assert len(loaded.sessions_df()) > len(paths) // 2
    logs = loaded.sessions_df()["log"]
    assert logs.is_unique
    done = export_corpus(root, tmp_path / "out", "parquet", jobs=1, cache=False)
    assert done.rows["sessions"] == len(loaded.sessions_df())
    out = tmp_path / "csv"
    argv = ["export", str(root), "--to", str(out), "--format", "csv", "--no-cache", "-j", "1"]
    code, _, err = _run(argv)
    # One line per session left out, each naming it; never a traceback.
    assert code == 0 and "Traceback" not in err, err[-2000:]
    lines = err.splitlines()
    assert all(line.startswith("evalkit export: not exported: ") for line in lines)
    assert len(lines) == len(loaded.errors) and (out / "sessions.csv").is_file()


def test_the_sweep_over_the_hostile_corpus_accounts_for_every_file(corpus):
    root, paths = corpus
    code, out, err = _run(["sweep", str(root), "--json", "--no-cache", "-j", "1"])
    assert code == 0 and err.count("\n") <= 1, err
    doc = _strict_json(out)
    assert len(doc["files"]) == len(paths)
    assert _check(["sweep", str(root), "--no-cache", "-j", "1", "--list-files"], is_json=False) == 0


def test_the_trial_sweep_over_the_hostile_corpus_prints_strict_json(corpus):
    root, _ = corpus
    argv = ["sweep", str(root), "--profile", "codegraph", "--no-cache", "-j", "1"]
    assert _check([*argv, "--json"], is_json=True) == 0
    assert _check(argv, is_json=False) == 0


def test_interactive_hostile_logs_exit_0_or_2(tmp_path):
    rng = random.Random(7)
    for i in range(40):
        log_dir = tmp_path / f"proj{i}"
        sub = log_dir / "s" / "subagents"
        sub.mkdir(parents=True)
        (log_dir / "s.jsonl").write_bytes(hostile_session(rng))
        (sub / "agent-a.jsonl").write_bytes(hostile_session(rng))
        if i % 5 == 0:
            os.mkfifo(sub / "agent-b.jsonl")
        (sub / "agent-a.meta.json").write_bytes(
            rng.choice([b'{"toolUseId":5}', b"null", b'{"toolUseId":"\\ud800"}', b"\xff"])
        )
        _check(["session", "--log-dir", str(log_dir)], is_json=False)
