"""Printing the trial sweep (`evalkit sweep DIR --layout harbor --profile sourcegraph`).

Text: the profile line, the per-arm comparison per suite (the reference's ARM COMPARISON block
with the profile's tool label), the per-task outcome table with its summary and statistics, the
paired cost/tokens/duration/tool-call view, read allocation per arm, and the accounting. JSON:
`session_rows` (one per run read: the baseline sweep's row keys `log` … `efficiency`, then
`suite`, `task`, `trial`, `reward`, `passed`, `tool_calls`, `tool_under_test_calls`,
`read_allocation_efficiency`, cost, tokens, duration), the top-level `outcomes` object of issue 14
Build 6, the comparisons, read allocation per arm, unmatched outcomes and the skipped files.
"""

from __future__ import annotations

from typing import Any

from evalkit.ecma import fix, grp, js_json, pct1, pl
from evalkit.errors import one_line
from evalkit.metrics.status import STATUSES
from evalkit.outputs import caveats
from evalkit.outputs.compare_text import format_comparison
from evalkit.outputs.cost_text import cost_lines
from evalkit.outputs.sweep_text import text_table
from evalkit.synthetic.harbor import is_synthetic_harbor
from evalkit.tables.outcomes import OutcomeTable
from evalkit.tables.quantile import median
from evalkit.tables.trials import TrialSweep

__all__ = [
    "render_trials_text",
    "trials_json_dict",
    "render_trials_json",
    "outcome_lines",
    "outcome_summary",
    "read_allocation_lines",
    "render_trials_markdown",
]

DASH = "—"
_SHOWN = 3  # files listed per skip reason unless --list-files
# Decimals of a per-task median delta: dollars to 4, tokens as integers, the rest to 1.
_DELTA_DIGITS = {"cost_usd": 4, "tokens": 0}


def _f(x: float | None, digits: int = 2) -> str:
    return DASH if x is None else fix(x, digits)


def _signed(x: float | None, digits: int = 2) -> str:
    if x is None:
        return DASH
    return ("+" if x > 0 else "") + fix(x, digits)


def _p_value(test: Any) -> str:
    if test.p_value is not None:
        return f"p = {fix(test.p_value, 4)}"
    return (
        f"no p-value: {test.n_nonzero} non-tied {pl(test.n_nonzero, 'task')} "
        f"(six are needed; the smallest p they could give is {fix(test.min_attainable_p, 4)})"
    )


def outcome_summary(t: OutcomeTable) -> list[str]:
    """k of n tasks helped / hurt / tied, and the exact test (or why it is withheld)."""
    n = t.complete
    out = [
        f"  {t.candidate} helps on {t.helps} of {n} {pl(n, 'task')}, hurts on {t.hurts}, ties on "
        f"{t.ties}; {t.incomplete} incomplete (an arm without an outcome)"
    ]
    if t.binary:
        out.append(f"  exact McNemar test (tasks that pass in one arm only): {_p_value(t.test)}")
    else:
        hl = (
            ""
            if t.hodges_lehmann is None
            else f"; Hodges–Lehmann delta {_signed(t.hodges_lehmann, 3)}"
        )
        out.append(f"  exact sign test on the task deltas: {_p_value(t.test)}{hl}")
    return out


def outcome_lines(t: OutcomeTable) -> list[str]:
    """The per-task outcome table, its summary and statistics."""
    header = ["task", f"{t.baseline} reward", "n", f"{t.candidate} reward", "n", "delta", "class"]
    rows = [
        [
            r.task,
            _f(r.baseline_reward),
            str(r.baseline_n),
            _f(r.candidate_reward),
            str(r.candidate_n),
            _signed(r.delta),
            r.cls,
        ]
        for r in t.tasks
    ]
    out = text_table(header, rows) if rows else ["  (no task has an outcome in either arm)"]
    out += [""] + outcome_summary(t)
    out += [
        "",
        f"  Cost, tokens, duration and tool calls per task ({t.candidate} minus {t.baseline}):",
    ]
    mh = ["figure", "tasks", f"{t.candidate} lower", "higher", "tied", "median delta", "sign test"]
    mrows = []
    for m in t.metrics:
        med = median([x.delta for x in m.tasks if x.delta is not None])
        digits = _DELTA_DIGITS.get(m.metric, 1)
        p = DASH if m.test.p_value is None else fix(m.test.p_value, 4)
        mrows.append(
            [m.label, str(m.lower + m.higher + m.tied), str(m.lower), str(m.higher), str(m.tied),
             _signed(med, digits), p]
        )  # fmt: skip
    out += text_table(mh, mrows)
    out.append(
        "  (a sign test needs six non-tied tasks; — means withheld. Cheaper is not better on its "
        "own: read it beside the outcomes. Cost is what the log records, else its tokens priced: "
        "see the accounting.)"
    )
    return out


def read_allocation_lines(read: Any) -> list[str]:
    """One session's read allocation (a `ReadAllocation`), labelled as evalkit's own, with its
    caveats: what `evalkit run --profile` prints under the report."""
    eff = read.efficiency
    head = (
        "Read allocation (evalkit's own metric, not the reference's): "
        + (
            "no file was read"
            if eff is None
            else f"{pct1(eff)} of {grp(read.attributed_chars)} chars read went to files the "
            f"answer cites ({read.files_cited}/{read.files_read} files)"
        )
        + f"; {grp(read.unattributed_chars)} chars of other retrieval results name no one file"
    )
    return [head] + [f"  - {c}" for c in caveats.READ_ALLOCATION_CAVEATS]


def choice_lines(t: Any) -> list[str]:
    """How the layout and the profile were chosen when no flag gave them (issue 23): one line
    each, naming the flag that overrides; nothing for what a flag gave."""
    out = []
    if (lc := getattr(t, "layout_choice", None)) is not None:
        out.append(lc.line())
    pc = getattr(t, "profile_choice", None)
    if pc is not None and pc.detected:
        out.append(pc.line())
    return out


def render_trials_text(t: TrialSweep, *, every_file: bool = False) -> str:
    """The trial sweep's report."""
    where = f"{t.layout.describe()} in {t.root}" if t.layout else str(t.root)
    out = [
        f"Trial sweep — {where}",
        f"Tool profile: {t.profile.describe()} — tool under test: {t.profile.label} "
        f"({', '.join(t.profile.tools.globs)})",
    ]
    out += choice_lines(t)
    if is_synthetic_harbor(t.root):
        out += ["", caveats.SYNTHETIC_HARBOR_CORPUS]
    parsed = t.parsed
    with_outcome = sum(1 for r in parsed if r.reward is not None or r.passed is not None)
    out += [
        "",
        f"{len(parsed)} {pl(len(parsed), 'run')} read ({with_outcome} with an outcome), arms: "
        f"{', '.join(t.arms) or 'none'}; suites: "
        f"{', '.join(sorted({r.suite or '(none)' for r in parsed})) or 'none'}",
    ]
    out += [""] + status_lines(t)
    prof = f"tool profile {t.profile.name}"
    if t.comparisons:
        out += [
            "",
            f"Arm comparison per suite ({prof}; the harness's ARM COMPARISON block):",
        ]
    for cmp in t.comparisons:
        explore = bool(t.profile.explore.globs)
        text = format_comparison(cmp, tool=t.profile.label, explore=explore, reference=False)
        out.append(text.rstrip("\n"))
        suite = [r for r in parsed if _suite_of(r) == cmp.directory]
        out += [f"  {line}" for line in t.left_out(suite)]
    out += [
        "",
        f"Outcomes — per task, {t.candidate or DASH} against {t.baseline or DASH} ({prof}, a run "
        f"passes at reward >= {fix(t.pass_threshold, 2)}):",
    ]
    if t.outcomes is None:
        out.append("  (two arms are needed for the outcome table; see --arms)")
    else:
        out += outcome_lines(t.outcomes)
        paired = [r for r in parsed if r.arm in (t.baseline, t.candidate)]
        out += [f"  {line}" for line in t.left_out(paired)]
    out += [
        "",
        "Read allocation — evalkit's own metric, not the reference's explore allocation: the share",
        "of chars of file reads (tool calls whose input names one file) that went to files the",
        f"final answer cites by path ({prof}):",
    ]
    rh = [
        "arm",
        "runs",
        "pooled",
        "median run",
        "chars read",
        "cited",
        "not attributable to a file",
    ]
    rrows = []
    for a in t.reads:
        med = median(a.per_run)
        rrows.append(
            [a.arm, str(a.runs), DASH if a.pooled is None else pct1(a.pooled),
             DASH if med is None else pct1(med), grp(a.attributed_chars), grp(a.cited_chars),
             grp(a.unattributed_chars)]
        )  # fmt: skip
    out += text_table(rh, rrows) if rrows else ["  (no run)"]
    out += [f"  {line}" for line in t.left_out()]
    out += [f"  - {c}" for c in caveats.READ_ALLOCATION_CAVEATS]
    out += [""] + _accounting(t, every_file=every_file)
    return _terminal_safe(out)


def _suite_of(r: Any) -> str:
    from evalkit.tables.trials import _group

    return _group(r)


def status_lines(t: TrialSweep) -> list[str]:
    """How the runs ended, per arm (`evalkit.metrics.status`): runs per status seen, the
    infra-error rate, and what the comparisons below leave out."""
    shown = [st for st in STATUSES if any(a.counts[st] for a in t.arm_status)] or ["ok"]
    keep = (
        "every run is kept (--include-failed)"
        if t.include_failed
        else "the comparisons below leave out runs that did not end ok (--include-failed keeps them)"
    )
    out = [f"Run status per arm — {keep}:"]
    header = ["arm", "runs", *shown, "infra-error rate"]
    rows = [
        [
            a.arm,
            str(a.runs),
            *(str(a.counts[st]) for st in shown),
            DASH if a.infra_error_rate is None else pct1(a.infra_error_rate),
        ]
        for a in t.arm_status
    ]
    out += text_table(header, rows) if rows else ["  (no run)"]
    failed = [r for r in t.parsed if r.run_status != "ok"]
    for r in failed[:_SHOWN]:
        out.append(f"    {r.log}: {r.run_status} — {r.status_detail or ''}".rstrip(" —"))
    if len(failed) > _SHOWN:
        out.append(f"    … and {len(failed) - _SHOWN} more (--json lists every run's status)")
    return out


def _terminal_safe(out: list[str]) -> str:
    """The report's lines joined, each with control characters and bytes that are not UTF-8
    escaped (run names come from path names), as the sweep's report does."""
    return "\n".join(one_line(line) for chunk in out for line in chunk.split("\n")) + "\n"


def _accounting(t: TrialSweep, *, every_file: bool) -> list[str]:
    acc = t.accounting
    counts = {s: sum(1 for _, st, _ in acc if st == s) for s in ("parsed", "crash", "skipped")}
    out = [
        f"Files: {len(acc)} entries accounted for — {counts['parsed']} read, {counts['crash']} in "
        f"runs that could not be read, {counts['skipped']} skipped"
    ]
    j = t.join
    rewarded = len(j.outcomes)
    out.append(f"  outcomes: {rewarded} {pl(rewarded, 'run')} joined to an outcome")
    out += cost_lines(t.cost_account, noun="compared run")
    out += [f"    no outcome: {log} ({why})" for log, why in j.missing]
    out += [f"    outcome row matching no run: {row}" for row in j.unmatched_rows]
    damaged = [d for r in t.rows for d in r.damage]
    if damaged:
        out.append(f"  damaged: {len(damaged)} {pl(len(damaged), 'file')} read over what survived")
        out += [f"    {path}: {what}" for path, what in damaged]
    types: dict[str, int] = {}
    for r in t.rows:
        for name, n in r.other_types:
            types[name] = types.get(name, 0) + n
    if types:
        listed = ", ".join(f"{name} {n}" for name, n in types.items())
        out.append(f"  event types kept but not read by the metrics: {listed}")
    groups: dict[tuple[str, str], list[str]] = {}
    for path, status, reason in acc:
        if status == "parsed":
            if every_file:
                groups.setdefault(("parsed", ""), []).append(path)
            continue
        groups.setdefault((status, reason or ""), []).append(path)
    for (status, reason), items in groups.items():
        out.append(f"  {status}: {reason}" if reason else f"  {status}:")
        if len(items) > _SHOWN + 1 and not every_file:
            out += [f"    {item}" for item in items[:_SHOWN]]
            out.append(f"    … and {len(items) - _SHOWN} more (--list-files lists them all)")
        else:
            out += [f"    {item}" for item in items]
    return out


def _md_table(header: list[str], rows: list[list[str]]) -> list[str]:
    def esc(x: str) -> str:
        return x.replace("|", "\\|")

    return [
        "| " + " | ".join(map(esc, header)) + " |",
        "|" + "|".join("---" for _ in header) + "|",
    ] + ["| " + " | ".join(map(esc, r)) + " |" for r in rows]


def render_trials_markdown(t: TrialSweep) -> str:
    """The trial sweep's tables as markdown: profile, outcomes, cost view, read allocation."""
    where = t.layout.describe() if t.layout else "the harness's layouts"
    out = [f"# Trial sweep — {t.root.name}/ ({where})", ""]
    if is_synthetic_harbor(t.root):
        out += [f"> {caveats.SYNTHETIC_HARBOR_CORPUS}", ""]
    out += [f"Tool profile: **{t.profile.describe()}** (tool under test: {t.profile.label}).", ""]
    out += ["## Run status per arm", ""]
    shown = [st for st in STATUSES if any(a.counts[st] for a in t.arm_status)] or ["ok"]
    out += _md_table(
        ["arm", "runs", *shown, "infra-error rate"],
        [
            [a.arm, str(a.runs), *(str(a.counts[st]) for st in shown),
             DASH if a.infra_error_rate is None else pct1(a.infra_error_rate)]
            for a in t.arm_status
        ],
    )  # fmt: skip
    left = [f"- {line}" for line in t.left_out()]
    if left:
        out += [
            "",
            "Left out of the tables below (runs that did not end ok; --include-failed keeps them):",
        ]
        out += left
    out.append("")
    o = t.outcomes
    out += ["## Outcomes per task", ""]
    if o is None:
        out.append("Two arms are needed for the outcome table.")
    else:
        out += _md_table(
            ["task", f"{o.baseline} reward", "n", f"{o.candidate} reward", "n", "delta", "class"],
            [
                [r.task, _f(r.baseline_reward), str(r.baseline_n), _f(r.candidate_reward),
                 str(r.candidate_n), _signed(r.delta), r.cls]
                for r in o.tasks
            ],
        )  # fmt: skip
        out += [""] + [line.strip() for line in outcome_summary(o)]
        out += ["", f"## Cost, tokens, duration, tool calls ({o.candidate} minus {o.baseline})", ""]
        out += _md_table(
            ["figure", "tasks", f"{o.candidate} lower", "higher", "tied", "median delta", "sign test p"],
            [
                [m.label, str(m.lower + m.higher + m.tied), str(m.lower), str(m.higher), str(m.tied),
                 _signed(median([x.delta for x in m.tasks if x.delta is not None]),
                         _DELTA_DIGITS.get(m.metric, 1)),
                 DASH if m.test.p_value is None else fix(m.test.p_value, 4)]
                for m in o.metrics
            ],
        )  # fmt: skip
        out += ["", "— : withheld (a sign test needs six non-tied tasks)."]
        out += [line.strip() for line in cost_lines(t.cost_account, noun="compared run")]
    out += ["", "## Read allocation per arm (evalkit's own metric)", ""]
    out += _md_table(
        ["arm", "runs", "pooled", "chars read", "cited", "not attributable to a file"],
        [
            [a.arm, str(a.runs), DASH if a.pooled is None else pct1(a.pooled),
             grp(a.attributed_chars), grp(a.cited_chars), grp(a.unattributed_chars)]
            for a in t.reads
        ],
    )  # fmt: skip
    out += [""] + [f"- {c}" for c in caveats.READ_ALLOCATION_CAVEATS]
    counts: dict[str, int] = {}
    for _, status, _ in t.accounting:
        counts[status] = counts.get(status, 0) + 1
    listed = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
    out += ["", f"Files: {len(t.accounting)} entries accounted for ({listed})."]
    return _terminal_safe(out)


def _row_json(r: Any) -> dict[str, Any]:
    f = r.figures
    return {
        "log": r.log,
        "pass": r.pass_,
        "repo": r.repo,
        "arm": r.arm,
        "run": r.run,
        "segments": None if f is None else f.segments,
        "calls": None if f is None else f.alloc_calls,
        "chars": None if f is None else f.alloc_envelope,
        "cited_chars": None if f is None else f.alloc_used,
        "efficiency": None
        if f is None or not f.alloc_envelope
        else f.alloc_used / f.alloc_envelope,
        "suite": r.suite,
        "task": r.task,
        "trial": r.trial,
        "reward": r.reward,
        "passed": r.passed,
        "outcome_source": r.outcome_source,
        "status": r.run_status,
        "status_detail": r.status_detail,
        "tool_calls": r.tool_calls,
        "tool_under_test_calls": r.tool_under_test_calls,
        "read_allocation_efficiency": r.read_allocation_efficiency,
        "cost_usd": r.cost_usd,
        "cost_source": r.cost_source,
        "recorded_cost_usd": r.recorded_cost_usd,
        "priced_cost_usd": r.priced_cost_usd,
        "tokens": r.tokens,
        "duration_s": r.duration_s,
    }


def trials_json_dict(t: TrialSweep) -> dict[str, Any]:
    """The `--json` document of the trial sweep."""
    empty = {
        "baseline": t.baseline,
        "candidate": t.candidate,
        "tasks": [],
        "helps": 0,
        "hurts": 0,
        "ties": 0,
        "incomplete": 0,
    }
    o = t.outcomes
    outcomes = o.to_dict() if o is not None else empty
    if o is not None:
        outcomes["test"] = {
            "method": o.test.method,
            "p_value": o.test.p_value,
            "min_attainable_p": o.test.min_attainable_p,
            "non_tied": o.test.n_nonzero,
            "note": o.test.reason,
            "hodges_lehmann": o.hodges_lehmann,
        }
    return {
        "synthetic": is_synthetic_harbor(t.root),
        "profile": t.profile.to_dict() | {"source": t.profile.source},
        "layout": None if t.layout is None else (t.layout.pattern or t.layout.name),
        "session_rows": [_row_json(r) for r in t.parsed],
        "include_failed": t.include_failed,
        "run_status": [
            {
                "arm": a.arm,
                "runs": a.runs,
                "counts": dict(a.counts),
                "infra_error_rate": a.infra_error_rate,
                "left_out": a.left_out,
            }
            for a in t.arm_status
        ],
        "outcomes": outcomes,
        "cost": t.cost_account.to_dict(),
        "comparisons": [c.to_dict() for c in t.comparisons],
        "read_allocation": [
            {
                "arm": a.arm,
                "runs": a.runs,
                "pooled": a.pooled,
                "attributed_chars": a.attributed_chars,
                "cited_chars": a.cited_chars,
                "unattributed_chars": a.unattributed_chars,
            }
            for a in t.reads
        ],
        "unmatched_outcome_rows": list(t.join.unmatched_rows),
        "runs_without_outcome": [{"log": log, "reason": why} for log, why in t.join.missing],
        "skipped": [
            {"log": path, "status": status, "reason": reason}
            for path, status, reason in t.accounting
            if status != "parsed"
        ],
        "damage": [d.to_dict() for r in t.rows for d in r.damage_counts],
    }


def render_trials_json(t: TrialSweep) -> str:
    """`--json` of a trial sweep, written as the sweep's is (`JSON.stringify`: a non-finite
    number is null, a name that is not valid UTF-8 keeps its `\\udcXX` escapes)."""
    return js_json(trials_json_dict(t), 2) + "\n"
