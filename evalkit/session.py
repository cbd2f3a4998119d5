"""One parsed session: its transcript and every metric computed from it.

`parse_session` is the single entry point the CLI, the DataFrames and the sweep share, so a
number printed by `evalkit run` and the same number in `sessions_df` come from one computation.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field

from evalkit.allocation import Allocation, compute_allocation
from evalkit.answer import FinalAnswer, final_answer
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
    """

    log: str
    transcript: Transcript = field(repr=False)
    answer: FinalAnswer = field(repr=False)
    explore_texts: tuple[str, ...] = field(repr=False)
    allocation: Allocation = field(repr=False)

    @property
    def segments(self) -> int:
        return len(self.transcript.paths)

    @property
    def multi_turn(self) -> bool:
        """Decision 7: more than one segment file."""
        return self.segments > 1


def session_from_transcript(transcript: Transcript, *, log: str | None = None) -> Session:
    """Compute every metric of a transcript already read."""
    path = transcript.paths[0]
    events = transcript.events
    texts = tuple(explore_texts(events, path=path))
    answer = final_answer(events, path=path)
    return Session(
        log=log if log is not None else path,
        transcript=transcript,
        answer=answer,
        explore_texts=texts,
        allocation=compute_allocation(texts, answer.text),
    )


def parse_session(paths: PathLike | Sequence[PathLike], *, log: str | None = None) -> Session:
    """Read the segment files of one session, in order, and compute its metrics.

    Raises:
        TranscriptError: A file is missing, unreadable or not a regular file, or holds input the
            reference crashes on (§9.1).
    """
    return session_from_transcript(read_transcript(paths), log=log)
