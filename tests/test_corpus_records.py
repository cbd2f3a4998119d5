"""Analysing one session into its record (evalkit/sweep/records.py, spec §8.2 steps 1–2)."""

from __future__ import annotations

from evalkit.corpus.discover import discover
from evalkit.corpus.records import NO_EXPLORE, analyse_session, record_from_payload
from evalkit.session import parse_session
from tests.builders import ASST, RESULT, TEXT, USE, E, _result_event, alloc_text, lines
from tests.sweep_helpers import cited, explore_session, put


def test_record_numbers_are_the_session_allocation(tmp_path):
    cited(tmp_path, "a/run-x.jsonl", 700, 300, calls=2)
    cited(tmp_path, "a/run-x.t2.jsonl", 100, 900)
    (ref,) = discover(tmp_path).sessions
    r = record_from_payload(ref, analyse_session(str(tmp_path), ref.segments, ref.log))
    a = parse_session([tmp_path / s for s in ref.segments]).allocation
    assert r.status == "parsed" and r.reason is None and r.in_sweep
    assert (r.chars, r.cited_chars, r.path_chars) == (a.envelope, a.used, a.used_path)
    assert r.efficiency == a.efficiency and r.path_efficiency == a.efficiency_path
    assert [(c.envelope, c.used, c.files, c.cited_files) for c in r.calls] == [
        (c.envelope, c.used, len(c.files), c.cited_files) for c in a.calls
    ]
    assert r.sections == a.sections == 6 and r.files_returned == 2 and r.files_used == 1
    assert r.cited_paths == ("lib/a.js",) and r.multi_turn


def test_errored_and_sectionless_explores_are_not_allocation_calls(tmp_path):
    events = lines(
        ASST(10, "m1", [USE("x1", E, {"query": "q"})]),
        _result_event("x1", alloc_text([("lib/a.js", "f(function)", 50)]), error=True),
        ASST(10, "m2", [USE("x2", E, {"query": "q"})]),
        _result_event("x2", "no sections here"),
        ASST(10, "m3", [TEXT("lib/a.js")]),
        RESULT("lib/a.js"),
    )
    put(tmp_path, "s.jsonl", events)
    payload = analyse_session(str(tmp_path), ("s.jsonl",), "s.jsonl")
    assert payload["status"] == "no-explore" and payload["reason"] == NO_EXPLORE
    assert payload["explore_results"] == 1 and payload["calls"] == []


def test_a_parse_that_raises_is_a_crash_with_its_reason(tmp_path):
    put(tmp_path, "ok.jsonl", explore_session([("lib/a.js", "f(function)", 9)], "x"))
    put(tmp_path, "ok.t2.jsonl", text='{"type":"system"}\nnull\n')
    payload = analyse_session(str(tmp_path), ("ok.jsonl", "ok.t2.jsonl"), "ok.jsonl")
    assert payload == {
        "status": "crash",
        "reason": "ok.t2.jsonl:2: line is JSON null (the reference harness crashes here)",
    }
    missing = analyse_session(str(tmp_path), ("gone.jsonl",), "gone.jsonl")
    assert missing["status"] == "crash" and missing["reason"].startswith("gone.jsonl: ")


def test_zero_padded_index_is_reported_as_a_crash(tmp_path):
    cited(tmp_path, "ab-x/run-new-01.jsonl", 10, 10)
    (ref,) = discover(tmp_path).sessions
    r = record_from_payload(ref, analyse_session(str(tmp_path), ref.segments, ref.log, ref.problem))
    assert r.status == "crash" and "zero-padded" in r.reason


def test_interactive_session_merges_its_subagents(tmp_path):
    # The explore call happens in a subagent; the answer is the main thread's last text (§1.10).
    put(
        tmp_path,
        "proj/s1.jsonl",
        lines(
            ASST(10, "m1", [USE("task1", "Task", {})]), ASST(10, "m2", [TEXT("See `lib/a.js`.")])
        ),
    )
    put(
        tmp_path,
        "proj/s1/subagents/agent-1.jsonl",
        explore_session([("lib/a.js", "f(function)", 40), ("lib/b.js", "g(function)", 40)], None)[
            :-1
        ],
    )
    put(tmp_path, "proj/s1/subagents/agent-1.meta.json", text='{"toolUseId": "task1"}')
    (ref,) = discover(tmp_path).sessions
    assert ref.layout == "interactive"
    payload = analyse_session(str(tmp_path), ref.segments, ref.log, None, True)
    assert payload["status"] == "parsed"
    assert payload["cited_paths"] == ["lib/a.js"] and payload["files_returned"] == 2


def test_load_session_reads_an_interactive_log_as_the_sweep_did(tmp_path):
    import json

    from evalkit.tables.sweep import load_session, run_sweep
    from tests.builders import ASST, TEXT, USE, XRES, E, lines, write_jsonl

    log_dir = tmp_path / "-private-tmp-proj"
    subagents = log_dir / "abc" / "subagents"
    subagents.mkdir(parents=True)
    write_jsonl(
        log_dir / "abc.jsonl",
        lines(
            ASST(
                10, "m1", [USE("a1", "Task", {"subagent_type": "Explore", "description": "look"})]
            ),
            ASST(20, "m2", [TEXT("It is in `lib/a.js`.")]),
        ),
    )
    # The explore call happens in the subagent's own file, as interactive logs store it.
    write_jsonl(
        subagents / "agent-1.jsonl",
        lines(ASST(5, "s1", [USE("e1", E, {"query": "q"})]), XRES("e1", ["lib/a.js", "lib/b.js"])),
    )
    (subagents / "agent-1.meta.json").write_text(json.dumps({"toolUseId": "a1"}))
    result = run_sweep(tmp_path, cache=False, jobs=1)
    record = result.record("-private-tmp-proj/abc.jsonl")
    session = load_session(tmp_path, "-private-tmp-proj/abc.jsonl")
    assert record.chars > 0 and record.layout == "interactive"
    assert (session.allocation.used, session.allocation.envelope) == (
        record.cited_chars,
        record.chars,
    )
    assert result.session(record.log).allocation.envelope == record.chars


def test_damaged_interactive_logs_are_reported(tmp_path):
    from evalkit.tables.sweep import run_sweep
    from tests.builders import ASST, TEXT, USE, XRES, E, lines, write_jsonl

    log_dir = tmp_path / "-private-tmp-proj"
    log_dir.mkdir()
    path = write_jsonl(
        log_dir / "abc.jsonl",
        lines(
            ASST(10, "m1", [USE("e1", E, {"query": "q"})]),
            XRES("e1", ["lib/a.js"]),
            ASST(20, "m2", [TEXT("It is in `lib/a.js`.")]),
        ),
    )
    path.write_bytes(path.read_bytes() + b'{"type": "assis')
    record = run_sweep(tmp_path, cache=False, jobs=1).record("-private-tmp-proj/abc.jsonl")
    assert record.damage == (("-private-tmp-proj/abc.jsonl", "1 malformed line skipped"),)


def test_a_session_only_a_later_metric_crashes_on_is_a_crash_in_the_sweep(tmp_path):
    # §8.2: a session whose parse raises is a crash, whichever metric raises. The sweep reads
    # only allocation numbers, but computing less must never turn a crash into a parsed row.
    import pytest

    from evalkit.errors import TranscriptError

    good = explore_session([("lib/a.js", "f(function)", 40)], "It is in `lib/a.js`.")
    cases = {
        # occupancy: an assistant content that is a number (§9.1 case 4)
        "occupancy.jsonl": good[:-1]
        + [{"type": "assistant", "message": {"content": 5}}]
        + good[-1:],
        # summary: system/init tools truthy but not an array (§9.1 case 5)
        "summary.jsonl": [{"type": "system", "subtype": "init", "tools": "x"}] + good,
        # sufficiency: a non-string codegraph tool name judged as a reaction (§9.1 case 7)
        "sufficiency.jsonl": good[:-1] + ASST(10, "m9", [USE("z", ["codegraph"], {})]) + good[-1:],
    }
    from evalkit.formats.claude_code.transcripts import explore_texts, read_transcript
    from evalkit.metrics.allocation import compute_allocation
    from evalkit.metrics.answer import final_answer

    for name, events in cases.items():
        put(tmp_path, name, events)
        kept = read_transcript(tmp_path / name).events  # allocation alone does not raise
        compute_allocation(explore_texts(kept), final_answer(kept).text)
        with pytest.raises(TranscriptError):
            parse_session([tmp_path / name])
        payload = analyse_session(str(tmp_path), (name,), name)
        assert payload["status"] == "crash", name


def test_a_run_that_stores_nothing_gets_the_same_payloads_without_hashing(tmp_path, monkeypatch):
    # Issue 26: with no store, no manifest is made and no byte is hashed; every payload (the
    # crash and the skipped ones too) is the one the stored run gets.
    from evalkit.corpus import records
    from evalkit.formats import files

    cited(tmp_path, "a/run-x.jsonl", 700, 300, calls=2)
    cited(tmp_path, "a/run-x.t2.jsonl", 100, 900)
    cited(tmp_path, "b/run-y.jsonl", 50, 50)
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "run-z.jsonl").write_bytes(b'{"type": "user"}\nnull\n')
    (tmp_path / "d.jsonl").write_bytes(b"not json\n")
    refs = discover(tmp_path).sessions
    stored = records.analyse_chunk(str(tmp_path), refs)
    assert all(m is not None for _, m in stored[:2])

    def no_hashing(data):
        raise AssertionError("a run that stores nothing hashed a file")

    monkeypatch.setattr(files, "content_digest", no_hashing)
    monkeypatch.setattr(records, "regular_file_digest", no_hashing)
    bare = records.analyse_chunk(str(tmp_path), refs, manifests=False)
    assert [p for p, _ in bare] == [p for p, _ in stored]
    assert all(m is None for _, m in bare)
    assert {p["status"] for p, _ in bare} >= {"parsed", "crash"}


def test_the_sweep_leaves_out_only_the_read_allocation(tmp_path):
    from evalkit.formats.claude_code.transcripts import read_transcript
    from evalkit.session import session_from_transcript

    cited(tmp_path, "a/run-x.jsonl", 700, 300, calls=2)
    t = read_transcript([tmp_path / "a" / "run-x.jsonl"])
    full = session_from_transcript(t)
    bare = session_from_transcript(t, read_allocation=False)
    assert full.read_allocation is not None and bare.read_allocation is None
    assert bare.summary == full.summary and bare.occupancy == full.occupancy
    assert bare.sufficiency == full.sufficiency and bare.allocation == full.allocation
    assert bare.figures == full.figures
