"""Small builders for arm-comparison and campaign fixtures (spec §7.2, §7.3, §8.4, §8.5).

`run_events` writes one headless segment whose figures are known by construction: each explore
returns `lib/a.js` (cited) and `lib/b.js` (not cited), each extra tool call is one request, the
result carries the duration and subtype asked for.
"""

from __future__ import annotations

from pathlib import Path

from tests.builders import ASST, RESULT, TEXT, USE, E, _result_event, alloc_text, lines
from tests.sweep_helpers import put

CITED = ("lib/a.js", "fa(function)", 60)
UNCITED = ("lib/b.js", "fb(function)", 40)
RACE_TEXT = "<tool_use_error>Error: No such tool available: mcp__codegraph__codegraph_explore"


def run_events(
    *,
    explores: int = 1,
    reads: int = 0,
    greps: int = 0,
    bash: int = 0,
    dur_ms: int = 1000,
    subtype: str = "success",
    raced: bool = False,
    cli: str | None = None,
    errored: int = 0,
    answer: str = "It is in `lib/a.js`.",
    ctx: int = 1000,
    prefix: str = "",
    **result_fields,
) -> list[dict]:
    """One segment: `explores` explore calls (each answered with a cited and an uncited file),
    then `errored` explores whose result is an error, `reads` Reads, `greps` Greps, `bash`
    plain Bash calls, an optional codegraph CLI call (`cli` = "returned" or "blocked"), an
    optional cold-start race, and the result."""
    groups: list = []
    n = 0

    def call(name: str, inp: dict, text: str, error: bool = False) -> None:
        nonlocal n
        n += 1
        tid = f"{prefix}t{n}"
        groups.append(ASST(ctx + 100 * n, f"{prefix}m{n}", [USE(tid, name, inp)]))
        groups.append(_result_event(tid, text, error))

    for _ in range(explores):
        call(E, {"query": "q"}, alloc_text([CITED, UNCITED]))
    for _ in range(errored):
        call(E, {"query": "q"}, "boom", error=True)
    if raced:
        call(E, {"query": "q"}, RACE_TEXT, error=True)
    for i in range(reads):
        call("Read", {"file_path": f"/repo/lib/r{i}.js"}, "r" * 30)
    for _ in range(greps):
        call("Grep", {"pattern": "x"}, "g" * 20)
    for _ in range(bash):
        call("Bash", {"command": "ls lib"}, "b" * 10)
    if cli == "returned":
        call("Bash", {"command": "codegraph explore q"}, "c" * 50)
    elif cli == "blocked":
        call("Bash", {"command": "codegraph explore q"}, "blocked", error=True)
    groups.append(ASST(ctx + 100 * (n + 1), f"{prefix}m{n + 1}", [TEXT(answer)]))
    groups.append(RESULT(answer, subtype=subtype, duration_ms=dur_ms, **result_fields))
    return lines(*groups)


def write_run(directory: Path, name: str, events: list[dict] | None = None, **kw) -> Path:
    """Write `directory/name` (e.g. `run-new-1.jsonl`) from `events` or `run_events(**kw)`."""
    return put(directory, name, events if events is not None else run_events(**kw))


def campaign_run(root: Path, repo: str, run: str, arm: str, turns: int = 1, **kw) -> None:
    """`root/<repo>/<run>/run-headless-<arm>.jsonl` (+ `.t2` … for `turns` > 1)."""
    d = root / repo / run
    for t in range(1, turns + 1):
        name = f"run-headless-{arm}.jsonl" if t == 1 else f"run-headless-{arm}.t{t}.jsonl"
        write_run(d, name, prefix=f"s{t}", **kw)
