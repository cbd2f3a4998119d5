"""The token ledger: one set of token columns for every agent's sessions (issue 15, agent-formats §5.3).

Each agent counts tokens differently (Claude Code reports cache reads and writes beside
`input_tokens`; Codex counts cached tokens inside `input_tokens` and reasoning inside
`output_tokens`), so each reader fills this ledger by its own format's rule and every table reads
the ledger. `None` means the format does not carry the figure: never 0.

Claude Code (`claude_code_tokens`, agent-formats §5.3, reference-metrics §1.11):

* Claude Code writes one assistant event per content block, every event of a message carrying
  the same `message.id` and `usage`, so a request is counted once per distinct `message.id`,
  across segment files too (a resumed segment can repeat an id). Its prompt is `input_tokens +
  cache_read_input_tokens + cache_creation_input_tokens` (three disjoint parts).
* Per-message `output_tokens` are streamed snapshots, never summed: the session's output comes
  from `result.modelUsage` (every model call, subagents included), else from `result.usage`
  (main loop only) plus the subagent totals a completed Task/Agent call reports in its
  `tool_use_result.usage`.
* `result.modelUsage` and `result.total_cost_usd` are cumulative within a segment's process, and
  newer CLIs carry them over `--resume`, so a later segment's result can already hold the earlier
  ones. They are never added across segments without checking: when every segment's totals are
  at least the previous segment's and each later segment reports at least the prompt tokens of
  its own and every earlier segment's messages, the totals are carried over and the last
  segment's are the session's; otherwise the segments are independent and their totals are
  added. Both the reference's plain sum
  (`cost_sum`) and the last value (`cost_last`) are kept.
* Reasoning tokens are not reported separately (they are inside `outputTokens`): `None`.

`TokenLedger` itself is declared in `evalkit.formats.ledger` (re-exported by
`evalkit.formats.common`), because the Codex and Inspect readers (in the formats layer, left of
this one) fill it; it is re-exported here.

These are evalkit's own figures: they never change a reference number (`Summary.cost`,
`Summary.processed` keep the reference's sums).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from evalkit.ecma import js_string
from evalkit.formats.claude_code.index import SessionIndex, index_events
from evalkit.formats.frozen import quick_init
from evalkit.formats.ledger import TokenLedger

__all__ = ["TokenLedger", "ModelUsage", "ClaudeCodeTokens", "claude_code_tokens"]


# modelUsage field (camelCase, agent-formats §5.3) → ModelUsage attribute.
_MODEL_FIELDS = {
    "inputTokens": "input_tokens",
    "outputTokens": "output_tokens",
    "cacheReadInputTokens": "cache_read_tokens",
    "cacheCreationInputTokens": "cache_creation_tokens",
    "costUSD": "cost_usd",
    "webSearchRequests": "web_search_requests",
}
_PROMPT_FIELDS = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
_FRESH, _READ, _WRITE = _PROMPT_FIELDS


@quick_init
@dataclass(frozen=True)
class ModelUsage:
    """One model's totals from `result.modelUsage` (agent-formats §5.3).

    Attributes:
        model: The model id (the modelUsage key).
        input_tokens: `inputTokens` (uncached input).
        output_tokens: `outputTokens` (thinking included).
        cache_read_tokens: `cacheReadInputTokens`.
        cache_creation_tokens: `cacheCreationInputTokens`.
        cost_usd: `costUSD` (an estimate, not a bill).
        context_window: `contextWindow`, the model's window in tokens (None when absent).
        web_search_requests: `webSearchRequests`.
    """

    model: str
    input_tokens: float | None = None
    output_tokens: float | None = None
    cache_read_tokens: float | None = None
    cache_creation_tokens: float | None = None
    cost_usd: float | None = None
    context_window: float | None = None
    web_search_requests: float | None = None

    @property
    def prompt_tokens(self) -> float:
        return sum(
            x or 0 for x in (self.input_tokens, self.cache_read_tokens, self.cache_creation_tokens)
        )


@quick_init
@dataclass(frozen=True)
class ClaudeCodeTokens:
    """Tokens, cost and timing of one Claude Code session (evalkit's own figures).

    Attributes:
        ledger: The shared token columns.
        requests: Distinct assistant `message.id`s (all threads, all segments).
        main_requests / subagent_requests: Of which main thread / subagent threads.
        main_prompt_tokens / subagent_prompt_tokens: `ledger.prompt_tokens` split the same way
            (None when no message carries usage).
        repeated_ids: Assistant messages whose id an earlier segment already counted.
        num_turns: Σ `num_turns` over result events (None without any).
        duration_api_ms: Σ `duration_api_ms` over result events (None without any).
        cost_sum: Σ `total_cost_usd` over result events: the reference's `cost`.
        cost_last: The last result's `total_cost_usd`.
        cumulative: The segments' totals are carried over `--resume` (see the module text).
        cost: evalkit's session cost: `cost_last` when cumulative, else `cost_sum`.
        models: Per-model totals for the session (carried-over or summed), in first-seen order.
        model_usage: `last` (the last segment's modelUsage), `sum` (added over segments) or
            `none` (no result carries modelUsage).
        context_window: The `contextWindow` of the model with the largest prompt, or None.
        message_models: `(model, requests, prompt tokens)` per `message.model` of the
            assistant messages (each id once), in first-seen order; requests without a model
            are under `None`.
    """

    ledger: TokenLedger
    requests: int = 0
    main_requests: int = 0
    subagent_requests: int = 0
    main_prompt_tokens: float | None = None
    subagent_prompt_tokens: float | None = None
    repeated_ids: int = 0
    num_turns: float | None = None
    duration_api_ms: float | None = None
    cost_sum: float | None = None
    cost_last: float | None = None
    cumulative: bool = False
    cost: float | None = None
    models: tuple[ModelUsage, ...] = ()
    model_usage: str = "none"
    context_window: float | None = None
    message_models: tuple[tuple[str | None, int, float | None], ...] = ()


def _num(x: Any) -> float | None:
    """A JSON number, else None (a string or boolean is not a token count)."""
    if isinstance(x, bool) or not isinstance(x, int | float):
        return None
    return x


def _add(a: float | None, b: float | None) -> float | None:
    if a is None:
        return b
    return a if b is None else a + b


def _snapshot(model_usage: dict[str, Any]) -> dict[str, dict[str, float | None]]:
    out: dict[str, dict[str, float | None]] = {}
    for model, fields in model_usage.items():
        if not isinstance(fields, dict):
            continue
        row = {attr: _num(fields.get(key)) for key, attr in _MODEL_FIELDS.items()}
        row["context_window"] = _num(fields.get("contextWindow"))
        out[str(model)] = row
    return out


def _prompt_of(row: dict[str, float | None]) -> float:
    return sum(
        row.get(k) or 0 for k in ("input_tokens", "cache_read_tokens", "cache_creation_tokens")
    )


def _non_decreasing(prev: dict, cur: dict) -> bool:
    for model, row in prev.items():
        now = cur.get(model)
        if now is None:
            return False
        for key, value in row.items():
            if key != "context_window" and (value or 0) > (now.get(key) or 0):
                return False
    return True


def claude_code_tokens(
    events: Sequence[dict[str, Any]],
    segment_starts: Sequence[int] = (0,),
    *,
    index: SessionIndex | None = None,
) -> ClaudeCodeTokens:
    """Tokens, cost and timing of a Claude Code session (agent-formats §5.3).

    Args:
        events: Every event of the session, segments concatenated (`Transcript.events`).
        segment_starts: Where each segment's events begin (`Transcript.segment_starts`).
        index: `index_events(events)` when the caller built it already (the session does).

    Never raises: a field that is not a number is left out of the sums.
    """
    starts = list(segment_starts) or [0]
    nseg = len(starts)
    seen: dict[Any, int] = {}  # message key → segment that counted it
    prompt = cache_read = cache_write = None
    main_prompt = sub_prompt = None
    main_requests = sub_requests = repeated = 0
    seg_prompt = [0.0] * nseg  # per-message prompt tokens per segment (carry-over test)
    by_model: dict[str | None, list] = {}  # message.model → [requests, prompt tokens]
    turns = api_ms = cost_sum = cost_last = out_usage = sub_out = None
    # per segment: the last result's modelUsage snapshot and total_cost_usd
    snaps: list[dict | None] = [None] * nseg
    seg_cost: list[float | None] = [None] * nseg
    one_segment = nseg == 1 and starts[0] <= 0  # every event's segment is 0: no search
    seg = 0
    if index is None:
        index = index_events(events)
    for view in index.views:
        etype = view.type
        if etype == "assistant":
            message = view.message
            if type(message) is not dict:
                continue
            key = view.key  # `message_key(message.id)`
            if key is None:
                continue
            if not one_segment:  # the segment holding the event (read for these and results)
                seg = bisect_right(starts, view.index) - 1
            if not view.first:  # a request seen before
                if seen[key] != seg and seen[key] >= 0:
                    repeated += 1
                    seen[key] = -1  # count a repeated message once
                continue
            seen[key] = seg
            parent = view.parent  # `thread_of(event) == "main"`
            main = parent is None or js_string(parent) == "main"
            if main:
                main_requests += 1
            else:
                sub_requests += 1
            model = message.get("model")
            per_model = by_model.setdefault(model if isinstance(model, str) else None, [0, None])
            per_model[0] += 1
            usage = message.get("usage")
            if not isinstance(usage, dict):
                continue
            fresh = usage.get(_FRESH)
            read = usage.get(_READ)
            write = usage.get(_WRITE)
            if type(fresh) is int and type(read) is int and type(write) is int:
                # The usual usage, three integers (never a bool: `type` is exact): the sums
                # below with `_add` written out (each operand is a number, never None).
                total = fresh + read + write
                n = per_model[1]
                per_model[1] = total if n is None else n + total
                prompt = total if prompt is None else prompt + total
                cache_read = read if cache_read is None else cache_read + read
                cache_write = write if cache_write is None else cache_write + write
            else:
                parts = [_num(fresh), _num(read), _num(write)]
                if parts[0] is None and parts[1] is None and parts[2] is None:
                    continue
                total = sum(p or 0 for p in parts)
                per_model[1] = _add(per_model[1], total)
                prompt = _add(prompt, total)
                cache_read = _add(cache_read, parts[1] or 0)
                cache_write = _add(cache_write, parts[2] or 0)
            seg_prompt[seg] += total
            if main:
                main_prompt = _add(main_prompt, total)
            else:
                sub_prompt = _add(sub_prompt, total)
        elif etype == "user":
            # A completed Task/Agent call reports its subagent's totals (agent-formats §5.3).
            tur = view.event.get("tool_use_result")
            if isinstance(tur, dict) and isinstance(tur.get("usage"), dict) and "agentId" in tur:
                sub_out = _add(sub_out, _num(tur["usage"].get("output_tokens")))
        elif etype == "result":
            if not one_segment:
                seg = bisect_right(starts, view.index) - 1
            event = view.event
            turns = _add(turns, _num(event.get("num_turns")))
            api_ms = _add(api_ms, _num(event.get("duration_api_ms")))
            cost = _num(event.get("total_cost_usd"))
            cost_sum = _add(cost_sum, cost)
            if cost is not None:
                cost_last = cost
                seg_cost[seg] = cost
            usage = event.get("usage")
            if isinstance(usage, dict):
                out_usage = _add(out_usage, _num(usage.get("output_tokens")))
            mu = event.get("modelUsage")
            if isinstance(mu, dict):
                snaps[seg] = _snapshot(mu)

    present = [(k, s) for k, s in enumerate(snaps) if s is not None]
    cumulative = False
    if len(present) >= 2:
        cumulative = True
        for (j, prev), (k, cur) in zip(present, present[1:], strict=False):
            pc, cc = seg_cost[j], seg_cost[k]
            if (pc is not None and cc is not None and cc < pc) or not _non_decreasing(prev, cur):
                cumulative = False
                break
        # Non-decreasing alone also fits independent segments that grew: a carried-over total
        # holds at least every earlier segment's messages too (when the messages carry usage).
        if cumulative and any(seg_prompt):
            cumulative = all(
                sum(_prompt_of(r) for r in s.values()) >= sum(seg_prompt[: k + 1])
                for k, s in present[1:]
            )
    models: dict[str, dict[str, float | None]] = {}
    chosen = [present[-1][1]] if cumulative else [s for _, s in present]
    for snap in chosen:
        for model, row in snap.items():
            acc = models.setdefault(model, dict.fromkeys(row))
            for key, value in row.items():
                if key == "context_window":
                    acc[key] = value if acc[key] is None else max(acc[key], value or 0)
                else:
                    acc[key] = _add(acc[key], value)
    model_rows = tuple(ModelUsage(model=m, **row) for m, row in models.items())
    if model_rows and len(present) == nseg:
        output = sum(m.output_tokens or 0 for m in model_rows)
    else:  # result.usage is the main loop only: add the subagents' own totals
        output = out_usage if out_usage is None else _add(out_usage, sub_out)
    window = None
    if model_rows:
        top = max(model_rows, key=lambda m: m.prompt_tokens)  # first wins a tie
        window = top.context_window
    ledger = TokenLedger(
        prompt_tokens=prompt,
        cache_read_tokens=cache_read,
        cache_write_tokens=cache_write,
        uncached_prompt_tokens=None if prompt is None else prompt - (cache_read or 0),
        output_tokens=output,
        reasoning_tokens=None,
    )
    return ClaudeCodeTokens(
        ledger=ledger,
        requests=main_requests + sub_requests,
        main_requests=main_requests,
        subagent_requests=sub_requests,
        main_prompt_tokens=main_prompt,
        subagent_prompt_tokens=sub_prompt,
        repeated_ids=repeated,
        num_turns=turns,
        duration_api_ms=api_ms,
        cost_sum=cost_sum,
        cost_last=cost_last,
        cumulative=cumulative,
        cost=cost_last if cumulative else cost_sum,
        models=model_rows,
        model_usage="none" if not present else "last" if cumulative or len(present) == 1 else "sum",
        context_window=window,
        message_models=tuple((m, n, p) for m, (n, p) in by_model.items()),
    )
