"""One parsed session: its transcript and every metric computed from it.

`parse_session` is the single entry point the CLI, the DataFrames and the sweep share, so a
number printed by `evalkit run` and the same number in `sessions_df` come from one computation.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field

from evalkit._events import in_segment
from evalkit.allocation import Allocation, compute_allocation
from evalkit.answer import FinalAnswer, final_answer
from evalkit.errors import TranscriptError
from evalkit.occupancy import DEFAULT_WINDOW_TOKENS, Occupancy, compute_occupancy
from evalkit.sufficiency import Sufficiency, classify_sufficiency
from evalkit.summary import PROCESSED_RESULT_USAGE, ProcessedDefinition, Summary, summarize
from evalkit.transcripts import Transcript, explore_texts, read_transcript

__all__ = ["Session", "parse_session", "session_from_transcript"]

PathLike = str | os.PathLike[str]


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
    """

    log: str
    transcript: Transcript = field(repr=False)
    answer: FinalAnswer = field(repr=False)
    explore_texts: tuple[str, ...] = field(repr=False)
    allocation: Allocation = field(repr=False)
    sufficiency: Sufficiency = field(repr=False)
    occupancy: Occupancy = field(repr=False)
    summary: Summary = field(repr=False)

    @property
    def segments(self) -> int:
        return len(self.transcript.paths)

    @property
    def multi_turn(self) -> bool:
        """Decision 7: more than one segment file."""
        return self.segments > 1


def session_from_transcript(
    transcript: Transcript,
    *,
    log: str | None = None,
    window_tokens: float = DEFAULT_WINDOW_TOKENS,
    processed: ProcessedDefinition = PROCESSED_RESULT_USAGE,
) -> Session:
    """Compute every metric of a transcript already read.

    Args:
        transcript: The session's events.
        log: The session's name in tables (default: the first segment's path).
        window_tokens: The nominal window of the occupancy share-of-window column (§6.7).
        processed: Which `tokens processed` definition `summary.processed` uses (§1.11).
    """
    path = transcript.paths[0]
    events = transcript.events
    try:
        texts = tuple(explore_texts(events, path=path))
        answer = final_answer(events, path=path)
        sufficiency = classify_sufficiency(events, path=path)
        occupancy = compute_occupancy(events, window_tokens=window_tokens, path=path)
        summary = summarize(events, processed=processed, path=path)
    except TranscriptError as exc:
        # Name the segment file that holds the offending event, not the first one.
        raise in_segment(exc, transcript.paths, transcript.segment_starts) from None
    return Session(
        log=log if log is not None else path,
        transcript=transcript,
        answer=answer,
        explore_texts=texts,
        allocation=compute_allocation(texts, answer.text),
        sufficiency=sufficiency,
        occupancy=occupancy,
        summary=summary,
    )


def parse_session(
    paths: PathLike | Sequence[PathLike],
    *,
    log: str | None = None,
    window_tokens: float = DEFAULT_WINDOW_TOKENS,
    processed: ProcessedDefinition = PROCESSED_RESULT_USAGE,
) -> Session:
    """Read the segment files of one session, in order, and compute its metrics.

    `window_tokens` and `processed` are passed to `session_from_transcript`.

    Raises:
        TranscriptError: A file is missing, unreadable or not a regular file, or holds input the
            reference crashes on (§9.1).
    """
    return session_from_transcript(
        read_transcript(paths), log=log, window_tokens=window_tokens, processed=processed
    )
