"""Fixture helpers: corpora of several agents in a harbor tree and in a pattern layout (issue 23).

* `build_harbor_agents(root)`: the harbor tree of `tests.harbor_helpers` (Claude Code trials of
  arms `baseline` and `mcp`) plus an arm `codex` whose trials hold `agent/codex.txt` (a
  `codex exec --json` stdout, with the rollout copy under `agent/sessions/`) and an arm
  `openhands` whose trials hold only Harbor's ATIF `agent/trajectory.json`.
* `build_mixed_pattern(root)`: `{arm}/{task}/{trial}/*` with a Claude Code arm `claude`, a Codex
  arm `codex` (rollouts) and an Inspect arm `inspect` (one sample per log).

Hand-computed figures are in the docstrings of the builders used (`codex_session_lines`,
`exec_stream_events`, `atif_trajectory`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.agent_builders import (
    codex_session_lines,
    exec_stream_events,
    inspect_log,
    write_events,
    write_rollout,
)
from tests.builders import ASST, RES, RESULT, TEXT, USE, lines, write_jsonl
from tests.harbor_helpers import _result_json, build_harbor_corpus

CODEX_TASKS = ("t1", "t2")
CODEX_REWARDS = {"t1": 1.0, "t2": 0.0}
ATIF_REWARDS = {"t1": 0.0, "t2": 1.0}
ATIF_AGENT = "openhands"


def atif_trajectory(task: str) -> dict[str, Any]:
    """An OpenHands-style ATIF trajectory: a user prompt, two agent steps with one tool call
    each (observations joined by `source_call_id`), a final answer step.

    Hand-computed: 2 tool calls (`execute_bash`, `str_replace_editor`); step prompts 1000, 1500,
    1800 (cached 0, 800, 1200), completions 50, 60, 40; final_metrics: prompt 4300, cached 2000,
    completion 150, cost 0.12; duration 30 s (10:00:00 → 10:00:30); 1 user turn; model
    `example-model`.
    """

    def step(i: int, source: str, **fields: Any) -> dict[str, Any]:
        return {
            "step_id": i,
            "timestamp": f"2030-01-01T10:00:{i * 10:02d}Z",
            "source": source,
        } | fields

    return {
        "schema_version": "ATIF-v1.5",
        "session_id": f"oh-{task}",
        "agent": {"name": ATIF_AGENT, "version": "0.50.0", "model_name": "example-model"},
        "steps": [
            step(0, "user", message=f"Fix {task}"),
            step(
                1,
                "agent",
                message="Looking.",
                tool_calls=[
                    {
                        "tool_call_id": "c1",
                        "function_name": "execute_bash",
                        "arguments": {"command": "ls src"},
                    }
                ],
                observation={
                    "results": [{"source_call_id": "c1", "content": f"{task}.py util.py"}]
                },
                metrics={"prompt_tokens": 1000, "completion_tokens": 50, "cached_tokens": 0},
            ),
            step(
                2,
                "agent",
                message="",
                tool_calls=[
                    {
                        "tool_call_id": "c2",
                        "function_name": "str_replace_editor",
                        "arguments": {"command": "view", "path": f"src/{task}.py"},
                    }
                ],
                observation={
                    "results": [
                        {
                            "source_call_id": "c2",
                            "content": [{"type": "text", "text": "def f(): ..."}],
                        }
                    ]
                },
                metrics={"prompt_tokens": 1500, "completion_tokens": 60, "cached_tokens": 800},
            ),
            step(
                3,
                "agent",
                message=f"Fixed in src/{task}.py.",
                metrics={"prompt_tokens": 1800, "completion_tokens": 40, "cached_tokens": 1200},
            ),
        ],
        "final_metrics": {
            "total_prompt_tokens": 4300,
            "total_completion_tokens": 150,
            "total_cached_tokens": 2000,
            "total_cost_usd": 0.12,
            "total_steps": 4,
        },
    }


def _trial(root: Path, arm: str, task: str, reward: float | None) -> Path:
    trial = root / "suite" / arm / task / f"{task}_1"
    (trial / "agent").mkdir(parents=True)
    (trial / "result.json").write_text(_result_json(task, 1, reward), encoding="utf-8")
    return trial


def build_harbor_agents(root: Path) -> Path:
    """The harbor tree (see the module docstring); returns the outcomes CSV of the Claude Code
    arms (`tests.harbor_helpers`)."""
    csv = build_harbor_corpus(root)
    for task in CODEX_TASKS:
        trial = _trial(root, "codex", task, CODEX_REWARDS[task])
        write_events(trial / "agent" / "codex.txt", exec_stream_events(), banner="codex v0.100")
        rollout = trial / "agent" / "sessions" / "2030" / "01" / "01"
        rollout.mkdir(parents=True)
        write_rollout(rollout / "rollout-2030-01-01T10-00-00-x.jsonl", codex_session_lines())
        (trial / "agent" / "trajectory.json").write_text(
            json.dumps(atif_trajectory(task)), encoding="utf-8"
        )  # the ATIF copy of a Codex run: not counted again
    for task in CODEX_TASKS:
        trial = _trial(root, ATIF_AGENT, task, ATIF_REWARDS[task])
        (trial / "agent" / "trajectory.json").write_text(
            json.dumps(atif_trajectory(task), indent=2), encoding="utf-8"
        )
    return csv


MIXED_LAYOUT = "{arm}/{task}/{trial}/*"


def claude_events(task: str) -> list[dict]:
    """A Claude Code run: Grep then Read, an answer; result cost 0.25, 12 s."""
    return lines(
        {"type": "system", "subtype": "init", "tools": ["Read", "Grep"]},
        ASST(1000, "m1", [USE("g", "Grep", {"pattern": task})]),
        RES("g", 40),
        ASST(1100, "m2", [USE("r", "Read", {"file_path": f"/app/src/{task}.py"})]),
        RES("r", 300),
        ASST(1500, "m9", [TEXT(f"Fixed in src/{task}.py.")]),
        RESULT(f"Fixed in src/{task}.py.", duration_ms=12000, total_cost_usd=0.25),
    )


def build_mixed_pattern(root: Path) -> Path:
    """Claude Code, Codex and Inspect runs of tasks t1, t2 in `{arm}/{task}/{trial}/*`; returns
    an outcomes CSV for the Claude Code and Codex runs (the Inspect runs carry their scores)."""
    rows = ["task,arm,trial,reward"]
    for task in CODEX_TASKS:
        d = root / "claude" / task / "1"
        d.mkdir(parents=True)
        write_jsonl(d / "run.jsonl", claude_events(task))
        d = root / "codex" / task / "1"
        d.mkdir(parents=True)
        write_rollout(d / "rollout-2030-01-01T10-00-00-x.jsonl", codex_session_lines())
        d = root / "inspect" / task / "1"
        d.mkdir(parents=True)
        inspect_log(d / "log.eval", [_inspect_sample(task)])
        rows += [f"{task},claude,1,1.0", f"{task},codex,1,{CODEX_REWARDS[task]}"]
    csv = root.parent / f"{root.name}-outcomes.csv"
    csv.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return csv


def _inspect_sample(task: str) -> dict[str, Any]:
    """One sample: one bash call, reward 0.5, prompt 100 + 2000 + 500 = 2600, output 300."""
    return {
        "id": task,
        "calls": [("call_1", "bash", {"cmd": f"rg -n {task} src"}, "src/x.py:1", None)],
        "answer": f"It is in src/{task}.py.",
        "scores": {"reward": 0.5},
        "usage": {
            "anthropic/example-model": {
                "input_tokens": 100,
                "input_tokens_cache_read": 2000,
                "input_tokens_cache_write": 500,
                "output_tokens": 300,
                "total_tokens": 2900,
            }
        },
    }
