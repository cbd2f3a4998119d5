"""`TokenLedger`: a session's tokens, in one meaning for every agent.

It is declared apart from the agent-neutral session (`evalkit.formats.common`, which re-exports
it) because Claude Code's token figures (`evalkit.metrics.tokens`) build one for every session a
sweep reads, and a sweep reads no other agent's files: importing the ledger alone leaves the
other agents' classes unbuilt.
"""

from __future__ import annotations

from dataclasses import dataclass

from evalkit.formats.frozen import quick_init

__all__ = ["TokenLedger"]


@quick_init
@dataclass(frozen=True)
class TokenLedger:
    """A session's tokens, in one meaning for every agent.

    Each agent counts tokens differently (Claude Code reports cache reads and writes beside
    `input_tokens`; Codex counts cached tokens inside `input_tokens` and reasoning inside
    `output_tokens`; Inspect changed its rule in 0.3.184), so each reader fills this ledger by its
    own format's rule (agent-formats §1.9, §2.4, §3.9, §5.3) and every table reads the ledger.
    `None` means the format does not carry the figure: never 0.

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

    def to_dict(self) -> dict[str, float | None]:
        """The six columns, in ledger order."""
        return {
            "prompt_tokens": self.prompt_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "cache_write_tokens": self.cache_write_tokens,
            "uncached_prompt_tokens": self.uncached_prompt_tokens,
            "output_tokens": self.output_tokens,
            "reasoning_tokens": self.reasoning_tokens,
        }
