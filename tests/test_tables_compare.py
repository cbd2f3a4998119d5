"""The arm comparison's figures (evalkit.tables.compare) and run discovery (spec §7.2, §8.4)."""

from __future__ import annotations

import math

import pytest

from evalkit.corpus.discover import discover_runs
from evalkit.errors import UsageError
from evalkit.tables.compare import Span, compare_arms, parse_exclude, select_runs
from tests.arm_helpers import write_run


def names(runs):
    return [(r.name, [s.rsplit("/", 1)[-1] for s in r.segments]) for r in runs]


def test_a_single_run_file_makes_one_multi_turn_run_and_hides_indexed_ones(tmp_path):
    for n in ("run-x.jsonl", "run-x.t10.jsonl", "run-x.t2.jsonl", "run-x-1.jsonl", "run-x-2.jsonl"):
        write_run(tmp_path, n)
    assert names(discover_runs(tmp_path, "x")) == [
        ("x", ["run-x.jsonl", "run-x.t2.jsonl", "run-x.t10.jsonl"])
    ]


def test_indexed_runs_sort_numerically_with_their_own_turns(tmp_path):
    for n in ("run-x-10.jsonl", "run-x-2.jsonl", "run-x-2.t2.jsonl", "run-x-1.jsonl"):
        write_run(tmp_path, n)
    assert names(discover_runs(tmp_path, "x")) == [
        ("x-1", ["run-x-1.jsonl"]),
        ("x-2", ["run-x-2.jsonl", "run-x-2.t2.jsonl"]),
        ("x-10", ["run-x-10.jsonl"]),
    ]


def test_the_label_is_regex_escaped(tmp_path):
    write_run(tmp_path, "run-aXb-1.jsonl")
    write_run(tmp_path, "run-a.b-1.jsonl")
    assert names(discover_runs(tmp_path, "a.b")) == [("a.b-1", ["run-a.b-1.jsonl"])]
    assert discover_runs(tmp_path, "a+") == ()


def test_a_zero_padded_index_is_the_reference_crash(tmp_path):
    write_run(tmp_path, "run-x-01.jsonl")
    (run,) = discover_runs(tmp_path, "x")
    assert run.name == "x-1" and run.segments[0].endswith("run-x-1.jsonl")
    assert "zero-padded" in run.problem


def test_a_missing_directory_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError, match="no such directory"):
        discover_runs(tmp_path / "nope", "x")


def test_span_drops_missing_and_non_finite_values():
    s = Span.of([3, None, math.nan, 1, math.inf, 2, 4])
    assert (s.median, s.min, s.max, s.n) == (2.5, 1, 4, 4)
    assert s.cell() == "3 [1–4]"  # Math.round(2.5) = 3
    assert Span.of([]).cell() == "—"
    assert Span.of([7.4]).cell() == "7"
    assert Span.of([1.6, 2.4]).cell() == "2"  # both ends print as 2


def test_parse_exclude_orders_rules_and_refuses_unknown_ones():
    assert parse_exclude("contaminated, raced") == ("raced", "contaminated")
    assert parse_exclude(None) == ()
    with pytest.raises(UsageError):
        parse_exclude("slow")


def test_a_run_is_charged_to_its_first_rule(tmp_path):
    write_run(tmp_path, "run-a-1.jsonl", subtype="error_max_turns", raced=True, cli="returned")
    write_run(tmp_path, "run-a-2.jsonl", raced=True, cli="returned")
    write_run(tmp_path, "run-a-3.jsonl")
    cmp = compare_arms(tmp_path, ["a"], exclude=("failed", "raced", "contaminated"))
    a = cmp.arm("a")
    assert a.runs == 1 and a.run_names == ("a-3",)
    assert a.dropped == {"failed": 1, "raced": 1, "contaminated": 0}
    assert select_runs([], ("raced",)) == ([], {"raced": 0})


def test_pooled_figures_sum_over_runs(tmp_path):
    write_run(tmp_path, "run-a-1.jsonl", explores=2, errored=1)
    write_run(tmp_path, "run-a-2.jsonl", explores=0, answer="none")
    a = compare_arms(tmp_path, ["a"]).arm("a")
    assert a.answered == 2 and a.errors == 1 and a.alloc_calls == 2
    # the run without an envelope adds no per-run efficiency and nothing to the pool
    assert a.efficiency.n == 1
    assert a.pooled_efficiency == pytest.approx(a.efficiency.median)
    # each explore is followed by another explore call (the last by the errored one)
    assert a.share("explore_again") == 100.0
