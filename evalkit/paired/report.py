"""The descriptive paired-evidence report (spec §7).

`build_report(evidence, *, manifest=None)` always runs the strict gate first and embeds its
result; it builds a report for any file that loads, including one that fails the gate. Figures
that need qualified units use only qualified units. The `PairedReport` offers:

* `to_dict()` — the report object of §7.1 (integers and None only, no floats);
* `pairs_frame()` / `samples_frame()` — pandas frames with nullable `Int64` metric columns;
* `distributions_frame()`, `tallies_frame()`, `hotspots_frame()` — the same figures, tidy;
* `published_style_table()` — the design's per-pair table, one string per cell (§7.10);
* `render_text()` — the text the `evalkit pairs report` command prints.

Everything is descriptive: per-pair deltas (`candidate_minus_baseline`), nearest-rank p50/p95
with missing counts (`evalkit.stats.describe`), improved/regressed/tied tallies, the Host-cell
summary, hotspot candidates and the fixed caveats. The report never calls the tests or intervals
of `evalkit.stats` (spec §1.2).

Example:
    >>> from evalkit.paired import build_report, load_published_baseline
    >>> report = build_report(load_published_baseline())
    >>> report.pairs_frame()["outer_calls.candidate_minus_baseline"].tolist()
    [0, -3, 0, 0, 0, 0, -2, -1, 0]
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from evalkit.paired._json import canonical_dumps
from evalkit.paired.attest import cell_counts
from evalkit.paired.gate import StrictResult, strict_check
from evalkit.paired.manifest import CaseManifest, load_cases
from evalkit.paired.schema import METRIC_KEYS, REPAIR_REASONS, Evidence, Sample
from evalkit.stats import Distribution, describe

__all__ = [
    "CAVEATS",
    "CONDITIONAL_CAVEATS",
    "DIRECTIONS",
    "HOTSPOT_CATEGORIES",
    "TABLE_METRICS",
    "PairedReport",
    "build_report",
    "render_published_style_table",
]

DELTA = "candidate_minus_baseline"
# §7.1: the fixed metric order of every table (`repair_turns_by_reason` is not a table metric).
TABLE_METRICS = tuple(m for m in METRIC_KEYS if m != "repair_turns_by_reason")
DIRECTIONS = {
    m: ("none" if m in ("nonempty_cells", "empty_cells") else "lower_is_better")
    for m in TABLE_METRICS
}
LANE_LABELS = {
    "direct_vs_host": (
        {"label": "Direct", "variant": "direct", "surface": "direct", "policy": None},
        {
            "label": "Host Code Mode",
            "variant": "host_code_mode",
            "surface": "host_code_mode",
            "policy": None,
        },
    ),
    "host_cell_policy": (
        {
            "label": "Host single-call",
            "variant": "host_code_mode",
            "surface": "host_code_mode",
            "policy": "host_single_call",
        },
        {
            "label": "Host composition allowed",
            "variant": "host_code_mode",
            "surface": "host_code_mode",
            "policy": "host_composition_allowed",
        },
    ),
    "nested_code_mode": (
        {
            "label": "Direct (nested controls)",
            "variant": "direct",
            "surface": "direct",
            "policy": None,
        },
        {
            "label": "WebCodex nested Code Mode",
            "variant": "code_mode",
            "surface": None,
            "policy": None,
        },
    ),
}
# §7.8, in order.
CAVEATS = (
    (
        "outer_calls_not_model_turns",
        "Outer calls are canonical WebCodex outer tool calls; they are not model turns.",
    ),
    (
        "result_bytes_not_network_traffic",
        "Serialized tool-result bytes are not complete network traffic.",
    ),
    ("immediate_observe_not_excess", "An immediate observe is not proof of an excess observe."),
    (
        "percentiles_descriptive",
        "p50 and p95 are descriptive nearest-rank values, not confidence intervals or a speedup "
        "claim.",
    ),
    (
        "cells_caller_attested",
        "Host cell grouping is caller-attested and reported with independently_verified=false; "
        "Audit proves canonical calls, not Host cells or model rounds.",
    ),
    (
        "per_pair_when_instrumentation_changed",
        "When instrumentation changed across pairs, the evidence supports per-pair descriptions "
        "only, with no pooled causal, speedup or p95 claim.",
    ),
    (
        "manual_bridge_wall_time",
        "Task wall time is null for a manual bridge unless independently evidenced UI task "
        "boundaries exist; an automated driver's wall time includes Host driver orchestration.",
    ),
    (
        "deltas_candidate_minus_baseline",
        "Deltas are candidate minus baseline; a lower value is not by itself a better outcome.",
    ),
    ("low_calls_not_success", "Low call counts alone do not prove success or efficiency."),
    (
        "strict_scope",
        "Strict acceptance does not require every optional metric and proves neither Host cell "
        "grouping nor model identity; neither the configuration digest nor a driver claim shows "
        "which model ran.",
    ),
    (
        "hotspots_need_inspection",
        "Hotspot candidates need inspection: the same-kind serial proxy does not prove "
        "unnecessary microcalls, an observe after a delivered failure may be necessary, and no "
        "repeated-read finding is made because payload-safe summaries cannot show repeated "
        "reads of identical content.",
    ),
)
CONDITIONAL_CAVEATS = (
    (
        "composition_permitted_not_required",
        "Composition is permitted, not required; the report states whether calls actually "
        "shared a cell rather than assuming the instruction caused composition.",
    ),
    (
        "nested_isolated",
        "Nested Code Mode results are an isolated group with their own Direct controls and never "
        "replace or mix with the default Host comparison.",
    ),
    (
        "selection_admission_only",
        "Admission by the selection runtime contract proves neither the answer nor the optimal "
        "tool choice; correctness comes only from the caller's external verdict.",
    ),
    (
        "reconstructed_not_verifiable",
        "This evidence is reconstructed from a published summary and cannot pass the strict gate.",
    ),
    (
        "scripted_not_real_model",
        "Scripted-driver evidence tests the collector only and is not real-model evidence.",
    ),
    (
        "instrumentation_changed",
        "Instrumentation changed across pairs in this evidence; read each pair on its own.",
    ),
)
HOTSPOT_CATEGORIES = (
    "invalid_argument_or_tool_selection_repairs",
    "same_kind_serial_window_calls",
    "observe_after_delivered_failure",
)
HOTSPOT_LABEL = "candidate; needs inspection"
# §7.10: the design's published columns; the cell column only in `host_cell_policy`.
PUBLISHED_COLUMNS = (
    ("Calls", "outer_calls"),
    ("Result bytes", "serialized_tool_result_bytes"),
    ("Job observes", "job_observe_calls"),
    ("Attested nonempty cells", "nonempty_cells"),
)


def _delta(baseline: int | None, candidate: int | None) -> int | None:
    # Unknown stays unknown: a delta needs both sides (spec §1.4).
    if baseline is None or candidate is None:
        return None
    return candidate - baseline


def _instrumentation_text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    return "+".join(value)


@dataclass(frozen=True)
class PairRow:
    """One row of the per-pair table (spec §7.3). `values[metric] = (baseline, candidate, delta)`."""

    case_id: str
    pair: int
    order: tuple[str, str]
    instrumentation: Any
    qualified: bool
    baseline_status: str | None
    candidate_status: str | None
    values: Mapping[str, tuple[int | None, int | None, int | None]]

    def to_dict(self) -> dict[str, Any]:
        inst = self.instrumentation
        return {
            "case_id": self.case_id,
            "pair": self.pair,
            "order": list(self.order),
            "instrumentation": list(inst) if isinstance(inst, tuple) else inst,
            "qualified": self.qualified,
            "baseline_status": self.baseline_status,
            "candidate_status": self.candidate_status,
            "metrics": {
                m: {"baseline": b, "candidate": c, DELTA: d} for m, (b, c, d) in self.values.items()
            },
        }


@dataclass(frozen=True)
class SampleRow:
    """One present sample (spec §7.3): identity, statuses, metrics, gates, two attestation flags."""

    sample: Sample
    effective_status: str
    efficiency_attested: bool
    cells_attested: bool

    def to_dict(self) -> dict[str, Any]:
        s = self.sample
        inst = s.instrumentation
        return {
            "case_id": s.case_id,
            "pair": s.pair,
            "ordinal": s.ordinal,
            "repetition": s.repetition,
            "lane": s.lane,
            "variant": s.variant,
            "surface": s.surface,
            "policy": s.policy,
            "recorded_status": s.status,
            "effective_status": self.effective_status,
            "instrumentation": list(inst) if isinstance(inst, tuple) else inst,
            "metrics": s.metrics.to_dict(),
            "runtime_gates": dict(s.runtime_gates),
            "efficiency_attested": self.efficiency_attested,
            "cells_attested": self.cells_attested,
        }


@dataclass(frozen=True)
class Tally:
    """Improved / regressed / tied over qualified pairs for one metric (spec §7.5)."""

    direction: str
    n: int
    lower: int
    higher: int
    tied: int
    unknown: int

    @property
    def improved(self) -> int | None:
        return self.lower if self.direction == "lower_is_better" else None

    @property
    def regressed(self) -> int | None:
        return self.higher if self.direction == "lower_is_better" else None

    @property
    def text(self) -> str:
        if self.n == 0:
            return f"no known deltas; {self.unknown} unknown"
        words = (
            ("improved", "regressed")
            if self.direction == "lower_is_better"
            else ("lower", "higher")
        )
        return (
            f"{self.lower} of {self.n} {words[0]}, {self.higher} of {self.n} {words[1]}, "
            f"{self.tied} of {self.n} tied; {self.unknown} unknown"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "direction": self.direction,
            "n": self.n,
            "lower": self.lower,
            "higher": self.higher,
            "tied": self.tied,
            "improved": self.improved,
            "regressed": self.regressed,
            "unknown": self.unknown,
            "text": self.text,
        }


def tally(deltas: list[int | None], direction: str) -> Tally:
    known = [d for d in deltas if d is not None]
    return Tally(
        direction=direction,
        n=len(known),
        lower=sum(1 for d in known if d < 0),
        higher=sum(1 for d in known if d > 0),
        tied=sum(1 for d in known if d == 0),
        unknown=len(deltas) - len(known),
    )


@dataclass(frozen=True)
class CellRow:
    """The Host-cell view of one sample (spec §7.6)."""

    case_id: str
    pair: int | None
    lane: str | None
    policy: str | None
    outer_calls: int | None
    nonempty_cells: int | None
    empty_cells: int | None
    calls_beyond_first_per_cell: int | None
    multi_call_cells: int | None
    max_calls_per_cell: int | None
    composition_observed: bool | None

    def to_dict(self) -> dict[str, Any]:
        return dict(vars(self))


@dataclass(frozen=True)
class Hotspot:
    """A sample worth inspecting (spec §7.7). Not a finding."""

    rank: int
    category: str
    case_id: str
    pair: int | None
    repetition: int | None
    lane: str | None
    count: int
    effective_status: str

    def to_dict(self) -> dict[str, Any]:
        return {**vars(self), "label": HOTSPOT_LABEL}


@dataclass(frozen=True)
class PairedReport:
    """The report of spec §7. Build it with `build_report`; see the module docstring."""

    evidence: Evidence
    strict: StrictResult
    scopes: tuple[str, ...]
    pairs: tuple[PairRow, ...]
    samples: tuple[SampleRow, ...]
    distributions: Mapping[str, Mapping[str, Mapping[str, Distribution]]]
    tallies: Mapping[str, Mapping[str, Tally]] | None
    cell_rows: tuple[CellRow, ...] | None
    hotspots: tuple[Hotspot, ...]
    not_evaluable: Mapping[str, int]
    caveats: tuple[tuple[str, str], ...]
    instrumentation_changed_across_pairs: bool
    qualified_repetitions: frozenset[tuple[str, int]] = frozenset()

    @property
    def experiment(self) -> str:
        return self.evidence.experiment

    @property
    def paired(self) -> bool:
        return self.evidence.paired

    @property
    def basis(self) -> str:
        return self.strict.qualified_basis

    @property
    def lanes(self) -> dict[str, Any] | None:
        labels = LANE_LABELS.get(self.experiment)
        if labels is None:
            return None
        return {"baseline": dict(labels[0]), "candidate": dict(labels[1])}

    # -- host cells

    def host_cells(self) -> dict[str, Any] | None:
        """The Host-cell block of §7.6, or None outside `host_cell_policy`."""
        if self.cell_rows is None:
            return None
        qualified = {(r.case_id, r.pair) for r in self.pairs if r.qualified}
        cand = [
            r for r in self.cell_rows if r.lane == "candidate" and (r.case_id, r.pair) in qualified
        ]
        base = [
            r for r in self.cell_rows if r.lane == "baseline" and (r.case_id, r.pair) in qualified
        ]
        observed = sum(1 for r in cand if r.composition_observed is True)
        summary = {
            "composition_allowed_samples": len(cand),
            "composition_observed": observed,
            "composition_not_observed": sum(1 for r in cand if r.composition_observed is False),
            "composition_unknown": sum(1 for r in cand if r.composition_observed is None),
            "single_call_samples_with_shared_cells": sum(
                1 for r in base if r.composition_observed is True
            ),
            "text": (
                f"composition observed in {observed} of {len(cand)} composition-allowed samples"
            ),
        }
        return {
            "source": "caller_ui_attestation",
            "independently_verified": False,
            "samples": [r.to_dict() for r in self.cell_rows],
            "summary": summary,
        }

    # -- serialization

    def to_dict(self) -> dict[str, Any]:
        """The report object of spec §7.1 (integers, strings, booleans and None only)."""
        ev = self.evidence
        out: dict[str, Any] = {
            "schema_version": 1,
            "kind": "paired_evidence_report",
            "experiment": ev.experiment,
            "basis": self.basis,
            "delta_name": DELTA if self.paired else None,
            "lanes": self.lanes,
            "metrics": list(TABLE_METRICS),
            "strict": self.strict.to_dict(),
            "instrumentation_changed_across_pairs": self.instrumentation_changed_across_pairs,
            "pairs": [r.to_dict() for r in self.pairs],
            "samples": [r.to_dict() for r in self.samples],
            "distributions": {
                scope: {
                    metric: {series: d.to_dict() for series, d in by_series.items()}
                    for metric, by_series in by_metric.items()
                }
                for scope, by_metric in self.distributions.items()
            },
            "tallies": (
                {
                    scope: {metric: t.to_dict() for metric, t in by_metric.items()}
                    for scope, by_metric in self.tallies.items()
                }
                if self.tallies is not None
                else None
            ),
            "host_cells": self.host_cells(),
            "hotspots": {
                "candidates": [h.to_dict() for h in self.hotspots],
                "not_evaluable": dict(self.not_evaluable),
            },
            "caveats": [{"id": cid, "text": text} for cid, text in self.caveats],
        }
        if not self.paired:
            out["repetitions"] = self.repetition_rows()
            identities = {(r.sample.variant, r.sample.surface) for r in self.samples}
            common = identities.pop() if len(identities) == 1 else (None, None)
            out["selection_variant"], out["selection_surface"] = common
        return out

    def to_json(self) -> str:
        """Canonical JSON of `to_dict()` (spec §7.1: serialized as evidence is, §3.1)."""
        return canonical_dumps(self.to_dict())

    def repetition_rows(self) -> list[dict[str, Any]]:
        """`tool_selection` rows (spec §7.9), ordered by case and then repetition."""
        rows = []
        for row in self.samples:
            s = row.sample
            inst = s.instrumentation
            rows.append(
                {
                    "case_id": s.case_id,
                    "repetition": s.repetition,
                    "qualified": (s.case_id, s.repetition) in self.qualified_repetitions,
                    "status": row.effective_status,
                    "instrumentation": list(inst) if isinstance(inst, tuple) else inst,
                    "metrics": {m: s.metrics.get(m) for m in TABLE_METRICS},
                }
            )
        order = {case_id: i for i, case_id in enumerate(self.scopes)}
        rows.sort(key=lambda r: (order.get(r["case_id"], len(order)), r["repetition"]))
        return rows

    # -- frames

    def pairs_frame(self):
        """One row per pair (spec §7.3); metric columns are nullable `Int64`."""
        import pandas as pd

        records = []
        for r in self.pairs:
            rec = {
                "case_id": r.case_id,
                "pair": r.pair,
                "order": ",".join(r.order),
                "instrumentation": _instrumentation_text(r.instrumentation),
                "qualified": r.qualified,
                "baseline_status": r.baseline_status,
                "candidate_status": r.candidate_status,
            }
            for m in TABLE_METRICS:
                b, c, d = r.values[m]
                rec[f"{m}.baseline"], rec[f"{m}.candidate"], rec[f"{m}.{DELTA}"] = b, c, d
            records.append(rec)
        columns = ["case_id", "pair", "order", "instrumentation", "qualified"]
        columns += ["baseline_status", "candidate_status"]
        columns += [f"{m}.{s}" for m in TABLE_METRICS for s in ("baseline", "candidate", DELTA)]
        frame = pd.DataFrame.from_records(records, columns=columns)
        dtypes = {c: "Int64" for c in columns[7:]}
        dtypes.update(
            pair="Int64",
            qualified="boolean",
            case_id="string",
            order="string",
            instrumentation="string",
            baseline_status="string",
            candidate_status="string",
        )
        return frame.astype(dtypes)

    def samples_frame(self):
        """One row per present sample in file order; metrics and counts are nullable `Int64`.

        `repair_turns_by_reason` becomes one `repair_turns_by_reason.<reason>` column per
        reason (an absent key is 0 when the map is known, `<NA>` when it is null), and
        `runtime_gates` one nullable boolean `runtime_gates.<name>` column per gate name seen.
        """
        import pandas as pd

        gate_names = sorted({name for r in self.samples for name in r.sample.runtime_gates})
        records = []
        for r in self.samples:
            s = r.sample
            rec = {
                "case_id": s.case_id,
                "pair": s.pair,
                "ordinal": s.ordinal,
                "repetition": s.repetition,
                "lane": s.lane,
                "variant": s.variant,
                "surface": s.surface,
                "policy": s.policy,
                "recorded_status": s.status,
                "effective_status": r.effective_status,
                "instrumentation": _instrumentation_text(s.instrumentation),
            }
            for m in TABLE_METRICS:
                rec[m] = s.metrics.get(m)
            by_reason = s.metrics.repair_turns_by_reason
            for reason in REPAIR_REASONS:
                rec[f"repair_turns_by_reason.{reason}"] = (
                    None if by_reason is None else by_reason.get(reason, 0)
                )
            for name in gate_names:
                rec[f"runtime_gates.{name}"] = s.runtime_gates.get(name)
            rec["efficiency_attested"] = r.efficiency_attested
            rec["cells_attested"] = r.cells_attested
            records.append(rec)
        id_cols = ["case_id", "pair", "ordinal", "repetition", "lane", "variant", "surface"]
        id_cols += ["policy", "recorded_status", "effective_status", "instrumentation"]
        reason_cols = [f"repair_turns_by_reason.{r}" for r in REPAIR_REASONS]
        gate_cols = [f"runtime_gates.{n}" for n in gate_names]
        columns = id_cols + list(TABLE_METRICS) + reason_cols + gate_cols
        columns += ["efficiency_attested", "cells_attested"]
        frame = pd.DataFrame.from_records(records, columns=columns)
        dtypes: dict[str, str] = {c: "string" for c in id_cols}
        dtypes.update({c: "Int64" for c in ("pair", "ordinal", "repetition")})
        dtypes.update({c: "Int64" for c in (*TABLE_METRICS, *reason_cols)})
        dtypes.update({c: "boolean" for c in (*gate_cols, "efficiency_attested", "cells_attested")})
        return frame.astype(dtypes)

    def distributions_frame(self):
        """Tidy distributions (spec §7.4): one row per scope, metric and series; `Int64` figures."""
        import pandas as pd

        keys = ["total", "observed_total", "p50", "p95", "samples", "missing"]
        rows = [
            {"scope": scope, "metric": metric, "series": series, **d.to_dict()}
            for scope, by_metric in self.distributions.items()
            for metric, by_series in by_metric.items()
            for series, d in by_series.items()
        ]
        frame = pd.DataFrame(rows, columns=["scope", "metric", "series", *keys])
        return frame.astype({k: "Int64" for k in keys})

    def tallies_frame(self):
        """Tidy tallies (spec §7.5): one row per scope and metric; empty for `tool_selection`."""
        import pandas as pd

        counts = ["n", "lower", "higher", "tied", "improved", "regressed", "unknown"]
        columns = ["scope", "metric", "direction", *counts, "text"]
        rows = [
            {"scope": scope, "metric": metric, **t.to_dict()}
            for scope, by_metric in (self.tallies or {}).items()
            for metric, t in by_metric.items()
        ]
        return pd.DataFrame(rows, columns=columns).astype({k: "Int64" for k in counts})

    def hotspots_frame(self):
        """Hotspot candidates (spec §7.7), one row each in rank order."""
        import pandas as pd

        columns = ["rank", "category", "case_id", "pair", "repetition", "lane", "count"]
        columns += ["effective_status", "label"]
        frame = pd.DataFrame([h.to_dict() for h in self.hotspots], columns=columns)
        return frame.astype({k: "Int64" for k in ("rank", "pair", "repetition", "count")})

    # -- rendering

    def published_style_table(self):
        """The design's per-pair table (spec §7.10) as a DataFrame of strings, one per cell."""
        import pandas as pd

        if not self.paired:
            raise ValueError("tool_selection evidence has no per-pair table")
        columns = (
            PUBLISHED_COLUMNS if self.experiment == "host_cell_policy" else PUBLISHED_COLUMNS[:3]
        )
        rows = []
        for r in self.pairs:
            row = {"Task": r.case_id, "Pair": str(r.pair)}
            for title, metric in columns:
                b, c, _ = r.values[metric]
                row[title] = f"{_fmt(b)} / {_fmt(c)}"
            rows.append(row)
        return pd.DataFrame(
            rows, columns=["Task", "Pair", *(t for t, _ in columns)], dtype="string"
        )

    def deltas_table(self):
        """`candidate_minus_baseline` for the published columns, one string per cell."""
        import pandas as pd

        columns = (
            PUBLISHED_COLUMNS if self.experiment == "host_cell_policy" else PUBLISHED_COLUMNS[:3]
        )
        rows = []
        for r in self.pairs:
            row = {"Task": r.case_id, "Pair": str(r.pair)}
            for title, metric in columns:
                row[title] = _fmt(r.values[metric][2])
            rows.append(row)
        return pd.DataFrame(
            rows, columns=["Task", "Pair", *(t for t, _ in columns)], dtype="string"
        )

    def render_text(self) -> str:
        """The text `evalkit pairs report` prints: tables, gate summary, cells, hotspots, caveats."""
        ev, st = self.evidence, self.strict
        lines = [
            f"experiment: {ev.experiment}  basis: {self.basis}  strict verdict: {st.verdict}",
            f"{st.unit}s: {st.required_units} required, {st.present_units} present, "
            f"{st.qualified_units} qualified",
        ]
        if self.paired:
            lanes = self.lanes
            lines.append(
                f"Each cell is baseline / candidate: {lanes['baseline']['label']} / "
                f"{lanes['candidate']['label']}."
            )
            lines += ["", render_published_style_table(self.published_style_table()), ""]
            lines.append(f"Deltas ({DELTA}):")
            lines += [render_published_style_table(self.deltas_table()), ""]
            unqualified = [f"{r.case_id} pair {r.pair}" for r in self.pairs if not r.qualified]
            if unqualified:
                lines += ["Not qualified: " + "; ".join(unqualified), ""]
        else:
            lines += ["", _render_repetitions(self.repetition_rows()), ""]
        cells = self.host_cells()
        if cells is not None:
            lines.append(
                f"Host cells ({cells['source']}, independently_verified=false): "
                f"{cells['summary']['text']}"
            )
            lines.append("")
        if self.hotspots:
            lines.append("Hotspot candidates (need inspection):")
            for h in self.hotspots:
                where = (
                    f"pair {h.pair} {h.lane}"
                    if h.pair is not None
                    else f"repetition {h.repetition}"
                )
                lines.append(f"  {h.rank}. {h.category}: {h.case_id} {where}, count {h.count}")
        else:
            lines.append("Hotspot candidates: none")
        lines += ["", "Caveats:"]
        lines += [f"- {text}" for _, text in self.caveats]
        if st.findings:
            lines += ["", "Strict findings:"]
            lines += [f"  {f.line()}" for f in st.findings]
        return "\n".join(lines) + "\n"


def _fmt(value: int | None) -> str:
    # §7.10: `,` thousands separator; unknown renders as `unknown`; never a float.
    return "unknown" if value is None else f"{value:,}"


def render_published_style_table(table) -> str:
    """Align a table of strings in plain text: text columns left, number columns right."""
    columns = list(table.columns)
    cells = [[str(c) for c in columns]] + [
        [str(v) for v in row] for row in table.itertuples(index=False)
    ]
    widths = [max(len(row[i]) for row in cells) for i in range(len(columns))]
    out = []
    for row in cells:
        parts = [
            cell.ljust(widths[i]) if i == 0 else cell.rjust(widths[i]) for i, cell in enumerate(row)
        ]
        out.append("  ".join(parts).rstrip())
    return "\n".join(out)


def _render_repetitions(rows: list[dict[str, Any]]) -> str:
    import pandas as pd

    table = pd.DataFrame(
        [
            {
                "Task": r["case_id"],
                "Repetition": str(r["repetition"]),
                "Status": r["status"],
                "Calls": _fmt(r["metrics"]["outer_calls"]),
                "Result bytes": _fmt(r["metrics"]["serialized_tool_result_bytes"]),
                "Job observes": _fmt(r["metrics"]["job_observe_calls"]),
            }
            for r in rows
        ],
        columns=["Task", "Repetition", "Status", "Calls", "Result bytes", "Job observes"],
    )
    return render_published_style_table(table)


# ----------------------------------------------------------------------------- building


def build_report(evidence: Evidence, *, manifest: CaseManifest | None = None) -> PairedReport:
    """Build the descriptive report of spec §7; the strict gate runs first and is embedded."""
    manifest = manifest or load_cases()
    strict = strict_check(evidence, manifest=manifest)
    required = manifest.experiment_cases(evidence.experiment)
    scopes = tuple(required)

    def case_rank(case_id: str) -> int:
        return manifest.case_rank(evidence.experiment, case_id)

    sample_rows = []
    for sample in evidence.samples():
        o = strict.outcome(sample)
        sample_rows.append(
            SampleRow(sample, o.effective_status, o.efficiency_attested, o.cells_attested)
        )
    effective = {
        (r.sample.case_id, r.sample.pair, r.sample.repetition, r.sample.lane): r.effective_status
        for r in sample_rows
    }

    pair_rows: list[PairRow] = []
    for entry in sorted(evidence.cases, key=lambda e: case_rank(e.case_id)):
        for pair in entry.pairs or ():
            base, cand = pair.lane("baseline"), pair.lane("candidate")
            present = [s for s in (base, cand) if s is not None]
            keys = {s.instrumentation_key for s in present}
            if len(keys) > 1:
                inst = None
            else:
                inst = (base or cand).instrumentation
            values = {}
            for m in TABLE_METRICS:
                b = base.metrics.get(m) if base else None
                c = cand.metrics.get(m) if cand else None
                values[m] = (b, c, _delta(b, c))
            pair_rows.append(
                PairRow(
                    case_id=entry.case_id,
                    pair=pair.pair,
                    order=pair.order,
                    instrumentation=inst,
                    qualified=strict.is_qualified(entry.case_id, pair.pair),
                    baseline_status=effective.get((entry.case_id, pair.pair, None, "baseline")),
                    candidate_status=effective.get((entry.case_id, pair.pair, None, "candidate")),
                    values=values,
                )
            )

    inst_keys = {s.instrumentation_key for s in evidence.samples()}
    changed = len(inst_keys) > 1

    # §7.4 distributions over qualified units; §7.5 tallies over qualified pairs.
    distributions: dict[str, dict[str, dict[str, Distribution]]] = {}
    tallies: dict[str, dict[str, Tally]] | None = {} if evidence.paired else None
    qualified_reps = frozenset(strict.qualified) if not evidence.paired else frozenset()
    for scope in (*scopes, "overall"):
        in_scope = (lambda c: c in required) if scope == "overall" else (lambda c, s=scope: c == s)
        distributions[scope] = {}
        if evidence.paired:
            rows = [r for r in pair_rows if r.qualified and in_scope(r.case_id)]
            tallies[scope] = {}
            for m in TABLE_METRICS:
                series = {
                    "baseline": [r.values[m][0] for r in rows],
                    "candidate": [r.values[m][1] for r in rows],
                    DELTA: [r.values[m][2] for r in rows],
                }
                distributions[scope][m] = {k: describe(v) for k, v in series.items()}
                tallies[scope][m] = tally(series[DELTA], DIRECTIONS[m])
        else:
            reps = [
                r.sample
                for r in sample_rows
                if in_scope(r.sample.case_id)
                and (r.sample.case_id, r.sample.repetition) in qualified_reps
            ]
            for m in TABLE_METRICS:
                distributions[scope][m] = {"value": describe([s.metrics.get(m) for s in reps])}

    cell_rows = None
    if evidence.experiment == "host_cell_policy":
        cell_rows = tuple(_cell_row(s) for s in evidence.samples())

    hotspots, not_evaluable = _hotspots(sample_rows, case_rank)

    caveats = list(CAVEATS)
    conditions = {
        "composition_permitted_not_required": evidence.experiment == "host_cell_policy",
        "nested_isolated": evidence.experiment == "nested_code_mode",
        "selection_admission_only": evidence.experiment == "tool_selection",
        "reconstructed_not_verifiable": evidence.provenance.reconstructed,
        "scripted_not_real_model": evidence.provenance.driver_kind == "scripted",
        "instrumentation_changed": changed,
    }
    caveats += [(cid, text) for cid, text in CONDITIONAL_CAVEATS if conditions[cid]]

    return PairedReport(
        evidence=evidence,
        strict=strict,
        scopes=scopes,
        pairs=tuple(pair_rows),
        samples=tuple(sample_rows),
        distributions=distributions,
        tallies=tallies,
        cell_rows=cell_rows,
        hotspots=hotspots,
        not_evaluable=not_evaluable,
        caveats=tuple(caveats),
        instrumentation_changed_across_pairs=changed,
        qualified_repetitions=qualified_reps,
    )


def _cell_row(sample: Sample) -> CellRow:
    m = sample.metrics
    beyond = None
    if m.outer_calls is not None and m.nonempty_cells is not None:
        if m.outer_calls - m.nonempty_cells >= 0:
            beyond = m.outer_calls - m.nonempty_cells
    counts = cell_counts(sample.host_cell_attestation)
    multi = counts.multi_call_cells if counts else None
    known = [v for v in (multi, beyond) if v is not None]
    observed = None if not known else any(v > 0 for v in known)
    return CellRow(
        case_id=sample.case_id,
        pair=sample.pair,
        lane=sample.lane,
        policy=sample.policy,
        outer_calls=m.outer_calls,
        nonempty_cells=m.nonempty_cells,
        empty_cells=m.empty_cells,
        calls_beyond_first_per_cell=beyond,
        multi_call_cells=multi,
        max_calls_per_cell=counts.max_calls_per_cell if counts else None,
        composition_observed=observed,
    )


def _hotspot_count(sample: Sample, category: str) -> int | None:
    m = sample.metrics
    if category == HOTSPOT_CATEGORIES[0]:
        by_reason = m.repair_turns_by_reason
        if by_reason is None:
            return None
        return by_reason.get("invalid_arguments", 0) + by_reason.get("tool_selection_repair", 0)
    if category == HOTSPOT_CATEGORIES[1]:
        return m.same_kind_serial_calls
    return m.observe_after_delivered_failure


def _hotspots(sample_rows, case_rank) -> tuple[tuple[Hotspot, ...], dict[str, int]]:
    """Hotspot candidates in the design's order (spec §7.7); counts of unevaluable samples."""
    found = []
    not_evaluable = dict.fromkeys(HOTSPOT_CATEGORIES, 0)
    lane_rank = {None: 0, "baseline": 1, "candidate": 2}
    for row in sample_rows:
        s = row.sample
        for ci, category in enumerate(HOTSPOT_CATEGORIES):
            count = _hotspot_count(s, category)
            if count is None:
                not_evaluable[category] += 1
            elif count > 0:
                key = (ci, -count, case_rank(s.case_id), s.unit or 0, lane_rank[s.lane])
                found.append((key, category, s, count, row.effective_status))
    found.sort(key=lambda item: item[0])
    hotspots = tuple(
        Hotspot(
            rank=i + 1,
            category=category,
            case_id=s.case_id,
            pair=s.pair,
            repetition=s.repetition,
            lane=s.lane,
            count=count,
            effective_status=status,
        )
        for i, (_, category, s, count, status) in enumerate(found)
    )
    return hotspots, not_evaluable
