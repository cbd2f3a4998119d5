"""Report figures. Each figure has a data function (a tidy DataFrame, tested) and a drawing
function that only draws that frame, so what a figure shows is checked without reading pixels.

Drawing functions return a matplotlib Figure; `evalkit.outputs.notebook.save_figure` writes it.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from evalkit.session import Session

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

__all__ = [
    "corpus_title",
    "CHANNEL_COLOURS",
    "file_bytes_data",
    "file_bytes_figure",
    "pair_deltas_data",
    "pair_deltas_figure",
    "SLICE_COLOURS",
    "ecdf_data",
    "ecdf_figure",
    "ARM_COLOURS",
    "arm_runs_data",
    "arm_runs_figure",
    "OUTCOME_COLOURS",
    "outcome_deltas_data",
    "outcome_deltas_figure",
]

SYNTHETIC_LABEL = " (synthetic corpus)"


def corpus_title(title: str, corpus: bool | str | os.PathLike[str]) -> str:
    """`title`, labelled ` (synthetic corpus)` when the figure draws the bundled corpus.

    Args:
        title: The figure's title.
        corpus: The corpus directory drawn, or whether it is the bundled one
            (`SweepResult.bundled`).
    """
    if not isinstance(corpus, bool):
        from evalkit.tables.sweep import is_bundled_corpus

        corpus = is_bundled_corpus(corpus)
    return title + SYNTHETIC_LABEL if corpus and SYNTHETIC_LABEL not in title else title


# One colour per citation channel, used by every figure that shows a verdict.
CHANNEL_COLOURS = {"path": "#1b7837", "symbol": "#7fbf7b", "uncited": "#bababa"}


def _figure(nrows: int = 1, ncols: int = 1, **kw):
    """A Figure outside pyplot's global state (no implicit display, nothing to close)."""
    import matplotlib as mpl
    from matplotlib.figure import Figure

    fig = Figure(figsize=mpl.rcParams["figure.figsize"], dpi=mpl.rcParams["figure.dpi"])
    return fig, fig.subplots(nrows, ncols, **kw)


def _empty_figure(title: str, message: str) -> Figure:
    """A figure that says there is nothing to draw, so a template notebook still runs."""
    fig, ax = _figure()
    ax.text(0.5, 0.5, message, ha="center", va="center", fontsize=10, transform=ax.transAxes)
    ax.set_axis_off()
    ax.set_title(title, fontsize=10)
    fig.evalkit_nothing = message  # a notebook prints this line instead (`notebook.figure_cell`)
    return fig


def file_bytes_data(session: Session) -> pd.DataFrame:
    """Chars returned per file over the whole session, largest first, with its channel.

    `evalkit.corpus.frames.files_df` of the session (`path`, `chars`, `share`, `sections`, `cited_via`,
    `cited_symbol`, …) plus `channel`: the verdict as the figure colours it (`path`, `symbol` or
    `uncited`).
    """
    from evalkit.corpus.frames import files_df

    data = files_df(session)
    data["channel"] = data["cited_via"].fillna("uncited")
    return data


def file_bytes_figure(data: pd.DataFrame, title: str) -> Figure:
    """Horizontal bars of chars per file, coloured by citation channel (uncited in grey)."""
    from matplotlib.patches import Patch

    fig, ax = _figure()
    ordered = data.iloc[::-1]  # largest at the top
    ax.barh(
        ordered["path"], ordered["chars"], color=[CHANNEL_COLOURS[c] for c in ordered["channel"]]
    )
    for y, (chars, share) in enumerate(zip(ordered["chars"], ordered["share"], strict=True)):
        ax.annotate(
            f"{share:.1%}",
            (chars, y),
            xytext=(3, 0),
            textcoords="offset points",
            va="center",
            fontsize=8,
        )
    ax.set_xlabel("chars returned (UTF-16 units, every occurrence charged)")
    ax.set_title(title, fontsize=10)
    ax.legend(
        handles=[Patch(color=v, label=k) for k, v in CHANNEL_COLOURS.items()],
        loc="lower right",
        fontsize=8,
        frameon=False,
    )
    fig.tight_layout()
    return fig


# --- paired evidence ------------------------------------------------------------------------

PAIR_METRICS = {
    "outer_calls": "outer calls",
    "serialized_tool_result_bytes": "result bytes",
}


def pair_deltas_data(report) -> pd.DataFrame:
    """Per-pair deltas (candidate − baseline) of the metrics the published table shows.

    Args:
        report: An `evalkit.paired.PairedReport`.

    Returns:
        Columns `case_id`, `pair`, `metric`, `baseline`, `candidate`, `delta` (nullable
        integers; a missing measurement stays missing, never zero).
    """
    import pandas as pd

    pairs = report.pairs_frame()
    frames = []
    for metric in PAIR_METRICS:
        part = pairs[["case_id", "pair"]].copy()
        part["metric"] = metric
        part["baseline"] = pairs[f"{metric}.baseline"]
        part["candidate"] = pairs[f"{metric}.candidate"]
        part["delta"] = pairs[f"{metric}.candidate_minus_baseline"]
        frames.append(part)
    return pd.concat(frames, ignore_index=True)


def pair_deltas_figure(data: pd.DataFrame, title: str) -> Figure:
    """One panel per metric: each pair's delta as a labelled dot, grouped by task, zero marked."""
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    metrics = list(dict.fromkeys(data["metric"]))
    tasks = list(dict.fromkeys(data["case_id"]))
    if data.empty:
        return _empty_figure(title, "no pairs in this evidence")
    fig, axes = _figure(1, len(metrics), squeeze=False, sharey=True)
    fig.set_size_inches(9.0, 3.6)
    for ax, metric in zip(axes[0], metrics, strict=True):
        part = data[(data["metric"] == metric) & data["delta"].notna()]
        # Pairs of one task are spread vertically so equal deltas stay readable.
        ys = [
            tasks.index(t) + (int(p) - 2) * 0.2
            for t, p in zip(part["case_id"], part["pair"], strict=True)
        ]
        xs = part["delta"].astype(float).tolist()
        ax.scatter(xs, ys, color="#2166ac", zorder=3, s=22)
        for x, y, pair in zip(xs, ys, part["pair"], strict=True):
            ax.annotate(
                f"pair {pair}",
                (x, y),
                xytext=(5, 0),
                textcoords="offset points",
                va="center",
                fontsize=7,
            )
        ax.axvline(0, color="#888888", linewidth=0.8)
        ax.set_xlabel(f"{PAIR_METRICS[metric]}: candidate − baseline", fontsize=9)
        ax.margins(x=0.25)
        ax.xaxis.set_major_locator(MaxNLocator(5, integer=True))
        if xs and max(abs(x) for x in xs) >= 10_000:
            ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v / 1000:g}k"))
    axes[0][0].set_yticks(range(len(tasks)), tasks, fontsize=8)
    axes[0][0].set_ylim(-0.6, len(tasks) - 0.4)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig


# --- the baseline sweep ---------------------------------------------------------------------

SLICE_COLOURS = {"all": "#333333", "single-question": "#2166ac", "multi-turn": "#b2182b"}


def ecdf_data(result) -> pd.DataFrame:
    """Per-session efficiency of a sweep as an ECDF per slice, with each slice's p25.

    Args:
        result: An `evalkit.tables.sweep.SweepResult`.

    Returns:
        Columns `slice`, `log`, `efficiency` (fraction), `ecdf` (share of the slice's sessions
        at or below it: i / n for the i-th smallest), `p25` (the slice's p25, Decision 2).
    """
    import pandas as pd

    p25 = {row.slice: row.p25 for row in result.slices}
    members = {
        "all": result.sessions,
        "single-question": [r for r in result.sessions if not r.multi_turn],
        "multi-turn": [r for r in result.sessions if r.multi_turn],
    }
    rows = []
    for name, records in members.items():
        ordered = sorted(records, key=lambda r: (r.efficiency, r.log))
        rows += [
            {
                "slice": name,
                "log": r.log,
                "efficiency": r.efficiency,
                "ecdf": (i + 1) / len(ordered),
                "p25": p25.get(name),
            }
            for i, r in enumerate(ordered)
        ]
    return pd.DataFrame(rows, columns=["slice", "log", "efficiency", "ecdf", "p25"])


def ecdf_figure(data: pd.DataFrame, title: str) -> Figure:
    """ECDF step curves per slice, each slice's p25 a dashed line (its value in the legend)."""
    from matplotlib.ticker import PercentFormatter

    if data.empty:
        return _empty_figure(title, "no session with an explore call that returned file sections")
    fig, ax = _figure()
    for name, part in data.groupby("slice", sort=False):
        colour = SLICE_COLOURS.get(name, "#666666")
        p25 = part["p25"].iloc[0]
        ax.step(
            part["efficiency"],
            part["ecdf"],
            where="post",
            color=colour,
            label=f"{name} (n={len(part)}, p25 {p25:.1%})",
        )
        ax.axvline(p25, color=colour, linestyle="--", linewidth=0.8)
    ax.axhline(0.25, color="#bbbbbb", linewidth=0.6)
    ax.xaxis.set_major_formatter(PercentFormatter(1.0))
    ax.set_xlabel("allocation efficiency per session (share of returned chars cited)")
    ax.set_ylabel("share of sessions at or below")
    ax.set_title(title, fontsize=10)
    ax.legend(loc="upper left", fontsize=8, frameon=False)
    fig.tight_layout()
    return fig


# --- the arm table --------------------------------------------------------------------------

ARM_COLOURS = {"baseline": "#762a83", "new": "#1b7837"}


def arm_runs_data(result) -> pd.DataFrame:
    """Every run of every pass / repo / arm with its efficiency and its group's median.

    Columns `pass`, `repo`, `arm`, `run`, `log`, `efficiency`, `median` (fractions).
    """
    runs = result.arm_frame(per_run=True)
    medians = result.arm_frame()[["pass", "repo", "arm", "median"]]
    return runs.merge(medians, on=["pass", "repo", "arm"], how="left")


def arm_runs_figure(data: pd.DataFrame, title: str) -> Figure:
    """One panel per pass / repo: each run a dot, the arm's median a bar, baseline vs new."""
    from matplotlib.ticker import PercentFormatter

    groups = list(dict.fromkeys(zip(data["pass"], data["repo"], strict=True)))
    arms = list(dict.fromkeys(data["arm"]))
    if not groups:
        return _empty_figure(title, "no pass / repo cell with runs in this corpus")
    ncols = 3
    nrows = -(-len(groups) // ncols)
    fig, axes = _figure(nrows, ncols, squeeze=False, sharey=True)
    fig.set_size_inches(8.0, 2.1 * nrows + 0.6)
    for ax, (pass_, repo) in zip(axes.flat, groups, strict=False):
        part = data[(data["pass"] == pass_) & (data["repo"] == repo)]
        for x, arm in enumerate(arms):
            runs = part[part["arm"] == arm]
            if runs.empty:
                continue
            colour = ARM_COLOURS.get(arm, "#666666")
            # Runs with equal values are spread sideways so every dot stays visible.
            offsets = [(i - (len(runs) - 1) / 2) * 0.07 for i in range(len(runs))]
            ax.scatter([x + o for o in offsets], runs["efficiency"], color=colour, s=16, zorder=3)
            ax.hlines(runs["median"].iloc[0], x - 0.3, x + 0.3, color=colour, linewidth=2)
        ax.set_title(f"{pass_} / {repo}", fontsize=9)
        ax.set_xticks(range(len(arms)), arms, fontsize=8)
        ax.set_xlim(-0.6, len(arms) - 0.4)
        ax.yaxis.set_major_formatter(PercentFormatter(1.0))
        ax.tick_params(axis="y", labelsize=8)
    for ax in list(axes.flat)[len(groups) :]:
        ax.set_visible(False)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig


# One colour per per-task outcome class (evalkit.tables.outcomes.CLASSES).
OUTCOME_COLOURS = {
    "helps": "#1b7837",
    "hurts": "#b2182b",
    "tie": "#bababa",
    "incomplete": "#f4a582",
}


def outcome_deltas_data(table) -> pd.DataFrame:
    """One row per task of an `OutcomeTable`: delta (candidate minus baseline) and class,
    largest gain first, incomplete tasks last with a delta of 0 so they still show."""
    df = table.to_frame()[["task", "delta", "class"]].copy()
    df["shown"] = df["delta"].fillna(0.0)
    df["order"] = df["class"].eq("incomplete")
    df = df.sort_values(["order", "shown", "task"], ascending=[True, False, True], kind="stable")
    return df.drop(columns="order").reset_index(drop=True)


def outcome_deltas_figure(data: pd.DataFrame, title: str) -> Figure:
    """Horizontal bars of the per-task reward deltas, coloured by class."""
    fig, ax = _figure()
    y = list(range(len(data)))[::-1]
    ax.barh(y, data["shown"], color=[OUTCOME_COLOURS[c] for c in data["class"]])
    ax.set_yticks(y, list(data["task"]))
    ax.axvline(0, color="#444444", linewidth=0.8)
    ax.set_xlabel("reward delta (candidate minus baseline, mean over trials)")
    ax.set_title(title)
    handles = [
        _patch(colour, cls) for cls, colour in OUTCOME_COLOURS.items() if cls in set(data["class"])
    ]
    ax.legend(handles=handles, loc="lower right", frameon=False)
    fig.tight_layout()
    return fig


def _patch(colour: str, label: str):
    from matplotlib.patches import Patch

    return Patch(color=colour, label=label)
