"""The one quantile rule of evalkit's sweep tables (spec §8.1, Decision 2).

Every median, p25 and p75 in a sweep or arm table comes from `quantile` here, and every table
prints `QUANTILE_METHOD` underneath, so the method is stated wherever a quantile is shown.

The 'linear' method is computed here in plain Python, step for step as numpy computes it (so a
sweep need not import numpy, about a tenth of a second per command); `tests/test_tables_quantile.py`
checks it equals `numpy.quantile(..., method="linear")` to the bit on many random inputs.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

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

    `q = 0.5` is `median` (the reference's form); other q use numpy's 'linear' method
    (`numpy.quantile(values, q, method="linear")`, reproduced by `_linear`). None for no
    values.
    """
    v = sorted(values)
    if not v:
        return None
    if not 0 <= q <= 1:
        raise ValueError(f"quantile probability must be within [0, 1], got {q}")
    if q == 0.5:
        return median(v)
    return _linear([float(x) for x in v], float(q))


def _linear(v: list[float], q: float) -> float:
    """numpy's 'linear' quantile of the sorted floats `v`, with numpy's float operations.

    As `numpy.lib._function_base_impl._quantile` and `_lerp` do it: the virtual index
    `(n - 1)·q`; its floor and the next index, both the last when the virtual index reaches
    `n - 1`; `gamma` = virtual index − previous index (−1 for the last); then
    `a + (b − a)·gamma`, or `b − (b − a)·(1 − gamma)` when `gamma ≥ 0.5`. A NaN anywhere
    makes the result NaN (numpy sorts NaN last and returns it).
    """
    if any(math.isnan(x) for x in v):
        return math.nan
    n = len(v)
    virtual = (n - 1) * q
    if virtual >= n - 1:
        prev = nxt = -1
    else:
        prev = math.floor(virtual)
        nxt = prev + 1
    a, b = v[prev], v[nxt]
    gamma = virtual - prev
    diff = b - a
    if gamma >= 0.5:
        return b - diff * (1 - gamma)
    return a + diff * gamma
