"""`utf16_len` (ecma.py, §10.1) on every kind of string: its constant-time narrow-storage path
must agree with counting UTF-16 units by encoding."""

from __future__ import annotations

import json
import random

import orjson

from evalkit.ecma import utf16_len

PIECES = ["a", "\u00e9", "\u00ff", "\u0100", "\u2028", "\ud800", "\udfff", "\U0001f600"]
PIECES += ["\U0010ffff", "\x00"]


def by_encoding(s: str) -> int:
    return len(s.encode("utf-16-le", "surrogatepass")) // 2


def test_utf16_len_counts_code_units_on_random_strings_and_their_slices():
    rnd = random.Random(10)
    for _ in range(5000):
        s = "".join(rnd.choice(PIECES) for _ in range(rnd.randint(0, 60)))
        for t in (s, s[1:], s[: len(s) // 2], s * 3):
            assert utf16_len(t) == by_encoding(t), ascii(t)


def test_utf16_len_of_decoded_json_strings():
    for text in ("h\u00e9llo \U0001f600", "\u2014" * 1000, "x" * 10 + "\U0001f600", "\u00e9"):
        for decoded in (json.loads(json.dumps(text)), orjson.loads(orjson.dumps(text))):
            assert utf16_len(decoded) == by_encoding(decoded)
    assert utf16_len(json.loads('"\\ud800x"')) == 2 and utf16_len("\U0001f600") == 2
