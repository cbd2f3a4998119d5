"""The per-pair page of a paired-evidence file: `evalkit pairs report FILE --html OUT`.

The same task page as a corpus report's (`templates/task.html.j2`): for each task, its pairs with
the baseline and the candidate lane side by side (status and every metric of the per-pair
table), after the design's per-pair table and its deltas, the strict verdict, the tallies, the
hotspots and the report's caveats (`evalkit.paired.report.PairedReport`). Written through the
report's folder writer (`evalkit.outputs.html.writer`).
"""

from __future__ import annotations

import os
from typing import Any

from evalkit.outputs.html.pages import frame_table, num
from evalkit.outputs.html.render import asset, render
from evalkit.outputs.html.timeline import clean
from evalkit.outputs.html.writer import SiteWriter

__all__ = ["pairs_page", "write_pairs_report"]


def _lanes(report, case_id: str) -> list[dict[str, Any]]:
    frame = report.pairs_frame()
    part = frame[frame["case_id"] == case_id]
    metrics = [c.removesuffix(".baseline") for c in frame.columns if c.endswith(".baseline")]
    labels = report.lanes or {
        "baseline": {"label": "baseline"},
        "candidate": {"label": "candidate"},
    }
    lanes = []
    for lane in ("baseline", "candidate"):
        runs = []
        for row in part.to_dict("records"):
            facts = [("status", clean(str(row[f"{lane}_status"])))]
            facts += [(m, num(row[f"{m}.{lane}"])) for m in metrics]
            runs.append(
                {
                    "log": f"pair {row['pair']}" + ("" if row["qualified"] else " (not qualified)"),
                    "href": None,
                    "facts": facts,
                    "strip": [],
                    "explore": [],
                }
            )
        lanes.append({"name": f"{lane}: {clean(labels[lane]['label'])}", "runs": runs})
    return lanes


def pairs_page(report) -> str:
    """The page's HTML for a `PairedReport`."""
    st = report.strict
    lines = [
        f"Experiment {report.experiment}: strict verdict {st.verdict}; {st.unit}s: "
        f"{st.required_units} required, {st.present_units} present, {st.qualified_units} "
        "qualified."
    ]
    tables = []
    groups: list[dict[str, Any]] = []
    if report.paired:
        lanes = report.lanes
        lines.append(
            f"Each cell is baseline / candidate: {lanes['baseline']['label']} / "
            f"{lanes['candidate']['label']}."
        )
        tables.append(frame_table(report.published_style_table(), "Per pair"))
        tables.append(frame_table(report.deltas_table(), "Deltas (candidate minus baseline)"))
        tallies = report.tallies_frame()
        if len(tallies):
            tables.append(frame_table(tallies, "How many pairs went which way (k of n)"))
        for case_id in report.scopes:
            groups.append({"title": f"Task {clean(case_id)}", "arms": _lanes(report, case_id)})
    else:
        tables.append(frame_table(report.samples_frame(), "Samples"))
    hot = report.hotspots_frame()
    tables.append(frame_table(hot, "Hotspot candidates (need inspection)", empty="none"))
    return render(
        "task.html.j2",
        title=f"Paired evidence: {report.experiment}",
        root="",
        page_class="task pairs",
        heading=f"Paired evidence — {clean(report.experiment)}",
        lines=lines,
        tables=tables,
        groups=groups,
        families=[],
        caveats=[clean(text) for _, text in report.caveats],
    )


def write_pairs_report(report, out: str | os.PathLike[str]) -> list[str]:
    """Write `OUT/index.html` (the page) and its assets; returns the files written."""
    writer = SiteWriter(out, option="--html")
    writer.write("assets/report.js", asset("report.js"))
    writer.write("assets/report.css", asset("report.css"))
    writer.write("index.html", pairs_page(report))
    return writer.close()
