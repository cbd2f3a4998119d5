"""Sessions per agent and arm: what every agent's log carries (issue 15).

A corpus may mix Claude Code, Codex CLI and Inspect AI logs. The explore tables are Claude Code
metrics; this table groups every session by `agent` (and arm, where the path names one) with the
figures all agents have: sessions, median tool calls, median prompt and output tokens (the token
ledger), and outcomes where the logs record them. A figure no session of a group carries is
None, never 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from evalkit.corpus.discover import natural_key
from evalkit.corpus.records import SessionRecord
from evalkit.tables.quantile import median

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["AgentRow", "agent_table", "agent_frame", "has_other_agents"]

_AGENT_ORDER = ("claude-code", "codex", "inspect")


@dataclass(frozen=True)
class AgentRow:
    """One agent × arm group.

    Attributes:
        agent: `claude-code`, `codex` or `inspect`.
        arm: The arm label, None for sessions whose path names none.
        sessions: Sessions in the group (an Inspect sample counts once per epoch).
        tool_calls: Median tool calls per session.
        prompt_tokens: Median prompt tokens per session; None where no session has a ledger.
        output_tokens: Median output tokens per session; None likewise.
        outcomes: Sessions with a pass/fail outcome.
        passed: Of those, sessions that passed.
        reward: Mean reward over sessions with one; None when none has.
    """

    agent: str
    arm: str | None
    sessions: int
    tool_calls: float | None
    prompt_tokens: float | None
    output_tokens: float | None
    outcomes: int
    passed: int
    reward: float | None


def has_other_agents(records: Sequence[SessionRecord]) -> bool:
    """Whether any session was written by an agent other than Claude Code."""
    return any(r.agent != "claude-code" for r in records)


def _sessions(records: Sequence[SessionRecord]) -> list[tuple[str | None, dict]]:
    out: list[tuple[str | None, dict]] = []
    for r in records:
        if r.status in ("crash", "skipped"):
            continue
        if r.agent_sessions:
            out += [(r.arm, s) for s in r.agent_sessions]
        else:
            prompt, output = r.ledger if r.ledger is not None else (None, None)
            out.append(
                (
                    r.arm,
                    {
                        "agent": r.agent,
                        "tool_calls": r.tool_calls,
                        "prompt_tokens": prompt,
                        "output_tokens": output,
                    },
                )
            )
    return out


def agent_table(records: Sequence[SessionRecord]) -> tuple[AgentRow, ...]:
    """One row per agent and arm, agents in a fixed order, arms in natural order."""
    groups: dict[tuple[str, str | None], list[dict]] = {}
    for arm, s in _sessions(records):
        groups.setdefault((s["agent"], arm), []).append(s)

    def known(items: list[dict], key: str) -> list[float]:
        return [s[key] for s in items if s.get(key) is not None]

    rows = []
    order = sorted(
        groups,
        key=lambda k: (
            _AGENT_ORDER.index(k[0]) if k[0] in _AGENT_ORDER else len(_AGENT_ORDER),
            k[0],
            k[1] is not None,
            natural_key(k[1] or ""),
        ),
    )
    for agent, arm in order:
        items = groups[(agent, arm)]
        rewards = known(items, "reward")
        outcomes = [s["passed"] for s in items if s.get("passed") is not None]
        rows.append(
            AgentRow(
                agent=agent,
                arm=arm,
                sessions=len(items),
                tool_calls=median(known(items, "tool_calls")),
                prompt_tokens=median(known(items, "prompt_tokens")),
                output_tokens=median(known(items, "output_tokens")),
                outcomes=len(outcomes),
                passed=sum(1 for p in outcomes if p),
                reward=sum(rewards) / len(rewards) if rewards else None,
            )
        )
    return tuple(rows)


def agent_frame(rows: Sequence[AgentRow]) -> pd.DataFrame:
    """The agent table as a DataFrame (one row per agent × arm)."""
    import pandas as pd

    cols = [
        "agent",
        "arm",
        "sessions",
        "tool_calls",
        "prompt_tokens",
        "output_tokens",
        "outcomes",
        "passed",
        "reward",
    ]
    return pd.DataFrame([[getattr(r, c) for c in cols] for r in rows], columns=cols)
