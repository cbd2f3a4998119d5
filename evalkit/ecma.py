"""ECMAScript semantics the reference harness relies on, ported once (spec §10).

The reference is a Node.js script. Wherever JavaScript and Python disagree on a primitive —
string length, number formatting, rounding, trimming, JSON serialisation, what a regex class
matches — the JavaScript behaviour is reproduced here and every other module calls these
functions instead of the Python built-ins.
"""

from __future__ import annotations

import math
import re
import sys
from decimal import ROUND_HALF_UP, Decimal
from json.encoder import encode_basestring as _encode_basestring
from operator import add as _add
from typing import Any

__all__ = [
    "JS_WHITESPACE",
    "LINE_START",
    "LINE_END",
    "at_line_start",
    "DOT",
    "WS",
    "NOT_WS",
    "utf16_len",
    "utf16_prefix",
    "printable",
    "js_trim",
    "js_truthy",
    "js_string",
    "number_str",
    "js_json",
    "js_add",
    "js_div",
    "fix",
    "jround",
    "grp",
    "pct1",
    "rj",
    "lj",
    "listing_key",
    "pl",
]

# §10.3 / §10.6: ECMAScript's whitespace set, used by `\s`, `trim()` and the answer tests.
JS_WHITESPACE = (
    "\t\n\x0b\x0c\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)
# Regex fragments with ECMAScript meaning (§10.3). Python's `re.M` breaks lines only at "\n",
# and `.` excludes only "\n"; ECMAScript's line terminators are \n, \r, U+2028 and U+2029.
_TERMINATORS = "\\n\\r\\u2028\\u2029"
LINE_START = f"(?<![^{_TERMINATORS}])"
LINE_END = f"(?![^{_TERMINATORS}])"


def at_line_start(literal: str) -> str:
    """A regex fragment: `literal` at an ECMAScript line start (`LINE_START + literal`).

    The line-start test is a lookbehind placed *after* the literal, so a pattern that begins with
    it begins with a literal, which Python's engine searches for directly instead of trying a
    lookbehind at every character. The matches are the same.
    """
    lit = re.escape(literal)
    return f"{lit}(?<![^{_TERMINATORS}]{lit})"


DOT = f"[^{_TERMINATORS}]"
WS = "[\\t-\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff]"
NOT_WS = "[^\\t-\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff]"


def _narrow_base() -> int | None:
    """CPython stores a string with 1 or 2 bytes per character when it holds no character
    outside the BMP, and its `sys.getsizeof` is then `base + width * (len + 1)`. The base is
    measured here and the rule checked on samples; None (never use it) if either fails."""
    if sys.implementation.name != "cpython":
        return None
    base = sys.getsizeof("\u0100") - 4
    samples = [(c * n, w) for c, w in (("\u00e9", 1), ("\u0100", 2)) for n in (1, 7, 300)]
    wide = ["\U0001f600" * n for n in (1, 7, 300)]
    ok = all(sys.getsizeof(t) - base == w * (len(t) + 1) for t, w in samples) and all(
        sys.getsizeof(t) - base == 4 * (len(t) + 1) for t in wide
    )
    return base if ok else None


_NARROW_BASE = _narrow_base()


def utf16_len(s: str) -> int:
    """Length in UTF-16 code units, JavaScript's `s.length` (§10.1): an emoji counts 2.

    ASCII text, and text stored narrow (no character outside the BMP, read off its storage
    size in constant time), is its `len`; other text is measured by encoding it (one pass in
    C), which counts a lone surrogate as one unit, as JavaScript does.
    """
    if s.isascii():
        return len(s)
    if _NARROW_BASE is not None:
        extra = sys.getsizeof(s) - _NARROW_BASE
        n = len(s) + 1
        if extra == n or extra == 2 * n:
            return len(s)
    return len(s.encode("utf-16-le", "surrogatepass")) >> 1


def utf16_prefix(s: str, units: int) -> str:
    """The first `units` UTF-16 code units of `s` (`s.slice(0, units)`).

    A cut through a surrogate pair leaves a lone high surrogate, as JavaScript does; `printable`
    turns it into U+FFFD for output.
    """
    if s.isascii() or units <= 0:
        return s[: max(units, 0)]
    raw = s.encode("utf-16-le", "surrogatepass")[: 2 * units]
    return raw.decode("utf-16-le", "surrogatepass")


def printable(s: str) -> str:
    """Replace lone surrogates with U+FFFD, as Node does when it writes a string."""
    return _LONE_SURROGATE.sub("\ufffd", s) if _has_lone_surrogate(s) else s


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _has_lone_surrogate(s: str) -> bool:
    return not s.isascii() and _LONE_SURROGATE.search(s) is not None


def js_trim(s: str) -> str:
    """`String.prototype.trim` (§10.6): strips ECMAScript whitespace, not Python's set."""
    return s.strip(JS_WHITESPACE)


def js_truthy(x: Any) -> bool:
    """ECMAScript truthiness (§1.5): `[]` and `{}` are true, `0`, `""`, null and false are not."""
    if x is None or x is False:
        return False
    if isinstance(x, bool):
        return True
    if isinstance(x, int | float):
        return x != 0 and not (isinstance(x, float) and math.isnan(x))
    if isinstance(x, str):
        return x != ""
    return True


def js_string(x: Any) -> str:
    """ECMAScript `String(x)` for JSON values (§10.6)."""
    if isinstance(x, str):
        return x
    if x is None:
        return "null"
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, int | float):
        return number_str(x)
    if isinstance(x, list):
        return _array_string(x)
    return "[object Object]"


def _array_string(x: list[Any]) -> str:
    """`String(array)`: elements converted and joined with `,`, `null` as empty, nested arrays
    flattened the same way. Iterative, so an array nested thousands deep cannot overflow."""
    out: list[str] = []
    stack: list[Any] = [x]
    while stack:
        item = stack.pop()
        if item is _COMMA:
            out.append(",")
        elif isinstance(item, list):
            for n in range(len(item) - 1, -1, -1):
                stack.append(item[n])
                if n:
                    stack.append(_COMMA)
        elif item is not None:
            out.append(js_string(item))
    return "".join(out)


_COMMA = object()


def number_str(x: float | int) -> str:
    """ECMAScript Number-to-String (§10.2, §10.4): `44`, `12.5`, `1e-7`, `1e+21`, never `44.0`."""
    if type(x) is float:
        r = repr(x)
        # Fast path: where Python writes no exponent (1e-4 <= |x| < 1e16) ECMAScript writes
        # none either, with the same shortest round-trip digits; only `.0` differs.
        if "e" not in r and "n" not in r and x != 0:  # not 1e-05, inf, nan, 0.0 or -0.0
            return r[:-2] if r.endswith(".0") else r
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, int):
        if abs(x) < 2**53:
            return str(x)
        x = float(x)
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "0"
    sign = "-" if x < 0 else ""
    # repr() gives the shortest round-trip digits, as ECMAScript requires; only the layout differs.
    _, digits_t, exp = Decimal(repr(abs(x))).as_tuple()
    digits = "".join(map(str, digits_t)).rstrip("0") or "0"
    exp += len(digits_t) - len(digits)
    k = len(digits)
    n = exp + k  # value = 0.<digits> × 10^n
    if k <= n <= 21:
        body = digits + "0" * (n - k)
    elif 0 < n <= 21:
        body = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        body = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        mant = digits if k == 1 else digits[0] + "." + digits[1:]
        body = f"{mant}e{'+' if e >= 0 else '-'}{abs(e)}"
    return sign + body


_JSON_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
}
_NEEDS_ESCAPE = re.compile('["\\\\\x00-\x1f\ud800-\udfff]')


def _quote(s: str) -> str:
    if s.isascii() or _LONE_SURROGATE.search(s) is None:
        # No lone surrogate: Python's JSON string writer escapes exactly JSON.stringify's set
        # (`"`, `\`, control characters; `\b \f \n \r \t` by name, the others as `\u00xx`).
        return _encode_basestring(s)

    def esc(m: re.Match[str]) -> str:
        c = m.group(0)
        return _JSON_ESCAPES.get(c) or f"\\u{ord(c):04x}"

    return '"' + _NEEDS_ESCAPE.sub(esc, s) + '"'


def _is_array_index(key: str) -> bool:
    return key.isdigit() and key.isascii() and str(int(key)) == key and int(key) < 2**32 - 1


def _index_of(pair: tuple[str, Any]) -> int:
    return int(pair[0])


# Values a container may hold to be written in one piece (`_flat`): exact JSON scalar types.
_FLAT = frozenset({str, int, float, bool, type(None)})
_CONTAINERS = frozenset({dict, list, tuple})
# The text before each value of a dictionary with these keys (plain strings, none an array
# index), by keys and layout; None for keys that are not so. Bounded.
_HEADS: dict[tuple[Any, ...], tuple[str, ...] | None] = {}


def _heads(keys: tuple[Any, ...], inner: str, colon: str) -> tuple[str, ...] | None:
    """`inner + quoted key + colon` for each key of a dictionary whose keys are plain strings
    in insertion order (no array index, which JSON.stringify moves first), else None."""
    cache_key = (keys, inner, colon)
    try:
        return _HEADS[cache_key]
    except KeyError:
        pass
    # Only an all-string tuple gives heads, and a tuple equal to it holds equal strings.
    ok = all(type(k) is str and not _is_array_index(k) for k in keys)
    heads = tuple(inner + _quote(k) + colon for k in keys) if ok else None
    # Only a dictionary of short keys is remembered: the memo's size stays bounded.
    if sum(len(k) if type(k) is str else 1 for k in keys) <= 4096:
        if len(_HEADS) >= 4096:
            _HEADS.clear()
        _HEADS[cache_key] = heads
    return heads


def _flat(value: Any, inner: str, close: str, colon: str) -> str | None:
    """A list, tuple or dict of scalars written in one piece, or None when it holds anything
    else (it is then written item by item)."""
    t = type(value)
    if t is dict:
        if not value:
            return "{}"
        if not _FLAT.issuperset(map(type, value.values())):
            return None
        heads = _heads(tuple(value), inner, colon)
        if heads is None:
            return None
        return "{" + ",".join(map(_add, heads, map(_scalar_json, value.values()))) + close + "}"
    if t is list or t is tuple:
        if not value:
            return "[]"
        if not _FLAT.issuperset(map(type, value)):
            return None
        return "[" + inner + ("," + inner).join(map(_scalar_json, value)) + close + "]"
    return None


def _flat_items(value: Any, depth: int, pad: str, colon: str) -> str | None:
    """A list or tuple of containers of scalars (rows of a table) written in one piece, or
    None when it holds anything else."""
    if (
        type(value) not in (list, tuple)
        or not value
        or not _CONTAINERS.issuperset(map(type, value))
    ):
        return None
    if pad:
        inner, close = "\n" + pad * (depth + 1), "\n" + pad * depth
        item_inner, item_close = "\n" + pad * (depth + 2), inner
    else:
        inner = close = item_inner = item_close = ""
    texts = [_flat(v, item_inner, item_close, colon) for v in value]
    if None in texts:
        return None
    return "[" + inner + ("," + inner).join(texts) + close + "]"


def js_json(x: Any, indent: int | None = None) -> str:
    """`JSON.stringify(x)`, or `JSON.stringify(x, null, indent)` (§10.2).

    Differs from `json.dumps(..., separators=(",", ":"), ensure_ascii=False)` in number layout,
    lone surrogates (escaped as `\\udxxx`), non-finite numbers (`null`) and key order
    (array-index keys first). The walk is iterative, so a value nested thousands of levels deep
    is measured instead of raising `RecursionError`. Tuples are arrays; a non-string key is
    converted with `String()`. A container of plain scalars is written in one piece.
    """
    out: list[str] = []
    # The text written so far, joined every `_JOIN_EVERY` pieces: a large document is then held
    # as a few long strings instead of one small string per token (issue 16: bounded memory).
    done: list[str] = []
    # Work items: a value to write (with its depth), or literal text (a `str` on the stack).
    stack: list[Any] = [(x, 0)]
    pad = "" if not indent else " " * indent
    colon = ": " if pad else ":"
    while stack:
        if len(out) >= _JOIN_EVERY:
            done.append("".join(out))
            out.clear()
        item = stack.pop()
        if type(item) is str:
            out.append(item)
            continue
        value, depth = item
        if isinstance(value, list | tuple | dict) and value:
            if pad:
                inner = "\n" + pad * (depth + 1)
                close = "\n" + pad * depth
            else:
                inner = close = ""
            text = _flat(value, inner, close, colon)
            if text is None:
                text = _flat_items(value, depth, pad, colon)
            if text is not None:
                out.append(text)
            elif isinstance(value, dict):
                out.append("{")
                stack.append(close + "}")
                # (property name, key): a JavaScript object's keys are strings
                keys = [(k if isinstance(k, str) else js_string(k), k) for k in value]
                ordered = sorted((p for p in keys if _is_array_index(p[0])), key=_index_of)
                ordered += [p for p in keys if not _is_array_index(p[0])]
                for n in range(len(ordered) - 1, -1, -1):
                    name, k = ordered[n]
                    stack.append((value[k], depth + 1))
                    stack.append(("," if n else "") + inner + _quote(name) + colon)
            else:
                out.append("[")
                stack.append(close + "]")
                for n in range(len(value) - 1, -1, -1):
                    stack.append((value[n], depth + 1))
                    stack.append(("," if n else "") + inner)
        else:
            out.append(_scalar_json(value))
    done.append("".join(out))
    return "".join(done)


_JOIN_EVERY = 4096


def _scalar_json(x: Any) -> str:
    t = type(x)
    if t is str:
        return _encode_basestring(x) if x.isascii() else _quote(x)  # ASCII: no lone surrogate
    if t is int:
        return str(x) if -_MAX_SAFE < x < _MAX_SAFE else number_str(x)
    if t is float:
        return number_str(x) if math.isfinite(x) else "null"
    if x is None:
        return "null"
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, int | float):
        if isinstance(x, float) and not math.isfinite(x):
            return "null"
        return number_str(x)
    if isinstance(x, str):
        return _quote(x)
    if isinstance(x, list | tuple):
        return "[]"
    if isinstance(x, dict):
        return "{}"
    raise TypeError(f"not a JSON value: {type(x).__name__}")


def js_add(a: float, b: float) -> float:
    """`a + b` on doubles (§10.4): exact while the sum is a safe integer, else rounded.

    Python adds integers exactly; ECMAScript rounds every `+` to a double, so a token sum past
    2^53 must be rounded at each step as the reference rounds it.
    """
    if type(a) is int and type(b) is int:
        total = a + b
        if -_MAX_SAFE <= total <= _MAX_SAFE:
            return total
        return float(a) + float(b)
    return a + b


_MAX_SAFE = 2**53


def js_div(a: float, b: float) -> float:
    """ECMAScript `a / b`: `x / 0` is ±Infinity (by the sign of the zero), `0 / 0` and any NaN
    operand are NaN, `x / ±Infinity` is ±0 — never `ZeroDivisionError` (§10.4)."""
    try:
        return a / b
    except ZeroDivisionError:
        if a == 0 or math.isnan(a):
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)
    except OverflowError:  # an integer quotient too large for a double
        return math.copysign(math.inf, a) * math.copysign(1.0, b)


def fix(x: float, d: int) -> str:
    """`Number.prototype.toFixed(d)`: exact binary value, ties away from zero (§10.4)."""
    if isinstance(x, float) and not math.isfinite(x) or abs(x) >= 1e21:
        return number_str(x)  # toFixed of a value ≥ 1e21 is its plain String() form
    q = Decimal(x).quantize(Decimal(1).scaleb(-d), rounding=ROUND_HALF_UP)
    text = f"{q:f}"
    # (-0).toFixed(1) is "0.0", but (-0.04).toFixed(1) keeps its sign: "-0.0".
    return text.lstrip("-") if x == 0 else text


def jround(x: float) -> int | float:
    """`Math.round`: nearest integer, exact halves toward +∞ (§10.4); NaN and ±∞ unchanged."""
    if type(x) is int:  # already whole (a zero sum, say): nothing to round
        return x
    if isinstance(x, float) and not math.isfinite(x):
        return x
    f = math.floor(x)
    return int(f + 1 if x - f >= 0.5 else f)


def grp(n: int | float) -> str:
    """Comma thousands separators: `17465` → `17,465` (`toLocaleString` in en-US).

    A value past 2^53 is a double and prints its shortest round-trip digits, zero-padded
    (`12345678901234567890` → `12,345,678,901,234,567,000`, not the exact binary value);
    Infinity prints `∞` and NaN `NaN`, as `toLocaleString` writes them.
    """
    if isinstance(n, float):
        if math.isnan(n):
            return "NaN"
        if math.isinf(n):
            return "∞" if n > 0 else "-∞"
        if n.is_integer():
            return f"{Decimal(repr(n)).normalize():,f}" if abs(n) >= _MAX_SAFE else f"{int(n):,}"
    elif isinstance(n, int) and abs(n) > _MAX_SAFE:
        return grp(float(n))
    return f"{n:,}"


def pct1(f: float) -> str:
    """A fraction as a percentage with one decimal, `fix(f × 100, 1) + "%"`."""
    return fix(f * 100, 1) + "%"


def rj(s: str, w: int) -> str:
    """`padStart(w)`, counting UTF-16 units; never truncates."""
    return " " * max(0, w - utf16_len(s)) + s


def lj(s: str, w: int) -> str:
    """`padEnd(w)`, counting UTF-16 units; never truncates."""
    return s + " " * max(0, w - utf16_len(s))


def listing_key(name: str) -> bytes:
    """Sort key for file names in Node's directory-listing order: byte-wise UTF-8 (§10.5).

    Names that are not valid UTF-8 (undecodable bytes, kept by Python as surrogate escapes)
    sort by their original bytes instead of raising.
    """
    return name.encode("utf-8", "surrogateescape")


def pl(n: int, word: str) -> str:
    """`word` when `n` is 1, else `word + "s"`."""
    return word if n == 1 else word + "s"
