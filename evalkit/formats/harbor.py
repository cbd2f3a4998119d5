"""Harbor trial results: the outcome of one trial from its `result.json` (agent-formats §4.4).

The outcome is read: `verifier_result.rewards.reward` (a number), else a lone reward of
another name (`score`, …); and what the run status needs (`evalkit.metrics.status`): the
exception harbor recorded (`exception_info`) and the agent's name (`agent_info.name`). `agent_result` token fields are never used (§4.4: they are neither
cache-inclusive nor deduplicated in early-2026 versions); tokens come from the transcript. For
pricing (issue 27) the result also gives what a transcript may lack: `agent_result.cost_usd`
(the recorded cost, where the log records none), `config.agent.model_name` (a `codex exec
--json` stream names no model) and `started_at` (the date whose prices apply).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

__all__ = ["TrialResult", "read_trial_result"]


@dataclass(frozen=True)
class TrialResult:
    """What a trial's `result.json` says about its outcome.

    Attributes:
        reward: The verifier's reward, or None when there is none (no verifier result, an
            exception before scoring, several rewards none of which is `reward`).
        reward_key: Which key of `rewards` gave it.
        exception: `exception_info.exception_type`, when the trial raised one.
        problem: Why no reward could be read, in words (None when one was read).
        exception_message: `exception_info.exception_message`, when the trial raised one.
        agent: `agent_info.name` (else `config.agent.name`), when the result names it.
        cost_usd: `agent_result.cost_usd`, when a number.
        model: `config.agent.model_name` (else `agent_info.model_info.name`), when named.
        started_at: `started_at`, when text.
    """

    reward: float | None
    reward_key: str | None = None
    exception: str | None = None
    problem: str | None = None
    exception_message: str | None = None
    agent: str | None = None
    cost_usd: float | None = None
    model: str | None = None
    started_at: str | None = None


def _number(x: object) -> float | None:
    if isinstance(x, bool) or not isinstance(x, int | float):
        return None
    return float(x) if math.isfinite(x) else None


def read_trial_result(path: str) -> TrialResult:
    """The outcome in one `result.json`; never raises (a bad file is a `problem`)."""
    try:
        with open(path, "rb") as fh:
            doc = json.loads(fh.read().decode("utf-8"))
    except OSError as exc:
        return TrialResult(None, problem=f"cannot read ({exc.strerror or exc})")
    except (UnicodeDecodeError, ValueError):
        return TrialResult(None, problem="not valid JSON")
    if not isinstance(doc, dict):
        return TrialResult(None, problem="not a harbor trial result (not a JSON object)")
    from dataclasses import replace

    return replace(
        _read(doc),
        exception_message=_message(doc),
        agent=_agent(doc),
        cost_usd=_number(_get(doc, "agent_result", "cost_usd")),
        model=_text(_get(doc, "config", "agent", "model_name"))
        or _text(_get(doc, "agent_info", "model_info", "name")),
        started_at=_text(doc.get("started_at")),
    )


def _get(doc: object, *keys: str) -> object:
    for key in keys:
        if not isinstance(doc, dict):
            return None
        doc = doc.get(key)
    return doc


def _text(x: object) -> str | None:
    return x if isinstance(x, str) and x else None


def _message(doc: dict) -> str | None:
    info = doc.get("exception_info")
    return _text(info.get("exception_message")) if isinstance(info, dict) else None


def _agent(doc: dict) -> str | None:
    info = doc.get("agent_info")
    if isinstance(info, dict) and _text(info.get("name")):
        return info["name"]
    config = doc.get("config")
    agent = config.get("agent") if isinstance(config, dict) else None
    return _text(agent.get("name")) if isinstance(agent, dict) else None


def _read(doc: dict) -> TrialResult:
    info = doc.get("exception_info")
    exception = _text(info.get("exception_type")) if isinstance(info, dict) else None
    if doc.get("reward_valid") is False:  # harbor 0.25: a policy voided the reward (§4.4)
        return TrialResult(
            None, exception=exception, problem="reward marked invalid (reward_valid)"
        )
    verifier = doc.get("verifier_result")
    rewards = verifier.get("rewards") if isinstance(verifier, dict) else None
    if not isinstance(rewards, dict) or not rewards:
        why = "no verifier reward" + (f" (the trial raised {exception})" if exception else "")
        return TrialResult(None, exception=exception, problem=why)
    key = "reward" if "reward" in rewards else (next(iter(rewards)) if len(rewards) == 1 else None)
    if key is None:
        names = ", ".join(sorted(map(str, rewards)))
        return TrialResult(
            None, exception=exception, problem=f"several rewards ({names}), none named reward"
        )
    value = _number(rewards[key])
    if value is None:
        return TrialResult(None, key, exception, f"rewards.{key} is not a number")
    return TrialResult(value, key, exception)
