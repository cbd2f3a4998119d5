"""How a set of sessions' costs were found: recorded, priced, neither, and where the two differ.

Every table that shows cost for a corpus prints this account beside it (the trial sweep, the
per-agent table, the paired statistics), so a reader knows how much of a total is what the logs
recorded and how much is evalkit's pricing of their token ledgers (issue 27).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from evalkit.metrics.costs import COST_DIFFERENCE_LIMIT

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["CostAccount", "cost_account", "frame_cost_account"]


@dataclass(frozen=True)
class CostAccount:
    """Sessions by where their cost came from.

    Attributes:
        sessions: Sessions counted.
        recorded: Sessions whose cost is the one their log records.
        priced: Sessions whose log records none: priced from their token ledger.
        unknown: Sessions with neither (`reasons` says why, most frequent first).
        compared: Sessions with both a recorded and a priced cost.
        differ: Of those, sessions whose two costs differ by more than `limit` of the recorded.
        limit: The share beyond which two costs differ (`COST_DIFFERENCE_LIMIT`).
        price_tables: The price tables (and user prices files) used, sorted.
        reasons: (why a session has no cost, sessions), most frequent first.
    """

    sessions: int
    recorded: int
    priced: int
    unknown: int
    compared: int
    differ: int
    limit: float = COST_DIFFERENCE_LIMIT
    price_tables: tuple[str, ...] = ()
    reasons: tuple[tuple[str, int], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "sessions": self.sessions,
            "recorded": self.recorded,
            "priced": self.priced,
            "unknown": self.unknown,
            "recorded_and_priced": self.compared,
            "differ_over_limit": self.differ,
            "limit": self.limit,
            "price_tables": list(self.price_tables),
            "reasons": [{"reason": r, "sessions": n} for r, n in self.reasons],
        }


def cost_account(
    sources: Sequence[Any],
    shares: Sequence[Any],
    tables: Iterable[Any] = (),
    reasons: Iterable[Any] = (),
) -> CostAccount:
    """The account of sessions given their `cost_source`, `cost_difference_share`,
    `price_table` and `price_reason` values (None / <NA> where absent)."""

    def known(x: Any) -> bool:
        if x is None or type(x).__name__ == "NAType":
            return False
        return not (isinstance(x, float) and x != x)

    src = [x if known(x) else None for x in sources]
    diff = [float(x) for x in shares if known(x)]
    why: dict[str, int] = {}
    for s, r in zip(src, reasons, strict=False):
        if s is None and known(r):
            why[str(r)] = why.get(str(r), 0) + 1
    return CostAccount(
        sessions=len(src),
        recorded=sum(1 for x in src if x == "recorded"),
        priced=sum(1 for x in src if x == "priced"),
        unknown=sum(1 for x in src if x is None),
        compared=len(diff),
        differ=sum(1 for x in diff if abs(x) > COST_DIFFERENCE_LIMIT),
        price_tables=tuple(sorted({str(t) for t in tables if known(t)})),
        reasons=tuple(sorted(why.items(), key=lambda kv: (-kv[1], kv[0]))),
    )


def frame_cost_account(sessions: pd.DataFrame) -> CostAccount:
    """The account of a sessions frame's rows (`evalkit.corpus.pricing` filled its columns)."""

    def col(name: str) -> list[Any]:
        return sessions[name].tolist() if name in sessions else [None] * len(sessions)

    priced = sessions["priced_cost_usd"].notna() if "priced_cost_usd" in sessions else None
    tables = col("price_table")
    if priced is not None:
        tables = [t for t, p in zip(tables, priced.tolist(), strict=True) if p]
    return cost_account(
        col("cost_source"), col("cost_difference_share"), tables, col("price_reason")
    )
