"""Benchmark (a script, not a test): cold and warm wall times of `evalkit sweep`, and the time
`evalkit.load_corpus` takes to load every frame, side by side.

Usage:
    python tests/benchmarks/bench_sweep.py [--scale 10] [--jobs N] [--no-scaled]

Prints, for the bundled corpus and for a corpus `--scale` times larger generated into a temporary
directory by the corpus generator (`python -m evalkit.synthetic generate OUT --scale N`):

* cold: an empty cache directory (every session parsed, in parallel over the cores);
* warm: the same cache directory again (nothing re-parsed);
* no cache, one process: the serial baseline the parallel parse is measured against.

Each figure is the wall time of the whole `evalkit sweep DIR --json` command, as a user sees it.

Frames: `evalkit.load_corpus(DIR)` and every frame built from it (sessions, calls, sections,
files, tool calls), in a fresh interpreter, measured the same three ways; the figure to read is
the ratio of frame loading to the sweep with no cache in one process (the goal: within 1.5x).
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


# Loads every frame as a notebook would, and prints the row counts (checked against the sweep).
_LOADER = """
import sys
import evalkit
root, cache_dir, jobs = sys.argv[1], sys.argv[2], int(sys.argv[3]) or None
if cache_dir != "-":
    import os
    os.environ["XDG_CACHE_HOME"] = cache_dir
corpus = evalkit.load_corpus(root, cache=cache_dir != "-", jobs=jobs)
rows = {name: len(corpus.frame(name)) for name in
        ("sessions", "calls", "sections", "files", "tool_calls")}
print(rows["sessions"], rows["calls"], rows["tool_calls"], corpus.cache_hits, corpus.cache_misses)
"""


def load_frames(corpus: Path, cache_dir: str, jobs: int) -> tuple[float, list[int]]:
    t0 = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", _LOADER, str(corpus), cache_dir, str(jobs)],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    elapsed = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"load_corpus of {corpus} failed: {done.stderr.strip()}")
    return elapsed, [int(x) for x in done.stdout.split()]


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


def bench(name: str, corpus: Path, jobs: int, repeat: int = 3) -> None:
    with tempfile.TemporaryDirectory(prefix="evalkit-bench-cache-") as cache:
        cold, doc, cold_n = sweep(corpus, cache, jobs)
        warm, doc2, warm_n = sweep(corpus, cache, jobs)
    with tempfile.TemporaryDirectory(prefix="evalkit-bench-cache-") as cache:
        f_cold, counts = load_frames(corpus, cache, jobs)
        f_warm, warm_counts = load_frames(corpus, cache, jobs)
    # The comparison the goal is stated in: no cache, one process, the sweep and the frames
    # alternated `repeat` times, best of each (a shared machine's load only ever adds time).
    serials, f_serials = [], []
    for _ in range(repeat):
        serial, doc3, _ = sweep(corpus, "-", 1)
        serials.append(serial)
        f_serial, serial_counts = load_frames(corpus, "-", 1)
        f_serials.append(f_serial)
    serial, f_serial = min(serials), min(f_serials)
    assert doc == doc2 == doc3, "cache or parallelism changed a number"
    assert counts[:3] == warm_counts[:3] == serial_counts[:3], (
        "cache or parallelism changed a frame"
    )
    assert counts[1] == doc["calls"], "frames and sweep disagree on the explore calls"
    cores = jobs or os.cpu_count()
    print(
        f"{name}: {doc['sessions']} sessions in the sweep, {doc['calls']} explore calls, "
        f"{len(doc['skipped'])} skipped entries, {size_mb(corpus):.1f} MB on disk"
    )
    print(f"  cold (empty cache, {cores} processes)  {cold:7.2f} s   ({cold_n})")
    print(f"  warm (same cache)                  {warm:7.2f} s   ({warm_n})")
    print(f"  no cache, one process              {serial:7.2f} s   (best of {repeat})")
    print(
        f"  frames (load_corpus + every frame: {counts[0]} sessions, {counts[1]} calls, "
        f"{counts[2]} tool calls)"
    )
    print(f"    cold (empty cache, {cores} processes) {f_cold:7.2f} s   ({counts[4]} parsed)")
    print(f"    warm (same cache)                 {f_warm:7.2f} s   ({warm_counts[3]} cached)")
    print(f"    no cache, one process             {f_serial:7.2f} s   (best of {repeat})")
    print(
        f"  frames / sweep, no cache, one process: {f_serial / serial:.2f}x   "
        f"(cold {f_cold / cold:.2f}x, warm {f_warm / warm:.2f}x)"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=int, default=10)
    ap.add_argument("--jobs", type=int)
    ap.add_argument("--no-scaled", action="store_true", help="only the bundled corpus")
    ap.add_argument(
        "--repeat", type=int, default=3, help="alternated no-cache runs, best of (default 3)"
    )
    args = ap.parse_args()
    jobs = args.jobs or 0
    if not CORPUS.is_dir():
        print("data/corpus is missing: generate the bundled corpus first", file=sys.stderr)
        return 2
    bench("bundled corpus", CORPUS, jobs, args.repeat)
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
        bench(f"{args.scale}x corpus", out, jobs, args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
