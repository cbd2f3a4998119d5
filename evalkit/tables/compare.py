"""The ARM COMPARISON table of `compare-arms.mjs` (spec §7.2, §8.4), as figures.

Per arm: the runs found in one directory (§7.2), each reduced to its `RunFigures`, then every
row of the reference table: spans (`median [min–max]`) of behaviour and residual occupancy,
sufficiency pooled over calls, allocation pooled over bytes, and the contamination counts.
Nothing here is rounded; `evalkit.outputs.compare_text` prints it as the reference does.

Run hygiene is evalkit's own: by default no run is dropped (compare-arms.mjs only counts
non-success and raced runs); `exclude` drops `failed` (not ok), `raced` or `contaminated` (the
codegraph CLI returned output) runs and says how many each rule dropped.

    >>> from evalkit.tables.compare import compare_arms
    >>> cmp = compare_arms("data/corpus/cg22/ab-express", ["new", "baseline"])
    >>> cmp.arm("new").dur.median
    24.0
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from evalkit.corpus.discover import discover_runs
from evalkit.ecma import jround, number_str
from evalkit.errors import TranscriptError, UsageError
from evalkit.metrics.figures import BUCKETS, RunFigures
from evalkit.tables.quantile import median

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "EXCLUDE_RULES",
    "SPAN_ROWS",
    "Span",
    "ArmFigures",
    "Comparison",
    "parse_exclude",
    "select_runs",
    "arm_figures",
    "compare_arms",
    "arms_in",
    "read_run",
    "arms_frame",
]

# Run-hygiene rules, in the order a run is charged to one (a failed run that also raced counts
# as failed).
EXCLUDE_RULES = ("failed", "raced", "contaminated")

# The span rows of §8.4: (attribute of ArmFigures, printed label, value of one run).
SPAN_ROWS: tuple[tuple[str, str], ...] = (
    ("dur", "duration (s)"),
    ("tools", "tool calls"),
    ("reads", "Read"),
    ("grep", "Grep/Glob"),
    ("bash", "Bash"),
    ("cg", "codegraph calls"),
    ("ctx", "final context (tok)"),
    ("occ_cg", "codegraph residual (tok)"),
    ("occ_file", "file-access residual (tok)"),
    ("occ_self", "→ retrieval residual (tok)"),
    ("occ_share", "→ share of final context"),
    ("efficiency", "per-run efficiency"),
)


@dataclass(frozen=True)
class Span:
    """Median, min and max of one figure over an arm's runs (§8.4 `span`).

    Missing and non-finite values are dropped first; `n` counts what is left (the median and
    ends are None when it is 0). The median is the reference's: mean of the two middle values
    for an even count (§8.1).
    """

    median: float | None
    min: float | None
    max: float | None
    n: int

    @classmethod
    def of(cls, values: Iterable[float | None]) -> Span:
        vals = [v for v in values if v is not None and math.isfinite(v)]
        if not vals:
            return cls(None, None, None, 0)
        return cls(median(vals), min(vals), max(vals), len(vals))

    def to_dict(self) -> dict[str, Any]:
        return {"median": self.median, "min": self.min, "max": self.max, "n": self.n}

    def cell(self, f: Callable[[float], str] = lambda x: number_str(jround(x))) -> str:
        """compare-arms.mjs's `span(values, f)` text (§8.4): `—` for no value, `f(median)` for
        one or when both ends format the same, else `f(median) + " [" + f(min) + "–" + f(max) + "]"`.
        """
        if self.n == 0:
            return "—"
        mid = f(self.median)  # type: ignore[arg-type]
        if self.n == 1:
            return mid
        lo, hi = f(self.min), f(self.max)  # type: ignore[arg-type]
        return mid if lo == hi else f"{mid} [{lo}–{hi}]"


@dataclass(frozen=True)
class ArmFigures:
    """Every figure of one arm's column in the ARM COMPARISON table (§8.4).

    Attributes:
        label: The arm label.
        runs: Runs in the table (after any `exclude` rule).
        run_names: Their names (`new-1`, …), in run order.
        non_success: Runs whose result is not success (`ok` false).
        raced: Runs that hit the MCP cold-start race.
        dur … occ_share: Spans of the per-run figures (`occ_share` and `efficiency` in percent).
        efficiency: Span of per-run `used / envelope × 100` over runs with an envelope.
        answered: Σ answered explore calls.
        counts: Σ calls per sufficiency bucket, in bucket order.
        errors: Σ errored or unanswered explore calls.
        alloc_calls: Σ explore calls with at least one file section.
        alloc_used / alloc_envelope: Σ cited chars / Σ returned chars over runs with an envelope.
        cli_contaminated: Σ codegraph CLI calls that returned output.
        cli_calls: Σ codegraph CLI attempts.
        contaminated_runs: Runs with a CLI call that returned output.
        dropped: Runs each `exclude` rule dropped (every rule asked for, zeros included).
        crashed: `(run, reason)` for runs that could not be read (left out, never fatal).
        damaged: `(segment file, what was lost)` for damaged files of runs that were read.
    """

    label: str
    runs: int
    run_names: tuple[str, ...]
    non_success: int
    raced: int
    dur: Span
    tools: Span
    reads: Span
    grep: Span
    bash: Span
    cg: Span
    ctx: Span
    occ_cg: Span
    occ_file: Span
    occ_self: Span
    occ_share: Span
    efficiency: Span
    answered: int
    counts: dict[str, int]
    errors: int
    alloc_calls: int
    alloc_used: int
    alloc_envelope: int
    cli_contaminated: int
    cli_calls: int
    contaminated_runs: int
    dropped: dict[str, int] = field(default_factory=dict)
    crashed: tuple[tuple[str, str], ...] = ()
    damaged: tuple[tuple[str, str], ...] = ()

    @property
    def pooled_efficiency(self) -> float | None:
        """Σ used / Σ envelope × 100, None when nothing was returned (§8.1 pooling by bytes)."""
        return (self.alloc_used / self.alloc_envelope) * 100 if self.alloc_envelope else None

    def share(self, bucket: str) -> float | None:
        """A bucket's share of the answered calls, in percent (None when none was answered)."""
        return (self.counts[bucket] / self.answered) * 100 if self.answered else None

    def to_dict(self) -> dict[str, Any]:
        """The arm as `evalkit compare --json` prints it (unrounded; shares in percent)."""
        return {
            "label": self.label,
            "runs": self.runs,
            "run_names": list(self.run_names),
            "non_success": self.non_success,
            "raced": self.raced,
            **{
                ("occ_share_pct" if k == "occ_share" else "per_run_efficiency_pct")
                if k in ("occ_share", "efficiency")
                else k: getattr(self, k).to_dict()
                for k, _ in SPAN_ROWS
            },
            "sufficiency": {
                "answered": self.answered,
                "counts": dict(self.counts),
                "shares_pct": {b: self.share(b) for b in BUCKETS},
                "errors": self.errors,
            },
            "allocation": {
                "calls": self.alloc_calls,
                "used": self.alloc_used,
                "envelope": self.alloc_envelope,
                "pooled_efficiency_pct": self.pooled_efficiency,
            },
            "contamination": {
                "cli_returned_output": self.cli_contaminated,
                "cli_attempts": self.cli_calls,
                "contaminated_runs": self.contaminated_runs,
            },
            "dropped": dict(self.dropped),
            "crashed": [{"run": r, "reason": why} for r, why in self.crashed],
        }


@dataclass(frozen=True)
class Comparison:
    """The ARM COMPARISON of one directory.

    Attributes:
        directory: The directory as given (printed in the title).
        labels: Every label asked for, in order.
        arms: The arms with runs, in label order (the table's columns).
        missing: Labels without runs (the reference warns about each).
        exclude: The run-hygiene rules applied.
    """

    directory: str
    labels: tuple[str, ...]
    arms: tuple[ArmFigures, ...]
    missing: tuple[str, ...]
    exclude: tuple[str, ...] = ()

    def arm(self, label: str) -> ArmFigures:
        for a in self.arms:
            if a.label == label:
                return a
        raise KeyError(label)

    def to_dict(self) -> dict[str, Any]:
        return {
            "directory": self.directory,
            "labels": list(self.labels),
            "missing": list(self.missing),
            "exclude": list(self.exclude),
            "arms": [a.to_dict() for a in self.arms],
        }


def parse_exclude(text: str | None) -> tuple[str, ...]:
    """`raced,contaminated,failed` → the rules, in `EXCLUDE_RULES` order.

    Raises:
        UsageError: An unknown rule name.
    """
    if not text:
        return ()
    asked = [t.strip() for t in text.split(",") if t.strip()]
    unknown = [t for t in asked if t not in EXCLUDE_RULES]
    if unknown:
        raise UsageError(
            f"--exclude: unknown rule {unknown[0]!r} (choose from {', '.join(EXCLUDE_RULES)})"
        )
    return tuple(r for r in EXCLUDE_RULES if r in asked)


def _hit(rule: str, f: RunFigures) -> bool:
    if rule == "failed":
        return not f.ok
    if rule == "raced":
        return f.raced
    return f.cli_contaminated > 0


def select_runs(
    runs: Sequence[tuple[str, RunFigures]], exclude: Sequence[str] = ()
) -> tuple[list[tuple[str, RunFigures]], dict[str, int]]:
    """Drop the runs the `exclude` rules name; each dropped run is charged to its first rule."""
    dropped = dict.fromkeys(exclude, 0)
    kept = []
    for name, f in runs:
        rule = next((r for r in EXCLUDE_RULES if r in dropped and _hit(r, f)), None)
        if rule is None:
            kept.append((name, f))
        else:
            dropped[rule] += 1
    return kept, dropped


def arm_figures(
    label: str,
    runs: Sequence[tuple[str, RunFigures]],
    *,
    dropped: dict[str, int] | None = None,
    crashed: Sequence[tuple[str, str]] = (),
    damaged: Sequence[tuple[str, str]] = (),
) -> ArmFigures:
    """Aggregate one arm's runs into its column of the ARM COMPARISON table (§8.4)."""
    figs = [f for _, f in runs]
    with_env = [f for f in figs if f.alloc_envelope]
    counts = dict.fromkeys(BUCKETS, 0)
    for f in figs:
        for b in BUCKETS:
            counts[b] += f.counts.get(b, 0)
    spans = {k: Span.of(getattr(f, k) for f in figs) for k, _ in SPAN_ROWS if k != "efficiency"}
    return ArmFigures(
        label=label,
        runs=len(figs),
        run_names=tuple(n for n, _ in runs),
        non_success=sum(1 for f in figs if not f.ok),
        raced=sum(1 for f in figs if f.raced),
        efficiency=Span.of((f.alloc_used / f.alloc_envelope) * 100 for f in with_env),
        answered=sum(f.answered for f in figs),
        counts=counts,
        errors=sum(f.errors for f in figs),
        alloc_calls=sum(f.alloc_calls for f in figs),
        alloc_used=sum(f.alloc_used for f in with_env),
        alloc_envelope=sum(f.alloc_envelope for f in with_env),
        cli_contaminated=sum(f.cli_contaminated for f in figs),
        cli_calls=sum(f.cli_calls for f in figs),
        contaminated_runs=sum(1 for f in figs if f.cli_contaminated > 0),
        dropped=dict(dropped or {}),
        crashed=tuple(crashed),
        damaged=tuple(damaged),
        **spans,
    )


def read_run(
    segments: Sequence[str], problem: str | None = None, profile: Any = None
) -> tuple[RunFigures | None, str, list[tuple[str, str]]]:
    """Parse one run: `(figures, "", damage)`, or `(None, reason, [])` when it cannot be read.

    `profile` is a `ToolProfile` the run is read with (None: codegraph, the reference's)."""
    if problem is not None:
        return None, problem, []
    from evalkit.session import parse_session  # the parsing stack, only when a run is parsed

    try:
        if profile is None:
            session = parse_session(list(segments))
        else:
            session = parse_session(list(segments), profile=profile)
    except TranscriptError as exc:
        return None, str(exc), []
    except RecursionError:
        return None, f"{segments[0]}: input nested too deeply to parse", []
    damage = [(seg.path, d) for seg in session.transcript.segments if (d := seg.damage())]
    return session.figures, "", damage


_RUN_FILE = re.compile(r"^run-(?P<label>.+?)(?:-(?P<index>\d+))?\.jsonl\Z", re.S)
_TURN_FILE = re.compile(r"\.t\d+\.jsonl\Z")


def arms_in(directory: str | os.PathLike[str]) -> tuple[str, ...]:
    """The arm labels whose runs a directory holds (`run-<label>.jsonl`,
    `run-<label>-<i>.jsonl`), in name order; () when it cannot be listed. evalkit's own
    help, beside the reference's warning about a label without runs."""
    try:
        names = os.listdir(directory)
    except OSError:
        return ()
    labels = {m["label"] for n in names if not _TURN_FILE.search(n) and (m := _RUN_FILE.match(n))}
    return tuple(sorted(labels))


def compare_arms(
    directory: str | os.PathLike[str],
    labels: Sequence[str],
    *,
    exclude: Sequence[str] = (),
    name: str | None = None,
    profile: Any = None,
) -> Comparison:
    """`compare-arms.mjs <dir> <label> …` as figures (§7.2, §8.4).

    Args:
        directory: The arm directory.
        labels: Arm labels, in column order.
        exclude: Run-hygiene rules (`EXCLUDE_RULES`); default none, as the reference.
        name: How the table's title names the directory (default: `directory` as given, as
            the reference prints it).
        profile: A `ToolProfile` the runs are read with (None: codegraph, the reference's).

    A run that cannot be read is left out of its arm and listed in `ArmFigures.crashed`.

    Raises:
        UsageError: The directory does not exist; no label given.
    """
    if not labels:
        raise UsageError("at least one arm label is needed")
    arms, missing = [], []
    for label in labels:
        found = discover_runs(directory, label)
        if not found:
            missing.append(label)
            continue
        read, crashed, damaged = [], [], []
        for run in found:
            figs, why, damage = read_run(run.segments, run.problem, profile)
            damaged += damage
            if figs is None:
                crashed.append((run.name, why))
            else:
                read.append((run.name, figs))
        kept, dropped = select_runs(read, exclude)
        arms.append(arm_figures(label, kept, dropped=dropped, crashed=crashed, damaged=damaged))
    return Comparison(
        os.fspath(directory) if name is None else name,
        tuple(labels),
        tuple(arms),
        tuple(missing),
        tuple(exclude),
    )


def arms_frame(rows: Iterable[tuple[dict[str, Any], ArmFigures]]) -> pd.DataFrame:
    """One row per (group, arm): the group's id columns, then every figure of the arm.

    Spans give `<row>_median`, `<row>_min`, `<row>_max`, `<row>_n`; sufficiency gives
    `answered`, `next_<bucket>` and `errored`; allocation `alloc_calls`, `alloc_used`,
    `alloc_envelope`, `pooled_efficiency`; contamination `cli_returned_output`,
    `cli_attempts`; `dropped_<rule>`. Shares (`occ_share_*`) and efficiencies are fractions
    (the table prints them as percents); `headless_runs` counts the runs with figures.
    """
    import pandas as pd

    out = []
    for ids, a in rows:
        rec: dict[str, Any] = {**ids, "arm": a.label, "headless_runs": a.runs}
        rec["non_success"] = a.non_success
        rec["raced"] = a.raced
        for key, _ in SPAN_ROWS:
            s: Span = getattr(a, key)
            scale = 0.01 if key in ("efficiency", "occ_share") else 1  # fractions, not percents
            for stat in ("median", "min", "max"):
                v = getattr(s, stat)
                rec[f"{key}_{stat}"] = None if v is None else v * scale
            rec[f"{key}_n"] = s.n
        rec["answered"] = a.answered
        for b in BUCKETS:
            rec[f"next_{b}"] = a.counts[b]
        rec["errored"] = a.errors
        rec["alloc_calls"] = a.alloc_calls
        rec["alloc_used"] = a.alloc_used
        rec["alloc_envelope"] = a.alloc_envelope
        pooled = a.pooled_efficiency
        rec["pooled_efficiency"] = None if pooled is None else a.alloc_used / a.alloc_envelope
        rec["cli_returned_output"] = a.cli_contaminated
        rec["cli_attempts"] = a.cli_calls
        for rule in EXCLUDE_RULES:
            rec[f"dropped_{rule}"] = a.dropped.get(rule, 0)
        out.append(rec)
    return pd.DataFrame(out)
