"""The cost account in words: the lines under every table that shows cost (issue 27)."""

from __future__ import annotations

from evalkit.ecma import pl
from evalkit.tables.costs import CostAccount

__all__ = ["cost_lines"]

_REASONS_SHOWN = 3


def cost_lines(a: CostAccount, *, noun: str = "session", indent: str = "  ") -> list[str]:
    """`cost: 3 of 6 sessions recorded by the log, 2 priced from their tokens, 1 unknown`, then
    `prices: genai-prices 0.2.3; recorded and priced differ by more than 5% in 1 of 3`, then,
    when some cost is unknown, why (the commonest reasons)."""
    if not a.sessions:
        return []
    out = [
        f"{indent}cost: {a.recorded} of {a.sessions} {pl(a.sessions, noun)} recorded by the log, "
        f"{a.priced} priced from their tokens, {a.unknown} unknown"
    ]
    detail = []
    if a.price_tables:
        detail.append(f"prices: {', '.join(a.price_tables)}")
    if a.compared:
        detail.append(
            f"recorded and priced differ by more than {round(a.limit * 100)}% in "
            f"{a.differ} of {a.compared}"
        )
    if detail:
        out.append(f"{indent}  {'; '.join(detail)}")
    for reason, n in a.reasons[:_REASONS_SHOWN]:
        out.append(f"{indent}  no cost for {n}: {reason}")
    if len(a.reasons) > _REASONS_SHOWN:
        out.append(f"{indent}  … and {len(a.reasons) - _REASONS_SHOWN} more reasons")
    return out
