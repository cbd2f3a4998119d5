"""Running the caller's driver for one sample (spec §8.2, §8.3).

The driver runs without a shell as the leader of its own process group (a new session), with
stdin, stdout and stderr on the null device: its output is never kept or echoed. At the time
limit the whole group gets SIGTERM, then SIGKILL after a grace period. The group is also reaped
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
            code = proc.wait(timeout=time_limit)
            timed_out = False
        except subprocess.TimeoutExpired:
            code, timed_out = None, True
        elapsed_ms = int((time.monotonic() - started) * 1000)
        _terminate_group(pgid, proc, kill_grace)
    except BaseException:  # an interruption: reap the group, then re-raise it
        _terminate_group(pgid, proc, kill_grace)
        raise
    return DriverRun(exit_code=code, timed_out=timed_out, elapsed_ms=elapsed_ms)


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
