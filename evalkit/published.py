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

__all__ = ["read_published", "host_policy_pairs_comparison"]


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
