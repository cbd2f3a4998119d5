"""Issue 21, item 4: a parser worker never outlives its sweep.

Killing only the main sweep process (as an out-of-memory killer does) left a worker blocked on
its pipe, holding standard output, so `evalkit sweep DIR | jq` never finished. Each worker now
dies with its parent (Linux's parent-death signal), and checks its parent anyway (the portable
fallback): the test kills the main process of a parallel sweep with SIGKILL and checks, by PID,
that every worker has exited within a few seconds, and that standard output is closed.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.paired_helpers import process_alive
from tests.sweep_helpers import cited

REPO = Path(__file__).resolve().parent.parent

# The sweep, each session's parse slowed down so that the workers are busy when it is killed;
# `nodeath` turns the parent-death signal off, leaving the fallback check alone.
_PROBE = """
import sys, time
from evalkit.corpus import parse, records
slow = records._analyse  # every session's parse, stored or not
def analyse(*args, **kwargs):
    time.sleep(0.4)
    return slow(*args, **kwargs)
records._analyse = analyse
if sys.argv[1] == "nodeath":
    parse._death_signal = lambda: None
from evalkit.cli import main
sys.exit(main(sys.argv[2:]))
"""

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def _children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            found.append(int(entry))
    return found


@pytest.mark.parametrize("mode", ["death-signal", "nodeath"])
def test_every_worker_exits_after_the_main_sweep_is_killed(tmp_path, mode):
    root = tmp_path / "c"
    for i in range(24):
        # ~60 kB each: over the size below which the sweep parses in one process.
        cited(root, f"cg22/ab-express/run-new-{i + 1}.jsonl", 30_000, 30_000)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    argv = [sys.executable, "-c", _PROBE, mode, "sweep", str(root), "--no-cache", "-j", "3"]
    main = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    workers: list[int] = []
    try:
        deadline = time.monotonic() + 30
        while len(workers) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
            workers = _children(main.pid)
        assert len(workers) == 2, "the sweep started no workers"
        time.sleep(0.5)  # the workers are parsing, or blocked on their pipe
        os.kill(main.pid, signal.SIGKILL)
        main.wait()
        deadline = time.monotonic() + 5
        while any(map(process_alive, workers)) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not [pid for pid in workers if process_alive(pid)], "orphaned workers"
        # Nothing holds standard output any more: a reader sees its end (`| jq` finishes).
        fd = main.stdout.fileno()
        end = time.monotonic() + 5
        while time.monotonic() < end:
            ready, _, _ = select.select([fd], [], [], 0.2)
            if ready and not os.read(fd, 1 << 16):
                break
        else:
            pytest.fail("standard output still open")
    finally:
        if main.poll() is None:
            workers += _children(main.pid)
            main.kill()
            main.wait()
        for pid in workers:  # this test's own processes only, by PID
            if process_alive(pid):
                os.kill(pid, signal.SIGKILL)
        main.stdout.close()
