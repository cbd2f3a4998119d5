"""Benchmark (a script, not a test): the trial sweep on a synthetic harbor corpus.

Usage:
    python tests/benchmarks/bench_trials.py [--trials 10] [--jobs N]

Writes the synthetic harbor corpus (`python -m evalkit.synthetic harbor OUT --trials K`) into a
temporary directory and prints, side by side in one run, the wall time of

* the trial sweep, no cache, one process (`--layout harbor --profile sourcegraph`);
* the same, parallel over the cores (cold cache) and again (warm cache);
* reading every transcript once with the same profile and nothing else (the floor).

Nothing is asserted; read the figures and their ratios.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from evalkit.formats.profiles import SOURCEGRAPH
from evalkit.session import parse_session
from evalkit.synthetic.harbor import generate_harbor_corpus
from evalkit.tables.trials import run_trial_sweep


def _timed(fn):
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--trials", type=int, default=10)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "harbor"
        generate_harbor_corpus(root, trials=args.trials)
        files = sorted(root.rglob("agent/claude-code.txt"))
        cache = Path(tmp) / "cache"
        floor, _ = _timed(lambda: [parse_session(f, profile=SOURCEGRAPH) for f in files])
        serial, t = _timed(
            lambda: run_trial_sweep(
                root, layout="harbor", profile="sourcegraph", cache=False, jobs=1
            )
        )
        cold, _ = _timed(
            lambda: run_trial_sweep(
                root, layout="harbor", profile="sourcegraph", cache_dir=cache, jobs=args.jobs
            )
        )
        warm, w = _timed(
            lambda: run_trial_sweep(
                root, layout="harbor", profile="sourcegraph", cache_dir=cache, jobs=args.jobs
            )
        )
        print(f"{len(files)} runs ({len(t.accounting)} files), {args.jobs} jobs")
        print(f"  parse only, one process    {floor:7.2f} s")
        print(f"  trial sweep, one process   {serial:7.2f} s  ({serial / floor:.2f}x the parse)")
        print(f"  trial sweep, cold cache    {cold:7.2f} s")
        print(
            f"  trial sweep, warm cache    {warm:7.2f} s  ({w.cache_hits} hits; {cold / warm:.1f}x faster)"
        )


if __name__ == "__main__":
    main()
