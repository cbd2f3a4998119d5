"""The column dictionary: every column of every corpus frame, declared once.

Each frame (`sessions`, `calls`, `sections`, `files`, `tool_calls` of a loaded corpus, and the
sweep's `sweep_sessions`, `sweep_calls`) is a tuple of `Column`s in display order: the identity columns first (the same nine in every frame), then the frame's own.
`build_frame` is the one place a list of row dicts becomes a DataFrame: it keeps exactly the
declared columns, in order, with the declared (nullable) dtype, so a value the transcript does
not carry is `<NA>`, never 0 or False. `evalkit columns [FRAME]`, the exports' `columns.json`
and the tests all read this declaration.

Adding a column is one line in the frame's tuple below (plus the value in the row builder of
`evalkit.corpus.frames`; a row without the key gets `<NA>`).

Units: `chars` are UTF-16 code units (Decision 1); `fraction` is a share between 0 and 1
(never a percent: percent and point columns exist only in display helpers named `…_pct` /
`…_pt`); `tokens` are as the reference rounds them (§6.7).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from evalkit.metrics.cost_columns import COST_COLUMNS, MODEL_COST_COLUMNS
from evalkit.metrics.occupancy import FAMILIES
from evalkit.metrics.sufficiency import BUCKETS

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "Column",
    "IDENTITY",
    "FRAMES",
    "frame_names",
    "columns_of",
    "build_frame",
    "build_columns",
    "arrow_table",
    "arrow_array",
    "arrow_schema",
    "stored_text",
    "NAME_COLUMNS",
    "dictionary_frame",
    "dictionary_json",
]

# pandas nullable dtypes only: missing is <NA> in every column.
DTYPES = ("string", "Int64", "Float64", "boolean")


@dataclass(frozen=True)
class Column:
    """One column of a frame.

    Attributes:
        name: The column name.
        dtype: A pandas nullable dtype: `string`, `Int64`, `Float64` or `boolean`.
        unit: What one unit is (`chars`, `tokens`, `fraction`, `seconds`, `USD`, `count`,
            `score` (a task outcome on the scorer's own scale), or
            `label` / `text` / `flag` for non-numbers).
        meaning: One line a user can read.
    """

    name: str
    dtype: str
    unit: str
    meaning: str

    def __post_init__(self) -> None:
        if self.dtype not in DTYPES:
            raise ValueError(f"column {self.name}: dtype {self.dtype!r} is not one of {DTYPES}")


def _c(name: str, dtype: str, unit: str, meaning: str) -> Column:
    return Column(name, dtype, unit, meaning)


IDENTITY: tuple[Column, ...] = (
    _c(
        "log",
        "string",
        "label",
        "the session: its first file, relative to the corpus, / separators; a byte of the "
        "name that is not UTF-8 is written \\udcXX and a backslash \\\\, as the sweep's "
        "JSON writes them, so no two files share a log",
    ),
    _c(
        "pass", "string", "label", "the evaluation pass the path names (cg22, ab-readme), else <NA>"
    ),
    _c("repo", "string", "label", "the repository the path names (express), else <NA>"),
    _c("arm", "string", "label", "the arm the file name gives (baseline, new, headless-with)"),
    _c("run", "string", "label", "the run the path names (1 for run-new-1, run2 for a campaign)"),
    _c("suite", "string", "label", "the benchmark suite a --layout path names, else <NA>"),
    _c(
        "task",
        "string",
        "label",
        "the task a --layout path names (a harbor task folder), else <NA>",
    ),
    _c(
        "trial",
        "string",
        "label",
        "the trial a --layout path names (a harbor trial folder), else <NA>",
    ),
    _c(
        "question",
        "Int64",
        "count",
        "the question (segment turn, 1-based) of the row; <NA> when it spans several",
    ),
    _c("slice", "string", "label", "single-question (one segment file) or multi-turn (several)"),
    _c("kind", "string", "label", "headless (claude -p stream-json) or interactive (project log)"),
    _c(
        "agent",
        "string",
        "label",
        "the agent that wrote the log: claude-code, codex, inspect, or the agent a harbor "
        "trajectory (ATIF) names (openhands, mini-swe-agent, …)",
    ),
    _c("group", "string", "label", "pass/repo where the path gives them, else the parent folder"),
)

_SESSIONS: tuple[Column, ...] = (
    _c("segments", "Int64", "count", "segment files of the session (one per question)"),
    _c("answer_source", "string", "label", "where the final answer was read from"),
    _c("has_answer", "boolean", "flag", "the final answer is not empty"),
    _c("explore_calls", "Int64", "count", "explore calls with at least one file section"),
    _c("sections", "Int64", "count", "file sections returned over those calls"),
    _c("files_returned", "Int64", "count", "distinct files the explore calls returned"),
    _c("files_cited", "Int64", "count", "distinct returned files the final answer cited"),
    _c("chars", "Int64", "chars", "chars the explore calls returned (the envelope)"),
    _c("cited_chars", "Int64", "chars", "chars of returned files the answer cited"),
    _c("path_cited_chars", "Int64", "chars", "chars of returned files the answer cited by path"),
    _c("efficiency", "Float64", "fraction", "allocation efficiency: cited_chars / chars"),
    _c("path_efficiency", "Float64", "fraction", "path_cited_chars / chars (the path-only floor)"),
    _c("skipped_lines", "Int64", "count", "lines of the files that could not be read as events"),
    _c("answered_calls", "Int64", "count", "explore calls that got an answer (sufficiency)"),
    _c("errored_calls", "Int64", "count", "explore calls whose answer was an error"),
    _c(
        "concurrent_accesses",
        "Int64",
        "count",
        "file accesses made in the same message as an explore call",
    ),
    *(
        _c(f"next_{b}", "Int64", "count", f"explore calls followed by: {b.replace('_', ' ')}")
        for b in BUCKETS
    ),
    _c(
        "final_context",
        "Float64",
        "tokens",
        "context window in use at the last request (Claude Code; Codex rollouts: the last "
        "request's prompt tokens)",
    ),
    _c(
        "base_context",
        "Float64",
        "tokens",
        "context at the first request (system prompt, tools, question)",
    ),
    _c(
        "chars_per_token",
        "Float64",
        "chars",
        "calibrated chars per token used to convert tool output",
    ),
    _c("calibrated", "boolean", "flag", "chars_per_token came from this session (not the default)"),
    _c(
        "dispersion", "Float64", "fraction", "spread of the per-request calibration (the error bar)"
    ),
    *(
        _c(
            f"residual_{f}",
            "Float64",
            "tokens",
            f"tokens of {f} output still in the window at the end (Codex rollouts: evalkit's "
            "analogue from per-request prompt sizes; <NA> for codex exec --json and Inspect)",
        )
        for f in FAMILIES
    ),
    _c("residual_file_access", "Float64", "tokens", "residual tokens of every file-access family"),
    *(
        _c(f"contributed_{f}", "Float64", "tokens", f"tokens {f} output added to the window")
        for f in FAMILIES
    ),
    _c("contributed_file_access", "Float64", "tokens", "tokens every file-access family added"),
    _c("evicted", "Float64", "tokens", "tool-output tokens evicted by compaction"),
    _c("compactions", "Int64", "count", "compaction markers in the transcript"),
    _c(
        "assistant_messages",
        "Int64",
        "count",
        "distinct assistant message ids (requests to the model)",
    ),
    _c("tool_calls", "Int64", "count", "tool_use blocks, every thread"),
    _c("tool_calls_no_toolsearch", "Int64", "count", "tool calls other than ToolSearch"),
    _c("read_calls", "Int64", "count", "Read calls"),
    _c("grep_glob_calls", "Int64", "count", "Grep and Glob calls"),
    _c("bash_calls", "Int64", "count", "Bash calls"),
    _c(
        "codegraph_calls",
        "Int64",
        "count",
        "calls of tools whose name contains codegraph (whatever the profile; "
        "tool_under_test_calls counts the profile's tool)",
    ),
    _c(
        "codegraph_tools_exposed",
        "Int64",
        "count",
        "codegraph tools the last init event listed; <NA> without one",
    ),
    _c(
        "duration_s",
        "Float64",
        "seconds",
        "run time summed over the result events; <NA> without one",
    ),
    _c(*next(c for c in COST_COLUMNS if c[0] == "cost_usd")),
    _c(
        "success",
        "boolean",
        "flag",
        "the run ended normally: true only when status is ok, <NA> when it is unknown",
    ),
    _c(
        "tokens_processed",
        "Float64",
        "tokens",
        "tokens processed, summed over result events (the reference)",
    ),
    _c(
        "tokens_processed_per_message",
        "Float64",
        "tokens",
        "tokens processed, each message counted once",
    ),
    _c(
        "raced", "boolean", "flag", "a tool result says the tool was not yet available (cold start)"
    ),
    _c(
        "cli_calls",
        "Int64",
        "count",
        "Bash calls that ran the tool under test's command line (codegraph's: codegraph)",
    ),
    _c("cli_contaminated", "Int64", "count", "of those, results that entered the context"),
    # the arm comparison's derived figures (§8.4)
    _c(
        "retrieval_residual",
        "Float64",
        "tokens",
        "the tool under test's + file-access tokens still in the window at the end (Codex "
        "rollouts: "
        "evalkit's analogue from per-request prompt sizes; <NA> for codex exec --json and "
        "Inspect)",
    ),
    _c("retrieval_residual_share", "Float64", "fraction", "retrieval_residual / final_context"),
    # tokens and cost done right (evalkit's own; agent-formats §5.3): the token ledger
    _c(
        "prompt_tokens",
        "Float64",
        "tokens",
        "every input token of every request, cached or not (Claude Code: each message id once)",
    ),
    _c("cache_read_tokens", "Float64", "tokens", "the part of prompt_tokens read from the cache"),
    _c(
        "cache_write_tokens",
        "Float64",
        "tokens",
        "the part of prompt_tokens written to the cache; <NA> where the log has none (Codex)",
    ),
    _c("uncached_prompt_tokens", "Float64", "tokens", "prompt_tokens - cache_read_tokens"),
    _c(
        "output_tokens",
        "Float64",
        "tokens",
        "generated tokens, reasoning included (Claude Code: result.modelUsage, else "
        "result.usage; an interactive log: each message's output_tokens once, a lower bound)",
    ),
    _c(
        "reasoning_tokens",
        "Float64",
        "tokens",
        "the part of output_tokens spent on reasoning; <NA> where the log has none apart "
        "(Claude Code, codex exec --json)",
    ),
    # Other agents (issue 15): Codex CLI and Inspect AI sessions; <NA> for Claude Code.
    _c("model", "string", "label", "the model that served the session (Codex, Inspect)"),
    _c(
        "turns",
        "Int64",
        "count",
        "user turns, prompts sent (Claude Code headless: one per segment file; interactive: "
        "the main thread's user prompts)",
    ),
    _c("aborted_turns", "Int64", "count", "turns interrupted or failed (Codex)"),
    _c(
        "reward",
        "Float64",
        "score",
        "the run's outcome as a number (see outcome_source: a harbor verifier reward, a CSV "
        "row, an Inspect sample's first numeric score)",
    ),
    _c(
        "passed",
        "boolean",
        "flag",
        "the run's outcome as pass/fail: reward >= the pass threshold, a CSV's passed, an "
        "Inspect C/I or true/false score",
    ),
    _c(
        "parent_copy_included",
        "boolean",
        "flag",
        "a forked Codex session whose copied parent lines could not be left out",
    ),
    _c("requests_main", "Int64", "count", "distinct message ids of the main thread"),
    _c("requests_subagent", "Int64", "count", "distinct message ids of subagent threads"),
    _c("prompt_tokens_main", "Float64", "tokens", "prompt_tokens of the main thread"),
    _c("prompt_tokens_subagent", "Float64", "tokens", "prompt_tokens of subagent threads"),
    _c(
        "repeated_message_ids",
        "Int64",
        "count",
        "messages a later segment repeated (counted once)",
    ),
    _c("num_turns", "Float64", "count", "result num_turns summed over result events"),
    _c("duration_api_ms", "Float64", "ms", "result duration_api_ms summed over result events"),
    _c(
        "cost_usd_summed",
        "Float64",
        "USD",
        "total_cost_usd summed over the result events, as the reference harness sums it "
        "(the cost compare and campaign print); <NA> without one",
    ),
    _c("cost_usd_last", "Float64", "USD", "total_cost_usd of the last result event"),
    _c(
        "totals_carried_over",
        "boolean",
        "flag",
        "later segments' cost and modelUsage already include the earlier ones (--resume)",
    ),
    _c(
        "session_cost_usd",
        "Float64",
        "USD",
        "the session's recorded cost: cost_usd_last when carried over, else total_cost_usd "
        "summed over the result events",
    ),
    # issue 27: the cost for every agent, recorded beside priced (`evalkit.metrics.costs`)
    *(_c(*c) for c in COST_COLUMNS if c[0] != "cost_usd"),
    _c(
        "started_at",
        "string",
        "label",
        "when the session started (ISO 8601), the date whose prices apply; <NA> when the log "
        "has no timestamp (Claude Code headless stream-json, codex exec --json)",
    ),
    _c(
        "model_usage",
        "string",
        "label",
        "where models come from: last (one total), sum (added over segments) or none",
    ),
    _c("models", "Int64", "count", "models in result.modelUsage (see the models frame)"),
    _c(
        "context_window",
        "Float64",
        "tokens",
        "the model's context window (Claude Code: modelUsage contextWindow of the model with "
        "the largest prompt; Codex: model_context_window); <NA> without",
    ),
    _c(
        "final_context_window_share",
        "Float64",
        "fraction",
        "final_context / context_window (the nominal 200k when the log gives none)",
    ),
    _c(
        "retrieval_residual_window_share",
        "Float64",
        "fraction",
        "retrieval_residual / context_window (the nominal 200k when the log gives none)",
    ),
    # issue 23 item 3: the tool under test by role (every profile, every agent)
    _c(
        "tool_under_test",
        "string",
        "label",
        "the tool profile's label: the tool under test (codegraph, sourcegraph, an MCP server)",
    ),
    _c("tool_under_test_calls", "Int64", "count", "calls of the tool under test's tools"),
    _c(
        "residual_tool_under_test",
        "Float64",
        "tokens",
        "tokens of the tool under test's output still in the window at the end (<NA> where "
        "residual_<family> is)",
    ),
    _c(
        "contributed_tool_under_test",
        "Float64",
        "tokens",
        "tokens the tool under test's output added to the window",
    ),
    # Outcomes and run status, every agent and layout (issue 23)
    _c(
        "outcome_source",
        "string",
        "label",
        "where reward and passed come from: result.json (a harbor trial's), outcomes-csv "
        "(--outcomes FILE), inspect-score (the sample's own score), or <NA> (no outcome)",
    ),
    _c(
        "outcome_ref",
        "string",
        "label",
        "the outcome's own place: the result.json relative to the corpus, FILE.csv:line, or "
        "the scorer of an Inspect score",
    ),
    _c(
        "status",
        "string",
        "label",
        "how the run ended: ok, agent_error, rate_limited, max_turns, timeout, infra_error, "
        "empty, cancelled, or unknown (the log cannot tell); from the log and, for a harbor "
        "trial, its result.json",
    ),
    _c("status_detail", "string", "text", "why the run has that status, in one line"),
)

_MODELS: tuple[Column, ...] = (
    _c("model", "string", "label", "the model id (message.model, or a result.modelUsage key)"),
    _c("requests", "Int64", "count", "assistant messages of this model (each id once)"),
    _c("prompt_tokens", "Float64", "tokens", "prompt tokens of those messages (the token ledger)"),
    _c(
        "input_tokens",
        "Float64",
        "tokens",
        "uncached input: modelUsage inputTokens, else as source says (the priced ledger)",
    ),
    _c("output_tokens", "Float64", "tokens", "outputTokens (thinking included), or as source says"),
    _c("cache_read_tokens", "Float64", "tokens", "cacheReadInputTokens, or as source says"),
    _c(
        "cache_creation_tokens",
        "Float64",
        "tokens",
        "cacheCreationInputTokens (cache writes), or as source says",
    ),
    _c(
        "cost_usd",
        "Float64",
        "USD",
        "costUSD (an estimate, not a bill); another agent's recorded cost",
    ),
    _c("context_window", "Float64", "tokens", "contextWindow"),
    _c("web_search_requests", "Float64", "count", "webSearchRequests"),
    _c(
        "source",
        "string",
        "label",
        "modelUsage totals: last (the last segment's, carried over) or sum (added over "
        "segments); messages (no modelUsage: summed over the assistant messages, each id "
        "once); log (another agent's ledger); <NA> when there is no ledger to price",
    ),
    # issue 27: the ledger each model is priced from, and its priced cost
    _c("reasoning_tokens", "Float64", "tokens", "part of output_tokens spent on reasoning"),
    _c(
        "max_request_prompt_tokens",
        "Float64",
        "tokens",
        "the largest single request's prompt (tells whether a long-context rate applied)",
    ),
    _c(
        "output_lower_bound",
        "boolean",
        "flag",
        "output_tokens are streamed per-message snapshots (source messages): a lower bound",
    ),
    _c("provider", "string", "label", "the provider, where the log names it apart from the model"),
    *(_c(*c) for c in MODEL_COST_COLUMNS),
    _c("price_date", "string", "label", "the date whose prices were used; <NA>: the latest"),
    _c("priced_lower_bound", "boolean", "flag", "the priced cost may be short (price_notes)"),
    _c("price_notes", "string", "text", "what the priced cost assumes"),
)

_CALLS: tuple[Column, ...] = (
    _c("call", "Int64", "count", "1-based number of the explore call in the session"),
    _c("tool_use_id", "string", "label", "the tool_use id of the call"),
    _c("thread", "string", "label", "main, or the id of the subagent's delegating call"),
    _c("sections", "Int64", "count", "file sections the call returned"),
    _c("cited_sections", "Int64", "count", "of those, sections whose file the answer cited"),
    _c("chars", "Int64", "chars", "chars the call returned"),
    _c("cited_chars", "Int64", "chars", "chars of cited files"),
    _c("path_cited_chars", "Int64", "chars", "chars of files cited by path"),
    _c("efficiency", "Float64", "fraction", "cited_chars / chars of this call"),
    _c("sufficiency_bucket", "string", "label", "what the agent did next, as a sufficiency bucket"),
    _c("next_action", "string", "text", "the next action itself (tool and target)"),
)

_SECTIONS: tuple[Column, ...] = (
    _c("call", "Int64", "count", "the explore call the section came in"),
    _c("section", "Int64", "count", "1-based position of the section in the call's response"),
    _c("path", "string", "label", "the file the section is about"),
    _c("chars", "Int64", "chars", "chars charged to the file"),
    _c("cited_via", "string", "label", "how the answer cited the file: path, symbol, or <NA>"),
    _c("cited_symbol", "string", "label", "the symbol the answer cited it by"),
    _c("symbols", "string", "text", "symbols the section defines, comma separated"),
)

_FILES: tuple[Column, ...] = (
    _c("rank", "Int64", "count", "1 = the file with the most chars returned in the session"),
    _c("path", "string", "label", "the file"),
    _c("chars", "Int64", "chars", "chars returned for the file over every call"),
    _c("share", "Float64", "fraction", "the file's part of the session's envelope"),
    _c("sections", "Int64", "count", "sections of the file (returned twice counts twice)"),
    _c("cited_via", "string", "label", "how the answer cited the file: path, symbol, or <NA>"),
    _c("cited_symbol", "string", "label", "the symbol the answer cited it by"),
)

_TOOL_CALLS: tuple[Column, ...] = (
    _c("call", "Int64", "count", "1-based number in stream order (the report's listing number)"),
    _c("tool_use_id", "string", "label", "the tool_use id"),
    _c("thread", "string", "label", "main, or the id of the subagent's delegating call"),
    _c("message_id", "string", "label", "the assistant message that made the call"),
    _c("name", "string", "label", "the tool's name"),
    _c(
        "family",
        "string",
        "label",
        "the tool family occupancy charges it to (the reference's families; Codex, Inspect: "
        "the agent-neutral family); tool_family is the scheme shared by every agent",
    ),
    _c("detail", "string", "text", "the listing's detail (query, command, file name)"),
    _c("results", "Int64", "count", "tool results answering the call (0 = never answered)"),
    _c("result_chars", "Int64", "chars", "chars of those results; <NA> when never answered"),
    _c("is_error", "boolean", "flag", "the last result was an error; <NA> when never answered"),
    # issue 23 item 4: the cross-agent family scheme (`evalkit columns families`)
    _c(
        "tool_family",
        "string",
        "label",
        "the call's family in evalkit's scheme for every agent (tool_under_test, read, "
        "search, bash, edit, plan, subagent, web, mcp_other, other)",
    ),
)

# The sweep's own frames (`SweepResult.sessions_frame()` / `.calls_frame()`): every discovered
# session with its sweep status, and the allocation calls of the sessions in the sweep.
_SWEEP_SESSIONS: tuple[Column, ...] = (
    _c(
        "layout",
        "string",
        "label",
        "the discovery rule that found the session (ab-arm, campaign, interactive, generic)",
    ),
    _c("status", "string", "label", "parsed (in the sweep), no-explore, crash or skipped"),
    _c("segments", "Int64", "count", "segment files of the session (one per question)"),
    _c("explore_calls", "Int64", "count", "explore calls with at least one file section"),
    _c("sections", "Int64", "count", "file sections returned over those calls"),
    _c("chars", "Int64", "chars", "chars the explore calls returned (the envelope)"),
    _c("cited_chars", "Int64", "chars", "chars of returned files the answer cited"),
    _c("path_cited_chars", "Int64", "chars", "chars of returned files the answer cited by path"),
    _c("efficiency", "Float64", "fraction", "allocation efficiency; <NA> outside the sweep"),
    _c(
        "path_efficiency", "Float64", "fraction", "path_cited_chars / chars; <NA> outside the sweep"
    ),
    _c("files_returned", "Int64", "count", "distinct files the explore calls returned"),
    _c("files_cited", "Int64", "count", "distinct returned files the final answer cited"),
    _c("has_answer", "boolean", "flag", "the final answer is not empty; <NA> when not read"),
    _c("reason", "string", "text", "why the session is not in the sweep"),
)
_SWEEP_CALLS: tuple[Column, ...] = (
    _c("call", "Int64", "count", "1-based number of the explore call in the session"),
    _c("chars", "Int64", "chars", "chars the call returned"),
    _c("cited_chars", "Int64", "chars", "chars of cited files"),
    _c("path_cited_chars", "Int64", "chars", "chars of files cited by path"),
    _c("sections", "Int64", "count", "file sections the call returned"),
    _c("cited_sections", "Int64", "count", "of those, sections whose file the answer cited"),
    _c("efficiency", "Float64", "fraction", "cited_chars / chars of this call"),
)

FRAMES: dict[str, tuple[Column, ...]] = {
    "sessions": IDENTITY + _SESSIONS,
    "calls": IDENTITY + _CALLS,
    "sections": IDENTITY + _SECTIONS,
    "files": IDENTITY + _FILES,
    "tool_calls": IDENTITY + _TOOL_CALLS,
    "models": IDENTITY + _MODELS,
    "sweep_sessions": IDENTITY + _SWEEP_SESSIONS,
    "sweep_calls": IDENTITY + _SWEEP_CALLS,
}


def frame_names() -> tuple[str, ...]:
    return tuple(FRAMES)


def columns_of(frame: str) -> tuple[Column, ...]:
    """The declared columns of `frame`.

    Raises:
        KeyError: No such frame (the message lists the frames).
    """
    try:
        return FRAMES[frame]
    except KeyError:
        raise KeyError(f"no frame {frame!r}; frames: {', '.join(FRAMES)}") from None


def build_frame(frame: str, rows: list[dict[str, Any]]) -> pd.DataFrame:
    """The one place rows become a frame: the declared columns, in order, nullable dtypes.

    A key a row lacks, None and NaN all become `<NA>`; a key no column declares is an error,
    so a builder cannot add an undeclared column.

    Raises:
        ValueError: A row holds a key the dictionary does not declare for `frame`.
    """
    cols = _declared(frame, rows)
    return build_columns(cols, rows)


def _declared(frame: str, rows: list[dict[str, Any]]) -> tuple[Column, ...]:
    """The columns of `frame`, once `rows` are checked to hold no other key."""
    cols = columns_of(frame)
    known = {c.name for c in cols}
    extra = set().union(*rows) - known if rows else set()
    if extra:
        raise ValueError(f"frame {frame}: undeclared columns {sorted(extra)}")
    return cols


def build_columns(cols: Sequence[Column], rows: list[dict[str, Any]]) -> pd.DataFrame:
    """`cols` of `rows` as a frame, as `build_frame` builds them (keys not in `cols` ignored)."""
    import pandas as pd

    values = column_values(cols, rows)
    data = {c.name: _pandas_array(c, values[c.name]) for c in cols}
    return pd.DataFrame(data, columns=[c.name for c in cols])


def column_values(cols: Sequence[Column], rows: list[dict[str, Any]]) -> dict[str, list[Any]]:
    """Each column's values over `rows` by name (`[r.get(name) for r in rows]`). Rows come in
    runs of the same keys in the same order (one builder's rows; a row of an interactive log
    has one key more): each run is turned into columns in one step, not one lookup per cell.
    Rows whose keys change too often for that to pay are read a cell at a time."""
    names = [c.name for c in cols]
    shapes = list(map(tuple, rows))
    runs = [(keys, len(list(run))) for keys, run in itertools.groupby(shapes)]
    if not rows or len(runs) * 8 > len(rows):
        return {name: [r.get(name) for r in rows] for name in names}
    out: dict[str, list[Any]] = {name: [] for name in names}
    at = 0
    for keys, n in runs:
        part = rows[at : at + n]
        at += n
        by_key = dict(zip(keys, zip(*map(dict.values, part), strict=True), strict=True))
        for name in names:
            got = by_key.get(name)
            out[name] += got if got is not None else [None] * n
    return out


def _values(c: Column, values: list[Any]) -> list[Any]:
    """A column's values as its frame holds them."""
    if c.dtype == "Float64":
        # NaN is "no value" here (e.g. an efficiency with no explore call): <NA>.
        return [None if v is None or v != v else v for v in values]
    if c.name in NAME_COLUMNS:
        try:  # every name ASCII without a backslash: `name_text` changes none
            texts = list(filter(None, values))
            if all(map(str.isascii, texts)) and "\\" not in "".join(texts):
                return values
        except TypeError:  # a value that is not a text
            pass
        return [name_text(v) if type(v) is str else v for v in values]
    if c.dtype == "string":
        try:  # every text ASCII (and anything else falsy): `stored_text` changes nothing
            if all(map(str.isascii, filter(None, values))):
                return values
        except TypeError:  # a value that is not a text
            pass
        return [stored_text(v) for v in values]
    return values


def _pandas_array(c: Column, values: list[Any]) -> Any:
    import pandas as pd

    return pd.array(_values(c, values), dtype=c.dtype)


def arrow_table(
    frame: str, rows: list[dict[str, Any]], head: Sequence[tuple[str, Any]] = ()
) -> Any:
    """`rows` as the Arrow table of `frame`'s declared columns, the very values `build_frame`
    gives them (`pa.Table.from_pandas` of its frame), built without pandas; `head`, pairs of
    (name, Arrow array), are put before them.

    Raises:
        ValueError: A row holds a key the dictionary does not declare for `frame`.
    """
    import pyarrow as pa

    cols = _declared(frame, rows)
    names = [name for name, _ in head] + [c.name for c in cols]
    arrays = [array for _, array in head]
    values = column_values(cols, rows)
    arrays += [arrow_array(c, values[c.name]) for c in cols]
    return pa.Table.from_arrays(arrays, names=names)


# The Python types whose values Arrow converts exactly as pandas' nullable dtype does. A column
# holding any other (a bool where a count is declared, a number where a text is) goes through
# pandas, which decides what it becomes or raises as `build_frame` does; so does a value Arrow
# refuses (an int too large). Arrow would truncate a float declared Int64 (3.5 → 3) where pandas
# refuses it, hence no float among a count's types.
_NONE = type(None)
_ARROW_EXACT = {
    "Int64": frozenset({int, _NONE}),
    "Float64": frozenset({float, int, _NONE}),
    "boolean": frozenset({bool, _NONE}),
    "string": frozenset({str, _NONE}),
}


def arrow_array(c: Column, values: list[Any]) -> Any:
    """A column's values as the Arrow array its frame file holds (`arrow_table`)."""
    import pyarrow as pa

    kind = _arrow_type(c.dtype)
    values = _values(c, values)
    if set(map(type, values)) <= _ARROW_EXACT[c.dtype]:
        try:
            return pa.array(values, kind)
        except (OverflowError, pa.ArrowException):
            pass
    import pandas as pd

    return pa.array(pd.array(values, dtype=c.dtype), kind)


def _arrow_type(dtype: str) -> Any:
    import pyarrow as pa

    return {
        "string": pa.large_string(),
        "Int64": pa.int64(),
        "Float64": pa.float64(),
        "boolean": pa.bool_(),
    }[dtype]


def arrow_schema(frame: str) -> list[tuple[str, Any]]:
    """The frame's columns as (name, Arrow type): what its stored rows and exports hold."""
    return [(c.name, _arrow_type(c.dtype)) for c in columns_of(frame)]


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_NAME_ESCAPES = re.compile("[\\\\\ud800-\udfff]")
# The identity columns read from file and folder names (issue 21: one escape rule, `name_text`).
NAME_COLUMNS = frozenset({"log", "pass", "repo", "arm", "run", "suite", "task", "trial", "group"})


def name_text(name: str) -> str:
    """A file or folder name as a frame holds it: a lone surrogate (a byte of the name that is
    not UTF-8, which Python holds as `\\udcXX`) as its escape `\\udcXX`, and a backslash as
    `\\\\`, as JSON writes both, so that two names never give one text (issue 21); any other
    name as it is. The text of a name is what the sweep's JSON holds between the quotes."""
    if "\\" not in name and (name.isascii() or not _LONE_SURROGATE.search(name)):
        return name
    return _NAME_ESCAPES.sub(_escape_name, name)


def _escape_name(m: re.Match[str]) -> str:
    c = m[0]
    return "\\\\" if c == "\\" else f"\\u{ord(c):04x}"


def stored_text(v: Any) -> Any:
    """A text value as a string column can hold it: a lone surrogate (a file name that is not
    UTF-8, read with surrogateescape, or a `\\udXXX` escape in a transcript) cannot be stored
    as UTF-8, so it becomes the same `\\udXXX` escape evalkit's JSON output shows."""
    if isinstance(v, str) and not v.isascii():
        return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m[0]):04x}", v)
    return v


def dictionary_frame(frame: str | None = None) -> pd.DataFrame:
    """The dictionary as a frame: `frame, column, dtype, unit, meaning` (one frame or all)."""
    import pandas as pd

    names = [frame] if frame is not None else list(FRAMES)
    rows = [{"frame": f, "column": c.name, **_fields(c)} for f in names for c in columns_of(f)]
    return pd.DataFrame(rows, columns=["frame", "column", "dtype", "unit", "meaning"])


def _fields(c: Column) -> dict[str, str]:
    d = asdict(c)
    d.pop("name")
    return d


def dictionary_json() -> dict[str, list[dict[str, str]]]:
    """The dictionary as JSON: frame → list of `{name, dtype, unit, meaning}`, in order."""
    return {f: [asdict(c) for c in cols] for f, cols in FRAMES.items()}
