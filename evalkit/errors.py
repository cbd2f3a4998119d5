"""Errors evalkit raises on bad input.

Every error names what it is about (a path, a field, an option) and says why, in one line, so the
CLI can print it on stderr and exit with status 2 instead of a traceback.
"""

from __future__ import annotations

__all__ = [
    "EvalkitError",
    "TranscriptError",
    "NotATranscript",
    "NOT_A_TRANSCRIPT",
    "EMPTY_FILE",
    "EmptyFile",
    "refuse_empty",
    "UsageError",
    "one_line",
    "unexpected_error",
]


class EvalkitError(Exception):
    """Base class of every error evalkit raises deliberately."""


class TranscriptError(EvalkitError):
    """A transcript file could not be read, or holds input the reference harness crashes on.

    Compared, printed and pickled by its three attributes, as a dataclass would be (this module
    is imported by every command, so it does without `dataclasses`, whose import costs a warm
    sweep more than the rest of its start).

    Attributes:
        path: The file, as the caller named it.
        reason: What is wrong, in a few words.
        line: 1-based line number when the problem is on one line, else None.
    """

    __hash__ = None  # type: ignore[assignment] — compared by value, as before

    def __init__(self, path: str, reason: str, line: int | None = None) -> None:
        self.path = path
        self.reason = reason
        self.line = line

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return (self.path, self.reason, self.line) == (other.path, other.reason, other.line)  # type: ignore[attr-defined]

    def __repr__(self) -> str:
        return (
            f"{type(self).__qualname__}(path={self.path!r}, reason={self.reason!r}, "
            f"line={self.line!r})"
        )

    def __reduce__(self):
        # By its attributes, however it was made (a subclass's own arguments, keywords).
        return (_restore, (type(self), self.path, self.reason, self.line))

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line is not None else self.path
        return one_line(f"{where}: {self.reason}")  # a name with a newline stays one line


def _restore(cls: type[TranscriptError], path: str, reason: str, line: int | None):
    err = cls.__new__(cls)
    err.args = (path, reason) if line is None else (path, reason, line)
    err.path, err.reason, err.line = path, reason, line
    return err


NOT_A_TRANSCRIPT = "not a Claude Code transcript"


class NotATranscript(TranscriptError):
    """A non-empty file in which no line is a JSON object with a Claude Code event `type`.

    A README, an image, an evidence JSON or a JSONL of application logs: reading it as a
    transcript would report a session of zeros, so it is refused (the sweep lists it as
    skipped with this reason). `too_long`: lines skipped for being over the line limit; when
    there are any, the reason names the limit, since one of them may have been the event.
    """

    def __init__(self, path: str, too_long: int = 0) -> None:
        reason = NOT_A_TRANSCRIPT
        if too_long:
            lines = "1 line" if too_long == 1 else f"{too_long} lines"
            reason = (
                f"{lines} over the length limit (EVALKIT_MAX_LINE_MB) skipped, and no other "
                "line is a Claude Code event"
            )
        super().__init__(path, reason)


EMPTY_FILE = "an empty file (0 bytes): nothing to measure"


class EmptyFile(NotATranscript):
    """A zero-byte file: refused as a transcript (a session of zeros would be measured)."""

    def __init__(self, path: str) -> None:
        TranscriptError.__init__(self, path, EMPTY_FILE)


def refuse_empty(paths) -> None:
    """Raise `EmptyFile` for the first of `paths` that is a regular file of zero bytes (a path
    that cannot be looked at is left to the reader, which names its problem)."""
    import os
    import stat

    for p in paths:
        try:
            st = os.stat(p)
        except (OSError, ValueError):
            continue
        if stat.S_ISREG(st.st_mode) and st.st_size == 0:
            raise EmptyFile(os.fspath(p))


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
