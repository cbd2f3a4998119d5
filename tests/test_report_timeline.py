"""A session as the report's timeline (`evalkit.outputs.html.timeline`): every agent's steps,
explore sections with the allocation's verdicts, subagent threads, the answer's citations."""

from __future__ import annotations

import pytest

from evalkit.formats.common import AgentSession, AgentToolCall, TokenLedger
from evalkit.outputs.html.timeline import all_calls, clean, timeline
from evalkit.session import parse_session, read_session_file
from tests.builders import write_jsonl
from tests.report_helpers import (
    ANSWER,
    EXPLORE_FILES,
    LONG_CHARS,
    PROMPT,
    ab_run,
    build_report_corpus,
    interactive_session,
)


@pytest.fixture
def headless(tmp_path):
    return parse_session(write_jsonl(tmp_path / "run-new-1.jsonl", ab_run("new")))


def test_headless_steps_in_stream_order(headless):
    t = timeline(headless)
    kinds = [e.kind for e in t.entries]
    assert kinds == ["prompt", "text", "call", "call", "compaction", "call", "text"]
    assert t.entries[0].text == PROMPT
    assert [c.number for c in all_calls(t)] == [1, 2, 3, 4]
    assert t.calls == 4 and t.agent == "claude-code" and t.kind == "headless"


def test_subagent_thread_is_nested_under_the_call_that_started_it(headless):
    t = timeline(headless)
    agent = t.entries[3].call
    assert agent.name == "Agent"
    inner = [e.call.name for e in agent.children if e.kind == "call"]
    assert inner == ["Read"]
    assert agent.children[0].call.thread == "a1"
    assert not t.orphans


def test_explore_sections_carry_the_allocation_verdicts(headless):
    call = timeline(headless).entries[2].call
    assert call.explore == 1
    assert [s.path for s in call.sections] == [p for p, _, _ in EXPLORE_FILES]
    assert [s.via for s in call.sections] == ["path", "symbol", None]
    assert call.sections[1].symbol == "helper"
    alloc = headless.allocation.calls[0]
    assert [s.chars for s in call.sections] == [f.chars for f in alloc.files]
    assert call.cited_chars == alloc.used
    # Each section's text is its part of the result: the sections and preamble rebuild it.
    assert call.preamble + "".join(s.text for s in call.sections) == call.result


def test_answer_citations_link_to_the_sections_they_credit(headless):
    t = timeline(headless)
    linked = {p.text: p.target for p in t.answer if p.target}
    assert linked == {"src/app.js": "sec-1-1", "helper": "sec-1-2"}
    assert "".join(p.text for p in t.answer) == ANSWER
    assert ("helper", "symbol", "sec-1-2") in t.citations


def test_result_sizes_are_in_chars_and_estimated_tokens(headless):
    read = timeline(headless).entries[5].call
    assert read.result_chars == LONG_CHARS
    price = headless.occupancy.chars_per_token
    assert read.result_tokens == pytest.approx(LONG_CHARS / price)


def test_two_segments_are_marked_as_two_questions(tmp_path):
    root = build_report_corpus(tmp_path / "c")
    s = parse_session([root / "p1/ab-demo/run-new-2.jsonl", root / "p1/ab-demo/run-new-2.t2.jsonl"])
    segments = [e.text for e in timeline(s).entries if e.kind == "segment"]
    assert segments == ["question 1 (run-new-2.jsonl)", "question 2 (run-new-2.t2.jsonl)"]


def test_interactive_subagent_nests_under_its_task_call(tmp_path):
    path = interactive_session(tmp_path / "-tmp-proj")
    t = timeline(read_session_file(str(path)))
    assert t.kind == "interactive"
    task = next(e.call for e in t.entries if e.kind == "call")
    assert task.name == "Task"
    assert [e.call.name for e in task.children] == ["Grep"]
    assert t.answer[0].text == ANSWER


def test_codex_rollout_timeline(tmp_path):
    from evalkit.formats.codex.rollout import read_rollout
    from tests.agent_builders import codex_session_lines, write_rollout

    path = write_rollout(tmp_path / "rollout.jsonl", codex_session_lines())
    session = read_rollout(str(path))
    t = timeline(session)
    assert t.agent == "codex"
    names = [c.name for c in all_calls(t)]
    assert names == [c.name for c in session.tool_calls]
    assert any(e.kind == "compaction" for e in t.entries)
    assert "".join(p.text for p in t.answer) == session.final_answer


def _inspect_session() -> AgentSession:
    return AgentSession(
        agent="inspect",
        format="inspect",
        path="logs/x.eval",
        session_id="s1:1",
        model="m",
        tool_calls=(
            AgentToolCall(0, "c1", "bash", "bash", {"cmd": "ls"}, "a.py\n", False),
            AgentToolCall(1, "c2", "python", "bash", "print(1)", None, None, thread="helper"),
        ),
        final_answer="done",
        final_answer_source="the last assistant message",
        turns=1,
        aborted_turns=0,
        compactions=None,
        requests=None,
        context_window=None,
        duration_s=None,
        cost_usd=None,
        reward=1.0,
        passed=True,
        tokens=TokenLedger(),
    )


def test_inspect_session_timeline():
    t = timeline(_inspect_session(), log="logs/x.eval#s1:1")
    assert t.log == "logs/x.eval#s1:1" and t.agent == "inspect"
    assert [e.call.name for e in t.entries] == ["bash"]
    assert t.entries[0].call.input == '{\n  "cmd": "ls"\n}'
    # A call of another thread is kept, under its thread.
    assert [(thread, [e.call.name for e in es]) for thread, es in t.orphans] == [
        ("helper", ["python"])
    ]
    assert t.orphans[0][1][0].call.result is None


def test_inspect_log_read_by_inspect(tmp_path):
    pytest.importorskip("inspect_ai", reason="the inspect extra is not installed")
    from evalkit.formats.inspect.logs import read_inspect_log
    from tests.agent_builders import two_sample_log

    sessions = list(read_inspect_log(str(two_sample_log(tmp_path / "two.json"))))
    t = timeline(sessions[0])
    assert t.agent == "inspect"
    assert [c.name for c in all_calls(t)] == [c.name for c in sessions[0].tool_calls]


def test_clean_shows_bidi_controls_and_replaces_lone_surrogates():
    assert clean("a\u202eb") == "a<U+202E>b"
    assert clean("x\ud800y") == "x\ufffdy"
    assert clean(5) == "5"


def test_every_explore_call_of_the_bundled_corpus_carries_its_verdicts(tmp_path):
    import evalkit
    from evalkit.paths import bundled_corpus

    corpus = evalkit.load_corpus(bundled_corpus(), cache_dir=tmp_path / "cache", jobs=1)
    for log in corpus.sessions_df()["log"]:
        s = corpus.session(log)
        calls = [c for c in all_calls(timeline(s, log=log)) if c.explore]
        assert [c.explore for c in calls] == [a.index for a in s.allocation.calls], log
        for c, a in zip(calls, s.allocation.calls, strict=True):
            assert [(x.path, x.chars, x.via) for x in c.sections] == [
                (clean(f.path), f.chars, f.via) for f in a.files
            ], log
