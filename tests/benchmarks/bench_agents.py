"""Benchmark (a script, not a test): how fast the Codex and Inspect readers read, and what format
detection adds to a Claude Code sweep.

Usage:
    python tests/benchmarks/bench_agents.py [--turns 200] [--samples 100] [--repeat 3]

Prints, side by side in one run:

* a Codex rollout of `--turns` turns (each: a user prompt, reasoning, three shell calls with
  outputs, four token counts, an answer), built by the test helpers: lines per second of
  `read_rollout`, against `read_segment` (the Claude Code line reader) on the same file, and
  the time `agent_occupancy` (the Codex residual) takes on the session read;
* a `codex exec --json` stream of the same size: events per second of `read_exec_json`;
* an Inspect `.eval` log of `--samples` samples written with Inspect's API (when the `inspect`
  extra is installed): samples per second of `read_inspect_log`;
* `detect_format` per file on the bundled corpus, beside reading every file once: what `evalkit
  run FILE` spends telling formats apart (a sweep runs it only on files Claude Code's reader
  refused, so a Claude Code corpus pays nothing).

Nothing is asserted; the figures are read off the output (best of `--repeat`).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from evalkit.formats.claude_code.transcripts import read_segment  # noqa: E402
from evalkit.formats.codex.exec_json import read_exec_json  # noqa: E402
from evalkit.formats.codex.rollout import read_rollout  # noqa: E402
from evalkit.formats.detect import detect_format  # noqa: E402
from evalkit.formats.inspect.logs import inspect_available, read_inspect_log  # noqa: E402
from evalkit.metrics.agent_occupancy import agent_occupancy  # noqa: E402
from tests import agent_builders as b  # noqa: E402


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def rollout_lines(turns: int) -> list[dict]:
    lines = [b.meta("00000000-0000-7000-8000-0000000000aa")]
    total = b.usage(0, 0, 0, 0)
    for t in range(turns):
        lines += [b.turn_context(f"turn-{t}"), b.user_message(f"question {t}")]
        lines.append(b.reasoning("thinking " * 20))
        for k in range(3):
            cid = f"call_{t}_{k}"
            lines.append(b.function_call(cid, "shell", {"command": ["bash", "-lc", f"rg x{k}"]}))
            last = b.usage(1000 + 100 * k, 800, 50, 10)
            total = {key: total[key] + last[key] for key in total}
            lines.append(b.token_count(dict(total), last))
            lines.append(b.function_output(cid, b.structured_shell("out\n" * 50, 0)))
        last = b.usage(1500, 1200, 80, 0)
        total = {key: total[key] + last[key] for key in total}
        lines += [b.assistant(f"answer {t}"), b.token_count(dict(total), last)]
    return lines


def exec_events(turns: int) -> list[dict]:
    out = [b.ev("thread.started", thread_id="t")]
    n = 0
    for t in range(turns):
        out.append(b.ev("turn.started"))
        for _ in range(3):
            item = {"command": "rg x", "aggregated_output": "out\n" * 50, "exit_code": 0}
            out.append(b.it("item.started", f"item_{n}", "command_execution", status="in_progress"))
            out.append(b.it("item.completed", f"item_{n}", "command_execution", **item))
            n += 1
        out.append(b.it("item.completed", f"item_{n}", "agent_message", text=f"answer {t}"))
        n += 1
        usage = {"input_tokens": 1000 * (t + 1), "cached_input_tokens": 800 * (t + 1)}
        out.append(b.ev("turn.completed", usage={**usage, "output_tokens": 50 * (t + 1)}))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--turns", type=int, default=200)
    ap.add_argument("--samples", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        rollout = b.write_rollout(tmp / "rollout.jsonl", rollout_lines(args.turns))
        n_lines = sum(1 for _ in rollout.open())
        t_codex = best(lambda: read_rollout(rollout), args.repeat)
        t_lines = best(lambda: read_segment(str(rollout)), args.repeat)
        print(f"Codex rollout, {n_lines} lines ({rollout.stat().st_size // 1024} KiB):")
        print(f"  read_rollout      {t_codex * 1000:8.1f} ms  {n_lines / t_codex:10,.0f} lines/s")
        print(f"  read_segment      {t_lines * 1000:8.1f} ms  {n_lines / t_lines:10,.0f} lines/s")
        print(f"  ratio             {t_codex / t_lines:8.2f}x the Claude Code line reader")
        session = read_rollout(rollout)
        t_occ = best(lambda: agent_occupancy(session), args.repeat)
        print(
            f"  agent_occupancy   {t_occ * 1000:8.1f} ms  (the residual, on the read session: "
            f"{t_occ / t_codex * 100:.1f}% of reading it)"
        )

        stream = b.write_events(tmp / "exec.jsonl", exec_events(args.turns))
        n_events = sum(1 for _ in stream.open())
        t_exec = best(lambda: read_exec_json(stream), args.repeat)
        print(f"codex exec --json, {n_events} events:")
        print(f"  read_exec_json    {t_exec * 1000:8.1f} ms  {n_events / t_exec:10,.0f} events/s")

        if inspect_available():
            samples = [
                {
                    "id": f"q-{i:04d}",
                    "calls": [
                        (f"c{i}_{k}", "bash", {"cmd": "ls"}, "out\n" * 20, None) for k in range(5)
                    ],
                    "answer": "done",
                    "scores": {"match": "C"},
                    "usage": {
                        "openai/m": {
                            "input_tokens": 1000,
                            "output_tokens": 50,
                            "total_tokens": 1050,
                        }
                    },
                }
                for i in range(args.samples)
            ]
            log = b.inspect_log(tmp / "log.eval", samples)
            t_insp = best(lambda: list(read_inspect_log(log)), args.repeat)
            print(f"Inspect .eval, {args.samples} samples:")
            print(
                f"  read_inspect_log  {t_insp * 1000:8.1f} ms  {args.samples / t_insp:10,.0f} samples/s"
            )
        else:
            print("Inspect .eval: skipped (the inspect extra is not installed)")

    files = sorted((REPO / "data" / "corpus").rglob("*.jsonl"))
    t_detect = best(lambda: [detect_format(f) for f in files], args.repeat)
    t_read = best(lambda: [read_segment(str(f)) for f in files], 1)
    print(f"Format detection over the bundled corpus ({len(files)} files):")
    print(
        f"  detect_format     {t_detect * 1000:8.1f} ms  ({t_detect / len(files) * 1e6:.0f} us a file)"
    )
    print(f"  read_segment      {t_read * 1000:8.1f} ms  (reading every file once)")
    print(f"  detection is      {t_detect / t_read * 100:8.1f}% of the reading time")


if __name__ == "__main__":
    main()
