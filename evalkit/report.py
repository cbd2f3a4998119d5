"""What `evalkit run` prints: the reference's blocks as text, and the same numbers as JSON.

The text blocks are the reference's exact formats (§3.6 allocation, §4.4 envelope); the JSON
object carries fractions, not percents, and keeps the pooled file order of §3.2 step 7.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from evalkit.allocation import Allocation, format_allocation
from evalkit.envelope import envelope_view, format_envelope
from evalkit.session import Session

__all__ = ["format_run", "allocation_json", "run_json"]


def format_run(
    session: Session, *, envelope: bool = False, answer_globs: Sequence[str] = ()
) -> str:
    """The allocation block, then the envelope block when asked for (`--envelope`/`--answer`)."""
    blocks = [format_allocation(session.allocation)]
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
    """The object `evalkit run --json` prints."""
    return {
        "answer_source": session.answer.source,
        "allocation": allocation_json(session.allocation),
    }
