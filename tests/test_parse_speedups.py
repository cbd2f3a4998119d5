"""More of the parse's fast paths (issue 16, second pass): each gives the exact result, on the
input where it fires and on the input where it must step aside.

Also: `test_frozen_init.py` (frozen dataclasses built faster), `test_envelope_scan.py` (the
section scans), `test_parse_fast_paths.py` and `test_fastjson.py` (the first pass).
"""

from __future__ import annotations

import itertools
import os

import pytest

from evalkit.errors import TranscriptError
from evalkit.formats import files
from evalkit.formats.claude_code.transcripts import read_transcript
from evalkit.metrics.allocation import PathSet, same_path
from evalkit.metrics.envelope import PATH_TOKEN, path_tokens
from evalkit.metrics.summary import summarize
from evalkit.metrics.tokens import claude_code_tokens

PATHS = [
    "src/a.py", "a.py", "./src/a.py", "././src/a.py", "src\\a.py", "", None, "/abs/src/a.py",
    "b/src/a.py", "src", "./a.py", "/a.py", "a.pyc", "xsrc/a.py", ".", "./",
]  # fmt: skip


def test_a_path_set_answers_as_same_path_against_each_of_its_paths():
    # One set asked about many paths (the answer's cited paths against every returned file).
    for k in range(len(PATHS) + 1):
        for others in itertools.combinations(PATHS, min(k, 3)):
            cited = PathSet(others)
            for a in PATHS:
                assert cited.has(a) == any(same_path(a, b) for b in others), (a, others)


def test_an_empty_path_set_and_an_empty_path_match_nothing():
    assert not PathSet([]).has("a.py")
    assert not PathSet(["", None, "./"]).has("a.py")  # `./` normalises to the empty path
    assert not PathSet(["a.py"]).has("")
    assert not PathSet(["a.py"]).has(None)


# --- path tokens, line by line -------------------------------------------------------------


def test_path_tokens_line_by_line_are_the_whole_texts_matches():
    # Fires: several lines, some with a `/`; steps aside: one line, no `/`, empty, None.
    cases = [
        "see src/a.py\nand lib/b.ts, then\nnothing here\n./c/d.js@x/y.z\n",
        "\nsrc/a.py\n\n/abs/p.q\n",
        "a/b.c\r\nd/e.f\u2028g/h.i",  # other terminators stay inside a line: scanned whole
        "x/y.z-w/v.u",
        "no slashes at all\nnone",
        "one line: pkg/mod.py",
        "",
        None,
        "/\n/\n/",
        "a" * 5000 + "/b.c\n" + "d/e.f",
    ]
    for text in cases:
        assert path_tokens(text) == PATH_TOKEN.findall(text or ""), text


def test_system_init_tools_are_named_as_strings_whatever_they_hold():
    events = [
        {"type": "system", "subtype": "init", "tools": ["mcp__codegraph__x", 5, None, "Read"]},
        {"type": "result", "subtype": "success"},
    ]
    assert summarize(events).init_tools == ("mcp__codegraph__x",)
    events[0]["tools"] = [["mcp__codegraph__y"], "codegraph_z", True]
    assert summarize(events).init_tools == ("mcp__codegraph__y", "codegraph_z")


# --- one stat per segment ------------------------------------------------------------------


def test_a_session_stats_each_segment_once_and_checks_what_that_stat_says(tmp_path, monkeypatch):
    a, b = tmp_path / "run-x.jsonl", tmp_path / "run-x.t2.jsonl"
    for p in (a, b):
        p.write_text('{"type":"system","subtype":"init"}\n')
    seen: list[str] = []
    real = os.stat

    def counting(path, *args, **kw):
        seen.append(os.fspath(path))
        return real(path, *args, **kw)

    monkeypatch.setattr(os, "stat", counting)
    transcript = read_transcript([str(a), str(b)])
    assert len(transcript.events) == 2
    assert seen == [str(a), str(b)]  # the reader's own stat, passed on to the file check


def test_a_known_stat_is_still_checked_and_without_one_the_file_is_stat_ed(tmp_path):
    d = tmp_path / "dir.jsonl"
    d.mkdir()
    with pytest.raises(TranscriptError, match="is a directory"):
        files.read_file_bytes(str(d), known_stat=os.stat(d))
    with pytest.raises(TranscriptError, match="is a directory"):
        files.read_file_bytes(str(d))
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(TranscriptError, match="not a regular file"):
        files.read_file_bytes(str(fifo), known_stat=os.stat(fifo))
    with pytest.raises(TranscriptError, match="no such file"):
        read_transcript([str(tmp_path / "gone.jsonl")])  # no stat to pass on: the check's own


# --- prompt tokens of a message ------------------------------------------------------------


def _tokens_of(usages: list) -> tuple:
    events = [
        {"type": "assistant", "message": {"id": f"m{i}", "content": [], "usage": u}}
        for i, u in enumerate(usages)
    ]
    t = claude_code_tokens(events)
    return t.ledger, t.main_prompt_tokens, t.message_models


def test_integer_usages_sum_as_the_general_path_sums_them():
    # Fires: three integers; steps aside: a float, a bool, a string, a missing or null field.
    full = {"input_tokens": 3, "cache_read_input_tokens": 5, "cache_creation_input_tokens": 7}
    ledger, main, models = _tokens_of([full, full])
    assert (ledger.prompt_tokens, ledger.cache_read_tokens, ledger.cache_write_tokens) == (
        30,
        10,
        14,
    )
    assert main == 30 and models == ((None, 2, 30),)
    odd = [
        {"input_tokens": 3.5, "cache_read_input_tokens": 5, "cache_creation_input_tokens": 7},
        {"input_tokens": True, "cache_read_input_tokens": 5, "cache_creation_input_tokens": 7},
        {"input_tokens": "9", "cache_read_input_tokens": 5},
        {"cache_creation_input_tokens": 2},
        {
            "input_tokens": None,
            "cache_read_input_tokens": None,
            "cache_creation_input_tokens": None,
        },
    ]
    ledger, main, models = _tokens_of(odd)
    # 15.5 + 12 (True is no number) + 5 + 2; the all-null usage adds nothing
    assert ledger.prompt_tokens == 34.5 and main == 34.5
    assert (ledger.cache_read_tokens, ledger.cache_write_tokens) == (15, 16)
    assert models == ((None, 5, 34.5),)
