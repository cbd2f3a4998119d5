"""A fast path for reading transcript lines: orjson where it is provably exact (spec §10.2).

`transcripts.parse_line` is the one definition of how a line is read (ECMAScript's `JSON.parse`
semantics). Decoding every line with it costs more than the rest of reading, so each line is
first given to orjson, and its value is used only when it is certainly the value `parse_line`
would return; otherwise the caller falls back to `parse_line`. The rule is detection, not
guessing:

* orjson refuses the line (invalid JSON, invalid UTF-8, a lone surrogate escape, NaN or
  Infinity literals, a BOM, a number that overflows to infinity, nesting past its limit): the
  exact decoder decides, and reports the line as it always did.
* a number whose magnitude passes 2^53 (an integer `parse_line` turns into a double; a float
  orjson may have rounded from an integer literal too long for 64 bits): exact decoder.
* nesting deeper than `MAX_FAST_DEPTH` (the exact decoder's own depth limit depends on the
  interpreter's stack): exact decoder.
* the integer literal `-0`, which orjson reads as `0` and ECMAScript as negative zero: a line
  with a `-0` right after `:`, `[`, `,` or the line start (and not followed by more of a
  number) goes to the exact decoder, which says which it is.

What is left is plain JSON whose strings are valid UTF-8 and whose numbers are small: there
orjson and Python's `json` agree bit for bit (both round decimal literals correctly, both keep a
duplicated key at its first position with its last value); `tests/test_fastjson.py` holds that
agreement to account on adversarial inputs, so a change to `parse_line` that the fast path does
not follow fails there.
"""

from __future__ import annotations

import re
from typing import Any

try:  # a dependency; without it every line simply takes the exact path
    import orjson
except ImportError:  # pragma: no cover - exercised only in a broken install
    orjson = None  # type: ignore[assignment]

__all__ = ["NOT_EXACT", "MAX_FAST_DEPTH", "fast_loads"]

NOT_EXACT: Any = object()  # "ask parse_line": the sentinel `fast_loads` returns
MAX_FAST_DEPTH = 200
_LIMIT = 2**53


def fast_loads(raw: bytes) -> Any:
    """The value of one line, or `NOT_EXACT` when only `parse_line` can say what it is.

    Args:
        raw: The line's bytes, without its newline (never empty).
    """
    if orjson is None:
        return NOT_EXACT
    if _negative_zero(raw):
        return NOT_EXACT
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return NOT_EXACT
    return value if _exact(value, 0) else NOT_EXACT


# `-0` not followed by more of a number; the literal prefix makes the search a fast scan.
_MINUS_ZERO = re.compile(rb"-0(?![0-9.eE])")
_BEFORE_A_VALUE = frozenset(b":[,")
_JSON_WS = frozenset(b" \t\r\n")


def _negative_zero(raw: bytes) -> bool:
    """Whether `raw` may hold the integer literal `-0` (a string holding one also counts)."""
    for m in _MINUS_ZERO.finditer(raw):
        j = m.start() - 1
        while j >= 0 and raw[j] in _JSON_WS:
            j -= 1
        if j < 0 or raw[j] in _BEFORE_A_VALUE:
            return True
    return False


def _exact(v: Any, depth: int) -> bool:
    t = type(v)
    if t is str or v is None or t is bool:
        return True
    if t is dict:
        if depth >= MAX_FAST_DEPTH:
            return False
        for x in v.values():
            if type(x) is not str and not _exact(x, depth + 1):
                return False
        return True
    if t is list:
        if depth >= MAX_FAST_DEPTH:
            return False
        for x in v:
            if type(x) is not str and not _exact(x, depth + 1):
                return False
        return True
    # int or float: exact only within ±2^53 (NaN cannot come from orjson)
    return -_LIMIT <= v <= _LIMIT
