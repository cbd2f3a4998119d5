"""Reading Harbor's cross-agent `trajectory.json` (ATIF, agent-formats §4.5) into an `AgentSession`.

One JSON object: `schema_version` (`ATIF-v1.x`), `session_id`, `agent {name, version,
model_name?}`, `steps`, `final_metrics`? and `subagent_trajectories`? (nested trajectories).
Harbor writes it for every agent it runs (OpenHands, mini-swe-agent, …); evalkit reads it where
no native log of the agent is beside it (a Claude Code or Codex trial's own log is richer).

* **agent**: `agent.name` (the `agent` identity column), `format` = `atif`;
* **tool calls**: every step's `tool_calls` (`tool_call_id`, `function_name`, `arguments`),
  joined to the observation result whose `source_call_id` names it (in any step); a subagent
  trajectory's calls are the subagent's thread. ATIF carries no error flag, so `error` is None;
* **final answer**: the message of the last `agent` step that has one;
* **turns**: `user` steps (prompts sent);
* **tokens**: `final_metrics` totals where given (subagents included), else Σ step `metrics`
  (`prompt_tokens` holds the cached part, `cached_tokens` is that part, `completion_tokens` the
  output); cost the same way (`total_cost_usd`, else Σ `cost_usd` where every step with metrics
  has one);
* **requests**: one per agent step with `metrics.prompt_tokens` (`llm_call_count` is not split);
* **duration**: last step timestamp minus first;
* a step marked `is_copied_context` (v1.5: context copied from an earlier trajectory) is that
  trajectory's, not this one's: left out. Records = the steps read.
"""

from __future__ import annotations

import json
import os
from datetime import datetime
from typing import Any

from evalkit.errors import TranscriptError
from evalkit.formats.common import (
    AgentSession,
    AgentToolCall,
    FileRead,
    Request,
    TokenLedger,
    dumps,
    number,
    text_of_parts,
    tool_family,
)
from evalkit.formats.files import ReadLimits, read_file_bytes
from evalkit.formats.stack import fixed_stack

__all__ = ["ATIF_PREFIX", "looks_like_atif", "read_atif"]

ATIF_PREFIX = "ATIF-"
_TEXT_KINDS = ("text", "input_text", "output_text")


def looks_like_atif(head: str) -> bool:
    """Whether the start of a JSON text is an ATIF trajectory (its `schema_version`)."""
    at = head.find('"schema_version"')
    if at < 0 or at > 4096:
        return False
    rest = head[at + len('"schema_version"') :].lstrip(" \t\r\n")
    if not rest.startswith(":"):
        return False
    return rest[1:].lstrip(" \t\r\n").startswith('"' + ATIF_PREFIX)


def _text(message: Any) -> str:
    if isinstance(message, str):
        return message
    return text_of_parts(message, _TEXT_KINDS)


def _stamp(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        stamp = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return stamp if stamp.tzinfo is not None else None


def _walk(doc: dict[str, Any], thread: str, out: list[tuple[str, dict[str, Any]]]) -> None:
    """Every step of a trajectory and of its nested subagent trajectories, with its thread."""
    for step in doc.get("steps") or []:
        if isinstance(step, dict) and step.get("is_copied_context") is not True:
            out.append((thread, step))
    for n, sub in enumerate(doc.get("subagent_trajectories") or [], start=1):
        if isinstance(sub, dict):
            agent = sub.get("agent") if isinstance(sub.get("agent"), dict) else {}
            name = sub.get("session_id") or agent.get("name") or f"subagent-{n}"
            _walk(sub, f"subagent:{name}", out)


def _sum(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


@fixed_stack
def read_atif(path: str | os.PathLike[str]) -> AgentSession:
    """Read one ATIF `trajectory.json` into an `AgentSession` (see the module docstring).

    Raises:
        TranscriptError: The file cannot be read, is not JSON, or is not an ATIF trajectory.
    """
    name = os.fspath(path)
    data, gz, truncated, _digest = read_file_bytes(name, ReadLimits.from_env(), digest=False)
    invalid = 0
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text, invalid = data.decode("utf-8", "replace"), 1
    try:
        doc = json.loads(text.lstrip("\ufeff"))
    except (ValueError, RecursionError):
        raise TranscriptError(
            name, "not valid JSON (an ATIF trajectory is one JSON object)"
        ) from None
    version = doc.get("schema_version") if isinstance(doc, dict) else None
    if not isinstance(version, str) or not version.startswith(ATIF_PREFIX):
        raise TranscriptError(name, "not an ATIF trajectory (no ATIF schema_version)")
    if not isinstance(doc.get("steps"), list):
        raise TranscriptError(name, "an ATIF trajectory without a steps list")
    agent_info = doc.get("agent") if isinstance(doc.get("agent"), dict) else {}
    agent = agent_info.get("name") if isinstance(agent_info.get("name"), str) else None
    steps: list[tuple[str, dict[str, Any]]] = []
    _walk(doc, "main", steps)

    results: dict[str, str] = {}
    for _thread, step in steps:
        obs = step.get("observation")
        for res in (obs.get("results") if isinstance(obs, dict) else None) or []:
            if isinstance(res, dict) and isinstance(res.get("source_call_id"), str):
                content = res.get("content")
                value = content if isinstance(content, str) else _text(content)
                if not value and content not in (None, "", []):
                    value = dumps(content)
                results.setdefault(res["source_call_id"], value)

    calls: list[AgentToolCall] = []
    requests: list[Request] = []
    answer: str | None = None
    model = agent_info.get("model_name") if isinstance(agent_info.get("model_name"), str) else None
    turns = 0
    prompts: list[float | None] = []
    cached: list[float | None] = []
    completions: list[float | None] = []
    costs: list[float | None] = []
    stamps = []
    for thread, step in steps:
        if (stamp := _stamp(step.get("timestamp"))) is not None:
            stamps.append(stamp)
        source = step.get("source")
        if source == "user" and thread == "main":
            turns += 1
        if source != "agent":
            continue
        if isinstance(step.get("model_name"), str) and thread == "main":
            model = step["model_name"]
        for tc in step.get("tool_calls") or []:
            if not isinstance(tc, dict):
                continue
            cid = tc.get("tool_call_id") if isinstance(tc.get("tool_call_id"), str) else None
            fname = tc.get("function_name")
            fname = fname if isinstance(fname, str) and fname else "unknown"
            calls.append(
                AgentToolCall(
                    order=len(calls),
                    id=cid,
                    name=fname,
                    family=tool_family(fname),
                    input=tc.get("arguments"),
                    output=results.get(cid) if cid is not None else None,
                    error=None,
                    thread=thread,
                )
            )
        message = _text(step.get("message"))
        if thread == "main" and message.strip():
            answer = message
        metrics = step.get("metrics")
        if isinstance(metrics, dict):
            prompt = number(metrics.get("prompt_tokens"))
            prompts.append(prompt)
            cached.append(number(metrics.get("cached_tokens")))
            completions.append(number(metrics.get("completion_tokens")))
            costs.append(number(metrics.get("cost_usd")))
            if prompt is not None and thread == "main":
                requests.append(
                    Request(
                        prompt_tokens=prompt,
                        cache_read_tokens=number(metrics.get("cached_tokens")),
                        output_tokens=number(metrics.get("completion_tokens")),
                    )
                )
    final = doc.get("final_metrics") if isinstance(doc.get("final_metrics"), dict) else {}
    prompt_total = number(final.get("total_prompt_tokens"))
    if prompt_total is None:
        prompt_total = _sum(prompts)
    cached_total = number(final.get("total_cached_tokens"))
    if cached_total is None:
        cached_total = _sum(cached)
    output_total = number(final.get("total_completion_tokens"))
    if output_total is None:
        output_total = _sum(completions)
    cost = number(final.get("total_cost_usd"))
    if cost is None and costs and all(c is not None for c in costs):
        cost = sum(costs)  # type: ignore[arg-type]
    ledger = TokenLedger(
        prompt_tokens=prompt_total,
        cache_read_tokens=cached_total,
        cache_write_tokens=None,
        uncached_prompt_tokens=prompt_total - cached_total
        if prompt_total is not None and cached_total is not None
        else None,
        output_tokens=output_total,
        reasoning_tokens=None,
    )
    duration = (max(stamps) - min(stamps)).total_seconds() if len(stamps) > 1 else None
    return AgentSession(
        agent=agent or "atif",
        format="atif",
        path=name,
        session_id=doc.get("session_id") if isinstance(doc.get("session_id"), str) else None,
        model=model,
        tool_calls=tuple(calls),
        final_answer=answer or "",
        final_answer_source="last agent message" if answer is not None else "no agent message",
        turns=turns or None,
        aborted_turns=None,
        compactions=None,
        requests=tuple(requests) if requests else None,
        context_window=None,
        duration_s=duration,
        cost_usd=cost,
        reward=None,
        passed=None,
        tokens=ledger,
        reported_total_tokens=None,
        read=FileRead(
            path=name,
            records=len(steps),
            invalid_utf8=invalid,
            gzip=gz,
            truncated_gzip=truncated,
        ),
        extra={"schema_version": version, "agent_version": agent_info.get("version")},
        started_at=min(stamps).isoformat() if stamps else None,
    )
