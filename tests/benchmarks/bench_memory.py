"""Benchmark (a script, not a test): peak resident memory of the sweep and the export, by corpus size.

Usage:
    python tests/benchmarks/bench_memory.py [--corpus 1=data/corpus,10=/tmp/c10x,30=/tmp/c30x]
                                            [--only sweep-serial,export-warm] [--repo DIR]

For each corpus (its scale, then its directory; the bundled corpus is scale 1), it runs each
command once as a user types it and reads the peak resident set size of its largest process
(`wait4`, as `/usr/bin/time -f %M` does):

* sweep serial: `evalkit sweep DIR --no-cache -j 1 --json`;
* sweep parallel: `evalkit sweep DIR --no-cache --json` (every core);
* sweep cold: `evalkit sweep DIR --json` on an empty store, then sweep warm on that store;
* export no-cache: `evalkit export DIR --to OUT --no-cache`;
* export cold: `evalkit export DIR --to OUT` on an empty store, then export warm on that store.

It prints one row per command with the RSS at each scale and the ratio of the largest scale to
the smallest (the issue's goal: within 1.5x). `--repo DIR` runs another checkout's evalkit (to
measure before and after side by side); `--runs N` measures everything N times and prints a
table per run (the figures vary a little from run to run). Stores and outputs go to a temporary
directory, never into the corpora. It asserts nothing.

Every command runs with compiled bytecode, as an installed package does (compiled once into the
benchmark's temporary directory, then every command run once on the first corpus, not counted,
which compiles the other modules it imports): an environment that sets PYTHONDONTWRITEBYTECODE
would otherwise make each command compile evalkit from source, which adds megabytes to the peak
of the first scale. The warm sweep measures the store: any whole-output snapshot a sweep keeps in
the cache directory (`snapshot-*`) is deleted before it runs.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

COMMANDS = (
    "sweep-serial",
    "sweep-parallel",
    "sweep-cold",
    "sweep-warm",
    "export-no-cache",
    "export-cold",
    "export-warm",
)


def peak_rss(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    """Peak RSS (MB) of the largest process of one command (it must exit 0).

    It runs in `cwd`, a directory of the benchmark's own: `python -m` puts the working directory
    first on the path, so run from a checkout it would import that checkout's evalkit, not the
    one `--repo` names."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(argv, stdout=out, stderr=err, env=env, cwd=cwd)
        _, status, usage = os.wait4(proc.pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            err.seek(0)
            raise SystemExit(f"{' '.join(argv)} failed: {err.read().decode()[-500:]}")
    return usage.ru_maxrss / 1024  # KB: whole megabytes would move a ratio by up to 4%


def prime_bytecode(repo: Path, tmp: Path) -> dict[str, str]:
    """The environment every command runs in: `repo` first on the path, and its bytecode
    compiled once into `tmp`."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(PYTHONPATH=str(repo), PYTHONPYCACHEPREFIX=str(tmp / "pycache"))
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(repo / "evalkit")], env=env, check=True
    )
    return env


def drop_snapshots(store: Path) -> None:
    """Delete whole-output snapshots from a cache directory, so a warm sweep reads the store."""
    for path in store.rglob("snapshot-*"):
        if path.is_file() and not path.is_symlink():
            path.unlink()


def measure(corpus: Path, env: dict[str, str], only: set[str], tmp: Path) -> dict[str, float]:
    ek = [sys.executable, "-m", "evalkit"]
    store, out = tmp / "store", tmp / "out"
    got: dict[str, float] = {}

    def fresh(*paths: Path) -> None:
        for p in paths:
            shutil.rmtree(p, ignore_errors=True)

    plan = {
        "sweep-serial": lambda: [*ek, "sweep", str(corpus), "--no-cache", "-j", "1", "--json"],
        "sweep-parallel": lambda: [*ek, "sweep", str(corpus), "--no-cache", "--json"],
        "sweep-cold": lambda: [*ek, "sweep", str(corpus), "--json", "--cache-dir", str(store)],
        "sweep-warm": lambda: [*ek, "sweep", str(corpus), "--json", "--cache-dir", str(store)],
        "export-no-cache": lambda: [*ek, "export", str(corpus), "--to", str(out), "--no-cache"],
        "export-cold": lambda: [*ek, "export", str(corpus), "--to", str(out)],
        "export-warm": lambda: [*ek, "export", str(corpus), "--to", str(out)],
    }
    for name in COMMANDS:
        if name not in only and not (name.endswith("-cold") and name[:-5] + "-warm" in only):
            continue
        if name in ("sweep-cold", "export-cold", "export-no-cache", "sweep-serial"):
            fresh(store, out)
        cmd_env = env
        if name.startswith("export-"):
            # `evalkit export` has no --cache-dir: its store is under XDG_CACHE_HOME.
            cmd_env = {**env, "XDG_CACHE_HOME": str(store)}
        if name == "sweep-warm":
            drop_snapshots(store)
        rss = peak_rss(plan[name](), cmd_env, tmp)
        if name in only:
            got[name] = rss
    fresh(store, out)
    return got


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--corpus",
        default="1=data/corpus,10=/tmp/c10x_12a,30=/tmp/c30x",
        help="SCALE=DIR pairs, comma-separated (default: bundled, /tmp/c10x_12a, /tmp/c30x)",
    )
    parser.add_argument("--only", default=",".join(COMMANDS), help="commands to measure")
    parser.add_argument("--repo", type=Path, default=REPO, help="checkout whose evalkit runs")
    parser.add_argument("--runs", type=int, default=1, help="times to measure everything")
    args = parser.parse_args(argv)
    only = {c for c in args.only.split(",") if c}
    unknown = only - set(COMMANDS)
    if unknown:
        parser.error(f"unknown command(s) {', '.join(sorted(unknown))}")
    corpora = []
    for pair in args.corpus.split(","):
        scale, _, d = pair.partition("=")
        path = Path(d) if Path(d).is_absolute() else REPO / d
        if not path.is_dir():
            print(f"skipping scale {scale}: {path} is not a directory", file=sys.stderr)
            continue
        corpora.append((scale, path))
    repo = args.repo.resolve()
    scales = [s for s, _ in corpora]
    with tempfile.TemporaryDirectory(prefix="evalkit-bench-memory-") as tmp:
        env = prime_bytecode(repo, Path(tmp))
        # Once, not counted: the bytecode prefix holds only evalkit's, so the first command to
        # import a module of the standard library or a dependency compiles it (megabytes more
        # at the first scale measured: a serial 1x sweep peaks at 27 MB instead of 24).
        measure(corpora[0][1], env, only, Path(tmp))
        for run in range(1, args.runs + 1):
            results: dict[str, dict[str, float]] = {}
            for scale, path in corpora:
                results[scale] = measure(path, env, only, Path(tmp))
                print(f"measured {scale}x ({path.name})", file=sys.stderr)
            title = f", run {run} of {args.runs}" if args.runs > 1 else ""
            print(f"peak RSS (MB) of the largest process, evalkit from {args.repo}{title}")
            print(f"  {'command':<16}" + "".join(f"{s + 'x':>8}" for s in scales) + "   last/first")
            for name in COMMANDS:
                if name not in only:
                    continue
                row = [results[s][name] for s in scales]
                ratio = f"{row[-1] / row[0]:.2f}" if row and row[0] else "-"
                print(f"  {name:<16}" + "".join(f"{v:>8.1f}" for v in row) + f"   {ratio:>10}")
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
