"""The paired small-n statistics (`evalkit.tables.paired_stats`), each number checked against an
independent computation: scipy for the standard pieces, brute-force enumeration for pass@k,
pass^k and the exact tests, numerical integration for the Beta-binomial probability, and a
cluster-robust standard error computed by hand (and by statsmodels' OLS)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import integrate, stats

from evalkit.tables.paired_stats import (
    adjust_pvalues,
    arm_posterior,
    cluster_robust_interval,
    equivalence,
    exact_paired_test,
    flip_table,
    hierarchical_bootstrap,
    level_name,
    paired_probability,
    pass_at_k,
    pass_hat_k,
    pass_k_curves,
    pass_rate_interval,
    plan,
    sign_test_power,
    task_table,
)


def runs_of(per_task: dict[str, tuple[list, list]], figure="reward", repo=None):
    """Tidy per-trial rows from {task: (baseline values, candidate values)}."""
    rows = []
    for task, (b, c) in per_task.items():
        for arm, values in (("base", b), ("cand", c)):
            for i, v in enumerate(values):
                row = {"task": task, "arm": arm, "trial": f"{task}_{i}", figure: v}
                if repo is not None:
                    row["repo"] = repo[task]
                rows.append(row)
    return rows


PASSES = {
    "a": ([1, 0, 1], [1, 1, 1]),
    "b": ([0, 0, 0], [1, 0, 1]),
    "c": ([1, 1, 1], [1, 1, 0]),
    "d": ([0, 0], [0, 0]),
    "e": ([1], [1, 0, 1, 1]),
}


def test_task_table_summarises_within_task_first():
    rows = runs_of(PASSES) + [{"task": "a", "arm": "base", "reward": None}]  # unknown: left out
    rows += [
        {"task": "z", "arm": "cand", "reward": 1.0},
        {"task": "q", "arm": "other", "reward": 1},
    ]
    t = task_table(rows, "reward", "base", "cand")
    assert [x.task for x in t.tasks] == ["a", "b", "c", "d", "e", "z"]  # "q" is in neither arm
    a = t.tasks[0]
    assert (len(a.baseline), a.baseline_mean, a.candidate_mean) == (3, 2 / 3, 1.0)
    assert a.delta == pytest.approx(1 / 3) and a.cls == "higher"
    assert t.tasks[-1].cls == "incomplete" and len(t.complete) == 5
    assert t.binary and t.tasks[1].passes("candidate") == 2
    df = t.to_frame()
    assert list(df.columns) == [
        "figure", "task", "baseline_n", "baseline_mean", "candidate_n", "candidate_mean",
        "baseline_passes", "candidate_passes", "delta", "class",
    ]  # fmt: skip
    assert df["class"].tolist() == ["higher", "higher", "lower", "tied", "lower", "incomplete"]


def test_task_table_refuses_a_task_in_two_clusters():
    rows = [{"task": "a", "arm": "base", "reward": 1, "repo": "x"}]
    rows += [{"task": "a", "arm": "cand", "reward": 1, "repo": "y"}]
    with pytest.raises(ValueError, match="two repo clusters"):
        task_table(rows, "reward", "base", "cand", clusters=("repo",))


@pytest.mark.parametrize("k,n", [(0, 5), (3, 5), (5, 5), (1, 12), (7, 30)])
def test_pass_rate_intervals_are_wilson_and_clopper_pearson(k, n):
    w = pass_rate_interval(k, n, method="wilson")
    cp = pass_rate_interval(k, n, method="clopper_pearson")
    # Wilson by its formula; Clopper–Pearson by beta quantiles; both also by scipy's binomtest.
    z = stats.norm.ppf(0.975)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    assert (w.lo, w.hi) == pytest.approx((centre - half, centre + half), abs=1e-12)
    lo = 0.0 if k == 0 else stats.beta.ppf(0.025, k, n - k + 1)
    hi = 1.0 if k == n else stats.beta.ppf(0.975, k + 1, n - k)
    assert (cp.lo, cp.hi) == pytest.approx((lo, hi), abs=1e-10)
    ref = stats.binomtest(k, n).proportion_ci(0.95, method="exact")
    assert (cp.lo, cp.hi) == pytest.approx((ref.low, ref.high), abs=1e-10)
    ref = stats.binomtest(k, n).proportion_ci(0.95, method="wilson")
    assert (w.lo, w.hi) == pytest.approx((ref.low, ref.high), abs=1e-10)
    assert list(w.to_frame().columns)[4:6] == ["ci95_lo", "ci95_hi"]


def test_level_names():
    assert (level_name(0.95), level_name(0.9), level_name(0.975)) == ("ci95", "ci90", "ci97_5")


def test_arm_posterior_counts_each_task_once():
    t = task_table(runs_of(PASSES), "reward", "base", "cand")
    post = arm_posterior(t, "baseline")
    shares = [2 / 3, 0, 1, 0, 1]  # c/n per task
    assert (post.a, post.b) == pytest.approx((1 + sum(shares), 1 + sum(1 - s for s in shares)))
    assert post.tasks == 5 and post.mean == pytest.approx(post.a / (post.a + post.b))
    assert post.lo == pytest.approx(stats.beta.ppf(0.025, post.a, post.b))
    # One trial per task: the conjugate Beta-binomial update, Beta(1 + c, 1 + n - c).
    one = task_table(runs_of({"x": ([1], [0]), "y": ([1], [1]), "z": ([0], [1])}), "reward",
                     "base", "cand")  # fmt: skip
    p = arm_posterior(one, "baseline", prior=(2, 3))
    assert (p.a, p.b) == (4, 4)


@pytest.mark.parametrize("higher,lower,prior", [(0, 0, (1, 1)), (5, 1, (1, 1)), (2, 4, (0.5, 0.5)),
                                                 (9, 3, (2, 2))])  # fmt: skip
def test_paired_probability_by_numerical_integration(higher, lower, prior):
    got = paired_probability(higher, lower, 3, prior=prior)
    a, b = prior[0] + higher, prior[1] + lower

    def kernel(x):  # the unnormalised posterior: prior x binomial likelihood
        return x ** (a - 1) * (1 - x) ** (b - 1)

    total = integrate.quad(kernel, 0, 1)[0]
    above = integrate.quad(kernel, 0.5, 1)[0]
    assert got.probability == pytest.approx(above / total, abs=1e-8)
    mean = integrate.quad(lambda x: x * kernel(x), 0, 1)[0] / total
    assert got.to_frame()["share_higher_mean"].iloc[0] == pytest.approx(mean, abs=1e-8)
    below_lo = integrate.quad(kernel, 0, got.lo)[0] / total
    assert below_lo == pytest.approx(0.025, abs=1e-6)
    assert "uniform" in got.assumes if prior == (1, 1) else "uniform" not in got.assumes


def test_no_evidence_either_way_is_one_half():
    assert paired_probability(3, 3).probability == pytest.approx(0.5)


def test_hierarchical_bootstrap_is_reproducible_from_its_seed():
    t = task_table(runs_of(PASSES), "reward", "base", "cand")
    one = hierarchical_bootstrap(t, seed=7, n_resamples=2000)
    again = hierarchical_bootstrap(t, seed=7, n_resamples=2000)
    other = hierarchical_bootstrap(t, seed=8, n_resamples=2000)
    assert (one.lo, one.hi) == (again.lo, again.hi)
    assert (one.lo, one.hi) != (other.lo, other.hi) or one.lo is None
    assert one.estimate == pytest.approx(np.mean([1 / 3, 2 / 3, -1 / 3, 0, -0.25]))
    df = one.to_frame()
    assert df[["method", "unit", "seed", "n_resamples"]].iloc[0].tolist() == [
        "hierarchical_percentile_bootstrap", "task, then trial within task", 7, 2000
    ]  # fmt: skip
    assert {"ci95_lo", "ci95_hi", "assumes"} <= set(df.columns)


def test_hierarchical_bootstrap_against_enumeration():
    # Two tasks, one trial each: a resample is (d1, d1), (d1, d2), (d2, d1) or (d2, d2), each a
    # quarter; the resampled means are d1, the midpoint (half) and d2, so the 2.5% and 97.5%
    # quantiles are d1 and d2, and the share at the midpoint is about a half.
    t = task_table(runs_of({"x": ([0.0], [1.0]), "y": ([0.0], [3.0])}), "reward", "base", "cand")
    got = hierarchical_bootstrap(t, seed=0, n_resamples=4000)
    assert (got.lo, got.hi) == (1.0, 3.0)
    # Within a task: one task resampled to itself, its two baseline trials {0, 1} each drawn
    # with replacement: the baseline mean is 0, 1/2 or 1 with 1/4, 1/2, 1/4; the candidate is
    # fixed at 1, so the delta is 1, 1/2 or 0 for both tasks alike (tasks identical).
    same = {"x": ([0.0, 1.0], [1.0]), "y": ([0.0, 1.0], [1.0])}
    got = hierarchical_bootstrap(task_table(runs_of(same), "reward", "base", "cand"), seed=1,
                                 n_resamples=20000, level=0.5)  # fmt: skip
    # The mean of two independent draws of {1, 1/2, 0} (1/4, 1/2, 1/4): enumerate its law.
    law: dict[float, float] = {}
    for (v1, p1), (v2, p2) in itertools.product([(1, 0.25), (0.5, 0.5), (0, 0.25)], repeat=2):
        law[(v1 + v2) / 2] = law.get((v1 + v2) / 2, 0) + p1 * p2
    values = sorted(law)
    cdf = np.cumsum([law[v] for v in values])
    q25 = values[int(np.searchsorted(cdf, 0.25))]
    q75 = values[int(np.searchsorted(cdf, 0.75))]
    assert (got.lo, got.hi) == pytest.approx((q25, q75), abs=0.13)


def test_hierarchical_bootstrap_with_one_trial_is_the_task_bootstrap():
    rng = np.random.default_rng(3)
    d = rng.normal(0.2, 1.0, size=12)
    per_task = {f"t{i}": ([0.0], [float(x)]) for i, x in enumerate(d)}
    got = hierarchical_bootstrap(task_table(runs_of(per_task), "reward", "base", "cand"),
                                 seed=0, n_resamples=40000)  # fmt: skip
    ref = stats.bootstrap((d,), np.mean, n_resamples=40000, method="percentile",
                          random_state=np.random.default_rng(1)).confidence_interval  # fmt: skip
    spread = d.std(ddof=1) / math.sqrt(len(d))
    assert got.lo == pytest.approx(ref.low, abs=0.05 * spread)
    assert got.hi == pytest.approx(ref.high, abs=0.05 * spread)


def test_hierarchical_bootstrap_needs_two_tasks():
    t = task_table(runs_of({"x": ([0.0, 1.0], [1.0])}), "reward", "base", "cand")
    got = hierarchical_bootstrap(t, seed=0)
    assert got.lo is None and "fewer than 2 tasks" in got.note


CLUSTERED = {
    "t1": ([0.0], [0.5]), "t2": ([0.0], [0.0]), "t3": ([0.0], [1.0]), "t4": ([0.5], [0.0]),
    "t5": ([0.0], [0.25]), "t6": ([1.0], [1.0]),
}  # fmt: skip
REPO = {"t1": "r1", "t2": "r1", "t3": "r2", "t4": "r2", "t5": "r3", "t6": "r3"}


def test_cluster_robust_se_by_hand_and_by_statsmodels():
    t = task_table(runs_of(CLUSTERED, repo=REPO), "reward", "base", "cand", clusters=("repo",))
    got = cluster_robust_interval(t, "repo")
    d = [0.5, 0.0, 1.0, -0.5, 0.25, 0.0]
    mean = sum(d) / 6  # 0.208333…
    e = [x - mean for x in d]
    sums = [e[0] + e[1], e[2] + e[3], e[4] + e[5]]
    var = 3 / 2 * sum(s * s for s in sums) / 36
    assert got.estimate == pytest.approx(mean)
    assert got.se == pytest.approx(math.sqrt(var), rel=1e-12)
    assert (got.df, got.clusters) == (2, 3)
    half = stats.t.ppf(0.975, 2) * math.sqrt(var)
    assert (got.lo, got.hi) == pytest.approx((mean - half, mean + half))
    assert "only 3 repo clusters" in got.note
    import statsmodels.api as sm

    fit = sm.OLS(np.array(d), np.ones((6, 1))).fit(
        cov_type="cluster", cov_kwds={"groups": np.array([0, 0, 1, 1, 2, 2])}, use_t=True
    )
    assert fit.bse[0] == pytest.approx(got.se, rel=1e-10)
    assert tuple(fit.conf_int()[0]) == pytest.approx((got.lo, got.hi), rel=1e-10)


def test_cluster_robust_interval_withheld_with_one_cluster():
    t = task_table(runs_of(CLUSTERED, repo=dict.fromkeys(REPO, "r")), "reward", "base", "cand",
                   clusters=("repo",))  # fmt: skip
    got = cluster_robust_interval(t, "repo")
    assert got.lo is None and got.note == "fewer than 2 repo clusters"


def _brute_pass(outcomes: list[int], k: int) -> tuple[float, float]:
    subsets = list(itertools.combinations(outcomes, k))
    return (
        sum(1 for s in subsets if any(s)) / len(subsets),
        sum(1 for s in subsets if all(s)) / len(subsets),
    )


@pytest.mark.parametrize("n", range(1, 7))
def test_pass_at_k_and_pass_hat_k_by_enumeration(n):
    for c in range(n + 1):
        outcomes = [1] * c + [0] * (n - c)
        for k in range(1, n + 1):
            at, hat = _brute_pass(outcomes, k)
            assert pass_at_k(n, c, k) == pytest.approx(at, abs=1e-12)
            assert pass_hat_k(n, c, k) == pytest.approx(hat, abs=1e-12)


def test_pass_k_curves_average_over_tasks_with_enough_trials():
    curves = pass_k_curves(task_table(runs_of(PASSES), "reward", "base", "cand"))
    df = curves.to_frame()
    assert list(df.columns) == ["arm", "k", "tasks", "pass_at_k", "pass_hat_k"]
    base = df[df.arm == "base"].set_index("k")
    assert base.index.tolist() == [1, 2, 3]  # the largest baseline n is 3
    for k in (1, 2, 3):
        tasks = [b for b, _ in PASSES.values() if len(b) >= k]
        brute = [_brute_pass(b, k) for b in tasks]
        assert base.loc[k, "tasks"] == len(tasks)
        assert base.loc[k, "pass_at_k"] == pytest.approx(np.mean([x[0] for x in brute]))
        assert base.loc[k, "pass_hat_k"] == pytest.approx(np.mean([x[1] for x in brute]))
    cand = df[df.arm == "cand"]
    assert cand.k.max() == 4 and cand[cand.k == 4].tasks.iloc[0] == 1
    with pytest.raises(ValueError, match="not a pass figure"):
        pass_k_curves(task_table(runs_of(CLUSTERED), "reward", "base", "cand"))


def test_equivalence_by_hand_from_scipy_t():
    per_task = {f"t{i}": ([0.5], [0.5 + x]) for i, x in enumerate([0.02, -0.01, 0.03, 0.0, 0.01])}
    t = task_table(runs_of(per_task), "reward", "base", "cand")
    got = equivalence(t, 0.05)
    d = np.array([0.02, -0.01, 0.03, 0.0, 0.01])
    se = d.std(ddof=1) / math.sqrt(5)
    p_lo = stats.t.sf((d.mean() + 0.05) / se, 4)
    p_hi = stats.t.cdf((d.mean() - 0.05) / se, 4)
    assert got.p_lower == pytest.approx(p_lo, rel=1e-9)
    assert got.p_upper == pytest.approx(p_hi, rel=1e-9)
    assert got.p_equivalence == pytest.approx(max(p_lo, p_hi), rel=1e-9)
    assert got.p_noninferiority == pytest.approx(p_lo, rel=1e-9)
    half = stats.t.ppf(0.95, 4) * se
    assert (got.lo, got.hi) == pytest.approx((d.mean() - half, d.mean() + half))
    assert got.equivalent == bool(max(p_lo, p_hi) < 0.05)
    assert "ci90_lo" in got.to_frame().columns  # TOST inverts the 90% interval
    cheap = equivalence(t, 0.05, direction="lower_is_better")
    assert cheap.p_noninferiority == pytest.approx(p_hi, rel=1e-9)


def test_equivalence_withheld_without_spread():
    t = task_table(runs_of({"a": ([0], [1]), "b": ([0], [1])}), "reward", "base", "cand")
    assert equivalence(t, 0.1).note == "every task delta is the same"
    one = task_table(runs_of({"a": ([0], [1])}), "reward", "base", "cand")
    assert equivalence(one, 0.1).p_equivalence is None
    with pytest.raises(ValueError):
        equivalence(t, 0)


def test_flip_table_and_its_exact_mcnemar():
    flips = {f"h{i}": ([0], [1]) for i in range(6)} | {"x": ([1], [0]), "k": ([1], [1])}
    flips |= {"f": ([0, 0], [0, 1])}  # one of two is not more than half: still failing
    got = flip_table(task_table(runs_of(flips), "reward", "base", "cand"))
    assert got.helps == tuple(f"h{i}" for i in range(6)) and got.hurts == ("x",)
    assert got.both_pass == ("k",) and got.both_fail == ("f",)
    assert got.test.p_value == pytest.approx(stats.binomtest(6, 7, 0.5).pvalue)
    df = got.to_frame()
    assert df["tasks"].tolist() == [1, 1, 6, 1]
    few = flip_table(task_table(runs_of({"a": ([0], [1]), "b": ([1], [0])}), "reward", "base",
                                "cand"))  # fmt: skip
    assert few.test.p_value is None and few.test.min_attainable_p == 0.5


def _brute_sign_p(deltas):
    """Two-sided exact sign test by enumerating every sign pattern of the non-tied tasks."""
    signs = [d > 0 for d in deltas if d != 0]
    n, k = len(signs), sum(signs)
    extreme = min(k, n - k)
    hits = sum(
        1
        for pattern in itertools.product([0, 1], repeat=n)
        if min(sum(pattern), n - sum(pattern)) <= extreme
    )
    return min(1.0, hits / 2**n)


@pytest.mark.parametrize(
    "deltas", [[0.5, 0.2, 0.1, 0.3, -0.1, 0.4, 0], [1, 1, 1, 1, 1, 1], [0.1, -0.2, 0.3, -0.1, 0.2,
                                                                       0.1, 0.5, -0.3]]
)  # fmt: skip
def test_exact_paired_test_by_enumeration(deltas):
    per_task = {f"t{i}": ([0.25], [0.25 + d]) for i, d in enumerate(deltas)}
    got = exact_paired_test(task_table(runs_of(per_task), "reward", "base", "cand"))
    assert got.method == "exact_sign_test"
    assert got.p_value == pytest.approx(_brute_sign_p(deltas), abs=1e-12)


def test_exact_paired_test_withholds_below_six_with_the_smallest_p():
    per_task = {f"t{i}": ([0.25], [0.75]) for i in range(5)}
    got = exact_paired_test(task_table(runs_of(per_task), "reward", "base", "cand"))
    assert got.p_value is None and got.min_attainable_p == _brute_sign_p([1] * 5) == 0.0625
    binary = {f"t{i}": ([0], [1]) for i in range(6)}
    got = exact_paired_test(task_table(runs_of(binary), "reward", "base", "cand"))
    assert got.method == "exact_mcnemar" and got.p_value == stats.binomtest(6, 6).pvalue


def _holm(ps):
    order = sorted(range(len(ps)), key=lambda i: ps[i])
    out, running = [0.0] * len(ps), 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(ps) - rank) * ps[i]))
        out[i] = running
    return out


def _bh(ps):
    m = len(ps)
    order = sorted(range(m), key=lambda i: ps[i], reverse=True)
    out, running = [0.0] * m, 1.0
    for pos, i in enumerate(order):
        rank = m - pos
        running = min(running, ps[i] * m / rank)
        out[i] = running
    return out


def test_holm_and_benjamini_hochberg_by_hand():
    ps = [0.01, 0.04, None, 0.03, 0.2, 0.005]
    got = adjust_pvalues([f"t{i}" for i in range(6)], ps)
    known = [p for p in ps if p is not None]
    holm, bh = iter(_holm(known)), iter(_bh(known))
    for p, h, b in zip(ps, got.holm, got.bh, strict=True):
        if p is None:
            assert h is None and b is None
        else:
            assert h == pytest.approx(next(holm)) and b == pytest.approx(next(bh))
    assert got.family == 5
    assert list(got.to_frame().columns) == ["test", "p_value", "p_holm", "p_bh", "family"]


def _t_power(d, n, alpha=0.05):
    """Two-sided one-sample t power from the noncentral t, by hand."""
    crit = stats.t.ppf(1 - alpha / 2, n - 1)
    nc = d * math.sqrt(n)
    return stats.nct.sf(crit, n - 1, nc) + stats.nct.cdf(-crit, n - 1, nc)


def test_sign_test_power_by_enumeration():
    for n in (6, 9, 12):
        for share in (0.6, 0.8, 0.95):
            brute = 0.0
            for pattern in itertools.product([0, 1], repeat=n):
                k = sum(pattern)
                if stats.binomtest(k, n).pvalue <= 0.05:
                    brute += share**k * (1 - share) ** (n - k)
            assert sign_test_power(n, share) == pytest.approx(brute, abs=1e-12)
    assert sign_test_power(5, 1.0) == 0.0  # five tasks cannot reach 0.05


def test_planner_against_noncentral_t_and_exact_binomial_power():
    deltas = [0.3, 0.1, -0.2, 0.4, 0.25, 0.0, 0.15, 0.35]
    per_task = {f"t{i}": ([0.25], [0.25 + d]) for i, d in enumerate(deltas)}
    got = plan(task_table(runs_of(per_task), "reward", "base", "cand"))
    sd = np.std(deltas, ddof=1)
    assert got.sd == pytest.approx(sd)
    assert _t_power(got.mde_t / sd, 8) == pytest.approx(0.8, abs=1e-6)
    effect = np.mean(deltas)
    assert got.effect == pytest.approx(effect)
    assert _t_power(effect / sd, got.tasks_t) >= 0.8 > _t_power(effect / sd, got.tasks_t - 1)
    assert (got.non_tied, got.share) == (7, 6 / 7)
    assert sign_test_power(7, got.mde_share) == pytest.approx(0.8, abs=1e-9)
    first = next(m for m in range(1, 500) if sign_test_power(m, 6 / 7) >= 0.8)
    assert got.tasks_sign == math.ceil(first / (7 / 8))


def test_planner_says_nothing_it_cannot():
    per_task = {f"t{i}": ([0.0], [1.0]) for i in range(3)}  # no spread, 3 non-tied tasks
    got = plan(task_table(runs_of(per_task), "reward", "base", "cand"))
    assert got.mde_t is None and got.tasks_t is None  # sd 0
    assert got.mde_share is None  # three tasks cannot reach 0.05 even all one way
    assert got.tasks_sign == 6  # all-one-way needs six


def simulated_corpus(rng, tasks: int, trials: int, true_delta: float):
    """A paired corpus: each task has its own difficulty and its own effect around
    `true_delta`; trials are noisy within a task. The estimand is `true_delta`, the mean effect
    over the population of tasks."""
    rows = []
    for t in range(tasks):
        level = rng.normal(0.0, 1.0)
        effect = rng.normal(true_delta, 0.5)
        for arm, shift in (("base", 0.0), ("cand", effect)):
            for i in range(trials):
                rows.append({"task": f"t{t}", "arm": arm, "trial": i,
                             "reward": level + shift + rng.normal(0.0, 0.7)})  # fmt: skip
    return rows


def bootstrap_coverage(corpora: int, tasks: int, trials: int, *, n_resamples: int = 999) -> float:
    rng = np.random.default_rng(2024)
    hits = 0
    for i in range(corpora):
        runs = simulated_corpus(rng, tasks, trials, 0.3)
        got = hierarchical_bootstrap(task_table(runs, "reward", "base", "cand"), seed=i,
                                     n_resamples=n_resamples)  # fmt: skip
        hits += got.lo <= 0.3 <= got.hi
    return hits / corpora


@pytest.mark.slow
@pytest.mark.parametrize("tasks,trials", [(10, 3), (20, 2)])
def test_hierarchical_bootstrap_covers_at_close_to_its_level(tasks, trials):
    # 300 simulated corpora: a 95% interval should cover the true delta about 95% of the time;
    # a percentile bootstrap over 10-20 tasks runs a little short, never far.
    coverage = bootstrap_coverage(300, tasks, trials)
    print(f"coverage of the 95% hierarchical bootstrap, {tasks} tasks x {trials}: {coverage:.3f}")
    assert 0.89 <= coverage <= 0.99
