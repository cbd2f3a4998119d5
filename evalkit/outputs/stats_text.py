"""Printing "is the difference real?" (`evalkit stats DIR`, notebook 08).

Per figure: the per-task table, the exact paired test (or why it is withheld, with the smallest p
it could give), the mean paired delta with its interval(s), P(candidate > baseline), for the
pass figure the pass rates, posteriors, pass@k / pass^k and the flip table, the equivalence
verdict when a margin is given, and the planner line. Then every test with its raw and adjusted
p. Every verdict says, in plain words, what it assumed (issue 24, Build 7); numbers are rounded
here only, never in `evalkit.tables.ab_stats`.
"""

from __future__ import annotations

import math
from typing import Any

from evalkit.ecma import fix, grp, js_json, pl
from evalkit.errors import one_line
from evalkit.outputs.cost_text import cost_lines
from evalkit.outputs.sweep_text import text_table
from evalkit.tables.ab_stats import ArmStats, FigureStats, TrialRuns
from evalkit.tables.paired_stats import MAX_PLANNED_TASKS

__all__ = ["figure_lines", "render_stats_text", "stats_json_dict", "render_stats_json", "fmt"]

DASH = "—"
_DIGITS = {"cost_usd": 4, "cost_per_pass_usd": 4, "tokens": 0, "duration_s": 1, "tool_calls": 2}


def fmt(key: str, x: float | None, *, signed: bool = False) -> str:
    """A figure's value as printed: cost to 4 places, tokens whole, duration 1, the rest 3."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return DASH
    digits = _DIGITS.get(key, 3)
    text = grp(round(x)) if digits == 0 else fix(x, digits)
    return ("+" if signed and x > 0 else "") + text


def _p(p: float) -> str:
    return fix(p, 4)


def _interval(key: str, lo: float | None, hi: float | None) -> str:
    return f"[{fmt(key, lo, signed=True)}, {fmt(key, hi, signed=True)}]"


def _test_line(f: FigureStats, cand: str) -> str:
    t = f.test
    what = (
        "exact McNemar test (tasks that pass in one arm only)"
        if t.method == "exact_mcnemar"
        else "exact sign test (which arm is higher, task by task)"
    )
    if t.p_value is None:
        return (
            f"  {what}: withheld — {t.n_nonzero} {pl(t.n_nonzero, 'task')} differ, and the "
            f"smallest p they could give is {_p(t.min_attainable_p)}; six differing tasks are "
            "needed to go below 0.05"
        )
    return (
        f"  {what}: p = {_p(t.p_value)} over {t.n_nonzero} differing tasks (exact: assumes only "
        "that tasks are independent)"
    )


def _delta_lines(f: FigureStats) -> list[str]:
    key, b = f.figure.key, f.bootstrap
    pct = fix(b.level * 100, 0)
    out = [
        f"  mean paired delta {fmt(key, b.estimate, signed=True)}"
        + (
            f", {pct}% interval {_interval(key, b.lo, b.hi)} (hierarchical bootstrap: tasks "
            f"resampled, then trials within each task; seed {b.seed}, {grp(b.n_resamples or 0)} "
            "resamples)"
            if b.lo is not None
            else f" ({b.note}: no interval)"
        )
    ]
    c = f.cluster
    if c is not None:
        if c.lo is None:
            out.append(f"  cluster-robust interval: none ({c.note})")
        else:
            out.append(
                f"  cluster-robust {pct}% interval {_interval(key, c.lo, c.hi)} (t on "
                f"{c.df} degrees of freedom, {c.clusters} clusters)"
                + (f" — {c.note}" if c.note else "")
            )
    return out


def _probability_line(f: FigureStats, stats: ArmStats) -> str:
    p = f.probability
    word = {"passed": "passes more", "reward": "scores higher"}.get(f.figure.key, "is higher")
    return (
        f"  P({stats.candidate} {word} than {stats.baseline}) = {fix(p.probability, 3)}: the "
        f"chance that {stats.candidate} is the higher on most tasks where the two differ "
        f"({p.higher} higher, {p.lower} lower, {p.tied} tied; "
        + ("uniform prior" if tuple(p.prior) == (1.0, 1.0) else f"prior Beta{p.prior}")
        + "; ties carry no information)"
    )


def _pass_lines(f: FigureStats) -> list[str]:
    out = []
    rates = {}
    for r in f.pass_rates:
        rates.setdefault(r.arm, {})[r.method] = r
    for arm, by in rates.items():
        w, cp = by["wilson"], by["clopper_pearson"]
        out.append(
            f"  {arm}: {w.successes} of {w.n} tasks pass (more than half their trials); 95% "
            f"Wilson [{fix(w.lo, 3) if w.lo is not None else DASH}, "
            f"{fix(w.hi, 3) if w.hi is not None else DASH}], Clopper–Pearson "
            f"[{fix(cp.lo, 3) if cp.lo is not None else DASH}, "
            f"{fix(cp.hi, 3) if cp.hi is not None else DASH}]"
        )
    for post in f.posteriors:
        out.append(
            f"  {post.arm}: pass rate posterior mean {fix(post.mean, 3)}, 95% credible "
            f"[{fix(post.lo, 3)}, {fix(post.hi, 3)}] (uniform prior, each task counted once)"
            if tuple(post.prior) == (1.0, 1.0)
            else f"  {post.arm}: pass rate posterior mean {fix(post.mean, 3)}, 95% credible "
            f"[{fix(post.lo, 3)}, {fix(post.hi, 3)}] (prior Beta{post.prior}, each task once)"
        )
    if f.curves is not None and f.curves.rows:
        header = ["arm", "k", "tasks", "pass@k", "pass^k"]
        rows = [
            [r["arm"], str(r["k"]), str(r["tasks"]), fix(r["pass_at_k"], 3),
             fix(r["pass_hat_k"], 3)]
            for r in f.curves.rows
        ]  # fmt: skip
        out.append("  pass@k (at least one of k trials passes) and pass^k (all k pass):")
        out += ["  " + line for line in text_table(header, rows)]
    if f.flips is not None:
        fl = f.flips

        def which(tasks: tuple[str, ...]) -> str:
            return f" ({', '.join(tasks)})" if tasks and len(tasks) <= 5 else ""

        out.append(
            f"  flips: {len(fl.helps)} {pl(len(fl.helps), 'task')} went fail → pass"
            f"{which(fl.helps)}, {len(fl.hurts)} pass → fail{which(fl.hurts)}, "
            f"{len(fl.both_pass)} kept passing, {len(fl.both_fail)} kept failing"
        )
    return out


def _equivalence_line(f: FigureStats, stats: ArmStats) -> str:
    key = f.figure.key
    e = f.equivalence
    if e is None:
        return f"  equivalence: not tested (give a margin: --margin {key}=M, in {f.figure.unit})"
    m = fmt(key, e.margin)
    if e.p_equivalence is None:
        return f"  equivalence within ±{m}: not tested ({e.note})"
    verdict = (
        f"equivalent within ±{m}"
        if e.equivalent
        else f"not shown equivalent within ±{m} (which is not evidence of a difference)"
    )
    line = (
        f"  equivalence: {verdict}: TOST p = {_p(e.p_equivalence)}, 90% interval "
        f"{_interval(key, e.lo, e.hi)}"
    )
    if e.p_noninferiority is not None:
        worse = "lower" if e.direction == "higher_is_better" else "higher"
        ok = "shown" if e.noninferior else "not shown"
        line += (
            f"; non-inferiority ({stats.candidate} at most {m} {worse}): {ok}, "
            f"p = {_p(e.p_noninferiority)}"
        )
    return line + " — a paired t test on the task deltas: assumes they are roughly normal"


def _plan_line(f: FigureStats) -> str:
    key, pl_ = f.figure.key, f.plan
    parts = []
    if pl_.mde_t is not None:
        parts.append(
            f"at {pl_.tasks} tasks a paired t test would detect a mean delta of "
            f"±{fmt(key, pl_.mde_t)} with 80% power"
        )
    if pl_.tasks_t is not None:
        parts.append(
            f"the pilot's delta ({fmt(key, pl_.effect, signed=True)}) needs about "
            f"{pl_.tasks_t} tasks (paired t)"
        )
    elif pl_.effect and pl_.sd:
        parts.append(
            f"the pilot's delta ({fmt(key, pl_.effect, signed=True)}) would need more than "
            f"{grp(MAX_PLANNED_TASKS)} tasks (paired t)"
        )
    if pl_.tasks_sign is not None:
        parts.append(
            f"about {pl_.tasks_sign} tasks for the exact sign test (if, as in the pilot, the "
            f"candidate is higher on {fix((pl_.share or 0) * 100, 0)}% of the tasks that differ)"
        )
    if not parts:
        return "  planner: the pilot shows no spread or no direction to plan from"
    return "  planner (estimates from this pilot): " + "; ".join(parts)


def figure_lines(f: FigureStats, stats: ArmStats) -> list[str]:
    """One figure's block (see the module docstring)."""
    key, t = f.figure.key, f.table
    incomplete = t.count("incomplete")
    head = (
        f"{f.figure.label} ({f.figure.unit}) — {stats.candidate} against {stats.baseline}, "
        f"paired by task: {f.tasks} {pl(f.tasks, 'task')} with both arms"
        + (f", {incomplete} with one arm only (left out)" if incomplete else "")
    )
    header = ["task", f"{stats.baseline}", "n", f"{stats.candidate}", "n", "delta", ""]
    rows = [
        [x.task, fmt(key, x.baseline_mean), str(len(x.baseline)), fmt(key, x.candidate_mean),
         str(len(x.candidate)), fmt(key, x.delta, signed=True), x.cls]
        for x in t.tasks
    ]  # fmt: skip
    out = [head] + text_table(header, rows, left=1)
    if not f.tasks:
        return out + ["  no task has a known value in both arms: nothing to compare"]
    out.append(
        f"  {stats.candidate} higher on {t.count('higher')}, lower on {t.count('lower')}, tied "
        f"on {t.count('tied')}"
        + ("" if f.figure.direction == "higher_is_better" else " (lower is cheaper, not better)")
    )
    out.append(_test_line(f, stats.candidate))
    out += _delta_lines(f)
    out.append(_probability_line(f, stats))
    out += _pass_lines(f)
    out.append(_equivalence_line(f, stats))
    out.append(_plan_line(f))
    return out


ASSUMED = (
    "What every line above assumes: the task is the unit (trials are averaged within a task "
    "first, and each task counts once); tasks are independent and a fair sample of the tasks "
    "you care about; the same tasks ran in both arms. None of it says why an arm differs, or "
    "that a difference you did not test for is absent."
)


def _tests_lines(stats: ArmStats) -> list[str]:
    a = stats.adjusted
    header = ["test", "method", "p", "Holm", "Benjamini–Hochberg"]
    rows = []
    for i, (group, figure, t) in enumerate(stats.tests):
        rows.append(
            [
                f"{group}: {figure}",
                t.method.replace("_", " "),
                DASH if t.p_value is None else _p(t.p_value),
                DASH if a.holm[i] is None else _p(a.holm[i]),
                DASH if a.bh[i] is None else _p(a.bh[i]),
            ]
        )
    out = [
        f"Many tests: {a.family} exact {pl(a.family, 'test')} with a p-value (— : withheld), "
        "adjusted across the table (Holm: the chance of any false finding; "
        "Benjamini–Hochberg: the share of false findings):"
    ]
    return out + (text_table(header, rows, left=2) if rows else ["  (no test)"])


def render_stats_text(runs: TrialRuns, stats: ArmStats | None) -> str:
    """The report of `evalkit stats DIR`."""
    out = [
        f"Is the difference real? — {runs.root.name}/ ({runs.read_as})",
        f"{len(runs.frame)} {pl(len(runs.frame), 'run')} read of {runs.runs}; arms: "
        f"{', '.join(runs.arms) or 'none'}",
    ]
    if runs.cost is not None:
        out += cost_lines(runs.cost, noun="run", indent="")
    if stats is None:
        out += ["", "No comparison: two arms are needed (see --arms)."]
        return _joined(out)
    if not stats.figures:
        out += [
            "",
            f"No comparison: no run of {stats.baseline} or {stats.candidate} names a task "
            "with a known figure.",
        ]
        return _joined(out)
    for f in stats.figures:
        out += [""] + figure_lines(f, stats)
    out += [""] + _tests_lines(stats)
    out += ["", ASSUMED]
    return _joined(out)


def _joined(out: list[str]) -> str:
    return "\n".join(one_line(line) for chunk in out for line in chunk.split("\n")) + "\n"


def _records(df) -> list[dict[str, Any]]:
    rows = df.to_dict("records")
    return [
        {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in r.items()}
        for r in rows
    ]


def stats_json_dict(runs: TrialRuns, stats: ArmStats | None) -> dict[str, Any]:
    """The `--json` document: every frame of `ArmStats` as lists of rows (raw numbers)."""
    head = {
        "corpus": runs.root.name,
        "read_as": runs.read_as,
        "runs_read": len(runs.frame),
        "runs": runs.runs,
        "arms": list(runs.arms),
        "cost": runs.cost.to_dict() if runs.cost is not None else None,
    }
    if stats is None:
        return head | {"baseline": runs.baseline, "candidate": runs.candidate, "figures": []}
    return head | {
        "baseline": stats.baseline,
        "candidate": stats.candidate,
        "seed": stats.seed,
        "level": stats.level,
        "cluster": stats.cluster,
        "prior": list(stats.prior),
        "margins": dict(stats.margins),
        "figures": [f.figure.key for f in stats.figures],
        "tasks": _records(stats.tasks_frame()),
        "tests": _records(stats.tests_frame()),
        "intervals": _records(stats.intervals_frame()),
        "probability": _records(stats.probability_frame()),
        "equivalence": _records(stats.equivalence_frame()),
        "plan": _records(stats.plan_frame()),
        "pass_rates": _records(stats.pass_rates_frame()),
        "posteriors": _records(stats.posteriors_frame()),
        "pass_k": _records(stats.pass_k_frame()),
        "flips": _records(stats.flips_frame()),
    }


def render_stats_json(runs: TrialRuns, stats: ArmStats | None) -> str:
    return js_json(stats_json_dict(runs, stats), 2) + "\n"
