"""A corpus at a glance: the tables and figures of notebook 05, for exploratory analysis.

Every figure has a data function (a tidy DataFrame computed from a loaded corpus, tested) and a
drawing function that only draws that frame, as in `evalkit.outputs.figures`. Everything is by
arm, because comparing arms on the same questions is what the metrics are for; a session whose
layout names no arm (an interactive log, say) is shown under `NO_ARM`, never dropped.

Fractions stay fractions in the frames; the figures format them as percentages on their axes.
Tokens are the transcript's token counts; chars are UTF-16 code units (spec §10.1).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalkit.ecma import pl
from evalkit.outputs.figures import ARM_COLOURS, _empty_figure, _figure
from evalkit.tables.aggregate import DEFAULT_ARMS
from evalkit.tables.quantile import median, quantile

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

    from evalkit.tables.corpus import Corpus

__all__ = [
    "NO_ARM",
    "FAMILIES",
    "BUCKETS",
    "arm_order",
    "arm_colours",
    "summary_line",
    "sessions_by_group",
    "efficiency_ecdf_data",
    "efficiency_ecdf_figure",
    "efficiency_vs_sections_data",
    "efficiency_vs_sections_figure",
    "tool_mix_data",
    "tool_mix_figure",
    "residual_data",
    "residual_figure",
    "buckets_data",
    "buckets_figure",
]

NO_ARM = "(no arm)"
# Tool families as occupancy and the tool-call frame name them (spec §1.4), in display order.
FAMILIES = ("codegraph", "read", "search", "bash", "other")
# Sufficiency's next actions (spec §5), in the order the reference prints them, with labels.
BUCKETS = {
    "explore_again": "explore again",
    "read_returned": "read a returned file",
    "read_missed": "read a file not returned",
    "search": "search (Grep/Glob)",
    "sufficient": "moved on / answered",
}
_BUCKET_COLOURS = ("#d73027", "#fc8d59", "#fee090", "#91bfdb", "#4575b4")
_FAMILY_COLOURS = ("#1b7837", "#2166ac", "#b2182b", "#e08214", "#999999")
# Colour-blind-safe colours for arms other than baseline and new, in arm order.
_PALETTE = ("#e66101", "#0571b0", "#a6611a", "#fdb863", "#92c5de", "#018571", "#dfc27d")


def _arms(series: pd.Series) -> pd.Series:
    return series.astype("string").fillna(NO_ARM).astype(object)


def arm_order(arms) -> list[str]:
    """Arms in display order: baseline and new first, then the rest by name, `NO_ARM` last."""
    present = set(arms)
    first = [a for a in DEFAULT_ARMS if a in present]
    rest = sorted(a for a in present if a not in DEFAULT_ARMS and a != NO_ARM)
    return first + rest + ([NO_ARM] if NO_ARM in present else [])


def _ordered(frame: pd.DataFrame) -> pd.DataFrame:
    """`arm` as an ordered categorical in `arm_order`, so pivots and groupbys keep that order."""
    import pandas as pd

    frame["arm"] = pd.Categorical(frame["arm"], categories=arm_order(frame["arm"]), ordered=True)
    return frame


def arm_colours(arms) -> dict[str, str]:
    """One colour per arm: the arm table's colours for baseline and new, then a fixed palette."""
    out, k = {}, 0
    for arm in arm_order(arms):
        if arm in ARM_COLOURS:
            out[arm] = ARM_COLOURS[arm]
        elif arm == NO_ARM:
            out[arm] = "#888888"
        else:
            out[arm] = _PALETTE[k % len(_PALETTE)]
            k += 1
    return out


def summary_line(corpus: Corpus) -> str:
    """One line: sessions, how many are in the sweep, groups, arms, and unreadable sessions."""
    s = corpus.sessions_df()
    arms = ", ".join(arm_order(_arms(s["arm"]))) or "none"
    in_sweep = int(s["efficiency"].notna().sum())
    unreadable = f"; {len(corpus.errors)} could not be read" if corpus.errors else ""
    return (
        f"{len(s)} sessions ({in_sweep} with an explore call that returned file sections) in "
        f"{s['group'].nunique()} groups; arms: {arms}{unreadable}"
    )


def sessions_by_group(corpus: Corpus) -> pd.DataFrame:
    """Sessions per group (rows) and arm (columns), with `all` and `in_sweep` totals per group.

    Every readable session is counted, with or without an explore call; `in_sweep` counts the
    ones with at least one answered explore call that returned file sections.
    """
    import pandas as pd

    s = corpus.sessions_df()
    s["arm"] = _arms(s["arm"])
    table = pd.crosstab(s["group"].astype(object), s["arm"])
    table = table.reindex(columns=arm_order(table.columns), fill_value=0)
    table["all"] = table.sum(axis=1)
    table["in_sweep"] = s.groupby(s["group"].astype(object))["efficiency"].count()
    table.index.name, table.columns.name = "group", "arm"
    return table.astype("int64")


def efficiency_ecdf_data(corpus: Corpus) -> pd.DataFrame:
    """Allocation efficiency per session and per explore call, as an ECDF per arm.

    Returns:
        Columns `level` (`session` or `call`), `arm`, `log`, `call` (<NA> for a session),
        `efficiency` (fraction), `ecdf` (share of the arm's sessions or calls at or below it:
        i / n for the i-th smallest), `n` and `p25` (the arm's, by the sweep's quantile rule).
        Sessions without an allocation call have no efficiency and are not in it.
    """
    import pandas as pd

    sessions = corpus.sessions_df()
    sessions = sessions[sessions["efficiency"].notna()][["arm", "log", "efficiency"]]
    sessions = sessions.assign(level="session", call=pd.NA)
    calls = corpus.calls_df()[["arm", "log", "call", "efficiency"]].assign(level="call")
    frames = []
    for part in (sessions, calls):
        part = part.assign(arm=_arms(part["arm"]), efficiency=part["efficiency"].astype(float))
        for arm in arm_order(part["arm"]):
            rows = part[part["arm"] == arm].sort_values(
                ["efficiency", "log", "call"], kind="stable"
            )
            n = len(rows)
            rows = rows.assign(
                ecdf=[(i + 1) / n for i in range(n)],
                n=n,
                p25=quantile(rows["efficiency"].tolist(), 0.25),
            )
            frames.append(rows)
    columns = ["level", "arm", "log", "call", "efficiency", "ecdf", "n", "p25"]
    if not frames:
        return pd.DataFrame(columns=columns)
    out = pd.concat(frames, ignore_index=True)[columns]
    out["call"] = out["call"].astype("Int64")
    return _ordered(out)


def efficiency_ecdf_figure(data: pd.DataFrame, title: str) -> Figure:
    """Two panels, per session and per explore call: an ECDF step curve per arm, p25 dashed."""
    from matplotlib.ticker import PercentFormatter

    if data.empty:
        return _empty_figure(title, "no explore call with file sections in this corpus")
    colours = arm_colours(data["arm"])
    fig, axes = _figure(1, 2, sharey=True)
    fig.set_size_inches(9.0, 3.8)
    for ax, level, noun in zip(axes, ("session", "call"), ("session", "explore call"), strict=True):
        part = data[data["level"] == level]
        for arm in arm_order(part["arm"]):
            rows = part[part["arm"] == arm]
            colour = colours[arm]
            p25 = rows["p25"].iloc[0]
            ax.step(
                rows["efficiency"],
                rows["ecdf"],
                where="post",
                color=colour,
                label=f"{arm} (n={len(rows)}, p25 {p25:.1%})",
            )
            ax.axvline(p25, color=colour, linestyle="--", linewidth=0.7)
        ax.xaxis.set_major_formatter(PercentFormatter(1.0))
        ax.set_xlabel(f"allocation efficiency per {noun} (% of returned chars cited)", fontsize=9)
        ax.set_title(f"per {noun}", fontsize=9)
        ax.legend(loc="upper left", fontsize=7, frameon=False)
    axes[0].set_ylabel("share at or below (fraction of the arm)", fontsize=9)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig


def efficiency_vs_sections_data(corpus: Corpus) -> pd.DataFrame:
    """Per session in the sweep: file sections returned, explore calls, efficiency, arm.

    Columns `log`, `arm`, `group`, `sections` (count), `explore_calls` (count), `chars`
    (UTF-16 units) and `efficiency` (fraction), in log order.
    """
    s = corpus.sessions_df()
    s = s[s["efficiency"].notna()]
    out = s[["log", "arm", "group", "sections", "explore_calls", "chars", "efficiency"]].copy()
    out["arm"] = _arms(out["arm"])
    out["efficiency"] = out["efficiency"].astype(float)
    return _ordered(out.sort_values("log", kind="stable").reset_index(drop=True))


def efficiency_vs_sections_figure(data: pd.DataFrame, title: str) -> Figure:
    """A dot per session: file sections returned against allocation efficiency, by arm."""
    from matplotlib.ticker import MaxNLocator, PercentFormatter

    if data.empty:
        return _empty_figure(title, "no session with file sections in this corpus")
    colours = arm_colours(data["arm"])
    fig, ax = _figure()
    for arm in arm_order(data["arm"]):
        rows = data[data["arm"] == arm]
        ax.scatter(
            rows["sections"].astype(float),
            rows["efficiency"],
            s=16,
            alpha=0.75,
            color=colours[arm],
            label=f"{arm} (n={len(rows)})",
        )
    ax.yaxis.set_major_formatter(PercentFormatter(1.0))
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("file sections returned per session (count, every explore call)")
    ax.set_ylabel("allocation efficiency (% of returned chars cited)")
    ax.set_title(title, fontsize=10)
    ax.legend(loc="lower left", fontsize=8, frameon=False)
    fig.tight_layout()
    return fig


def tool_mix_data(corpus: Corpus) -> pd.DataFrame:
    """Tool calls per arm and family, and each family's share of the arm's tool calls.

    Columns `arm`, `family` (every family of `FAMILIES`, zero when absent), `calls` (count),
    `share` (fraction of the arm's tool calls), `sessions` (the arm's sessions with a tool call).
    """
    import pandas as pd

    t = corpus.tool_calls_df()
    t = t.assign(arm=_arms(t["arm"]), family=t["family"].astype(object))
    rows = []
    for arm in arm_order(t["arm"]):
        part = t[t["arm"] == arm]
        total = len(part)
        counts = part["family"].value_counts()
        families = list(FAMILIES) + sorted(set(counts.index) - set(FAMILIES))
        for family in families:
            n = int(counts.get(family, 0))
            rows.append(
                {
                    "arm": arm,
                    "family": family,
                    "calls": n,
                    "share": n / total if total else 0.0,
                    "sessions": part["log"].nunique(),
                }
            )
    out = pd.DataFrame(rows, columns=["arm", "family", "calls", "share", "sessions"])
    out["family"] = pd.Categorical(out["family"], categories=list(dict.fromkeys(out["family"])))
    return _ordered(out)


def _label_bar_totals(ax, data) -> None:
    """Each arm's bar (shares of its calls) labelled with its number of calls at its end."""
    from matplotlib.ticker import PercentFormatter

    totals = data.groupby("arm", sort=False, observed=True)["calls"].sum()
    for y, arm in enumerate(reversed(arm_order(data["arm"]))):
        ax.annotate(
            f"{totals[arm]} {pl(int(totals[arm]), 'call')}",
            (1.0, y),
            xytext=(4, 0),
            textcoords="offset points",
            va="center",
            fontsize=7,
        )
    ax.set_xlim(0, 1.12)
    ax.xaxis.set_major_formatter(PercentFormatter(1.0))


def _stacked_bars(ax, data, key, keys, labels, colours):
    """Horizontal stacked bars, one per arm (top to bottom in arm order), of `share` per key."""
    arms = arm_order(data["arm"])
    for y, arm in enumerate(reversed(arms)):
        left = 0.0
        part = data[data["arm"] == arm].set_index(key)
        for k, colour in zip(keys, colours, strict=False):
            width = float(part["share"].get(k, 0.0))
            ax.barh(y, width, left=left, color=colour, label=labels[k] if y == 0 else None)
            left += width
    ax.set_yticks(range(len(arms)), list(reversed(arms)), fontsize=8)


def tool_mix_figure(data: pd.DataFrame, title: str) -> Figure:
    """One stacked bar per arm: the share of its tool calls in each family."""

    if data.empty or not data["calls"].sum():
        return _empty_figure(title, "no tool call in this corpus")
    families = list(dict.fromkeys(data["family"]))
    colours = list(_FAMILY_COLOURS) + ["#cccccc"] * len(families)
    fig, ax = _figure()
    _stacked_bars(ax, data, "family", families, {f: f for f in families}, colours)
    _label_bar_totals(ax, data)
    ax.set_xlabel("share of the arm's tool calls (%)")
    ax.set_ylabel("arm")
    ax.set_title(title, fontsize=10)
    ax.legend(
        loc="upper center",
        bbox_to_anchor=(0.5, -0.2),
        ncol=len(families),
        fontsize=8,
        frameon=False,
    )
    fig.tight_layout()
    return fig


def residual_data(corpus: Corpus) -> pd.DataFrame:
    """Residual context occupancy per arm and tool family, over the sessions that carry it.

    Residual is what a family's tool output still occupies in the context window at the end of
    the session (spec §6), in tokens. Interactive sessions have no occupancy and are not in it.
    Only Claude Code sessions are: a Codex rollout's residual (evalkit's own analogue, in
    `sessions_df`) is another instrument, and adding one to a corpus changes no number here.

    Returns:
        Columns `arm`, `family`, `sessions` (count with occupancy), `median_tokens` and
        `p75_tokens` (the sweep's quantile rule), `median_share` (median of the family's
        residual / the final context, a fraction).
    """
    import pandas as pd

    s = corpus.sessions_df()
    s = s[s["final_context"].notna() & (s["agent"] == "claude-code")]
    s = s.assign(arm=_arms(s["arm"]))
    rows = []
    for arm in arm_order(s["arm"]):
        part = s[s["arm"] == arm]
        context = part["final_context"].astype(float)
        for family in FAMILIES:
            tokens = part[f"residual_{family}"].astype(float)
            shares = (tokens / context.where(context > 0)).dropna().tolist()
            rows.append(
                {
                    "arm": arm,
                    "family": family,
                    "sessions": len(part),
                    "median_tokens": median(tokens.tolist()),
                    "p75_tokens": quantile(tokens.tolist(), 0.75),
                    "median_share": median(shares),
                }
            )
    return _ordered(
        pd.DataFrame(
            rows,
            columns=["arm", "family", "sessions", "median_tokens", "p75_tokens", "median_share"],
        )
    )


def residual_figure(data: pd.DataFrame, title: str) -> Figure:
    """Grouped bars: the median residual tokens of each family, one bar per arm."""
    from matplotlib.ticker import FuncFormatter

    if data.empty:
        return _empty_figure(title, "no session with occupancy in this corpus")
    arms = arm_order(data["arm"])
    colours = arm_colours(arms)
    width = 0.8 / len(arms)
    fig, ax = _figure()
    for k, arm in enumerate(arms):
        part = data[data["arm"] == arm].set_index("family").reindex(list(FAMILIES))
        xs = [i + (k - (len(arms) - 1) / 2) * width for i in range(len(FAMILIES))]
        n = int(part["sessions"].max())
        ax.bar(
            xs,
            part["median_tokens"].fillna(0),
            width=width,
            color=colours[arm],
            label=f"{arm} (n={n})",
        )
    ax.set_xticks(range(len(FAMILIES)), FAMILIES, fontsize=9)
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v / 1000:g}k"))
    ax.set_xlabel("tool family")
    ax.set_ylabel("median residual at end of session (tokens)")
    ax.set_title(title, fontsize=10)
    ax.legend(loc="upper right", fontsize=8, frameon=False)
    fig.tight_layout()
    return fig


def buckets_data(corpus: Corpus) -> pd.DataFrame:
    """Sufficiency's next actions per arm: answered explore calls in each bucket.

    Columns `arm`, `bucket` (the keys of `BUCKETS`), `label`, `calls` (count) and `share`
    (fraction of the arm's bucketed calls).
    """
    import pandas as pd

    s = corpus.sessions_df()
    s = s.assign(arm=_arms(s["arm"]))
    rows = []
    for arm in arm_order(s["arm"]):
        part = s[s["arm"] == arm]
        counts = {b: int(part[f"next_{b}"].fillna(0).sum()) for b in BUCKETS}
        total = sum(counts.values())
        rows += [
            {
                "arm": arm,
                "bucket": b,
                "label": BUCKETS[b],
                "calls": n,
                "share": n / total if total else 0.0,
            }
            for b, n in counts.items()
        ]
    out = pd.DataFrame(rows, columns=["arm", "bucket", "label", "calls", "share"])
    out["bucket"] = pd.Categorical(out["bucket"], categories=list(BUCKETS))
    return _ordered(out)


def buckets_figure(data: pd.DataFrame, title: str) -> Figure:
    """One stacked bar per arm: the share of its answered explore calls in each bucket."""

    data = data[data.groupby("arm", observed=True)["calls"].transform("sum") > 0]
    if data.empty:
        return _empty_figure(title, "no answered explore call in this corpus")
    fig, ax = _figure()
    _stacked_bars(ax, data, "bucket", list(BUCKETS), BUCKETS, _BUCKET_COLOURS)
    _label_bar_totals(ax, data)
    ax.set_xlabel("share of the arm's answered explore calls (%), by what the agent did next")
    ax.set_ylabel("arm")
    ax.set_title(title, fontsize=10)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=3, fontsize=8, frameon=False)
    fig.tight_layout()
    return fig
