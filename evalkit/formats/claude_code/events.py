"""Which event, and so which segment file, a metric's `TranscriptError` is about.

The metric modules see one concatenated event list; when they meet input the reference crashes
on (§9.1) they tag the error with the event's index, and `evalkit.session` names the segment
file holding that event (a multi-turn session has several files, §1.1).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence

from evalkit.errors import TranscriptError

__all__ = ["at_event", "in_segment"]


def at_event(exc: TranscriptError, index: int) -> TranscriptError:
    """Tag `exc` with the index of the event it is about (the innermost tag wins)."""
    if getattr(exc, "event_index", None) is None and index >= 0:
        exc.event_index = index  # type: ignore[attr-defined]
    return exc


def in_segment(
    exc: TranscriptError, paths: Sequence[str], segment_starts: Sequence[int]
) -> TranscriptError:
    """The same error naming the segment file that holds the tagged event."""
    index = getattr(exc, "event_index", None)
    if index is None or len(paths) < 2 or exc.path != paths[0]:
        return exc
    path = paths[bisect_right(list(segment_starts), index) - 1]
    return TranscriptError(path, exc.reason, exc.line)
