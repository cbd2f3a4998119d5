"""A small synthetic harbor-layout corpus: an MCP A/B that is not codegraph's (issue 14, Build 7).

    <suite>/<arm>/<task>/<task>_<n>/agent/claude-code.txt     stream-json (a .txt name)
    <suite>/<arm>/<task>/<task>_<n>/agent/trajectory.json     the same run in ATIF (not counted)
    <suite>/<arm>/<task>/<task>_<n>/agent/sessions/projects/-workspace/<id>.jsonl
                                                              the interactive copy (not counted)
    <suite>/<arm>/<task>/<task>_<n>/result.json               verifier_result.rewards.reward
    <suite>/<arm>/<task>/<task>_<n>/config.json, verifier/reward.txt

Two arms: `baseline` (Claude Code's own tools) and `sourcegraph` (adds
`mcp__sourcegraph__sg_keyword_search` and `mcp__sourcegraph__sg_read_file`). Every task is run
`trials` times per arm; each trial gets a reward of 0 or 1 from a per-task, per-arm pass rate. The
transcripts carry the newer stream-json fields (`caller`, `tool_use_result`) and a
`rate_limit_event`. Everything is invented and seeded: the same seed writes byte-identical files,
and the numbers demonstrate the pipeline only — they say nothing about any real tool.
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path
from typing import Any

from evalkit.synthetic.stream import Stream

__all__ = [
    "HARBOR_SEED",
    "HARBOR_SUITE",
    "HARBOR_ARMS",
    "HARBOR_TASKS",
    "SG_SEARCH",
    "SG_READ",
    "generate_harbor_corpus",
    "is_synthetic_harbor",
]

HARBOR_SEED = 14
HARBOR_SUITE = "synthetic-suite"
HARBOR_ARMS = ("baseline", "sourcegraph")
SG_SEARCH = "mcp__sourcegraph__sg_keyword_search"
SG_READ = "mcp__sourcegraph__sg_read_file"
_BASE_TOOLS = ["Task", "Bash", "Glob", "Grep", "Read", "Edit", "TodoWrite"]
# (task, files of its invented repository, the file the fix is in, pass rate baseline/sourcegraph)
HARBOR_TASKS: tuple[tuple[str, tuple[str, ...], str, float, float], ...] = (
    (
        "fix-retry-loop",
        ("pkg/net/retry.go", "pkg/net/dial.go", "pkg/net/pool.go"),
        "pkg/net/retry.go",
        0.5,
        0.9,
    ),
    (
        "config-flag",
        ("cmd/app/flags.go", "internal/conf/load.go", "README.md"),
        "internal/conf/load.go",
        0.6,
        0.6,
    ),
    (
        "parse-headers",
        ("src/http/headers.rs", "src/http/mod.rs", "src/lib.rs"),
        "src/http/headers.rs",
        0.3,
        0.8,
    ),
    (
        "cache-eviction",
        ("lib/cache/lru.py", "lib/cache/__init__.py", "tests/test_lru.py"),
        "lib/cache/lru.py",
        0.7,
        0.5,
    ),
    (
        "rename-endpoint",
        ("api/routes.ts", "api/handlers/user.ts", "api/index.ts"),
        "api/routes.ts",
        0.2,
        0.7,
    ),
    ("flaky-timeout", ("core/timer.c", "core/timer.h", "core/loop.c"), "core/timer.c", 0.4, 0.6),
)
# The corpus's README; its first line marks the corpus as this generator's (`is_synthetic_harbor`).
README = (
    "Synthetic harbor-layout corpus written by evalkit (evalkit.synthetic.harbor).\n"
    "Every transcript, reward and number in it is invented; it demonstrates the pipeline only.\n"
)
_RATIOS = {"explore": 3.1, "read": 3.3, "tool": 3.0, "text": 3.9}
_WORKSPACE = "/workspace"


def _source(rng: random.Random, path: str, lines: int) -> str:
    body = "\n".join(
        f"{i + 1}\t"
        + " ".join(
            rng.choice(("ctx", "err", "val", "buf", "cfg", "n"))
            for _ in range(rng.randrange(2, 12))
        )
        for i in range(lines)
    )
    return f"{path}\n{body}\n"


def _trial_events(
    rng: random.Random, arm: str, files: tuple[str, ...], target: str, sid: str, interactive: bool
) -> tuple[list[dict[str, Any]], str]:
    st = Stream(
        rng=rng,
        session_id=sid,
        base_ctx=14000 + rng.randrange(2000),
        ratios=_RATIOS,
        cwd=_WORKSPACE,
        interactive=interactive,
    )
    tools = _BASE_TOOLS + ([SG_SEARCH, SG_READ] if arm == "sourcegraph" else [])
    st.begin_segment(
        tools, f"Fix the bug described in the task; the repository is at {_WORKSPACE}."
    )
    others = [f for f in files if f != target]
    if arm == "sourcegraph":
        tid = st.tool_use(SG_SEARCH, {"query": target.rsplit("/", 1)[-1].split(".")[0]})
        st.tool_result(tid, "\n".join(f"{f}:{rng.randrange(1, 200)}: match" for f in files), "tool")
        for f in [target] + others[: rng.randrange(0, 2)]:
            tid = st.tool_use(SG_READ, {"repo": "example/repo", "path": f})
            st.tool_result(tid, _source(rng, f, rng.randrange(40, 160)), "read")
    else:
        tid = st.tool_use("Grep", {"pattern": "TODO|FIXME", "path": _WORKSPACE})
        st.tool_result(tid, "\n".join(f"{_WORKSPACE}/{f}" for f in files), "tool")
        for f in others[: rng.randrange(1, 3)] + [target]:
            tid = st.tool_use("Read", {"file_path": f"{_WORKSPACE}/{f}"})
            st.tool_result(tid, _source(rng, f, rng.randrange(60, 220)), "read")
    if not interactive and rng.random() < 0.5:
        st.segments[-1].append(
            {
                "type": "rate_limit_event",
                "rate_limit_info": {"status": "allowed"},
                "session_id": sid,
            }
        )
    tid = st.tool_use("Bash", {"command": "make test", "description": "run the tests"})
    st.tool_result(tid, "ok\n" * rng.randrange(3, 30), "tool")
    answer = f"The fault was in `{target}`; fixed and the tests pass."
    st.answer(answer)
    st.result(answer, duration_s=30 + rng.randrange(200))
    events = st.segments[-1]
    for ev in events:  # the newer fields of Claude Code 2.1 (agent-formats §5.4)
        content = ev.get("message", {}).get("content")
        for block in content if isinstance(content, list) else []:
            if block.get("type") == "tool_use":
                block["caller"] = {"type": "direct"}
            elif block.get("type") == "tool_result":
                ev["tool_use_result"] = {"content": block["content"]}
    return events, answer


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _jsonl(events: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in events)


def generate_harbor_corpus(
    out: str | os.PathLike[str],
    *,
    seed: int = HARBOR_SEED,
    tasks: int = len(HARBOR_TASKS),
    trials: int = 2,
    suite: str = HARBOR_SUITE,
) -> int:
    """Write the corpus under `out`; returns the number of files written.

    Raises:
        ValueError: `tasks` is not 1..6 or `trials` is below 1.
    """
    if not 1 <= tasks <= len(HARBOR_TASKS) or trials < 1:
        raise ValueError(f"tasks must be 1..{len(HARBOR_TASKS)} and trials at least 1")
    root = Path(out)
    written = 0
    for arm in HARBOR_ARMS:
        for task, files, target, p_base, p_sg in HARBOR_TASKS[:tasks]:
            for n in range(1, trials + 1):
                key = f"{seed}:{suite}:{arm}:{task}:{n}"
                rng = random.Random(key)
                sid = (
                    "00000000-0000-4000-8000-"
                    + f"{random.Random(key + ':id').randrange(16**12):012x}"
                )
                trial = root / suite / arm / task / f"{task}_{n}"
                events, _ = _trial_events(
                    random.Random(key + ":run"), arm, files, target, sid, False
                )
                _write(trial / "agent" / "claude-code.txt", _jsonl(events))
                copy, _ = _trial_events(random.Random(key + ":run"), arm, files, target, sid, True)
                _write(
                    trial / "agent" / "sessions" / "projects" / "-workspace" / f"{sid}.jsonl",
                    _jsonl(copy),
                )
                steps = [
                    {
                        "step_id": i + 1,
                        "source": "agent" if e.get("type") == "assistant" else "user",
                    }
                    for i, e in enumerate(events)
                    if e.get("type") in ("assistant", "user")
                ]
                _write(
                    trial / "agent" / "trajectory.json",
                    json.dumps(
                        {"schema_version": "ATIF-v1.2", "session_id": sid, "steps": steps}, indent=2
                    )
                    + "\n",
                )
                reward = 1.0 if rng.random() < (p_sg if arm == "sourcegraph" else p_base) else 0.0
                result = {
                    "task_name": task,
                    "trial_name": f"{task}_{n}",
                    "agent_info": {
                        "name": "claude-code",
                        "version": "2.1.0",
                        "model_info": {"name": "example-model", "provider": "anthropic"},
                    },
                    "agent_result": {
                        "n_input_tokens": None,
                        "n_cache_tokens": None,
                        "n_output_tokens": None,
                        "cost_usd": None,
                    },
                    "verifier_result": {"rewards": {"reward": reward}},
                    "exception_info": None,
                    "started_at": "2030-01-01T10:00:00Z",
                    "finished_at": "2030-01-01T10:05:00Z",
                }
                _write(trial / "result.json", json.dumps(result, indent=2) + "\n")
                _write(
                    trial / "config.json",
                    json.dumps(
                        {"task": {"name": task}, "agent": {"name": "claude-code"}, "arm": arm},
                        indent=2,
                    )
                    + "\n",
                )
                _write(trial / "verifier" / "reward.txt", f"{reward}\n")
                written += 6
    _write(
        root / "README.md",
        "Synthetic harbor-layout corpus written by evalkit (evalkit.synthetic.harbor).\nEvery transcript, reward and number in it is invented; it demonstrates the pipeline only.\n",
    )
    return written + 1


def is_synthetic_harbor(root: str | os.PathLike[str]) -> bool:
    """The directory holds a corpus this generator wrote (its README says so)."""
    try:
        with open(Path(root) / "README.md", encoding="utf-8") as fh:
            return fh.readline() == README.splitlines(keepends=True)[0]
    except (OSError, UnicodeDecodeError):
        return False
