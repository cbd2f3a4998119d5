"""Reading Inspect AI eval logs (`.eval` zip, `.json`) into `AgentSession`s (agent-formats §3).

The log schema is Inspect's responsibility: the file is read with `inspect_ai.log`
(`read_eval_log(header_only=True)` for the header, `read_eval_log_samples` to stream the samples
one at a time, attachments resolved), installed by the optional extra `inspect`
(`pip install "evalkit[inspect]"`). Without it a log is reported as unreadable with that
instruction, and nothing else stops.

Per sample and epoch (§3.4–§3.9):

* tool calls: `ChatMessageAssistant.tool_calls`, joined to `ChatMessageTool` by `tool_call_id`
  (an error iff the tool message's `error` is set), plus server-side `tool_use` content items;
* final answer: `output.completion`, else the text of the last assistant message;
* tokens: `sample.model_usage`, summed over models. Since Inspect 0.3.184 `input_tokens`
  excludes cache reads and writes, so the prompt is `input + cache read + cache write`; in older
  logs, for OpenAI-family providers, `input_tokens` already held the cache reads, so the prompt is
  `input + cache write` and the cache reads are a part of it, never added again (§3.9). The rule
  is chosen per log from `eval.packages["inspect_ai"]` and per model from its provider prefix;
* per-request prompt sizes from `ModelEvent`s: `output.input_context_tokens` where present, else
  the same usage rule (an upper bound when one event made several requests);
* outcome: `reward` = the first numeric score, `passed` from the first `C`/`I` or boolean score;
* duration `total_time`; cost Σ `total_cost` when Inspect filled it for every model.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import Any

from evalkit.errors import TranscriptError
from evalkit.formats.common import (
    AgentSession,
    AgentToolCall,
    ModelTokens,
    Request,
    TokenLedger,
    number,
    tool_family,
)

__all__ = ["INSTALL_HINT", "inspect_available", "read_inspect_log", "usage_ledger"]

INSTALL_HINT = 'reading Inspect AI logs needs the optional extra: pip install "evalkit[inspect]"'
# §3.9: the release from which `input_tokens` excludes cached tokens for every provider.
_NEW_RULE = (0, 3, 184)
# §3.9: providers whose `input_tokens` included cache reads before 0.3.184 (OpenAI and the
# providers built on Inspect's OpenAI-compatible code, plus Grok).
_OPENAI_FAMILY = frozenset(
    {
        "openai",
        "openai-api",
        "together",
        "fireworks",
        "openrouter",
        "ollama",
        "vllm",
        "sglang",
        "sambanova",
        "perplexity",
        "cloudflare",
        "hf-inference-providers",
        "llama-cpp-python",
        "sagemaker",
        "grok",
    }
)


def inspect_available() -> bool:
    """Whether `inspect_ai` can be imported (the `inspect` extra is installed)."""
    try:
        import inspect_ai.log  # noqa: F401
    except ImportError:
        return False
    return True


def _version(text: Any) -> tuple[int, ...] | None:
    if not isinstance(text, str):
        return None
    m = re.match(r"(\d+)\.(\d+)\.(\d+)", text)
    return tuple(int(g) for g in m.groups()) if m else None


def _includes_cache_read(model: str, version: tuple[int, ...] | None) -> bool:
    """§3.9: whether this model's `input_tokens` already holds its cache reads."""
    if version is None or version >= _NEW_RULE:
        return False
    return model.split("/", 1)[0] in _OPENAI_FAMILY


def _get(usage: Any, name: str) -> float | None:
    return number(getattr(usage, name, None))


def _prompt(usage: Any, model: str, version: tuple[int, ...] | None) -> float:
    base = (_get(usage, "input_tokens") or 0.0) + (_get(usage, "input_tokens_cache_write") or 0.0)
    if _includes_cache_read(model, version):
        return base
    return base + (_get(usage, "input_tokens_cache_read") or 0.0)


def _optional_sum(values: list[float | None]) -> float | None:
    """Σ of the known values; None when none is known (the field is absent everywhere)."""
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def usage_ledger(
    model_usage: dict[str, Any], version: tuple[int, ...] | None
) -> tuple[TokenLedger, float | None, float | None]:
    """The ledger, the format's own total and the cost of a `{model: ModelUsage}` map (§3.9)."""
    items = list(model_usage.items())
    if not items:
        return TokenLedger(), None, None
    prompt = sum(_prompt(u, m, version) for m, u in items)
    read = _optional_sum([_get(u, "input_tokens_cache_read") for _, u in items])
    write = _optional_sum([_get(u, "input_tokens_cache_write") for _, u in items])
    costs = [_get(u, "total_cost") for _, u in items]
    ledger = TokenLedger(
        prompt_tokens=prompt,
        cache_read_tokens=read,
        cache_write_tokens=write,
        uncached_prompt_tokens=prompt - (read or 0.0),
        output_tokens=sum(_get(u, "output_tokens") or 0.0 for _, u in items),
        reasoning_tokens=_optional_sum([_get(u, "reasoning_tokens") for _, u in items]),
    )
    total = _optional_sum([_get(u, "total_tokens") for _, u in items])
    cost = sum(costs) if all(c is not None for c in costs) else None  # type: ignore[misc]
    return ledger, total, cost


def _text(message: Any) -> str:
    try:
        text = message.text
    except AttributeError:
        return ""
    return text if isinstance(text, str) else ""


def _tool_calls(messages: list[Any]) -> list[AgentToolCall]:
    results: dict[str, Any] = {}
    for m in messages:
        if getattr(m, "role", None) == "tool" and isinstance(getattr(m, "tool_call_id", None), str):
            results.setdefault(m.tool_call_id, m)
    calls: list[AgentToolCall] = []
    for m in messages:
        if getattr(m, "role", None) != "assistant":
            continue
        content = m.content if isinstance(m.content, list) else []
        for item in content:
            # Server-side tools (web search, provider-run MCP) are content items (§3.6).
            if getattr(item, "type", None) == "tool_use":
                name = item.name if item.tool_type != "web_search" else "web_search"
                calls.append(
                    AgentToolCall(
                        order=len(calls),
                        id=item.id,
                        name=name,
                        family=tool_family(name),
                        input=item.arguments,
                        output=item.result,
                        error=item.error is not None,
                    )
                )
        for call in m.tool_calls or []:
            result = results.get(call.id)
            calls.append(
                AgentToolCall(
                    order=len(calls),
                    id=call.id,
                    name=call.function,
                    family=tool_family(call.function),
                    input=call.arguments,
                    output=_text(result) if result is not None else None,
                    error=(result.error is not None) if result is not None else None,
                )
            )
    return calls


def _outcome(scores: dict[str, Any] | None) -> tuple[float | None, bool | None, dict[str, Any]]:
    """§3.8: reward = the first numeric score; passed = the first `C`/`I` or boolean score."""
    reward: float | None = None
    passed: bool | None = None
    raw: dict[str, Any] = {}
    for name, score in (scores or {}).items():
        value = getattr(score, "value", None)
        raw[name] = value
        if isinstance(value, bool):
            passed = value if passed is None else passed
        elif isinstance(value, int | float):
            reward = float(value) if reward is None else reward
        elif value in ("C", "I") and passed is None:
            passed = value == "C"
    return reward, passed, raw


def _requests(events: list[Any], version: tuple[int, ...] | None) -> tuple[Request, ...] | None:
    out = []
    for e in events:
        if getattr(e, "event", None) != "model" or e.output is None:
            continue
        usage = e.output.usage
        context = number(e.output.input_context_tokens)
        if context is None and usage is None:
            continue
        prompt = context if context is not None else _prompt(usage, e.model or "", version)
        out.append(
            Request(
                prompt_tokens=prompt,
                cache_read_tokens=_get(usage, "input_tokens_cache_read"),
                output_tokens=_get(usage, "output_tokens"),
                reasoning_tokens=_get(usage, "reasoning_tokens"),
            )
        )
    return tuple(out) if out else None


def _session(path: str, sample: Any, header: Any, version: tuple[int, ...] | None) -> AgentSession:
    messages = list(sample.messages or [])
    ledger, total, cost = usage_ledger(dict(sample.model_usage or {}), version)
    completion = sample.output.completion if sample.output is not None else ""
    if completion:
        answer, source = completion, "sample output completion"
    else:
        last = [m for m in messages if getattr(m, "role", None) == "assistant"]
        answer = _text(last[-1]) if last else ""
        source = "last assistant message" if last else "no assistant message"
    events = list(sample.events or [])
    reward, passed, scores = _outcome(sample.scores)
    usage_models = list((sample.model_usage or {}).keys())
    model = usage_models[-1] if usage_models else getattr(header.eval, "model", None)
    turns = sum(
        1
        for m in messages
        if getattr(m, "role", None) == "user" and not getattr(m, "tool_call_id", None)
    )
    return AgentSession(
        agent="inspect",
        format="inspect",
        path=path,
        session_id=f"{sample.id}:{sample.epoch}",
        model=model,
        tool_calls=tuple(_tool_calls(messages)),
        final_answer=answer,
        final_answer_source=source,
        turns=turns,
        aborted_turns=None,
        compactions=sum(1 for e in events if getattr(e, "event", None) == "compaction")
        if events
        else None,
        requests=_requests(events, version),
        context_window=None,
        duration_s=number(sample.total_time),
        cost_usd=cost,
        reward=reward,
        passed=passed,
        tokens=ledger,
        reported_total_tokens=total,
        sample_id=str(sample.id),
        epoch=int(sample.epoch),
        extra={
            "scores": scores,
            "working_time_s": number(sample.working_time),
            "limit": getattr(sample.limit, "type", None) if sample.limit is not None else None,
            "error": sample.error.message if sample.error is not None else None,
            "inspect_version": ".".join(map(str, version)) if version else None,
            "task": getattr(header.eval, "task", None),
        },
        started_at=_started(sample, header),
        models=_model_tokens(dict(sample.model_usage or {}), version),
    )


def _started(sample: Any, header: Any) -> str | None:
    """When the sample started (`started_at`, Inspect 0.3.70+), else when the eval was created:
    the date whose prices apply (issue 27)."""
    for value in (getattr(sample, "started_at", None), getattr(header.eval, "created", None)):
        if isinstance(value, str) and value:
            return value
    return None


def _model_tokens(
    model_usage: dict[str, Any], version: tuple[int, ...] | None
) -> tuple[ModelTokens, ...]:
    """Each model's ledger and recorded cost (the solver's and a grader's are priced apart)."""
    out = []
    for model, usage in model_usage.items():
        ledger, _, cost = usage_ledger({model: usage}, version)
        out.append(ModelTokens(model=str(model), tokens=ledger, cost_usd=cost))
    return tuple(out)


def read_inspect_log(path: str | os.PathLike[str]) -> Iterator[AgentSession]:
    """One `AgentSession` per sample and epoch of an Inspect log, streamed (agent-formats §3).

    Raises:
        TranscriptError: `inspect_ai` is not installed, or the file is not a readable log.
    """
    name = os.fspath(path)
    if not inspect_available():
        raise TranscriptError(name, INSTALL_HINT)
    from inspect_ai.log import read_eval_log, read_eval_log_samples

    fmt = "json" if not _is_zip(name) else "eval"
    try:
        header = read_eval_log(name, header_only=True, format=fmt)
    except Exception as exc:  # Inspect raises many kinds; one line names the file
        raise TranscriptError(name, f"not a readable Inspect AI log ({_reason(exc)})") from None
    version = _version((header.eval.packages or {}).get("inspect_ai"))
    try:
        if fmt == "json":  # one object: the samples are inline
            samples: Any = read_eval_log(name, resolve_attachments=True, format=fmt).samples or []
        else:
            samples = read_eval_log_samples(
                name, all_samples_required=False, resolve_attachments=True, format=fmt
            )
        for sample in samples:
            yield _session(name, sample, header, version)
    except TranscriptError:
        raise
    except Exception as exc:
        raise TranscriptError(name, f"a sample could not be read ({_reason(exc)})") from None


def _is_zip(path: str) -> bool:
    try:
        with open(path, "rb") as fh:
            return fh.read(4) == b"PK\x03\x04"
    except OSError as exc:
        raise TranscriptError(path, f"cannot read: {exc.strerror or exc}") from None


def _reason(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__
