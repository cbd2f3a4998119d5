"""The orjson fast path gives exactly what `parse_line` gives, or steps aside (fastjson.py).

Every case is checked against the exact decoder, value *and* type (an int is not a float), so a
change to `parse_line`'s semantics that the fast path does not follow fails here.
"""

from __future__ import annotations

import functools
import json
import math
import random

import pytest

from evalkit.ecma import js_json, utf16_len
from evalkit.formats.claude_code.fastjson import MAX_FAST_DEPTH, NOT_EXACT, fast_loads
from evalkit.formats.claude_code.transcripts import parse_line, read_segment


def same(a, b) -> bool:
    """Deep equality that also compares types and key order (and -0.0 against 0.0)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or (
            a == b and math.copysign(1, a) == math.copysign(1, b)
        )
    return a == b


def exact(raw: bytes):
    try:
        piece = raw.decode("utf-8")
    except UnicodeDecodeError:
        piece = raw.decode("utf-8", "replace")
    return parse_line(piece)


def check(raw: bytes) -> bool:
    """True when the fast path answered (and agreed); False when it stepped aside."""
    fast = fast_loads(raw)
    if fast is NOT_EXACT:
        return False
    ok, value = exact(raw)
    assert ok, raw
    assert same(fast, value), raw
    return True


HOSTILE = [
    b'{"a":1,"b":2,"a":3}',  # duplicate key: first position, last value
    b'{"a":{"x":1},"a":[2]}',
    b"9007199254740992",
    b"-9007199254740992",
    b"9007199254740993",  # > 2^53: the exact decoder makes it a double
    b"-9007199254740993",
    b"18446744073709551616",  # past 64 bits: orjson would round it differently
    b"123456789012345678901234",
    b"1e400",
    b"-1e400",
    b"[1.7976931348623157e308, 5e-324, 2.2250738585072011e-308]",
    b"-0",
    b"-0.0",
    b"0.1",
    b"1E5",
    b'"\\ud800"',  # lone surrogate escape
    b'"\\udc00x"',
    b'"\\ud83d\\ude00"',  # a valid pair
    b'"\xed\xa0\x80"',  # an encoded surrogate: not UTF-8
    b'"\xff"',  # invalid UTF-8
    b'\xef\xbb\xbf{"type":"x"}',  # leading BOM
    b"NaN",
    b"Infinity",
    b"-Infinity",
    b'{"a": NaN}',
    b" \t{} \r",
    b'"\\u0000"',
    b'"\x7f"',
    b'"\t"',  # raw control character in a string
    b"[1,]",
    b"{} {}",
    b"01",
    b"null",
    b"true",
    b'"plain"',
    '{"t": "h\u00e9llo \U0001f600 \u2028"}'.encode(),
    b"[" * (MAX_FAST_DEPTH + 5) + b"]" * (MAX_FAST_DEPTH + 5),
    b"[" * 5000 + b"]" * 5000,
    b"{}" + b" " * 10,
]


@pytest.mark.parametrize("raw", HOSTILE, ids=range(len(HOSTILE)))
def test_fast_path_agrees_with_the_exact_decoder_or_steps_aside(raw):
    fast = fast_loads(raw)
    if fast is NOT_EXACT:
        return  # the exact decoder decides, as it always did
    ok, value = exact(raw)
    assert ok and same(fast, value)


def test_the_fast_path_steps_aside_where_it_cannot_be_exact():
    for raw in (
        b"9007199254740993",
        b"18446744073709551616",
        b"123456789012345678901234",
        b'"\\ud800"',
        b'"\xff"',
        b"NaN",
        b"1e400",
        b'\xef\xbb\xbf{"type":"x"}',
        b"[" * (MAX_FAST_DEPTH + 5) + b"]" * (MAX_FAST_DEPTH + 5),
        b"-0",
        b'{"a": -0}',
        b"[1,-0]",
        b"[ -0 ]",
    ):
        assert fast_loads(raw) is NOT_EXACT, raw
    # A date or a negative number with more digits is not `-0`.
    assert check(b'{"t":"2026-01-05","a":-0.5,"b":-10}')
    # ...and answers for ordinary lines, so the fast path is really used.
    assert check(b'{"type":"assistant","message":{"id":"m1","usage":{"input_tokens":12}}}')
    assert check(b'{"a":1,"b":2,"a":3}')
    assert check(b"[0.1, -0.0, 1E5, 9007199254740992]")


def test_random_numbers_decode_identically():
    rnd = random.Random(16)
    for _ in range(4000):
        digits = rnd.choice("123456789") + "".join(
            rnd.choice("0123456789") for _ in range(rnd.randint(0, 30))
        )
        cut = rnd.randint(1, len(digits))
        literal = digits[:cut] + ("." + digits[cut:] if cut < len(digits) else "")
        literal += rnd.choice(["", f"e{rnd.randint(-330, 310)}", f"E+{rnd.randint(0, 25)}"])
        check(("-" if rnd.random() < 0.3 else "").encode() + literal.encode())


def test_random_documents_decode_identically():
    rnd = random.Random(1016)
    pieces = ["a", "é", "\U0001f600", "\u2028", "\\n", "\\u00e9", '\\"', "\\\\", "/", " "]

    def value(depth: int):
        kind = rnd.randrange(6 if depth < 6 else 4)
        if kind == 0:
            return rnd.choice([None, True, False])
        if kind == 1:
            return rnd.randint(-(2**60), 2**60) if rnd.random() < 0.2 else rnd.randint(-999, 999)
        if kind == 2:
            return rnd.uniform(-1e6, 1e6)
        if kind == 3:
            return "".join(rnd.choice(pieces) for _ in range(rnd.randint(0, 8)))
        if kind == 4:
            return [value(depth + 1) for _ in range(rnd.randint(0, 4))]
        return {f"k{rnd.randint(0, 3)}": value(depth + 1) for _ in range(rnd.randint(0, 4))}

    for _ in range(600):
        doc = value(0)
        text = json.dumps(doc, ensure_ascii=False).replace("\\\\u", "\\u")
        check(text.encode("utf-8", "surrogatepass"))


def test_reading_a_file_counts_lines_as_the_exact_decoder_does(tmp_path):
    raws = [r for r in HOSTILE if b"\n" not in r]
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\n".join(r for r in raws if r.strip() != b"null") + b"\n")
    events, account = read_segment(str(path))
    want_events, malformed, non_object, invalid = [], 0, 0, 0
    for raw in raws:
        if raw.strip() == b"null":
            continue
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            invalid += 1
        ok, value = exact(raw)
        if not ok:
            malformed += 1
        elif isinstance(value, dict):
            want_events.append(value)
        else:
            non_object += 1
    assert (account.malformed, account.non_object, account.invalid_utf8) == (
        malformed,
        non_object,
        invalid,
    )
    assert len(events) == len(want_events)
    assert all(same(a, b) for a, b in zip(events, want_events, strict=True))


def test_the_negative_zero_search_runs_only_for_a_line_holding_an_integer_zero():
    # A `-0` that a zero could have come from: the exact decoder decides (fallback)...
    for raw in (b'{"a":0,"t":"[-0"}', b'{"n":[0, -0]}', b'{"u":{"x":-0}}', b"-0", b"[[-0]]"):
        assert fast_loads(raw) is NOT_EXACT, raw
    # ...and `-0` in a string of a line without an integer zero cannot be a number: it fires.
    assert check(b'{"t":"[-0]","a":1}')
    assert check(b'{"t":"x -0","n":[1, -0.0]}')
    assert check(b'{"a":0,"t":"2026-01-05"}')  # a zero, and no `-0` a value could start with
    assert check(b'{"a":0.0,"b":-0.0,"t":":-0"}')  # float zeros are read alike by both


@pytest.mark.parametrize(
    "value",
    [
        {"file_path": "/a/b.py", "limit": 20, "flag": True, "none": None},
        {"query": 'h\u00e9llo \U0001f600 \u2028 \x00 \x1f \x7f \\ "q"', "n": [1, [], {}]},
        ["x", 1, -9007199254740992, ("t", 2)],
        {},
        [],
        "plain",
        {"deep": [[[{"a": "b"}]]]},
    ],
)
def test_stringify_fires_for_plain_values_and_writes_what_js_json_writes(value, monkeypatch):
    from evalkit.formats.claude_code import fastjson

    want = js_json(value)
    monkeypatch.setattr(fastjson, "js_json", _refuse)  # the fast path must answer alone
    assert fastjson.stringify(value) == want
    assert fastjson.stringify_units(value) == utf16_len(want)


@pytest.mark.parametrize(
    "value",
    [
        {"a": 1.0},  # orjson writes 1.0, JSON.stringify 1
        {"a": [1e21, 1e-7, 0.5]},
        {"b": 1, "2": "x"},  # an array-index key is written first by JSON.stringify
        {"10": 1},
        {"a": 9007199254740993},  # past 2^53
        {"s": "\ud800"},  # a lone surrogate: orjson refuses it, JSON.stringify escapes it
        {"x": -0.0},
        {"deep": functools.reduce(lambda a, _: [a], range(300), 1)},  # deeper than the walk goes
    ],
)
def test_stringify_falls_back_to_js_json_where_orjson_would_differ(value, monkeypatch):
    from evalkit.formats.claude_code import fastjson

    calls = []
    real = fastjson.js_json
    monkeypatch.setattr(fastjson, "js_json", lambda v: calls.append(v) or real(v))
    assert fastjson.stringify(value) == real(value)
    assert calls == [value]
    assert fastjson.stringify_units(value) == utf16_len(real(value))
    assert calls == [value, value]


def test_stringify_agrees_with_js_json_on_every_bmp_character():
    from evalkit.formats.claude_code.fastjson import stringify, stringify_units

    chars = [chr(c) for c in range(0xD800)] + [chr(c) for c in range(0xE000, 0x10000)]
    chars += [chr(c) for c in range(0x10000, 0x110000, 997)]
    for k in range(0, len(chars), 512):
        chunk = chars[k : k + 512]
        value = {"k" + "".join(chunk): ["".join(chunk), "".join(reversed(chunk))]}
        assert stringify(value) == js_json(value)
        assert stringify_units(value) == utf16_len(js_json(value))


def _refuse(value):
    raise AssertionError(f"js_json was asked for {value!r}")
