"""Benchmark (a script, not a test): cold and warm wall times of `evalkit sweep`.

Usage:
    python tests/benchmarks/bench_sweep.py [--scale 10] [--jobs N] [--no-scaled]

Prints, for the bundled corpus and for a corpus `--scale` times larger generated into a temporary
directory by the corpus generator (`python -m evalkit.synthetic generate OUT --scale N`):

* cold: an empty cache directory (every session parsed, in parallel over the cores);
* warm: the same cache directory again (nothing re-parsed);
* no cache, one process: the serial baseline the parallel parse is measured against.

Each figure is the wall time of the whole `evalkit sweep DIR --json` command, as a user sees it.
Nothing is asserted; performance goals are read off the printed figures.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "data" / "corpus"


# Runs the sweep as `evalkit sweep DIR --json` does, in a fresh interpreter (imports included),
# and reports the cache hits so a figure is never mistaken for a warm one when it was not: the
# cache key includes a digest of evalkit's source, so an edit between runs turns warm into cold.
_RUNNER = """
import sys
from evalkit.tables.sweep import run_sweep
from evalkit.outputs.sweep_text import render_json
root, cache_dir, jobs = sys.argv[1], sys.argv[2], int(sys.argv[3]) or None
r = run_sweep(root, cache=cache_dir != "-", cache_dir=None if cache_dir == "-" else cache_dir,
              jobs=jobs)
sys.stdout.write(render_json(r))
print(r.cache_hits, r.cache_misses, file=sys.stderr)
"""


def sweep(corpus: Path, cache_dir: str, jobs: int) -> tuple[float, dict, str]:
    t0 = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", _RUNNER, str(corpus), cache_dir, str(jobs)],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    elapsed = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"sweep of {corpus} failed: {done.stderr.strip()}")
    hits, misses = done.stderr.split()[-2:]
    return elapsed, json.loads(done.stdout), f"{hits} cached, {misses} parsed"


def size_mb(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 1e6


def bench(name: str, corpus: Path, jobs: int) -> None:
    with tempfile.TemporaryDirectory(prefix="evalkit-bench-cache-") as cache:
        cold, doc, cold_n = sweep(corpus, cache, jobs)
        warm, doc2, warm_n = sweep(corpus, cache, jobs)
    serial, doc3, _ = sweep(corpus, "-", 1)
    assert doc == doc2 == doc3, "cache or parallelism changed a number"
    cores = jobs or os.cpu_count()
    print(
        f"{name}: {doc['sessions']} sessions in the sweep, {doc['calls']} explore calls, "
        f"{len(doc['skipped'])} skipped entries, {size_mb(corpus):.1f} MB on disk"
    )
    print(f"  cold (empty cache, {cores} processes)  {cold:7.2f} s   ({cold_n})")
    print(f"  warm (same cache)                  {warm:7.2f} s   ({warm_n})")
    print(f"  no cache, one process              {serial:7.2f} s")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=int, default=10)
    ap.add_argument("--jobs", type=int)
    ap.add_argument("--no-scaled", action="store_true", help="only the bundled corpus")
    args = ap.parse_args()
    jobs = args.jobs or 0
    if not CORPUS.is_dir():
        print("data/corpus is missing: generate the bundled corpus first", file=sys.stderr)
        return 2
    bench("bundled corpus", CORPUS, jobs)
    if args.no_scaled:
        return 0
    with tempfile.TemporaryDirectory(prefix="evalkit-bench-corpus-") as tmp:
        out = Path(tmp) / "corpus"
        t0 = time.perf_counter()
        gen = subprocess.run(
            [
                sys.executable,
                "-m",
                "evalkit.synthetic",
                "generate",
                str(out),
                "--scale",
                str(args.scale),
            ],
            capture_output=True,
            text=True,
            cwd=REPO,
        )
        if gen.returncode != 0:
            print(
                f"{args.scale}x corpus: the generator failed: {gen.stderr.strip()}", file=sys.stderr
            )
            return 2
        print(f"({args.scale}x corpus generated in {time.perf_counter() - t0:.1f} s)")
        bench(f"{args.scale}x corpus", out, jobs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
