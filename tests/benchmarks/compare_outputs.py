"""Byte-identical check (a script, not a test): every user-visible output of one checkout against another.

Usage:
    python tests/benchmarks/compare_outputs.py record OUT --python PY [--cwd REPO] CORPUS [CORPUS ...]
    python tests/benchmarks/compare_outputs.py diff BEFORE AFTER

`record` runs, with the given interpreter and working directory (a checkout whose evalkit that
interpreter imports), on each corpus: `sweep` as text, `--json` and `--full` (serial, over two
processes and into a fresh store), `compare` for every A/B directory, `campaign` for every
campaign root, `run` (text and `--json`) for a deterministic sample of sessions, and every frame
of `load_corpus` written as CSV. The corpus `bundled` is the checkout's own `data/corpus`. Each invocation's stdout, stderr and exit code go to one file
under OUT. `diff` compares two such recordings file by file and prints each difference; it exits
1 when any output differs. A performance change is only a change when `diff` says nothing.

Paths are written relative to the corpus (the corpus root is replaced by `<CORPUS>` in every
output), so two recordings of copies of one corpus compare equal.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

_FRAMES = """
import sys
from pathlib import Path
import evalkit
root, out = sys.argv[1], Path(sys.argv[2])
corpus = evalkit.load_corpus(root, cache=False, jobs=1)
for name in ("sessions", "calls", "sections", "files", "tool_calls", "models"):
    corpus.frame(name).to_csv(out / f"frame-{name}.csv", index=False)
print(len(corpus.frame("sessions")))
"""

_RUN_SAMPLE = 24


def _sample(paths: list[Path], root: Path, k: int) -> list[Path]:
    """A deterministic spread of `k` paths (by a hash of the name relative to `root`, so that
    copies of one corpus give the same sample; not by chance)."""
    return sorted(
        paths, key=lambda p: hashlib.sha256(os.fsencode(p.relative_to(root))).hexdigest()
    )[:k]


def _invocations(corpus: Path) -> list[tuple[str, list[str]]]:
    c = str(corpus)
    out: list[tuple[str, list[str]]] = [
        ("sweep-text", ["sweep", c, "--no-cache", "-j", "1"]),
        ("sweep-json", ["sweep", c, "--no-cache", "-j", "1", "--json"]),
        ("sweep-full", ["sweep", c, "--no-cache", "-j", "1", "--full"]),
        ("sweep-json-j2", ["sweep", c, "--no-cache", "-j", "2", "--json"]),
        ("sweep-list-files", ["sweep", c, "--no-cache", "--list-files"]),
        ("sweep-json-store", ["sweep", c, "--json", "--cache-dir", "@STORE@"]),
        ("sweep-json-store-warm", ["sweep", c, "--json", "--cache-dir", "@STORE@"]),
        ("sweep-full-store-warm", ["sweep", c, "--full", "--cache-dir", "@STORE@"]),
    ]
    ab_dirs = sorted({p.parent for p in corpus.rglob("run-baseline-*.jsonl")})
    for d in ab_dirs:
        rel = d.relative_to(corpus).as_posix().replace("/", "_")
        out.append((f"compare-{rel}", ["compare", str(d), "baseline", "new"]))
        out.append((f"compare-json-{rel}", ["compare", str(d), "baseline", "new", "--json"]))
    roots = sorted({p.parent.parent.parent for p in corpus.rglob("run*/run-headless-with.jsonl")})
    for r in roots:
        rel = r.relative_to(corpus).as_posix().replace("/", "_") or "root"
        out.append((f"campaign-{rel}", ["campaign", str(r)]))
        out.append((f"campaign-json-{rel}", ["campaign", str(r), "--json"]))
    files = [p for p in corpus.rglob("*.jsonl") if ".t" not in p.name]
    for f in _sample(files, corpus, _RUN_SAMPLE):
        rel = f.relative_to(corpus).as_posix().replace("/", "_")
        out.append((f"run-{rel}", ["run", str(f)]))
        out.append((f"run-json-{rel}", ["run", str(f), "--json"]))
    return out


def record(out: Path, python: str, cwd: str, corpora: list[Path]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, PYTHONHASHSEED="0", COLUMNS="100")
    n = 0
    for corpus in corpora:
        # `bundled`: the checkout's own data/corpus (its outputs say it is the bundled corpus).
        corpus = (Path(cwd) / "data" / "corpus" if str(corpus) == "bundled" else corpus).resolve()
        dest = out / corpus.name
        dest.mkdir(exist_ok=True)
        store = Path(tempfile.mkdtemp(prefix="cmp-store-"))
        try:
            for name, args in _invocations(corpus):
                args = [a.replace("@STORE@", str(store / "s")) for a in args]
                p = subprocess.run(
                    [python, "-m", "evalkit", *args], cwd=cwd, env=env, capture_output=True
                )
                text = (
                    b"rc=%d\n--- stdout\n" % p.returncode + p.stdout + b"\n--- stderr\n" + p.stderr
                ).replace(str(corpus).encode(), b"<CORPUS>")
                text = text.replace(str(store).encode(), b"<STORE>")
                (dest / f"{name}.txt").write_bytes(text)
                n += 1
            p = subprocess.run(
                [python, "-c", _FRAMES, str(corpus), str(dest)],
                cwd=cwd,
                env=env,
                capture_output=True,
            )
            (dest / "frames.txt").write_bytes(b"rc=%d\n" % p.returncode + p.stdout + p.stderr)
            for f in dest.glob("frame-*.csv"):
                f.write_bytes(f.read_bytes().replace(str(corpus).encode(), b"<CORPUS>"))
            n += 1
        finally:
            shutil.rmtree(store, ignore_errors=True)
        print(f"{corpus.name}: recorded", flush=True)
    print(f"{n} invocations recorded under {out}")


def diff(before: Path, after: Path) -> int:
    a = {p.relative_to(before) for p in before.rglob("*") if p.is_file()}
    b = {p.relative_to(after) for p in after.rglob("*") if p.is_file()}
    bad = 0
    for rel in sorted(a ^ b):
        print(f"only in one recording: {rel}")
        bad += 1
    for rel in sorted(a & b):
        if (before / rel).read_bytes() != (after / rel).read_bytes():
            print(f"differs: {rel}")
            bad += 1
    print(f"{len(a & b)} outputs compared, {bad} differ")
    return 1 if bad else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("record")
    r.add_argument("out", type=Path)
    r.add_argument("corpora", type=Path, nargs="+")
    r.add_argument("--python", default=sys.executable)
    r.add_argument("--cwd", default=str(Path(__file__).resolve().parents[2]))
    d = sub.add_parser("diff")
    d.add_argument("before", type=Path)
    d.add_argument("after", type=Path)
    ns = ap.parse_args()
    if ns.cmd == "record":
        record(ns.out, ns.python, ns.cwd, ns.corpora)
        return 0
    return diff(ns.before, ns.after)


if __name__ == "__main__":
    sys.exit(main())
