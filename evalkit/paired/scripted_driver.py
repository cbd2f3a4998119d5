"""The scripted driver: SCRIPTED, for collector testing only, never real-model evidence (spec §8.6).

It speaks the driver contract of spec §8.2 without any model or Host: it reads the
`WEBCODEX_BENCH_*` environment, writes a scripted Audit database of canonical outer calls (the
shape `evalkit.paired.audit` reads), performs the guarded two-file edit when the case asks for
it, and writes a receipt (spec §5). Evidence it produces must be collected with
`--scripted-driver` (the collector refuses it otherwise), is marked `driver_kind: "scripted"`,
never passes the strict gate and must never be stored under `data/evidence/`.

Like a real driver it takes its attestation from the configuration it was given
(`--pinned-config`, a model/configuration record whose digest it computes), never from the
collector: the digest is not in its environment.

`--mode` selects a good receipt or one kind of bad one, so tests can exercise each rule:

    good                      a receipt and Audit rows that satisfy every contract of the case
    hang                      start a grandchild, then sleep past any time limit (--pid-file)
    symlink | fifo | oversize a receipt path that is a symlink, a FIFO, or 65 KiB of JSON
    no-receipt                exit 0 without writing a receipt
    extra-attestation-fields  an efficiency_attestation with a field beyond the five
    mismatched-attestation    an efficiency_attestation bound to another base revision
    duplicate-call-id         Host cells that list one call twice
    missing-call              Host cells that omit one measured call
    two-call-cell             two calls in one Host cell (violates host_single_call)
    private-fields            private text in fields the collector must never copy
    exit-nonzero              a good receipt, then exit status 3
    move-head                 commit inside the workspace (the HEAD changes)
    dirty                     leave an untracked file in the workspace
    unsupported               a receipt with status unsupported
    no-task-timing            a receipt that omits task_timing (runner elapsed-time fallback)

`--only-case`, `--only-variant` and `--only-policy` restrict a bad mode to matching samples;
other samples get a good receipt. The driver prints a marker line on stdout and stderr so tests
can show the collector never stores or echoes driver output.

Usage:
    python -m evalkit.paired.scripted_driver --pinned-config CONFIG.json [--mode MODE]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from evalkit.paired.audit import NESTED_TOOLS
from evalkit.paired.manifest import model_config_digest
from evalkit.paired.oracle import FIXTURE_DIR

__all__ = ["DRIVER_OUTPUT_MARKER", "MODES", "PRIVATE_MARKER", "main"]

DRIVER_OUTPUT_MARKER = "SCRIPTED-DRIVER-OUTPUT-never-stored"
PRIVATE_MARKER = "SCRIPTED-PRIVATE-never-copied"
MODES = (
    "good",
    "hang",
    "symlink",
    "fifo",
    "oversize",
    "no-receipt",
    "extra-attestation-fields",
    "mismatched-attestation",
    "duplicate-call-id",
    "missing-call",
    "two-call-cell",
    "private-fields",
    "exit-nonzero",
    "move-head",
    "dirty",
    "unsupported",
    "no-task-timing",
)
# Scripted outer calls per case: (tool, job_event, exit_code). Each satisfies its case's runtime
# contracts (spec §2.3) under evalkit's Audit reading.
SCRIPTS = {
    "readonly_review": [
        ("git_status", None, None),
        ("read_files", None, None),
        ("read_files", None, None),
        ("search_project", None, None),
        ("git_diff", None, None),
    ],
    "guarded_multi_file_edit": [
        ("search_project", None, None),
        ("read_files", None, None),
        ("read_files", None, None),
        ("edit_project_files", None, None),
        ("read_files", None, None),
        ("git_diff", None, None),
    ],
    "long_validation_handoff": [
        ("cargo_test", "launch_pending", None),
        ("read_files", None, None),
        ("observe_jobs", "observe_running", None),
        ("observe_jobs", "observe_terminal", 0),
    ],
    "selection_single_read": [("read_files", None, None)],
    "selection_batch_read": [("read_files", None, None), ("read_files", None, None)],
    "selection_cross_tool_review": [
        ("git_status", None, None),
        ("git_log", None, None),
        ("search_project", None, None),
        ("read_files", None, None),
    ],
    "selection_compound_source_context": [("search_file_context", None, None)],
}
VALIDATION_CASES = {"long_validation_handoff"}
SESSION = "wc_sess_scripted"
STARTED_AT_MS = 1_760_700_000_000


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m evalkit.paired.scripted_driver",
        description="SCRIPTED driver for collector tests only; never real-model evidence. "
        "Reads WEBCODEX_BENCH_* and writes Audit rows and a receipt.",
    )
    parser.add_argument("--pinned-config", required=True, help="model/configuration record JSON")
    parser.add_argument("--mode", choices=MODES, default="good")
    parser.add_argument("--only-case", help="apply --mode only to this case id")
    parser.add_argument("--only-variant", help="apply --mode only to this variant")
    parser.add_argument("--only-policy", help="apply --mode only to this Host cell policy")
    parser.add_argument("--pid-file", help="hang mode: write 'driver grandchild' pids here")
    parser.add_argument("--ignore-term", action="store_true", help="hang mode: ignore SIGTERM")
    parser.add_argument(
        "--env-log", help="append the environment and working directory here (JSON lines)"
    )
    return parser


def _calls(case_id: str, variant: str, surface: str, label: str) -> list[dict]:
    script = list(SCRIPTS.get(case_id, [("read_files", None, None)]))
    if variant == "code_mode":
        script.insert(0, (NESTED_TOOLS[surface], None, None))
    job = f"job-{label}"
    calls = []
    for i, (tool, event, code) in enumerate(script):
        calls.append(
            {
                "seq": i + 1,
                "server_trace_id": f"trace-{label}-{i}",
                "tool_name": tool,
                "outcome": "ok",
                "result_bytes": 1000 + 17 * i + len(tool),
                "window_id": "w1",
                "job_id": job if event else None,
                "job_event": event,
                "exit_code": code,
                "complete": 1,
            }
        )
    return calls


def _write_audit(path: Path, calls: list[dict]) -> None:
    if path.exists():
        path.unlink()
    db = sqlite3.connect(path)
    try:
        db.execute("PRAGMA synchronous = OFF")  # scratch data in the collector's temporary dir
        db.execute("PRAGMA journal_mode = MEMORY")
        db.execute(
            "CREATE TABLE outer_calls (workflow_session_id TEXT NOT NULL, seq INTEGER NOT NULL, "
            "server_trace_id TEXT NOT NULL, tool_name TEXT NOT NULL, outcome TEXT NOT NULL, "
            "result_bytes INTEGER, window_id TEXT, job_id TEXT, job_event TEXT, "
            "exit_code INTEGER, complete INTEGER NOT NULL)"
        )
        db.executemany(
            "INSERT INTO outer_calls VALUES (:session, :seq, :server_trace_id, :tool_name, "
            ":outcome, :result_bytes, :window_id, :job_id, :job_event, :exit_code, :complete)",
            [{"session": SESSION, **c} for c in calls],
        )
        db.commit()
    finally:
        db.close()


def _cells(hashes: list[str], label: str, policy: str, mode: str) -> list[dict]:
    groups = [[h] for h in hashes]
    if mode == "two-call-cell" and len(hashes) >= 2:
        groups = [hashes[:2]] + [[h] for h in hashes[2:]]
    elif mode == "duplicate-call-id" and hashes:
        groups.append([hashes[0]])  # the same call attested in a second cell
    elif mode == "missing-call":
        groups = groups[:-1]
    cells = [
        {"cell_id_sha256": _sha(f"cell-{label}-{i}"), "tool_trace_ids_sha256": g}
        for i, g in enumerate(groups)
    ]
    if policy == "host_composition_allowed":  # one attested empty cell: allowed (§12.1)
        cells.append({"cell_id_sha256": _sha(f"cell-{label}-empty"), "tool_trace_ids_sha256": []})
    return cells


def _edit_fixture(workspace: Path) -> None:
    for path in sorted((workspace / FIXTURE_DIR).glob("*")):
        text = path.read_text(encoding="utf-8")
        edited = text.replace("BENCH_TARGET_ALPHA=before", "BENCH_TARGET_ALPHA=after").replace(
            "BENCH_TARGET_BETA=before", "BENCH_TARGET_BETA=after"
        )
        if edited != text:
            path.write_text(edited, encoding="utf-8")


def _receipt(env: dict, args, mode: str, audit_db: Path) -> dict:
    case_id, variant, surface = (
        env["WEBCODEX_BENCH_CASE_ID"],
        env["WEBCODEX_BENCH_VARIANT"],
        env["WEBCODEX_BENCH_SURFACE"],
    )
    policy = env.get("WEBCODEX_BENCH_HOST_CELL_POLICY")
    label = Path(env["WEBCODEX_BENCH_WORKSPACE"]).name
    calls = _calls(case_id, variant, surface, label)
    _write_audit(audit_db, calls)
    record = json.loads(Path(args.pinned_config).read_text(encoding="utf-8"))
    attestation = {
        "model_config_digest": model_config_digest(record),  # from the configured run
        "base_revision": env["WEBCODEX_BENCH_BASE_REVISION"],
        "case_fingerprint": env["WEBCODEX_BENCH_CASE_FINGERPRINT"],
        "variant": variant,
        "surface": surface,
    }
    if mode == "extra-attestation-fields":
        attestation["private_note"] = PRIVATE_MARKER
    if mode == "mismatched-attestation":
        attestation["base_revision"] = _sha(PRIVATE_MARKER)[:40]
    receipt = {
        "status": "unsupported" if mode == "unsupported" else "pass",
        "audit_db": str(audit_db),
        "workflow_session_id": SESSION,
        "trace_root": "",
        "repair_turns": {"total": 0, "by_reason": {}},
        "task_timing": {
            "started_at_ms": STARTED_AT_MS,
            "ended_at_ms": STARTED_AT_MS + 1000 * len(calls),
        },
        "correctness": {
            "task_verdict": "pass",
            "validation_verdict": "pass" if case_id in VALIDATION_CASES else "not_required",
        },
        "efficiency_attestation": attestation,
    }
    if policy is not None:
        hashes = [_sha(c["server_trace_id"]) for c in calls]
        receipt["host_cell_attestation"] = {
            "policy": policy,
            "source": "caller_ui_attestation",
            "ui_evidence_sha256": _sha(f"ui-evidence-{label}"),
            "complete_tool_call_coverage": True,
            "cells": _cells(hashes, label, policy, mode),
        }
    if mode == "no-task-timing":
        del receipt["task_timing"]
    if mode == "private-fields":
        receipt["private_model_text"] = PRIVATE_MARKER
        receipt["raw_tool_arguments"] = {"query": PRIVATE_MARKER}
        receipt["trace_root"] = PRIVATE_MARKER
    return receipt


def _hang(args) -> None:
    import signal

    if args.ignore_term:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    child_code = "import signal, time\n"
    if args.ignore_term:
        child_code += "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    child_code += "time.sleep(600)\n"
    child = subprocess.Popen([sys.executable, "-c", child_code])  # stays in our process group
    if args.pid_file:
        tmp = args.pid_file + ".tmp"
        Path(tmp).write_text(f"{os.getpid()} {child.pid}\n", encoding="ascii")
        os.replace(tmp, args.pid_file)
    time.sleep(600)


def _applies(args, env: dict) -> bool:
    return (
        (args.only_case is None or args.only_case == env.get("WEBCODEX_BENCH_CASE_ID"))
        and (args.only_variant is None or args.only_variant == env.get("WEBCODEX_BENCH_VARIANT"))
        and (
            args.only_policy is None
            or args.only_policy == env.get("WEBCODEX_BENCH_HOST_CELL_POLICY")
        )
    )


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    env = dict(os.environ)
    print(DRIVER_OUTPUT_MARKER)
    print(DRIVER_OUTPUT_MARKER, file=sys.stderr)
    if args.env_log:  # tests check the §8.2 contract, including what must be absent
        with open(args.env_log, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"cwd": os.getcwd(), "env": env}, sort_keys=True) + "\n")
    mode = args.mode if _applies(args, env) else "good"
    workspace = Path(env["WEBCODEX_BENCH_WORKSPACE"])
    receipt_path = Path(env["WEBCODEX_BENCH_DRIVER_RESULT"])
    if mode == "hang":
        _hang(args)
        return 0
    if env["WEBCODEX_BENCH_CASE_ID"] == "guarded_multi_file_edit":
        _edit_fixture(workspace)
    if mode == "no-receipt":
        return 0
    if mode == "fifo":
        os.mkfifo(receipt_path)
        return 0
    audit_db = receipt_path.with_name(receipt_path.stem + ".audit.sqlite3")  # outside the workspace
    text = json.dumps(_receipt(env, args, mode, audit_db), indent=2)
    if mode == "oversize":
        receipt = json.loads(text)
        receipt["padding"] = "x" * (65 * 1024)  # 65 KiB of padding: over the 64 KiB limit
        text = json.dumps(receipt)
    if mode == "symlink":
        target = receipt_path.with_name(receipt_path.stem + ".target.json")
        target.write_text(text, encoding="utf-8")
        os.symlink(target, receipt_path)
    else:
        receipt_path.write_text(text, encoding="utf-8")
    if mode == "move-head":
        subprocess.run(
            [
                "git",
                "-c",
                "user.name=scripted",
                "-c",
                "user.email=scripted@invalid",
                "commit",
                "--allow-empty",
                "-q",
                "-m",
                "scripted head move",
            ],
            cwd=workspace,
            check=True,
            stdin=subprocess.DEVNULL,
        )
    if mode == "dirty":
        (workspace / "scripted-untracked.txt").write_text("dirty\n", encoding="utf-8")
    return 3 if mode == "exit-nonzero" else 0


if __name__ == "__main__":
    sys.exit(main())
