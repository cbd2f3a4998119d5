"""Bounded JSON decoding shared by the case manifest, evidence files and receipts (spec §3.1, §5.1).

Python's `json` module accepts duplicate keys, `NaN`/`Infinity`, unbounded integers and nesting
limited only by the interpreter's recursion limit. evalkit refuses all of these explicitly, with
its own bounds (spec §11 "Bounded JSON"): nesting depth 64, integer magnitude 2^53 - 1, no
duplicate keys, no non-finite numbers. The integer bound is checked on the digit string before
conversion, so it never depends on CPython's integer-digit limit.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

__all__ = [
    "MAX_DEPTH",
    "MAX_SAFE_INTEGER",
    "BoundsError",
    "SyntaxProblem",
    "decode_bounded",
    "canonical_dumps",
    "fingerprint_dumps",
    "is_sha256_hex",
    "is_commit_hex",
    "freeze",
    "thaw",
]

MAX_DEPTH = 64
MAX_SAFE_INTEGER = 2**53 - 1
# "-9007199254740991" is 17 characters; anything longer is out of range without converting.
_MAX_INT_CHARS = len(str(-MAX_SAFE_INTEGER))


class BoundsError(ValueError):
    """The text is JSON but breaks one of evalkit's bounds (depth, integer, duplicate, NaN)."""


class SyntaxProblem(ValueError):
    """The text is not JSON. `message` is the decoder's position text; `line` is 1-based."""

    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


def _parse_int(text: str) -> int:
    if len(text) > _MAX_INT_CHARS:
        raise BoundsError("integer out of range")
    value = int(text)
    if abs(value) > MAX_SAFE_INTEGER:
        raise BoundsError("integer out of range")
    return value


def _parse_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # 1e400 overflows to inf: as unbounded as Infinity itself
        raise BoundsError("non-finite number")
    return value


def _parse_constant(name: str) -> Any:
    raise BoundsError("NaN or Infinity")


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj: dict[str, Any] = {}
    for key, value in pairs:
        if key in obj:
            raise BoundsError("duplicate key")
        obj[key] = value
    return obj


def _depth_ok(value: Any) -> bool:
    # Iterative walk: the decoder already bounded recursion, this enforces evalkit's own limit.
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > MAX_DEPTH:
            return False
        stack.extend((child, depth + 1) for child in children)
    return True


def decode_bounded(text: str) -> Any:
    """Decode `text` as bounded JSON.

    Raises:
        SyntaxProblem: the text is not JSON at all.
        BoundsError: the text is JSON that breaks a bound.
    """
    try:
        value = json.loads(
            text,
            object_pairs_hook=_pairs,
            parse_int=_parse_int,
            parse_float=_parse_float,
            parse_constant=_parse_constant,
        )
    except RecursionError as exc:  # far deeper than MAX_DEPTH
        raise BoundsError("nesting too deep") from exc
    except json.JSONDecodeError as exc:
        raise SyntaxProblem(str(exc), exc.lineno) from exc
    if not _depth_ok(value):
        raise BoundsError("nesting too deep")
    return value


def canonical_dumps(obj: Any) -> str:
    """The canonical serialization of files evalkit writes (spec §3.1): sorted, indent 2, one \\n.

    Never invalid JSON: a non-finite number (a ratio over nothing in a report) is written as
    `null`, as JSON.stringify writes it, and a lone surrogate as its `\\udxxx` escape.
    """
    text = json.dumps(_finite(obj), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Mapping):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(item) for item in value]
    return value


def fingerprint_dumps(obj: Any) -> bytes:
    """The hashing serialization of case fingerprints and config digests (spec §2.5, §8.5)."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode(
        "utf-8"
    )


_SHA256_HEX = re.compile(r"[0-9a-f]{64}")
_COMMIT_HEX = re.compile(r"[0-9a-f]{40}")


def is_sha256_hex(value: object) -> bool:
    """A lowercase 64-hex SHA-256 digest, the whole string (a trailing newline is not allowed)."""
    return isinstance(value, str) and _SHA256_HEX.fullmatch(value) is not None


def is_commit_hex(value: object) -> bool:
    """An exact lowercase 40-hex commit id, the whole string."""
    return isinstance(value, str) and _COMMIT_HEX.fullmatch(value) is not None


def freeze(value: Any) -> Any:
    """Deep-freeze decoded JSON: objects become read-only mappings, arrays tuples."""
    if isinstance(value, Mapping):
        return MappingProxyType({key: freeze(item) for key, item in value.items()})
    if isinstance(value, list | tuple):
        return tuple(freeze(item) for item in value)
    return value


def thaw(value: Any) -> Any:
    """The inverse of `freeze`: plain dicts and lists, ready for `json.dumps`."""
    if isinstance(value, Mapping):
        return {key: thaw(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [thaw(item) for item in value]
    return value
