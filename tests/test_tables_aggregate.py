"""Slice table, per-call line, arm table and tail (evalkit/sweep/aggregate.py, spec §8.2, §8.4)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalkit.corpus.records import CallRecord, SessionRecord
from evalkit.ecma import pct1
from evalkit.tables.aggregate import (
    arm_changes_frame,
    arm_frame,
    arm_table,
    corpus_counts,
    pct_cell,
    per_call,
    slice_table,
    span,
    tail,
)


def rec(log, calls, *, segments=1, status="parsed", pass_=None, repo=None, arm=None, run=None):
    """A record from `(envelope, used, used_path, files, cited_files)` per call."""
    cs = tuple(CallRecord(i + 1, *c) for i, c in enumerate(calls))
    return SessionRecord(
        log=log,
        segments=tuple(f"{log}.t{k}" if k else log for k in range(segments)),
        pass_=pass_,
        repo=repo,
        arm=arm,
        run=run,
        layout="generic",
        status=status,
        reason=None if status == "parsed" else "why",
        calls=cs,
        chars=sum(c.envelope for c in cs),
        cited_chars=sum(c.used for c in cs),
        path_chars=sum(c.used_path for c in cs),
    )


@pytest.fixture
def records():
    return [
        rec("a", [(1000, 900, 800, 3, 2)]),
        rec("b", [(2000, 500, 500, 4, 1), (1000, 1000, 0, 1, 1)]),
        rec("c", [(400, 100, 100, 2, 1)], segments=3),
        rec("d", [(300, 300, 300, 1, 1)], segments=3),
        rec("e", [(700, 350, 0, 2, 1)], segments=3),
        rec("f", [(999, 0, 0, 1, 0)]),
        rec("g", [], status="no-explore"),
        rec("h", [], status="crash"),
    ]


def test_corpus_counts(records):
    c = corpus_counts(records)
    assert (c.sessions, c.single, c.multi, c.calls, c.sections, c.crashes, c.no_explore) == (
        6,
        3,
        3,
        7,
        14,
        1,
        1,
    )


def test_slices_pool_by_chars_and_quantile_per_session(records):
    all_, single, multi = slice_table(records)
    swept = [r for r in records if r.status == "parsed"]
    effs = [r.efficiency for r in swept]
    assert all_.n == 6 and single.n == 3 and multi.n == 3
    assert all_.pooled == sum(r.cited_chars for r in swept) / sum(r.chars for r in swept)
    assert all_.path_cited == sum(r.path_chars for r in swept) / sum(r.chars for r in swept)
    s = sorted(effs)
    assert all_.median == (s[2] + s[3]) / 2
    assert all_.p25 == float(np.quantile(effs, 0.25, method="linear"))
    assert all_.p75 == float(np.quantile(effs, 0.75, method="linear"))
    assert all_.min == 0.0
    assert multi.turns == 3 and single.turns == 1 and all_.turns is None
    assert multi.pooled == (100 + 300 + 350) / (400 + 300 + 700)
    assert single.median == records[1].efficiency  # b = 1500/3000 is the middle of 0, .5, .9


def test_empty_slice_has_no_numbers():
    _, _, multi = slice_table([rec("a", [(10, 5, 5, 1, 1)])])
    assert multi.n == 0 and multi.pooled is multi.median is multi.min is None


def test_per_call_is_over_every_allocation_call(records):
    pc = per_call(records)
    effs = [0.9, 0.25, 1.0, 0.25, 1.0, 0.5, 0.0]
    assert pc.n == 7
    assert pc.median == 0.5
    assert pc.p25 == float(np.quantile(effs, 0.25, method="linear"))


def ab(pass_, repo, arm, run, env, used):
    return rec(
        f"{pass_}/ab-{repo}/run-{arm}-{run}.jsonl",
        [(env, used, used, 1, 1)],
        pass_=pass_,
        repo=repo,
        arm=arm,
        run=str(run),
    )


def test_arm_table_groups_pass_repo_and_orders_naturally():
    recs = [
        ab("cg22", "express", "new", 1, 100, 100),
        ab("cg22", "express", "new", 2, 200, 185),
        ab("cg22", "express", "new", 10, 100, 100),
        ab("cg22", "express", "baseline", 1, 1000, 819),
        ab("cg15", "express", "baseline", 1, 100, 82),
        rec(
            "cg22/ab-express/run-baseline-2.jsonl",
            [],
            status="no-explore",
            pass_="cg22",
            repo="express",
            arm="baseline",
            run="2",
        ),
        rec(
            "cg22/ab-express/run-baseline-3.jsonl",
            [],
            status="crash",
            pass_="cg22",
            repo="express",
            arm="baseline",
            run="3",
        ),
        rec("other.jsonl", [(10, 1, 1, 1, 1)]),
    ]
    arms, rows = arm_table(recs)
    assert arms == ("baseline", "new")
    assert [(r.pass_, r.repo) for r in rows] == [("cg15", "express"), ("cg22", "express")]
    base, new = rows[1].cells
    assert base.n == 1 and base.runs == 2  # the no-explore run counts as a run, the crash does not
    assert new.values == (("1", 1.0), ("2", 0.925), ("10", 1.0))
    assert new.median == 1.0 and new.min == 0.925 and new.max == 1.0
    assert new.pooled == 385 / 400
    assert rows[0].cells[1] is None
    assert span(new.percents, pct_cell) == "100.0% [92.5%–100.0%]"
    assert pct_cell(new.pooled * 100) == "96.3%"
    df = arm_frame(rows, per_run=True)
    assert list(df.columns) == ["pass", "repo", "arm", "run", "log", "efficiency"]
    assert len(df) == 5
    assert list(arm_frame(rows).columns) == [
        "pass",
        "repo",
        "arm",
        "n",
        "runs",
        "median",
        "min",
        "max",
        "pooled",
    ]


def test_arm_table_falls_back_to_every_arm_found_and_honours_explicit_arms():
    recs = [
        rec("r/run-with.jsonl", [(10, 5, 5, 1, 1)], repo="gin", arm="headless-with"),
        rec("r/run-without.jsonl", [], status="no-explore", repo="gin", arm="headless-without"),
    ]
    arms, rows = arm_table(recs)
    assert arms == ("headless-with", "headless-without")
    with_, without = rows[0].cells
    assert with_.n == 1 and without.n == 0 and without.median is None
    assert span(without.percents, pct_cell) == "—"
    arms, rows = arm_table(recs, ["headless-without"])
    assert arms == ("headless-without",) and rows[0].cells[0].runs == 1


def test_span_follows_compare_arms():
    assert span([]) == "—"
    assert span([None, float("nan")]) == "—"
    assert span([3.4]) == "3"
    assert span([81.9, 82.0, 81.9], pct_cell) == "81.9% [81.9%–82.0%]"
    assert span([81.94, 81.91], pct_cell) == "81.9%"  # both ends print the same
    assert span([24, 18, 35]) == "24 [18–35]"


def test_tail_is_lowest_first_with_log_tiebreak(records):
    low = tail(records, 3)
    assert [r.log for r in low] == ["f", "c", "b"]  # 0.0, 0.25, then b (0.5) before e (0.5)
    assert tail(records, 0) == ()


def test_pct1_is_applied_only_at_presentation(records):
    all_, _, _ = slice_table(records)
    assert isinstance(all_.pooled, float)
    assert pct1(all_.pooled).endswith("%")


def test_arm_changes_new_against_baseline():
    records = [
        rec("b1", [(100, 80, 80, 1, 1)], pass_="p", repo="r", arm="baseline", run="1"),
        rec("b2", [(100, 60, 60, 1, 1)], pass_="p", repo="r", arm="baseline", run="2"),
        rec("n1", [(100, 90, 90, 1, 1)], pass_="p", repo="r", arm="new", run="1"),
        rec("m1", [(100, 50, 50, 1, 1)], pass_="p", repo="s", arm="baseline", run="1"),
    ]
    arms, rows = arm_table(records)
    frame = arm_changes_frame(rows, arms).set_index("repo")
    r = frame.loc["r"]
    assert (r.baseline_median, r.baseline_min, r.baseline_max, r.baseline_n) == (0.7, 0.6, 0.8, 2)
    assert r.new_median == 0.9 and r.change == pytest.approx(0.2) and r.direction == "up"
    assert pd.isna(frame.loc["s"].direction)  # no new arm: no change to report
