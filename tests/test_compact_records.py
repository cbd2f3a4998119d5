"""The sweep's records in their compact form (issue 16, bounded memory): slotted records, shared
strings, each payload turned into its record as its chunk arrives. `SweepResult.records` holds
exactly what a record built field by field from the session's payload holds."""

from __future__ import annotations

import dataclasses

import pytest

from evalkit.corpus.discover import discover
from evalkit.corpus.parse import analyse_payloads
from evalkit.corpus.records import (
    CallRecord,
    FileDamage,
    SessionRecord,
    analyse_session,
)
from evalkit.metrics.figures import RunFigures
from evalkit.tables.sweep import run_sweep
from tests.sweep_helpers import cited, put


def corpus(root):
    for i in range(1, 5):
        cited(root, f"cg22/ab-express/run-new-{i}.jsonl", 100 * i, 300, calls=1 + i % 2)
        cited(root, f"cg22/ab-express/run-baseline-{i}.jsonl", 50 * i, 500)
    cited(root, "multi/run-a.jsonl", 500, 500)
    cited(root, "multi/run-a.t2.jsonl", 200, 800)
    put(root, "cg22/ab-express/run-new-9.jsonl")  # no explore
    put(root, "cg22/ab-express/run-new-8.jsonl")  # no explore
    put(root, "broken.jsonl", text="null\n")  # a crash
    put(root, "notes.jsonl", text='{"type":"system"}\nnot json\n')  # damage: a skipped line
    return root


def record_the_plain_way(ref, payload):
    """A record as `record_from_payload` built it before the compact form: each field straight
    from the payload, nothing shared, RunFigures from its dict."""
    figures = payload.get("figures")
    return {
        "log": ref.log,
        "segments": ref.segments,
        "pass_": ref.pass_,
        "repo": ref.repo,
        "arm": ref.arm,
        "run": ref.run,
        "layout": ref.layout,
        "suite": ref.suite,
        "task": ref.task,
        "trial": ref.trial,
        "status": payload["status"],
        "reason": payload.get("reason"),
        "calls": tuple(CallRecord(*c) for c in payload.get("calls", ())),
        "chars": payload.get("chars", 0),
        "cited_chars": payload.get("cited_chars", 0),
        "path_chars": payload.get("path_chars", 0),
        "files_returned": payload.get("files_returned", 0),
        "files_used": payload.get("files_used", 0),
        "cited_paths": tuple(payload.get("cited_paths", ())),
        "has_answer": payload.get("has_answer", False),
        "explore_results": payload.get("explore_results", 0),
        "tool_calls": payload.get("tool_calls", 0),
        "damage": tuple((d[0], d[1]) for d in payload.get("damage", ())),
        "damage_counts": tuple(FileDamage(*d) for d in payload.get("damage", ())),
        "subagents": ref.subagents,
        "figures": {f: figures[f] for f in RunFigures.__dataclass_fields__} if figures else None,
        "agent": payload.get("agent", "claude-code"),
        "agent_sessions": tuple(payload.get("agent_sessions", ())),
        "ledger": tuple(payload["ledger"]) if payload.get("ledger") else None,
    }


def fields_of(record: SessionRecord) -> dict:
    got = {f.name: getattr(record, f.name) for f in dataclasses.fields(SessionRecord)}
    fig = record.figures
    got["figures"] = None if fig is None else {f: getattr(fig, f) for f in fig.__dataclass_fields__}
    return got


def same(a, b) -> bool:
    """Equal, and of the same types all the way down (an int stays an int, a bool a bool)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, tuple | list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


@pytest.mark.parametrize("how", ["serial", "parallel", "warm"])
def test_sweep_records_hold_what_the_plain_records_hold(tmp_path, how, workers):
    root = corpus(tmp_path / "c")
    cache_dir = tmp_path / "cache"
    if how == "warm":
        run_sweep(root, cache_dir=cache_dir, jobs=1)
    result = run_sweep(
        root, cache=how == "warm", cache_dir=cache_dir, jobs=2 if how == "parallel" else 1
    )
    if how == "warm":
        assert result.cache_misses == 0
    refs = discover(root).sessions
    assert len(result.records) == len(refs) == 13
    statuses = set()
    for ref, record in zip(refs, result.records, strict=True):
        payload = analyse_session(str(root), ref.segments, ref.log, ref.problem)
        want = record_the_plain_way(ref, payload)
        got = fields_of(record)
        assert got.keys() == want.keys()
        for name in want:
            assert same(got[name], want[name]), (ref.log, name)
        statuses.add(record.status)
    assert statuses == {"parsed", "no-explore", "crash"}
    assert any(r.damage_counts for r in result.records)


@pytest.fixture
def workers(monkeypatch):
    """`jobs=2` parses in a worker process even for a small corpus (payloads are pickled)."""
    from evalkit.corpus import parse

    monkeypatch.setattr(parse, "_MIN_PARALLEL_BYTES", 0)


def test_repeated_strings_are_one_object(tmp_path, workers):
    root = corpus(tmp_path / "c")
    records = run_sweep(root, cache=False, jobs=2).records
    no_explore = [r for r in records if r.status == "no-explore"]
    assert len(no_explore) == 3 and all(r.reason is no_explore[0].reason for r in no_explore)
    parsed = [r for r in records if r.status == "parsed"]
    assert len(parsed) > 2 and all(r.status is parsed[0].status for r in parsed)
    paths = [p for r in records for p in r.cited_paths]
    assert len(paths) > 2 and all(p is paths[0] for p in paths)  # every session cites lib/a.js


def test_records_are_slotted_and_keep_their_behaviour(tmp_path):
    root = corpus(tmp_path / "c")
    r = next(r for r in run_sweep(root, cache=False, jobs=1).records if r.in_sweep)
    for obj in (r, r.calls[0], r.figures):
        assert not hasattr(obj, "__dict__")
        with pytest.raises(dataclasses.FrozenInstanceError):
            obj.__setattr__(dataclasses.fields(obj)[0].name, None)
    assert dataclasses.replace(r, chars=1).chars == 1 and r.chars != 1
    assert r.efficiency == r.cited_chars / r.chars and r.calls[0].efficiency > 0
    import pickle

    assert pickle.loads(pickle.dumps(r)) == r
    assert pickle.loads(pickle.dumps(r.figures)) == r.figures


def test_analyse_payloads_keeps_what_keep_returns_in_ref_order(tmp_path, workers):
    root = corpus(tmp_path / "c")
    refs = discover(root).sessions
    seen = []

    def keep(ref, payload):
        seen.append(ref.log)
        return (ref.log, payload["status"])

    kept = analyse_payloads(root, refs, jobs=2, keep=keep)
    plain = analyse_payloads(root, refs)
    assert kept == [(r.log, p["status"]) for r, p in zip(refs, plain, strict=True)]
    assert sorted(seen) == sorted(r.log for r in refs)  # once each, as its chunk arrived
