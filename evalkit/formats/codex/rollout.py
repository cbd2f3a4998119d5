"""Reading Codex CLI rollout files (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`, agent-formats §1).

One file is one thread. Each line is `{"timestamp", "type", "payload"}` with `type` one of
`session_meta`, `response_item`, `event_msg`, `turn_context`, `compacted` (§1.3). The reader takes
tool calls, their outputs, assistant text and reasoning from `response_item`s, tokens from
`token_count` events only, and turns, aborts and compactions from the lifecycle lines (§1.10).

Tokens (§1.9): a *request event* is a `token_count` whose `info` is not null, whose
`total_token_usage` differs from that of the previous `token_count` with non-null `info`, and that
is not a compaction sentinel (`last_token_usage` input and output both 0) or a window-full
sentinel (`total_token_usage` input and output 0, total > 0). The session's tokens are the sum of
`last_token_usage` over request events; `input_tokens` already holds the cached tokens and
`output_tokens` the reasoning tokens, so neither is added again. The last `total_token_usage` is
kept only as a cross-check: it restarts on resume in older builds and is overwritten when the
window fills.

Forks and subagents started with the parent's context begin with copies of the parent's lines
(§1.11), recognisable by a second `session_meta` line. Given the parent's file, the copied run is
excluded from tool calls, turns and tokens; without it the session is flagged
`contains_parent_copy` and counted as it stands, rather than guessing a boundary.
"""

from __future__ import annotations

import json
import os
from datetime import datetime
from typing import Any

from evalkit.ecma import utf16_len
from evalkit.errors import TranscriptError
from evalkit.formats.codex.outputs import DecodedOutput, decode_output
from evalkit.formats.common import (
    AgentSession,
    AgentToolCall,
    ContextItem,
    FileRead,
    ModelTokens,
    Request,
    TokenLedger,
    count_unknown,
    dumps,
    number,
    read_json_lines,
    text_of_parts,
    tool_family,
)
from evalkit.formats.stack import fixed_stack

__all__ = ["ROLLOUT_KINDS", "read_rollout", "rollout_id", "is_request_event"]

ROLLOUT_KINDS = frozenset(
    {"session_meta", "response_item", "event_msg", "turn_context", "compacted"}
)
_RESPONSE_KINDS = frozenset(
    {
        "message",
        "reasoning",
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "custom_tool_call_output",
        "local_shell_call",
        "web_search_call",
        "tool_search_call",
        "tool_search_output",
        "image_generation_call",
        "ghost_snapshot",
        "compaction",
        "compaction_summary",
    }
)
_OUTPUT_KINDS = ("function_call_output", "custom_tool_call_output", "tool_search_output")
# §1.7: kinds of `user_message` (Sept–Oct 2025 builds) that are injected context, not a prompt.
_NOT_A_PROMPT = ("user_instructions", "environment_context")
_USAGE_FIELDS = ("input_tokens", "cached_input_tokens", "output_tokens", "reasoning_output_tokens")

Record = tuple[int, dict[str, Any]]


def _legacy_to_lines(records: list[Record]) -> list[Record]:
    """§1.13: before 2025-09-09 the first line was a bare `{id, timestamp, instructions}` and every
    other line a bare `ResponseItem` (or a `{"record_type": "state"}` line, skipped)."""
    out: list[Record] = []
    for i, (lineno, rec) in enumerate(records):
        if i == 0:
            out.append((lineno, {"type": "session_meta", "payload": rec}))
        elif rec.get("record_type") == "state":
            continue
        else:
            out.append((lineno, {"type": "response_item", "payload": rec}))
    return out


def _is_legacy(records: list[Record]) -> bool:
    if not records:
        return False
    first = records[0][1]
    return "payload" not in first and "id" in first and first.get("type") not in ROLLOUT_KINDS


def rollout_id(path: str) -> str | None:
    """The thread id of a rollout file (its first `session_meta`), None when it has none.

    Raises:
        TranscriptError: The file cannot be read.
    """
    records, _ = read_json_lines(path)
    meta = _first_meta(_lines(records))
    return _str(meta.get("id")) if meta is not None else None


def _lines(records: list[Record]) -> list[Record]:
    return _legacy_to_lines(records) if _is_legacy(records) else records


def _first_meta(records: list[Record]) -> dict[str, Any] | None:
    for _, rec in records:
        if rec.get("type") == "session_meta" and isinstance(rec.get("payload"), dict):
            return rec["payload"]
    return None


def _str(x: Any) -> str | None:
    return x if isinstance(x, str) else None


def _key(rec: dict[str, Any]) -> str:
    # Copies carry the fork's write time (§1.11): compare kind and payload only.
    return dumps([rec.get("type"), rec.get("payload")], sort_keys=True)


def _copied_prefix(records: list[Record], parent: list[Record] | None) -> tuple[int, bool]:
    """How many records after the first are the parent's copy, and whether any copy is left
    unexcluded (§1.11).

    A copy exists when a later `session_meta` line follows the file's own. With the parent's
    records, the copy is the run of records that each equal the parent's next records in order
    (verbatim for a fork; the kept subset for a forked-context subagent).
    """
    own = _first_meta(records)
    own_id = own.get("id") if own else None
    has_copy = any(
        rec.get("type") == "session_meta"
        and isinstance(rec.get("payload"), dict)
        and rec["payload"].get("id") != own_id
        for _, rec in records[1:]
    )
    if not has_copy:
        return 0, False
    if parent is None:
        return 0, True
    keys = [_key(rec) for _, rec in parent]
    j = 0
    n = 0
    for _, rec in records[1:]:
        k = _key(rec)
        try:
            j = keys.index(k, j) + 1
        except ValueError:
            break
        n += 1
    return n, False


def _timestamp(rec: dict[str, Any]) -> datetime | None:
    ts = rec.get("timestamp")
    if not isinstance(ts, str):
        return None
    try:
        return datetime.fromisoformat(ts)
    except ValueError:
        return None


def _model_switches(per_model: dict[str | None, dict[str, float]]) -> tuple[ModelTokens, ...]:
    """Each model's share of the requests when the session switched models (issue 27); empty
    when one model served them all. Requests before any `turn_context` count for the first
    model named."""
    named = [m for m in per_model if m is not None]
    if len(named) < 2:
        return ()
    sums = {m: dict(u) for m, u in per_model.items() if m is not None}
    for f, v in per_model.get(None, {}).items():
        sums[named[0]][f] += v
    return tuple(
        ModelTokens(
            model=m,
            tokens=TokenLedger(
                prompt_tokens=u["input_tokens"],
                cache_read_tokens=u["cached_input_tokens"],
                uncached_prompt_tokens=u["input_tokens"] - u["cached_input_tokens"],
                output_tokens=u["output_tokens"],
                reasoning_tokens=u["reasoning_output_tokens"],
            ),
        )
        for m, u in sums.items()
    )


def is_request_event(info: dict[str, Any], previous_total: Any) -> bool:
    """§1.9: a non-null `info` whose running total changed and that is not a sentinel."""
    total = info.get("total_token_usage")
    last = info.get("last_token_usage")
    if not isinstance(total, dict) or not isinstance(last, dict):
        return False
    if total == previous_total:
        return False  # a rate-limit repeat
    if last.get("input_tokens") == 0 and last.get("output_tokens") == 0:
        return False  # after compaction: only an estimated total_tokens
    if total.get("input_tokens") == 0 and total.get("output_tokens") == 0:
        if (number(total.get("total_tokens")) or 0) > 0:
            return False  # the context window was exceeded: total replaced by the window
    return True


def _arguments(raw: Any) -> Any:
    """§1.6: `arguments` is a string holding JSON; keep the raw string when it does not parse."""
    if not isinstance(raw, str):
        return raw
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):  # not JSON, or nested too deeply to read: the text
        return raw


def _call_name(payload: dict[str, Any]) -> str:
    name = payload.get("name")
    name = name if isinstance(name, str) else ""
    namespace = payload.get("namespace")
    return namespace + name if isinstance(namespace, str) else name


@fixed_stack
def read_rollout(path: str | os.PathLike[str], *, parent: str | None = None) -> AgentSession:
    """Read one rollout file into an `AgentSession` (agent-formats §1).

    Args:
        path: The rollout `.jsonl` (or `.jsonl.gz`).
        parent: The parent thread's rollout file, for a fork or a forked-context subagent: its
            copied lines are then excluded (§1.11). Without it such a file is flagged
            `contains_parent_copy`.

    Raises:
        TranscriptError: The file cannot be read or has no `session_meta` line.
    """
    name = os.fspath(path)
    raw, account = read_json_lines(name)
    records = _lines(raw)
    meta = _first_meta(records)
    if meta is None:
        why = "no session_meta line"
        if account.damage():
            why += f"; {account.damage()}"
        raise TranscriptError(name, f"not a Codex rollout file ({why})")
    parent_records = _lines(read_json_lines(parent)[0]) if parent is not None else None
    copied, unexcluded = _copied_prefix(records, parent_records)
    own_start = 1 + copied if copied else 0

    unknown: list[str] = []
    calls: list[dict[str, Any]] = []
    outputs: dict[str, DecodedOutput] = {}  # the first output of each call id
    assistant: list[tuple[int, str, Any]] = []  # (index, text, phase)
    completes: list[tuple[int, Any]] = []
    turn_ids: list[str] = []
    turn_contexts = task_started = prompts = aborted = compacted = compacted_events = 0
    # For the run status (`evalkit.metrics.status`): how the last turn ended, error events,
    # and a reached rate limit (agent-formats §1.7).
    last_turn: str | None = None
    errors: list[str] = []
    rate_limit_reached: str | None = None
    reasoning = 0
    first_prompt: str | None = None
    model: str | None = None
    requests: list[Request] = []
    sums: dict[str, float] = dict.fromkeys(_USAGE_FIELDS, 0.0)
    # The requests' usage per model in force (turn_context), for pricing a model switch.
    per_model: dict[str | None, dict[str, float]] = {}
    cache_write: float | None = None
    previous_total: Any = None
    reported_total: float | None = None
    window: float | None = None
    # The occupancy timeline: (kind, chars, prompt tokens, call id), file order (§1.9).
    context: list[tuple[str, int, float | None, str | None]] = []

    for index, (_, rec) in enumerate(records):
        kind = rec.get("type")
        payload = rec.get("payload")
        own = index == 0 or index >= own_start
        if kind not in ROLLOUT_KINDS:
            if own:
                unknown.append(str(kind))
            continue
        if not isinstance(payload, dict):
            continue
        ptype = payload.get("type")
        if kind == "event_msg" and ptype == "token_count":
            limits = payload.get("rate_limits")
            if own and isinstance(limits, dict):
                reached = limits.get("rate_limit_reached_type")
                rate_limit_reached = reached if isinstance(reached, str) and reached else None
            info = payload.get("info")
            if not isinstance(info, dict):
                continue
            request = is_request_event(info, previous_total)
            previous_total = info.get("total_token_usage")
            if not own:
                continue
            if isinstance(previous_total, dict):
                reported_total = number(previous_total.get("total_tokens"))
            if (w := number(info.get("model_context_window"))) is not None:
                window = w
            if request:
                last = info["last_token_usage"]
                mine = per_model.setdefault(model, dict.fromkeys(_USAGE_FIELDS, 0.0))
                for f in _USAGE_FIELDS:
                    sums[f] += number(last.get(f)) or 0.0
                    mine[f] += number(last.get(f)) or 0.0
                if (cw := number(last.get("cache_write_input_tokens"))) is not None:
                    cache_write = (cache_write or 0.0) + cw
                prompt_size = number(last.get("input_tokens")) or 0.0
                context.append(("request", 0, prompt_size, None))
                requests.append(
                    Request(
                        prompt_tokens=prompt_size,
                        cache_read_tokens=number(last.get("cached_input_tokens")),
                        output_tokens=number(last.get("output_tokens")),
                        reasoning_tokens=number(last.get("reasoning_output_tokens")),
                    )
                )
            continue
        if not own or kind == "session_meta":
            continue
        if kind == "turn_context":
            turn_contexts += 1
            if isinstance(payload.get("turn_id"), str):
                if payload["turn_id"] not in turn_ids:
                    turn_ids.append(payload["turn_id"])
            if isinstance(payload.get("model"), str):
                model = payload["model"]
        elif kind == "compacted":
            compacted += 1
            context.append(("compaction", 0, None, None))
        elif kind == "event_msg":
            if ptype in ("task_started", "turn_started"):
                task_started += 1
            elif ptype in ("task_complete", "turn_complete"):
                completes.append((index, payload.get("last_agent_message")))
                last_turn = "complete"
            elif ptype == "turn_aborted":
                aborted += 1
                last_turn = f"aborted:{_str(payload.get('reason')) or ''}"
            elif ptype in ("error", "stream_error"):
                errors.append(_str(payload.get("message")) or ptype)
            elif ptype == "context_compacted":
                compacted_events += 1
            elif ptype == "user_message" and payload.get("kind") not in _NOT_A_PROMPT:
                prompts += 1
                if first_prompt is None and isinstance(payload.get("message"), str):
                    first_prompt = payload["message"]
        elif kind == "response_item":
            if ptype not in _RESPONSE_KINDS:
                unknown.append(f"response_item/{ptype}")
            elif ptype == "reasoning":
                reasoning += 1
                context.append(("assistant", _reasoning_chars(payload), None, None))
            elif ptype == "message" and payload.get("role") == "assistant":
                text = "".join(
                    p["text"]
                    for p in payload.get("content") or []
                    if isinstance(p, dict)
                    and p.get("type") == "output_text"
                    and isinstance(p.get("text"), str)
                )
                assistant.append((index, text, payload.get("phase")))
                context.append(("assistant", utf16_len(text), None, None))
            elif ptype == "message":
                text = text_of_parts(payload.get("content"), ("input_text", "text"))
                context.append(("input", utf16_len(text), None, None))
            elif ptype in ("function_call", "custom_tool_call"):
                raw_input = payload.get("arguments" if ptype == "function_call" else "input")
                context.append(("assistant", _call_chars(payload, raw_input), None, None))
                calls.append(
                    {
                        "id": _str(payload.get("call_id")),
                        "name": _call_name(payload),
                        "input": _arguments(raw_input) if ptype == "function_call" else raw_input,
                    }
                )
            elif ptype == "local_shell_call":
                context.append(
                    ("assistant", _call_chars(payload, payload.get("action")), None, None)
                )
                calls.append(
                    {
                        "id": _str(payload.get("call_id")),
                        "name": "local_shell",
                        "input": payload.get("action"),
                    }
                )
            elif ptype == "web_search_call":
                # Server-side: no call id, no output item (§1.6).
                calls.append({"id": None, "name": "web_search", "input": payload.get("action")})
            elif ptype == "tool_search_call":
                context.append(
                    ("assistant", _call_chars(payload, payload.get("arguments")), None, None)
                )
                calls.append(
                    {
                        "id": _str(payload.get("call_id")),
                        "name": "tool_search",
                        "input": payload.get("arguments"),
                    }
                )
            elif ptype in _OUTPUT_KINDS:
                call_id = _str(payload.get("call_id"))
                value = (
                    payload.get("tools") if ptype == "tool_search_output" else payload.get("output")
                )
                decoded_output = decode_output(value)
                context.append(("output", utf16_len(decoded_output.text), None, call_id))
                if call_id is not None and call_id not in outputs:
                    outputs[call_id] = decoded_output

    tool_calls = []
    for order, c in enumerate(calls):
        decoded = outputs.get(c["id"]) if c["id"] is not None else None
        tool_calls.append(
            AgentToolCall(
                order=order,
                id=c["id"],
                name=c["name"],
                family=tool_family(c["name"]),
                input=c["input"],
                output=decoded.text if decoded else None,
                error=decoded.error if decoded else None,
                exit_code=decoded.exit_code if decoded else None,
            )
        )

    order_of = {}
    for c in tool_calls:
        if c.id is not None:
            order_of.setdefault(c.id, c.order)
    timeline = tuple(
        ContextItem(kind, chars, tokens, order_of.get(cid) if cid is not None else None)
        for kind, chars, tokens, cid in context
    )

    answer, source = _final_answer(assistant, completes)
    if turn_ids:
        turns = len(turn_ids)
    elif task_started:
        turns = task_started
    elif prompts:
        turns = prompts
    else:
        turns = turn_contexts
    stamps = [t for _, rec in records if (t := _timestamp(rec)) is not None]
    duration = (stamps[-1] - stamps[0]).total_seconds() if len(stamps) > 1 else None
    prompt = sums["input_tokens"]
    cached = sums["cached_input_tokens"]
    ledger = TokenLedger(
        prompt_tokens=prompt,
        cache_read_tokens=cached,
        cache_write_tokens=cache_write,
        uncached_prompt_tokens=prompt - cached,
        output_tokens=sums["output_tokens"],
        reasoning_tokens=sums["reasoning_output_tokens"],
    )
    source_field = meta.get("source")
    parent_id = _str(meta.get("forked_from_id"))
    if isinstance(source_field, dict) and isinstance(source_field.get("subagent"), dict):
        spawn = source_field["subagent"].get("thread_spawn")
        if isinstance(spawn, dict):
            parent_id = _str(spawn.get("parent_thread_id")) or parent_id
    ledger_total = prompt + sums["output_tokens"]
    return AgentSession(
        agent="codex",
        format="codex-rollout",
        path=name,
        session_id=_str(meta.get("id")),
        model=model,
        tool_calls=tuple(tool_calls),
        final_answer=answer,
        final_answer_source=source,
        turns=turns,
        aborted_turns=aborted,
        compactions=compacted or compacted_events,
        requests=tuple(requests),
        context_window=window,
        duration_s=duration,
        cost_usd=None,
        reward=None,
        passed=None,
        tokens=ledger,
        reported_total_tokens=reported_total,
        parent_id=parent_id,
        contains_parent_copy=unexcluded,
        excluded_copied_lines=copied,
        context=timeline,
        started_at=stamps[0].isoformat() if stamps else None,
        models=_model_switches(per_model),
        read=FileRead(
            path=account.path,
            records=account.records,
            blank=account.blank,
            malformed=account.malformed,
            non_object=account.non_object,
            invalid_utf8=account.invalid_utf8,
            unknown=count_unknown(unknown),
            gzip=account.gzip,
            truncated_gzip=account.truncated_gzip,
            too_long=account.too_long,
            bad_type=account.bad_type,
        ),
        extra={
            "cli_version": _str(meta.get("cli_version")),
            "originator": _str(meta.get("originator")),
            "reasoning_items": reasoning,
            "prompt": first_prompt,
            "totals_agree": reported_total is None or reported_total == ledger_total,
            "last_turn": last_turn,
            "errors": errors,
            "rate_limit_reached": rate_limit_reached,
        },
    )


def _reasoning_chars(payload: dict[str, Any]) -> int:
    """A reasoning item's readable text: its `content` texts, else its summary (the
    `encrypted_content` is opaque, so what it holds cannot be measured)."""
    text = text_of_parts(payload.get("content"), ("reasoning_text", "text"))
    if not text:
        text = text_of_parts(payload.get("summary"), ("summary_text",))
    return utf16_len(text)


def _call_chars(payload: dict[str, Any], raw_input: Any) -> int:
    """A tool call as the model wrote it: its name plus its arguments (the argument string as
    written, else their JSON), as Claude Code's `tool_use` block is priced (reference §6.2)."""
    if isinstance(raw_input, str):
        args = raw_input
    else:
        args = dumps({} if raw_input is None else raw_input)
    return utf16_len(args) + utf16_len(_call_name(payload))


def _final_answer(
    assistant: list[tuple[int, str, Any]], completes: list[tuple[int, Any]]
) -> tuple[str, str]:
    """§1.12: `task_complete.last_agent_message` when it closes the session's last answer; else
    the last `final_answer`-phase assistant message if phases are written; else the last
    assistant message."""
    last_message = assistant[-1][0] if assistant else -1
    for index, text in reversed(completes):
        if isinstance(text, str) and index > last_message:
            return text, "task_complete last_agent_message"
        break
    phased = [a for a in assistant if a[2] == "final_answer"]
    if phased:
        return phased[-1][1], "last final-answer message"
    if assistant:
        return assistant[-1][1], "last assistant message"
    return "", "no assistant message"
