"""Benchmark (a script, not a test): evalkit's sweep against the floors, at several corpus sizes.

Usage:
    python tests/benchmarks/bench_sweep.py [--scales 1,10,30] [--rounds 5] [--jobs N]
                                           [--reference PATH/parse-run.mjs]
                                           [--only cold,serial,warm,json floor,orjson floor]
                                           [--callgrind 10]

For the bundled corpus (scale 1) and corpora `K` times larger made by the generator
(`python -m evalkit.synthetic generate OUT --scale K`), it measures, round after round with the
contenders interleaved (so a busy machine slows each of them alike), the best wall time of:

* cold: `evalkit sweep DIR --json` with an empty store (every session parsed, over the cores);
* warm: the same again on that store (nothing parsed, no transcript read), and "warm command":
  `evalkit sweep DIR --json --cache-dir STORE` as a user types it on that store with no stored
  output (the CLI's imports included: it reads the store's side index and imports neither
  pyarrow nor numpy);
* snapshot command: that command once more, which prints the output the previous one stored
  (the tree unchanged: `evalkit.store.snapshot`), against "cold command", the same command on
  an empty store: the warm ÷ cold of a user's two runs;
* serial: `--no-cache -j 1` (one process, nothing stored), and parallel: `--no-cache`;
* frames: `load_corpus(DIR)` with every frame built (cold, warm on the same store, and with no
  store in one process — the last against the serial sweep);
* export: `evalkit export DIR --to OUT --no-cache` (streamed: its peak memory is the figure);
* in-process cold and warm: `run_sweep` plus its JSON inside one process, start-up and imports
  excluded (what a warm sweep costs once the interpreter runs: the interpreter alone takes about
  0.1 s on a small machine, a floor no warm command goes under);
* the floors: reading every byte (`cat`), and JSON-decoding every line once with Python's
  `json` and with orjson (each in a fresh interpreter, as evalkit is);
* with `--reference` and `node` on PATH: the reference parser in ONE node process looping over
  the same sessions (each session's segments given as its command line).

Each figure is the wall time of a whole command as a user sees it (interpreter start-up and
imports included, with compiled bytecode as an installed package has), with its peak resident
memory (largest process; each command is started by a small launcher process, so the figure is
the command's own and not the benchmark's). It prints the ratios the
goals are read from — evalkit ÷ reference loop, evalkit ÷ JSON floor, warm ÷ cold, parallel ÷
serial — and the scaling exponent of time against corpus size (the slope of log time on log
sessions; 1.0 is linear). It asserts nothing, and checks only that every contender printed the
same JSON, since a fast wrong answer is no answer.

Wall times on a shared machine are noisy; `--callgrind K` (with valgrind installed) also counts
the instructions of the serial sweep at scale K, stage by stage, which the machine's load does
not change: start-up and imports, discovery, reading and decoding every session, the metrics,
and the rest (records, tables and the JSON), each against the instructions of the `json` floor.
Each stage's count is the difference between two runs that stop one stage apart.

`--store-cost K` measures what the store costs a cold sweep at scale K where the user sees it:
`evalkit sweep DIR` on an empty store and with `--no-cache`, interleaved, best of the rounds,
timed to the first byte of its output (the printing path: the shards are written after it)
and to its exit.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "data" / "corpus"

_SWEEP = """
import sys
from evalkit.tables.sweep import run_sweep
from evalkit.outputs.sweep_text import render_json
root, cache_dir, jobs = sys.argv[1], sys.argv[2], int(sys.argv[3]) or None
r = run_sweep(root, cache=cache_dir != "-", cache_dir=None if cache_dir == "-" else cache_dir,
              jobs=jobs)
sys.stdout.write(render_json(r))
print(r.cache_hits, r.cache_misses, file=sys.stderr)
"""

# Inside one process, start-up and imports excluded: a cold sweep into an empty store, then a warm
# one from it, each with its JSON rendered (what is left of a warm sweep once the interpreter runs).
_IN_PROCESS = """
import sys, time
from evalkit.tables.sweep import run_sweep
from evalkit.outputs.sweep_text import render_json
root, cache_dir, jobs = sys.argv[1], sys.argv[2], int(sys.argv[3]) or None
times = []
for _ in range(2):
    t0 = time.perf_counter()
    r = run_sweep(root, cache_dir=cache_dir, jobs=jobs)
    doc = render_json(r)
    times.append(time.perf_counter() - t0)
sys.stdout.write(doc)
print(*times, file=sys.stderr)
"""

# Loads every frame as a notebook would; prints the row counts (checked against the sweep).
_FRAMES = """
import sys
import evalkit
root, cache_dir, jobs = sys.argv[1], sys.argv[2], int(sys.argv[3]) or None
corpus = evalkit.load_corpus(root, cache=cache_dir != "-", jobs=jobs,
                             cache_dir=None if cache_dir == "-" else cache_dir)
rows = {name: len(corpus.frame(name)) for name in
        ("sessions", "calls", "sections", "files", "tool_calls")}
print(rows["sessions"], rows["calls"], rows["tool_calls"])
print(corpus.cache_hits, corpus.cache_misses, file=sys.stderr)
"""

_FLOOR = """
import os, sys
{imp}
n = 0
for dirpath, _, names in os.walk(sys.argv[1]):
    for name in names:
        if ".jsonl" in name:
            with open(os.path.join(dirpath, name), "rb") as fh:
                for line in fh.read().split(b"\\n"):
                    if line:
                        try:
                            {decode}(line)
                        except ValueError:
                            pass
                        n += 1
print(n)
"""

_CAT = """
import os, sys
n = 0
for dirpath, _, names in os.walk(sys.argv[1]):
    for name in names:
        with open(os.path.join(dirpath, name), "rb") as fh:
            n += len(fh.read())
print(n)
"""

# One node process, every session: the reference's main runs once per session with its
# segments as the command line, output discarded (the module is re-evaluated per session: a
# new URL query makes `import()` load it again). Checked with a stand-in script of the same
# command-line shape; the reference itself is not in this repository.
_NODE_LOOP = r"""
const { pathToFileURL } = require("node:url");
const sessions = JSON.parse(require("node:fs").readFileSync(process.argv[2], "utf8"));
const ref = pathToFileURL(process.argv[3]).href;
const write = process.stdout.write.bind(process.stdout);
(async () => {
  const argv0 = process.argv.slice(0, 2);
  console.log = () => {}; console.error = () => {};
  process.stdout.write = () => true;
  // A script that ends with process.exit() must not end the loop.
  const EXIT = new Error("exit");
  process.exit = () => { throw EXIT; };
  process.on("unhandledRejection", () => {});
  for (let i = 0; i < sessions.length; i++) {
    process.argv = [...argv0, ...sessions[i], "--brief"];
    try { await import(ref + "?session=" + i); } catch (e) {}
  }
  write(String(sessions.length) + "\n");
})();
"""


# Every contender runs with compiled bytecode, as an installed package does: an environment that
# sets PYTHONDONTWRITEBYTECODE would otherwise make each Python contender compile evalkit from
# source on every run (50–150 ms here). The bytecode goes to a directory of the benchmark's own,
# compiled once before the first round (`prime_bytecode`), so the repository is left as it was.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def prime_bytecode(tmp: Path) -> None:
    ENV["PYTHONPYCACHEPREFIX"] = str(tmp / "pycache")
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(REPO / "evalkit")], env=ENV, check=True
    )


# Every command is started by a small launcher process of its own, started first: Linux counts in
# a child's peak memory the peak of the process it was started from, so commands started by this
# process (which holds every contender's output) would all report at least this one's peak.
_LAUNCHER = r"""
import json, os, subprocess, sys, time
for line in sys.stdin:
    job = json.loads(line)
    with open(job["out"], "wb") as out, open(job["err"], "wb") as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(job["argv"], stdout=out, stderr=err, cwd=job["cwd"], env=job["env"])
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - t0
    cpu = usage.ru_utime + usage.ru_stime  # the command's and its workers' (each waited for)
    print(json.dumps([elapsed, usage.ru_maxrss, os.waitstatus_to_exitcode(status), cpu]), flush=True)
"""


class _Launcher:
    proc: subprocess.Popen | None = None

    @classmethod
    def start(cls) -> None:
        if cls.proc is None:
            cls.proc = subprocess.Popen(
                [sys.executable, "-c", _LAUNCHER],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            )

    @classmethod
    def run(cls, argv: list[str], env: dict[str, str]) -> tuple[float, int, int, bytes, bytes]:
        cls.start()
        assert cls.proc is not None and cls.proc.stdin and cls.proc.stdout
        with tempfile.TemporaryDirectory() as d:
            out, err = os.path.join(d, "out"), os.path.join(d, "err")
            job = {"argv": argv, "env": env, "cwd": str(REPO), "out": out, "err": err}
            cls.proc.stdin.write(json.dumps(job) + "\n")
            cls.proc.stdin.flush()
            elapsed, maxrss_kb, code, cpu = json.loads(cls.proc.stdout.readline())
            LAST_CPU[0] = cpu
            with open(out, "rb") as fh_out, open(err, "rb") as fh_err:
                return elapsed, maxrss_kb, code, fh_out.read(), fh_err.read()


LAST_CPU = [0.0]  # CPU seconds of the last command run, with its worker processes'
# Contenders whose CPU ÷ wall time is printed (of their fastest round): how much of the
# second core a parallel sweep uses.
_CPU_OF = ("cold", "parallel", "serial")


def run(argv: list[str], env: dict[str, str] | None = None) -> tuple[float, int, str, str]:
    """Wall seconds, peak RSS (MB) of the largest process, stdout and stderr of one command."""
    elapsed, maxrss_kb, code, out, err = _Launcher.run(argv, env or ENV)
    stdout, stderr = out.decode(), err.decode()
    if code != 0:
        raise SystemExit(f"{' '.join(argv[:3])}… failed: {stderr.strip()[-500:]}")
    return elapsed, maxrss_kb // 1024, stdout, stderr


def py(code: str, *args: str) -> list[str]:
    return [sys.executable, "-c", code, *args]


def sessions_of(corpus: Path) -> list[list[str]]:
    sys.path.insert(0, str(REPO))
    from evalkit.corpus.discover import discover

    return [[str(corpus / s) for s in ref.segments] for ref in discover(corpus).sessions]


# The serial sweep cut after stage N (0 start-up and imports, 1 discovery, 2 reading and decoding
# every session, 3 its metrics, 4 the whole sweep with its JSON), for instruction counts.
_STAGES = """
import os, sys
stop = int(sys.argv[2])
from evalkit.corpus.discover import discover
from evalkit.formats.claude_code.transcripts import read_transcript
from evalkit.outputs.sweep_text import render_json
from evalkit.session import session_from_transcript
from evalkit.tables.sweep import run_sweep
root = sys.argv[1]
if 1 <= stop <= 3:
    refs = [r for r in discover(root).sessions if r.layout != "interactive"]
if 2 <= stop <= 3:
    read = []
    for ref in refs:
        try:  # as a sweep that stores nothing reads: no digest of the bytes
            read.append(read_transcript([os.path.join(root, s) for s in ref.segments],
                                        digests=False))
        except Exception:
            pass
if stop == 3:
    for t in read:
        try:  # the metrics the sweep's payload reads (not the read allocation)
            session_from_transcript(t, read_allocation=False)
        except Exception:
            pass
if stop == 4:
    sys.stdout.write(render_json(run_sweep(root, cache=False, jobs=1)))
"""
STAGE_NAMES = ("start-up and imports", "discovery", "reading and decoding", "metrics", "the rest")


def instructions(argv: list[str]) -> int | None:
    """Instructions executed by one command under callgrind (None without valgrind)."""
    if not shutil.which("valgrind"):
        return None
    with tempfile.TemporaryDirectory() as d:
        out = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={d}/cg.out", *argv],
            capture_output=True,
            text=True,
            env=ENV,
            cwd=str(REPO),
        )
    for line in out.stderr.splitlines():
        if "Collected :" in line:
            return int(line.split()[-1])
    raise SystemExit(f"callgrind gave no count: {out.stderr.strip()[-300:]}")


def instruction_report(corpus: Path, label: str) -> None:
    """Per-stage instruction counts of the serial sweep over `corpus`, against the floors."""
    if not shutil.which("valgrind"):
        print("\n(valgrind is not installed: no instruction counts)")
        return
    # One uncounted run first: the bytecode prefix holds evalkit's modules (`prime_bytecode`)
    # but not yet the standard library's, which the first counted run would otherwise compile
    # (about a billion instructions charged to start-up, and a negative discovery stage).
    run(py(_STAGES, str(corpus), "4"))
    cuts = [instructions(py(_STAGES, str(corpus), str(k))) for k in range(5)]
    whole = instructions(
        [sys.executable, "-m", "evalkit", "sweep", str(corpus), "--json", "--no-cache", "-j", "1"]
    )
    floor = instructions(py(_FLOOR.format(imp="import json", decode="json.loads"), str(corpus)))
    ofloor = instructions(
        py(_FLOOR.format(imp="import orjson", decode="orjson.loads"), str(corpus))
    )
    print(f"\ninstructions, serial sweep of the {label} corpus (callgrind; load-independent)")
    assert None not in cuts
    steps = [cuts[0], cuts[1] - cuts[0], cuts[2] - cuts[1], cuts[3] - cuts[2], cuts[4] - cuts[3]]
    for name, step in zip(STAGE_NAMES, steps, strict=True):
        print(f"  {name:<22} {step / 1e6:10.1f} M")
    print(f"  {'serial sweep (run_sweep)':<22} {cuts[4] / 1e6:10.1f} M")
    print(f"  {'serial sweep command':<22} {whole / 1e6:10.1f} M")
    print(f"  {'json floor':<22} {floor / 1e6:10.1f} M")
    print(f"  {'orjson floor':<22} {ofloor / 1e6:10.1f} M")
    print(
        f"  command / json floor {ratio(whole, floor)}   command / orjson floor "
        f"{ratio(whole, ofloor)}   metrics / json floor {ratio(cuts[3] - cuts[2], floor)}"
    )


def contenders(corpus: Path, jobs: int, reference: str | None, tmp: Path) -> dict[str, object]:
    """name → a function running that contender once: (seconds, peak MB, JSON or None)."""
    j = str(jobs)
    out: dict[str, object] = {}

    def cold():
        store = tempfile.mkdtemp(prefix="store-", dir=tmp)
        t, rss, doc, err = run(py(_SWEEP, str(corpus), store, j))
        contenders.last_store = store  # type: ignore[attr-defined]
        return t, rss, doc, err.split()[-2:]

    command = [sys.executable, "-m", "evalkit", "sweep", str(corpus), "--json", "--cache-dir"]

    def cold_command():
        store = tempfile.mkdtemp(prefix="store-cmd-", dir=tmp)
        t, rss, doc, _ = run([*command, store])
        shutil.rmtree(store, ignore_errors=True)
        return t, rss, doc, None

    def warm_command():
        # The store's path: its sessions, with no snapshot of the output to print instead.
        store = getattr(contenders, "last_store", None)
        for snap in Path(store).rglob("snapshot-*.out"):
            snap.unlink()
        t, rss, doc, _ = run([*command, store])
        return t, rss, doc, None

    def snapshot_command():
        # The command again: the previous one stored its output, and the tree is unchanged.
        store = getattr(contenders, "last_store", None)
        t, rss, doc, _ = run([*command, store])
        return t, rss, doc, None

    def warm():
        store = getattr(contenders, "last_store", None)
        t, rss, doc, err = run(py(_SWEEP, str(corpus), store, j))
        shutil.rmtree(store, ignore_errors=True)
        return t, rss, doc, err.split()[-2:]

    def in_process():
        store = tempfile.mkdtemp(prefix="inproc-", dir=tmp)
        _, rss, doc, err = run(py(_IN_PROCESS, str(corpus), store, j))
        shutil.rmtree(store, ignore_errors=True)
        t_cold, t_warm = (float(x) for x in err.split()[-2:])
        return {
            "in-process cold": (t_cold, rss, doc, None),
            "in-process warm": (t_warm, rss, doc, None),
        }

    out["cold"] = cold
    out["warm command"] = warm_command
    out["snapshot command"] = snapshot_command
    out["cold command"] = cold_command
    out["warm"] = warm
    out["serial"] = lambda: run(py(_SWEEP, str(corpus), "-", "1"))[:3] + (None,)
    out["parallel"] = lambda: run(py(_SWEEP, str(corpus), "-", j))[:3] + (None,)
    try:
        import evalkit

        has_frames = hasattr(evalkit, "load_corpus")
    except ImportError:
        has_frames = False
    if has_frames:

        def frames_cold():
            store = tempfile.mkdtemp(prefix="frames-", dir=tmp)
            t, rss, rows, err = run(py(_FRAMES, str(corpus), store, j))
            contenders.frames_store = store  # type: ignore[attr-defined]
            contenders.frame_rows = rows  # type: ignore[attr-defined]
            return t, rss, None, err.split()[-2:]

        def frames_warm():
            store = getattr(contenders, "frames_store", None)
            t, rss, rows, err = run(py(_FRAMES, str(corpus), store, j))
            shutil.rmtree(store, ignore_errors=True)
            if rows != contenders.frame_rows:  # type: ignore[attr-defined]
                raise SystemExit(f"{corpus.name}: the store changed a frame")
            return t, rss, None, err.split()[-2:]

        def frames_serial():
            t, rss, rows, _ = run(py(_FRAMES, str(corpus), "-", "1"))
            if rows != contenders.frame_rows:  # type: ignore[attr-defined]
                raise SystemExit(f"{corpus.name}: parallelism changed a frame")
            return t, rss, None, None

        out["frames cold"] = frames_cold
        out["frames warm"] = frames_warm
        out["frames serial"] = frames_serial

    def export():
        target = tempfile.mkdtemp(prefix="export-", dir=tmp)
        argv = [sys.executable, "-m", "evalkit", "export", str(corpus), "--to", target]
        t, rss, _, _ = run([*argv, "--no-cache", "-j", j])
        shutil.rmtree(target, ignore_errors=True)
        return t, rss, None, None

    out["export"] = export
    out["in-process"] = in_process
    out["cat"] = lambda: run(py(_CAT, str(corpus)))[:2] + (None, None)
    out["json floor"] = lambda: (
        run(py(_FLOOR.format(imp="import json", decode="json.loads"), str(corpus)))[:2]
        + (None, None)
    )
    out["orjson floor"] = lambda: (
        run(py(_FLOOR.format(imp="import orjson", decode="orjson.loads"), str(corpus)))[:2]
        + (None, None)
    )
    if reference and shutil.which("node"):
        listing = tmp / f"sessions-{corpus.name}.json"
        listing.write_text(json.dumps(sessions_of(corpus)))
        loop = tmp / "loop.cjs"
        loop.write_text(_NODE_LOOP)
        out["reference loop"] = lambda: (
            run(["node", str(loop), str(listing), reference])[:2]
            + (
                None,
                None,
            )
        )
    return out


def bench(
    name: str,
    corpus: Path,
    rounds: int,
    jobs: int,
    reference: str | None,
    tmp: Path,
    only: set[str] | None = None,
):
    runs = contenders(corpus, jobs, reference, tmp)
    if only:
        # `warm` and the commands on the store read what `cold` stored: keep it before them.
        keep = only | ({"cold"} if only & {"warm", "warm command", "snapshot command"} else set())
        runs = {k: v for k, v in runs.items() if k in keep}
    best: dict[str, tuple[float, int]] = {}
    first: str | None = None
    counts: dict[str, list[str]] = {}
    cpu: dict[str, tuple[float, float]] = {}  # label → (CPU, wall) of its fastest round
    for _ in range(rounds):
        for name_, fn in runs.items():
            got = fn()  # type: ignore[operator]
            if name_ in _CPU_OF and got[0] < cpu.get(name_, (0.0, math.inf))[1]:
                cpu[name_] = (LAST_CPU[0], got[0])
            for label, (t, rss, doc, n) in (got if isinstance(got, dict) else {name_: got}).items():
                _keep(best, counts, label, t, rss, n)
                if doc is not None:
                    first = doc if first is None else first
                    if doc != first:
                        raise SystemExit(f"{name}: {label} printed different numbers")
    result = _report(name, corpus, rounds, jobs, first, best, counts)
    if cpu:
        print(
            "  CPU / wall (the command's and its workers' CPU over its wall time): "
            + ", ".join(f"{k} {c / w:.2f} ({c:.2f} / {w:.2f} s)" for k, (c, w) in cpu.items())
        )
    return result


def _keep(best, counts, label, t, rss, n) -> None:
    """Keep a contender's best time and largest peak memory over the rounds."""
    if n is not None:
        counts[label] = n
    b = best.get(label)
    best[label] = (min(t, b[0]) if b else t, max(rss, b[1]) if b else rss)


def _report(name, corpus, rounds, jobs, first, best, counts):
    doc = json.loads(first or '{"sessions": 0, "calls": 0}')
    n_sessions = doc["sessions"] + doc.get("crashes", 0)
    size = sum(f.stat().st_size for f in corpus.rglob("*") if f.is_file()) / 1e6
    print(
        f"\n{name}: {doc['sessions']} sessions in the sweep, {doc['calls']} explore calls, "
        f"{size:.1f} MB on disk; best of {rounds} interleaved rounds, {jobs} processes"
    )
    for label, (t, rss) in best.items():
        extra = ""
        if label in counts:
            extra = f"   ({counts[label][0]} from the store, {counts[label][1]} parsed)"
        print(f"  {label:<18} {t:7.3f} s   peak {rss:5d} MB{extra}")
    return {k: v[0] for k, v in best.items()}, {k: v[1] for k, v in best.items()}, n_sessions


# `--timeline`: a command run with its stages noted as they start and end, in every process (the
# parser workers are forked, so they run the same wrappers): wall time since the command was
# started and the process's CPU at each note. Only what a stage's function is named, nothing
# of what it does, is wrapped; a name this evalkit lacks is left out of the timeline.
_TIMELINE = r"""
import atexit, importlib, multiprocessing.util, os, sys, time
T0, LOG = float(sys.argv[1]), sys.argv[2]

def note(what):
    t = os.times()
    with open(LOG, "a") as f:
        f.write(f"{time.time() - T0:.4f} {os.getpid()} {t.user + t.system:.3f} {what}\n")

note("start")
import evalkit.cli
note("imports")

def wrap(owner, name, label):
    real = getattr(owner, name, None)
    if real is None:
        return
    def wrapped(*a, **k):
        note("> " + label)
        try:
            return real(*a, **k)
        finally:
            note("< " + label)
    # Pickled by name (a task sent to a worker): the wrapper is found where the function was.
    wrapped.__module__ = getattr(owner, "__module__", None) or owner.__name__
    if isinstance(owner, type):
        wrapped.__qualname__ = owner.__qualname__ + "." + name
    else:
        wrapped.__module__, wrapped.__qualname__ = owner.__name__, name
    setattr(owner, name, wrapped)

for mod, name, label in [
    ("evalkit.tables.sweep", "discover", "discover"),
    ("evalkit.corpus.parse", "plan_chunks", "plan"),
    ("evalkit.corpus.parse", "analyse_chunk", "parse"),
    ("evalkit.store.shards", "write_pickled_shard", "write"),
    ("evalkit.store.snapshot", "tree_state", "walk"),
]:
    wrap(importlib.import_module(mod), name, label)
shards = importlib.import_module("evalkit.store.shards")
wrap(shards.CorpusStore, "put", "store rows")
wrap(shards.CorpusStore, "wait_writes", "wait writes")
parse = importlib.import_module("evalkit.corpus.parse")
real_start = parse._worker_start

def worker_start(parent):
    note("worker")
    real_start(parent)
    multiprocessing.util.Finalize(None, note, args=("exit",), exitpriority=-100)

parse._worker_start = worker_start

class First:
    def __init__(self, out):
        self.out, self.seen = out, False
    def write(self, text):
        if not self.seen:
            self.seen = True
            note("output")
        return self.out.write(text)
    def __getattr__(self, name):
        return getattr(self.out, name)

sys.stdout = First(sys.stdout)
atexit.register(note, "exit")
# As the command line runs it: `main()` reads sys.argv (a caller's `main(argv)` does otherwise).
sys.argv = ["evalkit", *sys.argv[3:]]
sys.exit(evalkit.cli.main())
"""


def timeline(corpus: Path, jobs: int, tmp: Path) -> None:
    """Where a cold sweep's time goes, process by process: `evalkit sweep DIR --json` on an
    empty store and with `--no-cache`, each run once with its stages noted (`_TIMELINE`)."""
    print(f"\ntimeline of a cold sweep of {corpus.name} ({jobs} processes; seconds since start)")
    cpu_of = {}
    for label, extra in (
        ("store", ["--cache-dir", str(tmp / "timeline-store")]),
        ("no store", ["--no-cache"]),
    ):
        log = tmp / f"timeline-{label.replace(' ', '-')}.log"
        log.unlink(missing_ok=True)
        shutil.rmtree(tmp / "timeline-store", ignore_errors=True)
        argv = py(
            _TIMELINE,
            str(time.time()),
            str(log),
            "sweep",
            str(corpus),
            "--json",
            "-j",
            str(jobs),
            *extra,
        )
        run(argv)
        notes = [line.split(" ", 3) for line in log.read_text().splitlines()]
        pids = list(dict.fromkeys(n[1] for n in notes))
        print(f"  {label}:")
        total = 0.0
        for k, pid in enumerate(pids):
            mine = [(float(t), float(c), w) for t, p, c, w in notes if p == pid]
            spans: dict[str, list[float]] = {}
            opened: dict[str, float] = {}
            marks = {}
            for t, _, w in mine:
                if w.startswith("> "):
                    opened[w[2:]] = t
                elif w.startswith("< ") and w[2:] in opened:
                    spans.setdefault(w[2:], []).append(opened.pop(w[2:]))
                    spans[w[2:]].append(t)
                else:
                    marks.setdefault(w, t)
            cpu = max(c for _, c, _ in mine)
            total += cpu
            parts = [f"{w} {t:.3f}" for w, t in marks.items()]
            for w, ts in spans.items():
                busy = sum(b - a for a, b in zip(ts[::2], ts[1::2], strict=True))
                parts.append(f"{w} {ts[0]:.3f}-{ts[-1]:.3f} ({len(ts) // 2}x, {busy:.3f} s)")
            who = "main" if k == 0 else f"worker {k}"
            print(f"    {who:<9} CPU {cpu:.3f} s: " + ", ".join(parts))
        cpu_of[label] = total
        print(f"    CPU of every process: {total:.3f} s")
    print(f"  the store's CPU: {cpu_of['store'] - cpu_of['no store']:+.3f} s")


def _to_output_and_exit(argv: list[str]) -> tuple[float, float]:
    """Seconds from start to the first byte `argv` prints, and to its exit."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=ENV)
    assert proc.stdout is not None
    proc.stdout.read(1)
    first = time.perf_counter() - t0
    proc.stdout.read()
    if proc.wait() != 0:
        raise SystemExit(f"{' '.join(argv[:4])}… failed")
    return first, time.perf_counter() - t0


def store_cost(corpus: Path, jobs: int, rounds: int, tmp: Path) -> None:
    """What the store costs a cold sweep of `corpus`, to its output and to its exit."""
    where = tmp / "store-cost"
    sweep = [sys.executable, "-m", "evalkit", "sweep", str(corpus), "-j", str(jobs)]
    best: dict[str, list[float]] = {}
    for _ in range(rounds):
        for label, extra in (("store", ["--cache-dir", str(where)]), ("no store", ["--no-cache"])):
            shutil.rmtree(where, ignore_errors=True)
            got = _to_output_and_exit(sweep + extra)
            best[label] = [min(a, b) for a, b in zip(best.get(label, got), got, strict=True)]
    shutil.rmtree(where, ignore_errors=True)
    (so, se), (no, ne) = best["store"], best["no store"]
    print(
        f"\nthe store's cost to a cold sweep of {corpus.name} (best of {rounds} interleaved rounds)"
    )
    print(f"  to the output: {so:.3f} s against {no:.3f} s with no store: {so / no - 1:+.1%}")
    print(f"  to the exit:   {se:.3f} s against {ne:.3f} s with no store: {se / ne - 1:+.1%}")
    print("  (goal: at most +10%; the shards are written after the output)")


def ratio(a: float | None, b: float | None) -> str:
    return f"{a / b:6.2f}" if a and b else "     -"


def exponent(points: list[tuple[int, float]]) -> float | None:
    if len(points) < 2:
        return None
    xs = [math.log(n) for n, _ in points]
    ys = [math.log(t) for _, t in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sxx if sxx else None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scales", default="1,10,30", help="corpus sizes, 1 = the bundled corpus")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--reference", metavar="PATH", help="parse-run.mjs, to loop it in node")
    ap.add_argument(
        "--only",
        metavar="A,B",
        help="measure these contenders alone (e.g. 'cold,serial,warm,json floor,orjson floor')",
    )
    ap.add_argument(
        "--callgrind",
        type=int,
        metavar="K",
        action="append",
        default=[],
        help="also count instructions per stage of the serial sweep at scale K (valgrind)",
    )
    ap.add_argument(
        "--corpus",
        action="append",
        default=[],
        metavar="K=DIR",
        help="use DIR (already generated with --scale K) instead of generating it",
    )
    ap.add_argument(
        "--store-cost",
        type=int,
        metavar="K",
        action="append",
        default=[],
        help="also time what the store costs a cold sweep at scale K, to its output and exit",
    )
    ap.add_argument(
        "--timeline",
        type=int,
        metavar="K",
        action="append",
        default=[],
        help="also show where a cold sweep's time goes at scale K, process by process",
    )
    args = ap.parse_args()
    if not CORPUS.is_dir():
        print("data/corpus is missing: generate the bundled corpus first", file=sys.stderr)
        return 2
    scales = [int(s) for s in args.scales.split(",")]
    if args.reference and not shutil.which("node"):
        print("--reference given but node is not on PATH: the reference loop is skipped")
    elif not args.reference:
        print("(no --reference: the reference loop is not measured; its stand-in is the JSON")
        print(" floor; where it was measured, the reference's one-process loop cost 3.0-3.3x it)")
    results = []
    _Launcher.start()  # while this process is small (see `_LAUNCHER`)
    with tempfile.TemporaryDirectory(prefix="evalkit-bench-") as tmp_name:
        tmp = Path(tmp_name)
        prime_bytecode(tmp)
        for k in scales:
            given = dict(c.split("=", 1) for c in args.corpus)
            if k == 1:
                corpus = CORPUS
            elif str(k) in given:
                corpus = Path(given[str(k)])
            else:
                corpus = tmp / f"corpus-{k}x"
                t0 = time.perf_counter()
                run([sys.executable, "-m", "evalkit.synthetic", "generate", str(corpus)]
                    + ["--scale", str(k)])  # fmt: skip
                print(f"({k}x corpus generated in {time.perf_counter() - t0:.1f} s)")
                # Files written seconds ago would be re-hashed as "racy" by the warm sweep.
                past = time.time_ns() - 3_600 * 10**9
                for f in corpus.rglob("*"):
                    os.utime(f, ns=(past, past))
            only = {c.strip() for c in args.only.split(",")} if args.only else None
            times, rss, n = bench(
                f"{k}x corpus", corpus, args.rounds, args.jobs, args.reference, tmp, only
            )
            results.append((k, n, times, rss))
            if k in args.callgrind:
                instruction_report(corpus, f"{k}x")
            if k in args.timeline:
                timeline(corpus, args.jobs, tmp)
            if k in args.store_cost:
                store_cost(corpus, args.jobs, args.rounds, tmp)
            if k != 1 and str(k) not in given:
                shutil.rmtree(corpus, ignore_errors=True)

    print("\nratios (lower is better)")
    print(
        "  scale  cold/ref  cold/floor  serial/floor  warm/cold  parallel/serial  "
        "frames/sweep serial  frames warm/cold  warm command/cold  in-process warm/cold  "
        "snapshot/cold command"
    )
    for k, _, t, _ in results:
        print(
            f"  {k:>4}x  {ratio(t.get('cold'), t.get('reference loop'))}    "
            f"{ratio(t.get('cold'), t.get('json floor'))}      "
            f"{ratio(t.get('serial'), t.get('json floor'))}      "
            f"{ratio(t.get('warm'), t.get('cold'))}       "
            f"{ratio(t.get('parallel'), t.get('serial'))}            "
            f"{ratio(t.get('frames serial'), t.get('serial'))}             "
            f"{ratio(t.get('frames warm'), t.get('frames cold'))}            "
            f"{ratio(t.get('warm command'), t.get('cold'))}             "
            f"{ratio(t.get('in-process warm'), t.get('in-process cold'))}                "
            f"{ratio(t.get('snapshot command'), t.get('cold command'))}"
        )
    print("  (floor = JSON-decoding every line once with Python's json, in a fresh interpreter)")
    print("\nagainst the JSON-decode floors (json / orjson; goals at 10x and 30x: cold <= 2.3,")
    print(" serial <= 2.6 times the json floor)")
    print(
        "  scale  cold/json  cold/orjson  serial/json  serial/orjson  warm/json  warm/orjson"
        "  cold command/json"
    )
    for k, _, t, _ in results:
        jf, of = t.get("json floor"), t.get("orjson floor")
        print(
            f"  {k:>4}x   {ratio(t.get('cold'), jf)}     {ratio(t.get('cold'), of)}       "
            f"{ratio(t.get('serial'), jf)}       {ratio(t.get('serial'), of)}      "
            f"{ratio(t.get('warm'), jf)}     {ratio(t.get('warm'), of)}      "
            f"{ratio(t.get('cold command'), jf)}"
        )
    print(
        "  (cold: run_sweep into an empty store, in a script; cold command: `evalkit sweep --json`"
        " as a user runs it, which writes its last shards after its output)"
    )
    if len(results) > 1:
        print("\nscaling exponent of time against sessions (1.0 = linear)")
        for label in ("cold", "serial", "warm", "json floor"):
            e = exponent([(n, t[label]) for _, n, t, _ in results if label in t])
            print(f"  {label:<12} {e:.2f}" if e is not None else f"  {label:<12} -")
        first, last = results[0], results[-1]
        print(f"\npeak memory at {last[0]}x / {first[0]}x")
        for label in ("cold command", "warm command", "snapshot command", "export"):
            a, b = first[3].get(label), last[3].get(label)
            if a and b:
                print(f"  {label:<18} {b / a:.2f}")
        print(
            "  (serial, parallel, cold and warm above run run_sweep and hold the whole JSON text;"
        )
        print("   tests/benchmarks/bench_memory.py measures the streaming commands themselves)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
