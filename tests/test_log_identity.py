"""Issue 21, items 7b and 7c: `log` is a unique key, and a transcript is one session.

* 7b: a file named with a byte that is not UTF-8 (`run-new-1\\xff.jsonl`, held by Python as the
  lone surrogate `\\udcff`) and a file whose name holds the text `\\udcff` got the same `log`
  in the frames. One escape rule, collision-free, everywhere: the frames write a lone
  surrogate as `\\udcXX` and a backslash as `\\\\`, exactly as the sweep's JSON writes them, so
  each frame `log` is the text between the quotes of the sweep's JSON.
* 7c: symbolic links to one transcript counted it once per link; it is read once, as a `.gz`
  copy beside its file is, and each other link is skipped with the reason.
"""

from __future__ import annotations

import json
import os

import pandas as pd

import evalkit
from evalkit.cli import main
from evalkit.corpus.load import export_corpus
from evalkit.sweep import run_sweep
from tests.sweep_helpers import cited


def _names_corpus(root):
    cited(root, "run-new-1.jsonl", 100, 50)
    raw = cited(root, "tmp-raw.jsonl", 90, 60)
    os.rename(raw, os.fsencode(root) + b"/run-new-1\xff.jsonl")  # a byte that is not UTF-8
    cited(root, "run-new-1\\udcff.jsonl", 80, 70)  # the escape text, literally
    cited(root, "run-new-2\\x.jsonl", 70, 80)  # a backslash in a name
    return root


def test_a_byte_that_is_not_utf8_and_its_escape_text_get_two_logs(tmp_path, capsys):
    root = _names_corpus(tmp_path / "c")
    loaded = evalkit.load_corpus(root, cache=False, jobs=1)
    logs = list(loaded.sessions_df()["log"])
    assert len(set(logs)) == len(logs) == 4
    assert set(logs) == {
        "run-new-1.jsonl",
        "run-new-1\\udcff.jsonl",  # the lone surrogate, escaped
        "run-new-1\\\\udcff.jsonl",  # the backslash of the literal text, escaped
        "run-new-2\\\\x.jsonl",
    }
    out = tmp_path / "out"
    export_corpus(root, out, "parquet", jobs=1, cache=False)
    assert sorted(pd.read_parquet(out / "sessions.parquet")["log"]) == sorted(logs)
    # The same rule as the sweep's JSON: each log is the text between its quotes there.
    assert main(["sweep", str(root), "--json", "--no-cache", "-j", "1"]) == 0
    text = capsys.readouterr().out
    for log in logs:
        assert f'"log": "{log}"' in text
    assert {r["log"] for r in json.loads(text)["session_rows"]} == {s.log for s in loaded.records}


def test_a_frame_log_finds_its_session(tmp_path):
    root = _names_corpus(tmp_path / "c")
    loaded = evalkit.load_corpus(root, cache=False, jobs=1)
    from evalkit.store.columns import name_text

    for log in loaded.sessions_df()["log"]:
        assert name_text(loaded.session(log).log) == log


def _link_corpus(root, outside):
    cited(root, "cg22/ab-express/run-new-1.jsonl", 100, 50)
    target = cited(outside, "kept/run.jsonl", 60, 40)
    links = root / "cg22/ab-express"
    for name in ("run-new-2.jsonl", "run-new-3.jsonl"):
        (links / name).symlink_to(target)
    (links / "run-new-4.jsonl").symlink_to(links / "run-new-1.jsonl")  # to a file inside
    return root


def test_symbolic_links_to_one_transcript_count_it_once(tmp_path):
    root = _link_corpus(tmp_path / "c", tmp_path / "outside")
    result = run_sweep(root, cache=False, jobs=1)
    logs = [r.log for r in result.records]
    assert logs == ["cg22/ab-express/run-new-1.jsonl", "cg22/ab-express/run-new-2.jsonl"]
    skipped = {f.path: f.reason for f in result.discovery.files if f.session is None}
    assert "run-new-2.jsonl" in skipped["cg22/ab-express/run-new-3.jsonl"]
    assert "symbolic link" in skipped["cg22/ab-express/run-new-3.jsonl"]
    assert "run-new-1.jsonl" in skipped["cg22/ab-express/run-new-4.jsonl"]
    loaded = evalkit.load_corpus(root, cache=False, jobs=1)
    assert list(loaded.sessions_df()["log"]) == logs


def test_links_to_different_transcripts_are_each_read(tmp_path):
    root = tmp_path / "c"
    cited(root, "run-new-1.jsonl", 100, 50)
    a = cited(tmp_path / "o", "a.jsonl", 10, 10)
    b = cited(tmp_path / "o", "b.jsonl", 20, 10)
    (root / "run-new-2.jsonl").symlink_to(a)
    (root / "run-new-3.jsonl").symlink_to(b)
    (root / "run-new-4.jsonl").symlink_to(tmp_path / "o" / "missing.jsonl")  # dangling
    result = run_sweep(root, cache=False, jobs=1)
    assert len(result.records) == 4
