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
    "one_line",
    "unexpected_error",
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
        return one_line(f"{where}: {self.reason}")  # a name with a newline stays one line


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


def one_line(text: str) -> str:
    """`text` on one line: line breaks and other control characters escaped (`\\n`, `\\x1b`)."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c == " " else _escape(c) for c in text)


def _escape(c: str) -> str:
    return {"\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(c) or (
        f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}"
    )


def unexpected_error(path: str, exc: BaseException) -> TranscriptError:
    """A `TranscriptError` naming `path` for an exception evalkit did not foresee.

    Hostile input must never reach the user as a traceback (guide: bad input gets one line);
    the exception's type is named so the problem can still be reported and fixed.
    """
    if isinstance(exc, RecursionError):
        return TranscriptError(path, "input nested too deeply to measure")
    if isinstance(exc, MemoryError):
        return TranscriptError(path, "not enough memory to measure this session")
    detail = one_line(str(exc))[:200]
    what = type(exc).__name__ + (f": {detail}" if detail else "")
    return TranscriptError(path, f"cannot be measured (unexpected {what})")
