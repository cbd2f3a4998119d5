"""Small-n statistics shared by the arm tables and the per-pair tables.

Everything here is descriptive first. With a handful of pairs, the honest summary is every
delta, their range and how many went each way; an estimate (Hodges–Lehmann) and an exact test
are added only where they can say something, and every interval names its method, level,
resampling unit and seed. Nothing is rounded inside a computation: rounding is presentation only.

Functions return small frozen dataclasses with `to_frame()` (a one-row or tidy pandas DataFrame,
fixed column order, `ci95_lo`/`ci95_hi`-style names):

* `nearest_rank(values, percent)` — the percentile rule of paired evidence: nearest rank,
  integer arithmetic, `rank = max(1, ceil(percent * n / 100))` (paired-evidence spec §7.4).
  (Sweep and arm tables use linear interpolation instead: `evalkit.tables.quantile`, Decision 2.)
* `describe(values)` → `Distribution`: total (None when anything is missing), observed total,
  nearest-rank p50/p95, observed and missing counts. Unknown values (None/NaN) are counted as
  missing, never as zero.
* `paired_deltas(baseline, candidate, ...)` → `PairedDeltas`: every delta (candidate minus
  baseline), range, k lower/higher/tied and improved/regressed under a direction, the
  Hodges–Lehmann estimate, an exact sign-flip permutation test only when at least
  `MIN_NONZERO_FOR_TEST` (6) non-zero pairs exist — otherwise `p_value` is None and the minimum
  attainable p is stated — and a seeded bootstrap interval for the Hodges–Lehmann estimate.
* `sign_flip_test(deltas)` → `ExactTest`; `hodges_lehmann(deltas)`; `bootstrap_interval(...)`
  → `Interval`.
* `sign_test(deltas)` and `mcnemar_exact(b, c)` → `ExactTest`: the exact binomial tests of the
  per-task outcome table (`evalkit.tables.outcomes`), equal to scipy's `binomtest` with p = 1/2;
  withheld below `MIN_NONZERO_FOR_TEST` non-tied tasks or discordant pairs.

The paired-evidence report never calls the tests or intervals (paired-evidence spec §1.2): it
uses only `nearest_rank` and `describe`.

Example:
    >>> from evalkit.stats import paired_deltas
    >>> d = paired_deltas([9, 13, 9], [9, 10, 9])
    >>> d.deltas, d.k_lower, d.k_tied, d.p_value, d.min_attainable_p
    ((0, -3, 0), 1, 2, None, 1.0)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

__all__ = [
    "DIRECTIONS",
    "MIN_NONZERO_FOR_TEST",
    "Distribution",
    "ExactTest",
    "Interval",
    "PairedDeltas",
    "bootstrap_interval",
    "describe",
    "hodges_lehmann",
    "mcnemar_exact",
    "min_attainable_p",
    "nearest_rank",
    "paired_deltas",
    "binomial_two_sided",
    "sign_flip_test",
    "sign_test",
]

MIN_NONZERO_FOR_TEST = 6
DIRECTIONS = ("lower_is_better", "higher_is_better", "none")
# Exact enumeration of 2^n sign patterns; beyond this a test would need Monte Carlo, which this
# module does not pretend is exact.
MAX_EXACT_N = 24


def _is_missing(value: Any) -> bool:
    if value is None:
        return True
    try:
        import pandas as pd

        if value is pd.NA:
            return True
    except ImportError:  # pragma: no cover - pandas is a dependency
        pass
    return isinstance(value, float) and math.isnan(value)


def nearest_rank(values: Sequence[Any], percent: int) -> Any:
    """The nearest-rank percentile of the known `values`, or None when there are none.

    Sort ascending, take the value at 1-based rank `max(1, ceil(percent * n / 100))`, computed
    with integers so no floating point enters (spec §7.4): p50 of `[4, 1, 3, 2]` is 2 (the lower
    median), p95 of 19 or 20 values is the 19th.
    """
    if not isinstance(percent, int) or not 0 < percent <= 100:
        raise ValueError("percent must be an integer in 1..100")
    observed = sorted(v for v in values if not _is_missing(v))
    if not observed:
        return None
    rank = max(1, (percent * len(observed) + 99) // 100)
    return observed[rank - 1]


@dataclass(frozen=True)
class Distribution:
    """A descriptive summary with its missing count (spec §7.4). Not a confidence interval."""

    total: Any  # None when any value is missing: a partial sum is not a total
    observed_total: Any
    p50: Any
    p95: Any
    samples: int
    missing: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "total": self.total,
            "observed_total": self.observed_total,
            "p50": self.p50,
            "p95": self.p95,
            "samples": self.samples,
            "missing": self.missing,
        }

    def to_frame(self):
        import pandas as pd

        return pd.DataFrame([self.to_dict()], columns=list(self.to_dict()))


def describe(values: Sequence[Any]) -> Distribution:
    """Describe `values`, where None (or NaN/NA) is unknown and counted in `missing`."""
    observed = [v for v in values if not _is_missing(v)]
    missing = len(values) - len(observed)
    observed_total = sum(observed) if observed else 0
    return Distribution(
        total=observed_total if missing == 0 else None,
        observed_total=observed_total,
        p50=nearest_rank(observed, 50),
        p95=nearest_rank(observed, 95),
        samples=len(observed),
        missing=missing,
    )


def hodges_lehmann(deltas: Sequence[float]) -> float | None:
    """The one-sample Hodges–Lehmann estimate: the median of the Walsh averages.

    Walsh averages are `(d_i + d_j) / 2` for every `i <= j` (each delta with itself included).
    The median of an even count is the mean of the two middle values. None for no deltas.
    """
    from evalkit.tables.quantile import median

    d = list(deltas)
    if not d:
        return None
    return median((d[i] + d[j]) / 2 for i in range(len(d)) for j in range(i, len(d)))


def min_attainable_p(n_nonzero: int) -> float:
    """The smallest two-sided p an exact sign-flip test can reach with `n_nonzero` pairs.

    All deltas of one sign give the most extreme of 2^n equally likely sign patterns, on each
    side: `2 / 2^n`, capped at 1. Five pairs cannot go below 0.0625.
    """
    return min(1.0, 2.0 / 2**n_nonzero)


@dataclass(frozen=True)
class ExactTest:
    """An exact two-sided test result; `p_value` is None when the test was not run."""

    method: str
    statistic: str
    n_nonzero: int
    p_value: float | None
    min_attainable_p: float
    reason: str | None  # why `p_value` is None

    def to_frame(self):
        import pandas as pd

        return pd.DataFrame([vars(self)], columns=list(vars(self)))


def sign_flip_test(
    deltas: Sequence[float], *, min_nonzero: int = MIN_NONZERO_FOR_TEST
) -> ExactTest:
    """Exact sign-flip permutation test of the sum of paired deltas, two-sided.

    Zero deltas carry no sign and are dropped. Under the null each non-zero delta is equally
    likely positive or negative; the p-value is the share of the 2^n sign patterns whose
    |sum| reaches the observed |sum| (equal to scipy's `permutation_test` with
    `permutation_type="samples"`, exact). With fewer than `min_nonzero` non-zero deltas no
    p-value is reported, only the minimum attainable one.
    """
    nonzero = [d for d in deltas if d != 0]
    n = len(nonzero)
    floor = min_attainable_p(n)
    method = "exact_sign_flip_permutation"
    if n < min_nonzero:
        return ExactTest(method, "sum", n, None, floor, f"fewer than {min_nonzero} non-zero pairs")
    if n > MAX_EXACT_N:
        return ExactTest(method, "sum", n, None, floor, f"more than {MAX_EXACT_N} non-zero pairs")
    hits = _count_extreme_sign_patterns([abs(d) for d in nonzero], abs(sum(nonzero)))
    return ExactTest(method, "sum", n, float(Fraction(hits, 2**n)), floor, None)


def _count_extreme_sign_patterns(mags: list[float], observed: float) -> int:
    """How many of the 2^n sign patterns give |sum| >= `observed` (exact enumeration)."""
    import numpy as np

    n = len(mags)
    values = np.asarray(mags, dtype=float)
    # A relative tolerance only matters for float deltas; integer sums are exact in float64.
    threshold = observed - abs(observed) * 1e-12
    hits = 0
    chunk = 1 << min(n, 16)
    bits = np.arange(n)
    for start in range(0, 1 << n, chunk):
        patterns = np.arange(start, start + chunk)[:, None]
        signs = 1 - 2 * ((patterns >> bits) & 1)
        hits += int(np.count_nonzero(np.abs(signs @ values) >= threshold))
    return hits


@dataclass(frozen=True)
class Interval:
    """An interval that says how it was made: method, level, resampling unit, seed."""

    estimate: str
    method: str
    level: float
    unit: str
    seed: int | None
    n_resamples: int | None
    lo: float | None
    hi: float | None
    note: str | None = None  # why there are no bounds, when there are none

    def to_frame(self):
        import pandas as pd

        return pd.DataFrame([vars(self)], columns=list(vars(self)))


def bootstrap_interval(
    deltas: Sequence[float],
    *,
    seed: int,
    level: float = 0.95,
    n_resamples: int = 9999,
    unit: str = "pair",
) -> Interval:
    """Percentile bootstrap interval of the Hodges–Lehmann estimate, resampling whole pairs.

    Deterministic for a given `seed` (numpy `default_rng(seed)`). With fewer than two deltas the
    bounds are None: one pair resamples to itself.
    """
    import numpy as np

    d = np.asarray(list(deltas), dtype=float)
    base = dict(
        estimate="hodges_lehmann",
        method="percentile_bootstrap",
        level=level,
        unit=unit,
        seed=seed,
        n_resamples=n_resamples,
    )
    if len(d) < 2:
        return Interval(**base, lo=None, hi=None, note="fewer than 2 pairs")
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(d), size=(n_resamples, len(d)))
    samples = d[idx]
    i, j = np.triu_indices(len(d))
    walsh = (samples[:, i] + samples[:, j]) / 2
    estimates = np.median(walsh, axis=1)
    alpha = (1 - level) / 2
    lo, hi = np.quantile(estimates, [alpha, 1 - alpha])
    return Interval(**base, lo=float(lo), hi=float(hi))


@dataclass(frozen=True)
class PairedDeltas:
    """Small-n summary of paired deltas (candidate minus baseline)."""

    deltas: tuple[Any, ...]  # every known delta, in input order
    n: int
    unknown: int
    min: Any
    max: Any
    k_lower: int
    k_higher: int
    k_tied: int
    direction: str
    improved: int | None
    regressed: int | None
    hodges_lehmann: float | None
    test: ExactTest
    interval: Interval

    @property
    def p_value(self) -> float | None:
        return self.test.p_value

    @property
    def min_attainable_p(self) -> float:
        return self.test.min_attainable_p

    def to_frame(self):
        """One row: counts, range, estimate, test and interval (`ci95_lo`, `ci95_hi`)."""
        import pandas as pd

        pct = round(self.interval.level * 100)
        row = {
            "n": self.n,
            "unknown": self.unknown,
            "min": self.min,
            "max": self.max,
            "k_lower": self.k_lower,
            "k_higher": self.k_higher,
            "k_tied": self.k_tied,
            "direction": self.direction,
            "improved": self.improved,
            "regressed": self.regressed,
            "hodges_lehmann": self.hodges_lehmann,
            "test_method": self.test.method,
            "n_nonzero": self.test.n_nonzero,
            "p_value": self.test.p_value,
            "min_attainable_p": self.test.min_attainable_p,
            "p_value_note": self.test.reason,
            f"ci{pct}_lo": self.interval.lo,
            f"ci{pct}_hi": self.interval.hi,
            "ci_method": self.interval.method,
            "ci_unit": self.interval.unit,
            "ci_seed": self.interval.seed,
            "ci_resamples": self.interval.n_resamples,
            "ci_note": self.interval.note,
        }
        return pd.DataFrame([row], columns=list(row))

    def deltas_frame(self):
        """Tidy: one row per known delta, in input order."""
        import pandas as pd

        return pd.DataFrame({"order": range(len(self.deltas)), "delta": list(self.deltas)})


def paired_deltas(
    baseline: Sequence[Any],
    candidate: Sequence[Any],
    *,
    direction: str = "lower_is_better",
    seed: int = 0,
    level: float = 0.95,
    n_resamples: int = 9999,
    min_nonzero: int = MIN_NONZERO_FOR_TEST,
    unit: str = "pair",
) -> PairedDeltas:
    """Summarize `candidate - baseline` over pairs; a None on either side is unknown.

    Args:
        baseline, candidate: Values per pair, aligned by position.
        direction: `lower_is_better`, `higher_is_better` or `none` (no improved/regressed).
        seed: Seed of the bootstrap interval.
        level: Interval level.
        n_resamples: Bootstrap resamples.
        min_nonzero: Non-zero pairs needed before a p-value is reported; below as many known
            pairs no interval is computed either (a bootstrap of three pairs only restates
            their range).
        unit: What one resampled value is (`pair`, or e.g. `pass/repo cell`), named with the
            interval.
    """
    if len(baseline) != len(candidate):
        raise ValueError("baseline and candidate must have one value per pair")
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {', '.join(DIRECTIONS)}")
    deltas = tuple(
        c - b
        for b, c in zip(baseline, candidate, strict=True)
        if not _is_missing(b) and not _is_missing(c)
    )
    lower = sum(1 for d in deltas if d < 0)
    higher = sum(1 for d in deltas if d > 0)
    improved = regressed = None
    if direction == "lower_is_better":
        improved, regressed = lower, higher
    elif direction == "higher_is_better":
        improved, regressed = higher, lower
    return PairedDeltas(
        deltas=deltas,
        n=len(deltas),
        unknown=len(baseline) - len(deltas),
        min=min(deltas) if deltas else None,
        max=max(deltas) if deltas else None,
        k_lower=lower,
        k_higher=higher,
        k_tied=len(deltas) - lower - higher,
        direction=direction,
        improved=improved,
        regressed=regressed,
        hodges_lehmann=hodges_lehmann(deltas),
        test=sign_flip_test(deltas, min_nonzero=min_nonzero),
        interval=(
            bootstrap_interval(deltas, seed=seed, level=level, n_resamples=n_resamples, unit=unit)
            if len(deltas) >= min_nonzero
            else Interval(
                "hodges_lehmann",
                "percentile_bootstrap",
                level,
                unit,
                seed,
                n_resamples,
                None,
                None,
                note=f"fewer than {min_nonzero} pairs",
            )
        ),
    )


def binomial_two_sided(k: int, n: int) -> float:
    """Exact two-sided binomial p of `k` successes in `n` trials with p = 1/2.

    The distribution is symmetric, so this is `2 * P(X <= min(k, n - k))`, capped at 1 — what
    scipy's `binomtest(k, n, 0.5).pvalue` gives. Computed with integers, no rounding inside.
    """
    if n < 0 or not 0 <= k <= n:
        raise ValueError("need 0 <= k <= n")
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(k, n - k) + 1))
    return float(min(Fraction(1), Fraction(2 * tail, 2**n)))


def sign_test(deltas: Sequence[float], *, min_nonzero: int = MIN_NONZERO_FOR_TEST) -> ExactTest:
    """Exact two-sided sign test of paired deltas: ties dropped, the positives ~ Binomial(n, 1/2).

    With fewer than `min_nonzero` non-zero deltas no p-value is reported, only the minimum
    attainable one (all deltas one way: `2 / 2^n`).
    """
    nonzero = [d for d in deltas if d != 0]
    n = len(nonzero)
    floor = min_attainable_p(n)
    if n < min_nonzero:
        return ExactTest("exact_sign_test", "positives", n, None, floor, _few(min_nonzero))
    k = sum(1 for d in nonzero if d > 0)
    return ExactTest("exact_sign_test", "positives", n, binomial_two_sided(k, n), floor, None)


def mcnemar_exact(b: int, c: int, *, min_discordant: int = MIN_NONZERO_FOR_TEST) -> ExactTest:
    """Exact McNemar test of paired binary outcomes: `b` pairs pass only in the first arm, `c`
    only in the second; under the null `c ~ Binomial(b + c, 1/2)` (two-sided).

    Withheld (p None, the minimum attainable p stated) below `min_discordant` discordant pairs.
    """
    n = b + c
    floor = min_attainable_p(n)
    if n < min_discordant:
        return ExactTest("exact_mcnemar", "discordant", n, None, floor, _few(min_discordant))
    return ExactTest("exact_mcnemar", "discordant", n, binomial_two_sided(c, n), floor, None)


def _few(k: int) -> str:
    return f"fewer than {k} non-tied pairs"
