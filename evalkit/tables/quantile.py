"""The one quantile rule of evalkit's sweep tables (spec §8.1, Decision 2).

Every median, p25 and p75 in a sweep or arm table comes from `quantile` here, and every table
prints `QUANTILE_METHOD` underneath, so the method is stated wherever a quantile is shown.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

__all__ = ["QUANTILE_METHOD", "quantile", "median"]

QUANTILE_METHOD = (
    "quantiles: linear interpolation between order statistics (numpy/pandas 'linear'); "
    "the median of an even count is the mean of the two middle values"
)


def median(values: Iterable[float]) -> float | None:
    """The reference aggregators' median (§8.1): the middle value, or `(a + b) / 2` for even n.

    numpy's 'linear' evaluates the even case as `b − (b − a)·0.5`, which can differ from
    `(a + b) / 2` in the last bit; the reference's form is kept so medians agree to the bit.
    None for no values.
    """
    v = sorted(values)
    n = len(v)
    if n == 0:
        return None
    mid = n // 2
    return v[mid] if n % 2 else (v[mid - 1] + v[mid]) / 2


def quantile(values: Iterable[float], q: float) -> float | None:
    """Quantile `q` of `values` by linear interpolation between order statistics (Decision 2).

    `q = 0.5` is `median` (the reference's form); other q use numpy's 'linear' method. None for
    no values.
    """
    v = sorted(values)
    if not v:
        return None
    if not 0 <= q <= 1:
        raise ValueError(f"quantile probability must be within [0, 1], got {q}")
    if q == 0.5:
        return median(v)
    return float(np.quantile(np.asarray(v, dtype=float), q, method="linear"))
