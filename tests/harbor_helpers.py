"""Fixture helpers: a small harbor-layout corpus built file by file (issue 14 acceptance).

    suite/<arm>/<task>/<task>_<n>/agent/claude-code.txt   (+ result.json, config.json)

Two arms (`baseline` with Claude Code's own tools, `mcp` with sourcegraph's), four tasks, two
trials each. Variants that real runs have: one transcript is a pretty-printed JSON array, one is
written as `{"timestamp", "raw"}` wrapped lines, one holds a `rate_limit_event`; one trial has an
interactive copy and a trajectory.json beside it; `mcp/t4` has no verifier reward in its
result.json, so its rewards come from the user's outcomes CSV.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.builders import ASST, RES, RESULT, TEXT, USE, lines

SG_SEARCH = "mcp__sourcegraph__sg_keyword_search"
SG_READ = "mcp__sourcegraph__sg_read_file"

# Rewards per (arm, task): trial 1, trial 2. None = result.json without a verifier reward.
REWARDS = {
    ("baseline", "t1"): (0.0, 1.0),
    ("baseline", "t2"): (1.0, 1.0),
    ("baseline", "t3"): (0.0, 0.0),
    ("baseline", "t4"): (1.0, 0.0),
    ("mcp", "t1"): (1.0, 1.0),
    ("mcp", "t2"): (0.0, 1.0),
    ("mcp", "t3"): (0.0, 0.0),
    ("mcp", "t4"): (None, None),
}
CSV_REWARDS = {("t4", "mcp", "t4_1"): 1.0, ("t4", "mcp", "t4_2"): 1.0}
ARRAY_TRIAL = ("baseline", "t1", 1)
WRAPPED_TRIAL = ("mcp", "t2", 1)
RATE_LIMITED_TRIAL = ("mcp", "t1", 1)
COPIES_TRIAL = ("baseline", "t2", 2)
STDERR_TRIAL = ("baseline", "t3", 1)


def trial_events(arm: str, task: str, n: int) -> list[dict]:
    """A run: the baseline reads `src/<task>.py` (300 chars) and `src/util.py` (100); the mcp arm
    searches (50 chars) and reads `src/<task>.py` through sg_read_file (200). Both answers cite
    `src/<task>.py`. Three tool calls (baseline: Grep, Read, Read; mcp: search, read, Bash)."""
    target = f"src/{task}.py"
    if arm == "baseline":
        body = lines(
            ASST(1000, "m1", [USE("g", "Grep", {"pattern": task})]),
            RES("g", 40),
            ASST(1100, "m2", [USE("r1", "Read", {"file_path": f"/app/{target}"})]),
            RES("r1", 300),
            ASST(1300, "m3", [USE("r2", "Read", {"file_path": "/app/src/util.py"})]),
            RES("r2", 100),
        )
    else:
        body = lines(
            ASST(1000, "m1", [USE("s", SG_SEARCH, {"query": task})]),
            RES("s", 50),
            ASST(1100, "m2", [USE("r", SG_READ, {"repo": "r", "path": target})]),
            RES("r", 200),
            ASST(1200, "m3", [USE("b", "Bash", {"command": "make test"})]),
            RES("b", 10),
        )
    events = lines(
        {"type": "system", "subtype": "init", "tools": ["Read", "Grep", "Bash"]},
        body,
        ASST(1500, "m9", [TEXT(f"Fixed in {target}.")]),
        RESULT(f"Fixed in {target}.", duration_ms=1000 * (10 + n), total_cost_usd=0.25),
    )
    if (arm, task, n) == RATE_LIMITED_TRIAL:
        events.insert(2, {"type": "rate_limit_event", "rate_limit_info": {"status": "allowed"}})
    return events


def _result_json(task: str, n: int, reward: float | None) -> str:
    verifier = None if reward is None else {"rewards": {"reward": reward}}
    doc = {"task_name": task, "trial_name": f"{task}_{n}", "verifier_result": verifier}
    return json.dumps(doc, indent=2) + "\n"


def build_harbor_corpus(root: Path, *, with_csv: bool = True) -> Path:
    """Write the corpus under `root` (the suite is `suite`); returns the outcomes CSV path."""
    for (arm, task), rewards in REWARDS.items():
        for n, reward in enumerate(rewards, start=1):
            trial = root / "suite" / arm / task / f"{task}_{n}"
            agent = trial / "agent"
            agent.mkdir(parents=True)
            events = trial_events(arm, task, n)
            transcript = agent / "claude-code.txt"
            if (arm, task, n) == ARRAY_TRIAL:
                transcript.write_text(json.dumps(events, indent=2), encoding="utf-8")
            elif (arm, task, n) == WRAPPED_TRIAL:
                rows = [{"timestamp": 1900000000.5 + i, "raw": e} for i, e in enumerate(events)]
                transcript.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
            else:
                text = "".join(json.dumps(e) + "\n" for e in events)
                if (arm, task, n) == STDERR_TRIAL:  # harbor tees stderr into the same file
                    text = "npm warn: deprecated package\n" + text
                transcript.write_text(text, encoding="utf-8")
            if (arm, task, n) == COPIES_TRIAL:
                copy = agent / "sessions" / "projects" / "-app" / "0000.jsonl"
                copy.parent.mkdir(parents=True)
                copy.write_text(transcript.read_text(encoding="utf-8"), encoding="utf-8")
                (agent / "trajectory.json").write_text('{"steps": []}\n', encoding="utf-8")
            (trial / "result.json").write_text(_result_json(task, n, reward), encoding="utf-8")
            (trial / "config.json").write_text('{"agent": "claude-code"}\n', encoding="utf-8")
    csv = root.parent / f"{root.name}-outcomes.csv"
    if with_csv:
        rows = ["task,arm,trial,reward"]
        rows += [f"{t},{a},{tr},{r}" for (t, a, tr), r in CSV_REWARDS.items()]
        rows.append("t9,mcp,t9_1,1.0")  # names no run
        csv.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return csv


# --- runs that did not end ok (issue 23): one harbor tree with every kind of failure ------------

LIMIT_TEXT = "You've hit your limit · resets 3pm (UTC)"


def rate_limited_events() -> list[dict]:
    """A run Claude Code refused at once: a synthetic turn and an `is_error` result saying the
    usage limit is hit; no tool call, no token."""
    zero = {"input_tokens": 0, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}
    return lines(
        {"type": "system", "subtype": "init", "tools": ["Read", "Grep", "Bash"]},
        {
            "type": "assistant",
            "message": {
                "id": "m-limit",
                "model": "<synthetic>",
                "content": [TEXT(LIMIT_TEXT)],
                "usage": {**zero, "output_tokens": 0},
            },
            "error": "rate_limit",
        },
        RESULT(LIMIT_TEXT, is_error=True, total_cost_usd=0, duration_ms=200, num_turns=1),
    )


def errored_events() -> list[dict]:
    """A run whose result is an error during execution."""
    events = trial_events("mcp", "t2", 1)
    events[-1] = {
        **events[-1],
        "subtype": "error_during_execution",
        "is_error": True,
        "errors": ["Tool execution failed: sandbox exited"],
    }
    events[-1].pop("result", None)
    return events


def max_turns_events() -> list[dict]:
    events = trial_events("baseline", "t2", 1)
    events[-1] = {**events[-1], "subtype": "error_max_turns", "is_error": True}
    events[-1].pop("result", None)
    return events


def cut_events() -> list[dict]:
    """A run the harness stopped: no result event."""
    return trial_events("baseline", "t1", 1)[:-1]


# (arm, task, trial) → (events or None for no transcript, reward, exception_info or None)
FAILURES: dict[tuple[str, str, int], tuple] = {
    ("baseline", "t1", 1): (trial_events("baseline", "t1", 1), 1.0, None),
    ("baseline", "t1", 2): (trial_events("baseline", "t1", 2), 1.0, None),
    ("mcp", "t1", 1): (trial_events("mcp", "t1", 1), 1.0, None),
    ("mcp", "t1", 2): (
        cut_events(),
        0.0,
        {"exception_type": "AgentTimeoutError", "exception_message": "Agent timed out after 900s"},
    ),
    ("baseline", "t2", 1): (max_turns_events(), 0.0, None),
    ("baseline", "t2", 2): (trial_events("baseline", "t2", 2), 1.0, None),
    ("mcp", "t2", 1): (errored_events(), 0.0, None),
    ("mcp", "t2", 2): (trial_events("mcp", "t2", 2), 1.0, None),
    # The two limit-refused runs of one task: both score 0, which once made the task a tie.
    ("baseline", "t3", 1): (rate_limited_events(), 0.0, None),
    ("mcp", "t3", 1): (rate_limited_events(), 0.0, None),
    ("baseline", "t4", 1): (trial_events("baseline", "t4", 1), 0.0, None),
    ("mcp", "t4", 1): (
        None,
        None,
        {
            "exception_type": "EnvironmentStartTimeoutError",
            "exception_message": "docker compose up did not finish",
        },
    ),
}
FAILURE_STATUS = {
    ("baseline", "t1", 1): "ok",
    ("baseline", "t1", 2): "ok",
    ("mcp", "t1", 1): "ok",
    ("mcp", "t1", 2): "timeout",
    ("baseline", "t2", 1): "max_turns",
    ("baseline", "t2", 2): "ok",
    ("mcp", "t2", 1): "agent_error",
    ("mcp", "t2", 2): "ok",
    ("baseline", "t3", 1): "rate_limited",
    ("mcp", "t3", 1): "rate_limited",
    ("baseline", "t4", 1): "ok",
    ("mcp", "t4", 1): "infra_error",
}


def build_failures_corpus(root: Path) -> Path:
    """A harbor tree (`suite/<arm>/<task>/<task>_<n>/`) with rewards and every kind of run
    that did not end ok: a turn limit, an error result, two usage-limit refusals (one task,
    both arms), a timeout (cut transcript, `AgentTimeoutError`), and an infra error (a
    `result.json` with `exception_info` and no transcript). Returns `root`."""
    for (arm, task, n), (events, reward, exc) in FAILURES.items():
        trial = root / "suite" / arm / task / f"{task}_{n}"
        (trial / "agent").mkdir(parents=True)
        if events is not None:
            text = "".join(json.dumps(e) + "\n" for e in events)
            (trial / "agent" / "claude-code.txt").write_text(text, encoding="utf-8")
        else:
            (trial / "exception.txt").write_text("EnvironmentStartTimeoutError\n")
        doc = {
            "task_name": task,
            "trial_name": f"{task}_{n}",
            "agent_info": {"name": "claude-code", "version": "2.1.0"},
            "verifier_result": None if reward is None else {"rewards": {"reward": reward}},
            "exception_info": exc,
        }
        (trial / "result.json").write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    return root
