"""A small corpus for the HTML report's tests, built by helpers (no pasted blobs).

`build_report_corpus(root)` writes:

* `p1/ab-demo/run-baseline-1.jsonl`, `run-new-1.jsonl`: headless A/B runs with a prompt, explore
  calls whose sections the answer cites by path and by symbol (and one it does not cite), a
  subagent thread started by an `Agent` call, a compaction, and a long result that is folded;
* `p1/ab-demo/run-new-2.jsonl` (+ `.t2`): a two-segment session;
* `-tmp-proj/<uuid>.jsonl` with `<uuid>/subagents/agent-s1.jsonl`: an interactive session whose
  subagent was started by its `Task` call;
* `codex/rollout-….jsonl`: a Codex rollout (`tests.agent_builders`);
* with `hostile=True`, `p1/ab-demo/run-hostile-1.jsonl`: tool output holding markup, a
  `javascript:` link, bidi controls, a lone surrogate and a 5 MB line (`HOSTILE_*`).
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.agent_builders import codex_session_lines, write_rollout
from tests.builders import (
    ASST,
    COMPACT,
    DONE,
    RESULT,
    SUB,
    TEXT,
    USE,
    E,
    _result_event,
    alloc_text,
    lines,
    write_jsonl,
)

PROMPT = "Where does the app decide the response type?"
ANSWER = "It is decided in src/app.js by `helper`, with the final step in handle()."
LONG_CHARS = 30_000  # longer than the page shows inline
EXPLORE_FILES = [
    ("src/app.js", "handle(function)", 400),
    ("src/util.js", "helper(function)", 300),
    ("src/unused.js", "nothing(function)", 200),
]
UUID = "3f9a6c1d-0b2e-4d7a-8c55-91e2f4b7a631"

HOSTILE_SCRIPT = "<script>alert(1)</script>"
HOSTILE_IMG = "<img src=x onerror=alert(2)>"
HOSTILE_LINK = '<a href="javascript:alert(3)">click</a> [md](javascript:alert(3))'
HOSTILE_CLOSE = "</script><!-- <script>alert(4)</script>"
HOSTILE_BIDI = "admin\u202e gnp.exe"
HOSTILE_MB = 5 * 1024 * 1024


def user(text: str) -> dict:
    return {"type": "user", "message": {"role": "user", "content": text}}


def result(id: str, text: str, error: bool = False) -> list[dict]:
    return _result_event(id, text, error)


def ab_run(arm: str, *, long: bool = True) -> list[dict]:
    """One headless run: prompt, text, an explore call, a subagent thread, a compaction, a long
    read, the answer (citing src/app.js by path and util.js through `helper`)."""
    return lines(
        {"type": "system", "subtype": "init", "model": "test-model", "tools": [E, "Read"]},
        user(PROMPT),
        ASST(1000, "m1", [TEXT("Let me explore."), USE("x1", E, {"query": "response type"})]),
        result("x1", alloc_text(EXPLORE_FILES)),
        ASST(2000, "m2", [USE("a1", "Agent", {"prompt": "check util"})]),
        SUB("a1", ASST(500, "s1", [USE("r1", "Read", {"file_path": "src/util.js"})])),
        SUB("a1", result("r1", "1\tfunction helper() {}\n")),
        SUB("a1", ASST(600, "s2", [TEXT("util.js defines helper.")])),
        result("a1", "util.js defines helper."),
        COMPACT,
        ASST(3000, "m3", [USE("r2", "Read", {"file_path": "src/big.js"})]),
        result("r2", ("L" * 99 + "\n") * (LONG_CHARS // 100) if long else "short"),
        ASST(3100, "m4", [TEXT(ANSWER)]),
        RESULT(ANSWER, duration_ms=2000, total_cost_usd=0.25),
    )


def hostile_run() -> list[dict]:
    text = "\n".join([HOSTILE_SCRIPT, HOSTILE_IMG, HOSTILE_LINK, HOSTILE_CLOSE, HOSTILE_BIDI])
    return lines(
        user(f"{HOSTILE_SCRIPT} please {HOSTILE_IMG}"),
        ASST(1000, "h1", [USE("h-1", f"mcp__x__{HOSTILE_IMG}", {"url": "javascript:alert(5)"})]),
        result("h-1", text),
        ASST(1100, "h2", [USE("h-2", "Bash", {"command": "cat big"})]),
        result("h-2", "A" * HOSTILE_MB + HOSTILE_SCRIPT),
        ASST(1200, "h3", [TEXT("lone \ud800 surrogate " + HOSTILE_CLOSE)]),
        RESULT(f"done {HOSTILE_CLOSE} \ud800 {HOSTILE_BIDI}"),
    )


def _write_events(path: Path, events: list[dict]) -> Path:
    """`write_jsonl` with lone surrogates kept (escaped as JSON `\\ud800`, as a log has them)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(json.dumps(e) for e in events) + "\n", encoding="ascii")
    return path


def interactive_session(log_dir: Path) -> Path:
    """`<log_dir>/<UUID>.jsonl` whose `Task` call `t1` started subagent `agent-s1`."""
    main = [
        {"type": "user", "message": {"role": "user", "content": PROMPT}},
        *ASST(800, "i1", [USE("t1", "Task", {"prompt": "look"})]),
        *result("t1", "the subagent looked"),
        *ASST(900, "i2", [TEXT(ANSWER)]),
    ]
    sub_dir = log_dir / UUID / "subagents"
    sub_dir.mkdir(parents=True)
    write_jsonl(
        sub_dir / "agent-s1.jsonl",
        [
            *ASST(300, "j1", [USE("g1", "Grep", {"pattern": "helper"})]),
            *result("g1", "src/util.js"),
        ],
    )
    (sub_dir / "agent-s1.meta.json").write_text(json.dumps({"toolUseId": "t1"}))
    return write_jsonl(log_dir / f"{UUID}.jsonl", main)


def build_report_corpus(root: Path, *, hostile: bool = False) -> Path:
    """The report fixture corpus under `root` (see the module docstring)."""
    demo = root / "p1" / "ab-demo"
    demo.mkdir(parents=True)
    write_jsonl(demo / "run-baseline-1.jsonl", ab_run("baseline"))
    write_jsonl(demo / "run-new-1.jsonl", ab_run("new"))
    write_jsonl(demo / "run-new-2.jsonl", ab_run("new", long=False))
    write_jsonl(
        demo / "run-new-2.t2.jsonl",
        lines(user("And then?"), ASST(100, "t2", [TEXT("Then it sends.")]), DONE),
    )
    interactive_session(root / "-tmp-proj")
    (root / "codex").mkdir()
    write_rollout(root / "codex" / "rollout-2026-01-01T00-00-00-demo.jsonl", codex_session_lines())
    if hostile:
        _write_events(demo / "run-hostile-1.jsonl", hostile_run())
    return root
