"""The figures of notebook 08 (`evalkit.outputs.stats_figures`): each data function checked
against the statistics it draws, and the within-task interval by enumeration."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalkit.outputs import stats_figures as sf
from evalkit.tables.ab_stats import compare_arms
from evalkit.tables.paired_stats import TaskValues, within_task_interval


def frame():
    # Four tasks, pass/fail trials: b on t0, t1 improves, t2 worsens, t3 both always pass.
    trials = {
        "t0": ([0, 0, 1], [1, 1, 1]),
        "t1": ([0, 1], [1, 1]),
        "t2": ([1, 1], [0, 1]),
        "t3": ([1], [1]),
    }
    return pd.DataFrame(
        [
            {"task": task, "arm": arm, "passed": float(v)}
            for task, (b, c) in trials.items()
            for arm, values in (("a", b), ("b", c))
            for v in values
        ]
    )


def test_within_task_interval_by_enumeration():
    # Baseline trials {0, 1} resampled: mean 0, 1/2, 1 with 1/4, 1/2, 1/4; candidate fixed at 1.
    lo, hi = within_task_interval(TaskValues("t", (), (0.0, 1.0), (1.0,)), seed=0,
                                  n_resamples=20000)  # fmt: skip
    assert (lo, hi) == (0.0, 1.0)
    lo, hi = within_task_interval(TaskValues("t", (), (0.0, 1.0), (1.0,)), seed=0,
                                  n_resamples=20000, level=0.4)  # fmt: skip
    assert (lo, hi) == (0.5, 0.5)  # the middle 40% of that law is its atom at 1/2
    assert within_task_interval(TaskValues("t", (), (0.0,), (1.0,)), seed=0) == (None, None)


def test_task_deltas_data_is_the_comparisons_numbers():
    s = compare_arms(frame(), "a", "b", seed=4)
    data = sf.task_deltas_data(s, "passed")
    assert data["task"].tolist() == ["t0", "t1", "t3", "t2", "mean over tasks"]
    assert data["delta"].tolist()[:4] == pytest.approx([2 / 3, 0.5, 0.0, -0.5])
    b = s.figure("passed").bootstrap
    assert data.iloc[-1][["delta", "lo", "hi"]].tolist() == [b.estimate, b.lo, b.hi]
    t3 = data[data.task == "t3"].iloc[0]
    assert pd.isna(t3["lo"])  # one trial per arm: no interval of its own
    sf.task_deltas_figure(data, "t", "x")


def test_posterior_data_integrates_to_the_probability():
    s = compare_arms(frame(), "a", "b")
    data = sf.posterior_data(s, "passed", points=4001)
    p = s.figure("passed").probability
    total = np.trapezoid(data["density"], data["share"])
    above = data[data["share"] >= 0.5]
    assert total == pytest.approx(1.0, abs=1e-4)
    assert np.trapezoid(above["density"], above["share"]) == pytest.approx(p.probability, abs=1e-4)
    sf.posterior_figure(data, "t", p.probability)


def test_pass_k_data_is_the_pass_k_frame():
    s = compare_arms(frame(), "a", "b")
    data = sf.pass_k_data(s)
    wide = s.pass_k_frame()
    assert len(data) == 2 * len(wide)
    got = data[(data.arm == "a") & (data.k == 2) & (data.measure == "pass^k")]["value"].iloc[0]
    assert got == wide[(wide.arm == "a") & (wide.k == 2)]["pass_hat_k"].iloc[0]
    sf.pass_k_figure(data, "t")
    empty = compare_arms(frame().assign(passed=0.5), "a", "b")
    assert sf.pass_k_data(empty).empty
