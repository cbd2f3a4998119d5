"""Printing the generic comparison (`evalkit.tables.generic`): the report of a corpus without
explore calls (issue 23).

`generic_lines(cmp)` gives the lines: sessions and outcomes per agent × arm, sessions by status
(when the frames have a status), tool calls by family (evalkit's cross-agent scheme), tokens by
ledger column, and the lowest and highest sessions by cost and by reward. Figures are rounded
here only.
"""

from __future__ import annotations

from collections.abc import Sequence

from evalkit.ecma import fix, grp, jround
from evalkit.errors import one_line
from evalkit.outputs.cost_text import cost_lines
from evalkit.tables.generic import LEDGER, GenericComparison

__all__ = ["generic_lines"]

DASH = "—"
_LEDGER_NAMES = {
    "prompt_tokens": "prompt",
    "cache_read_tokens": "cache read",
    "cache_write_tokens": "cache write",
    "output_tokens": "output",
    "reasoning_tokens": "reasoning",
}


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], left: int = 2) -> list[str]:
    """Columns padded to their widest cell: the first `left` left-aligned, the rest right."""
    widths = [max(len(r[i]) for r in (header, *rows)) for i in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        parts = [
            c.ljust(w) if i < left else c.rjust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ]
        return ("  " + "  ".join(parts)).rstrip()

    return [line(header), *(line(r) for r in rows)]


def _usd(x: float | None) -> str:
    return DASH if x is None else "$" + fix(x, 2)


def _secs(x: float | None) -> str:
    return DASH if x is None else fix(x, 1)


def _tok(x: float | None) -> str:
    return DASH if x is None else grp(jround(x))


def generic_lines(cmp: GenericComparison) -> list[str]:
    """The generic comparison as report lines (no trailing blank line)."""
    by = cmp.by
    if not cmp.groups:
        return ["  (no session was read)"]
    out = [f"Sessions per agent × {by}: outcomes, cost and duration:"]
    rows = []
    for g in cmp.groups:
        passed = f"{g.passed} of {g.judged}" if g.judged else DASH
        reward = DASH if g.mean_reward is None else fix(g.mean_reward, 2)
        rows.append(
            [
                g.agent,
                g.arm,
                str(g.sessions),
                passed,
                reward,
                _usd(g.cost_usd),
                f"{g.priced} of {g.sessions}",
                _usd(g.median_cost_usd),
                _secs(g.median_duration_s),
            ]
        )
    header = [
        "agent",
        by,
        "sessions",
        "passed",
        "mean reward",
        "cost",
        "priced",
        "median cost",
        "median duration (s)",
    ]
    out += _table(header, rows)
    if cmp.cost is not None:
        out += cost_lines(cmp.cost)
    if cmp.has_status:
        out += ["", "Sessions by status:"]
        for g in cmp.groups:
            parts = " · ".join(f"{s} {n}" for s, n in g.statuses) or DASH
            out.append(f"  {g.agent} {g.arm}: {parts}")
    fams = [f for f, _ in cmp.groups[0].calls]
    tut = f" (tool_under_test = {cmp.tool_under_test})" if cmp.tool_under_test else ""
    out += ["", f"Tool calls by family{tut}:"]
    out += _table(
        ["agent", by, *fams], [[g.agent, g.arm, *(str(n) for _, n in g.calls)] for g in cmp.groups]
    )
    out += ["", "Tokens by ledger column (summed over the sessions):"]
    out += _table(
        ["agent", by, *(_LEDGER_NAMES[c] for c in LEDGER)],
        [[g.agent, g.arm, *(_tok(v) for _, v in g.tokens)] for g in cmp.groups],
    )
    if cmp.extremes:
        out += ["", "Lowest and highest sessions:"]
        for e in cmp.extremes:
            value = _usd(e.value) if e.what == "cost" else fix(e.value, 2)
            out.append(f"  {e.end} {e.what}: {value}  {one_line(e.log)}  ({e.agent}, {by} {e.arm})")
    return out
