"""One parsed session: its transcript and every metric computed from it.

`parse_session` (headless runs: one or more stream-json segment files) and `read_session_file` /
`read_interactive_session` (interactive project logs with their subagents merged, §1.10) are the
entry points the CLI, the DataFrames and the sweep share, so a number printed by `evalkit run` and
the same number in `sessions_df` come from one computation.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from evalkit.errors import NotATranscript, TranscriptError, refuse_empty, unexpected_error
from evalkit.formats.claude_code.events import in_segment
from evalkit.formats.claude_code.index import index_events
from evalkit.formats.claude_code.transcripts import (
    EXPLORE,
    SegmentRead,
    Transcript,
    explore_texts,
    read_segment,
    read_transcript,
)
from evalkit.formats.frozen import quick_init
from evalkit.formats.profiles import CODEGRAPH, ToolProfile
from evalkit.metrics.allocation import Allocation, compute_allocation
from evalkit.metrics.answer import FinalAnswer, final_answer
from evalkit.metrics.figures import RunFigures
from evalkit.metrics.occupancy import DEFAULT_WINDOW_TOKENS, Occupancy, compute_occupancy
from evalkit.metrics.sufficiency import Sufficiency, classify_sufficiency
from evalkit.metrics.summary import PROCESSED_RESULT_USAGE, ProcessedDefinition, Summary, summarize
from evalkit.metrics.tokens import ClaudeCodeTokens, claude_code_tokens

if TYPE_CHECKING:  # imported where they are used: a sweep of headless runs needs neither
    from evalkit.formats.claude_code.interactive import SubagentTranscript
    from evalkit.metrics.read_allocation import ReadAllocation

__all__ = [
    "Session",
    "RunFigures",
    "run_figures",
    "parse_session",
    "session_from_transcript",
    "InteractiveSession",
    "read_interactive_session",
    "read_session_file",
    "is_interactive_log",
]

PathLike = str | os.PathLike[str]


@quick_init
@dataclass(frozen=True)
class Session:
    """A session (one or more segment files) with its metrics.

    Attributes:
        log: How the session is named in tables: the first segment's path as given, or a name
            relative to a corpus directory when the sweep built it.
        transcript: The events and the per-file reading account.
        answer: The final answer and its source (§1.7).
        explore_texts: Answered explore result texts, stream order (§1.6).
        allocation: Explore allocation efficiency (§3).
        sufficiency: Explore sufficiency: what the agent did next after each explore (§5).
        occupancy: Residual context occupancy per tool family at the end (§6).
        summary: Tool calls, turns, duration, cost, tokens processed, race, CLI use (§1.11).
        tokens: Tokens, cost and timing done right (evalkit's own; agent-formats §5.3).
        read_allocation: File-attributed read allocation (evalkit's own metric, never the
            reference's explore allocation).
        profile: The tool profile the families and counts follow.
    """

    log: str
    transcript: Transcript = field(repr=False)
    answer: FinalAnswer = field(repr=False)
    explore_texts: tuple[str, ...] = field(repr=False)
    allocation: Allocation = field(repr=False)
    sufficiency: Sufficiency = field(repr=False)
    occupancy: Occupancy = field(repr=False)
    summary: Summary = field(repr=False)
    tokens: ClaudeCodeTokens = field(repr=False, default=None)  # type: ignore[assignment]
    read_allocation: ReadAllocation | None = field(default=None, repr=False)
    profile: ToolProfile = field(default=CODEGRAPH, repr=False)

    @property
    def segments(self) -> int:
        return len(self.transcript.paths)

    @property
    def multi_turn(self) -> bool:
        """Decision 7: more than one segment file."""
        return self.segments > 1

    @property
    def figures(self) -> RunFigures:
        """The run's figures as the arm comparison and the campaign tables read them."""
        return run_figures(self)

    def view(self, **options: Any) -> Any:
        """This session's page of the HTML report, for a notebook to show inline (a sandboxed
        frame; `.html` is the page, `.save(path)` writes it). See `evalkit.display`."""
        from evalkit.display import view

        return view(self, **options)


def run_figures(session: Session) -> RunFigures:
    """The figures of one run (§8.4 "Per run")."""
    s, o, u, a = session.summary, session.occupancy, session.sufficiency, session.allocation
    return RunFigures(
        dur=s.dur,
        tools=s.tools,
        reads=s.reads,
        grep=s.grep,
        bash=s.bash,
        cg=s.cg,
        turns=s.turns,
        ctx=o.final_context,
        ctx_base=o.base_context,
        occ_cg=o.residual[o.tool_family],
        occ_file=o.residual_file_access,
        answered=u.answered,
        counts=dict(u.counts),
        errors=u.errors,
        alloc_used=a.used,
        alloc_envelope=a.envelope,
        alloc_calls=len(a.calls),
        cli_calls=s.cli_calls,
        cli_contaminated=s.cli_contaminated,
        ok=s.ok,
        raced=s.raced,
        processed=s.processed_result_usage,
        processed_message_usage=s.processed_message_usage,
        cost=s.cost,
        segments=session.segments,
    )


def session_from_transcript(
    transcript: Transcript,
    *,
    log: str | None = None,
    window_tokens: float = DEFAULT_WINDOW_TOKENS,
    processed: ProcessedDefinition = PROCESSED_RESULT_USAGE,
    profile: ToolProfile = CODEGRAPH,
    read_allocation: bool = True,
) -> Session:
    """Compute every metric of a transcript already read.

    Args:
        transcript: The session's events.
        log: The session's name in tables (default: the first segment's path).
        window_tokens: The nominal window of the occupancy share-of-window column (§6.7).
        processed: Which `tokens processed` definition `summary.processed` uses (§1.11).
        profile: The tool profile (default codegraph: the reference's rules).
        read_allocation: Compute the read allocation (evalkit's own metric); False leaves
            `Session.read_allocation` None, for a caller that never reads it (the sweep's
            tables). It raises nothing the other metrics let through (a result's error is
            the index's, raised first), so leaving it out changes no other figure or error.
    """
    path = transcript.paths[0]
    events = transcript.events
    try:
        # One walk over the events; every metric reads its index (issue 26). Listing the tool
        # results comes first, as it always did, so its error (§9.1 case 2) is the one raised.
        index = index_events(events, path=path)
        if index.error is not None:
            raise index.error
        texts = tuple(index.explore_texts(profile.is_explore))  # §1.6, as `explore_texts`
        answer = final_answer(events, path=path, index=index)
        sufficiency = classify_sufficiency(events, path=path, profile=profile, index=index)
        occupancy = compute_occupancy(
            events, window_tokens=window_tokens, path=path, profile=profile, index=index
        )
        summary = summarize(events, processed=processed, path=path, profile=profile, index=index)
        reads = None
        if read_allocation:
            from evalkit.metrics.read_allocation import compute_read_allocation

            reads = compute_read_allocation(
                events, answer.text, profile=profile, path=path, index=index
            )
    except TranscriptError as exc:
        # Name the segment file that holds the offending event, not the first one.
        raise in_segment(exc, transcript.paths, transcript.segment_starts) from None
    except Exception as exc:  # noqa: BLE001 — hostile input never becomes a traceback
        raise unexpected_error(path, exc) from exc
    try:
        allocation = compute_allocation(texts, answer.text)
    except Exception as exc:  # noqa: BLE001
        raise unexpected_error(path, exc) from exc
    return Session(
        log=log if log is not None else path,
        transcript=transcript,
        answer=answer,
        explore_texts=texts,
        allocation=allocation,
        sufficiency=sufficiency,
        occupancy=occupancy,
        summary=summary,
        tokens=claude_code_tokens(events, transcript.segment_starts, index=index),
        read_allocation=reads,
        profile=profile,
    )


def parse_session(
    paths: PathLike | Sequence[PathLike],
    *,
    log: str | None = None,
    window_tokens: float = DEFAULT_WINDOW_TOKENS,
    processed: ProcessedDefinition = PROCESSED_RESULT_USAGE,
    profile: ToolProfile = CODEGRAPH,
) -> Session:
    """Read the segment files of one session, in order, and compute its metrics.

    `window_tokens`, `processed` and `profile` are passed to `session_from_transcript`.

    Raises:
        TranscriptError: A file is missing, unreadable or not a regular file, or holds input the
            reference crashes on (§9.1); a file is empty (`EmptyFile`, zero bytes).
    """
    if isinstance(paths, str | os.PathLike):
        paths = [paths]
    return session_from_transcript(
        read_transcript(paths, refuse_empty=True),
        log=log,
        window_tokens=window_tokens,
        processed=processed,
        profile=profile,
    )


@dataclass(frozen=True)
class InteractiveSession:
    """An interactive session with its subagents merged, and the reference's session report.

    Attributes:
        session_id: The log file's name with its first `.jsonl` removed.
        path: The main session log.
        subagents: The subagent files, byte-wise name order.
        events: Main-file events, then each subagent file's events (§1.10 step 6).
        main_counts / subagent_counts: tool_use counts per name (main file; all subagent files).
        gen_tokens / fresh_tokens / cached_tokens: usage totals, not de-duplicated (quirk 18).
        answer: The final answer (the last main-thread text; there is no result event).
        explore_texts: Non-error explore results from every event with array content (§1.6).
        sufficiency / allocation: The metrics over the merged events.
        segment_reads: The reading account of the main file, then of each subagent file.
        log: How the session is named in tables (as `Session.log`): relative to the corpus
            when a corpus loader read it, else the main log's path as given.
    """

    session_id: str
    path: str
    subagents: tuple[SubagentTranscript, ...]
    events: list[dict[str, Any]] = field(repr=False)
    main_counts: dict[str, int] = field(default_factory=dict)
    subagent_counts: dict[str, int] = field(default_factory=dict)
    gen_tokens: float = 0
    fresh_tokens: float = 0
    cached_tokens: float = 0
    answer: FinalAnswer | None = field(default=None, repr=False)
    explore_texts: tuple[str, ...] = field(default=(), repr=False)
    sufficiency: Sufficiency | None = field(default=None, repr=False)
    allocation: Allocation | None = field(default=None, repr=False)
    segment_reads: tuple[SegmentRead, ...] = field(default=(), repr=False)
    log: str = ""

    def __post_init__(self) -> None:
        if not self.log:
            object.__setattr__(self, "log", self.path)

    @property
    def segments(self) -> int:
        """One file per interactive session (its subagent files belong to it): single-question."""
        return 1

    @property
    def multi_turn(self) -> bool:
        return False

    @property
    def explore_calls(self) -> int:
        """The VERDICT count: subagents' explore calls when any, else main's (not a sum)."""
        return self.subagent_counts.get(EXPLORE) or self.main_counts.get(EXPLORE, 0)

    @property
    def reads(self) -> int:
        return self.main_counts.get("Read", 0) + self.subagent_counts.get("Read", 0)

    @property
    def grep_bash(self) -> int:
        """Grep + Bash in both; Glob is not included (quirk 18)."""
        return sum(
            c.get(k, 0) for c in (self.main_counts, self.subagent_counts) for k in ("Grep", "Bash")
        )

    def view(self, **options: Any) -> Any:
        """This session's page of the HTML report, for a notebook to show inline (a sandboxed
        frame; `.html` is the page, `.save(path)` writes it). See `evalkit.display`."""
        from evalkit.display import view

        return view(self, **options)


def read_interactive_session(
    project_dir: str | os.PathLike[str] | None = None,
    *,
    projects_dir: str | None = None,
    log_dir: str | None = None,
) -> InteractiveSession:
    """§1.10: read the newest session of a project with its subagents merged.

    Args:
        project_dir: The project's directory (default: the current directory).
        projects_dir: Claude Code's projects directory (default `~/.claude/projects`).
        log_dir: The project's log directory itself, bypassing the path escaping of step 1.

    Raises:
        NoSessionLogs: No log directory, or no `.jsonl` session in it.
        UsageError: The project directory does not exist.
        TranscriptError: A log holds input the reference crashes on (§9.1).
    """
    from evalkit.formats.claude_code.interactive import find_project_log_dir, newest_session_log

    if log_dir is None:
        log_dir = find_project_log_dir(
            project_dir if project_dir is not None else os.getcwd(), projects_dir
        )
    return read_session_file(newest_session_log(log_dir))


def read_session_file(path: str, *, log: str | None = None) -> InteractiveSession:
    """§1.10 steps 3–7 for one given session log (`<log dir>/<id>.jsonl`): its subagent files
    (`<log dir>/<id>/subagents/*.jsonl`) merged and stamped, and the metrics computed.

    Raises:
        TranscriptError: The log is missing or unreadable, or holds input the reference crashes
            on (§9.1).
    """
    from evalkit.formats.claude_code.interactive import read_subagents, tool_counts, usage_totals

    refuse_empty([path])
    log_dir, name = os.path.split(path)
    # The reference drops the first `.jsonl`; a `.ndjson` log is named the same way.
    session_id = name.replace(".jsonl" if ".jsonl" in name else ".ndjson", "", 1)
    main_events, main_read = read_segment(path, drop_falsy=True)
    if not main_read.is_transcript:
        raise NotATranscript(path)
    subagents = read_subagents(log_dir, session_id)
    events = list(main_events)
    sub_counts: dict[str, int] = {}
    for sub in subagents:
        events.extend(sub.events)
        for tool, n in tool_counts(sub.events).items():
            sub_counts[tool] = sub_counts.get(tool, 0) + n
    try:
        gen, fresh, cached = usage_totals(events, path)
        index = index_events(events, path=path)  # read by the answer and sufficiency
        answer = final_answer(events, path=path, index=index)
        texts = tuple(explore_texts(events, path=path, any_type=True))
        sufficiency = classify_sufficiency(events, path=path, index=index)
        allocation = compute_allocation(texts, answer.text)
    except TranscriptError:
        raise
    except Exception as exc:  # noqa: BLE001 — hostile input never becomes a traceback
        raise unexpected_error(path, exc) from exc
    return InteractiveSession(
        session_id=session_id,
        path=path,
        subagents=tuple(subagents),
        events=events,
        main_counts=tool_counts(main_events),
        subagent_counts=sub_counts,
        gen_tokens=gen,
        fresh_tokens=fresh,
        cached_tokens=cached,
        answer=answer,
        explore_texts=texts,
        sufficiency=sufficiency,
        allocation=allocation,
        segment_reads=(main_read, *(sub.read for sub in subagents if sub.read is not None)),
        log=log or path,
    )


def is_interactive_log(events: Sequence[dict[str, Any]]) -> bool:
    """Whether a Claude Code log is an interactive project log, by its content (issue 23): no
    `system/init` and no `result` event (a `claude -p` stream has both), and lines of the
    project-log shape (`sessionId` or `parentUuid`, which stream-json never writes). The file's
    name and folder never decide."""
    marked = False
    for e in events:
        etype = e.get("type")
        if etype == "result" or (etype == "system" and e.get("subtype") == "init"):
            return False
        if not marked and ("parentUuid" in e or "sessionId" in e):
            marked = True
    return marked
