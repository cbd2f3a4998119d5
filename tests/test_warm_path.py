"""The warm sweep's fast paths give what the plain rules give (issue 16, warm path).

* `ecma.js_json` writes containers of scalars in one piece and `number_str` formats plain
  floats from `repr`: checked against Node's `JSON.stringify` and `String` when `node` is on
  PATH, and against the rules written out here otherwise;
* `discover` walks with one `scandir` per directory and joins natural keys: the same keys as
  the regex-split rule, and an unlistable directory is still one entry;
* the store's side index holds JSON values as themselves, checked column by column: a value
  of the wrong shape is refused (the shard itself is then read), and an integer past 64 bits
  is read exactly (not by orjson).
"""

from __future__ import annotations

import json
import math
import os
import random
import re
import shutil
import struct
import subprocess
from decimal import Decimal

import pytest

from evalkit.corpus.discover import _joined_key, discover, natural_key
from evalkit.ecma import js_json, number_str
from evalkit.outputs.sweep_text import to_json_dict
from evalkit.store import rows as records_mod
from evalkit.store import shards as store_mod
from evalkit.tables.sweep import run_sweep
from tests.sweep_helpers import cited, put, stored_row

NODE = shutil.which("node")


# --- js_json and number_str --------------------------------------------------------------


def _random_float(rng: random.Random) -> float:
    k = rng.random()
    if k < 0.3:
        return rng.random()
    if k < 0.5:
        return float(rng.randint(-(10**6), 10**6))
    if k < 0.8:
        return rng.uniform(-1, 1) * 10 ** rng.randint(-30, 30)
    x = struct.unpack("d", struct.pack("Q", rng.getrandbits(64)))[0]
    return x if math.isfinite(x) else 0.5


_KEYS = ["a", "b", "10", "0", "01", "4294967294", "4294967295", "é", "\udcff", "log", 'x"y']
_STRINGS = ["", "x", "é\n", "\udc80", "\ud83d", "😀", "\x00\x1f\x7f", "\u2028", "a\\b"]


def _random_value(rng: random.Random, depth: int = 0):
    k = rng.random()
    if depth > 4 or k < 0.5:
        pick = rng.randrange(7)
        if pick == 0:
            return rng.choice([None, True, False])
        if pick == 1:
            return rng.choice([0, -1, 2**53 - 1, 2**53, -(2**53), 10**30, 7])
        if pick in (2, 3):
            return _random_float(rng)
        if pick == 4:
            return rng.choice([[], {}])
        return rng.choice(_STRINGS)
    if k < 0.75:
        return [_random_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return {rng.choice(_KEYS): _random_value(rng, depth + 1) for _ in range(rng.randint(0, 4))}


def _node(script: str, values: list) -> list[str]:
    data = json.dumps(values, ensure_ascii=True)
    out = subprocess.run(
        [NODE, "-e", script], input=data, capture_output=True, text=True, check=True
    ).stdout
    return json.loads(out)


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_js_json_is_json_stringify_on_random_values():
    rng = random.Random(16)
    values = [_random_value(rng) for _ in range(600)]
    script = (
        "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>{const v=JSON.parse(s);"
        "console.log(JSON.stringify(v.map(x=>[JSON.stringify(x),JSON.stringify(x,null,2)])))})"
    )
    want = _node(script, values)
    got = [[js_json(v), js_json(v, 2)] for v in values]
    assert got == want


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_number_str_is_string_of_a_number_on_random_floats():
    rng = random.Random(17)
    values = [_random_float(rng) for _ in range(3000)] + [
        0.0, -0.0, 1e21, 1e-7, 1e16, 9.999999999999999e15, 1e-6, 1e-5, 5e-324, 2.0**60,
    ]  # fmt: skip
    script = (
        "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>{"
        "console.log(JSON.stringify(JSON.parse(s).map(String)))})"
    )
    assert [number_str(x) for x in values] == _node(script, values)


def _number_str_by_digits(x: float) -> str:
    """ECMAScript Number::toString from the shortest round-trip digits (§10.2), spelled out."""
    if x == 0:
        return "0"
    sign = "-" if x < 0 else ""
    _, digits_t, exp = Decimal(repr(abs(x))).as_tuple()
    digits = "".join(map(str, digits_t)).rstrip("0") or "0"
    exp += len(digits_t) - len(digits)
    k, n = len(digits), exp + len(digits)
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * (-n) + digits
    e = n - 1
    mant = digits if k == 1 else digits[0] + "." + digits[1:]
    return f"{sign}{mant}e{'+' if e >= 0 else '-'}{abs(e)}"


def test_number_str_fast_path_agrees_with_the_digit_rule():
    rng = random.Random(18)
    for _ in range(20000):
        x = _random_float(rng)
        assert number_str(x) == _number_str_by_digits(x), x


def test_js_json_flat_containers_keep_the_rules_of_the_item_by_item_walk():
    class S(str):
        pass

    # Array-index keys first, lone surrogates escaped, non-finite numbers null, big integers
    # as doubles, subclasses and tuples as their plain kinds: in flat and nested containers.
    value = {"b": 1, "10": 2, "2": 3, "s": "\udcff", "n": math.nan, "big": 2**60, "t": (1.0,)}
    want = '{"2":3,"10":2,"b":1,"s":"\\udcff","n":null,"big":1152921504606847000,"t":[1]}'
    assert js_json(value) == want
    assert js_json([value, {S("k"): S("v")}]) == "[" + want + ',{"k":"v"}]'
    assert js_json([{"a": [], "b": {}}, []], 2) == (
        '[\n  {\n    "a": [],\n    "b": {}\n  },\n  []\n]'
    )


# --- discovery ------------------------------------------------------------------------------


def _split_key(s: str) -> tuple:
    return tuple((0, int(t), t) if t.isdecimal() else (1, 0, t) for t in re.split(r"(\d+)", s))


def test_natural_keys_and_joined_path_keys_are_the_split_rule():
    rng = random.Random(19)
    alphabet = ["a", "-", "/", ".", "0", "1", "9", "²", "١", "٠", "𝟘", "Ⅻ", "\udcff", "５"]
    for _ in range(5000):
        a = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 10)))
        b = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 10)))
        assert natural_key(a) == _split_key(a)
        assert natural_key(a) == _split_key(a)  # a second time: from the cache
        assert _joined_key(_split_key(a), _split_key(b)) == _split_key(a + "/" + b)


def test_a_directory_that_cannot_be_listed_is_one_entry_and_the_rest_is_found(
    tmp_path, monkeypatch
):
    root = tmp_path / "c"
    cited(root, "cg22/ab-express/run-new-1.jsonl", 700, 300)
    put(root, "locked/ab-x/run-new-1.jsonl")
    (root / "cg22" / "link").symlink_to(root / "locked", target_is_directory=True)
    real = os.scandir

    def scandir(path):
        if isinstance(path, str) and path.endswith("locked"):
            raise PermissionError(13, "Permission denied", path)
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    found = discover(root)
    assert [s.log for s in found.sessions] == ["cg22/ab-express/run-new-1.jsonl"]
    assert [(f.path, f.reason) for f in found.skipped] == [
        ("cg22/link/", "symbolic link to a directory, not followed"),
        ("locked/", "cannot list directory: Permission denied"),
    ]


# --- the store's side index -----------------------------------------------------------------


def _corpus(root):
    cited(root, "cg22/ab-express/run-baseline-1.jsonl", 700, 300)
    cited(root, "cg22/ab-express/run-new-1.jsonl", 900, 100, calls=2)
    put(root, "broken.jsonl", text="null\n")  # crash
    for path in root.rglob("*"):  # in the past: no row is stored as racy
        st = path.stat()
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns - 60 * 10**9))
    return root


def _figures_of(doc):
    return next(v for v in doc["columns"]["p_figures"] if v is not None)


def _drop_figure(doc):
    _figures_of(doc).pop("ctx")


def _figure_list(doc):
    _figures_of(doc)["ctx"] = [1]


def _counts_nested(doc):
    _figures_of(doc)["counts"] = {"search": [1]}


def _counts_key(doc):
    _figures_of(doc)["counts"] = {"search": 1, "": {}}


def _damage_shape(doc):
    doc["columns"]["p_damage"][0] = [["f", "what", 1, 2, 3]]


def _digest(doc):
    doc["columns"]["digests"][0] = ["x" * 64]


def _state_bool(doc):
    doc["columns"]["states"][0] = [[True, 2, 3, 4]]


def _ledger(doc):
    doc["columns"]["p_ledger"][1] = [1, [2]]


def _old_version(doc):
    doc["version"] = 1


@pytest.mark.parametrize(
    "edit",
    [
        _drop_figure,
        _figure_list,
        _counts_nested,
        _counts_key,
        _damage_shape,
        _digest,
        _state_bool,
        _ledger,
        _old_version,
    ],
)
def test_an_index_value_of_the_wrong_shape_sends_the_sweep_to_the_shard(
    tmp_path, monkeypatch, edit
):
    root = _corpus(tmp_path / "c")
    cache_dir = tmp_path / "cache"
    cold = run_sweep(root, cache_dir=cache_dir, jobs=1)
    (index,) = sorted((cache_dir / "corpus-store-v1").rglob("shard-*.index.json"))
    doc = json.loads(index.read_text())["index"]
    edit(doc)
    # With its digest made anew: the value checks themselves must refuse it.
    index.write_bytes(store_mod._frame_index(json.dumps(doc).encode()))
    _assert_the_shard_serves(root, cache_dir, cold, monkeypatch)


def _assert_the_shard_serves(root, cache_dir, cold, monkeypatch):
    """A warm sweep that reads the shard itself (not its index) and gives the cold numbers."""
    read = []
    original = store_mod.CorpusStore._parquet_rows
    monkeypatch.setattr(
        store_mod.CorpusStore,
        "_parquet_rows",
        staticmethod(lambda data: read.append(1) or original(data)),
    )
    warm = run_sweep(root, cache_dir=cache_dir, jobs=1)
    assert read, "the shard itself should have been read"
    assert (warm.cache_hits, warm.cache_misses) == (3, 0)
    assert to_json_dict(warm) == to_json_dict(cold)


def test_an_integer_past_64_bits_in_a_stored_value_is_read_exactly():
    rows = [stored_row(json.dumps([2**70, -(2**64)]).encode())]
    data = store_mod._index_doc(rows, b"shard bytes")
    assert json.loads(data)["index"]["fast"] is False  # orjson would read 2**70 as a float
    columns = store_mod._index_columns(data, b"shard bytes")
    assert columns["p_ledger"] == [[2**70, -(2**64)]]
    assert [type(x) for x in columns["p_ledger"][0]] == [int, int]
    rows[0]["p_ledger"] = b"[12, 34]"
    assert json.loads(store_mod._index_doc(rows, b"shard bytes"))["index"]["fast"] is True


def test_the_column_checks_give_the_answer_of_the_value_checks():
    from evalkit.metrics.figures import RunFigures

    rng = random.Random(20)
    base = {f: 1 for f in RunFigures.__dataclass_fields__}
    base["counts"] = {"search": 1, "sufficient": 2}
    variants = [
        base,
        {**base, "dur": 1.5, "ctx": None, "counts": {}},
        {**base, "counts": {"search": [1]}},
        {**base, "counts": {1: 1}},
        {**base, "dur": [1]},
        {**base, "dur": {"x": 1}},
        {k: v for k, v in base.items() if k != "dur"},
        {**base, "extra": 1},
        [1],
        "x",
    ]
    for f in records_mod.PAYLOAD_FIELDS:
        if f.check_column is None:
            continue
        for _ in range(300):
            column = [rng.choice(variants) for _ in range(rng.randint(0, 5))]
            assert f.check_column(column) == all(map(f.check, column)), column


def test_the_tail_is_the_lowest_of_the_whole_order_with_ties():
    from types import SimpleNamespace

    from evalkit.tables.aggregate import tail

    rng = random.Random(21)
    for _ in range(500):
        recs = [
            SimpleNamespace(
                log=f"run-{rng.randint(0, 30)}-{i}",
                efficiency=rng.choice([0.0, 0.1, 0.5, 1.0, rng.random()]),
                in_sweep=rng.random() < 0.8,
            )
            for i in range(rng.randint(0, 20))
        ]
        ordered = sorted(
            (r for r in recs if r.in_sweep), key=lambda r: (r.efficiency, natural_key(r.log))
        )
        for n in (-1, 0, 1, 3, 50):
            assert tail(recs, n) == tuple(ordered[: max(n, 0)])


def test_a_damaged_index_whose_values_still_pass_the_checks_is_a_miss(tmp_path, monkeypatch):
    # Numbers changed in place, every type still right: the index's own digest no longer
    # matches, so the shard itself is read and the numbers are the stored ones.
    root = _corpus(tmp_path / "c")
    cache_dir = tmp_path / "cache"
    cold = run_sweep(root, cache_dir=cache_dir, jobs=1)
    (index,) = sorted((cache_dir / "corpus-store-v1").rglob("shard-*.index.json"))
    framed = json.loads(index.read_text())
    framed["index"]["columns"]["p_chars"][0] += 1_000_000
    framed["index"]["columns"]["p_cited_chars"][0] += 1_000_000
    index.write_text(json.dumps(framed, separators=(",", ":")))
    assert store_mod._index_body(index.read_bytes()) is None
    _assert_the_shard_serves(root, cache_dir, cold, monkeypatch)


def test_memos_do_not_keep_long_keys_or_tool_names():
    # Bounded by size, not only by count: a log of long key or tool names leaves nothing behind.
    from evalkit import ecma
    from evalkit.formats.profiles import CODEGRAPH

    long_key = "1" + "x" * 20_000  # not an array index: the one-piece writer's path
    before = len(ecma._HEADS)
    assert ecma.js_json({long_key: 1.5}) == '{"' + long_key + '":1.5}'
    assert len(ecma._HEADS) == before
    name = "mcp__tool_" + "y" * 20_000
    family = CODEGRAPH.family(name)
    assert name not in CODEGRAPH._family_memo and CODEGRAPH.family(name) == family
    assert ecma.js_json({"a_short_key": 1}) == '{"a_short_key":1}'
    assert (("a_short_key",), "", ":") in ecma._HEADS
