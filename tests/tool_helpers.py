"""Fixture helpers for the tool under test by role and the cross-agent families (issue 23).

`mcp_corpus(root, tool)` writes an A/B corpus in the harness's layout whose `new` arm calls the
MCP tools `tool` names (sourcegraph's, or an unknown server's) and whose baseline reads files; no
session makes an explore call. `mixed_agents_corpus(root)` writes a Claude Code session that
edits, writes and plans beside a Codex rollout and a `codex exec --json` capture that do the same.
"""

from __future__ import annotations

from pathlib import Path

from tests.agent_builders import (
    assistant,
    event,
    function_call,
    function_output,
    item,
    meta,
    token_count,
    turn_context,
    usage,
    user_message,
    write_events,
    write_rollout,
)
from tests.builders import ASST, RES, RESULT, TEXT, USE, lines
from tests.sweep_helpers import put

SOURCEGRAPH = ("mcp__sourcegraph__sg_keyword_search", "mcp__sourcegraph__sg_read_file")
GITHUB = ("mcp__github__search_code", "mcp__github__get_file_contents")


def mcp_run(tools: tuple[str, str] | None, *, cost: float, reward_text: str = "Done.") -> list:
    """One headless run: with `tools`, a search (50 chars) and a read (200 chars) through them,
    then a Bash call (10 chars); without, Grep (40), Read (300) and Bash (10). Then the answer
    and a result event of `cost` dollars and 12 s."""
    if tools is not None:
        body = lines(
            ASST(1000, "m1", [USE("s", tools[0], {"query": "retry"})]),
            RES("s", 50),
            ASST(1100, "m2", [USE("r", tools[1], {"path": "src/net.py"})]),
            RES("r", 200),
        )
    else:
        body = lines(
            ASST(1000, "m1", [USE("g", "Grep", {"pattern": "retry"})]),
            RES("g", 40),
            ASST(1100, "m2", [USE("r", "Read", {"file_path": "/app/src/net.py"})]),
            RES("r", 300),
        )
    return lines(
        {"type": "system", "subtype": "init", "tools": ["Read", "Grep", "Bash"]},
        body,
        ASST(1300, "m3", [USE("b", "Bash", {"command": "make test"})]),
        RES("b", 10),
        ASST(1500, "m9", [TEXT(reward_text)]),
        RESULT(reward_text, duration_ms=12000, total_cost_usd=cost),
    )


def mcp_corpus(root: Path, tools: tuple[str, str]) -> Path:
    """`p1/ab-demo/run-{baseline,new}-{1,2}.jsonl`: the new arm calls `tools`; costs 0.10, 0.20
    (baseline) and 0.30, 0.40 (new)."""
    for i, cost in enumerate((0.10, 0.20), start=1):
        put(root, f"p1/ab-demo/run-baseline-{i}.jsonl", mcp_run(None, cost=cost))
    for i, cost in enumerate((0.30, 0.40), start=1):
        put(root, f"p1/ab-demo/run-new-{i}.jsonl", mcp_run(tools, cost=cost))
    return root


def claude_editing_run() -> list:
    """A Claude Code run that plans (TodoWrite), edits (Edit), writes (Write) and delegates
    (Task), then answers."""
    return lines(
        {"type": "system", "subtype": "init", "tools": ["Edit", "Write", "TodoWrite", "Task"]},
        ASST(1000, "m1", [USE("t", "TodoWrite", {"todos": []})]),
        RES("t", 10),
        ASST(1100, "m2", [USE("e", "Edit", {"file_path": "/app/a.py"})]),
        RES("e", 10),
        ASST(1200, "m3", [USE("w", "Write", {"file_path": "/app/b.py"})]),
        RES("w", 10),
        ASST(1300, "m4", [USE("k", "Task", {"prompt": "check"})]),
        RES("k", 10),
        ASST(1500, "m9", [TEXT("Edited.")]),
        RESULT("Edited.", duration_ms=5000, total_cost_usd=0.05),
    )


def codex_editing_rollout() -> list:
    """A Codex rollout that plans (`update_plan`) and patches (`apply_patch`)."""
    return [
        meta("00000000-0000-7000-8000-0000000000e1"),
        turn_context("turn-1"),
        user_message("Fix it"),
        function_call("c1", "update_plan", {"plan": [{"step": "fix", "status": "pending"}]}),
        function_output("c1", "Plan updated"),
        item(
            "custom_tool_call",
            status="completed",
            call_id="c2",
            name="apply_patch",
            input="*** Begin Patch\n*** Update File: a.py\n*** End Patch\n",
        ),
        item("custom_tool_call_output", call_id="c2", output="Success."),
        token_count(usage(1000, 0, 50, 0), usage(1000, 0, 50, 0)),
        assistant("Fixed.", phase="final_answer"),
        event("task_complete", turn_id="turn-1", last_agent_message="Fixed."),
    ]


def codex_exec_events() -> list:
    """A `codex exec --json` capture with one file change and one to-do list."""
    return [
        {"type": "thread.started", "thread_id": "00000000-0000-7000-8000-0000000000e2"},
        {"type": "turn.started"},
        {
            "type": "item.completed",
            "item": {
                "id": "item_0",
                "type": "file_change",
                "changes": [{"path": "a.py", "kind": "update"}],
                "status": "completed",
            },
        },
        {
            "type": "item.completed",
            "item": {
                "id": "item_1",
                "type": "todo_list",
                "items": [{"text": "x", "completed": True}],
            },
        },
        {
            "type": "item.completed",
            "item": {"id": "item_2", "type": "agent_message", "text": "Done."},
        },
        {
            "type": "turn.completed",
            "usage": {"input_tokens": 100, "cached_input_tokens": 0, "output_tokens": 10},
        },
    ]


def mixed_agents_corpus(root: Path) -> Path:
    """`claude/run-1.jsonl`, `codex/rollout-….jsonl` and `codex/exec.jsonl`."""
    put(root, "claude/run-1.jsonl", claude_editing_run())
    (root / "codex").mkdir(parents=True, exist_ok=True)
    write_rollout(
        root / "codex" / "rollout-2030-01-01T10-00-00-00000000-0000-7000-8000-0000000000e1.jsonl",
        codex_editing_rollout(),
    )
    write_events(root / "codex" / "exec.jsonl", codex_exec_events())
    return root
