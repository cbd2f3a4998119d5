"""The published figures in `data/published/`, and tables that put them beside recomputed ones.

Published numbers are percentages with one decimal (as printed); evalkit computes fractions and
formats them with the reference's rounding (`evalkit.ecma.pct1`) only here, at the comparison.
Every comparison frame has the recomputed value, the published one, and a `matches` column, so a
notebook shows a reader at a glance whether the reproduction holds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalkit.paths import published_dir

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "read_published",
    "host_policy_pairs_comparison",
    "slices_comparison",
    "per_call_comparison",
    "arm_medians_comparison",
    "per_run_comparison",
    "reproduced_line",
    "arm_comparison_comparison",
]


def reproduced_line(comparison: pd.DataFrame, what: str) -> str:
    """`"<k> of <n> <what> reproduced"` for a comparison frame with a `matches` column."""
    return f"{int(comparison['matches'].sum())} of {len(comparison)} {what} reproduced"


def read_published(name: str) -> pd.DataFrame:
    """One CSV of `data/published/` (see its README for units and sources)."""
    import pandas as pd

    return pd.read_csv(published_dir() / f"{name}.csv")


_PAIR_METRICS = {
    "calls": "outer_calls",
    "result_bytes": "serialized_tool_result_bytes",
    "job_observes": "job_observe_calls",
    "nonempty_cells": "nonempty_cells",
}


def host_policy_pairs_comparison(report) -> pd.DataFrame:
    """The per-pair table of a `PairedReport` beside the seed's 2026-10-17 table.

    One row per task, pair, metric and lane: `ours`, `published`, `matches`.
    """
    import pandas as pd

    published = read_published("host_policy_pairs")
    ours = report.pairs_frame().set_index(["case_id", "pair"])
    rows = []
    for _, p in published.iterrows():
        mine = ours.loc[(p["task"], int(p["pair"]))]
        for label, metric in _PAIR_METRICS.items():
            for lane in ("baseline", "candidate"):
                value = mine[f"{metric}.{lane}"]
                want = int(p[f"{label}_{lane}"])
                rows.append(
                    {
                        "task": p["task"],
                        "pair": int(p["pair"]),
                        "metric": label,
                        "lane": lane,
                        "ours": None if pd.isna(value) else int(value),
                        "published": want,
                        "matches": (not pd.isna(value)) and int(value) == want,
                    }
                )
    frame = pd.DataFrame(rows)
    frame["ours"] = frame["ours"].astype("Int64")
    return frame


def _pct(fraction: float | None) -> str | None:
    """A fraction as the published tables print it: `pct1` without the `%` sign."""
    from evalkit.ecma import pct1

    return None if fraction is None else pct1(fraction)[:-1]


def _compare(ours: float | None, published: float | str) -> dict:
    """One percentage cell: recomputed vs published, at the published precision.

    `ours` is a fraction; `published` a percent with one decimal. `difference_pt` is
    ours × 100 − published in percentage points, from the unrounded value; `matches` is true
    when ours prints exactly as published (reference rounding, `evalkit.ecma.pct1`).
    """
    want = f"{float(published):.1f}"
    return {
        "ours": _pct(ours),
        "published": want,
        "difference_pt": None if ours is None else ours * 100 - float(want),
        "matches": _pct(ours) == want,
    }


def _compare_count(ours: int, published: int | str) -> dict:
    want = int(published)
    return {
        "ours": str(ours),
        "published": str(want),
        "difference_pt": None,
        "matches": ours == want,
    }


SLICE_STATISTICS = ("pooled", "median", "p25", "p75", "min", "path_cited")


def slices_comparison(result) -> pd.DataFrame:
    """The baseline slice table of a sweep beside the published one (`slices.csv`).

    One row per slice and statistic; `n` is compared as a count, the rest as percentages.
    """
    import pandas as pd

    published = read_published("slices").set_index("slice")
    rows = []
    for s in result.slices:
        want = published.loc[s.slice]
        rows.append({"slice": s.slice, "statistic": "n", **_compare_count(s.n, want["n"])})
        rows += [
            {"slice": s.slice, "statistic": stat, **_compare(getattr(s, stat), want[f"{stat}_pct"])}
            for stat in SLICE_STATISTICS
        ]
    return pd.DataFrame(rows)


def per_call_comparison(result) -> pd.DataFrame:
    """Per-call median and p25 of a sweep beside the published line."""
    import pandas as pd

    published = read_published("per_call").set_index("statistic")["value_pct"]
    return pd.DataFrame(
        [
            {"statistic": stat, **_compare(getattr(result.per_call, stat), published[stat])}
            for stat in ("median", "p25")
        ]
    )


def arm_medians_comparison(result) -> pd.DataFrame:
    """Median per-session efficiency per pass / repo / arm beside the published arm table."""
    import pandas as pd

    rows = []
    for _, want in read_published("arm_medians").iterrows():
        cell = result.cell(want["pass"], want["repo"], want["arm"])
        rows.append(
            {
                "pass": want["pass"],
                "repo": want["repo"],
                "arm": want["arm"],
                **_compare(None if cell is None else cell.median, want["median_pct"]),
            }
        )
    return pd.DataFrame(rows)


def per_run_comparison(result) -> pd.DataFrame:
    """The per-run values the published doc quotes (cg22 express and excalidraw), in run order."""
    import pandas as pd

    rows = []
    for _, want in read_published("per_run").iterrows():
        cell = result.cell(want["pass"], want["repo"], want["arm"])
        values = [] if cell is None else [eff for _, eff in cell.values]
        run = int(want["position"])
        ours = values[run - 1] if run <= len(values) else None
        rows.append(
            {
                "pass": want["pass"],
                "repo": want["repo"],
                "arm": want["arm"],
                "run": run,
                **_compare(ours, want["efficiency_pct"]),
            }
        )
    return pd.DataFrame(rows)


def arm_comparison_comparison(cells: dict[str, list[str]], arms: list[str]) -> pd.DataFrame:
    """The published ARM COMPARISON sample for cg22 express (§12.3) beside evalkit's cells.

    Args:
        cells: The printed cells by row label, one per arm (`evalkit.outputs.compare_text.
            comparison_cells` of the cg22 express comparison).
        arms: The arm labels, in the order of the cells.

    Returns:
        One row per published row and arm: `row`, `metric`, `arm`, `evalkit`, `published`,
        `matches` (the cells are compared as printed text).
    """
    import pandas as pd

    rows = []
    table = pd.read_csv(published_dir() / "arm_comparison_cg22_express.csv", dtype=str)
    for _, want in table.iterrows():
        got = cells.get(want["row"])
        for i, arm in enumerate(arms):
            ours = got[i] if got is not None and i < len(got) else None
            rows.append(
                {
                    "row": want["row"],
                    "metric": want["metric"],
                    "arm": arm,
                    "evalkit": ours,
                    "published": want[arm],
                    "matches": ours == want[arm],
                }
            )
    return pd.DataFrame(rows)
