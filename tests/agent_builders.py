"""Small builders for Codex CLI and Inspect AI fixtures, written from agent-formats.md (§1, §2, §3).

Every id, text and number is invented. Codex rollout lines are `{"timestamp", "type", "payload"}`
objects (§1.3); `write_rollout` stamps them one second apart. `exec --json` events are bare
`ThreadEvent` objects (§2.2). Inspect logs are written with Inspect's own API (`inspect_log`), so
the test needs the `inspect` extra.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

# --- Codex rollout lines (§1.3–§1.9) ----------------------------------------------------------


def meta(id: str, **fields: Any) -> dict[str, Any]:
    payload = {"id": id, "timestamp": "2030-01-01T10:00:00.000Z", "cwd": "/home/dev/repo"}
    payload.update({"originator": "codex_exec", "cli_version": "0.100.0", "source": "exec"})
    payload.update(fields)
    return {"type": "session_meta", "payload": payload}


def turn_context(turn_id: str | None, model: str = "example-model") -> dict[str, Any]:
    payload: dict[str, Any] = {"cwd": "/home/dev/repo", "approval_policy": "never", "model": model}
    if turn_id is not None:
        payload["turn_id"] = turn_id
    return {"type": "turn_context", "payload": payload}


def event(ptype: str, **fields: Any) -> dict[str, Any]:
    return {"type": "event_msg", "payload": {"type": ptype, **fields}}


def user_message(text: str) -> dict[str, Any]:
    return event("user_message", message=text, local_images=[], text_elements=[])


def item(ptype: str, **fields: Any) -> dict[str, Any]:
    return {"type": "response_item", "payload": {"type": ptype, **fields}}


def reasoning(text: str) -> dict[str, Any]:
    return item(
        "reasoning",
        summary=[{"type": "summary_text", "text": text}],
        content=None,
        encrypted_content="AAAA",
    )


def function_call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return item("function_call", name=name, arguments=json.dumps(arguments), call_id=call_id)


def function_output(call_id: str, output: Any) -> dict[str, Any]:
    return item("function_call_output", call_id=call_id, output=output)


def structured_shell(text: str, exit_code: int) -> str:
    """§1.6 shape 1: structured shell output, JSON inside the string."""
    return json.dumps(
        {"output": text, "metadata": {"exit_code": exit_code, "duration_seconds": 0.1}}
    )


def assistant(text: str, phase: str | None = None) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "role": "assistant",
        "content": [{"type": "output_text", "text": text}],
    }
    if phase is not None:
        fields["phase"] = phase
    return item("message", **fields)


def usage(input: int, cached: int, output: int, reasoning: int, total: int | None = None) -> dict:
    """A `TokenUsage` (§1.9): input holds cached, output holds reasoning, total = input + output."""
    return {
        "input_tokens": input,
        "cached_input_tokens": cached,
        "output_tokens": output,
        "reasoning_output_tokens": reasoning,
        "total_tokens": input + output if total is None else total,
    }


def token_count(total: dict | None, last: dict | None = None, window: int = 100000) -> dict:
    """A `token_count` event; `total=None` writes `info: null` (§1.9 rule 2)."""
    if total is None:
        return event("token_count", info=None, rate_limits=None)
    info = {"total_token_usage": total, "last_token_usage": last, "model_context_window": window}
    return event("token_count", info=info, rate_limits=None)


def write_rollout(path: Path, lines: list[dict[str, Any]]) -> Path:
    """Write rollout lines one second apart from 2030-01-01T10:00:00Z (write times, §1.3)."""
    t0 = datetime(2030, 1, 1, 10, 0, 0)
    out = []
    for i, line in enumerate(lines):
        stamp = (t0 + timedelta(seconds=i)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
        # Compact, as `serde_json::to_string` writes it.
        out.append(json.dumps({"timestamp": stamp, **line}, separators=(",", ":")))
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return path


def codex_session_lines() -> list[dict[str, Any]]:
    """The acceptance rollout: shell and MCP calls, an errored output, reasoning, two turns, a
    compaction and several `token_count`s (a null one, a repeat, a compaction sentinel).

    Hand-computed: 4 requests with prompts 1000, 1100, 400, 500; Σ input 3000, of which cached
    2100 (uncached 900); Σ output 180, of which reasoning 35; last total 3180 = 3000 + 180.
    """
    t1 = usage(1000, 800, 50, 20)
    t2 = usage(2100, 1800, 80, 20)
    t3 = usage(2500, 1800, 140, 30)
    t4 = usage(3000, 2100, 180, 35)
    return [
        meta("00000000-0000-7000-8000-000000000001"),
        turn_context("turn-1"),
        user_message("Where is the retry logic?"),
        token_count(None),
        reasoning("Looking for retry code"),
        function_call("call_1", "shell", {"command": ["bash", "-lc", "rg -n retry src"]}),
        token_count(t1, usage(1000, 800, 50, 20)),
        function_output("call_1", structured_shell("src/net.py:10:def retry():\n", 0)),
        function_call("call_2", "mcp__codegraph__codegraph_explore", {"query": "retry"}),
        token_count(t1, usage(1000, 800, 50, 20)),  # a rate-limit repeat: not a request
        function_output("call_2", "Wall time: 0.1 seconds\nOutput:\n**`src/net.py`** — retry"),
        function_call("call_3", "exec_command", {"cmd": "cat missing.py"}),
        function_output(
            "call_3",
            "Chunk ID: 1\nWall time: 0.0 seconds\nProcess exited with code 1\nOutput:\n"
            "cat: missing.py: No such file or directory\n",
        ),
        token_count(t2, usage(1100, 1000, 30, 0)),
        assistant("It is in src/net.py."),
        event("task_complete", turn_id="turn-1", last_agent_message="It is in src/net.py."),
        turn_context("turn-2"),
        user_message("And the backoff?"),
        {
            "type": "compacted",
            "payload": {"message": "summary of turn 1", "replacement_history": []},
        },
        event("context_compacted"),
        token_count(t2, usage(0, 0, 0, 0, total=900)),  # after compaction: an estimate only
        turn_context("turn-2"),
        reasoning("Reading the retry module"),
        item(
            "custom_tool_call",
            status="completed",
            call_id="call_4",
            name="apply_patch",
            input="*** Begin Patch\n*** Update File: src/retry.py\n*** End Patch\n",
        ),
        token_count(t3, usage(400, 0, 60, 10)),
        item(
            "custom_tool_call_output",
            call_id="call_4",
            output="Exit code: 0\nWall time: 0.2 seconds\nOutput:\nSuccess.\n",
        ),
        assistant("Backoff is in src/retry.py.", phase="final_answer"),
        token_count(t4, usage(500, 300, 40, 5)),
        event("task_complete", turn_id="turn-2", last_agent_message="Backoff is in src/retry.py."),
    ]


# --- codex exec --json (§2) -------------------------------------------------------------------


def ev(etype: str, **fields: Any) -> dict[str, Any]:
    return {"type": etype, **fields}


def it(etype: str, id: str, itype: str, **fields: Any) -> dict[str, Any]:
    return {"type": etype, "item": {"id": id, "type": itype, **fields}}


def exec_stream_events() -> list[dict[str, Any]]:
    """Every item kind of §2.3 over two turns.

    Hand-computed: 6 tool calls (command, MCP, file change, web search, failed command, collab
    call), 1 unfinished command; final answer "The retry logic is in src/net.py."; tokens from the
    last `turn.completed`: input 2500 of which cached 1800 (uncached 700), output 120.
    """
    cmd = "bash -lc 'rg -n retry src'"
    return [
        ev("thread.started", thread_id="00000000-0000-7000-8000-000000000002"),
        ev("turn.started"),
        it("item.completed", "item_0", "reasoning", text="Searching for the retry code"),
        it(
            "item.started",
            "item_1",
            "command_execution",
            command=cmd,
            aggregated_output="",
            exit_code=None,
            status="in_progress",
        ),  # fmt: skip
        it(
            "item.completed",
            "item_1",
            "command_execution",
            command=cmd,
            aggregated_output="src/net.py:10:def retry():\n",
            exit_code=0,
            status="completed",
        ),  # fmt: skip
        it(
            "item.started",
            "item_2",
            "mcp_tool_call",
            server="codegraph",
            tool="codegraph_explore",
            arguments={"query": "retry"},
            result=None,
            error=None,
            status="in_progress",
        ),  # fmt: skip
        it(
            "item.completed",
            "item_2",
            "mcp_tool_call",
            server="codegraph",
            tool="codegraph_explore",
            arguments={"query": "retry"},
            result={
                "content": [{"type": "text", "text": "**`src/net.py`** — retry"}],
                "structured_content": None,
            },
            error=None,
            status="completed",
        ),  # fmt: skip
        it(
            "item.completed",
            "item_3",
            "file_change",
            changes=[{"path": "src/net.py", "kind": "update"}],
            status="completed",
        ),  # fmt: skip
        it("item.started", "item_4", "web_search", query="retry backoff"),
        it(
            "item.completed",
            "item_4",
            "web_search",
            query="retry backoff",
            action={"type": "search", "query": "retry backoff"},
        ),  # fmt: skip
        it("item.started", "item_5", "todo_list", items=[{"text": "find", "completed": False}]),
        it("item.updated", "item_5", "todo_list", items=[{"text": "find", "completed": True}]),
        it("item.completed", "item_6", "agent_message", text="Found it."),
        it("item.completed", "item_5", "todo_list", items=[{"text": "find", "completed": True}]),
        ev(
            "turn.completed",
            usage={"input_tokens": 1000, "cached_input_tokens": 800, "output_tokens": 50},
        ),  # fmt: skip
        ev("turn.started"),
        it(
            "item.started",
            "item_7",
            "command_execution",
            command="make test",
            aggregated_output="",
            exit_code=None,
            status="in_progress",
        ),  # fmt: skip
        it(
            "item.completed",
            "item_7",
            "command_execution",
            command="make test",
            aggregated_output="1 failed\n",
            exit_code=2,
            status="failed",
        ),  # fmt: skip
        it(
            "item.completed",
            "item_8",
            "collab_tool_call",
            tool="spawn_agent",
            sender_thread_id="t0",
            receiver_thread_ids=["t1"],
            prompt="look",
            agents_states={},
            status="completed",
        ),  # fmt: skip
        it("item.completed", "item_9", "error", message="model rerouted"),
        it("item.completed", "item_10", "agent_message", text="The retry logic is in src/net.py."),
        it(
            "item.started",
            "item_11",
            "command_execution",
            command="sleep 100",
            aggregated_output="",
            exit_code=None,
            status="in_progress",
        ),  # fmt: skip
        ev(
            "turn.completed",
            usage={"input_tokens": 2500, "cached_input_tokens": 1800, "output_tokens": 120},
        ),  # fmt: skip
    ]


def write_events(path: Path, events: list[dict[str, Any]], banner: str | None = None) -> Path:
    lines = ([banner] if banner else []) + [json.dumps(e) for e in events]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


# --- Inspect AI logs (§3), written with Inspect's API -----------------------------------------


def inspect_log(path: Path, samples: list[dict[str, Any]], *, version: str | None = None) -> Path:
    """Write an Inspect log (`.eval` or `.json` by the suffix) with Inspect's own writer.

    Each sample dict: `id`, `calls` [(call id, function, arguments, result text, error or None)],
    `answer`, `scores` {name: value}, `usage` {model: ModelUsage fields}, optional `events`
    (list of ("model", usage fields, input_context_tokens) or ("compaction",)), `total_time`.
    `version` is the writer's inspect_ai version recorded in the header (default: installed).
    """
    import inspect_ai
    from inspect_ai.event import CompactionEvent, ModelEvent
    from inspect_ai.log import (
        EvalConfig,
        EvalDataset,
        EvalLog,
        EvalSample,
        EvalSpec,
        EvalStats,
        write_eval_log,
    )
    from inspect_ai.model import (
        ChatMessageAssistant,
        ChatMessageTool,
        ChatMessageUser,
        GenerateConfig,
        ModelOutput,
        ModelUsage,
    )
    from inspect_ai.scorer import Score
    from inspect_ai.tool import ToolCall, ToolCallError

    built = []
    model = next(iter(samples[0]["usage"]))
    for s in samples:
        messages: list[Any] = [ChatMessageUser(content=f"question {s['id']}")]
        for call_id, function, arguments, result, error in s["calls"]:
            call = ToolCall(id=call_id, function=function, arguments=arguments)
            messages.append(ChatMessageAssistant(content="", tool_calls=[call]))
            messages.append(
                ChatMessageTool(
                    content=result,
                    tool_call_id=call_id,
                    function=function,
                    error=ToolCallError(type="unknown", message=error) if error else None,
                )
            )
        messages.append(ChatMessageAssistant(content=s["answer"]))
        events: list[Any] = []
        for e in s.get("events", []):
            if e[0] == "compaction":
                events.append(CompactionEvent(tokens_before=5000, tokens_after=800))
            else:
                out = ModelOutput.from_content(model, "x")
                out.usage = ModelUsage(**e[1])
                out.input_context_tokens = e[2]
                events.append(
                    ModelEvent(
                        model=model,
                        input=[],
                        tools=[],
                        tool_choice="auto",
                        config=GenerateConfig(),
                        output=out,
                    )
                )
        built.append(
            EvalSample(
                id=s["id"],
                epoch=s.get("epoch", 1),
                input=f"question {s['id']}",
                target="src/net.py",
                messages=messages,
                output=ModelOutput.from_content(model, s["answer"]),
                scores={k: Score(value=v) for k, v in s["scores"].items()},
                model_usage={m: ModelUsage(**u) for m, u in s["usage"].items()},
                events=events,
                total_time=s.get("total_time", 10.0),
                working_time=s.get("total_time", 10.0) - 1,
            )
        )
    spec = EvalSpec(
        created="2030-01-01T10:00:00+00:00",
        task="find_code",
        dataset=EvalDataset(
            name="questions", samples=len(built), sample_ids=[s["id"] for s in samples]
        ),
        model=model,
        config=EvalConfig(),
        packages={"inspect_ai": version or inspect_ai.__version__},
    )
    log = EvalLog(
        eval=spec,
        status="success",
        samples=built,
        stats=EvalStats(
            started_at="2030-01-01T10:00:00+00:00", completed_at="2030-01-01T10:05:00+00:00"
        ),
    )
    write_eval_log(log, str(path))
    return path


def two_sample_log(path: Path) -> Path:
    """The acceptance log: two samples with tool calls and scores (current usage rule).

    Hand-computed, sample q-001: prompt = 100 + 2000 (cache read) + 500 (cache write) = 2600,
    uncached 600, output 300 of which reasoning 50, total 2900; reward 0.75, passed True.
    Sample q-002: prompt = 400 + 0 + 0 = 400 (no cache fields: NA), output 40; passed False.
    """
    return inspect_log(
        path,
        [
            {
                "id": "q-001",
                "calls": [
                    ("call_1", "bash", {"cmd": "rg -n retry src"}, "src/net.py:10", None),
                    (
                        "call_2",
                        "text_editor",
                        {"command": "view", "path": "src/net.py"},
                        "def retry(): ...",
                        None,
                    ),  # fmt: skip
                ],
                "answer": "It is in src/net.py.",
                "scores": {"reward": 0.75, "match": "C"},
                "usage": {
                    "anthropic/example-model": {
                        "input_tokens": 100,
                        "input_tokens_cache_read": 2000,
                        "input_tokens_cache_write": 500,
                        "output_tokens": 300,
                        "reasoning_tokens": 50,
                        "total_tokens": 2900,
                    }
                },
                "events": [
                    (
                        "model",
                        {
                            "input_tokens": 50,
                            "input_tokens_cache_write": 500,
                            "output_tokens": 100,
                            "total_tokens": 650,
                        },
                        None,
                    ),  # fmt: skip
                    ("compaction",),
                    (
                        "model",
                        {
                            "input_tokens": 50,
                            "input_tokens_cache_read": 2000,
                            "output_tokens": 200,
                            "total_tokens": 2250,
                        },
                        2100,
                    ),  # fmt: skip
                ],
                "total_time": 12.5,
            },
            {
                "id": "q-002",
                "calls": [("call_3", "bash", {"cmd": "cat nope"}, "", "No such file")],
                "answer": "I could not find it.",
                "scores": {"match": "I"},
                "usage": {
                    "anthropic/example-model": {
                        "input_tokens": 400,
                        "output_tokens": 40,
                        "total_tokens": 440,
                    }
                },
                "total_time": 4.0,
            },
        ],
    )
