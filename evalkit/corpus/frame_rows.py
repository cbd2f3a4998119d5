"""The rows of every corpus frame for one parsed session: the one place a session's values
become frame rows.

`session_rows(s)` gives, per frame (`FRAME_NAMES`), the rows of one session without its identity
columns but with `question` (JSON-able values only: the corpus store keeps them);
`evalkit.corpus.discover.identity` gives a session's identity columns, and
`evalkit.store.columns.build_frame` turns rows into a frame. The public frame functions
(`sessions_df`, `calls_df`, …) are in `evalkit.corpus.frames`.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from evalkit.ecma import js_string, utf16_len
from evalkit.errors import EvalkitError, TranscriptError
from evalkit.formats.claude_code.transcripts import is_explore, tool_results
from evalkit.formats.families import family_of
from evalkit.formats.profiles import CODEGRAPH, ToolProfile
from evalkit.metrics.costs import claude_code_date, claude_code_ledgers
from evalkit.metrics.occupancy import DEFAULT_WINDOW_TOKENS, FAMILIES, Occupancy, compute_occupancy
from evalkit.metrics.status import RunStatus, claude_code_status, status_columns
from evalkit.metrics.sufficiency import BUCKETS
from evalkit.metrics.summary import Summary, summarize
from evalkit.metrics.tokens import ClaudeCodeTokens, claude_code_tokens
from evalkit.session import InteractiveSession, Session

__all__ = [
    "FRAME_NAMES",
    "SessionError",
    "error_text",
    "session_rows",
    "occupancy_columns",
    "retrieval_columns",
]

FRAME_NAMES = ("sessions", "calls", "sections", "files", "tool_calls", "models")

AnySession = Session | InteractiveSession


@dataclass(frozen=True)
class SessionError:
    """A session left out of a frame because it could not be read.

    Attributes:
        log: The session (its first file; corpus-relative when a corpus was loaded).
        error: Why, in one line.
    """

    log: str
    error: str

    def __str__(self) -> str:
        return f"{self.log}: {self.error}"


def error_text(exc: EvalkitError, log: str) -> str:
    why = str(exc)
    # A TranscriptError names its file; don't repeat it when it is the session's log.
    if isinstance(exc, TranscriptError) and exc.path == log:
        why = exc.reason if exc.line is None else f"line {exc.line}: {exc.reason}"
    return why


# --- rows of one session (no identity; JSON-able so the corpus cache can keep them) -----------


@dataclass(frozen=True)
class _View:
    """What the row builders need, from a headless `Session` or an `InteractiveSession`."""

    events: Sequence[dict[str, Any]]
    path: str
    starts: tuple[int, ...]
    segments: int
    any_type: bool
    answer_source: str | None
    allocation: Any
    sufficiency: Any
    occupancy: Any
    summary: Summary | None
    skipped_lines: int
    tokens: ClaudeCodeTokens
    status: RunStatus
    profile: ToolProfile = CODEGRAPH
    interactive: bool = False
    turns: int | None = None
    output_tokens: float | None = None

    def question(self, event_index: int) -> int:
        """1-based segment (question) holding event `event_index`."""
        if event_index < 0:
            return 1
        return bisect.bisect_right(self.starts, event_index) or 1


def _view(s: AnySession, profile: ToolProfile | None = None) -> _View:
    if isinstance(s, InteractiveSession):
        profile = profile or CODEGRAPH
        try:  # evalkit's own per-session fields over the merged events (the reader has none)
            summary: Summary | None = summarize(s.events, path=s.path, profile=profile)
        except TranscriptError:
            summary = None
        # The main file's events come first, then each subagent file's (§1.10 step 6).
        main = s.events[: len(s.events) - sum(len(sub.events) for sub in s.subagents)]
        tokens = claude_code_tokens(s.events)
        return _View(
            events=s.events,
            path=s.path,
            starts=(0,),
            segments=1,
            any_type=True,
            answer_source=s.answer.source if s.answer else None,
            allocation=s.allocation,
            sufficiency=s.sufficiency,
            # The reference's session reader computes none (§1.10 step 7); the frames give the
            # occupancy `evalkit run` prints for the main file (issue 23).
            occupancy=_main_occupancy(main, s.path),
            summary=summary,
            skipped_lines=sum(r.skipped for r in s.segment_reads),
            tokens=tokens,
            profile=profile,
            status=claude_code_status(s.events, interactive=True),
            interactive=True,
            turns=prompts(main),
            output_tokens=tokens.ledger.output_tokens
            if tokens.ledger.output_tokens is not None
            else message_output_tokens(s.events),
        )
    t = s.transcript
    return _View(
        events=t.events,
        path=t.paths[0],
        starts=t.segment_starts,
        segments=len(t.paths),
        any_type=False,
        answer_source=s.answer.source,
        allocation=s.allocation,
        sufficiency=s.sufficiency,
        occupancy=s.occupancy,
        summary=s.summary,
        skipped_lines=t.skipped_lines,
        tokens=s.tokens,
        profile=s.profile,
        status=claude_code_status(t.events, segments=len(t.paths)),
        # One `claude -p` prompt per segment file (Decision 7).
        turns=len(t.paths),
        output_tokens=s.tokens.ledger.output_tokens,
    )


def _main_occupancy(events: Sequence[dict[str, Any]], path: str) -> Occupancy | None:
    """Occupancy of an interactive log's main file, as `evalkit run` computes it for that file;
    None when its events hold input the occupancy cannot be computed over."""
    try:
        return compute_occupancy(events, path=path)
    except TranscriptError:
        return None


def prompts(events: Sequence[dict[str, Any]]) -> int:
    """User turns of an interactive log's main thread: user events whose message carries text
    (a string, or text blocks), not tool results, meta lines, compaction summaries or an
    interruption notice."""
    n = 0
    for e in events:
        if e.get("type") != "user" or e.get("parent_tool_use_id") is not None:
            continue
        if e.get("isMeta") or e.get("isCompactSummary") or e.get("isSidechain"):
            continue
        message = e.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            text = content
        elif isinstance(content, list):
            text = "".join(
                b.get("text") or ""
                for b in content
                if isinstance(b, dict)
                and b.get("type") == "text"
                and isinstance(b.get("text"), str)
            )
        else:
            continue
        if text.strip() and not text.startswith("[Request interrupted by user"):
            n += 1
    return n


def message_output_tokens(events: Sequence[dict[str, Any]]) -> float | None:
    """Σ `message.usage.output_tokens` over distinct assistant message ids (each id's last
    event): all an interactive log says of its output, which has no result event. Claude Code
    writes these as streamed snapshots (agent-formats §5.3), so the sum is a lower bound."""
    last: dict[Any, float] = {}
    for e in events:
        if e.get("type") != "assistant":
            continue
        message = e.get("message")
        if not isinstance(message, dict):
            continue
        usage = message.get("usage")
        out = usage.get("output_tokens") if isinstance(usage, dict) else None
        if isinstance(out, bool) or not isinstance(out, int | float):
            continue
        mid = message.get("id")
        last[mid if isinstance(mid, str) and mid else ("#", len(last))] = out
    return sum(last.values()) if last else None


def session_rows(
    s: AnySession, profile: ToolProfile | None = None
) -> dict[str, list[dict[str, Any]]]:
    """The rows of every frame for one session, without the identity columns but with
    `question` (JSON-able values only: the corpus loader caches them). `profile` names the
    tool under test of an interactive session (a headless one carries its own)."""
    v = _view(s, profile)
    results = list(tool_results(v.events, path=v.path, any_type=v.any_type))
    calls, call_questions = _call_rows(v, results)
    rows = {
        "sessions": [_session_row(v)],
        "calls": calls,
        "sections": _section_rows(v, call_questions),
        "files": _file_rows(v),
        "tool_calls": _tool_call_rows(v, results),
        "models": _model_rows(v),
    }
    if v.interactive:  # by content, whatever the file's name or folder (issue 23)
        for frame in rows.values():
            for row in frame:
                row["kind"] = "interactive"
    return rows


def _nan_to_none(x: float | None) -> float | None:
    return None if x is None or x != x else x


def _session_row(v: _View) -> dict[str, Any]:
    a = v.allocation
    row: dict[str, Any] = {
        "question": 1 if v.segments == 1 else None,
        "segments": v.segments,
        "answer_source": v.answer_source,
        "has_answer": a.has_answer,
        "explore_calls": len(a.calls),
        "sections": a.sections,
        "files_returned": a.files_returned,
        "files_cited": a.files_used,
        "chars": a.envelope,
        "cited_chars": a.used,
        "path_cited_chars": a.used_path,
        # No explore call with sections: the efficiency is undefined, not zero (§8.1).
        "efficiency": a.efficiency if a.calls else None,
        "path_efficiency": a.efficiency_path if a.calls else None,
        "skipped_lines": v.skipped_lines,
    }
    r = v.sufficiency
    row.update(
        {
            "answered_calls": r.answered,
            "errored_calls": r.errors,
            "concurrent_accesses": r.concurrent,
            **{f"next_{b}": r.counts[b] for b in BUCKETS},
        }
    )
    if (o := v.occupancy) is not None:
        row.update(occupancy_columns(o))
    row.update(tool_under_test_columns(v.profile, v.occupancy))
    if (m := v.summary) is not None:
        has_result = m.results > 0  # no result event: duration, cost and outcome are unknown
        row.update(
            {
                "assistant_messages": m.turns,
                "tool_calls": len(m.calls),
                "tool_calls_no_toolsearch": m.tools,
                "read_calls": m.reads,
                "grep_glob_calls": m.grep,
                "bash_calls": m.bash,
                # A column named after codegraph holds codegraph's numbers only (issue 23).
                "codegraph_calls": m.cg if v.profile == CODEGRAPH else _codegraph_calls(m),
                "tool_under_test_calls": m.cg,
                "codegraph_tools_exposed": (
                    len(m.init_tools) if m.init_tools is not None else None
                ),
                "duration_s": m.dur if has_result else None,
                "cost_usd": m.cost if has_result else None,
                # The reference's Σ total_cost_usd (what compare and campaign print), kept when
                # the frame's cost_usd becomes the recorded-else-priced cost (issue 27).
                "cost_usd_summed": m.cost if has_result else None,
                # §1.11: the reference's Σ result.usage, and the later revision's per-message sum.
                "tokens_processed": m.processed_result_usage if has_result else None,
                "tokens_processed_per_message": m.processed_message_usage,
                "raced": m.raced,
                "cli_calls": m.cli_calls,
                "cli_contaminated": m.cli_contaminated,
            }
        )
    row.update(_token_columns(v))
    # Columns every agent has (issue 15); Claude Code has no aborted turns, forks or scores here.
    largest = max(
        (m for m in v.tokens.message_models if m[0] is not None),
        key=lambda m: (m[2] or 0, m[1]),
        default=None,
    )
    row.update(
        {
            "model": largest[0] if largest is not None else None,
            "turns": v.turns,
            "aborted_turns": None,
            "reward": None,
            "passed": None,
            "parent_copy_included": None,
            **status_columns(v.status),
        }
    )
    return row


def _token_columns(v: _View) -> dict[str, Any]:
    """The token ledger and the cost figures done right (agent-formats §5.3)."""
    t = v.tokens
    g = t.ledger
    window = t.context_window or DEFAULT_WINDOW_TOKENS
    row: dict[str, Any] = {
        "prompt_tokens": g.prompt_tokens,
        "cache_read_tokens": g.cache_read_tokens,
        "cache_write_tokens": g.cache_write_tokens,
        "uncached_prompt_tokens": g.uncached_prompt_tokens,
        "output_tokens": v.output_tokens,
        "reasoning_tokens": g.reasoning_tokens,
        "requests_main": t.main_requests,
        "requests_subagent": t.subagent_requests,
        "prompt_tokens_main": t.main_prompt_tokens,
        "prompt_tokens_subagent": t.subagent_prompt_tokens,
        "repeated_message_ids": t.repeated_ids,
        "num_turns": t.num_turns,
        "duration_api_ms": t.duration_api_ms,
        "cost_usd_last": t.cost_last,
        "totals_carried_over": t.cumulative if t.cost_last is not None else None,
        "session_cost_usd": t.cost,
        # issue 27: the recorded cost and the date whose prices apply; the priced cost is
        # added when the frame is built (`evalkit.corpus.pricing`), never stored.
        "recorded_cost_usd": t.cost,
        "started_at": _iso(claude_code_date(v.events)),
        "model_usage": t.model_usage,
        "models": len(t.models),
        "context_window": t.context_window,
    }
    if (o := v.occupancy) is not None:
        row.update(retrieval_columns(o, window))
    return row


def occupancy_columns(o: Occupancy) -> dict[str, Any]:
    """The sessions frame's occupancy columns of one `Occupancy` (Claude Code's, or the Codex
    rollout analogue of `evalkit.metrics.agent_occupancy`)."""
    return {
        "final_context": o.final_context,
        "base_context": o.base_context,
        "chars_per_token": _nan_to_none(o.chars_per_token),
        "calibrated": o.calibrated,
        "dispersion": _nan_to_none(o.dispersion),
        # Another tool profile's tool family has no column here: <NA>, never mislabelled.
        **{f"residual_{f}": o.residual.get(f) for f in FAMILIES},
        "residual_file_access": o.residual_file_access,
        **{f"contributed_{f}": o.contributed.get(f) for f in FAMILIES},
        "contributed_file_access": o.contributed_file_access,
        "evicted": o.evicted,
        "compactions": o.compactions,
    }


def tool_under_test_columns(profile: ToolProfile, o: Occupancy | None) -> dict[str, Any]:
    """The tool under test by role (issue 23): the profile's label and its residual and
    contributed tokens (the occupancy family named by the label), whatever the profile."""
    row: dict[str, Any] = {"tool_under_test": profile.label}
    if o is not None:
        row["residual_tool_under_test"] = o.residual.get(o.tool_family)
        row["contributed_tool_under_test"] = o.contributed.get(o.tool_family)
    return row


def _codegraph_calls(m: Summary) -> int:
    """Calls of codegraph's tools (the codegraph preset's rule) under another profile."""
    return sum(n for name, n in m.counts.items() if CODEGRAPH.is_tool_under_test(name))


def retrieval_columns(o: Occupancy, window: float) -> dict[str, Any]:
    """The retrieval residual (the tool under test's + file-access residual, §8.4) and the
    share-of-context and share-of-window figures, `window` being the session's window."""
    residual = o.residual[o.tool_family] + o.residual_file_access  # the profile's tool
    return {
        "retrieval_residual": residual,
        "retrieval_residual_share": residual / o.final_context if o.final_context else None,
        "final_context_window_share": o.final_context / window,
        "retrieval_residual_window_share": residual / window,
    }


_MODEL_USAGE_COLUMNS = (
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_creation_tokens",
    "cost_usd",
    "context_window",
    "web_search_requests",
    "source",
)


def _iso(when: Any) -> str | None:
    return when.isoformat() if when is not None else None


def _model_rows(v: _View) -> list[dict[str, Any]]:
    """One row per model of the session: every `message.model` of its assistant messages
    (requests and prompt tokens, each message id once) and every model of `result.modelUsage`
    (the session's carried-over or summed totals), in first-seen order. Messages without a
    model make a row (model <NA>) only when no model is named at all."""
    t = v.tokens
    question = 1 if v.segments == 1 else None
    rows: dict[str | None, dict[str, Any]] = {}
    # Every column is named in every row: what `result.modelUsage` does not give stays <NA>.
    unknown = dict.fromkeys(_MODEL_USAGE_COLUMNS)
    for model, requests, prompt in t.message_models:
        rows[model] = {
            "question": question,
            "model": model,
            "requests": requests,
            "prompt_tokens": prompt,
            **unknown,
        }
    for m in t.models:
        rows.setdefault(
            m.model,
            {"question": question, "model": m.model, "requests": 0, "prompt_tokens": None},
        )
        rows[m.model].update(
            {
                "input_tokens": m.input_tokens,
                "output_tokens": m.output_tokens,
                "cache_read_tokens": m.cache_read_tokens,
                "cache_creation_tokens": m.cache_creation_tokens,
                "cost_usd": m.cost_usd,
                "context_window": m.context_window,
                "web_search_requests": m.web_search_requests,
                "source": t.model_usage,
            }
        )
    if None in rows and len(rows) > 1:  # requests without a model beside named ones
        rows.pop(None)
    _ledger_columns(rows, t, v.events)
    return list(rows.values())


def _ledger_columns(
    rows: dict[str | None, dict[str, Any]], t: ClaudeCodeTokens, events: Sequence[dict[str, Any]]
) -> None:
    """Each model's priced ledger (issue 27, `evalkit.metrics.costs.claude_code_ledgers`):
    the 1-hour cache writes, the largest request's prompt, and, without modelUsage, the
    tokens summed over the assistant messages (`source` messages: the output a lower bound)."""
    for ledger in claude_code_ledgers(t, events):
        row = rows.get(ledger.model)
        if row is None:
            continue
        row["cache_write_1h_tokens"] = ledger.cache_write_1h_tokens
        row["max_request_prompt_tokens"] = ledger.max_request_prompt_tokens
        row["output_lower_bound"] = ledger.output_lower_bound
        row["provider"] = ledger.provider
        row["reasoning_tokens"] = ledger.reasoning_tokens  # Claude Code counts none apart
        if row.get("source") is None and ledger.prompt_tokens is not None:
            row.update(
                {
                    "input_tokens": ledger.uncached_input_tokens,
                    "output_tokens": ledger.output_tokens,
                    "cache_read_tokens": ledger.cache_read_tokens,
                    "cache_creation_tokens": ledger.cache_write_tokens,
                    "source": "messages",
                }
            )


def _json_id(x: Any) -> str | None:
    """An id as text for a `string` column (ids are strings in every Claude Code transcript)."""
    if x is None:
        return None
    return x if isinstance(x, str) else js_string(x)


def _call_rows(v: _View, results: list[Any]) -> tuple[list[dict[str, Any]], dict[int, int]]:
    # The tool_result of each allocation call: §1.6's explore results, in the order of the
    # texts allocation was given, each call naming the text it came from (§3.2 step 1).
    answered = [r for r in results if is_explore(r.name) and not r.is_error]
    kept = [answered[c.source] for c in v.allocation.calls]
    # Sufficiency judges each explore tool_use once (its last non-error result, §9.1); a
    # duplicated result is two allocation calls sharing that verdict.
    verdicts = {}
    for verdict in v.sufficiency.calls:
        if isinstance(verdict.tool_use_id, str):
            verdicts[verdict.tool_use_id] = verdict
    rows = []
    questions: dict[int, int] = {}
    for c, r in zip(v.allocation.calls, kept, strict=True):
        tid = r.tool_use_id
        verdict = verdicts.get(tid) if isinstance(tid, str) else None
        questions[c.index] = v.question(r.index)
        rows.append(
            {
                "question": questions[c.index],
                "call": c.index,
                "tool_use_id": _json_id(tid),
                "thread": js_string(verdict.thread) if verdict else None,
                "sections": len(c.files),
                "cited_sections": c.cited_files,
                "chars": c.envelope,
                "cited_chars": c.used,
                "path_cited_chars": c.used_path,
                "efficiency": c.efficiency,
                "sufficiency_bucket": verdict.bucket if verdict else None,
                "next_action": verdict.next_text if verdict else None,
            }
        )
    return rows, questions


def _section_rows(v: _View, questions: dict[int, int]) -> list[dict[str, Any]]:
    return [
        {
            "question": questions.get(c.index),
            "call": c.index,
            "section": i,
            "path": f.path,
            "chars": f.chars,
            "cited_via": f.via,
            "cited_symbol": f.symbol,
            "symbols": ", ".join(f.symbols),
        }
        for c in v.allocation.calls
        for i, f in enumerate(c.files, start=1)
    ]


def _file_rows(v: _View) -> list[dict[str, Any]]:
    a = v.allocation
    return [
        {
            "question": 1 if v.segments == 1 else None,
            "rank": i,
            "path": f.path,
            "chars": f.chars,
            "share": f.chars / a.envelope if a.envelope else None,
            "sections": f.calls,
            "cited_via": f.via,
            "cited_symbol": f.symbol,
        }
        for i, f in enumerate(a.files, start=1)
    ]


def _tool_call_rows(v: _View, results: list[Any]) -> list[dict[str, Any]]:
    if v.summary is None:
        return []
    answered: dict[Any, list[Any]] = {}  # id → [results, chars, last is_error]
    for r in results:
        if not isinstance(r.tool_use_id, str):
            continue
        entry = answered.setdefault(r.tool_use_id, [0, 0, None])
        entry[0] += 1
        entry[1] += utf16_len(r.text)
        entry[2] = r.is_error
    rows = []
    for c in v.summary.calls:
        got = answered.get(c.tool_use_id) if isinstance(c.tool_use_id, str) else None
        rows.append(
            {
                "question": v.question(c.event),
                "call": c.index,
                "tool_use_id": _json_id(c.tool_use_id),
                "thread": c.thread,
                "message_id": _json_id(c.message_id),
                "name": c.name,
                "family": c.family,
                "detail": c.detail.removeprefix(" "),
                "results": got[0] if got else 0,
                "result_chars": got[1] if got else None,
                "is_error": got[2] if got else None,
                "tool_family": family_of(c.name, v.profile),
            }
        )
    return rows
