"""ECMAScript primitives (spec §10)."""

from __future__ import annotations

import pytest

from evalkit.ecma import (
    fix,
    grp,
    jround,
    js_json,
    js_string,
    js_trim,
    js_truthy,
    number_str,
    pct1,
    printable,
    rj,
    utf16_len,
    utf16_prefix,
)


@pytest.mark.parametrize(
    "x, d, want",
    [
        (0.125, 2, "0.13"),
        (12.5, 0, "13"),
        (2.5, 0, "3"),
        (1.005, 2, "1.00"),
        (-0.0, 1, "0.0"),
        (-0.04, 1, "-0.0"),
        (81.94999999999999, 1, "81.9"),
        (39.935, 1, "39.9"),
        (100, 1, "100.0"),
    ],
)
def test_fix_rounds_the_exact_binary_value_ties_away_from_zero(x, d, want):
    assert fix(x, d) == want


def test_fix_operation_order_matters():
    assert fix((14500 / 200000) * 100, 1) == "7.2"  # §6.8 / §10.4
    assert fix(14500 * 100 / 200000, 1) == "7.3"


@pytest.mark.parametrize(
    "x, want", [(0.5, 1), (-0.5, 0), (2.5, 3), (0.49999999999999994, 0), (-2.5, -2)]
)
def test_jround(x, want):
    assert jround(x) == want


@pytest.mark.parametrize(
    "x, want",
    [
        (44, "44"),
        (44.0, "44"),
        (12.5, "12.5"),
        (1e5, "100000"),
        (1e21, "1e+21"),
        (1e-7, "1e-7"),
        (1.5e-7, "1.5e-7"),
        (0.000001, "0.000001"),
        (-0.0, "0"),
        (12345678901234567890, "12345678901234567000"),
        (float("inf"), "Infinity"),
        (1e16, "10000000000000000"),
        (123.456, "123.456"),
    ],
)
def test_number_str(x, want):
    assert number_str(x) == want


def test_js_json():
    assert js_json(
        {"b": 1.0, "2": True, "a": None, "10": "x", "1": [1e400 * 0 if False else 1]}
    ) == ('{"1":[1],"2":true,"10":"x","b":1,"a":null}')
    assert js_json(float("inf")) == "null"
    assert js_json('\ud800\u2028\x7f\x01\n"') == '"\\ud800\u2028\x7f\\u0001\\n\\""'
    assert js_json("é😀") == '"é😀"'


def test_js_string_and_truthiness():
    assert [js_string(x) for x in (5, True, None, {"a": 1}, [1, None, "a"], 1.5)] == [
        "5",
        "true",
        "null",
        "[object Object]",
        "1,,a",
        "1.5",
    ]
    assert [js_truthy(x) for x in ([], {}, "0", "false", 0, "", None, False, 0.0)] == [
        True,
        True,
        True,
        True,
        False,
        False,
        False,
        False,
        False,
    ]


def test_utf16_lengths_and_slices():
    assert utf16_len("😀") == 2 and utf16_len("a—中") == 3
    cut = utf16_prefix("a😀b", 2)
    assert utf16_len(cut) == 2 and printable(cut) == "a\ufffd"
    assert rj("😀", 4) == "  😀"


def test_trim_uses_the_ecmascript_whitespace_set():
    assert js_trim("\ufeff\u00a0\u2028 x \u0085") == "x \u0085"


def test_grp_and_pct1():
    assert grp(17465) == "17,465" and pct1(17465 / 21319) == "81.9%"


def test_to_fixed_and_math_round_beyond_plain_numbers():
    import math

    assert fix(1e21, 1) == "1e+21" and fix(1e25, 3) == "1e+25" and fix(float("nan"), 1) == "NaN"
    assert math.isnan(jround(float("nan"))) and jround(float("inf")) == float("inf")


def test_js_json_converts_a_non_string_key_with_string():
    # A JavaScript object's keys are strings: an int, float or None key is written as
    # String(key), and an array-index key moves first, as JSON.stringify orders them.
    from evalkit.ecma import js_json

    value = {"b": 1, 2: "x", 1.5: True, None: 0, "0": 3}
    assert js_json(value) == '{"0":3,"2":"x","b":1,"1.5":true,"null":0}'
    assert js_json({1: [2]}, indent=1) == '{\n "1": [\n  2\n ]\n}'
