"""One stack for every JSON read: how deeply a line may nest is the line's, not the caller's.

Python's `json` decoder counts each nesting level against the interpreter's recursion limit,
which the frames already on the stack share. A line nested a few hundred levels deep (the
hostile corpus nests values 300 to 1,100 levels) therefore parsed when a file was read from a
shallow stack (`sessions_df([path])`) and was "not JSON" when the same file was read from a
deeper one (`load_corpus(DIR)`): one file, two rows. `fixed_stack` gives every reader the same
number of levels below its own frame, whatever called it, so a file always reads the same.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["STACK_LEVELS", "fixed_stack"]

# The recursion a reader may use below its own frame: about what a plain `python` process
# leaves a reader called from a few dozen frames (the limit's default is 1,000).
STACK_LEVELS = 1000

F = TypeVar("F", bound=Callable[..., Any])


def _depth() -> int:
    frame, n = sys._getframe(2), 0  # the caller of the wrapped function, and its callers
    while frame is not None:
        n += 1
        frame = frame.f_back
    return n


def fixed_stack(fn: F) -> F:
    """Run `fn` with the recursion limit at its caller's depth + `STACK_LEVELS` (the old limit
    back afterwards): the same headroom below `fn` on every path that calls it."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        old = sys.getrecursionlimit()
        want = _depth() + STACK_LEVELS
        if want == old:
            return fn(*args, **kwargs)
        sys.setrecursionlimit(want)
        try:
            return fn(*args, **kwargs)
        finally:
            sys.setrecursionlimit(old)

    return wrapper  # type: ignore[return-value]
