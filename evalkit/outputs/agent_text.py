"""What `evalkit run FILE` prints for a Codex CLI or Inspect AI file: a short summary per session.

Tool calls by family, tokens by token-ledger column, turns, compactions, duration, cost, outcome
and the final answer's length (issue 15). The explore metrics are Claude Code metrics and are
not printed for other agents; the summary says so. `agent_json` carries the same numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from evalkit.ecma import fix, grp, pl, utf16_len
from evalkit.formats.common import AgentSession
from evalkit.metrics.agent_occupancy import agent_occupancy
from evalkit.metrics.costs import SessionCost, agent_cost
from evalkit.metrics.occupancy import Occupancy

__all__ = ["AGENT_NAMES", "FORMAT_NAMES", "agent_json", "format_agent_sessions"]

AGENT_NAMES = {"codex": "Codex CLI", "inspect": "Inspect AI"}
FORMAT_NAMES = {
    "codex-rollout": "Codex CLI rollout",
    "codex-exec": "codex exec --json stream",
    "inspect": "Inspect AI eval log",
    "atif": "Harbor trajectory (ATIF)",
}
_LEDGER_LABELS = (
    ("prompt_tokens", "prompt (every input token, cached or not)"),
    ("cache_read_tokens", "  of which read from cache"),
    ("cache_write_tokens", "  of which written to cache"),
    ("uncached_prompt_tokens", "  uncached (prompt minus cache read)"),
    ("output_tokens", "output (reasoning included)"),
    ("reasoning_tokens", "  of which reasoning"),
)


def _num(x: float | None) -> str:
    if x is None:
        return "—"
    return grp(int(x)) if float(x).is_integer() else f"{x:,.2f}"


def _seconds(x: float | None) -> str:
    return "not recorded" if x is None else f"{x:.1f} s"


def _title(s: AgentSession) -> str:
    if s.sample_id is not None:
        return f"sample {s.sample_id}, epoch {s.epoch}"
    return f"session {s.session_id or '(no id)'}"


def _priced_line(cost: SessionCost) -> str:
    """`  priced from the tokens: $0.0123 (genai-prices 0.2.3, prices of 2030-01-01)`, or why
    not (issue 27)."""
    if cost.priced_cost_usd is None:
        return f"  priced from the tokens: not priced ({cost.reason})"
    day = cost.price_date.isoformat() if cost.price_date else "the latest"
    line = f"  priced from the tokens: ${cost.priced_cost_usd:.4f} ({cost.price_table}, prices of {day})"
    if cost.lower_bound:
        line += ", a lower bound"
    return line


def _format_one(s: AgentSession, prices: Any = None) -> list[str]:
    lines = [_title(s)]
    facts = [f"model {s.model or 'not recorded'}"]
    if s.turns is not None:
        facts.append(f"{s.turns} {pl(s.turns, 'turn')}")
    if s.aborted_turns:
        facts.append(f"{s.aborted_turns} aborted")
    if s.compactions is not None:
        facts.append(f"{s.compactions} {pl(s.compactions, 'compaction')}")
    if s.requests is not None:
        facts.append(f"{len(s.requests)} model {pl(len(s.requests), 'request')}")
    lines.append("  " + ", ".join(facts))
    lines.append(
        f"  duration {_seconds(s.duration_s)}, cost "
        + ("not recorded" if s.cost_usd is None else f"${s.cost_usd:.4f}")
    )
    lines.append(_priced_line(agent_cost(s, prices=prices)))
    n = len(s.tool_calls)
    by = ", ".join(f"{fam} {k}" for fam, k in s.calls_by_family().items())
    errored = s.errored_calls
    calls = f"  tool calls: {n}" + (f" ({by})" if by else "")
    if errored:
        calls += f"; {errored} errored"
    if s.unfinished_calls:
        calls += f"; {s.unfinished_calls} started but never completed"
    lines.append(calls)
    lines.append("  tokens:")
    ledger = s.tokens.to_dict()
    width = max(len(label) for _, label in _LEDGER_LABELS)
    for key, label in _LEDGER_LABELS:
        lines.append(f"    {label.ljust(width)}  {_num(ledger[key]).rjust(12)}")
    if s.requests:
        prompts = [r.prompt_tokens for r in s.requests]
        window = f" of a {grp(int(s.context_window))}-token window" if s.context_window else ""
        lines.append(
            f"  largest prompt {_num(max(prompts))}{window}; last prompt {_num(prompts[-1])}"
        )
    if (o := agent_occupancy(s)) is not None:
        lines += _residual_lines(o)
    if s.reward is not None or s.passed is not None:
        passed = "—" if s.passed is None else ("yes" if s.passed else "no")
        lines.append(f"  outcome: reward {_num(s.reward)}, passed {passed}")
    chars = utf16_len(s.final_answer)
    lines.append(f"  final answer: {grp(chars)} {pl(chars, 'char')} ({s.final_answer_source})")
    if s.contains_parent_copy:
        lines.append(
            "  note: a forked session whose parent's file was not found: the copied parent "
            "lines are counted in the numbers above"
        )
    return lines


def _retrieval(o: Occupancy) -> int:
    return o.residual[o.tool_family] + o.residual_file_access


def _residual_lines(o: Occupancy) -> list[str]:
    """The Codex rollout residual (evalkit's analogue of the Claude Code one), in two lines."""
    measured = "measured" if o.calibrated else "not measurable here, 3.0 assumed"
    return [
        "  tool output still in the window at the end (evalkit's estimate from the prompt sizes):",
        f"    {o.tool_family} {_num(o.residual[o.tool_family])}, file access "
        f"{_num(o.residual_file_access)}, other {_num(o.residual['other'])} tokens; retrieval "
        f"residual {_num(_retrieval(o))} of a final context of {_num(o.final_context)}",
        f"    {fix(o.chars_per_token, 2)} chars per token {measured}, {_num(o.evicted)} tokens "
        "evicted",
    ]


def format_agent_sessions(
    path: str, sessions: Sequence[AgentSession], *, prices: Any = None
) -> str:
    """The summary of every session of one file, without the final newline; `prices` (user
    prices) price the tokens of a model the table does not know."""
    if not sessions:
        return f"{path}: no sessions"
    fmt = sessions[0].format
    head = f"{FORMAT_NAMES.get(fmt, fmt)} — {path}"
    if len(sessions) > 1:
        head += f" ({len(sessions)} sessions)"
    lines = [head, ""]
    for s in sessions:
        lines += _format_one(s, prices) + [""]
    agent = AGENT_NAMES.get(sessions[0].agent, sessions[0].agent)
    if any(agent_occupancy(s) is not None for s in sessions):
        lines.append(
            f"Explore allocation and sufficiency are Claude Code metrics: not computed for {agent}. "
            "The residual is evalkit's own analogue of the Claude Code one."
        )
    else:
        lines.append(
            "Explore allocation, sufficiency and occupancy are Claude Code metrics: not computed "
            f"for {agent}."
        )
    return "\n".join(lines)


def _session_json(s: AgentSession, prices: Any = None) -> dict[str, Any]:
    cost = agent_cost(s, prices=prices).to_dict()
    return {
        "session_id": s.session_id,
        "sample_id": s.sample_id,
        "epoch": s.epoch,
        "model": s.model,
        "turns": s.turns,
        "aborted_turns": s.aborted_turns,
        "compactions": s.compactions,
        "requests": len(s.requests) if s.requests is not None else None,
        "prompt_sizes": [r.prompt_tokens for r in s.requests] if s.requests is not None else None,
        "context_window": s.context_window,
        "duration_s": s.duration_s,
        "cost_usd": s.cost_usd,
        "priced_cost_usd": cost["priced_cost_usd"],
        "cost_source": cost["cost_source"],
        "price_reason": cost["price_reason"],
        "price_table": cost["price_table"],
        "price_date": cost["price_date"],
        "started_at": s.started_at,
        "tool_calls": len(s.tool_calls),
        "tool_calls_by_family": s.calls_by_family(),
        "errored_tool_calls": s.errored_calls,
        "unfinished_tool_calls": s.unfinished_calls,
        "tokens": s.tokens.to_dict(),
        "reported_total_tokens": s.reported_total_tokens,
        "reward": s.reward,
        "passed": s.passed,
        "final_answer_chars": utf16_len(s.final_answer),
        "final_answer_source": s.final_answer_source,
        "parent_id": s.parent_id,
        "contains_parent_copy": s.contains_parent_copy,
        "excluded_copied_lines": s.excluded_copied_lines,
        "occupancy": _occupancy_json(s),
    }


def _occupancy_json(s: AgentSession) -> dict[str, Any] | None:
    """The Codex rollout residual (None without per-request prompt sizes)."""
    o = agent_occupancy(s)
    if o is None:
        return None
    return {**o.to_dict(), "retrieval_residual": _retrieval(o), "window_tokens": o.window_tokens}


def agent_json(
    path: str, sessions: Sequence[AgentSession], *, prices: Any = None
) -> dict[str, Any]:
    """The numbers of `format_agent_sessions` as one JSON-able object (`evalkit run --json`)."""
    return {
        "file": path,
        "agent": sessions[0].agent if sessions else None,
        "format": sessions[0].format if sessions else None,
        "sessions": [_session_json(s, prices) for s in sessions],
    }
