"""A generator of hostile transcripts (issue 11): the families a differential and mutation
campaign found, mixed at random over an otherwise ordinary explore session.

Each session is built from the ordinary builders, then damaged by a few mutations drawn from
`MUTATIONS`. Values JSON cannot carry as Python objects (`1e400`, `NaN`, integers past 2^53 as
written) are placed as sentinel strings and substituted in the text after serialisation, so
the file holds exactly the bytes a hostile writer would produce. Everything is seeded.
"""

from __future__ import annotations

import gzip
import os
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evalkit.ecma import js_json
from tests.builders import ASST, RESULT, SUB, TEXT, USE, XRES, E, lines

# Sentinels replaced in the serialised text (the quotes included).
_RAW = {
    '"@INF@"': "1e400",
    '"@NEGINF@"': "-1e400",
    '"@NAN@"': "NaN",
    '"@BIG@"': "9007199254740993",
    '"@HUGE@"': "1" + "0" * 30,
    '"@NEGZERO@"': "-0",
}
_ODD_VALUES: list[Any] = [
    "@INF@",
    "@NEGINF@",
    "@BIG@",
    "@HUGE@",
    "@NEGZERO@",
    0,
    -1,
    5,
    "5",
    "",
    None,
    True,
    [],
    {},
    ["codegraph"],
    {"x": 1},
    "\ud800",
    "\udfff tail",
    "a\u2028b\u0085c",
]
_ODD_TOKENS: list[Any] = ["@INF@", "@BIG@", "@HUGE@", "@NEGZERO@", 0, "7", "abc", None, True]


def _nested(depth: int, leaf: Any = "x") -> Any:
    value: Any = leaf
    for i in range(depth):
        value = [value] if i % 2 else {"k": value}
    return value


def base_session(rng: random.Random) -> list[dict[str, Any]]:
    """An ordinary session: explores (some in a subagent), a read, a bash call, the answer."""
    paths = [f"src/m{rng.randrange(9)}.ts" for _ in range(rng.randint(1, 3))]
    events = lines(
        [{"type": "system", "subtype": "init", "tools": ["Read", E]}],
        ASST(1000, "m1", [TEXT("looking"), USE("x1", E, {"query": "how does auth work"})]),
        XRES("x1", paths),
        ASST(2000, "m2", [USE("r1", "Read", {"file_path": paths[0]})]),
        [
            {
                "type": "user",
                "message": {
                    "content": [{"type": "tool_result", "tool_use_id": "r1", "content": "y" * 900}]
                },
            }
        ],
        ASST(3000, "m3", [USE("t1", "Task", {"description": "dig"})]),
        SUB("t1", ASST(3100, "s1", [USE("x2", E, {"query": "sub query"})])),
        SUB("t1", XRES("x2", paths[-1:])),
        SUB("t1", ASST(3200, "s2", [USE("b1", "Bash", {"command": f"cat {paths[-1]}"})])),
        ASST(4000, "m4", [TEXT(f"The answer is in `{paths[0]}`.")]),
        RESULT(f"The answer is in `{paths[0]}`."),
    )
    return events


def _messages(events):
    return [e for e in events if isinstance(e.get("message"), dict)]


def _blocks(events):
    out = []
    for e in _messages(events):
        content = e["message"].get("content")
        if isinstance(content, list):
            out.extend(b for b in content if isinstance(b, dict))
    return out


def _pick(rng, items):
    return items[rng.randrange(len(items))] if items else None


def m_usage(rng, events):
    """A usage count that is infinite, huge, past 2^53 or negative zero."""
    target = _pick(rng, [e for e in _messages(events) if "usage" in e["message"]])
    if target:
        field = rng.choice(["input_tokens", "cache_read_input_tokens", "output_tokens"])
        target["message"]["usage"][field] = rng.choice(_ODD_TOKENS[:5])


def m_result_numbers(rng, events):
    """duration, cost and result usage with non-finite or huge values."""
    for e in events:
        if e.get("type") == "result":
            e[rng.choice(["duration_ms", "total_cost_usd"])] = rng.choice(_ODD_TOKENS[:5])
            e["usage"] = {"input_tokens": rng.choice(_ODD_TOKENS[:5]), "output_tokens": 2}


def m_names(rng, events):
    """A tool name that is not a string, or missing."""
    block = _pick(rng, [b for b in _blocks(events) if b.get("type") == "tool_use"])
    if block:
        if rng.random() < 0.3:
            block.pop("name", None)
        else:
            block["name"] = rng.choice(_ODD_VALUES)


def m_ids(rng, events):
    """Tool ids and tool_use_ids of odd types (numbers, objects, lone surrogates)."""
    for b in _blocks(events):
        if rng.random() < 0.4:
            key = "id" if b.get("type") == "tool_use" else "tool_use_id"
            if key in b:
                b[key] = rng.choice(_ODD_VALUES)


def m_threads(rng, events):
    """parent_tool_use_id of odd types: 5 vs "5", objects, empty strings."""
    value = rng.choice(_ODD_VALUES)
    for e in events:
        if "parent_tool_use_id" in e or rng.random() < 0.2:
            e["parent_tool_use_id"] = value


def m_surrogates(rng, events):
    """Lone surrogates in a query, a path, a text and a message id."""
    for b in _blocks(events):
        if b.get("type") == "tool_use" and isinstance(b.get("input"), dict):
            b["input"]["query"] = "q \ud83d end"
            if "file_path" in b["input"]:
                b["input"]["file_path"] = "src/\udc80.ts"
        if b.get("type") == "text":
            b["text"] = "answer \udbff"
    m = _pick(rng, _messages(events))
    if m and m.get("type") == "assistant":
        m["message"]["id"] = "\udc00"


def m_deep(rng, events):
    """Tool input or result content nested 300 to 1,100 levels deep."""
    depth = rng.randint(300, 1100)
    block = _pick(rng, [b for b in _blocks(events) if b.get("type") in ("tool_use", "tool_result")])
    if block is not None:
        key = "input" if block.get("type") == "tool_use" else "content"
        block[key] = [_nested(depth)] if key == "content" else {"query": _nested(depth)}


def m_content(rng, events):
    """Message content of the wrong type (string, number, object, null elements)."""
    e = _pick(rng, _messages(events))
    if e:
        e["message"]["content"] = rng.choice(["text", 3, {"a": 1}, [None], "", [], True])


def m_odd_text(rng, events):
    """text/thinking fields that are numbers, arrays or objects."""
    for b in _blocks(events):
        if b.get("type") == "text" and rng.random() < 0.5:
            b["text"] = rng.choice([5, ["a", "b"], {"t": 1}, True, None])


def m_strings_in_usage(rng, events):
    """A usage count that is text (the reference concatenates; evalkit stops with an error)."""
    target = _pick(rng, [e for e in _messages(events) if "usage" in e["message"]])
    if target and rng.random() < 0.3:  # rare: it stops the whole session
        target["message"]["usage"]["input_tokens"] = "12"


MUTATIONS: tuple[Callable[[random.Random, list[dict[str, Any]]], None], ...] = (
    m_usage,
    m_result_numbers,
    m_names,
    m_ids,
    m_threads,
    m_surrogates,
    m_deep,
    m_content,
    m_odd_text,
    m_strings_in_usage,
)


def _line_damage(rng: random.Random, raw: list[bytes]) -> list[bytes]:
    """Damage at the byte level: invalid UTF-8, a BOM, NaN, null lines, cut lines, CRs."""
    out = list(raw)
    for _ in range(rng.randint(0, 3)):
        kind = rng.randrange(7)
        i = rng.randrange(len(out))
        if kind == 0:
            out[i] = out[i][: len(out[i]) // 2]  # a cut line
        elif kind == 1:
            out[i] = out[i].replace(b'"', b'"\xff\xfe', 1)  # invalid UTF-8 inside a string
        elif kind == 2:
            out[0] = b"\xef\xbb\xbf" + out[0]  # a byte-order mark
        elif kind == 3:
            out.insert(i, b'{"type":"assistant","x":NaN}')
        elif kind == 4:
            out.insert(i, rng.choice([b"null", b"0", b'""', b"[]", b"false"]))
        elif kind == 5:
            out[i] = out[i] + b"\r"
        else:
            out.insert(i, b"")
    return out


def hostile_session(rng: random.Random) -> bytes:
    """The bytes of one hostile transcript."""
    events = base_session(rng)
    for mutation in rng.sample(MUTATIONS, rng.randint(1, 4)):
        mutation(rng, events)
    raw = []
    for e in events:
        text = js_json(e)
        for sentinel, literal in _RAW.items():
            text = text.replace(sentinel, literal)
        raw.append(text.encode("utf-8"))
    return b"\n".join(_line_damage(rng, raw)) + b"\n"


_NAMES = ["run-new-{i}", "run-baseline-{i}", "run-new-\n{i}", "run-new-\x1b[2J{i}", "r\u2028{i}"]


def write_hostile_corpus(root: Path, n: int, seed: int) -> list[Path]:
    """`n` hostile sessions under `root`, some gzipped (some of those cut short), some with
    names that hold line breaks, control characters or bytes that are not UTF-8."""
    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(n):
        data = hostile_session(rng)
        stem = rng.choice(_NAMES).format(i=i)
        if rng.random() < 0.1:
            name = stem.encode() + b"-\xff.jsonl"
            path = Path(os.fsdecode(bytes(root) + b"/" + name))
            path.write_bytes(data)
        elif rng.random() < 0.1:
            path = root / f"{stem}.jsonl.gz"
            packed = gzip.compress(data)
            path.write_bytes(packed[: len(packed) - rng.randrange(2) * 7])
        else:
            path = root / f"{stem}.jsonl"
            path.write_bytes(data)
        paths.append(path)
    return paths


# --- issue 21: a `type` that is not text, and deep nesting in every position -----------------

_NON_STRING_TYPES: list[Any] = [[], {}, ["assistant"], {"type": "user"}, 5, 1.5, True, False]


def _dicts(value: Any, out: list[dict[str, Any]], depth: int = 0) -> list[dict[str, Any]]:
    """Every dict inside `value` (shallow documents only: depth-bounded)."""
    if depth > 40:
        return out
    if isinstance(value, dict):
        out.append(value)
        for v in value.values():
            _dicts(v, out, depth + 1)
    elif isinstance(value, list):
        for v in value:
            _dicts(v, out, depth + 1)
    return out


def set_odd_type(rng: random.Random, value: Any) -> None:
    """Give one object inside `value` (an event, a block, a payload, an item) a `type` that is
    not text, or a `type` where it had none."""
    found = [d for d in _dicts(value, []) if "type" in d] or _dicts(value, [])
    if found:
        rng.choice(found)["type"] = rng.choice(_NON_STRING_TYPES)


def set_deep(rng: random.Random, value: Any, lo: int = 300, hi: int = 1100) -> None:
    """Put a value nested `lo` to `hi` levels deep in any position of one object inside
    `value`: in place of one of its values, or under a key of its own."""
    found = _dicts(value, [])
    if not found:
        return
    target = rng.choice(found)
    keys = [*target, "extra"]
    target[rng.choice(keys)] = _nested(rng.randint(lo, hi), rng.choice(["x", 1, None, {}]))


def m_types(rng, events):
    """A `type` that is not text: of an event, a message, a content block (never of all)."""
    for _ in range(rng.randint(1, 3)):
        set_odd_type(rng, rng.choice(events[1:]) if len(events) > 1 else events[0])


def m_deep_anywhere(rng, events):
    """A value nested 300 to 1,100 levels deep in any position of any event."""
    set_deep(rng, rng.choice(events))


MUTATIONS = (*MUTATIONS, m_types, m_deep_anywhere)


def _serialise(records: list[Any]) -> list[bytes]:
    out = []
    for r in records:
        text = js_json(r)
        for sentinel, literal in _RAW.items():
            text = text.replace(sentinel, literal)
        out.append(text.encode("utf-8"))
    return out


def _deep_text(rng: random.Random) -> str:
    """JSON text nested deeper than a parser goes, as a string field would hold it."""
    depth = rng.randint(900, 1500)
    return '{"output":' + "[" * depth + "]" * depth + "}"


def hostile_rollout(rng: random.Random) -> bytes:
    """The bytes of one hostile Codex rollout: the acceptance session with lines of odd types,
    values nested deeply anywhere (and in the JSON text of arguments and outputs), and damaged
    bytes."""
    from tests.agent_builders import codex_session_lines

    records = [
        {"timestamp": f"2030-01-01T10:00:{i % 60:02d}.000Z", **line}
        for i, line in enumerate(codex_session_lines())
    ]
    for _ in range(rng.randint(1, 4)):
        kind = rng.randrange(4)
        target = rng.choice(records[1:])
        if kind == 0:
            set_odd_type(rng, target)
        elif kind == 1:
            set_deep(rng, target)
        elif kind == 2:
            payload = target.get("payload")
            if isinstance(payload, dict):
                payload[rng.choice(["arguments", "output", "input"])] = _deep_text(rng)
        else:
            records.insert(rng.randrange(1, len(records)), rng.choice(_ODD_VALUES))
    return b"\n".join(_line_damage(rng, _serialise(records))) + b"\n"


def hostile_exec_stream(rng: random.Random) -> bytes:
    """The bytes of one hostile `codex exec --json` capture (as `hostile_rollout`)."""
    from tests.agent_builders import exec_stream_events

    records = exec_stream_events()
    for _ in range(rng.randint(1, 4)):
        target = rng.choice(records[1:])
        kind = rng.randrange(3)
        if kind == 0:
            set_odd_type(rng, target)
        elif kind == 1:
            set_deep(rng, target)
        else:
            item = target.get("item")
            if isinstance(item, dict):
                item[rng.choice(["aggregated_output", "arguments", "text"])] = _deep_text(rng)
    return b"\n".join(_line_damage(rng, _serialise(records))) + b"\n"


def hostile_inspect_logs(root: Path, n: int, seed: int) -> list[Path]:
    """`n` hostile Inspect AI `.json` logs (odd types and deep values anywhere in the log),
    made from one log written by Inspect; none when Inspect is not installed."""
    from evalkit.formats.inspect.logs import inspect_available

    if not inspect_available():
        return []
    import json

    from tests.agent_builders import two_sample_log

    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    base = json.loads(two_sample_log(root / "base.json").read_text(encoding="utf-8"))
    (root / "base.json").unlink()
    paths = []
    for i in range(n):
        doc = json.loads(json.dumps(base))
        samples = doc.get("samples") or [doc]
        for _ in range(rng.randint(1, 3)):
            (set_odd_type if rng.random() < 0.5 else set_deep)(rng, rng.choice(samples))
        path = root / f"inspect-{i}.json"
        path.write_text(js_json(doc), encoding="utf-8")
        paths.append(path)
    return paths


def write_hostile_agents(root: Path, n: int, seed: int) -> list[Path]:
    """`n` hostile Codex rollouts and `n` hostile `exec --json` captures under `root`, and a
    few hostile Inspect logs (issue 21: every reader)."""
    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(n):
        path = root / f"rollout-2030-01-01T10-00-{i:02d}-{i:08d}.jsonl"
        path.write_bytes(hostile_rollout(rng))
        paths.append(path)
        path = root / f"exec-{i}.jsonl"
        path.write_bytes(hostile_exec_stream(rng))
        paths.append(path)
    return paths + hostile_inspect_logs(root / "inspect", max(1, n // 6), seed)
