"""Issue 21, item 8: what an interrupted writer left in the store is removed.

A `kill -9` while a sweep writes its stored output leaves a `.tmp-*.out` file in the store
directory. The next sweep (and `evalkit cache prune`) removes such a file: only evalkit's own
temporary files (by name, regular files, never a link), and only stale ones. A temporary file is
live while its writer holds the lock it takes on it (a killed writer's lock is released by the
kernel), so a concurrent writer's file is never removed, however old.
"""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from evalkit.store.admin import prune_cache
from evalkit.store.temps import temp_file
from evalkit.sweep import run_sweep
from tests.sweep_helpers import cited

REPO = Path(__file__).resolve().parent.parent

# The sweep, killed with SIGKILL once its stored output (the snapshot) has its first part.
_KILLED = """
import os, signal, sys
from evalkit.store import snapshot
write = snapshot._Writer.write
def die(self, text):
    write(self, text)
    os.kill(os.getpid(), signal.SIGKILL)
snapshot._Writer.write = die
from evalkit.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _corpus(root: Path) -> Path:
    cited(root, "cg22/ab-express/run-new-1.jsonl", 100, 50)
    cited(root, "cg22/ab-express/run-baseline-1.jsonl", 50, 100)
    return root


def _age(path: Path, seconds: float) -> None:
    then = time.time_ns() - int(seconds * 1e9)
    os.utime(path, ns=(then, then))


def _temps(cache: Path) -> list[Path]:
    return sorted(cache.rglob(".tmp-*"))


def test_a_sweep_killed_while_writing_leaves_a_temp_file_the_next_sweep_removes(tmp_path):
    root = _corpus(tmp_path / "c")
    time.sleep(2.1)  # the sweep stores its output only when no entry changed in two seconds
    cache = tmp_path / "cache"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    argv = [sys.executable, "-c", _KILLED, "sweep", str(root), "--cache-dir", str(cache)]
    done = subprocess.run(argv, capture_output=True, env=env)
    assert done.returncode == -signal.SIGKILL
    (left,) = _temps(cache)
    assert left.name.endswith(".out")
    _age(left, 10)  # the next sweep comes a few seconds later
    run = subprocess.run(
        [sys.executable, "-m", "evalkit", "sweep", str(root), "--cache-dir", str(cache)],
        capture_output=True,
        env=env,
    )
    assert run.returncode == 0, run.stderr
    assert _temps(cache) == []


def _store_dir(cache: Path, root: Path) -> Path:
    run_sweep(root, cache_dir=cache, jobs=1)
    (directory,) = {p.parent for p in cache.rglob("store.json")}
    return directory


def test_the_next_sweep_removes_stale_temp_files_and_keeps_live_and_foreign_ones(tmp_path):
    root = _corpus(tmp_path / "c")
    cache = tmp_path / "cache"
    directory = _store_dir(cache, root)
    stale = [directory / ".tmp-abcd1234.out", directory / ".tmp-efgh5678.parquet"]
    for p in stale:
        p.write_bytes(b"half written")
        _age(p, 10)
    live = directory / ".tmp-live0000.out"
    live.write_bytes(b"being written")
    _age(live, 3600)
    fresh = directory / ".tmp-fresh000.json"  # just made: its writer may not hold its lock yet
    fresh.write_bytes(b"")
    foreign = directory / ".tmp-not-evalkits.out"
    foreign.write_bytes(b"someone else's")
    link = directory / ".tmp-link0000.out"
    outside = tmp_path / "outside.out"
    outside.write_bytes(b"keep")
    link.symlink_to(outside)
    for p in (foreign, link):
        _age(p, 3600) if p is foreign else None
    fd = os.open(live, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # a concurrent writer's lock
        cited(root, "cg22/ab-express/run-new-2.jsonl", 10, 10)  # the next sweep writes
        run_sweep(root, cache_dir=cache, jobs=1)
        assert not any(p.exists() for p in stale)
        assert live.exists() and fresh.exists() and foreign.exists() and link.is_symlink()
        assert outside.read_bytes() == b"keep"
        removed = prune_cache(cache)
        assert live.exists() and removed.temp_files == 0
    finally:
        os.close(fd)
    done = prune_cache(cache)  # the writer is gone: its file is stale now
    assert done.temp_files == 1 and not live.exists()


def test_prune_removes_a_temp_file_a_killed_writer_left_minutes_ago(tmp_path):
    root = _corpus(tmp_path / "c")
    cache = tmp_path / "cache"
    directory = _store_dir(cache, root)
    left = directory / ".tmp-kill9xyz.out"
    left.write_bytes(b"cut short")
    _age(left, 120)
    dry = prune_cache(cache, dry_run=True)
    assert dry.temp_files == 1 and left.exists()
    assert prune_cache(cache).temp_files == 1 and not left.exists()


def test_evalkits_own_temp_files_are_locked_while_written(tmp_path):
    fd, name = temp_file(tmp_path, ".out")
    try:
        other = os.open(name, os.O_RDONLY)
        try:
            try:
                fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
                locked = False
            except BlockingIOError:
                locked = True
        finally:
            os.close(other)
        assert locked
    finally:
        os.close(fd)
