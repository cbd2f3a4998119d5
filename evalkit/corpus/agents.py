"""Other agents' sessions in a corpus: Codex CLI and Inspect AI files as sweep payloads and frame rows.

A Codex rollout or `exec --json` capture is one session; an Inspect log is one session per sample
and epoch, named `<file>#<sample id>:<epoch>` in the frames. They fill the columns every agent
has (tool calls by family, the token ledger, turns, compactions, duration, cost, outcome, model);
the explore allocation and sufficiency columns are Claude Code metrics and stay `<NA>` for them
(issue 15). The residual columns (`residual_<family>`, `retrieval_residual`, …) are filled for a
Codex rollout, which records every request's prompt size, by evalkit's analogue of the Claude
Code residual (`evalkit.metrics.agent_occupancy`); `exec --json` and Inspect sessions have none. In the sweep such a file is accounted for and listed, never
mixed into the explore tables.
"""

from __future__ import annotations

import os
from typing import Any

from evalkit.ecma import utf16_len
from evalkit.errors import TranscriptError
from evalkit.formats.codex.rollout import rollout_id
from evalkit.formats.common import AgentSession, dumps
from evalkit.formats.detect import read_agent_file
from evalkit.formats.families import family_of
from evalkit.formats.profiles import CODEGRAPH, ToolProfile
from evalkit.metrics.agent_occupancy import agent_occupancy
from evalkit.metrics.status import agent_status, status_columns

__all__ = [
    "AGENT_REASON",
    "agent_payload",
    "agent_rows",
    "agent_run",
    "agent_summary",
    "find_parent_rollout",
    "parent_search_root",
    "read_agent_sessions",
    "session_kind",
    "session_log",
]

AGENT_REASON = {
    "codex": (
        "a Codex CLI session: the explore metrics are Claude Code metrics (its tool calls, tokens "
        "and turns are in the sessions frame)"
    ),
    "inspect": (
        "an Inspect AI log: the explore metrics are Claude Code metrics (its samples' tool calls, "
        "tokens and scores are in the sessions frame)"
    ),
}
# An ATIF trajectory (Harbor's cross-agent format): its agent is the trajectory's own name.
ATIF_REASON = (
    "a Harbor trajectory (ATIF): the explore metrics are Claude Code metrics (its tool calls and "
    "tokens are in the sessions frame)"
)
_DETAIL_KEYS = ("cmd", "command", "query", "path", "file_path", "pattern", "url")
_DETAIL_UNITS = 60


def session_log(file_log: str, s: AgentSession) -> str:
    """The session's `log`: the file, or `<file>#<sample id>:<epoch>` for an Inspect sample."""
    if s.sample_id is None:
        return file_log
    return f"{file_log}#{s.sample_id}:{s.epoch}"


def session_kind(s: AgentSession) -> str:
    """`headless` for `codex exec` runs and Inspect samples, `interactive` for other Codex
    sessions (the CLI, an IDE)."""
    if s.format == "codex-rollout":
        originator = s.extra.get("originator")
        return "headless" if originator in (None, "codex_exec") else "interactive"
    return "headless"


def find_parent_rollout(path: str, parent_id: str | None, root: str | None) -> str | None:
    """The parent thread's rollout file of a fork or subagent, looked up under `root` by the
    thread id in its name (`rollout-<stamp>-<thread id>.jsonl`, agent-formats §1.2)."""
    if not parent_id or not root:
        return None
    for dirpath, _dirs, files in os.walk(root):
        for name in sorted(files):
            if name.startswith("rollout-") and parent_id in name:
                candidate = os.path.join(dirpath, name)
                if os.path.abspath(candidate) == os.path.abspath(path):
                    continue
                try:
                    if rollout_id(candidate) == parent_id:
                        return candidate
                except TranscriptError:
                    continue
    return None


def parent_search_root(path: str) -> str:
    """Where to look for a rollout's parent thread when one file is read on its own: the Codex
    `sessions/` (or `archived_sessions/`) directory above it, else the file's directory."""
    here = os.path.dirname(os.path.abspath(path))
    probe = here
    while True:
        if os.path.basename(probe) in ("sessions", "archived_sessions"):
            return probe
        up = os.path.dirname(probe)
        if up == probe:
            return here
        probe = up


def read_agent_sessions(
    path: str, *, format: str | None = None, root: str | None = None
) -> list[AgentSession]:
    """Every session of one Codex or Inspect file. A fork or forked-context subagent has its
    copied parent lines excluded when the parent's rollout is found under `root` (§1.11)."""
    sessions = list(read_agent_file(path, format=format))  # type: ignore[arg-type]
    if len(sessions) == 1 and sessions[0].contains_parent_copy:
        parent = find_parent_rollout(path, sessions[0].parent_id, root)
        if parent is not None:
            sessions = list(read_agent_file(path, format=format, parent=parent))  # type: ignore[arg-type]
    return sessions


def _family_counts(s: AgentSession) -> dict[str, int]:
    counts: dict[str, int] = {}
    for c in s.tool_calls:
        counts[c.family] = counts.get(c.family, 0) + 1
    return counts


def _row(s: AgentSession, log: str, profile: ToolProfile = CODEGRAPH) -> dict[str, Any]:
    fam = _family_counts(s)
    multi = s.turns is not None and s.turns > 1
    skipped = s.read.skipped if s.read is not None else None
    return {
        "log": log,
        "agent": s.agent,
        "kind": session_kind(s),
        "question": None if multi else 1,
        "slice": "multi-turn" if multi else "single-question",
        "segments": 1,
        "answer_source": s.final_answer_source,
        "has_answer": bool(s.final_answer.strip()),
        "skipped_lines": skipped,
        "compactions": s.compactions,
        "assistant_messages": len(s.requests) if s.requests is not None else None,
        "tool_calls": len(s.tool_calls),
        "tool_calls_no_toolsearch": len(s.tool_calls) - fam.get("tool_search", 0),
        "read_calls": fam.get("read", 0),
        "grep_glob_calls": fam.get("search", 0),
        "bash_calls": fam.get("bash", 0),
        "codegraph_calls": fam.get("codegraph", 0),
        "duration_s": s.duration_s,
        "cost_usd": s.cost_usd,
        "recorded_cost_usd": s.cost_usd,
        "started_at": s.started_at,
        "context_window": s.context_window,
        "model": s.model,
        "turns": s.turns,
        "aborted_turns": s.aborted_turns,
        **s.tokens.to_dict(),
        "reward": s.reward,
        "passed": s.passed,
        **_outcome_source(s),
        "parent_copy_included": s.contains_parent_copy,
        # issue 23: the profile applies to every agent (its tool names, Codex's or Inspect's)
        "tool_under_test_calls": sum(1 for c in s.tool_calls if profile.is_tool_under_test(c.name)),
        **status_columns(agent_status(s)),
        **_occupancy_row(s, profile),
    }


def _outcome_source(s: AgentSession) -> dict[str, Any]:
    """An Inspect sample's own score is its outcome (`inspect-score`); a harbor result or an
    outcomes CSV joined when the corpus is loaded may replace it (`evalkit.corpus.outcomes`)."""
    if s.reward is None and s.passed is None:
        return {}
    scores = s.extra.get("scores")
    names = ", ".join(map(str, scores)) if isinstance(scores, dict) and scores else None
    return {"outcome_source": "inspect-score", "outcome_ref": names}


def _occupancy_row(s: AgentSession, profile: ToolProfile = CODEGRAPH) -> dict[str, Any]:
    """The residual columns of a Codex rollout (evalkit's analogue of the Claude Code residual,
    `evalkit.metrics.agent_occupancy`); none (<NA>) for `exec --json` and Inspect."""
    from evalkit.corpus.frame_rows import (
        occupancy_columns,
        retrieval_columns,
        tool_under_test_columns,
    )

    o = agent_occupancy(s, profile)
    if o is None:
        return tool_under_test_columns(profile, None)
    cols = {**occupancy_columns(o), **tool_under_test_columns(profile, o)}
    cols["compactions"] = s.compactions  # the reader's count (`compacted` lines or events)
    return {**cols, **retrieval_columns(o, o.window_tokens)}


def _detail(value: Any) -> str:
    if isinstance(value, dict):
        for key in _DETAIL_KEYS:
            if key in value:
                value = value[key]
                break
        else:
            return ""
    if isinstance(value, list):  # argv, or a file change's [{path, kind}]
        value = " ".join(str(v.get("path", "")) if isinstance(v, dict) else str(v) for v in value)
    if not isinstance(value, str):
        value = dumps(value) if value is not None else ""
    line = value.strip().split("\n", 1)[0]
    return line[:_DETAIL_UNITS]


def _tool_call_rows(
    s: AgentSession, log: str, profile: ToolProfile = CODEGRAPH
) -> list[dict[str, Any]]:
    rows = []
    for c in s.tool_calls:
        answered = c.output is not None
        rows.append(
            {
                "log": log,
                "agent": s.agent,
                "kind": session_kind(s),
                "question": None,
                "call": c.order + 1,
                "tool_use_id": c.id,
                "thread": c.thread,
                "message_id": None,
                "name": c.name,
                "family": c.family,
                "detail": _detail(c.input),
                "results": 1 if answered else 0,
                "result_chars": utf16_len(c.output) if answered else None,  # type: ignore[arg-type]
                "is_error": c.error if answered else None,
                "tool_family": family_of(c.name, profile),
            }
        )
    return rows


def agent_rows(
    sessions: list[AgentSession], file_log: str, profile: ToolProfile = CODEGRAPH
) -> dict[str, list[dict[str, Any]]]:
    """The frame rows of a file's sessions (identity overrides included: `log`, `agent`,
    `kind`, `question`, `slice`); the explore frames get none; the models frame one row per
    model with its token ledger (issue 27)."""
    from evalkit.corpus.frame_rows import FRAME_NAMES

    out: dict[str, list[dict[str, Any]]] = {name: [] for name in FRAME_NAMES}
    for s in sessions:
        log = session_log(file_log, s)
        out["sessions"].append(_row(s, log, profile))
        out["tool_calls"].extend(_tool_call_rows(s, log, profile))
        out["models"].extend(_model_rows(s, log))
    return out


def _model_rows(s: AgentSession, log: str) -> list[dict[str, Any]]:
    """One row per model with its token ledger (issue 27): an Inspect sample's models apart
    (solver and grader), else the session's ledger under its model. The priced cost is added
    when the frame is built (`evalkit.corpus.pricing`)."""
    ident = {"log": log, "agent": s.agent, "kind": session_kind(s), "question": None}
    parts = [(m.model, m.tokens, m.cost_usd) for m in s.models] or [(s.model, s.tokens, s.cost_usd)]
    if s.tokens.prompt_tokens is None and s.tokens.output_tokens is None and not s.models:
        return []
    biggest = max((r.prompt_tokens for r in s.requests or ()), default=None)
    rows = []
    for model, g, cost in parts:
        rows.append(
            {
                **ident,
                "model": model,
                "requests": len(s.requests) if s.requests is not None and len(parts) == 1 else None,
                "prompt_tokens": g.prompt_tokens,
                "input_tokens": (
                    g.prompt_tokens - (g.cache_read_tokens or 0) - (g.cache_write_tokens or 0)
                    if g.prompt_tokens is not None
                    else None
                ),
                "output_tokens": g.output_tokens,
                "reasoning_tokens": g.reasoning_tokens,
                "cache_read_tokens": g.cache_read_tokens,
                "cache_creation_tokens": g.cache_write_tokens,
                "cost_usd": cost,
                "context_window": s.context_window if len(parts) == 1 else None,
                "max_request_prompt_tokens": biggest if len(parts) == 1 else None,
                "source": "log",
            }
        )
    return rows


def agent_summary(s: AgentSession, file_log: str) -> dict[str, Any]:
    """The few numbers the sweep's agent table needs, JSON-able (cached with the payload)."""
    return {
        "log": session_log(file_log, s),
        "agent": s.agent,
        "format": s.format,
        "tool_calls": len(s.tool_calls),
        "prompt_tokens": s.tokens.prompt_tokens,
        "output_tokens": s.tokens.output_tokens,
        "duration_s": s.duration_s,
        "cost_usd": s.cost_usd,
        "reward": s.reward,
        "passed": s.passed,
    }


def agent_run(s: AgentSession, profile: Any) -> dict[str, Any]:
    """What the trial sweep keeps of one Codex, Inspect or ATIF session (the twin of
    `records.run_payload`, JSON-able): the arm comparison's figures where the format has them,
    tool calls (the tool under test's by the profile), tokens, cost and duration.

    A figure the format does not carry is None (the comparison's spans leave it out), never 0;
    the explore-call figures (sufficiency, allocation, the codegraph CLI) are Claude Code
    metrics and are 0 here, so they add nothing to an arm's totals.
    """
    fam = _family_counts(s)
    under_test = sum(1 for c in s.tool_calls if profile.is_tool_under_test(c.name))
    ledger = s.tokens
    total = None
    if ledger.prompt_tokens is not None:
        total = ledger.prompt_tokens + (ledger.output_tokens or 0)
    reqs = s.requests or ()
    occ = agent_occupancy(s, profile)
    figures = {
        "dur": s.duration_s,
        "tools": len(s.tool_calls) - fam.get("tool_search", 0),
        "reads": fam.get("read", 0),
        "grep": fam.get("search", 0),
        "bash": fam.get("bash", 0),
        "cg": under_test,
        "turns": len(reqs) if reqs else s.turns,
        "ctx": reqs[-1].prompt_tokens if reqs else None,
        "ctx_base": reqs[0].prompt_tokens if reqs else None,
        "occ_cg": occ.residual[occ.tool_family] if occ is not None else None,
        "occ_file": occ.residual_file_access if occ is not None else None,
        "answered": 0,
        "counts": {},
        "errors": 0,
        "alloc_used": 0,
        "alloc_envelope": 0,
        "alloc_calls": 0,
        "cli_calls": 0,
        "cli_contaminated": 0,
        "ok": not s.aborted_turns and bool(s.final_answer.strip()),
        "raced": False,
        "processed": total,
        "processed_message_usage": total,
        "cost": s.cost_usd,
        "segments": 1,
    }
    return {
        "figures": figures,
        "read_allocation": None,
        "tool_calls": len(s.tool_calls),
        "tool_under_test_calls": under_test,
        "cost_usd": s.cost_usd,
        "tokens": total,
        "duration_s": s.duration_s,
        "other_types": {},
    }


def agent_payload(
    root: str,
    first: str,
    log: str,
    fmt: str | None,
    frames: bool,
    profile: ToolProfile | None = None,
) -> dict[str, Any]:
    """The sweep payload of one Codex, Inspect or ATIF file: accounted as not in the explore
    sweep, with its sessions' summaries (and frame rows when `frames`; and, with a tool
    `profile`, each session's trial-sweep figures as `runs`).

    Raises:
        TranscriptError: The file cannot be read.
    """
    sessions = read_agent_sessions(first, format=fmt, root=root)
    if not sessions:
        raise TranscriptError(first, "an Inspect AI log with no samples")
    agent = sessions[0].agent
    damage = []
    read = sessions[0].read
    if read is not None and (text := read.damage()):
        # As `FileDamage` fields: file, what, malformed, non_object, invalid_utf8, cut gzip;
        # a line over the limit or with a type that is not text is a skipped line too.
        damage.append(
            [
                log,
                text,
                read.malformed + read.too_long + read.bad_type,
                read.non_object,
                read.invalid_utf8,
                read.truncated_gzip,
                None,
            ]
        )
    payload: dict[str, Any] = {
        "status": "no-explore",
        "reason": AGENT_REASON.get(agent, ATIF_REASON),
        "calls": [],
        "tool_calls": sum(len(s.tool_calls) for s in sessions),
        "has_answer": any(s.final_answer.strip() for s in sessions),
        "damage": damage,
        "agent": agent,
        "agent_sessions": [agent_summary(s, log) for s in sessions],
    }
    if frames:
        payload["rows"] = agent_rows(sessions, log, profile or CODEGRAPH)
    if profile is not None:
        payload["runs"] = [
            {
                "log": session_log(log, s),
                "sample": s.sample_id,
                "reward": s.reward,
                "passed": s.passed,
                "run": agent_run(s, profile),
            }
            for s in sessions
        ]
    return payload
