"""Builders for paired-evidence fixtures: valid collected-style evidence, mutations, files.

`collected_evidence(experiment)` returns a decoded evidence object that passes the strict gate:
every sample is `pass`, attested with matching values, with runtime contracts, oracles and
correctness proven and (in `host_cell_policy`) a Host-cell attestation covering every measured
call. Tests mutate copies of it; `recount` keeps `status_counts` consistent after a mutation.
"""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path
from typing import Any

from evalkit.paired.manifest import load_cases

BASE = "3f1c2a9e8b7d6c5f4e3d2c1b0a9f8e7d6c5b4a39"
OTHER_COMMIT = "0" * 40
POLICIES = {"baseline": "host_single_call", "candidate": "host_composition_allowed"}
SENTINEL = "SENTINEL-7f3a-do-not-echo"


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


DIGEST = sha("model-config-record")


def lanes_for(experiment: str, lane: str, case) -> tuple[str, str, str | None]:
    """(variant, surface, policy) of a lane in an experiment (spec §1.3)."""
    if experiment == "direct_vs_host":
        return (
            ("direct", "direct", None)
            if lane == "baseline"
            else (
                "host_code_mode",
                "host_code_mode",
                None,
            )
        )
    if experiment == "host_cell_policy":
        return "host_code_mode", "host_code_mode", POLICIES[lane]
    if experiment == "nested_code_mode":
        return (
            ("direct", "direct", None)
            if lane == "baseline"
            else (
                "code_mode",
                case.nested_surface,
                None,
            )
        )
    return "host_code_mode", "host_code_mode", None


def make_sample(
    experiment: str,
    case,
    *,
    lane: str | None,
    pair: int | None = None,
    ordinal: int | None = None,
    repetition: int | None = None,
    calls: int = 3,
    composed: int = 0,
    instrumentation: Any = None,
) -> dict[str, Any]:
    """One passing sample; `composed` calls share the first cell (composition lanes only)."""
    variant, surface, policy = lanes_for(experiment, lane or "baseline", case)
    tag = f"{case.case_id}-{pair}-{repetition}-{lane}"
    call_ids = sorted(sha(f"{tag}-call-{i}") for i in range(calls))
    sample: dict[str, Any] = {
        "case_id": case.case_id,
        "pair": pair,
        "ordinal": ordinal,
        "repetition": repetition,
        "lane": lane,
        "variant": variant,
        "surface": surface,
        "policy": policy,
        "status": "pass",
        "correctness": {
            "task_verdict": "pass",
            "validation_verdict": "pass" if case.validation_required else "not_required",
        },
        "runtime_gates": dict.fromkeys(case.runtime_contracts, True),
        "fixture_oracle": (
            {"available": True, "passed": True}
            if case.fixture_oracle_required
            else {"available": False, "passed": None}
        ),
        "instrumentation": instrumentation,
        "metrics": {
            "task_wall_time_ms": 120_000 + calls,
            "outer_calls": calls,
            "serialized_tool_result_bytes": 10_000 * calls,
            "repair_turns": 0,
            "repair_turns_by_reason": {},
            "job_observe_calls": 0,
            "immediate_observe_calls": 0,
            "same_kind_serial_calls": 0,
            "observe_after_delivered_failure": 0,
            "nonempty_cells": None,
            "empty_cells": None,
        },
        "outer_call_ids_sha256": call_ids,
        "efficiency_attestation": {
            "model_config_digest": DIGEST,
            "base_revision": BASE,
            "case_fingerprint": case.fingerprint,
            "variant": variant,
            "surface": surface,
        },
        "host_cell_attestation": None,
    }
    if experiment == "host_cell_policy":
        groups = [call_ids[: composed + 1]] if composed else []
        groups += [[c] for c in call_ids[len(groups[0]) if groups else 0 :]]
        sample["host_cell_attestation"] = {
            "policy": policy,
            "source": "caller_ui_attestation",
            "ui_evidence_sha256": sha(f"{tag}-ui"),
            "complete_tool_call_coverage": True,
            "cells": [
                {"cell_id_sha256": sha(f"{tag}-cell-{i}"), "tool_trace_ids_sha256": g}
                for i, g in enumerate(groups)
            ],
        }
        sample["metrics"]["nonempty_cells"] = len(groups)
    return sample


def collected_evidence(
    experiment: str = "host_cell_policy",
    *,
    count: int = 3,
    driver_kind: str = "live_host",
) -> dict[str, Any]:
    """A valid collected-style evidence object for `experiment` that passes the strict gate."""
    manifest = load_cases()
    case_ids = list(manifest.experiment_cases(experiment))
    paired = experiment != "tool_selection"
    cases = []
    for case_id in case_ids:
        case = manifest.case(case_id)
        entry: dict[str, Any] = {"case_id": case_id, "case_fingerprint": case.fingerprint}
        if paired:
            entry["pairs"] = []
            for number in range(1, count + 1):
                order = ["baseline", "candidate"] if number % 2 else ["candidate", "baseline"]
                samples = [
                    make_sample(
                        experiment,
                        case,
                        lane=lane,
                        pair=number,
                        ordinal=k + 1,
                        calls=3 + number,
                        composed=1 if lane == "candidate" else 0,
                    )
                    for k, lane in enumerate(order)
                ]
                entry["pairs"].append({"pair": number, "order": order, "samples": samples})
        else:
            entry["repetitions"] = [
                make_sample(experiment, case, lane=None, repetition=r, calls=2 + r)
                for r in range(1, count + 1)
            ]
        cases.append(entry)
    doc = {
        "schema_version": 1,
        "kind": "paired_evidence",
        "experiment": experiment,
        "base_revision": BASE,
        "fixture_revision": None,
        "model_config_digest": DIGEST,
        "pair_count": count if paired else None,
        "repetition_count": None if paired else count,
        "case_ids": case_ids,
        "cases": cases,
        "status_counts": {},
        "provenance": {"source": "collected", "driver_kind": driver_kind, "note": "test fixture"},
        "notes": [],
    }
    return recount(doc)


def samples_of(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """Every present sample dict of a decoded evidence object, in file order."""
    out = []
    for entry in doc["cases"]:
        if "repetitions" in entry:
            out += entry["repetitions"]
        else:
            out += [s for p in entry["pairs"] for s in p["samples"] if s is not None]
    return out


def sample_at(doc, case_index=0, pair_index=0, position=0) -> dict[str, Any]:
    return doc["cases"][case_index]["pairs"][pair_index]["samples"][position]


def recount(doc: dict[str, Any]) -> dict[str, Any]:
    """Recompute `status_counts` from the samples (what a collector writes)."""
    counts = dict.fromkeys(("fail", "partial", "pass", "unsupported"), 0)
    for sample in samples_of(doc):
        counts[sample["status"]] += 1
    doc["status_counts"] = counts
    return doc


def mutated(doc: dict[str, Any], change) -> dict[str, Any]:
    out = copy.deepcopy(doc)
    change(out)
    return out


def spec_example() -> dict[str, Any]:
    """The shape of the spec §3.11 example: one Host-policy case, one pair.

    The baseline respects the single-call policy with three calls and one same-kind serial
    transition; the candidate composes four calls into two cells, lists one empty cell and has
    one invalid-argument repair.
    """
    manifest = load_cases()
    case = manifest.case("readonly_review")
    base = make_sample("host_cell_policy", case, lane="baseline", pair=1, ordinal=1, calls=3)
    base["metrics"]["same_kind_serial_calls"] = 1
    cand = make_sample("host_cell_policy", case, lane="candidate", pair=1, ordinal=2, calls=4)
    ids = cand["outer_call_ids_sha256"]
    cand["host_cell_attestation"]["cells"] = [
        {"cell_id_sha256": sha("c1"), "tool_trace_ids_sha256": [ids[2], ids[0]]},
        {"cell_id_sha256": sha("c2"), "tool_trace_ids_sha256": [ids[3], ids[1]]},
        {"cell_id_sha256": sha("c3"), "tool_trace_ids_sha256": []},
    ]
    cand["metrics"].update(
        nonempty_cells=2,
        empty_cells=1,
        repair_turns=1,
        repair_turns_by_reason={"invalid_arguments": 1},
    )
    doc = {
        "schema_version": 1,
        "kind": "paired_evidence",
        "experiment": "host_cell_policy",
        "base_revision": BASE,
        "fixture_revision": None,
        "model_config_digest": DIGEST,
        "pair_count": 1,
        "repetition_count": None,
        "case_ids": ["readonly_review"],
        "cases": [
            {
                "case_id": "readonly_review",
                "case_fingerprint": case.fingerprint,
                "pairs": [{"pair": 1, "order": ["baseline", "candidate"], "samples": [base, cand]}],
            }
        ],
        "status_counts": {},
        "provenance": {"source": "collected", "driver_kind": "live_host", "note": "Example only."},
        "notes": [],
    }
    return recount(doc)


def write_json(path: Path, obj: Any) -> Path:
    path.write_text(json.dumps(obj, indent=2), encoding="utf-8")
    return path


# ----------------------------------------------------------------------------- collector (§8)

BENCH_GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_AUTHOR_NAME": "evalkit tests",
    "GIT_AUTHOR_EMAIL": "tests@evalkit.invalid",
    "GIT_COMMITTER_NAME": "evalkit tests",
    "GIT_COMMITTER_EMAIL": "tests@evalkit.invalid",
    "GIT_AUTHOR_DATE": "2026-10-17T00:00:00Z",
    "GIT_COMMITTER_DATE": "2026-10-17T00:00:00Z",
}
BENCH_FILES = {
    "README.md": "benchmark fixture repository\n",
    "src/tool_runtime/window_activity.rs": "pub fn project_window_loop_timings() {}\n",
    "docs/architecture/tool-composition-research.md": "# Timing terminology\n",
    "tests/fixtures/agent-loop-multi-file/alpha.txt": (
        "BENCH_TARGET_ALPHA=before\nALPHA_UNRELATED_SENTINEL=keep\n"
    ),
    "tests/fixtures/agent-loop-multi-file/beta.txt": (
        "BENCH_TARGET_BETA=before\nBETA_UNRELATED_SENTINEL=keep\n"
    ),
}
MODEL_CONFIG_RECORD = {"model": "scripted", "host_version": "none", "inference": {"seed": 7}}


def git_run(repo: Path, *args: str) -> str:
    """Run git in a test repository with a fixed identity and no system/global config."""
    import os
    import subprocess

    env = {**os.environ, **BENCH_GIT_ENV}
    done = subprocess.run(
        ["git", "-C", str(repo), *args], env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def make_bench_repo(root: Path, files: dict[str, str] | None = None) -> tuple[Path, str]:
    """A temporary git repository holding the benchmark fixture files; returns (repo, HEAD)."""
    repo = root / "bench-repo"
    for relpath, text in (files or BENCH_FILES).items():
        path = repo / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    git_run(root, "init", "-q", "-b", "main", str(repo))
    git_run(repo, "add", "-A")
    git_run(repo, "commit", "-q", "-m", "fixture")
    return repo, git_run(repo, "rev-parse", "HEAD")


def pinned_config(root: Path) -> tuple[Path, str]:
    """A model/configuration record file and its §8.5 digest."""
    from evalkit.paired.manifest import model_config_digest

    path = write_json(root / "pinned-config.json", MODEL_CONFIG_RECORD)
    return path, model_config_digest(MODEL_CONFIG_RECORD)


def scripted_driver(config: Path, *extra: str) -> str:
    """The `--driver` text that runs the shipped scripted driver with this interpreter."""
    import shlex
    import sys

    argv = [sys.executable, "-m", "evalkit.paired.scripted_driver", "--pinned-config", str(config)]
    return shlex.join([*argv, *extra])


def process_alive(pid: int) -> bool:
    """Whether `pid` is a live process (a zombie awaiting its reaper counts as dead)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
