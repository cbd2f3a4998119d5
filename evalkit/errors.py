"""Errors evalkit raises on bad input.

Every error names what it is about (a path, a field, an option) and says why, in one line, so the
CLI can print it on stderr and exit with status 2 instead of a traceback.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "EvalkitError",
    "TranscriptError",
    "NotATranscript",
    "NOT_A_TRANSCRIPT",
    "UsageError",
]


class EvalkitError(Exception):
    """Base class of every error evalkit raises deliberately."""


@dataclass
class TranscriptError(EvalkitError):
    """A transcript file could not be read, or holds input the reference harness crashes on.

    Attributes:
        path: The file, as the caller named it.
        reason: What is wrong, in a few words.
        line: 1-based line number when the problem is on one line, else None.
    """

    path: str
    reason: str
    line: int | None = None

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line is not None else self.path
        return f"{where}: {self.reason}"


NOT_A_TRANSCRIPT = "not a Claude Code transcript"


class NotATranscript(TranscriptError):
    """A non-empty file in which no line is a JSON object with a Claude Code event `type`.

    A README, an image, an evidence JSON or a JSONL of application logs: reading it as a
    transcript would report a session of zeros, so it is refused (the sweep lists it as
    skipped with this reason).
    """

    def __init__(self, path: str) -> None:
        super().__init__(path, NOT_A_TRANSCRIPT)


class UsageError(EvalkitError):
    """An option or argument the caller passed cannot be used (an invalid glob, say)."""
