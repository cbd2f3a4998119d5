"""Running the caller's driver for one sample (spec §8.2, §8.3).

The driver runs without a shell as the leader of its own process group (a new session), with
stdin, stdout and stderr on the null device: its output is never kept or echoed. At the time
limit the whole group gets SIGTERM, then SIGKILL after a grace period; descendants that left the
group (daemons in a new session) are tracked and killed too (`_ProcessTree`). The group is also reaped
after a normal exit and when the collector is interrupted; the interruption is then re-raised.

The environment is the collector's own minus any inherited `WEBCODEX_BENCH_*` variable, plus
the contract variables of §8.2. The model/configuration digest is deliberately not among them:
a driver reads its attestation from the configuration it actually runs.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = [
    "DEFAULT_KILL_GRACE",
    "DEFAULT_TIME_LIMIT",
    "DriverRun",
    "driver_environment",
    "run_driver",
]

DEFAULT_TIME_LIMIT = 30 * 60.0  # §8.3: 30 minutes per driver
DEFAULT_KILL_GRACE = 5.0  # §8.3: SIGTERM, then SIGKILL after 5 seconds
ENV_PREFIX = "WEBCODEX_BENCH_"


@dataclass(frozen=True)
class DriverRun:
    """How one driver run ended. `elapsed_ms` is the collector's own measurement."""

    exit_code: int | None  # None after a timeout
    timed_out: bool
    elapsed_ms: int


def driver_environment(
    base: Mapping[str, str],
    *,
    workspace: str,
    case_id: str,
    prompt: str,
    variant: str,
    surface: str,
    base_revision: str,
    case_fingerprint: str,
    receipt: str,
    host_cell_policy: str | None,
) -> dict[str, str]:
    """The §8.2 environment; `WEBCODEX_BENCH_HOST_CELL_POLICY` is unset, not empty, when None."""
    env = {k: v for k, v in base.items() if not k.startswith(ENV_PREFIX)}
    env.update(
        {
            "WEBCODEX_BENCH_WORKSPACE": workspace,
            "WEBCODEX_BENCH_CASE_ID": case_id,
            "WEBCODEX_BENCH_PROMPT": prompt,
            "WEBCODEX_BENCH_VARIANT": variant,
            "WEBCODEX_BENCH_SURFACE": surface,
            "WEBCODEX_BENCH_BASE_REVISION": base_revision,
            "WEBCODEX_BENCH_CASE_FINGERPRINT": case_fingerprint,
            "WEBCODEX_BENCH_DRIVER_RESULT": receipt,
        }
    )
    if host_cell_policy is not None:
        env["WEBCODEX_BENCH_HOST_CELL_POLICY"] = host_cell_policy
    return env


def run_driver(
    argv: Sequence[str],
    *,
    cwd: str,
    env: Mapping[str, str],
    time_limit: float = DEFAULT_TIME_LIMIT,
    kill_grace: float = DEFAULT_KILL_GRACE,
) -> DriverRun:
    """Run the driver to completion or to the time limit; reap its whole process group."""
    started = time.monotonic()
    tracker = _ProcessTree()
    proc = subprocess.Popen(
        list(argv),
        cwd=cwd,
        env=dict(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # leader of its own session and process group
        close_fds=True,
    )
    pgid = proc.pid
    try:
        try:
            code = tracker.wait(proc, started + time_limit)
            timed_out = False
        except subprocess.TimeoutExpired:
            code, timed_out = None, True
        elapsed_ms = int((time.monotonic() - started) * 1000)
        _terminate_group(pgid, proc, kill_grace)
        tracker.kill_all(proc.pid)
    except BaseException:  # an interruption: reap the group, then re-raise it
        _terminate_group(pgid, proc, kill_grace)
        tracker.kill_all(proc.pid)
        raise
    return DriverRun(exit_code=code, timed_out=timed_out, elapsed_ms=elapsed_ms)


class _ProcessTree:
    """Every process the driver starts, including daemons that leave its process group.

    A daemonising grandchild calls `setsid()` and escapes the group kill. On Linux the
    collector becomes a child subreaper (`PR_SET_CHILD_SUBREAPER`), so such an orphan is
    re-parented to the collector instead of init, and the process tree is sampled from
    `/proc` while the driver runs. At the end every descendant seen, and every orphan that
    arrived during the run, is killed and reaped. What remains possible: a descendant that
    is re-parented to a subreaper of its own making and is never sampled alive, or a
    system without `/proc`, where only the process group is killed.
    """

    def __init__(self) -> None:
        self.enabled = _become_subreaper() and os.path.isdir("/proc")
        self.me = os.getpid()
        self.before = set(_children_of(self.me)) if self.enabled else set()
        self.threshold: int | None = None  # the driver's start time: nothing older is ours
        self.seen: dict[int, int] = {}  # pid → start time (a reused pid is not ours)

    def wait(self, proc: subprocess.Popen, deadline: float) -> int:
        while True:
            self.sample(proc.pid)
            code = proc.poll()
            if code is not None:
                return code
            if time.monotonic() >= deadline:
                raise subprocess.TimeoutExpired(proc.args, 0)
            time.sleep(0.05)

    def sample(self, root: int) -> None:
        if not self.enabled:
            return
        parents = _ppid_map()
        frontier = [root, self.me]
        found: set[int] = set()
        while frontier:
            parent = frontier.pop()
            for pid, ppid in parents.items():
                if ppid == parent and pid not in found and pid != root:
                    if parent == self.me and (pid in self.before or pid == root):
                        continue
                    found.add(pid)
                    frontier.append(pid)
        if self.threshold is None:
            self.threshold = _start_time(root) or _start_time(self.me) or 0
        for pid in found:
            start = _start_time(pid)
            if start is not None and start >= self.threshold:
                self.seen.setdefault(pid, start)

    def kill_all(self, root: int) -> None:
        if not self.enabled:
            return
        for _ in range(20):  # a process may fork while its siblings die: repeat until none
            self.sample(root)
            alive = [p for p, t in self.seen.items() if _start_time(p) == t and _alive(p)]
            for pid in alive:
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            self._reap()
            if not alive:
                return
            time.sleep(0.02)

    def _reap(self) -> None:
        for pid in list(self.seen):
            if pid in self.before:
                continue
            try:
                os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                pass


def _become_subreaper() -> bool:
    if not os.uname().sysname == "Linux":
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        return False


def _stat_fields(pid: int) -> list[str] | None:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            return fh.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def _ppid_map() -> dict[int, int]:
    out: dict[int, int] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return out
    for entry in entries:
        if entry.isdigit():
            fields = _stat_fields(int(entry))
            if fields is not None:
                out[int(entry)] = int(fields[1])
    return out


def _children_of(pid: int) -> list[int]:
    return [p for p, pp in _ppid_map().items() if pp == pid]


def _start_time(pid: int) -> int | None:
    fields = _stat_fields(pid)
    return int(fields[19]) if fields is not None else None


def _alive(pid: int) -> bool:
    fields = _stat_fields(pid)
    return fields is not None and fields[0] != "Z"


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return _has_live_member(pgid)


def _has_live_member(pgid: int) -> bool:
    """Whether a non-zombie process is left in the group (zombies cannot be signalled away)."""
    try:
        entries = os.listdir("/proc")
    except OSError:
        return True  # no /proc: trust killpg
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            return True
    return False


def _terminate_group(pgid: int, proc: subprocess.Popen, grace: float) -> None:
    """SIGTERM the group, SIGKILL it after `grace` seconds, and reap the leader."""
    if _group_alive(pgid):
        _signal(pgid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            proc.poll()
            if not _group_alive(pgid):
                break
            time.sleep(0.02)
        else:
            _signal(pgid, signal.SIGKILL)
    try:
        proc.wait(timeout=max(grace, 1.0))
    except subprocess.TimeoutExpired:
        _signal(pgid, signal.SIGKILL)
        proc.wait()


def _signal(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass
