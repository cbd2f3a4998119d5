"""Reading the `codex exec --json` event stream (stdout of a non-interactive run, agent-formats §2).

One `ThreadEvent` per line (`thread.started`, `turn.started`, `turn.completed{usage}`,
`turn.failed`, `item.started|updated|completed`, `error`); anything that is not JSON (banners,
warnings) is skipped and counted (§2.2).

* **Tool calls** (§2.4): one per *completed* `command_execution`, `file_change`, `mcp_tool_call`,
  `web_search` or `collab_tool_call` item; an item's `item.started`/`item.updated` events are the
  same call, not extra ones. Items started and never completed are counted as unfinished. A
  `web_search` item may carry two `id` keys (§2.3), so web searches are keyed by position.
* **Final answer**: the last completed `agent_message`.
* **Tokens**: the `usage` of the **last** `turn.completed`, which is the thread's running total
  (never summed over turns); `input_tokens` holds `cached_input_tokens`; there is no reasoning
  split and no per-request usage.
* **Turns**: `turn.started` events; a turn with neither `turn.completed` nor `turn.failed` was
  interrupted. No timestamps, no compaction, no cost in the stream.

Older streams (until October 2025) tagged items by `item_type`, called the assistant item
`assistant_message` and opened with `session.created`; they are read too (§2.5). The legacy
`{"id", "msg"}` protocol stream is refused with a clear message.
"""

from __future__ import annotations

import os
from typing import Any

from evalkit.errors import TranscriptError
from evalkit.formats.common import (
    AgentSession,
    AgentToolCall,
    FileRead,
    TokenLedger,
    count_unknown,
    dumps,
    number,
    read_json_lines,
    tool_family,
)

__all__ = ["EXEC_EVENTS", "read_exec_json"]

EXEC_EVENTS = frozenset(
    {
        "thread.started",
        "session.created",
        "turn.started",
        "turn.completed",
        "turn.failed",
        "item.started",
        "item.updated",
        "item.completed",
        "error",
    }
)
_TOOL_ITEMS = (
    "command_execution",
    "file_change",
    "mcp_tool_call",
    "web_search",
    "collab_tool_call",
)
_OTHER_ITEMS = ("agent_message", "assistant_message", "reasoning", "todo_list", "error")


def _item_type(item: dict[str, Any]) -> Any:
    return item.get("type", item.get("item_type"))


def _call(item: dict[str, Any], itype: str) -> tuple[str, Any, str, bool, int | None]:
    """(name, input, output text, error, exit code) of a completed tool item (§2.3, §2.4)."""
    status = item.get("status")
    failed = status in ("failed", "declined")
    if itype == "command_execution":
        code = item.get("exit_code")
        code = code if isinstance(code, int) and not isinstance(code, bool) else None
        output = item.get("aggregated_output")
        text = output if isinstance(output, str) else ""
        return "command_execution", item.get("command"), text, failed or code not in (None, 0), code
    if itype == "mcp_tool_call":
        server = item.get("server") if isinstance(item.get("server"), str) else ""
        tool = item.get("tool") if isinstance(item.get("tool"), str) else ""
        error = item.get("error")
        result = item.get("result")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            text = error["message"]
        elif isinstance(result, dict):
            content = result.get("content")
            parts = [
                b["text"]
                for b in content or []
                if isinstance(b, dict) and isinstance(b.get("text"), str)
            ]
            if parts:
                text = "\n".join(parts)
            elif result.get("structured_content") is not None:
                text = dumps(result["structured_content"])
            else:
                text = ""
        else:
            text = ""
        return (
            f"mcp__{server}__{tool}",
            item.get("arguments"),
            text,
            failed or error is not None,
            None,
        )
    if itype == "file_change":
        changes = item.get("changes")
        lines = [
            f"{c.get('kind')} {c.get('path')}"
            for c in changes or []
            if isinstance(c, dict) and isinstance(c.get("path"), str)
        ]
        return "file_change", changes, "\n".join(lines), failed, None
    if itype == "web_search":
        return "web_search", item.get("action", item.get("query")), "", failed, None
    tool = item.get("tool") if isinstance(item.get("tool"), str) else "collab_tool_call"
    return tool, item.get("prompt"), "", failed, None


def read_exec_json(path: str | os.PathLike[str]) -> AgentSession:
    """Read one `codex exec --json` capture into an `AgentSession` (agent-formats §2).

    Raises:
        TranscriptError: The file cannot be read, holds no thread event, or is the legacy
            `{"id", "msg"}` stream of builds before October 2025.
    """
    name = os.fspath(path)
    records, account = read_json_lines(name)
    events = [rec for _, rec in records if rec.get("type") in EXEC_EVENTS]
    if not events:
        if any("msg" in rec and "id" in rec for _, rec in records):
            raise TranscriptError(
                name,
                "a codex exec --json stream in the legacy format of builds before October 2025 "
                "(id/msg lines), which evalkit does not read; read the run's rollout file instead",
            )
        raise TranscriptError(name, "not a codex exec --json stream (no thread or turn event)")
    unknown = [str(rec.get("type")) for _, rec in records if rec.get("type") not in EXEC_EVENTS]

    thread_id: str | None = None
    turns = completed_turns = failed_turns = 0
    usage: dict[str, Any] | None = None
    started: dict[str, str] = {}
    done: dict[str, int] = {}  # item id → index into `calls`
    calls: list[tuple[str | None, str, Any, str, bool, int | None]] = []
    answer: str | None = None
    stream_errors = 0
    errors: list[str] = []  # their messages, for the run status (`evalkit.metrics.status`)
    for event in events:
        etype = event["type"]
        if etype in ("thread.started", "session.created"):
            tid = event.get("thread_id", event.get("session_id"))
            thread_id = tid if isinstance(tid, str) else thread_id
        elif etype == "turn.started":
            turns += 1
        elif etype == "turn.completed":
            completed_turns += 1
            if isinstance(event.get("usage"), dict):
                usage = event["usage"]
        elif etype == "turn.failed":
            failed_turns += 1
            errors.append(_error_text(event.get("error")) or "turn.failed")
        elif etype == "error":
            stream_errors += 1
            errors.append(_error_text(event) or "error")
        else:
            item = event.get("item")
            if not isinstance(item, dict):
                continue
            itype = _item_type(item)
            iid = item.get("id") if isinstance(item.get("id"), str) else None
            if itype not in _TOOL_ITEMS and itype not in _OTHER_ITEMS:
                unknown.append(f"item/{itype}")
            if etype != "item.completed":
                if itype in _TOOL_ITEMS and iid is not None:
                    started[iid] = itype
                continue
            if itype in ("agent_message", "assistant_message"):
                if isinstance(item.get("text"), str):
                    answer = item["text"]
            elif itype in _TOOL_ITEMS:
                call = (iid, *_call(item, itype))
                if itype != "web_search" and iid is not None and iid in done:
                    calls[done[iid]] = call  # a repeated completion of one item is one call
                    continue
                if iid is not None and itype != "web_search":
                    done[iid] = len(calls)
                calls.append(call)
    unfinished = sum(1 for iid in started if iid not in done and started[iid] != "web_search")
    web_started = sum(1 for t in started.values() if t == "web_search")
    web_done = sum(1 for c in calls if c[1] == "web_search")
    unfinished += max(0, web_started - web_done)

    tool_calls = tuple(
        AgentToolCall(
            order=order,
            id=iid,
            name=cname,
            family=tool_family(cname),
            input=cinput,
            output=text,
            error=error,
            exit_code=code,
        )
        for order, (iid, cname, cinput, text, error, code) in enumerate(calls)
    )
    if usage is not None:
        prompt = number(usage.get("input_tokens"))
        cached = number(usage.get("cached_input_tokens"))
        ledger = TokenLedger(
            prompt_tokens=prompt,
            cache_read_tokens=cached,
            cache_write_tokens=None,
            uncached_prompt_tokens=prompt - cached
            if prompt is not None and cached is not None
            else None,
            output_tokens=number(usage.get("output_tokens")),
            reasoning_tokens=None,
        )
    else:
        ledger = TokenLedger()
    return AgentSession(
        agent="codex",
        format="codex-exec",
        path=name,
        session_id=thread_id,
        model=None,
        tool_calls=tool_calls,
        final_answer=answer or "",
        final_answer_source="last agent message" if answer is not None else "no agent message",
        turns=turns,
        aborted_turns=turns - completed_turns,
        compactions=None,
        requests=None,
        context_window=None,
        duration_s=None,
        cost_usd=None,
        reward=None,
        passed=None,
        tokens=ledger,
        reported_total_tokens=None,
        unfinished_calls=unfinished,
        read=FileRead(
            path=account.path,
            records=account.records,
            blank=account.blank,
            # §2.2: text that is not JSON (banners, warnings) is not part of the stream.
            malformed=0,
            non_object=account.non_object + account.malformed,
            invalid_utf8=account.invalid_utf8,
            unknown=count_unknown(unknown),
            gzip=account.gzip,
            truncated_gzip=account.truncated_gzip,
            too_long=account.too_long,
            bad_type=account.bad_type,
        ),
        extra={"failed_turns": failed_turns, "stream_errors": stream_errors, "errors": errors},
    )


def _error_text(x: Any) -> str | None:
    """The `message` of an `error` event or a `turn.failed` event's `error` object."""
    if isinstance(x, dict) and isinstance(x.get("message"), str):
        return x["message"]
    return None
