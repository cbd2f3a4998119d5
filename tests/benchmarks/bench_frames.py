"""Benchmark (a script, not a test): the frames and the store, cold and warm, at several sizes.

Usage:
    python tests/benchmarks/bench_frames.py [--scales 1,10,30,100] [--rounds 3] [--jobs N]
                                            [--corpora DIR]

For the bundled corpus (scale 1) and corpora `K` times larger made by the generator
(`python -m evalkit.synthetic generate OUT --scale K`, in a temporary directory; a scale whose
corpus would not fit on the disk is skipped with a message), it measures, round after round with
the contenders and the scales interleaved (a busy machine slows each alike, so the time
exponents hold too), the best wall time and the peak
resident memory (the largest process of the command) of:

* frames cold / warm: `load_corpus(DIR)` with every frame taken (not its records), on an empty
  store and again on the store it filled (the frames read from the load plan the first load
  wrote, which keeps them; their peak memory is the load's, taken before the frames' digest
  that checks every round: hashing their text costs more than reading them); each also as
  measured inside its process ("in-process": the interpreter started and pandas, evalkit and the
  loader's modules, `evalkit.tables.corpus`, imported before the clock starts), the figure a
  notebook's user sees. What a load imports on its own first use stays inside the clock, as a
  user's first load pays it: pyarrow's Parquet reader and pandas' Arrow conversion, and the
  price table when a price is not kept in the store;
* sweep cold / warm: `evalkit sweep DIR --json` on an empty store and on that store with its
  stored output removed (the sessions read from the store, the tables computed); and with no
  store (`--no-cache`), whose cold sweep's excess is what the store costs a cold sweep;
* export cold / warm: `evalkit export DIR --to OUT` likewise.

It prints each figure and the ratios the goals are read from — warm ÷ cold for the frames
(whole command and in-process) and the sweep, the store's cost of a cold sweep, the frames'
peak memory at the largest scale ÷ at 1×, and the time exponents 1×→30× and 30×→100× (the
slope of log time on log sessions; 1.0 is linear). It asserts nothing; it checks only that
every round of a contender printed the same output.

`--corpora DIR` takes the corpus of scale K from `DIR/Kx` when it is there (made once with the
generator, kept), instead of generating it in the temporary directory.
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Collection
from pathlib import Path
from typing import NamedTuple

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "data" / "corpus"
KINDS = ("frames", "sweep", "export")

_FRAMES = """
import resource
import sys
import time
import pandas as pd
import evalkit
from evalkit.corpus.frames import FRAME_NAMES
import evalkit.tables.corpus  # the loader's modules imported before the clock starts
t0 = time.perf_counter()
c = evalkit.load_corpus(sys.argv[1], jobs=int(sys.argv[2]))
frames = [getattr(c, n + "_df")() for n in FRAME_NAMES]
t = time.perf_counter() - t0
# The load's peak memory, before the check below: hashing the frames' text makes a Python
# string of each value (40 MB more at 100x), a cost of this check and not of the load. The
# largest of this process and its parser workers (ended with the load).
peak = max(resource.getrusage(w).ru_maxrss for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
# A digest of every value (vectorised, so it costs little beside the load it checks).
digest = [int(pd.util.hash_pandas_object(df, index=False).sum()) for df in frames]
# The sessions counted from the sessions frame: its records (one Python object per session)
# are made only when asked for, and a frame load does not ask (its peak memory is the frames').
print(len(frames[0]), c.cache_misses, f"{t:.6f}", peak / 1024, ",".join(map(str, digest)))
"""


# `python -m evalkit ARGS` with each process's CPU time told on standard error: every parser
# worker's as it ends, the main process's own and its workers' together at its exit.
_EVALKIT = r"""
import atexit, os, sys
import multiprocessing.util
import evalkit.corpus.parse as parse

def tell(what, seconds):
    os.write(2, f"\nbench-cpu {what} {seconds:.4f}\n".encode())

start = parse._worker_start

def worker_start(parent):
    start(parent)
    # Run as the worker ends (multiprocessing's finalizers), after its last task.
    multiprocessing.util.Finalize(
        None, lambda: tell("worker", sum(os.times()[:2])), exitpriority=100
    )

parse._worker_start = worker_start

def at_exit():  # after the pool's workers were joined (`concurrent.futures` exits first)
    t = os.times()
    tell("main", t.user + t.system)
    tell("children", t.children_user + t.children_system)

atexit.register(at_exit)
from evalkit.cli import main

sys.argv = ["evalkit", *sys.argv[1:]]
sys.exit(main())
"""


class Run(NamedTuple):
    wall: float  # seconds to the command's exit
    output: float  # seconds to the last byte of its output
    rss: float  # peak resident MB of its largest process
    out: str
    cpu: dict[str, list[float]]  # "main", "worker" (each), "children": CPU seconds


def run(argv: list[str], store: Path) -> Run:
    """One command, timed to its last byte of output and to its exit (the store under `store`:
    evalkit's cache directory is `$XDG_CACHE_HOME/evalkit`)."""
    env = {**os.environ, "XDG_CACHE_HOME": str(store)}
    with tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=err, cwd=REPO, env=env)
        assert proc.stdout is not None
        chunks, last = [], t0
        while chunk := os.read(proc.stdout.fileno(), 1 << 16):
            chunks.append(chunk)
            last = time.perf_counter()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.stdout.close()
        err.seek(0)
        told = err.read().decode("utf-8", "replace")
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        raise SystemExit(f"failed: {' '.join(argv)}")
    cpu: dict[str, list[float]] = {}
    for line in told.splitlines():
        if line.startswith("bench-cpu "):
            _, what, seconds = line.split()
            cpu.setdefault(what, []).append(float(seconds))
    out = b"".join(chunks).decode("utf-8", "replace")
    return Run(wall, last - t0, usage.ru_maxrss / 1024, out, cpu)


def evalkit_cmd(*args: str) -> list[str]:
    return [sys.executable, "-c", _EVALKIT, *args]


def contenders(corpus: Path, jobs: int, tmp: Path) -> dict[str, tuple]:
    """name → (prepare, argv, store): `prepare()` runs untimed before each timed run."""
    warm_store = tmp / "warm-store"
    cold_store = tmp / "cold-store"

    def empty(path: Path):
        def prepare() -> None:
            shutil.rmtree(path, ignore_errors=True)

        return prepare

    def no_snapshot() -> None:
        for p in warm_store.rglob("snapshot-*.out"):
            p.unlink()

    def fresh_out(name: str, store: Path | None):
        def prepare() -> None:
            shutil.rmtree(tmp / name, ignore_errors=True)
            if store is not None:
                shutil.rmtree(store, ignore_errors=True)

        return prepare

    frames = [sys.executable, "-c", _FRAMES, str(corpus), str(jobs)]
    sweep = evalkit_cmd("sweep", str(corpus), "--json", "-j", str(jobs))

    def export(where: str) -> list[str]:
        return evalkit_cmd("export", str(corpus), "--to", str(tmp / where), "-j", str(jobs))

    return {
        "frames cold": (empty(cold_store), frames, cold_store),
        "frames warm": (lambda: None, frames, warm_store),
        "sweep cold": (empty(cold_store), sweep, cold_store),
        "sweep no store": (lambda: None, [*sweep, "--no-cache"], cold_store),
        "sweep warm": (no_snapshot, sweep, warm_store),
        "export cold": (fresh_out("out-cold", cold_store), export("out-cold"), cold_store),
        "export warm": (fresh_out("out-warm", None), export("out-warm"), warm_store),
    }


class Scale:
    """One corpus's contenders, their warm store filled, and the best figures of its rounds."""

    def __init__(self, corpus: Path, jobs: int, tmp: Path, kinds: Collection[str]) -> None:
        full = contenders(corpus, jobs, tmp)
        self.todo = {name: c for name, c in full.items() if name.split()[0] in kinds}
        self.tmp = tmp
        # The warm store: filled once by a load (frames) and a sweep, before any round.
        self.sessions = int(run(*full["frames warm"][1:]).out.split()[0])
        run(*full["sweep warm"][1:])
        self.best: dict[str, tuple[float, float]] = {}
        self.cpus: dict[str, dict[str, list[float]]] = {}  # each sweep's, in its fastest round
        self.seen: dict[str, str] = {}

    def round(self) -> None:
        """Each contender once, in turn."""
        best, tmp = self.best, self.tmp
        for name, (prepare, argv, store) in self.todo.items():
            prepare()
            got = run(argv, store)
            wall, rss, out = got.wall, got.rss, got.out
            kind = name.split()[0]
            if kind == "sweep":  # also its time to output, and its CPU in the fastest round
                t, _ = best.get(name + " to output", (math.inf, 0.0))
                best[name + " to output"] = (min(t, got.output), 0.0)
                if wall < best.get(name, (math.inf, 0.0))[0]:
                    self.cpus[name] = got.cpu
            if kind == "frames":  # its time and peak memory as measured by the load itself
                inside, rss = float(out.split()[2]), float(out.split()[3])
                t, r = best.get(name + " in-process", (math.inf, 0.0))
                best[name + " in-process"] = (min(t, inside), 0.0)
                out = out.split()[-1]  # the frames' digest (the miss count differs)
            for where in ("out-cold", "out-warm"):
                out = out.replace(str(tmp / where), "OUT")
            if self.seen.setdefault(kind, out) != out:
                print(f"  ! {name} printed another output than before", file=sys.stderr)
            t, r = best.get(name, (math.inf, 0.0))
            best[name] = (min(t, wall), max(r, rss))


def cpu_split(cpu: dict[str, list[float]], wall: float) -> str:
    """The main process's CPU seconds, each worker's, and all of them ÷ the wall time."""
    if "main" not in cpu:
        return "not told"
    workers = cpu.get("worker", [])
    total = cpu["main"][0] + cpu.get("children", [0.0])[0]
    each = " + ".join(f"{w:.2f}" for w in sorted(workers, reverse=True)) or "none"
    return f"main {cpu['main'][0]:.2f} s, workers {each} s, CPU / wall {total / wall:.2f}"


def warm_cold(best: dict[str, tuple[float, float]], kind: str) -> str:
    return f"{best[f'{kind} warm'][0] / best[f'{kind} cold'][0]:.3f}"


def exponent(points: list[tuple[int, float]]) -> float | None:
    if len(points) < 2 or points[0][0] == points[-1][0]:
        return None
    (n0, t0), (n1, t1) = points[0], points[-1]
    return math.log(t1 / t0) / math.log(n1 / n0)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scales", default="1,10,30")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--corpora", type=Path, help="take the corpus of scale K from DIR/Kx")
    ap.add_argument(
        "--only", default=",".join(KINDS), help="time only these kinds of command (comma list)"
    )
    ap.add_argument(
        "--load",
        type=int,
        default=0,
        metavar="N",
        help="keep N busy processes running meanwhile (a loaded host)",
    )
    args = ap.parse_args()
    # Each busy process ends with this one, however it ends (it spins until its parent is gone).
    spin = "import os\nparent = os.getppid()\nwhile os.getppid() == parent:\n    pass\n"
    hogs = [subprocess.Popen([sys.executable, "-c", spin]) for _ in range(args.load)]
    try:
        return measure(args)
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()


def measure(args: argparse.Namespace) -> int:
    scales = [int(s) for s in args.scales.split(",")]
    kinds = [k.strip() for k in args.only.split(",")]
    if set(kinds) - set(KINDS):
        raise SystemExit(f"--only: choose among {', '.join(KINDS)}")
    results: dict[int, tuple[int, dict[str, tuple[float, float]]]] = {}
    with tempfile.TemporaryDirectory(prefix="evalkit-bench-frames-") as tmp_name:
        tmp = Path(tmp_name)
        # Every command with compiled bytecode, kept apart from the stores: evalkit keeps its
        # own under the cache directory when Python may not write it (`keep_bytecode`), and a
        # cold store's directory is emptied before each run, so a cold command would compile
        # every module again and its figures would count the compiling as the store's cost.
        os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
        os.environ["PYTHONPYCACHEPREFIX"] = str(tmp / "pycache")
        subprocess.run(
            [sys.executable, "-m", "compileall", "-q", str(REPO / "evalkit")], check=True
        )
        bundled_bytes = sum(p.stat().st_size for p in CORPUS.rglob("*") if p.is_file())
        corpora: dict[int, tuple[Path, bool]] = {}
        for k in scales:
            corpus = CORPUS
            kept = args.corpora is not None and (args.corpora / f"{k}x").is_dir()
            if kept:
                corpus = args.corpora / f"{k}x"
            elif k != 1:
                need = 3 * k * bundled_bytes  # the corpus, its store and an export, with room
                if shutil.disk_usage(tmp).free < need:
                    print(f"{k}x: skipped, the disk has less than {need / 1e9:.1f} GB free")
                    continue
                corpus = tmp / f"corpus-{k}x"
                subprocess.run(
                    [
                        sys.executable,
                        "-m",
                        "evalkit.synthetic",
                        "generate",
                        str(corpus),
                        "--scale",
                        str(k),
                    ],
                    check=True,
                    stdout=subprocess.DEVNULL,
                    cwd=REPO,
                )
            corpora[k] = (corpus, kept)
        benches: dict[int, Scale] = {}
        for k, (corpus, _) in corpora.items():
            work = tmp / f"work-{k}x"
            work.mkdir()
            benches[k] = Scale(corpus, args.jobs, work, kinds)
        # Round after round, every scale in each: a machine that grows busier or quieter
        # meanwhile moves every scale's figures alike, and the time exponents hold.
        for _ in range(args.rounds):
            for b in benches.values():
                b.round()
        for k, b in benches.items():
            n, best, cpus = b.sessions, b.best, b.cpus
            results[k] = (n, best)
            print(f"{k}x ({n} sessions, jobs {args.jobs}, best of {args.rounds}):")
            for name, (t, rss) in best.items():
                memory = f"  {rss:7.1f} MB" if rss else ""
                print(f"  {name:<26} {t:7.2f} s{memory}")

            if set(kinds) == set(KINDS):
                inside = best["frames warm in-process"][0] / best["frames cold in-process"][0]
                print(
                    f"  warm / cold: frames {warm_cold(best, 'frames')} (in-process "
                    f"{inside:.3f}), sweep {warm_cold(best, 'sweep')}, export "
                    f"{warm_cold(best, 'export')}"
                )
            if "sweep" not in kinds:
                continue
            cost = best["sweep cold"][0] / best["sweep no store"][0] - 1
            shown = best["sweep cold to output"][0] / best["sweep no store to output"][0] - 1
            print(
                f"  the store's cost of a cold sweep: {shown:+.1%} to its output, "
                f"{cost:+.1%} to its exit"
            )
            for name in ("sweep cold", "sweep no store"):
                print(f"  {name + ', CPU:':<26} {cpu_split(cpus.get(name, {}), best[name][0])}")
    if 1 in results and len(results) > 1 and "frames" in kinds:
        top = max(results)
        for name in ("frames cold", "frames warm"):
            ratio = results[top][1][name][1] / results[1][1][name][1]
            print(f"peak memory {name} {top}x / 1x: {ratio:.2f}")
    names = ("sweep cold", "sweep warm", "frames cold", "frames warm", "export cold", "export warm")
    for name in names:
        for lo, hi in ((1, 30), (30, 100)):
            if lo in results and hi in results and name.split()[0] in kinds:
                e = exponent([(results[s][0], results[s][1][name][0]) for s in (lo, hi)])
                print(f"time exponent {name} {lo}x->{hi}x: {e:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
