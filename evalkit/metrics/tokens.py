"""The token ledger: one set of token columns for every agent's sessions (issue 15, agent-formats §5.3).

Each agent counts tokens differently (Claude Code reports cache reads and writes beside
`input_tokens`; Codex counts cached tokens inside `input_tokens` and reasoning inside
`output_tokens`), so each reader fills this ledger by its own format's rule and every table reads
the ledger. `None` means the format does not carry the figure: never 0.

`TokenLedger` itself is declared in `evalkit.formats.common`, because the Codex and Inspect readers
(in the formats layer, left of this one) fill it; it is re-exported here.
"""

from __future__ import annotations

from evalkit.formats.common import TokenLedger

__all__ = ["TokenLedger"]
