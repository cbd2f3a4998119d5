"""End-to-end tests of the paired collector (spec §8, §10.9) with the shipped scripted driver.

Every run happens in a temporary git repository. The collector's temporary directory is placed
under a per-test directory so each test can assert that it is gone afterwards, together with
the worktrees it registered. Scripted evidence is never a strict pass (§6.3): a clean scripted
run is one whose only strict finding is `noncomparable_source` / `scripted_driver` and whose
every unit qualifies.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from evalkit.paired import load_cases, load_evidence, strict_check
from evalkit.paired.cli import main
from evalkit.paired.schema import dump_evidence
from evalkit.paired.scripted_driver import DRIVER_OUTPUT_MARKER, PRIVATE_MARKER
from tests.paired_helpers import (
    BENCH_FILES,
    BENCH_GIT_ENV,
    git_run,
    make_bench_repo,
    pinned_config,
    process_alive,
    scripted_driver,
)

SMALL_MANIFEST = "bench/cases.json"


def _small_manifest() -> str:
    """A committed manifest with one paired case and one selection scenario (fast runs)."""
    bundled = load_cases()
    cases = [dict(bundled.case(c).raw) for c in ("readonly_review", "selection_single_read")]
    return json.dumps(
        {
            "schema_version": 1,
            "kind": "paired_evidence_cases",
            "experiments": {
                "direct_vs_host": ["readonly_review"],
                "host_cell_policy": ["readonly_review"],
                "nested_code_mode": ["readonly_review"],
                "tool_selection": ["selection_single_read"],
            },
            "cases": cases,
        },
        indent=2,
    )


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    """(repo, head, config path, digest) shared by the module; runs never change the repo."""
    root = tmp_path_factory.mktemp("bench")
    repo, head = make_bench_repo(root, {**BENCH_FILES, SMALL_MANIFEST: _small_manifest()})
    config, digest = pinned_config(root)
    return repo, head, config, digest


@pytest.fixture(scope="session")
def pycache(tmp_path_factory):
    return tmp_path_factory.mktemp("pycache")


@pytest.fixture(autouse=True)
def owned_tmp(tmp_path, monkeypatch, pycache):
    """Put the collector's temporary directory where the test can see it; cache driver bytecode."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    monkeypatch.setenv("TMPDIR", str(tmp))
    # Driver start-up dominates these tests; let its imports be cached outside the repo.
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    monkeypatch.setenv("PYTHONPYCACHEPREFIX", str(pycache))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    return tmp


def _assert_cleaned(tmp: Path, repo: Path) -> None:
    assert [p.name for p in tmp.iterdir() if p.name.startswith("evalkit-paired-")] == []
    listed = git_run(repo, "worktree", "list", "--porcelain")
    assert [line for line in listed.splitlines() if line.startswith("worktree ")] == [
        f"worktree {repo}"
    ]


def _collect(
    capsys,
    bench,
    out: Path,
    *extra: str,
    driver: tuple[str, ...] = (),
    repo: Path | None = None,
    base: str | None = None,
    driver_text: str | None = None,
    scripted: bool = True,
):
    """Run `python -m evalkit.paired collect` in-process; returns (exit code, stdout, stderr)."""
    bench_repo, head, config, digest = bench
    argv = [
        "collect",
        "--repo",
        str(repo or bench_repo),
        "--base-revision",
        base or head,
        "--driver",
        driver_text if driver_text is not None else scripted_driver(config, *driver),
        "--output",
        str(out),
        *(["--scripted-driver"] if scripted else []),
        *extra,
    ]
    if "--model-config-digest" not in extra and "tool_selection" not in extra:
        argv += ["--model-config-digest", digest]
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _samples(doc: dict) -> list[dict]:
    out = []
    for entry in doc["cases"]:
        if "repetitions" in entry:
            out += entry["repetitions"]
        else:
            out += [s for p in entry["pairs"] for s in p["samples"]]
    return out


def _only_scripted_finding(result) -> None:
    assert [(f.reason, f.detail) for f in result.findings] == [
        ("noncomparable_source", "scripted_driver")
    ]
    assert result.qualified_units == result.required_units


# ----------------------------------------------------------------------------- acceptance


def test_direct_vs_host_three_tasks_three_pairs_alternate(capsys, bench, tmp_path, owned_tmp):
    out = tmp_path / "evidence.json"
    code, stdout, stderr = _collect(capsys, bench, out, "--pairs", "3", "--strict")
    evidence = load_evidence(out)
    doc = json.loads(out.read_text(encoding="utf-8"))
    samples = _samples(doc)
    assert len(samples) == 18
    assert doc["case_ids"] == [
        "readonly_review",
        "guarded_multi_file_edit",
        "long_validation_handoff",
    ]
    for entry in doc["cases"]:
        assert [p["pair"] for p in entry["pairs"]] == [1, 2, 3]
        for p in entry["pairs"]:
            want = ["baseline", "candidate"] if p["pair"] % 2 else ["candidate", "baseline"]
            assert p["order"] == want
            assert [s["lane"] for s in p["samples"]] == want
            assert [s["ordinal"] for s in p["samples"]] == [1, 2]
            for s in p["samples"]:
                variant = "direct" if s["lane"] == "baseline" else "host_code_mode"
                assert (s["variant"], s["surface"], s["policy"]) == (variant, variant, None)
                assert s["status"] == "pass" and "reason_code" not in s
    # The run order printed on stdout is cases, then pairs, then the pair's lane order.
    labels = [
        line.split()[1].rstrip(":") for line in stdout.splitlines() if line.startswith("sample ")
    ]
    assert labels[:6] == [
        "readonly_review-p1-1-baseline",
        "readonly_review-p1-2-candidate",
        "readonly_review-p2-1-candidate",
        "readonly_review-p2-2-baseline",
        "readonly_review-p3-1-baseline",
        "readonly_review-p3-2-candidate",
    ]
    assert doc["status_counts"] == {"fail": 0, "partial": 0, "pass": 18, "unsupported": 0}
    assert doc["provenance"]["driver_kind"] == "scripted"
    # Canonical form, and the strict gate: every pair qualifies; scripted is never a pass.
    assert out.read_text(encoding="utf-8") == dump_evidence(evidence)
    _only_scripted_finding(strict_check(evidence))
    assert "strict: fail (9 of 9 pairs qualified)" in stdout
    assert code == 1
    guarded = doc["cases"][1]["pairs"][0]["samples"][0]
    assert guarded["fixture_oracle"] == {"available": True, "passed": True}
    assert guarded["runtime_gates"] == {"runtime_evidence": True, "multi_file_edit": True}
    handoff = doc["cases"][2]["pairs"][0]["samples"][0]
    assert handoff["runtime_gates"]["long_handoff"] is True
    assert handoff["metrics"]["job_observe_calls"] == 2
    assert handoff["metrics"]["immediate_observe_calls"] == 0
    assert DRIVER_OUTPUT_MARKER not in stdout + stderr
    _assert_cleaned(owned_tmp, bench[0])


def test_host_cell_policy_with_valid_cell_attestations(capsys, bench, tmp_path, owned_tmp):
    out = tmp_path / "host.json"
    code, stdout, _ = _collect(
        capsys, bench, out, "--experiment", "host_cell_policy", "--pairs", "1", "--strict"
    )
    doc = json.loads(out.read_text(encoding="utf-8"))
    samples = _samples(doc)
    assert len(samples) == 6
    for s in samples:
        assert s["status"] == "pass"
        assert s["variant"] == s["surface"] == "host_code_mode"
        policy = "host_single_call" if s["lane"] == "baseline" else "host_composition_allowed"
        assert s["policy"] == policy == s["host_cell_attestation"]["policy"]
        assert s["metrics"]["nonempty_cells"] == s["metrics"]["outer_calls"]
        assert s["metrics"]["empty_cells"] == (1 if s["lane"] == "candidate" else None)
    _only_scripted_finding(strict_check(load_evidence(out)))
    assert code == 1  # --strict: scripted evidence is never a pass
    _assert_cleaned(owned_tmp, bench[0])


@pytest.mark.parametrize(
    ("mode", "statuses", "reasons", "message"),
    [
        (
            "duplicate-call-id",
            {"baseline": "partial", "candidate": "partial"},
            {"baseline": "cell_evidence_incomplete", "candidate": "cell_evidence_incomplete"},
            "host_cell_attestation call identities must be unique",
        ),
        (
            "missing-call",
            {"baseline": "partial", "candidate": "partial"},
            {"baseline": "cell_evidence_incomplete", "candidate": "cell_evidence_incomplete"},
            "host_cell_attestation does not cover every measured outer call exactly once",
        ),
        (
            "two-call-cell",
            {"baseline": "fail", "candidate": "pass"},
            {"baseline": "attestation_rejected", "candidate": None},
            "host_single_call requires exactly one WebCodex call per non-empty cell",
        ),
    ],
)
def test_host_cell_policy_bad_cells_fail_with_their_reason(
    capsys, bench, tmp_path, owned_tmp, mode, statuses, reasons, message
):
    out = tmp_path / "host.json"
    code, stdout, _ = _collect(
        capsys,
        bench,
        out,
        "--experiment",
        "host_cell_policy",
        "--pairs",
        "1",
        "--case-manifest",
        SMALL_MANIFEST,
        driver=("--mode", mode),
    )
    doc = json.loads(out.read_text(encoding="utf-8"))
    for s in _samples(doc):
        assert s["status"] == statuses[s["lane"]]
        assert s.get("reason_code") == reasons[s["lane"]]
    assert message in stdout
    small = load_cases(bench[0] / SMALL_MANIFEST)
    result = strict_check(load_evidence(out, manifest=small), manifest=small)
    assert result.qualified_units == 0
    assert code == (1 if "fail" in statuses.values() else 0)
    _assert_cleaned(owned_tmp, bench[0])


def test_tool_selection_four_scenarios_three_repetitions(capsys, bench, tmp_path, owned_tmp):
    out = tmp_path / "selection.json"
    code, _, _ = _collect(
        capsys,
        bench,
        out,
        "--experiment",
        "tool_selection",
        "--variant",
        "host_code_mode",
        "--model-config-digest",
        bench[3],
        "--strict",
    )
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["pair_count"] is None and doc["repetition_count"] == 3
    assert [e["case_id"] for e in doc["cases"]] == [
        "selection_single_read",
        "selection_batch_read",
        "selection_cross_tool_review",
        "selection_compound_source_context",
    ]
    for entry in doc["cases"]:
        assert [s["repetition"] for s in entry["repetitions"]] == [1, 2, 3]
        for s in entry["repetitions"]:
            assert (s["pair"], s["ordinal"], s["lane"], s["policy"]) == (None, None, None, None)
            assert s["runtime_gates"]["selection_admission"] is True
            assert s["status"] == "pass"
    assert len(_samples(doc)) == 12
    _only_scripted_finding(strict_check(load_evidence(out)))
    assert code == 1
    _assert_cleaned(owned_tmp, bench[0])


def test_experimental_nested_writes_a_second_isolated_file(capsys, bench, tmp_path, owned_tmp):
    out = tmp_path / "evidence.json"
    code, _, _ = _collect(
        capsys,
        bench,
        out,
        "--experimental-nested",
        "--pairs",
        "1",
        "--case-manifest",
        SMALL_MANIFEST,
    )
    nested = tmp_path / "evidence.nested_code_mode.json"
    main_doc = json.loads(out.read_text(encoding="utf-8"))
    nested_doc = json.loads(nested.read_text(encoding="utf-8"))
    assert main_doc["experiment"] == "direct_vs_host"
    assert nested_doc["experiment"] == "nested_code_mode"
    lanes = {s["lane"]: (s["variant"], s["surface"]) for s in _samples(nested_doc)}
    assert lanes == {"baseline": ("direct", "direct"), "candidate": ("code_mode", "read_only")}
    assert all(s["status"] == "pass" for s in _samples(nested_doc) + _samples(main_doc))
    assert code == 0
    _assert_cleaned(owned_tmp, bench[0])


# ----------------------------------------------------------------------------- bad drivers


def _one_sample(
    capsys, bench, tmp_path, *driver: str, extra: tuple[str, ...] = (), driver_text=None
):
    """Collect one selection sample (small manifest) with the scripted driver in a mode."""
    out = tmp_path / "one.json"
    code, stdout, stderr = _collect(
        capsys,
        bench,
        out,
        "--experiment",
        "tool_selection",
        "--variant",
        "direct",
        "--repetitions",
        "1",
        "--model-config-digest",
        bench[3],
        "--case-manifest",
        SMALL_MANIFEST,
        *extra,
        driver=driver,
        driver_text=driver_text,
    )
    (sample,) = _samples(json.loads(out.read_text(encoding="utf-8")))
    return code, stdout + stderr, sample, out


@pytest.mark.parametrize(
    ("mode", "status", "reason", "message"),
    [
        ("symlink", "fail", "sample_contract_error", "driver result must be a regular file"),
        ("fifo", "fail", "sample_contract_error", "driver result must be a regular file"),
        (
            "oversize",
            "fail",
            "sample_contract_error",
            "driver result exceeds the 64 KiB receipt limit",
        ),
        (
            "extra-attestation-fields",
            "fail",
            "attestation_rejected",
            "efficiency_attestation contains unsupported fields",
        ),
        (
            "mismatched-attestation",
            "fail",
            "attestation_rejected",
            "efficiency_attestation.base_revision does not match the run",
        ),
        ("no-receipt", "fail", "driver_receipt_missing", None),
        ("move-head", "fail", "workspace_head_changed", "driver changed the workspace HEAD"),
        ("exit-nonzero", "fail", None, None),
        ("dirty", "fail", None, None),
        ("unsupported", "unsupported", None, None),
    ],
)
def test_bad_driver_modes_give_exact_messages(
    capsys, bench, tmp_path, owned_tmp, mode, status, reason, message
):
    code, output, sample, out = _one_sample(capsys, bench, tmp_path, "--mode", mode)
    assert sample["status"] == status
    assert sample.get("reason_code") == reason
    line = next(x for x in output.splitlines() if x.startswith("sample "))
    expected = f"sample selection_single_read-r1: {status}"
    expected += f" ({reason})" if reason else ""
    expected += f": {message}" if message else ""
    assert line == expected
    text = out.read_text(encoding="utf-8")
    assert PRIVATE_MARKER not in text and PRIVATE_MARKER not in output
    assert DRIVER_OUTPUT_MARKER not in output
    if reason in ("attestation_rejected", "sample_contract_error"):
        assert sample["efficiency_attestation"] is None
    if mode == "dirty":
        assert sample["runtime_gates"]["workspace_clean"] is False
    assert code == (1 if status == "fail" else 0)
    _assert_cleaned(owned_tmp, bench[0])


def test_hanging_driver_is_killed_as_a_group_at_the_limit(capsys, bench, tmp_path, owned_tmp):
    pids = tmp_path / "pids"
    code, output, sample, _ = _one_sample(
        capsys,
        bench,
        tmp_path,
        "--mode",
        "hang",
        "--pid-file",
        str(pids),
        extra=("--driver-timeout", "1"),
    )
    assert sample["status"] == "fail" and sample["reason_code"] == "driver_timeout"
    assert "sample selection_single_read-r1: fail (driver_timeout)" in output
    assert all(v is None for v in sample["metrics"].values())
    driver_pid, grandchild_pid = map(int, pids.read_text().split())
    assert not process_alive(driver_pid) and not process_alive(grandchild_pid)
    assert code == 1
    _assert_cleaned(owned_tmp, bench[0])


def test_receipt_fields_beyond_section_5_3_never_reach_evidence(capsys, bench, tmp_path, owned_tmp):
    """§10.8: private text, raw arguments, trace root, session id, Audit path stay out."""
    code, output, sample, out = _one_sample(capsys, bench, tmp_path, "--mode", "private-fields")
    assert sample["status"] == "pass"
    text = out.read_text(encoding="utf-8")
    for secret in (PRIVATE_MARKER, "wc_sess_scripted", "audit.sqlite3", "trace-", "trace_root"):
        assert secret not in text and secret not in output
    # Only the §5.3 values: statuses, verdicts, gates, metrics, hashes and the attestation.
    assert set(sample["efficiency_attestation"]) == {
        "model_config_digest",
        "base_revision",
        "case_fingerprint",
        "variant",
        "surface",
    }
    assert sample["metrics"]["task_wall_time_ms"] == 1000  # the receipt's task_timing span
    assert code == 0


def test_omitted_task_timing_falls_back_to_runner_elapsed_time(capsys, bench, tmp_path):
    _, _, sample, _ = _one_sample(capsys, bench, tmp_path, "--mode", "no-task-timing")
    assert sample["status"] == "pass"
    assert isinstance(sample["metrics"]["task_wall_time_ms"], int)


# ----------------------------------------------------------------------------- options


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--pairs", "0"), "pairs must be between 1 and 10"),
        (("--pairs", "11"), "pairs must be between 1 and 10"),
        (
            ("--experiment", "tool_selection", "--variant", "direct", "--repetitions", "0"),
            "repetitions must be between 1 and 10",
        ),
        (
            ("--experiment", "tool_selection", "--variant", "direct", "--repetitions", "11"),
            "repetitions must be between 1 and 10",
        ),
        (
            ("--experimental-nested", "--experiment", "host_cell_policy"),
            "--experimental-nested cannot be combined with --experiment host_cell_policy",
        ),
        (
            ("--experimental-nested", "--experiment", "tool_selection", "--variant", "direct"),
            "--experimental-nested cannot be combined with --experiment tool_selection",
        ),
        (("--experiment", "tool_selection"), "--experiment tool_selection requires --variant"),
        (("--case-manifest", "bench/absent.json"), "case manifest must be committed"),
        (
            ("--experiment", "tool_selection", "--variant", "direct", "--pairs", "2"),
            "--pairs applies only to paired experiments; use --repetitions",
        ),
        (("--repetitions", "2"), "--repetitions applies only to --experiment tool_selection"),
        (("--variant", "direct"), "--variant applies only to --experiment tool_selection"),
        (("--driver-timeout", "0"), "--driver-timeout must be a positive number of seconds"),
    ],
)
def test_usage_errors_exit_2_before_anything_runs(
    capsys, bench, tmp_path, owned_tmp, args, message
):
    out = tmp_path / "never.json"
    code, stdout, stderr = _collect(capsys, bench, out, *args)
    assert code == 2
    assert stderr.startswith("evalkit-paired: ") and message in stderr
    assert stdout == "" and not out.exists()
    _assert_cleaned(owned_tmp, bench[0])


def test_evalkit_pairs_collect_refuses_pairs_out_of_range(capsys, bench, tmp_path):
    from evalkit.cli import main as evalkit_main

    repo, head, config, digest = bench
    for pairs in ("0", "11"):
        code = evalkit_main(
            [
                "pairs",
                "collect",
                "--repo",
                str(repo),
                "--base-revision",
                head,
                "--pairs",
                pairs,
                "--driver",
                scripted_driver(config),
                "--scripted-driver",
                "--model-config-digest",
                digest,
                "--output",
                str(tmp_path / "x.json"),
            ]
        )
        assert code == 2
        assert "pairs must be between 1 and 10" in capsys.readouterr().err


def test_a_missing_model_config_digest_is_named_as_missing(capsys, bench, tmp_path, owned_tmp):
    bench_repo, head, config, _ = bench
    argv = ["collect", "--repo", str(bench_repo), "--base-revision", head, "--scripted-driver"]
    argv += ["--driver", scripted_driver(config), "--output", str(tmp_path / "x.json")]
    assert main(argv) == 2
    assert capsys.readouterr().err == (
        "evalkit-paired: a paired experiment needs --model-config-digest (the pinned 64-hex "
        "SHA-256 of the model configuration)\n"
    )
    assert not (tmp_path / "x.json").exists()
    _assert_cleaned(owned_tmp, bench_repo)


@pytest.mark.parametrize(
    ("kwargs", "extra", "message"),
    [
        ({"repo": "outside"}, (), "benchmark repo must be inside a Git worktree"),
        ({"base": "nope"}, (), "could not resolve base revision: nope"),
        ({"driver_text": "''"}, (), "--driver must name an executable"),
        ({"driver_text": "/nonexistent/driver"}, (), "--driver must name an executable"),
        ({"scripted": False}, (), "the shipped scripted driver requires --scripted-driver"),
        (
            {},
            ("--model-config-digest", "A" * 64),
            "--model-config-digest must be an exact lowercase 64-hex SHA-256",
        ),
        (
            {},
            ("--model-config-record", "other"),
            "model config record does not match --model-config-digest",
        ),
    ],
)
def test_setup_rules_and_messages(capsys, bench, tmp_path, owned_tmp, kwargs, extra, message):
    other = tmp_path / "other.json"
    other.write_text('{"model": "another"}', encoding="utf-8")
    kwargs = {k: (tmp_path if v == "outside" else v) for k, v in kwargs.items()}
    extra = tuple(str(other) if x == "other" else x for x in extra)
    code, stdout, stderr = _collect(capsys, bench, tmp_path / "x.json", *extra, **kwargs)
    assert (code, stdout, stderr) == (2, "", f"evalkit-paired: {message}\n")
    _assert_cleaned(owned_tmp, bench[0])


def test_base_revision_must_be_head(capsys, bench, tmp_path):
    repo, head, _, _ = bench
    git_run(repo, "commit", "-q", "--allow-empty", "-m", "moves HEAD")
    try:
        code, _, err = _collect(capsys, bench, tmp_path / "x.json")
    finally:
        git_run(repo, "reset", "-q", "--hard", head)
    assert (code, err) == (
        2,
        "evalkit-paired: base revision must equal the current checkout HEAD; check out the "
        "target commit before benchmarking\n",
    )


def test_scripted_output_is_refused_under_data_evidence(capsys, bench, tmp_path):
    target = tmp_path / "data" / "evidence"
    target.mkdir(parents=True)
    code, _, err = _collect(capsys, bench, target / "scripted.json", "--pairs", "1")
    assert code == 2
    assert "scripted-driver evidence must never be stored under data/evidence/" in err


def test_help_teaches(capsys):
    with pytest.raises(SystemExit):
        main(["collect", "--help"])
    text = capsys.readouterr().out
    for needle in (
        "WEBCODEX_BENCH_",
        "alternate",
        "exit status",
        "--experimental-nested",
        "scripted",
        "examples:",
        "--driver-timeout",
    ):
        assert needle in text


# ----------------------------------------------------------------------------- ownership


def test_environment_contract(capsys, bench, tmp_path, monkeypatch):
    log = tmp_path / "env.jsonl"
    monkeypatch.setenv("WEBCODEX_BENCH_HOST_CELL_POLICY", "host_single_call")  # must be unset
    monkeypatch.setenv("WEBCODEX_BENCH_STALE", "inherited")
    repo, head, _, digest = bench
    _collect(
        capsys,
        bench,
        tmp_path / "e.json",
        "--pairs",
        "1",
        "--case-manifest",
        SMALL_MANIFEST,
        driver=("--env-log", str(log)),
    )
    entries = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    case = load_cases().case("readonly_review")
    assert len(entries) == 2
    for entry in entries:
        env = entry["env"]
        bench_vars = {k for k in env if k.startswith("WEBCODEX_BENCH_")}
        assert bench_vars == {
            "WEBCODEX_BENCH_WORKSPACE",
            "WEBCODEX_BENCH_CASE_ID",
            "WEBCODEX_BENCH_PROMPT",
            "WEBCODEX_BENCH_VARIANT",
            "WEBCODEX_BENCH_SURFACE",
            "WEBCODEX_BENCH_BASE_REVISION",
            "WEBCODEX_BENCH_CASE_FINGERPRINT",
            "WEBCODEX_BENCH_DRIVER_RESULT",
        }
        assert entry["cwd"] == env["WEBCODEX_BENCH_WORKSPACE"]
        assert env["WEBCODEX_BENCH_PROMPT"] == case.prompt
        assert env["WEBCODEX_BENCH_CASE_FINGERPRINT"] == case.fingerprint
        assert env["WEBCODEX_BENCH_BASE_REVISION"] == head
        receipt = Path(env["WEBCODEX_BENCH_DRIVER_RESULT"])
        assert receipt.is_absolute()
        assert Path(env["WEBCODEX_BENCH_WORKSPACE"]) not in receipt.parents
        assert all(digest not in value for value in env.values())
    workspaces = [Path(e["env"]["WEBCODEX_BENCH_WORKSPACE"]) for e in entries]
    assert [w.name for w in workspaces] == [
        "readonly_review-p1-1-baseline",
        "readonly_review-p1-2-candidate",
    ]
    assert all(w.parent.name == "worktrees" for w in workspaces)
    assert not any(w.exists() for w in workspaces)

    # In host_cell_policy the policy variable carries the lane's policy.
    log.unlink()
    monkeypatch.delenv("WEBCODEX_BENCH_HOST_CELL_POLICY")
    _collect(
        capsys,
        bench,
        tmp_path / "h.json",
        "--experiment",
        "host_cell_policy",
        "--pairs",
        "1",
        "--case-manifest",
        SMALL_MANIFEST,
        driver=("--env-log", str(log)),
    )
    policies = [
        json.loads(x)["env"]["WEBCODEX_BENCH_HOST_CELL_POLICY"]
        for x in log.read_text(encoding="utf-8").splitlines()
    ]
    assert policies == ["host_single_call", "host_composition_allowed"]


def test_unrelated_worktrees_survive(capsys, bench, tmp_path, owned_tmp):
    repo, head, _, _ = bench
    keep = tmp_path / "unrelated-worktree"
    git_run(repo, "worktree", "add", "--detach", "-q", str(keep), head)
    try:
        _collect(
            capsys, bench, tmp_path / "e.json", "--pairs", "1", "--case-manifest", SMALL_MANIFEST
        )
        assert keep.is_dir()
        assert f"worktree {keep}" in git_run(repo, "worktree", "list", "--porcelain")
    finally:
        git_run(repo, "worktree", "remove", "--force", str(keep))
    _assert_cleaned(owned_tmp, repo)


def test_manifest_is_read_from_the_base_commit(capsys, bench, tmp_path):
    repo, _, _, _ = bench
    manifest = repo / SMALL_MANIFEST
    committed = manifest.read_text(encoding="utf-8")
    # An uncommitted edit of the manifest in the checkout must not be used.
    manifest.write_text(
        committed.replace("Read-only repository review", "Edited title"), encoding="utf-8"
    )
    try:
        _collect(
            capsys, bench, tmp_path / "e.json", "--pairs", "1", "--case-manifest", SMALL_MANIFEST
        )
    finally:
        manifest.write_text(committed, encoding="utf-8")
    doc = json.loads((tmp_path / "e.json").read_text(encoding="utf-8"))
    assert doc["cases"][0]["case_fingerprint"] == load_cases().case("readonly_review").fingerprint


def test_fixture_revision_is_recorded_and_used(capsys, tmp_path, owned_tmp):
    repo, fixture = make_bench_repo(tmp_path)
    (repo / "NEWS.md").write_text("a later source change\n", encoding="utf-8")
    git_run(repo, "add", "NEWS.md")
    git_run(repo, "commit", "-q", "-m", "later")
    head = git_run(repo, "rev-parse", "HEAD")
    config, digest = pinned_config(tmp_path)
    out = tmp_path / "e.json"
    code = main(
        [
            "collect",
            "--repo",
            str(repo),
            "--base-revision",
            head,
            "--fixture-revision",
            fixture,
            "--scripted-driver",
            "--driver",
            scripted_driver(config),
            "--model-config-digest",
            digest,
            "--pairs",
            "1",
            "--output",
            str(out),
        ]
    )
    capsys.readouterr()
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert (doc["base_revision"], doc["fixture_revision"]) == (head, fixture)
    assert all(s["status"] == "pass" for s in _samples(doc))  # HEAD checked against the fixture
    assert code == 0
    _assert_cleaned(owned_tmp, repo)


def test_identical_runs_write_identical_evidence(capsys, bench, tmp_path):
    args = ("--pairs", "2", "--case-manifest", SMALL_MANIFEST)
    _collect(capsys, bench, tmp_path / "a.json", *args)
    _collect(capsys, bench, tmp_path / "b.json", *args)
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()


# ----------------------------------------------------------------------------- interruption


def test_interrupted_collector_reaps_the_driver_and_cleans_up(bench, tmp_path, owned_tmp):
    repo, head, config, digest = bench
    pids = tmp_path / "pids"
    out = tmp_path / "never.json"
    env = {**os.environ, **BENCH_GIT_ENV}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "evalkit.paired",
            "collect",
            "--repo",
            str(repo),
            "--base-revision",
            head,
            "--scripted-driver",
            "--model-config-digest",
            digest,
            "--driver",
            scripted_driver(config, "--mode", "hang", "--pid-file", str(pids)),
            "--pairs",
            "1",
            "--case-manifest",
            SMALL_MANIFEST,
            "--output",
            str(out),
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 30
    while not pids.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert pids.exists()
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 130
    assert stderr == "evalkit-paired: interrupted; worktrees and temporary files removed\n"
    driver_pid, grandchild_pid = map(int, pids.read_text().split())
    assert not process_alive(driver_pid) and not process_alive(grandchild_pid)
    assert not out.exists()
    _assert_cleaned(owned_tmp, repo)


def test_relative_driver_path_is_pinned_before_the_driver_runs_in_the_workspace(
    capsys, bench, tmp_path, monkeypatch
):
    repo, head, config, digest = bench
    wrapper = tmp_path / "drv"
    wrapper.write_text(
        f"#!/bin/sh\nexec {sys.executable} -m evalkit.paired.scripted_driver "
        f'--pinned-config {config} "$@"\n',
        encoding="utf-8",
    )
    wrapper.chmod(0o755)
    monkeypatch.chdir(tmp_path)
    _, _, sample, _ = _one_sample(capsys, bench, tmp_path, driver_text="./drv")
    assert sample["status"] == "pass"


def test_a_clean_non_scripted_run_reaches_a_strict_pass(capsys, bench, tmp_path, owned_tmp):
    # The scripted driver is never strict-pass evidence (§6.3, §8.6), so the 3×3 acceptance run
    # above stops at `noncomparable_source`. To show that collector output and the strict gate
    # compose into a pass when nothing else is wrong, the same driver logic runs here behind a
    # test-only wrapper, so the collector records `live_host`. Test evidence only, in tmp_path.
    wrapper = tmp_path / "host_stand_in.py"
    wrapper.write_text(
        "import sys\nfrom evalkit.paired.scripted_driver import main\nsys.exit(main())\n",
        encoding="utf-8",
    )
    _, _, config, _ = bench
    import shlex

    driver = shlex.join([sys.executable, str(wrapper), "--pinned-config", str(config)])
    out = tmp_path / "evidence.json"
    code, stdout, _ = _collect(
        capsys, bench, out, "--pairs", "3", "--strict", driver_text=driver, scripted=False
    )
    evidence = load_evidence(out)
    assert json.loads(out.read_text(encoding="utf-8"))["provenance"]["driver_kind"] == "live_host"
    result = strict_check(evidence)
    assert (result.verdict, result.findings) == ("pass", ())
    assert code == 0 and "strict: pass (9 of 9 pairs qualified)" in stdout
    _assert_cleaned(owned_tmp, bench[0])


def test_a_driver_that_removes_the_group_folder_is_named_and_the_samples_run_are_kept(
    capsys, bench, tmp_path, owned_tmp
):
    # Issue 21, item 6: the second sample's driver deletes the collector's temporary group
    # folder (its own worktree, every receipt). The message names that, not the evidence file,
    # and the first sample, already run, is kept in a file of its own beside the output.
    _, _, config, _ = bench
    wrapper = tmp_path / "remover.py"
    count = tmp_path / "calls"
    wrapper.write_text(
        "import os, shutil, sys\n"
        "from pathlib import Path\n"
        "from evalkit.paired.scripted_driver import main\n"
        "code = main()\n"
        f"count = Path({str(count)!r})\n"
        "n = int(count.read_text()) + 1 if count.exists() else 1\n"
        "count.write_text(str(n))\n"
        "if n == 2:\n"
        "    shutil.rmtree(Path.cwd().parent.parent)\n"
        "sys.exit(code)\n",
        encoding="utf-8",
    )
    import shlex

    driver = shlex.join([sys.executable, str(wrapper), "--pinned-config", str(config)])
    out = tmp_path / "evidence.json"
    code, stdout, stderr = _collect(
        capsys,
        bench,
        out,
        "--experiment",
        "tool_selection",
        "--variant",
        "direct",
        "--repetitions",
        "3",
        "--model-config-digest",
        bench[3],
        "--case-manifest",
        SMALL_MANIFEST,
        driver_text=driver,
    )
    assert code == 2 and not out.exists(), stderr
    assert stderr.count("\n") == 1 and "cannot be measured" not in stderr
    assert "temporary folder" in stderr and "removed" in stderr
    (kept,) = tmp_path.glob("evidence.unsaved-*.json")
    assert str(kept) in stderr
    samples = _samples(json.loads(kept.read_text(encoding="utf-8")))
    assert [s["status"] for s in samples][0] == "pass"
    assert [s.get("reason_code") for s in samples][1:] == ["sample_contract_error"] * 2
    load_evidence(kept)  # a valid evidence file: `pairs check` reads it
    _assert_cleaned(owned_tmp, bench[0])
