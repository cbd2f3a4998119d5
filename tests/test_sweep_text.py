"""Text, markdown and JSON output of the sweep (evalkit/sweep/render.py, issue 4 Build 7)."""

from __future__ import annotations

import json

import pytest

from evalkit.outputs import caveats
from evalkit.outputs.sweep_text import render_json, render_markdown, render_text, to_json_dict
from evalkit.tables.sweep import run_sweep
from tests.sweep_helpers import cited, put

TOP_KEYS = [
    "sessions",
    "single",
    "multi",
    "calls",
    "sections",
    "crashes",
    "slices",
    "per_call",
    "arms",
    "session_rows",
    "skipped",
    "files",  # issue 11 item 14: every file and the damage account
    "damage",
]
SLICE_KEYS = ["slice", "n", "pooled", "median", "p25", "p75", "min", "path_cited"]
ARM_KEYS = ["pass", "repo", "arm", "n", "median", "min", "max", "pooled"]
ROW_KEYS = [
    "log",
    "pass",
    "repo",
    "arm",
    "run",
    "segments",
    "calls",
    "chars",
    "cited_chars",
    "efficiency",
    "path_efficiency",
]


@pytest.fixture
def result(tmp_path):
    root = tmp_path / "corpus"
    cited(root, "cg22/ab-express/run-baseline-1.jsonl", 800, 200)
    cited(root, "cg22/ab-express/run-baseline-2.jsonl", 700, 300)
    cited(root, "cg22/ab-express/run-new-1.jsonl", 1000, 0)
    cited(root, "ab-readme/gin/run1/run-headless-with.jsonl", 300, 300)
    cited(root, "ab-readme/gin/run1/run-headless-with.t2.jsonl", 500, 100)
    cited(root, "ab-readme/gin/run1/run-headless-with.t3.jsonl", 500, 100)
    put(root, "ab-readme/gin/run1/run-headless-without.jsonl")
    put(root, "ab-readme/gin/run1/run-headless-without.t2.jsonl")
    put(root, "crash.jsonl", text="null\n")
    put(root, "cg22/ab-express/run-new-1.err", text="")
    return run_sweep(root, cache=False, jobs=1)


def test_json_has_exactly_the_issue_keys_fractions_and_relative_logs(result):
    doc = json.loads(render_json(result))
    assert list(doc) == TOP_KEYS
    assert [s["slice"] for s in doc["slices"]] == ["all", "single-question", "multi-turn"]
    assert all(list(s) == SLICE_KEYS for s in doc["slices"])
    assert list(doc["per_call"]) == ["median", "p25"]
    assert all(list(a) == ARM_KEYS for a in doc["arms"])
    assert all(list(r) == ROW_KEYS for r in doc["session_rows"])
    assert all(list(s) == ["log", "reason"] for s in doc["skipped"])
    assert (doc["sessions"], doc["single"], doc["multi"], doc["crashes"]) == (4, 3, 1, 1)
    assert all(0 <= r["efficiency"] <= 1 for r in doc["session_rows"])
    assert all(
        not r["log"].startswith("/") and "\\" not in r["log"]
        for r in doc["session_rows"] + doc["skipped"]
    )
    multi = next(r for r in doc["session_rows"] if r["segments"] == 3)
    assert (multi["pass"], multi["repo"], multi["arm"], multi["run"]) == (
        "ab-readme",
        "gin",
        "headless-with",
        "run1",
    )
    reasons = {s["log"]: s["reason"] for s in doc["skipped"]}
    assert reasons["crash.jsonl"].startswith("crash: ")
    assert "not in the sweep" in reasons["ab-readme/gin/run1/run-headless-without.jsonl"]
    assert "stderr" in reasons["cg22/ab-express/run-new-1.err"]
    assert doc == to_json_dict(result)


def test_text_report_has_every_block_in_order(result):
    text = render_text(result)
    order = [
        "4 sessions with at least one answered explore (3 single-question, 1 multi-turn), ",
        "multi-turn (3 turns)",
        "Per call: median",
        "pass / repo",
        "cg22 / express",
        "Lowest",
        "quantiles: linear interpolation",
        *caveats.SWEEP_CAVEATS,
        "Files: ",
    ]
    at = [text.index(s) for s in order]
    assert at == sorted(at)
    assert "1 crashes" in text
    assert caveats.SYNTHETIC_CORPUS not in text  # not the bundled corpus
    assert "  crash: crash.jsonl:1: line is JSON null" in text
    assert "    crash.jsonl\n" in text
    assert "  no-explore: no answered explore call" in text
    assert "    ab-readme/gin/run1/run-headless-without.jsonl (+1 segments)\n" in text
    assert (
        "  skipped: stderr log of a run, not a transcript\n"
        "    cg22/ab-express/run-new-1.err\n" in text
    )
    assert "call 1:" in text


def test_arm_cells_use_compare_arms_span(result):
    cell = result.cell("cg22", "express", "baseline")
    assert cell.n == 2
    line = next(ln for ln in render_text(result).splitlines() if "cg22 / express" in ln)
    lo, hi = sorted(v * 100 for _, v in cell.values)
    from evalkit.ecma import fix

    assert f"[{fix(lo, 1)}%–{fix(hi, 1)}%]" in line


def test_markdown_has_tables_label_and_caveats(result, tmp_path):
    md = render_markdown(result)
    assert "| slice | n | pooled | median | p25 | p75 | min | path-cited only |" in md
    assert "| all | 4 |" in md
    assert "## Arms" in md and "## The tail" in md and "## Files not in the sweep" in md
    assert all(c in md for c in caveats.SWEEP_CAVEATS)


def test_damaged_segments_are_listed_in_the_accounting(tmp_path):
    root = tmp_path / "c"
    path = cited(root, "p/ab-r/run-new-1.jsonl", 900, 100)
    clean = run_sweep(root, cache=False, jobs=1).record("p/ab-r/run-new-1.jsonl").efficiency
    path.write_bytes(path.read_bytes() + b'{"cut":')
    result = run_sweep(root, cache=False, jobs=1)
    text = render_text(result)
    assert "  damaged: 1 file read over what survived\n" in text
    assert "    p/ab-r/run-new-1.jsonl: 1 malformed line skipped\n" in text
    assert result.record("p/ab-r/run-new-1.jsonl").efficiency == clean  # measured over survivors


def test_unknown_arms_say_which_arms_exist(tmp_path):
    root = tmp_path / "c"
    cited(root, "p/ab-r/run-new-1.jsonl", 900, 100)
    cited(root, "p/ab-r/run-baseline-1.jsonl", 800, 200)
    text = render_text(run_sweep(root, arms=("foo", "bar"), cache=False, jobs=1))
    assert "  (no session is in arm foo or bar; arms found: baseline, new — see --arms)" in text


def test_an_empty_directory_says_what_a_transcript_is(tmp_path):
    text = render_text(run_sweep(tmp_path, cache=False, jobs=1))
    assert "(no transcripts found: a session is a *.jsonl or *.jsonl.gz file" in text


def test_unlabelled_sessions_point_at_a_layout_that_labels_them(tmp_path):
    root = tmp_path / "c"
    cited(root, "baseline/auth/t1/transcript.jsonl", 800, 200)
    cited(root, "candidate/auth/t1/transcript.jsonl", 900, 100)
    text = render_text(run_sweep(root, cache=False, jobs=1))
    assert (
        "  (no session has a pass/repo/arm label from its path; for a layout of your own, name"
        " them with --layout, e.g. --layout '{arm}/{task}/{trial}/*.jsonl')\n"
    ) in text
    # the layout the hint suggests does label this tree
    from evalkit import load_corpus

    labelled = load_corpus(root, layout="{arm}/{task}/{trial}/*.jsonl", cache=False, jobs=1)
    assert sorted(labelled.sessions_df()["arm"]) == ["baseline", "candidate"]


def test_counts_of_one_are_singular(tmp_path):
    cited(tmp_path / "c", "p/ab-r/run-new-1.jsonl", 900, 100)
    text = render_text(run_sweep(tmp_path / "c", cache=False, jobs=1))
    assert (
        "1 session with at least one answered explore (1 single-question, 0 multi-turn), "
        "1 explore call, 2 file sections, 0 crashes\n"
    ) in text
    assert "(over 1 explore call)." in text
