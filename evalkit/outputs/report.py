"""What `evalkit run` prints: the reference's per-run report as text, and the numbers as JSON.

The report is the reference's, block for block and character for character (§1.12): the header
and tool listing (§1.11), occupancy (§6.8), sufficiency (§5.8), allocation (§3.6) and, on request,
the envelope view (§4.4). The JSON object carries fractions, not percents, and keeps the pooled
file order of §3.2 step 7.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from evalkit.allocation import Allocation, format_allocation
from evalkit.envelope import envelope_view, format_envelope
from evalkit.occupancy import format_occupancy
from evalkit.session import Session
from evalkit.sufficiency import format_sufficiency
from evalkit.summary import format_run_header

__all__ = ["format_run", "allocation_json", "run_json"]


def format_run(
    session: Session,
    *,
    brief: bool = False,
    envelope: bool = False,
    answer_globs: Sequence[str] = (),
) -> str:
    """The reference's per-run report (§1.12), without the final newline.

    Header and tool listing (its numbered lines dropped under `brief`), occupancy, sufficiency and allocation blocks,
    then the envelope block when asked for (`envelope` or `answer_globs`). The first line is
    empty, as in the reference.
    """
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
