"""A session's cost for every agent: recorded where the log records one, priced where not (issue 27).

`recorded_cost_usd` keeps what the log says: Claude Code's `result.total_cost_usd` (evalkit's
session figure, `ClaudeCodeTokens.cost`: the last segment's when totals carry over `--resume`),
Inspect's `total_cost` where Inspect filled it for every model. Codex rollouts, `exec --json`
streams and Claude Code interactive logs record none. `priced_cost_usd` prices the token ledger
per model (`evalkit.metrics.prices`). `cost_usd` is the recorded cost where there is one, else
the priced one, and `cost_source` says which (`recorded`, `priced`, None when neither). Where both
exist their difference is kept, so a stale price table or an unusual plan shows as a difference
(`COST_DIFFERENCE_LIMIT`), never silently inside a total.

The ledger per model, by agent (agent-formats §1.9, §2.4, §3.9, §5.3):

* Claude Code: `result.modelUsage` per model when the session has it (every thread, output
  final); the 1-hour cache writes and each model's largest request prompt from the assistant
  messages (each `message.id` once). Without modelUsage (interactive logs, a run cut before its
  result) the ledger is summed over the messages, each id once, its output the largest
  per-message `output_tokens` seen: streamed snapshots, so a lower bound, said so in the notes.
* Codex rollout: the session's ledger under the model of its last `turn_context`, priced request
  by request where the price has long-context tiers (`AgentSession.requests`); a session that
  switched models has each model's requests apart (`AgentSession.models`).
* `codex exec --json`: the last `turn.completed` totals; the stream names no model, so the caller
  passes it (`model=`, e.g. harbor's `config.agent.model_name`), else `<NA>`.
* Inspect: each model of the sample's `model_usage` apart (`provider/model`; the provider picks
  the table's provider): the solver's and a grader's.
* ATIF: the trajectory's `final_metrics` totals under `agent.model_name`.

A session priced from several models is `<NA>` when any model with tokens cannot be priced: a
partial sum would read as the whole cost.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING, Any

from evalkit.formats.claude_code.transcripts import message_key
from evalkit.formats.common import AgentSession, number
from evalkit.metrics.cost_columns import COST_COLUMNS, MODEL_COST_COLUMNS
from evalkit.metrics.prices import (
    ModelLedger,
    PricedModel,
    RequestTokens,
    UserPrices,
    price_model,
    table_version,
)
from evalkit.metrics.tokens import ClaudeCodeTokens

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "COST_COLUMNS",
    "MODEL_COST_COLUMNS",
    "COST_DIFFERENCE_LIMIT",
    "COST_SOURCES",
    "SessionCost",
    "session_cost",
    "claude_code_ledgers",
    "claude_code_cost",
    "claude_code_date",
    "agent_ledgers",
    "agent_cost",
    "parse_started_at",
]

COST_SOURCES = ("recorded", "priced")
# The sweep's accounting counts sessions whose recorded and priced costs differ by more than this
# share of the recorded cost (issue 27).
COST_DIFFERENCE_LIMIT = 0.05


@dataclass(frozen=True)
class SessionCost:
    """One session's cost: recorded, priced, the one to use, and how they differ.

    Attributes:
        priced_cost_usd: Σ over the session's models of their priced cost; None when a model
            with tokens cannot be priced (`reason` says why).
        recorded_cost_usd: What the log says the session cost; None when it says nothing.
        cost_usd: `recorded_cost_usd` where there is one, else `priced_cost_usd`.
        cost_source: `recorded`, `priced`, or None when there is neither.
        cost_difference_usd: recorded − priced, where both exist.
        cost_difference_share: (recorded − priced) / recorded, where both exist and the recorded
            cost is not 0.
        models: Each model's priced cost, first-seen order.
        reason: Why the session is not priced, in words (None when priced).
        notes: What the priced figure assumes (from every model, each once).
        price_table: The price table and version used (`genai-prices 0.2.3`), and the user
            prices file when one priced a model.
        price_date: The date whose prices were used; None when the session date is unknown.
        lower_bound: The priced cost may be short (see `notes`).
    """

    priced_cost_usd: float | None
    recorded_cost_usd: float | None
    cost_usd: float | None
    cost_source: str | None
    cost_difference_usd: float | None = None
    cost_difference_share: float | None = None
    models: tuple[PricedModel, ...] = ()
    reason: str | None = None
    notes: tuple[str, ...] = ()
    price_table: str | None = None
    price_date: date | None = None
    lower_bound: bool = False

    @property
    def differs(self) -> bool | None:
        """Recorded and priced differ by more than `COST_DIFFERENCE_LIMIT` (None: not both)."""
        if self.cost_difference_share is None:
            return None
        return abs(self.cost_difference_share) > COST_DIFFERENCE_LIMIT

    def to_dict(self) -> dict[str, Any]:
        """The sessions frame's cost columns (`COST_COLUMNS`), JSON-able."""
        return {
            "priced_cost_usd": self.priced_cost_usd,
            "recorded_cost_usd": self.recorded_cost_usd,
            "cost_usd": self.cost_usd,
            "cost_source": self.cost_source,
            "cost_difference_usd": self.cost_difference_usd,
            "cost_difference_share": self.cost_difference_share,
            "priced_lower_bound": self.lower_bound if self.priced_cost_usd is not None else None,
            "price_reason": self.reason,
            "price_table": self.price_table,
            "price_date": self.price_date.isoformat() if self.price_date else None,
        }

    def to_frame(self) -> pd.DataFrame:
        """One row per model: its tokens and cost per priced part, source, reason."""
        import pandas as pd

        return pd.DataFrame([m.to_dict() for m in self.models])


def session_cost(
    ledgers: Sequence[ModelLedger],
    *,
    recorded_cost_usd: float | None = None,
    when: date | datetime | None = None,
    prices: UserPrices | None = None,
) -> SessionCost:
    """Price each model's ledger and set the priced cost beside the recorded one.

    Args:
        ledgers: The session's tokens, one ledger per model.
        recorded_cost_usd: What the log says the session cost (None: nothing recorded).
        when: The session's date (None: unknown; the latest prices, said so in the notes).
        prices: User prices, overriding the table for the models they name.

    Never raises.
    """
    priced = tuple(price_model(m, when=when, prices=prices) for m in ledgers)
    failed = [m for m in priced if m.cost_usd is None]
    if not priced:
        total, reason = None, "the log records no tokens"
    elif failed:
        total = None
        reason = "; ".join(m.reason or "not priced" for m in failed)
    else:
        total, reason = sum(m.cost_usd or 0.0 for m in priced), None
    if recorded_cost_usd is not None:
        cost, source = recorded_cost_usd, "recorded"
    elif total is not None:
        cost, source = total, "priced"
    else:
        cost, source = None, None
    diff = share = None
    if recorded_cost_usd is not None and total is not None:
        diff = recorded_cost_usd - total
        share = diff / recorded_cost_usd if recorded_cost_usd else None
    notes: list[str] = []
    for m in priced:
        notes.extend(n for n in m.notes if n not in notes)
    sources = sorted({m.price_source for m in priced if m.price_source})
    table = table_version()
    label = ", ".join(sources) if sources else table
    return SessionCost(
        priced_cost_usd=total,
        recorded_cost_usd=recorded_cost_usd,
        cost_usd=cost,
        cost_source=source,
        cost_difference_usd=diff,
        cost_difference_share=share,
        models=priced,
        reason=reason,
        notes=tuple(notes),
        price_table=label,
        price_date=priced[0].price_date if priced else None,
        lower_bound=any(m.lower_bound for m in priced),
    )


# --- Claude Code ------------------------------------------------------------------------------


def claude_code_date(events: Sequence[dict[str, Any]]) -> datetime | None:
    """When a Claude Code session ran, from its events: the first ISO `timestamp` (interactive
    logs write one on every line), else the first capture time of a wrapped line (agent-formats
    §5.2). Headless stream-json carries neither: None."""
    from evalkit.formats.claude_code.containers import CAPTURE_KEY

    for event in events:
        stamp = event.get("timestamp")
        if isinstance(stamp, str):
            try:
                parsed = datetime.fromisoformat(stamp)
            except ValueError:
                continue
            return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
        captured = number(event.get(CAPTURE_KEY))
        if captured is not None:
            try:
                return datetime.fromtimestamp(captured, tz=UTC)
            except (OverflowError, OSError, ValueError):
                continue
    return None


def _message_models(events: Sequence[dict[str, Any]]) -> dict[str | None, dict[str, Any]]:
    """Per `message.model`: Σ usage of the assistant messages (each id once), the largest
    prompt, the output as the largest `output_tokens` seen per id (agent-formats §5.3)."""
    per_id: dict[Any, tuple[str | None, dict[str, Any]]] = {}
    output: dict[Any, float] = {}
    for event in events:
        if event.get("type") != "assistant":
            continue
        message = event.get("message")
        if not isinstance(message, dict):
            continue
        mid = message.get("id")
        key = (mid or None) if type(mid) is str else message_key(mid)
        usage = message.get("usage")
        if key is None or not isinstance(usage, dict):
            continue
        out = number(usage.get("output_tokens"))
        if out is not None:
            output[key] = max(output.get(key, 0.0), out)
        if key in per_id:
            continue
        model = message.get("model")
        per_id[key] = (model if isinstance(model, str) else None, usage)
    models: dict[str | None, dict[str, Any]] = {}
    for key, (model, usage) in per_id.items():
        fresh = number(usage.get("input_tokens")) or 0.0
        read = number(usage.get("cache_read_input_tokens")) or 0.0
        write = number(usage.get("cache_creation_input_tokens")) or 0.0
        split = usage.get("cache_creation")
        hour = number(split.get("ephemeral_1h_input_tokens")) if isinstance(split, dict) else None
        acc = models.setdefault(
            model,
            {"prompt": 0.0, "read": 0.0, "write": 0.0, "hour": None, "out": 0.0, "max": 0.0},
        )
        prompt = fresh + read + write
        acc["prompt"] += prompt
        acc["read"] += read
        acc["write"] += write
        if hour is not None:
            acc["hour"] = (acc["hour"] or 0.0) + hour
        acc["out"] += output.get(key, 0.0)
        acc["max"] = max(acc["max"], prompt)
    return models


def claude_code_ledgers(
    tokens: ClaudeCodeTokens, events: Sequence[dict[str, Any]] = ()
) -> tuple[ModelLedger, ...]:
    """The per-model ledgers of a Claude Code session (see the module text).

    Args:
        tokens: The session's tokens (`Session.tokens`, or `claude_code_tokens(events)`).
        events: The session's events, for the 1-hour cache writes, the largest request prompt
            and, without modelUsage, the whole ledger.
    """
    messages = _message_models(events)
    if tokens.models:
        out = []
        for m in tokens.models:
            seen = messages.get(m.model, {})
            write = m.cache_creation_tokens
            hour = seen.get("hour")
            prompt = m.prompt_tokens if m.input_tokens is not None else None
            out.append(
                ModelLedger(
                    model=m.model,
                    provider="anthropic",
                    prompt_tokens=prompt,
                    cache_read_tokens=m.cache_read_tokens,
                    cache_write_tokens=write,
                    cache_write_1h_tokens=min(hour, write or 0.0) if hour is not None else None,
                    output_tokens=m.output_tokens,
                    max_request_prompt_tokens=seen.get("max"),
                    recorded_cost_usd=m.cost_usd,
                )
            )
        return tuple(out)
    if messages:
        return tuple(
            ModelLedger(
                model=model,
                provider="anthropic",
                prompt_tokens=acc["prompt"],
                cache_read_tokens=acc["read"],
                cache_write_tokens=acc["write"],
                cache_write_1h_tokens=acc["hour"],
                output_tokens=acc["out"],
                max_request_prompt_tokens=acc["max"],
                output_lower_bound=True,
            )
            for model, acc in messages.items()
        )
    g = tokens.ledger
    if g.prompt_tokens is None and g.output_tokens is None:
        return ()
    named = [m for m, _, prompt in tokens.message_models if m is not None and prompt]
    return (
        ModelLedger(
            model=named[-1] if len(named) == 1 else None,
            provider="anthropic",
            prompt_tokens=g.prompt_tokens,
            cache_read_tokens=g.cache_read_tokens,
            cache_write_tokens=g.cache_write_tokens,
            output_tokens=g.output_tokens,
        ),
    )


def claude_code_cost(
    tokens: ClaudeCodeTokens,
    events: Sequence[dict[str, Any]] = (),
    *,
    when: date | datetime | None = None,
    prices: UserPrices | None = None,
) -> SessionCost:
    """The cost of a Claude Code session, headless or interactive.

    Args:
        tokens: `Session.tokens` (headless) or `claude_code_tokens(InteractiveSession.events)`.
        events: The session's events (`Session.transcript.events`, `InteractiveSession.events`).
        when: The session's date; default: from the events (`claude_code_date`), which headless
            stream-json does not carry.
        prices: User prices.
    """
    if when is None:
        when = claude_code_date(events)
    return session_cost(
        claude_code_ledgers(tokens, events),
        recorded_cost_usd=tokens.cost,
        when=when,
        prices=prices,
    )


# --- Codex and Inspect ------------------------------------------------------------------------


def parse_started_at(started_at: Any) -> datetime | None:
    """A session's `started_at` text (ISO 8601) as a time, UTC when it names no offset; None
    when absent or not a date."""
    if not isinstance(started_at, str) or not started_at:
        return None
    try:
        when = datetime.fromisoformat(started_at.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def agent_ledgers(session: AgentSession, *, model: str | None = None) -> tuple[ModelLedger, ...]:
    """The ledger of a Codex, Inspect or ATIF session under its model (`model` overrides it:
    an `exec --json` stream names none); an Inspect sample's models each apart."""
    if session.models and model is None:
        return tuple(
            ModelLedger(
                model=m.model,
                prompt_tokens=m.tokens.prompt_tokens,
                cache_read_tokens=m.tokens.cache_read_tokens,
                cache_write_tokens=m.tokens.cache_write_tokens,
                output_tokens=m.tokens.output_tokens,
                reasoning_tokens=m.tokens.reasoning_tokens,
                recorded_cost_usd=m.cost_usd,
            )
            for m in session.models
        )
    g = session.tokens
    if g.prompt_tokens is None and g.output_tokens is None:
        return ()
    requests = None
    biggest = None
    if session.requests:
        biggest = max(r.prompt_tokens for r in session.requests)
        if session.format == "codex-rollout":  # one request event each (agent-formats §1.9)
            requests = tuple(
                RequestTokens(
                    prompt_tokens=r.prompt_tokens,
                    cache_read_tokens=r.cache_read_tokens,
                    output_tokens=r.output_tokens,
                )
                for r in session.requests
            )
    return (
        ModelLedger(
            model=model or session.model,
            prompt_tokens=g.prompt_tokens,
            cache_read_tokens=g.cache_read_tokens,
            cache_write_tokens=g.cache_write_tokens,
            output_tokens=g.output_tokens,
            reasoning_tokens=g.reasoning_tokens,
            max_request_prompt_tokens=biggest,
            requests=requests,
            recorded_cost_usd=session.cost_usd,
        ),
    )


def agent_cost(
    session: AgentSession,
    *,
    when: date | datetime | None = None,
    model: str | None = None,
    prices: UserPrices | None = None,
) -> SessionCost:
    """The cost of a Codex or Inspect session.

    Args:
        session: What the reader yields.
        when: The session's date; default: its `started_at` (none: the latest price).
        model: The model, where the file does not name it (`exec --json`).
        prices: User prices.
    """
    if when is None:
        when = parse_started_at(session.started_at)
    return session_cost(
        agent_ledgers(session, model=model),
        recorded_cost_usd=session.cost_usd,
        when=when,
        prices=prices,
    )
