"""Per-task paired outcome table (evalkit/tables/outcomes.py) and its exact tests (evalkit/stats.py)."""

from __future__ import annotations

import random

import pytest
from scipy import stats as sps

from evalkit.stats import binomial_two_sided, mcnemar_exact, sign_test
from evalkit.tables.outcomes import outcome_table, passed_from_reward


def run(task, arm, reward, trial=1, **extra):
    return {"task": task, "arm": arm, "trial": trial, "reward": reward, **extra}


@pytest.mark.parametrize(("k", "n"), [(0, 1), (3, 6), (0, 6), (6, 6), (2, 9), (7, 11), (1, 20)])
def test_binomial_two_sided_equals_scipy(k, n):
    assert binomial_two_sided(k, n) == pytest.approx(sps.binomtest(k, n, 0.5).pvalue, rel=1e-12)


@pytest.mark.parametrize("seed", range(8))
def test_sign_test_equals_scipy_binomtest(seed):
    rng = random.Random(seed)
    deltas = [rng.choice([-1, 0, 1]) * rng.random() for _ in range(rng.randint(6, 18))]
    nonzero = [d for d in deltas if d != 0]
    t = sign_test(deltas)
    if len(nonzero) < 6:
        assert t.p_value is None
        return
    k = sum(1 for d in nonzero if d > 0)
    assert t.p_value == pytest.approx(sps.binomtest(k, len(nonzero), 0.5).pvalue, rel=1e-12)


def test_mcnemar_exact_equals_scipy_and_is_withheld_below_six():
    t = mcnemar_exact(1, 6)
    assert t.method == "exact_mcnemar" and t.n_nonzero == 7
    assert t.p_value == pytest.approx(sps.binomtest(6, 7, 0.5).pvalue)
    few = mcnemar_exact(0, 5)
    assert few.p_value is None and few.min_attainable_p == 2 / 2**5 and "fewer than 6" in few.reason


def test_passed_from_reward():
    assert passed_from_reward(1.0) and not passed_from_reward(0.99)
    assert passed_from_reward(0.5, 0.5) and passed_from_reward(None) is None


def test_per_task_rows_and_summary_by_hand():
    runs = [
        run("a", "baseline", 0.0, 1),
        run("a", "baseline", 1.0, 2),  # mean 0.5
        run("a", "mcp", 1.0, 1),
        run("a", "mcp", 1.0, 2),  # 1.0 → helps +0.5
        run("b", "baseline", 1.0),
        run("b", "mcp", 0.25),  # hurts −0.75
        run("c", "baseline", 0.1),
        run("c", "baseline", 0.2),  # 0.15 (float) …
        run("c", "mcp", 0.15),  # … ties 0.15 within tolerance
        run("d", "baseline", 1.0),
        run("d", "mcp", None),  # incomplete
        run("e", "other", 1.0),  # not in either arm: no row
    ]
    t = outcome_table(runs, "baseline", "mcp")
    got = [
        (r.task, r.baseline_reward, r.baseline_n, r.candidate_reward, r.candidate_n, r.cls)
        for r in t.tasks
    ]
    assert got == [
        ("a", 0.5, 2, 1.0, 2, "helps"),
        ("b", 1.0, 1, 0.25, 1, "hurts"),
        ("c", pytest.approx(0.15), 2, 0.15, 1, "tie"),
        ("d", 1.0, 1, None, 0, "incomplete"),
    ]
    assert [r.delta for r in t.tasks][:2] == [0.5, -0.75] and t.tasks[3].delta is None
    assert (t.helps, t.hurts, t.ties, t.incomplete, t.complete) == (1, 1, 1, 1, 3)
    assert not t.binary and t.test.method == "exact_sign_test"
    assert t.test.p_value is None and t.test.min_attainable_p == 0.5 and t.hodges_lehmann is None
    d = t.to_dict()
    assert list(d) == ["baseline", "candidate", "tasks", "helps", "hurts", "ties", "incomplete"]
    assert d["tasks"][3] == {
        "task": "d",
        "baseline_reward": 1.0,
        "candidate_reward": None,
        "baseline_n": 1,
        "candidate_n": 0,
        "delta": None,
        "class": "incomplete",
    }


def test_binary_outcomes_use_mcnemar_on_the_discordant_tasks():
    runs = []
    for i in range(7):  # 7 tasks the candidate passes and the baseline fails
        runs += [run(f"h{i}", "base", 0.0), run(f"h{i}", "cand", 1.0)]
    runs += [run("x", "base", 1.0), run("x", "cand", 0.0)]  # one the other way
    runs += [run("y", "base", 1.0), run("y", "cand", 1.0)]  # a tie
    t = outcome_table(runs, "base", "cand")
    assert t.binary and (t.helps, t.hurts, t.ties) == (7, 1, 1)
    assert t.test.method == "exact_mcnemar" and t.test.n_nonzero == 8
    assert t.test.p_value == pytest.approx(sps.binomtest(7, 8, 0.5).pvalue)
    assert t.hodges_lehmann is None


def test_rewards_get_the_sign_test_and_hodges_lehmann_from_six_tasks():
    deltas = [0.5, 0.25, 0.75, -0.25, 0.5, 1.0]
    runs = []
    for i, dl in enumerate(deltas):
        runs += [run(f"t{i}", "b", 0.0 if dl > 0 else 0.5), run(f"t{i}", "c", max(dl, 0.25))]
    t = outcome_table(runs, "b", "c")
    got = [r.delta for r in t.tasks]
    assert not t.binary and t.test.n_nonzero == 6 and t.helps == 5
    assert t.test.p_value == pytest.approx(sps.binomtest(5, 6, 0.5).pvalue)
    walsh = sorted((got[i] + got[j]) / 2 for i in range(6) for j in range(i, 6))
    assert t.hodges_lehmann == pytest.approx((walsh[10] + walsh[11]) / 2)


def test_cost_tokens_duration_and_tool_calls_are_paired_per_task():
    runs = [
        run("a", "b", 1.0, 1, cost_usd=0.2, tokens=100, duration_s=10, tool_calls=4),
        run("a", "b", 1.0, 2, cost_usd=0.4, tokens=300, duration_s=30, tool_calls=6),
        run("a", "c", 1.0, 1, cost_usd=0.1, tokens=50, duration_s=40, tool_calls=5),
        run("b", "b", 0.0, 1, cost_usd=None, tokens=10, duration_s=5, tool_calls=1),
        run("b", "c", 1.0, 1, cost_usd=0.5, tokens=10, duration_s=5, tool_calls=2),
    ]
    t = outcome_table(runs, "b", "c")
    cost, tokens, duration, calls = t.metrics
    assert [(m.task, m.baseline, m.candidate, m.baseline_n, m.delta) for m in cost.tasks] == [
        ("a", pytest.approx(0.3), 0.1, 2, pytest.approx(-0.2)),
        ("b", None, 0.5, 0, None),
    ]
    assert (tokens.lower, tokens.higher, tokens.tied) == (1, 0, 1)
    assert (duration.higher, calls.higher, calls.tied) == (1, 1, 1)  # calls: 5 vs 5, 1 vs 2
    assert calls.test.p_value is None and calls.test.min_attainable_p == 1.0  # one non-tied task
    frame = t.metrics_frame()
    assert list(frame["metric"].unique()) == ["cost_usd", "tokens", "duration_s", "tool_calls"]
    s = t.summary_frame()
    assert list(s["figure"]) == ["reward", "cost_usd", "tokens", "duration_s", "tool_calls"]


def test_passed_is_the_outcome_when_no_reward_is_known():
    runs = [
        {"task": "a", "arm": "b", "passed": False},
        {"task": "a", "arm": "c", "passed": True},
        {"task": "b", "arm": "b", "reward": None, "passed": None},
        {"task": "b", "arm": "c", "reward": 0.5},
    ]
    t = outcome_table(runs, "b", "c")
    assert [(r.task, r.cls) for r in t.tasks] == [("a", "helps"), ("b", "incomplete")]
    assert t.binary


def test_the_outcome_deltas_figure_data():
    from evalkit.outputs.figures import outcome_deltas_data, outcome_deltas_figure

    runs = [run("a", "b", 0.0), run("a", "c", 1.0), run("b", "b", 1.0), run("b", "c", 0.5)]
    runs += [run("z", "b", 1.0)]
    data = outcome_deltas_data(outcome_table(runs, "b", "c"))
    assert list(data["task"]) == ["a", "b", "z"] and list(data["class"]) == [
        "helps",
        "hurts",
        "incomplete",
    ]
    assert list(data["shown"]) == [1.0, -0.5, 0.0]
    assert len(outcome_deltas_figure(data, "t").axes[0].patches) == 3
