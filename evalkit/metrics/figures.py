"""One run's figures as the arm comparison and the campaign tables read them (spec §8.4, §8.5),
and the sufficiency buckets (§5.1) its `counts` are keyed by.

A plain record of numbers, built by `evalkit.session.run_figures` from a parsed session and kept
in the corpus store as a payload; in a module of its own so that reading stored figures back
(a warm sweep) does not import the parsing stack.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from evalkit.formats.frozen import quick_init

__all__ = ["RunFigures", "BUCKETS", "BUCKET_LABELS"]

# §5.1, worst to best: key → (printed label, printed meaning). The order is the printed order and
# the order of `Sufficiency.counts`.
BUCKET_LABELS: dict[str, tuple[str, str]] = {
    "explore_again": ("explore again", "insufficient: did not answer"),
    "read_returned": ("Read a file we returned", "allocation: right file, wrong bytes"),
    "read_missed": ("Read a file we did not return", "recall: file never surfaced"),
    "search": ("Grep/Glob", "recall (weak): still hunting for the file"),
    "sufficient": ("moved on / answered", "sufficient"),
}
BUCKETS: tuple[str, ...] = tuple(BUCKET_LABELS)


@quick_init
@dataclass(frozen=True, slots=True)
class RunFigures:
    """One run as `compare-arms.mjs` and `parse-bench-readme.mjs` read it (§8.4, §8.5).

    Every field comes from one metric of the session (§1.11, §3, §5, §6); the arm and campaign
    tables aggregate these and nothing else.

    Attributes:
        dur: Σ result `duration_ms` / 1000.
        tools, reads, grep, bash, cg: Tool calls (not ToolSearch), Read, Grep + Glob, Bash,
            calls of tools whose name contains `codegraph` (§1.11).
        turns: Requests (distinct assistant message ids).
        ctx, ctx_base: Final and first request's context (§6.7).
        occ_cg, occ_file: Residual codegraph and file-access tokens at the end (§6.7).
        answered, counts, errors: Sufficiency: answered explore calls, calls per bucket,
            errored or unanswered calls (§5.7).
        alloc_used, alloc_envelope, alloc_calls: Allocation: cited chars, returned chars and
            calls with a file section (§3.5).
        cli_calls, cli_contaminated: codegraph CLI attempts via Bash, and those that returned
            output (§1.11).
        ok: Every result event succeeded (and there is one).
        raced: A tool result hit the MCP cold-start race.
        processed, processed_message_usage: Tokens processed, reference and later definition.
        cost: Σ `total_cost_usd` (the reference's sum).
        segments: Segment files.
    """

    dur: float
    tools: int
    reads: int
    grep: int
    bash: int
    cg: int
    turns: int
    ctx: float
    ctx_base: float
    occ_cg: int
    occ_file: int
    answered: int
    counts: dict[str, int]
    errors: int
    alloc_used: int
    alloc_envelope: int
    alloc_calls: int
    cli_calls: int
    cli_contaminated: int
    ok: bool
    raced: bool
    processed: float
    processed_message_usage: float
    cost: float
    segments: int

    @property
    def occ_self(self) -> int:
        """The retrieval residual: codegraph + file-access residual tokens (§8.4)."""
        if self.occ_cg is None or self.occ_file is None:  # another agent's run without requests
            return None  # type: ignore[return-value]
        return self.occ_cg + self.occ_file

    @property
    def occ_share(self) -> float:
        """`occ_self / ctx × 100`, 0 when the final context is 0 (§8.4)."""
        if self.occ_self is None:  # another agent's run without requests
            return None  # type: ignore[return-value]
        return (self.occ_self / self.ctx) * 100 if self.ctx else 0

    def to_payload(self) -> dict[str, Any]:
        """A JSON-able dict (the sweep cache stores it)."""
        return {f: getattr(self, f) for f in self.__dataclass_fields__}

    @classmethod
    def from_payload(cls, payload: dict[str, Any]) -> RunFigures:
        return cls(**{f: payload[f] for f in cls.__dataclass_fields__})
