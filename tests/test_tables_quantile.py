"""The one quantile rule (evalkit/sweep/quantile.py, spec §8.1, Decision 2)."""

from __future__ import annotations

import math
import random
import struct

import numpy as np
import pytest

from evalkit.tables.quantile import QUANTILE_METHOD, median, quantile


def test_median_is_mean_of_two_middle_values_for_even_n():
    assert median([4, 1, 3, 2]) == (2 + 3) / 2
    assert median([5, 1, 3]) == 3
    assert median([]) is None
    assert quantile([], 0.25) is None


def test_median_uses_the_reference_form_where_numpy_differs_in_the_last_bit():
    a, b = 0.2453427065026362, 0.8913561525129983
    numpy_median = float(np.quantile([a, b], 0.5, method="linear"))
    assert numpy_median != (a + b) / 2  # numpy computes b − (b − a)·0.5 here
    assert median([b, a]) == (a + b) / 2 == 0.5683494295078172
    assert quantile([a, b], 0.5) == (a + b) / 2


@pytest.mark.parametrize("q", [0.0, 0.1, 0.25, 0.75, 0.9, 1.0])
def test_other_quantiles_match_numpy_linear(q):
    rng = random.Random(11)
    for n in range(1, 40):
        v = [rng.random() for _ in range(n)]
        assert quantile(v, q) == float(np.quantile(v, q, method="linear"))


def test_linear_interpolation_by_hand():
    # h = (n − 1)·q = 4·0.25 = 1 → v[1]; q = 0.75 on 4 values: h = 2.25 → v[2] + 0.25·(v[3] − v[2])
    assert quantile([10, 20, 30, 40, 50], 0.25) == 20
    assert quantile([10, 20, 30, 40], 0.75) == 32.5


def test_bad_probability_is_rejected_and_method_is_named():
    with pytest.raises(ValueError):
        quantile([1.0], 1.5)
    assert "linear" in QUANTILE_METHOD


def _bits(x: float) -> bytes:
    return struct.pack("<d", x)


def _values(rng: random.Random, n: int) -> list[float]:
    """Random values of several shapes: uniform, ties, wide magnitudes, signs, integers."""
    kind = rng.randrange(5)
    if kind == 0:
        return [rng.random() for _ in range(n)]
    if kind == 1:  # many ties
        pool = [rng.random() for _ in range(3)]
        return [rng.choice(pool) for _ in range(n)]
    if kind == 2:  # magnitudes from 1e-300 to 1e300, both signs
        return [rng.choice((-1, 1)) * 10 ** rng.uniform(-300, 300) for _ in range(n)]
    if kind == 3:  # integers, some past 2**53
        return [rng.randrange(-(2**60), 2**60) for _ in range(n)]
    return [rng.gauss(0, 1) for _ in range(n)]


def test_pure_python_linear_equals_numpy_to_the_bit_on_random_inputs():
    rng = random.Random(20261201)
    checked = 0
    for _ in range(4000):
        n = rng.randrange(1, 60)
        v = _values(rng, n)
        q = rng.choice((0.0, 0.25, 0.75, 1.0, 1 / 3, rng.random(), rng.random()))
        if q == 0.5:
            continue  # the median has its own (reference) form
        want = float(np.quantile(np.asarray(sorted(v), dtype=float), q, method="linear"))
        got = quantile(v, q)
        assert _bits(got) == _bits(want), (v, q, got, want)
        checked += 1
    assert checked > 3900


@pytest.mark.parametrize(
    "v",
    [
        [1.0, float("nan"), 2.0],
        [float("inf"), 1.0],
        [float("-inf"), float("inf")],
        [float("inf"), float("inf"), 3.0],
        [-0.0, 0.0],
        [0.0, -0.0, -0.0],
        [5.0],
    ],
)
@pytest.mark.parametrize("q", [0.0, 0.25, 0.3, 0.75, 1.0])
def test_pure_python_linear_equals_numpy_on_special_values(v, q):
    with np.errstate(invalid="ignore"):
        want = float(np.quantile(np.asarray(sorted(v), dtype=float), q, method="linear"))
    got = quantile(v, q)
    assert _bits(got) == _bits(want) or (math.isnan(got) and math.isnan(want))
