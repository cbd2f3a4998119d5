"""Small-n statistics (evalkit/stats.py): Hodges–Lehmann by hand, p-values against scipy."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from evalkit.stats import (
    MIN_NONZERO_FOR_TEST,
    bootstrap_interval,
    describe,
    hodges_lehmann,
    min_attainable_p,
    nearest_rank,
    paired_deltas,
    sign_flip_test,
)


@pytest.mark.parametrize(
    ("deltas", "expected"),
    [
        # Walsh averages listed by hand, i <= j, then the median.
        ([1, 2, 3], 2.0),  # 1, 1.5, 2, 2, 2.5, 3 -> (2 + 2) / 2
        ([0, -3, 0], -0.75),  # -3, -1.5, -1.5, 0, 0, 0 -> (-1.5 + 0) / 2
        ([1, 5], 3.0),  # 1, 3, 5
        ([-2, 4, 10, 1], 3.25),  # -2, -0.5, 1, 1, 2.5, 4, 4, 5.5, 7, 10 -> (2.5 + 4) / 2
        ([7], 7.0),
        ([], None),
    ],
)
def test_hodges_lehmann_by_hand(deltas, expected):
    assert hodges_lehmann(deltas) == expected


def _scipy_sign_flip(deltas):
    x = np.asarray([d for d in deltas if d != 0], dtype=float)
    result = sps.permutation_test(
        (x,),
        lambda s, axis: np.sum(s, axis=axis),
        permutation_type="samples",
        n_resamples=np.inf,
        alternative="two-sided",
    )
    return result.pvalue


@pytest.mark.parametrize("seed", range(8))
def test_sign_flip_p_values_equal_scipy(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(6, 13))
    deltas = rng.integers(-20, 21, size=n).tolist()
    deltas += [0] * int(rng.integers(0, 3))  # zeros carry no sign and are dropped
    if sum(1 for d in deltas if d != 0) < MIN_NONZERO_FOR_TEST:
        deltas += [3] * MIN_NONZERO_FOR_TEST
    test = sign_flip_test(deltas)
    assert test.p_value is not None
    assert test.p_value == pytest.approx(_scipy_sign_flip(deltas), rel=1e-12, abs=0)


def test_sign_flip_float_deltas_equal_scipy():
    deltas = [0.5, -1.25, 2.0, 3.75, -0.5, 1.0, 0.25]
    assert sign_flip_test(deltas).p_value == pytest.approx(_scipy_sign_flip(deltas), rel=1e-12)


def test_all_same_sign_reaches_the_minimum():
    test = sign_flip_test([1, 2, 3, 4, 5, 6])
    assert test.p_value == min_attainable_p(6) == 2 / 64
    assert test.p_value == pytest.approx(_scipy_sign_flip([1, 2, 3, 4, 5, 6]))


@pytest.mark.parametrize("n_nonzero", range(0, MIN_NONZERO_FOR_TEST))
def test_no_p_value_below_six_nonzero_pairs(n_nonzero):
    deltas = [-(i + 1) for i in range(n_nonzero)] + [0, 0, 0]
    summary = paired_deltas([0] * len(deltas), deltas)
    assert summary.p_value is None
    assert summary.test.reason == "fewer than 6 non-zero pairs"
    assert summary.min_attainable_p == min(1.0, 2 / 2**n_nonzero)
    assert summary.to_frame()["p_value"].isna().all()
    assert summary.to_frame()["min_attainable_p"].iloc[0] == summary.min_attainable_p


def test_five_pairs_cannot_go_below_0_0625():
    assert min_attainable_p(5) == 0.0625
    assert min_attainable_p(0) == 1.0


def test_paired_deltas_counts_and_unknowns():
    base = [9, 13, 9, 6, None, 10, float("nan"), pd.NA]
    cand = [9, 10, 9, 8, 5, 8, 1, 2]
    s = paired_deltas(base, cand)
    assert s.deltas == (0, -3, 0, 2, -2)
    assert (s.n, s.unknown) == (5, 3)
    assert (s.min, s.max) == (-3, 2)
    assert (s.k_lower, s.k_higher, s.k_tied) == (2, 1, 2)
    assert (s.improved, s.regressed) == (2, 1)
    up = paired_deltas(base, cand, direction="higher_is_better")
    assert (up.improved, up.regressed) == (1, 2)
    none = paired_deltas(base, cand, direction="none")
    assert (none.improved, none.regressed) == (None, None)
    with pytest.raises(ValueError):
        paired_deltas([1], [1, 2])
    with pytest.raises(ValueError):
        paired_deltas([1], [2], direction="better")


def test_interval_names_method_level_unit_seed_and_is_deterministic():
    deltas = [3, -1, 4, 1, 5, -9, 2, 6]
    a = bootstrap_interval(deltas, seed=7, n_resamples=2000)
    b = bootstrap_interval(deltas, seed=7, n_resamples=2000)
    c = bootstrap_interval(deltas, seed=8, n_resamples=2000)
    assert a == b
    assert (a.lo, a.hi) != (c.lo, c.hi)
    assert (a.method, a.level, a.unit, a.seed, a.estimate) == (
        "percentile_bootstrap",
        0.95,
        "pair",
        7,
        "hodges_lehmann",
    )
    assert a.lo <= hodges_lehmann(deltas) <= a.hi
    assert bootstrap_interval([4], seed=0).lo is None


def test_to_frame_columns_and_raw_values():
    s = paired_deltas([10, 20, 30, 40, 50, 60, 70], [11, 18, 35, 41, 49, 66, 72], seed=3)
    frame = s.to_frame()
    assert len(frame) == 1
    for column in (
        "ci95_lo",
        "ci95_hi",
        "ci_method",
        "ci_unit",
        "ci_seed",
        "p_value",
        "hodges_lehmann",
    ):
        assert column in frame.columns
    assert frame["ci_seed"].iloc[0] == 3
    # Never rounded: the frame carries the exact computed values.
    assert frame["p_value"].iloc[0] == s.p_value
    assert frame["hodges_lehmann"].iloc[0] == hodges_lehmann(s.deltas)
    assert s.deltas_frame()["delta"].tolist() == [1, -2, 5, 1, -1, 6, 2]
    assert s.p_value == pytest.approx(_scipy_sign_flip(s.deltas), rel=1e-12)


def test_describe_and_nearest_rank_ignore_unknowns():
    assert nearest_rank([None, 5, float("nan"), 1], 50) == 1
    d = describe([2, None, pd.NA, 4])
    assert (d.total, d.observed_total, d.samples, d.missing) == (None, 6, 2, 2)
    assert list(d.to_frame().columns) == [
        "total",
        "observed_total",
        "p50",
        "p95",
        "samples",
        "missing",
    ]
    with pytest.raises(ValueError):
        nearest_rank([1], 0)
    assert not math.isnan(describe([1, 2]).total)


def test_docstring_examples_run():
    import doctest

    import evalkit.stats

    assert doctest.testmod(evalkit.stats).failed == 0


def test_no_interval_below_the_small_n_threshold_and_the_unit_is_named():
    small = paired_deltas([1, 2, 3], [4, 6, 9], seed=0)
    assert (small.interval.lo, small.interval.hi) == (None, None)
    assert small.interval.note == "fewer than 6 pairs"
    big = paired_deltas(
        list(range(8)),
        [x + d for x, d in zip(range(8), [1, 2, -1, 3, 2, 4, 1, 5], strict=True)],
        seed=0,
        unit="pass/repo cell",
    )
    assert big.interval.lo is not None and big.to_frame()["ci_unit"].iloc[0] == "pass/repo cell"
