"""Figures of "is the difference real?" (notebook 08). Each has a data function (a tidy frame,
tested) and a drawing function that only draws that frame, as `evalkit.outputs.figures`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalkit.outputs.figures import _empty_figure, _figure
from evalkit.tables.ab_stats import ArmStats
from evalkit.tables.paired_stats import within_task_interval

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

__all__ = [
    "task_deltas_data",
    "task_deltas_figure",
    "posterior_data",
    "posterior_figure",
    "pass_k_data",
    "pass_k_figure",
]


def task_deltas_data(stats: ArmStats, figure: str) -> pd.DataFrame:
    """One row per task with both arms: its delta and a within-task interval (its trials
    resampled, seeded with the comparison's seed), largest delta first; then one row `mean
    over tasks` with the hierarchical bootstrap interval."""
    import pandas as pd

    f = stats.figure(figure)
    rows = []
    for i, t in enumerate(f.table.complete):
        lo, hi = within_task_interval(t, seed=stats.seed + i, level=stats.level)
        rows.append({"task": t.task, "delta": t.delta, "lo": lo, "hi": hi, "kind": "task"})
    rows.sort(key=lambda r: (-r["delta"], r["task"]))
    b = f.bootstrap
    rows.append({"task": "mean over tasks", "delta": b.estimate, "lo": b.lo, "hi": b.hi,
                 "kind": "mean"})  # fmt: skip
    return pd.DataFrame(rows, columns=["task", "delta", "lo", "hi", "kind"])


def task_deltas_figure(data: pd.DataFrame, title: str, xlabel: str) -> Figure:
    """Per-task deltas as points with their intervals, the mean over tasks below them."""
    if data["delta"].isna().all() or len(data) <= 1:
        return _empty_figure(title, "no task has a known value in both arms")
    fig, ax = _figure()
    y = list(range(len(data)))[::-1]
    for yi, (_, r) in zip(y, data.iterrows(), strict=True):
        colour = "#2166ac" if r["kind"] == "mean" else "#444444"
        if r["lo"] is not None and r["lo"] == r["lo"]:
            ax.plot(
                [r["lo"], r["hi"]],
                [yi, yi],
                color=colour,
                linewidth=2 if r["kind"] == "mean" else 1,
            )
        ax.plot([r["delta"]], [yi], "o", color=colour)
    ax.set_yticks(y, list(data["task"]))
    ax.axvline(0, color="#888888", linewidth=0.8, linestyle="--")
    ax.set_xlabel(xlabel)
    ax.set_title(title)
    fig.tight_layout()
    return fig


def posterior_data(stats: ArmStats, figure: str, points: int = 201) -> pd.DataFrame:
    """The posterior density of θ, the share of differing tasks where the candidate is higher,
    on a grid of `points` from 0 to 1; `above` marks θ > 1/2 (its area is P(candidate >
    baseline))."""
    import numpy as np
    import pandas as pd

    p = stats.figure(figure).probability
    x = np.linspace(0.0, 1.0, points)
    return pd.DataFrame({"share": x, "density": p.density(x), "above": x > 0.5})


def posterior_figure(data: pd.DataFrame, title: str, probability: float) -> Figure:
    """The posterior density, the part above 1/2 shaded and labelled with its probability."""
    fig, ax = _figure()
    ax.plot(data["share"], data["density"], color="#2166ac")
    above = data[data["above"]]
    ax.fill_between(above["share"], above["density"], color="#92c5de", alpha=0.7,
                    label=f"P(candidate higher) = {probability:.3f}")  # fmt: skip
    ax.axvline(0.5, color="#888888", linewidth=0.8, linestyle="--")
    ax.set_xlabel("share of differing tasks where the candidate is higher")
    ax.set_ylabel("posterior density")
    ax.set_title(title)
    ax.legend(loc="upper left", frameon=False)
    fig.tight_layout()
    return fig


def pass_k_data(stats: ArmStats) -> pd.DataFrame:
    """pass@k and pass^k per arm and k (long: one row per arm, k and measure)."""
    df = stats.pass_k_frame()
    if df.empty:
        import pandas as pd

        return pd.DataFrame(columns=["arm", "k", "measure", "value"])
    long = df.melt(id_vars=["arm", "k"], value_vars=["pass_at_k", "pass_hat_k"],
                   var_name="measure", value_name="value")  # fmt: skip
    long["measure"] = long["measure"].map({"pass_at_k": "pass@k", "pass_hat_k": "pass^k"})
    return long


def pass_k_figure(data: pd.DataFrame, title: str) -> Figure:
    """pass@k (solid) and pass^k (dashed) against k, one colour per arm."""
    if data.empty:
        return _empty_figure(title, "no pass/fail outcome in both arms")
    fig, ax = _figure()
    colours = ["#4d4d4d", "#2166ac", "#b2182b", "#1b7837"]
    for i, (arm, part) in enumerate(data.groupby("arm", sort=False)):
        for measure, style in (("pass@k", "-"), ("pass^k", "--")):
            d = part[part["measure"] == measure]
            ax.plot(d["k"], d["value"], style, marker="o", color=colours[i % len(colours)],
                    label=f"{arm} {measure}")  # fmt: skip
    ax.set_xlabel("k (trials)")
    ax.set_ylabel("mean over tasks")
    ax.set_ylim(-0.02, 1.02)
    ax.set_xticks(sorted(set(data["k"])))
    ax.set_title(title)
    ax.legend(frameon=False)
    fig.tight_layout()
    return fig
