"""What `evalkit run` prints: the reference's per-run report as text, and the numbers as JSON.

`format_interactive` prints the interactive session report of `evalkit session` (§1.10).

The report is the reference's, block for block and character for character (§1.12): the header
and tool listing (§1.11), occupancy (§6.8), sufficiency (§5.8), allocation (§3.6) and, on request,
the envelope view (§4.4). The JSON object carries fractions, not percents, and keeps the pooled
file order of §3.2 step 7.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from evalkit.ecma import fix, pl, printable, rj
from evalkit.errors import one_line
from evalkit.metrics.allocation import Allocation, format_allocation
from evalkit.metrics.envelope import envelope_view, format_envelope
from evalkit.metrics.occupancy import format_occupancy
from evalkit.metrics.sufficiency import format_sufficiency
from evalkit.metrics.summary import format_run_header
from evalkit.session import InteractiveSession, Session

__all__ = ["format_run", "allocation_json", "run_json", "format_interactive"]


def format_run(
    session: Session | InteractiveSession,
    *,
    brief: bool = False,
    envelope: bool = False,
    answer_globs: Sequence[str] = (),
) -> str:
    """The reference's per-run report (§1.12), without the final newline.

    Header and tool listing (its numbered lines dropped under `brief`), occupancy, sufficiency and allocation blocks,
    then the envelope block when asked for (`envelope` or `answer_globs`). The first line is
    empty, as in the reference.

    An `InteractiveSession` gets the reference's session report instead (`format_interactive`,
    §1.10): the reference computes no occupancy and no envelope view for it, so `brief`,
    `envelope` and `answer_globs` do not apply.
    """
    if isinstance(session, InteractiveSession):
        return format_interactive(session)
    blocks = [
        format_run_header(session.summary, session.transcript.paths, brief=brief),
        format_occupancy(session.occupancy),
        format_sufficiency(session.sufficiency),
        format_allocation(session.allocation),
    ]
    if envelope or answer_globs:
        view = envelope_view(session.explore_texts, answer_globs)
        blocks.append(format_envelope(view))
    return "\n\n".join(blocks)


def allocation_json(a: Allocation) -> dict[str, Any]:
    """The `allocation` object of `evalkit run --json` (fractions; pooled files largest first)."""
    return {
        "calls": [
            {
                "index": c.index,
                "chars": c.envelope,
                "cited_chars": c.used,
                "path_cited_chars": c.used_path,
                "files": len(c.files),
                "cited_files": c.cited_files,
            }
            for c in a.calls
        ],
        "chars": a.envelope,
        "cited_chars": a.used,
        "path_cited_chars": a.used_path,
        "efficiency": a.efficiency,
        "path_efficiency": a.efficiency_path,
        "files": [
            {"path": f.path, "chars": f.chars, "calls": f.calls, "via": f.via, "symbol": f.symbol}
            for f in a.files
        ],
        "files_returned": a.files_returned,
        "files_cited": a.files_used,
        "has_answer": a.has_answer,
    }


def run_json(session: Session) -> dict[str, Any]:
    """The object `evalkit run --json` prints (token figures rounded as the reference rounds)."""
    return {
        "answer_source": session.answer.source,
        "allocation": allocation_json(session.allocation),
        "sufficiency": session.sufficiency.to_dict(),
        "occupancy": session.occupancy.to_dict(),
    }


def _fmt_counts(counts: dict[str, int]) -> str:
    if not counts:
        return "    (none)"
    ranked = sorted(counts.items(), key=lambda kv: -kv[1])  # stable: ties keep first-seen order
    return "\n".join(f"    {rj(str(n), 3)}  {name}" for name, n in ranked)


def _k(n: float) -> str:
    return fix(n / 1000, 1) + "k"


def format_interactive(s: InteractiveSession) -> str:
    """The reference's interactive report (§1.10), character for character."""
    n = len(s.subagents)
    assert s.sufficiency is not None and s.allocation is not None
    out = [
        f"session: {one_line(s.session_id)}",  # a hostile file name stays one line
        "",
        "MAIN thread tools:",
        _fmt_counts(s.main_counts),
        "",
        f"SUBAGENT tools ({n} {pl(n, 'subagent transcript')}):",
        _fmt_counts(s.subagent_counts),
        "",
        f"VERDICT: codegraph_explore used {s.explore_calls}x | Read {s.reads} | "
        f"Grep/Bash {s.grep_bash}",
        f"TOKENS: gen {_k(s.gen_tokens)} | fresh-in {_k(s.fresh_tokens)} | cached-in "
        f"{_k(s.cached_tokens)} | billable≈ {_k(s.gen_tokens + s.fresh_tokens)}",
        "",
        format_sufficiency(s.sufficiency, indent=""),
        "",
        format_allocation(s.allocation, indent=""),
    ]
    return printable("\n".join(out))
