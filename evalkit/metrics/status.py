"""Run status: how each session ended, for every agent (issue 23, Build 2).

One status per session, decided from what the log itself says and, for a harbor trial, from its
`result.json` (agent-formats §4.4):

| status | meaning |
|---|---|
| `ok` | the run ended normally (a success result; a final turn that is not an error) |
| `agent_error` | an error result, or an errored final turn that is not a rate limit |
| `rate_limited` | a usage-limit or rate-limit result or turn, a rejected `rate_limit_event` the run did not recover from, an HTTP 429 or 529 (overloaded) error |
| `max_turns` | the run stopped at a limit set for it: turns (`error_max_turns`), messages, tokens or budget |
| `timeout` | the harness stopped the run at its time limit (harbor `AgentTimeoutError`, Inspect time limits) |
| `infra_error` | the harness failed around the run (harbor `exception_info`), or a `result.json` has no transcript beside it |
| `empty` | no assistant turn at all |
| `cancelled` | interrupted by a person or the harness (Codex `turn_aborted`, an aborted result) |
| `unknown` | the log cannot tell (a headless run cut off before its result event) |

The patterns are declared once below (`RATE_LIMIT`, `LIMIT_SUBTYPES`, …), and one function per
agent reads them: `claude_code_status` (a Claude Code event list, headless or interactive),
`codex_status`, `inspect_status` (an `AgentSession`), `harbor_status` (a log's status with
the trial's `result.json`). `success_of` is the frames' `success`: true only for `ok`.
Every function returns a `RunStatus` with a one-line `detail`; none raises.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evalkit.formats.common import AgentSession
    from evalkit.formats.harbor import TrialResult

__all__ = [
    "STATUSES",
    "FAILED",
    "RunStatus",
    "RATE_LIMIT",
    "claude_code_status",
    "codex_status",
    "inspect_status",
    "agent_status",
    "harbor_status",
    "missing_transcript_status",
    "success_of",
    "status_columns",
]

STATUSES = (
    "ok",
    "agent_error",
    "rate_limited",
    "max_turns",
    "timeout",
    "infra_error",
    "empty",
    "cancelled",
    "unknown",
)
# The statuses of a run that did not end normally (left out of outcome and cost comparisons).
FAILED = frozenset(STATUSES) - {"ok", "unknown"}

# --- the patterns --------------------------------------------------------------------------

# Text of a usage-limit, rate-limit or overload error, in any agent's words ("You've hit your
# limit · resets 3pm", "Claude AI usage limit reached|…", "API Error: 429 …", "529
# {"type":"error","error":{"type":"overloaded_error"…", Codex "You've hit your usage limit",
# "stream error: 429 Too Many Requests", Inspect "RateLimitError").
RATE_LIMIT = re.compile(
    r"hit your (?:usage )?limit|usage limit|rate[ _-]?limit|too many requests|overloaded"
    r"|\b(?:429|529)\b|quota exceeded|insufficient_quota",
    re.IGNORECASE,
)
# HTTP statuses of a rate limit (429) and an overloaded API (529).
RATE_LIMIT_HTTP = frozenset({429, 529})
# Claude Code `result.subtype`s (agent-formats §5.4) of a run stopped at a limit of its own.
LIMIT_SUBTYPES = {
    "error_max_turns": "turn limit",
    "error_max_budget_usd": "budget limit",
}
# Claude Code `result.terminal_reason`s of an interrupted run.
ABORTED_REASONS = frozenset({"aborted_streaming", "aborted_tools"})
# An assistant event's `error` (the SDK's `AssistantMessage.error`) meaning a rate limit.
RATE_LIMIT_ERRORS = frozenset({"rate_limit", "overloaded"})
# What Claude Code writes as the user's turn when a person interrupts it (interactive logs).
INTERRUPTED = "[Request interrupted by user"
# Inspect `sample.limit.type` → status.
INSPECT_LIMITS = {
    "message": "max_turns",
    "turn": "max_turns",
    "token": "max_turns",
    "cost": "max_turns",
    "custom": "max_turns",
    "time": "timeout",
    "working": "timeout",
    "operator": "cancelled",
    "interrupt": "cancelled",
    "context": "agent_error",
}
# Harbor `exception_info.exception_type` → status; any other exception is `infra_error`.
HARBOR_EXCEPTIONS = {
    "AgentTimeoutError": "timeout",
    "NonZeroAgentExitCodeError": "agent_error",
    "CancelledError": "cancelled",
    "KeyboardInterrupt": "cancelled",
}
_DETAIL_CHARS = 160


@dataclass(frozen=True)
class RunStatus:
    """How a session ended: one of `STATUSES`, and why in one line."""

    status: str
    detail: str

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"unknown run status {self.status!r}")


def success_of(status: str | None) -> bool | None:
    """The frames' `success`: True for `ok`, None for `unknown` (or no status), else False."""
    if status is None or status == "unknown":
        return None
    return status == "ok"


def status_columns(status: RunStatus) -> dict[str, Any]:
    """The sessions frame's run-status columns: `status`, `status_detail`, and `success`
    (true only for `ok`, <NA> where the log cannot tell)."""
    return {
        "status": status.status,
        "status_detail": status.detail,
        "success": success_of(status.status),
    }


def _line(text: Any) -> str:
    """A one-line detail: whitespace collapsed, cut at `_DETAIL_CHARS` characters."""
    s = " ".join(str(text).split())
    return s if len(s) <= _DETAIL_CHARS else s[: _DETAIL_CHARS - 1] + "…"


def _said(text: str, what: str) -> str:
    return f"{what}: {_line(text)}" if text.strip() else what


def _is_rate_limit(text: str) -> bool:
    return bool(text) and RATE_LIMIT.search(text) is not None


def _error_status(text: str, what: str, http: Any = None) -> RunStatus:
    """`rate_limited` when the error's text or HTTP status says so, else `agent_error`."""
    if http in RATE_LIMIT_HTTP or _is_rate_limit(text):
        return RunStatus("rate_limited", _said(text, what))
    return RunStatus("agent_error", _said(text, what))


# --- Claude Code ---------------------------------------------------------------------------


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return " ".join(
        b["text"]
        for b in content
        if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
    )


def _main(event: dict[str, Any]) -> bool:
    # A subagent's event names its delegating call (stream-json), or was stamped so (§1.10).
    return event.get("parent_tool_use_id") is None and not event.get("isSidechain")


def _assistant_error(event: dict[str, Any]) -> RunStatus | None:
    """The status an errored assistant turn gives (an API error written as a turn), or None."""
    message = event.get("message")
    text = _text_of(message.get("content")) if isinstance(message, dict) else ""
    err = event.get("error")
    if isinstance(err, str) and err:
        if err in RATE_LIMIT_ERRORS:
            return RunStatus("rate_limited", _said(text, f"assistant turn error {err}"))
        return _error_status(text, f"assistant turn error {err}")
    if event.get("isApiErrorMessage") is True or text.startswith("API Error"):
        return _error_status(text, "API error turn")
    if isinstance(message, dict) and message.get("model") == "<synthetic>" and _is_rate_limit(text):
        return RunStatus("rate_limited", _said(text, "synthetic turn"))
    return None


def _result_status(event: dict[str, Any], rejected: bool) -> RunStatus:
    subtype = event.get("subtype")
    is_error = event.get("is_error") is True
    text = event.get("result") if isinstance(event.get("result"), str) else ""
    errors = event.get("errors")
    if isinstance(errors, list):
        text = " ".join([text, *(str(e) for e in errors if e is not None)]).strip()
    if subtype == "success" and not is_error:
        return RunStatus("ok", "result: success")
    if subtype is None and not is_error:
        return RunStatus("unknown", "a result event without a subtype")
    what = f"result {subtype}" + (" (is_error)" if is_error else "")
    if subtype in LIMIT_SUBTYPES or event.get("terminal_reason") == "max_turns":
        return RunStatus(
            "max_turns", _said(text, f"{what}: {LIMIT_SUBTYPES.get(subtype, 'turn limit')}")
        )
    http = event.get("api_error_status")
    if http in RATE_LIMIT_HTTP or _is_rate_limit(text):
        return RunStatus("rate_limited", _said(text, what))
    if rejected:
        return RunStatus("rate_limited", _said(text, f"{what} after a rejected rate_limit_event"))
    if event.get("terminal_reason") in ABORTED_REASONS:
        return RunStatus("cancelled", f"{what}: {event['terminal_reason']}")
    return _error_status(text, what, http)


def _rejected(event: dict[str, Any]) -> bool:
    info = event.get("rate_limit_info")
    return isinstance(info, dict) and info.get("status") == "rejected"


def claude_code_status(
    events: Sequence[dict[str, Any]], *, interactive: bool = False, segments: int = 1
) -> RunStatus:
    """How a Claude Code session ended (its events, every segment; `interactive` for a project
    log, which has no result event by design; `segments` its segment files)."""
    results: list[dict[str, Any]] = []
    last_main: dict[str, Any] | None = None  # the last main-thread assistant event
    assistants = 0
    rejected_at = -1  # index of the last rejected rate_limit_event
    last_at = -1  # index of the last main-thread assistant event
    last_user = ""  # the text of the last main-thread user turn
    for i, e in enumerate(events):
        etype = e.get("type")
        if etype == "assistant" and isinstance(e.get("message"), dict):
            assistants += 1
            if _main(e):
                last_main, last_at = e, i
        elif etype == "result":
            results.append(e)
        elif etype == "rate_limit_event" and _rejected(e):
            rejected_at = i
        elif etype == "user" and _main(e):
            message = e.get("message")
            if isinstance(message, dict):
                text = _text_of(message.get("content"))
                if text:
                    last_user = text
    rejected = rejected_at >= 0
    for r in results:
        got = _result_status(r, rejected)
        if got.status != "ok":
            return got
    if results:
        if len(results) < segments:
            return RunStatus(
                "unknown", f"{len(results)} result events for {segments} segment files"
            )
        if not assistants:
            return RunStatus("empty", "a success result without any assistant turn")
        return RunStatus("ok", "result: success")
    if last_main is None:
        return RunStatus("empty", "no assistant turn")
    if (err := _assistant_error(last_main)) is not None:
        return err
    if rejected_at > last_at:
        return RunStatus("rate_limited", "a rejected rate_limit_event after the last turn")
    if last_user.startswith(INTERRUPTED):
        return RunStatus("cancelled", _line(last_user.strip("[]")))
    if interactive:
        return RunStatus("ok", "interactive log: the last turn is not an error (no result event)")
    return RunStatus(
        "unknown", "no result event: the run stopped before it ended, or the log is cut"
    )


# --- Codex and Inspect ---------------------------------------------------------------------


def _no_turn(s: AgentSession) -> bool:
    return not s.tool_calls and not s.final_answer.strip() and not s.requests


def codex_status(s: AgentSession) -> RunStatus:
    """How a Codex rollout or `codex exec --json` session ended (agent-formats §1.7, §2.2)."""
    x = s.extra
    errors = [str(e) for e in x.get("errors") or () if e]
    if s.format == "codex-exec":
        failed = x.get("failed_turns") or 0
        unfinished = (s.aborted_turns or 0) - failed
        if failed or (errors and unfinished):
            text = errors[-1] if errors else ""
            return _error_status(text, "turn.failed" if failed else "error event")
        if _no_turn(s) and s.tokens.prompt_tokens is None:
            return RunStatus("empty", "no agent message, tool call or usage")
        if unfinished > 0:
            return RunStatus("unknown", "a turn started and never completed")
        return RunStatus("ok", "every turn completed")
    last = x.get("last_turn")
    if errors and last != "complete":
        return _error_status(errors[-1], "error event")
    if isinstance(last, str) and last.startswith("aborted"):
        return RunStatus("cancelled", f"turn_aborted ({last.partition(':')[2] or 'no reason'})")
    if _no_turn(s):
        return RunStatus("empty", "no request, tool call or agent message")
    if x.get("rate_limit_reached") and last != "complete":
        return RunStatus("rate_limited", f"rate limit reached ({x['rate_limit_reached']})")
    if last == "complete" or s.final_answer.strip():
        return RunStatus("ok", "the last turn completed" if last == "complete" else "final answer")
    return RunStatus("unknown", "no completed turn and no final answer")


def inspect_status(s: AgentSession) -> RunStatus:
    """How an Inspect AI sample ended: its `error`, its `limit` (agent-formats §3.4)."""
    x = s.extra
    error = x.get("error")
    if error:
        return _error_status(str(error), "sample error")
    limit = x.get("limit")
    if limit:
        return RunStatus(INSPECT_LIMITS.get(str(limit), "max_turns"), f"sample limit: {limit}")
    if _no_turn(s):
        return RunStatus("empty", "no assistant message or tool call")
    return RunStatus("ok", "the sample completed")


def agent_status(s: AgentSession) -> RunStatus:
    """`codex_status` or `inspect_status`, by the session's agent."""
    return inspect_status(s) if s.agent == "inspect" else codex_status(s)


# --- harbor --------------------------------------------------------------------------------


def harbor_status(log: RunStatus, trial: TrialResult) -> RunStatus:
    """A harbor trial's status: the log's, unless the trial's `exception_info` says more.

    A failure the log itself shows (an error result, a rate limit, a turn limit) stands; over
    a log that ended normally, was cut off or is empty, the trial's exception decides
    (`HARBOR_EXCEPTIONS`, else `infra_error`; an exception whose message is a rate limit is
    `rate_limited`)."""
    exc = trial.exception
    if not exc:
        return log
    said = f"harbor {exc}" + (
        f": {_line(trial.exception_message)}" if trial.exception_message else ""
    )
    if log.status not in ("ok", "unknown", "empty"):
        return log
    status = HARBOR_EXCEPTIONS.get(exc)
    if status is None:
        status = "rate_limited" if _is_rate_limit(trial.exception_message or "") else "infra_error"
    return RunStatus(status, _line(said))


def missing_transcript_status(trial: TrialResult | None) -> RunStatus:
    """A harbor trial whose `result.json` has no agent log beside it: `infra_error`."""
    what = "result.json without a transcript beside it"
    if trial is not None and trial.exception:
        msg = f": {_line(trial.exception_message)}" if trial.exception_message else ""
        what += f" (harbor {trial.exception}{msg})"
    return RunStatus("infra_error", _line(what))
