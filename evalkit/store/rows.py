"""The stored row of an analysed session: its payload's fields, declared once.

`analyse_session` (`evalkit.corpus.records`) fills a payload; the corpus store
(`evalkit.store.shards`) derives its columns and its validation from `PAYLOAD_FIELDS`; the
records read it back. Adding a per-session value means adding one `PayloadField` here (with
the check its stored value must pass), the value in `analyse_session`, and its `SessionRecord`
attribute in `record_from_payload`.
"""

from __future__ import annotations

import itertools
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["PayloadField", "PAYLOAD_FIELDS", "PAYLOAD_VERSION", "CALL_FIELDS", "STATUSES"]

# Bump when the payload's shape or meaning changes; part of every cache key.
PAYLOAD_VERSION = 14  # 2: damage line counts; 3: tool calls, skipped; 4: run figures; 5: store;
# 6: reasons in plain words; 7: other agents (agent, agent_sessions, ledger); 8: Codex rollout
# residual columns in the agent rows; 9: frame rows in frame files (`frames`), not in the row;
# 10: the tool under test by role, tool_family, run tool_names (issue 23)
# 11: other agents' trial-sweep runs (`runs`), ATIF trajectories (issue 23)
# 12: run status from the log in the frame rows, interactive logs told by content and complete
# 13: token ledgers for pricing (models rows for every agent, started_at, recorded cost; issue 27)
# 14: the reference's summed cost kept beside the priced cost_usd (cost_usd_summed)

Kind = Literal["str", "str?", "int", "bool", "str-list", "calls", "json"]


@dataclass(frozen=True)
class PayloadField:
    """One field of an analysed session's payload.

    Attributes:
        name: The payload key.
        kind: Its shape: `str`, `str?` (or None), `int`, `bool`, `str-list`, `calls` (rows of
            `CALL_FIELDS` ints) or `json` (any JSON-able value, or None: the store keeps it as
            JSON text, so ints stay ints, NaN stays NaN, and `check` says what it must hold).
        default: Its value when the payload does not hold it (a crash or skipped payload
            carries only status and reason).
        optional: Absent from a payload rather than None when there is no value (frame rows,
            the figures of an interactive session).
        check: For `json`: whether a decoded value has the field's shape.
        check_column: For `json`, optional: `check` of every value of a list at once (the same
            answer as `all(map(check, values))`, faster: the store checks a whole column).
    """

    name: str
    kind: Kind
    default: Any = None
    optional: bool = False
    check: Callable[[Any], bool] | None = None
    check_column: Callable[[list[Any]], bool] | None = None


_SCALARS = frozenset({str, int, float, bool, type(None)})


def _scalar(x: Any) -> bool:
    return x is None or type(x) in (str, int, float, bool)


def _flat_dict(x: Any) -> bool:
    """A dict of string keys and JSON scalars (the types of its keys and values looked at in
    bulk: these checks run on every stored row a warm sweep reads)."""
    return (
        type(x) is dict
        and _SCALARS.issuperset(map(type, x.values()))
        and set(map(type, x)) <= {str}
    )


def _damage_ok(v: Any) -> bool:
    # [file, what, malformed, non_object, invalid_utf8, truncated_gzip, unreadable]
    types = (str, str, int, int, int, bool)
    return type(v) is list and all(
        type(d) is list
        and len(d) == 7
        and all(type(x) is t for x, t in zip(d, types, strict=False))
        and (d[6] is None or type(d[6]) is str)
        for d in v
    )


_FIGURE_KEYS: frozenset[str] | None = None


def _figure_keys() -> frozenset[str]:
    global _FIGURE_KEYS
    if _FIGURE_KEYS is None:
        from evalkit.metrics.figures import RunFigures

        _FIGURE_KEYS = frozenset(RunFigures.__dataclass_fields__)
    return _FIGURE_KEYS


def _figures_ok(v: Any) -> bool:
    # Every figure, each a JSON scalar or a dict of them (the counts).
    if type(v) is not dict or v.keys() != _figure_keys():
        return False
    types = set(map(type, v.values()))
    if types <= _SCALARS:
        return True
    return types <= _SCALARS_OR_DICT and all(_flat_dict(x) for x in v.values() if type(x) is dict)


_SCALARS_OR_DICT = _SCALARS | {dict}


def _figures_column_ok(values: list[Any]) -> bool:
    """`_figures_ok` of every value: the keys of each, then the values figure by figure."""
    keys = _figure_keys()
    if not set(map(type, values)) <= {dict}:
        return False
    if not all(map(operator.eq, map(dict.keys, values), itertools.repeat(keys))):
        return False
    for key in keys:
        column = list(map(operator.itemgetter(key), values))
        types = set(map(type, column))
        if types <= _SCALARS:
            continue
        if not types <= _SCALARS_OR_DICT:
            return False
        nested = [x for x in column if type(x) is dict]
        chain = itertools.chain.from_iterable
        if not set(map(type, chain(map(dict.values, nested)))) <= _SCALARS:
            return False
        if not set(map(type, chain(nested))) <= {str}:
            return False
    return True


_HEX32 = re.compile(r"[0-9a-f]{32}\Z")
_FRAME = re.compile(r"[a-z_]+\Z")


def _frames_ok(v: Any) -> bool:
    # frame name → [file digest (32 hex), first row, rows > 0]
    return type(v) is dict and all(
        type(name) is str
        and _FRAME.match(name) is not None
        and type(ref) is list
        and len(ref) == 3
        and type(ref[0]) is str
        and _HEX32.match(ref[0]) is not None
        and type(ref[1]) is int
        and type(ref[2]) is int
        and ref[1] >= 0
        and ref[2] > 0
        for name, ref in v.items()
    )


_HEXES = re.compile(r"[0-9a-f]*\Z")


def _frames_column_ok(values: list[Any]) -> bool:
    """`_frames_ok` of every value, checked over the whole column at once: the frame names,
    then each part of the refs across every ref."""
    if not set(map(type, values)) <= {dict}:
        return False
    names = set(itertools.chain.from_iterable(values))
    if not all(type(n) is str and _FRAME.match(n) is not None for n in names):
        return False
    refs = list(itertools.chain.from_iterable(map(dict.values, values)))
    if not set(map(type, refs)) <= {list} or not set(map(len, refs)) <= {3}:
        return False
    hexes, firsts, counts = zip(*refs, strict=True) if refs else ((), (), ())
    if not set(map(type, hexes)) <= {str} or not set(map(len, hexes)) <= {32}:
        return False
    if _HEXES.match("".join(hexes)) is None:
        return False
    if not set(map(type, firsts)) | set(map(type, counts)) <= {int}:
        return False
    return min(firsts, default=0) >= 0 and min(counts, default=1) > 0


def _json_tree(x: Any, depth: int = 0) -> bool:
    if _scalar(x):
        return True
    if depth > 8:
        return False
    if type(x) is list:
        return all(_json_tree(y, depth + 1) for y in x)
    return type(x) is dict and all(
        type(k) is str and _json_tree(y, depth + 1) for k, y in x.items()
    )


def _run_ok(v: Any) -> bool:
    # `run_payload`: named values, the figures among them
    return (
        type(v) is dict
        and _figures_ok(v.get("figures"))
        and all(type(k) is str and _json_tree(x) for k, x in v.items())
    )


def _agent_sessions_ok(v: Any) -> bool:
    return type(v) is list and all(map(_flat_dict, v))


def _runs_ok(v: Any) -> bool:
    # `agent_payload`'s `runs`: one {log, sample, reward, passed, run} per session
    return type(v) is list and all(
        type(r) is dict
        and r.keys() == {"log", "sample", "reward", "passed", "run"}
        and type(r["log"]) is str
        and _scalar(r["sample"])
        and _scalar(r["reward"])
        and _scalar(r["passed"])
        and _run_ok(r["run"])
        for r in v
    )


def _ledger_ok(v: Any) -> bool:
    return type(v) is list and len(v) == 2 and _SCALARS.issuperset(map(type, v))


# `CallRecord`'s fields, in the order a payload row of `calls` holds them.
CALL_FIELDS = ("index", "envelope", "used", "used_path", "files", "cited_files")

PAYLOAD_FIELDS: tuple[PayloadField, ...] = (
    PayloadField("status", "str"),
    PayloadField("reason", "str?"),
    PayloadField("calls", "calls", ()),
    PayloadField("chars", "int", 0),
    PayloadField("cited_chars", "int", 0),
    PayloadField("path_chars", "int", 0),
    PayloadField("files_returned", "int", 0),
    PayloadField("files_used", "int", 0),
    PayloadField("cited_paths", "str-list", ()),
    PayloadField("has_answer", "bool", False),
    PayloadField("explore_results", "int", 0),
    PayloadField("tool_calls", "int", 0),
    PayloadField("damage", "json", [], check=_damage_ok),
    PayloadField(
        "figures",
        "json",
        None,
        optional=True,
        check=_figures_ok,
        check_column=_figures_column_ok,
    ),
    # Only with a tool profile (the trial sweep): what it keeps of the run (`run_payload`).
    PayloadField("run", "json", None, optional=True, check=_run_ok),
    # Only with `frames=True` (the corpus loader): where every frame's rows are stored
    # (`evalkit.store.frame_files`), or why they could not be built. A parse's own payload
    # holds the rows themselves (`rows`), which are stored as frame files, not in the row.
    PayloadField(
        "frames", "json", None, optional=True, check=_frames_ok, check_column=_frames_column_ok
    ),
    PayloadField("rows_error", "str?", None, optional=True),
    # Other agents (issue 15): which agent wrote the file, and a summary of each of its sessions.
    PayloadField("agent", "str?", None, optional=True),
    PayloadField("agent_sessions", "json", None, optional=True, check=_agent_sessions_ok),
    # A headless Claude Code session's (prompt_tokens, output_tokens) for the agent table.
    PayloadField("ledger", "json", None, optional=True, check=_ledger_ok),
    # With a tool profile (the trial sweep): each of an other agent's sessions' run (issue 23).
    PayloadField("runs", "json", None, optional=True, check=_runs_ok),
)
STATUSES = ("parsed", "no-explore", "crash", "skipped")
