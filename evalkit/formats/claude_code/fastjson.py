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
  whose value holds an integer zero, and whose bytes hold a `-0` right after `:`, `[`, `,` or
  the line start (and not followed by more of a number), goes to the exact decoder, which
  says which it is. Only lines with a zero are searched (orjson cannot hide a `-0` elsewhere).

The check is one walk over the decoded value, after orjson: strings, most of a transcript's
values, are passed over by a type test.

What is left is plain JSON whose strings are valid UTF-8 and whose numbers are small: there
orjson and Python's `json` agree bit for bit (both round decimal literals correctly, both keep a
duplicated key at its first position with its last value); `tests/test_fastjson.py` holds that
agreement to account on adversarial inputs, so a change to `parse_line` that the fast path does
not follow fails there.
"""

from __future__ import annotations

import re
from typing import Any

from evalkit.ecma import js_json, utf16_len

try:  # a dependency; without it every line simply takes the exact path
    import orjson
except ImportError:  # pragma: no cover - exercised only in a broken install
    orjson = None  # type: ignore[assignment]

__all__ = ["NOT_EXACT", "MAX_FAST_DEPTH", "fast_loads", "stringify", "stringify_units"]

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
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return NOT_EXACT
    t = type(value)
    if t is dict or t is list:
        status = _scan(value, 0)
    else:
        status = _scalar(value, t)
    if status == _EXACT:
        return value
    # An integer zero may have been the literal `-0` (orjson reads it as 0): only the bytes tell.
    if status == _ZERO and not _negative_zero(raw):
        return value
    return NOT_EXACT


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


# What the walk over a decoded value found: every scalar exact; exact unless an integer zero
# was written `-0`; not exact (a number past 2^53, or nesting past `MAX_FAST_DEPTH`).
_EXACT, _ZERO, _INEXACT = 0, 1, 2


def _scalar(v: Any, t: type) -> int:
    if t is int:
        if v == 0:
            return _ZERO
        return _EXACT if -_LIMIT <= v <= _LIMIT else _INEXACT
    if t is float:  # NaN cannot come from orjson
        return _EXACT if -_LIMIT <= v <= _LIMIT else _INEXACT
    return _EXACT  # str, bool, None


def _scan(v: Any, depth: int) -> int:
    """The status of a decoded container (`v` a dict or list at nesting `depth`); one pass,
    strings (most of a transcript's values) passed over by a type test."""
    if depth >= MAX_FAST_DEPTH:
        return _INEXACT
    status = _EXACT
    for x in v.values() if type(v) is dict else v:
        t = type(x)
        if t is str:
            continue
        if t is dict or t is list:
            r = _scan(x, depth + 1)
        elif t is int:
            if x == 0:
                status = _ZERO
                continue
            if -_LIMIT <= x <= _LIMIT:
                continue
            return _INEXACT
        elif t is float:
            if -_LIMIT <= x <= _LIMIT:
                continue
            return _INEXACT
        else:  # bool, None
            continue
        if r == _INEXACT:
            return _INEXACT
        if r == _ZERO:
            status = _ZERO
    return status


# --- writing: JSON.stringify's text by orjson where it is provably the same ------------------

_DIGITS = frozenset("0123456789")


def stringify(x: Any) -> str:
    """`ecma.js_json(x)` (compact `JSON.stringify`), written by orjson when that is certain to
    give the same text, else by `js_json` itself.

    orjson writes strings, `null`, booleans, integers, objects and arrays as `JSON.stringify`
    does, byte for byte (`tests/test_fastjson.py` holds every BMP character and a sample past
    it to account). It differs on floats (`1.0` against `1`, exponent forms), on keys that are
    array indices (ECMAScript writes them first, in numeric order), on lone surrogates (orjson
    refuses them), non-string keys and deep nesting: a value holding any of these, or an
    integer past 2^53, is written by `js_json`.
    """
    if orjson is not None and _plain(x, 0):
        try:
            return orjson.dumps(x).decode("utf-8")
        except TypeError:  # orjson.JSONEncodeError: a lone surrogate, too deep, …
            pass
    return js_json(x)


def stringify_units(x: Any) -> int:
    """`utf16_len(stringify(x))`, the UTF-16 length of `JSON.stringify(x)`: when orjson writes
    the text and it is ASCII (most tool inputs), its byte count, with no text decoded."""
    if orjson is not None and _plain(x, 0):
        try:
            raw = orjson.dumps(x)
        except TypeError:  # orjson.JSONEncodeError, as in `stringify`
            pass
        else:
            return len(raw) if raw.isascii() else utf16_len(raw.decode("utf-8"))
    return utf16_len(js_json(x))


def _plain(v: Any, depth: int) -> bool:
    """`v` holds only strings, `null`, booleans, integers within ±2^53, and objects (string
    keys that do not start with a digit) and arrays (lists or tuples) of them."""
    t = type(v)
    if t is str or v is None or t is bool:
        return True
    if t is int:
        return -_LIMIT <= v <= _LIMIT
    if t is dict:
        if depth >= MAX_FAST_DEPTH:
            return False
        for k, x in v.items():
            if type(k) is not str or k[:1] in _DIGITS:
                return False
            if type(x) is not str and not _plain(x, depth + 1):
                return False
        return True
    if t is list or t is tuple:
        if depth >= MAX_FAST_DEPTH:
            return False
        for x in v:
            if type(x) is not str and not _plain(x, depth + 1):
                return False
        return True
    return False
