"""The one quantile rule (evalkit/sweep/quantile.py, spec §8.1, Decision 2)."""

from __future__ import annotations

import random

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
