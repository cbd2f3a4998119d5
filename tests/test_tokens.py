"""Claude Code tokens and cost (evalkit.metrics.tokens; agent-formats §5.3)."""

from __future__ import annotations

from evalkit.metrics.tokens import claude_code_tokens
from evalkit.session import parse_session
from tests.builders import SUB, TEXT, USE, lines, write_jsonl


def msg(mid, blocks, *, inp=0, read=0, write=0, out=1, model="m-main"):
    """One assistant message, one event per block, all with the same id and usage."""
    usage = {
        "input_tokens": inp,
        "cache_read_input_tokens": read,
        "cache_creation_input_tokens": write,
        "output_tokens": out,
    }
    return [
        {
            "type": "assistant",
            "message": {"id": mid, "model": model, "content": [b], "usage": usage},
        }
        for b in blocks
    ]


def result(*, cost=0.5, out=100, model_usage=None, **extra):
    event = {
        "type": "result",
        "subtype": "success",
        "duration_ms": 1000,
        "duration_api_ms": 800,
        "num_turns": 2,
        "total_cost_usd": cost,
        "usage": {"input_tokens": 1, "output_tokens": out},
        "result": "done",
        **extra,
    }
    if model_usage is not None:
        event["modelUsage"] = model_usage
    return [event]


def mu(inp, out, read, write, cost, window=200000):
    return {
        "inputTokens": inp,
        "outputTokens": out,
        "cacheReadInputTokens": read,
        "cacheCreationInputTokens": write,
        "webSearchRequests": 0,
        "costUSD": cost,
        "contextWindow": window,
        "maxOutputTokens": 32000,
    }


def test_a_message_is_counted_once_however_many_block_events_it_has():
    events = lines(
        msg("m1", [TEXT("a"), TEXT("b"), USE("t1", "Read")], inp=10, read=1000, write=200, out=3),
        msg("m2", [TEXT("c")], inp=5, read=1200, write=0, out=2),
        result(),
    )
    t = claude_code_tokens(events)
    assert t.requests == 2
    assert t.ledger.prompt_tokens == 10 + 1000 + 200 + 5 + 1200
    assert t.ledger.cache_read_tokens == 2200
    assert t.ledger.cache_write_tokens == 200
    assert t.ledger.uncached_prompt_tokens == 215
    # per-message output tokens are snapshots: the result's output is the session's
    assert t.ledger.output_tokens == 100
    assert t.ledger.reasoning_tokens is None
    assert t.repeated_ids == 0


def test_a_resumed_segment_that_repeats_an_id_is_not_counted_twice(tmp_path):
    seg1 = lines(msg("m1", [TEXT("a")], inp=10, read=100), result(cost=0.2))
    seg2 = lines(
        msg("m1", [TEXT("a")], inp=10, read=100),  # repeated by the resume
        msg("m2", [TEXT("b")], inp=20, read=300),
        result(cost=0.3),
    )
    a = write_jsonl(tmp_path / "run-x.jsonl", seg1)
    b = write_jsonl(tmp_path / "run-x.t2.jsonl", seg2)
    t = parse_session([a, b]).tokens
    assert t.requests == 2 and t.repeated_ids == 1
    assert t.ledger.prompt_tokens == 110 + 320
    assert t.num_turns == 4 and t.duration_api_ms == 1600
    assert t.cost_sum == 0.5 and t.cost_last == 0.3
    assert not t.cumulative and t.cost == 0.5


def test_model_usage_with_two_models():
    events = lines(
        msg("m1", [TEXT("a")], inp=10, read=1000, write=100),
        result(
            cost=0.75,
            model_usage={
                "big-model": mu(30, 400, 3000, 500, 0.7, window=1_000_000),
                "small-model": mu(200, 50, 0, 0, 0.05),
            },
        ),
    )
    t = claude_code_tokens(events)
    assert [m.model for m in t.models] == ["big-model", "small-model"]
    big, small = t.models
    assert (big.input_tokens, big.output_tokens, big.cache_read_tokens) == (30, 400, 3000)
    assert (big.cache_creation_tokens, big.cost_usd, big.context_window) == (500, 0.7, 1_000_000)
    assert small.prompt_tokens == 200
    # output from modelUsage (every model call), not from result.usage (main loop only)
    assert t.ledger.output_tokens == 450
    assert t.context_window == 1_000_000  # the window of the model with the largest prompt
    assert t.model_usage == "last"


def test_subagent_usage_is_split_from_the_main_thread():
    events = lines(
        msg("m1", [USE("task1", "Task")], inp=10, read=500),
        SUB("task1", msg("s1", [TEXT("sub")], inp=7, read=70, model="m-small")),
        SUB("task1", msg("s2", [TEXT("sub")], inp=3, read=30, model="m-small")),
        msg("m2", [TEXT("done")], inp=5, read=600),
        result(),
    )
    t = claude_code_tokens(events)
    assert (t.main_requests, t.subagent_requests) == (2, 2)
    assert t.main_prompt_tokens == 1115
    assert t.subagent_prompt_tokens == 110
    assert t.ledger.prompt_tokens == 1225


def test_a_result_without_model_usage():
    t = claude_code_tokens(lines(msg("m1", [TEXT("a")], inp=1), result(out=42)))
    assert t.models == () and t.model_usage == "none" and t.context_window is None
    assert t.ledger.output_tokens == 42
    assert t.cost == 0.5


def test_no_usage_anywhere_is_unknown_not_zero():
    events = [{"type": "assistant", "message": {"id": "m1", "content": [TEXT("a")]}}]
    t = claude_code_tokens(events)
    assert t.ledger.prompt_tokens is None and t.ledger.output_tokens is None
    assert t.cost is None and t.num_turns is None
    assert t.requests == 1


def _two_segments(tmp_path, first, second, *, cost1, cost2, prompt2):
    seg1 = lines(msg("a1", [TEXT("a")], inp=100), result(cost=cost1, model_usage=first))
    seg2 = lines(msg("b1", [TEXT("b")], inp=prompt2), result(cost=cost2, model_usage=second))
    a = write_jsonl(tmp_path / "run-y.jsonl", seg1)
    b = write_jsonl(tmp_path / "run-y.t2.jsonl", seg2)
    return parse_session([a, b])


def test_totals_carried_over_resume_are_not_added(tmp_path):
    # segment 2's modelUsage holds both segments (100 + 150 prompt tokens) and a larger cost
    s = _two_segments(
        tmp_path,
        {"m": mu(100, 10, 0, 0, 0.1)},
        {"m": mu(250, 30, 0, 0, 0.25)},
        cost1=0.1,
        cost2=0.25,
        prompt2=150,
    )
    t = s.tokens
    assert t.cumulative and t.model_usage == "last"
    assert t.cost == 0.25 and t.cost_sum == 0.35
    assert t.models[0].input_tokens == 250 and t.ledger.output_tokens == 30
    assert s.summary.cost == 0.35  # the reference's sum is kept where the reference prints it


def test_independent_segments_are_added(tmp_path):
    # segment 2 reports only its own 150 tokens: not carried over
    s = _two_segments(
        tmp_path,
        {"m": mu(100, 10, 0, 0, 0.1)},
        {"m": mu(150, 20, 0, 0, 0.15)},
        cost1=0.1,
        cost2=0.15,
        prompt2=150,
    )
    t = s.tokens
    assert not t.cumulative and t.model_usage == "sum"
    assert t.cost == t.cost_sum == 0.25
    assert t.models[0].input_tokens == 250 and t.ledger.output_tokens == 30


def test_a_smaller_later_total_is_never_carried_over(tmp_path):
    s = _two_segments(
        tmp_path,
        {"m": mu(500, 10, 0, 0, 0.5)},
        {"m": mu(150, 20, 0, 0, 0.15)},
        cost1=0.5,
        cost2=0.15,
        prompt2=150,
    )
    assert not s.tokens.cumulative


def test_odd_field_values_are_left_out_not_fatal():
    events = lines(
        msg("m1", [TEXT("a")], inp="ten", read=5),
        result(cost="free", model_usage={"m": {"inputTokens": True, "outputTokens": 9}, "x": 3}),
    )
    t = claude_code_tokens(events)
    assert t.ledger.prompt_tokens == 5
    assert t.cost is None
    assert [m.model for m in t.models] == ["m"] and t.models[0].input_tokens is None


def test_without_model_usage_subagent_output_comes_from_the_task_result():
    task_result = {
        "type": "user",
        "message": {"content": [{"type": "tool_result", "tool_use_id": "task1", "content": "ok"}]},
        "tool_use_result": {
            "agentId": "a1",
            "status": "completed",
            "totalTokens": 900,
            "usage": {"input_tokens": 800, "output_tokens": 60},
        },
    }
    events = lines(msg("m1", [USE("task1", "Task")], inp=10), [task_result], result(out=40))
    assert claude_code_tokens(events).ledger.output_tokens == 100


def test_a_later_total_with_unseen_subagent_calls_is_still_independent(tmp_path):
    # segment 2's modelUsage (200) holds more than its own messages (150: a subagent whose
    # frames are not in the stream) but less than both segments' messages (250)
    s = _two_segments(
        tmp_path,
        {"m": mu(100, 10, 0, 0, 0.1)},
        {"m": mu(200, 20, 0, 0, 0.2)},
        cost1=0.1,
        cost2=0.2,
        prompt2=150,
    )
    assert not s.tokens.cumulative and s.tokens.models[0].input_tokens == 300
