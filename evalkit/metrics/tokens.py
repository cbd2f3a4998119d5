"""The token ledger: one set of token columns for every agent's sessions (issue 15, agent-formats §5.3).

Each agent counts tokens differently (Claude Code reports cache reads and writes beside
`input_tokens`; Codex counts cached tokens inside `input_tokens` and reasoning inside
`output_tokens`), so each reader fills this ledger by its own format's rule and every table reads
the ledger. `None` means the format does not carry the figure: never 0.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["TokenLedger"]


@dataclass(frozen=True)
class TokenLedger:
    """A session's tokens, in one meaning for every agent.

    Attributes:
        prompt_tokens: Every input token of every request, cached or not (Claude Code: input +
            cache read + cache creation per unique message id; Codex: `input_tokens`).
        cache_read_tokens: The part of `prompt_tokens` read from a prompt cache.
        cache_write_tokens: The part of `prompt_tokens` written to a prompt cache.
        uncached_prompt_tokens: `prompt_tokens - cache_read_tokens`.
        output_tokens: Every generated token, reasoning included.
        reasoning_tokens: The part of `output_tokens` spent on reasoning.
    """

    prompt_tokens: float | None = None
    cache_read_tokens: float | None = None
    cache_write_tokens: float | None = None
    uncached_prompt_tokens: float | None = None
    output_tokens: float | None = None
    reasoning_tokens: float | None = None
