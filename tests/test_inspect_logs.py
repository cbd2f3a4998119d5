"""The Inspect AI log reader (evalkit/formats/inspect/logs.py; agent-formats §3).

The logs are written with Inspect's own API, so these tests need the optional `inspect` extra.
"""

from __future__ import annotations

import pytest

from evalkit.errors import TranscriptError
from evalkit.formats.inspect.logs import INSTALL_HINT, inspect_available, read_inspect_log

pytestmark = pytest.mark.skipif(
    not inspect_available(),
    reason='the Inspect AI extra is not installed (pip install -e ".[inspect]")',
)


@pytest.fixture(params=["log.eval", "log.json"])
def sessions(request, tmp_path):
    from tests.agent_builders import two_sample_log

    return list(read_inspect_log(two_sample_log(tmp_path / request.param)))


def test_one_session_per_sample_with_tool_calls_joined(sessions):
    assert [s.session_id for s in sessions] == ["q-001:1", "q-002:1"]
    first, second = sessions
    assert [(c.id, c.name, c.family) for c in first.tool_calls] == [
        ("call_1", "bash", "bash"),
        ("call_2", "text_editor", "edit"),
    ]
    assert first.tool_calls[0].output == "src/net.py:10"
    assert first.tool_calls[0].input == {"cmd": "rg -n retry src"}
    assert [c.error for c in first.tool_calls] == [False, False]
    assert [c.error for c in second.tool_calls] == [True]
    assert first.final_answer == "It is in src/net.py."
    assert first.final_answer_source == "sample output completion"
    assert (first.agent, first.format, first.sample_id, first.epoch) == (
        "inspect",
        "inspect",
        "q-001",
        1,
    )


def test_scores_are_outcomes(sessions):
    first, second = sessions
    assert (first.reward, first.passed) == (0.75, True)  # first numeric score; C → passed
    assert (second.reward, second.passed) == (None, False)  # I, no numeric score
    assert first.extra["scores"] == {"reward": 0.75, "match": "C"}


def test_token_ledger_current_rule(sessions):
    first, second = sessions
    t = first.tokens  # hand-computed in two_sample_log
    assert t.prompt_tokens == 2600
    assert (t.cache_read_tokens, t.cache_write_tokens, t.uncached_prompt_tokens) == (2000, 500, 600)
    assert (t.output_tokens, t.reasoning_tokens) == (300, 50)
    assert t.prompt_tokens <= first.reported_total_tokens == 2900
    u = second.tokens
    assert (u.prompt_tokens, u.uncached_prompt_tokens, u.output_tokens) == (400, 400, 40)
    assert u.cache_read_tokens is None and u.reasoning_tokens is None  # absent: NA
    assert u.prompt_tokens <= second.reported_total_tokens


def test_requests_compaction_duration(sessions):
    first, second = sessions
    # input_context_tokens where present, else input + cache read + cache write.
    assert [r.prompt_tokens for r in first.requests] == [550, 2100]
    assert first.compactions == 1
    assert first.duration_s == 12.5 and first.extra["working_time_s"] == 11.5
    assert second.requests is None and second.compactions is None  # no events recorded
    assert first.cost_usd is None  # Inspect did not price it


def _old_openai_log(path, version):
    from tests.agent_builders import inspect_log

    usage = {
        "input_tokens": 2100,
        "input_tokens_cache_read": 1800,
        "output_tokens": 80,
        "reasoning_tokens": 20,
        "total_tokens": 2180,
    }
    sample = {
        "id": "q",
        "calls": [],
        "answer": "a",
        "scores": {"s": 1},
        "usage": {"openai/m": usage},
    }
    return inspect_log(path, [sample], version=version)


def test_cached_inside_input_before_0_3_184_for_openai(tmp_path):
    (old,) = read_inspect_log(_old_openai_log(tmp_path / "old.eval", "0.3.150"))
    # input_tokens already held the 1800 cache reads: adding them again would give 3900.
    assert old.tokens.prompt_tokens == 2100
    assert old.tokens.cache_read_tokens == 1800
    assert old.tokens.uncached_prompt_tokens == 300
    assert old.tokens.prompt_tokens <= old.reported_total_tokens == 2180
    (new,) = read_inspect_log(_old_openai_log(tmp_path / "new.eval", "0.3.200"))
    assert new.tokens.prompt_tokens == 3900  # from 0.3.184 input excludes the cache
    assert new.reward == 1.0 and new.passed is None


def test_a_damaged_log_is_one_line_error(tmp_path):
    path = tmp_path / "bad.eval"
    path.write_bytes(b"PK\x03\x04 not really a zip")
    with pytest.raises(TranscriptError) as err:
        list(read_inspect_log(path))
    assert str(err.value).startswith(f"{path}: not a readable Inspect AI log (")
    assert "\n" not in str(err.value)


def test_install_hint_names_the_extra():
    assert 'pip install "evalkit[inspect]"' in INSTALL_HINT
