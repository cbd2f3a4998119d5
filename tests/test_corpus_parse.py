"""Cached, parallel analysis in discovery order (evalkit/sweep/parse.py)."""

from __future__ import annotations

import io

from evalkit.corpus.discover import discover
from evalkit.corpus.parse import Progress, analyse_sessions
from tests.sweep_helpers import cited, put


def test_parallel_results_equal_serial_and_keep_discovery_order(tmp_path):
    for i in range(1, 9):
        cited(tmp_path, f"cg/ab-r/run-new-{i}.jsonl", 100 * i, 50, calls=1 + i % 3)
    put(tmp_path, "cg/ab-r/run-baseline-1.jsonl", text="null\n")
    refs = discover(tmp_path).sessions
    serial = analyse_sessions(tmp_path, refs, jobs=1)
    parallel = analyse_sessions(tmp_path, refs, jobs=2)
    assert serial == parallel
    assert [r.log for r in parallel] == [r.log for r in refs]
    assert [r.status for r in parallel].count("crash") == 1


class Tty(io.StringIO):
    def isatty(self):
        return True


def test_progress_bar_only_on_a_terminal():
    quiet = io.StringIO()
    p = Progress(3, stream=quiet)
    p.advance()
    p.close()
    assert quiet.getvalue() == ""
    tty = Tty()
    p = Progress(2, stream=tty)
    p.advance()
    p.advance()
    p.close()
    assert "2/2 sessions" in tty.getvalue() and tty.getvalue().endswith("\r")


def test_the_process_pool_gives_the_serial_records(tmp_path, monkeypatch):
    from evalkit.corpus import parse

    monkeypatch.setattr(parse, "_MIN_PARALLEL_BYTES", 0)  # the pool even for a tiny corpus
    for i in range(1, 13):
        cited(tmp_path, f"cg/ab-r/run-new-{i}.jsonl", 100 * i, 50, calls=1 + i % 3)
    put(tmp_path, "cg/ab-r/run-baseline-1.jsonl", text="null\n")
    refs = discover(tmp_path).sessions
    chunks, nbytes = parse.plan_chunks(str(tmp_path), refs, range(len(refs)), 2)
    assert len(chunks) > 2 and nbytes > 0
    assert sorted(i for c in chunks for i in c) == list(range(len(refs)))
    assert analyse_sessions(tmp_path, refs, jobs=2) == analyse_sessions(tmp_path, refs, jobs=1)
