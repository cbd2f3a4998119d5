"""Benchmark (a script, not a test): where a warm `evalkit sweep DIR --json` spends its time.

Usage:
    python tests/benchmarks/bench_warm.py [DIR] [--rounds 5] [--store STORE] [--cold]

In one process, on a store that already holds every session of DIR (filled first when empty),
it times each phase of a warm sweep separately, best of `--rounds`: discovery, loading the
store (reading and checking the side indexes), the lookups and records, the arm table, the
corpus tables, the accounting, building the `--json` document and writing it. The imports the
command needs are timed once, in a fresh interpreter. With `--cold` it also times a cold
`run_sweep` + `render_json` in this process (an empty store each round) and prints warm ÷ cold.
It asserts nothing; it checks only that the warm JSON is the cold JSON.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

_IMPORTS = (
    "import time; t = time.perf_counter(); import evalkit.cli, evalkit.commands.sweep, "
    "evalkit.tables.sweep, evalkit.outputs.sweep_text; print(time.perf_counter() - t)"
)


def _best(fn, rounds: int):
    best, value = float("inf"), None
    for _ in range(rounds):
        t = time.perf_counter()
        value = fn()
        best = min(best, time.perf_counter() - t)
    return best, value


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("dir", nargs="?", default=str(REPO / "data" / "corpus"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--store", help="store directory (default: a temporary one)")
    ap.add_argument("--cold", action="store_true", help="also time a cold sweep in-process")
    args = ap.parse_args()

    env = dict(os.environ, PYTHONPATH=str(REPO))
    imports = min(
        float(
            subprocess.run(
                [sys.executable, "-c", _IMPORTS],
                env=env,
                capture_output=True,
                text=True,
                check=True,
            ).stdout
        )
        for _ in range(args.rounds)
    )

    from evalkit.corpus.discover import discover
    from evalkit.corpus.parse import analyse_sessions
    from evalkit.corpus.records import account_files
    from evalkit.outputs.sweep_text import render_json, to_json_dict
    from evalkit.store.shards import CorpusStore
    from evalkit.tables.aggregate import arm_table, corpus_counts, per_call, slice_table
    from evalkit.tables.sweep import run_sweep

    store_dir = args.store or tempfile.mkdtemp(prefix="bench-warm-")
    root = Path(args.dir)
    t = time.perf_counter()
    first = run_sweep(root, cache_dir=store_dir)
    fill = time.perf_counter() - t
    cold_json = render_json(first)

    phases: list[tuple[str, float]] = []
    t_disc, found = _best(lambda: discover(root), args.rounds)
    phases.append(("discover", t_disc))

    def load():
        s = CorpusStore(store_dir, root)
        s._load()
        return s

    t_load, _ = _best(load, args.rounds)
    phases.append(("store load (side indexes, checks)", t_load))

    def records():
        s = load()
        return tuple(analyse_sessions(root, found.sessions, cache=s, progress=None))

    t_rec, recs = _best(records, args.rounds)
    phases.append(("lookups + records (stat, no load)", t_rec - t_load))
    t_arm, _ = _best(lambda: arm_table(recs), args.rounds)
    phases.append(("arm table", t_arm))
    t_tab, _ = _best(lambda: (corpus_counts(recs), slice_table(recs), per_call(recs)), args.rounds)
    phases.append(("corpus line, slices, per call", t_tab))
    t_acc, _ = _best(lambda: account_files(found, recs), args.rounds)
    phases.append(("accounting", t_acc))
    result = run_sweep(root, cache_dir=store_dir)
    _ = result.counts, result.slices, result.per_call, result.accounting, result.agents
    t_doc, doc = _best(lambda: to_json_dict(result), args.rounds)
    phases.append(("--json document", t_doc))
    from evalkit.ecma import js_json

    t_write, _ = _best(lambda: js_json(doc, 2), args.rounds)
    phases.append(("--json writing", t_write))

    def warm():
        return render_json(run_sweep(root, cache_dir=store_dir))

    t_warm, warm_json = _best(warm, args.rounds)

    print(f"corpus {root}: {len(found.sessions)} sessions, {len(found.files)} entries")
    print(f"  first sweep (fills the store when empty): {fill:.3f} s")
    print(f"  imports of the command (fresh interpreter): {imports * 1000:7.1f} ms")
    for name, sec in phases:
        print(f"  {name:<40} {sec * 1000:7.1f} ms")
    print(f"  warm run_sweep + render_json, in-process: {t_warm * 1000:7.1f} ms")
    print(f"  warm JSON identical to the first sweep's: {warm_json == cold_json}")
    if args.cold:

        def cold():
            with tempfile.TemporaryDirectory(prefix="bench-cold-") as d:
                return render_json(run_sweep(root, cache_dir=d))

        t_cold, cold2 = _best(cold, max(1, min(args.rounds, 3)))
        print(f"  cold run_sweep + render_json, in-process: {t_cold * 1000:7.1f} ms")
        print(f"  warm / cold (in-process): {t_warm / t_cold:.4f}")
        print(f"  cold JSON identical: {cold2 == cold_json}")


if __name__ == "__main__":
    main()
