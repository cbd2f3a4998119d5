"""The paired collector: run a driver in alternating pairs and write evidence (spec §8).

`collect(options)` checks the options and the repository (§8.1), reads the case manifest, then
runs every sample of the experiment in the fixed order (cases in the experiment's manifest
order, pairs ascending, lanes in the pair's order: odd pairs baseline first, even pairs
candidate first). Each sample goes through the pipeline of §8.4 (`run_sample`): a fresh detached
worktree, the driver under its time limit in its own process group, the HEAD check, the bounded
receipt (§5), the Audit summary, the fixture oracle, the runtime contracts, the attestation
checks (§4) and the status rules of §5.3. The evidence is validated with the schema loader,
written atomically in canonical form and, with `strict`, judged by the strict gate (§6).

Everything a run owns lives in one temporary directory (prefix `evalkit-paired-`): worktrees,
receipts and scratch files. It is removed on success, failure, interruption and setup error.
Nothing private is kept: no receipt field other than the validated values of §5.3 reaches the
evidence, and driver output is never read.

Example (the shipped scripted driver, collector testing only):
    python -m evalkit.paired collect --repo . --base-revision "$(git rev-parse HEAD)" \\
        --driver 'python -m evalkit.paired.scripted_driver --pinned-config config.json' \\
        --scripted-driver --model-config-digest <hex> --pairs 1 --output /tmp/e.json
"""

from __future__ import annotations

import os
import secrets
import shlex
import shutil
import stat
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from evalkit.errors import EvalkitError, UsageError
from evalkit.paired._files import OpenMessages, read_bounded
from evalkit.paired._json import BoundsError, SyntaxProblem, decode_bounded, is_sha256_hex
from evalkit.paired.attest import (
    cell_counts,
    check_host_cell_attestation,
    efficiency_attestation_error,
    host_cell_attestation_error,
)
from evalkit.paired.audit import AuditError, AuditSummary, read_audit
from evalkit.paired.driver import (
    DEFAULT_KILL_GRACE,
    DEFAULT_TIME_LIMIT,
    driver_environment,
    run_driver,
)
from evalkit.paired.errors import ReceiptError
from evalkit.paired.gate import (
    LANE_POLICIES,
    Expected,
    StrictResult,
    correctness_problems,
    strict_check,
)
from evalkit.paired.manifest import Case, CaseManifest, decode_cases, load_cases
from evalkit.paired.manifest import model_config_digest as digest_of
from evalkit.paired.oracle import run_fixture_oracle
from evalkit.paired.receipts import (
    Receipt,
    read_receipt,
    receipt_audit_selection,
    receipt_correctness,
    receipt_repair_turns,
    receipt_task_wall_time_ms,
)
from evalkit.paired.schema import (
    EVEN_ORDER,
    METRIC_KEYS,
    ODD_ORDER,
    STATUSES,
    Evidence,
    dump_evidence,
    parse_evidence,
    thaw,
)
from evalkit.paired.worktrees import (
    GitError,
    add_worktree,
    committed_file,
    head_of,
    is_clean,
    remove_worktree,
    repo_toplevel,
    resolve_commit,
)

__all__ = [
    "COLLECT_EXPERIMENTS",
    "CollectOptions",
    "CollectResult",
    "GroupResult",
    "SampleResult",
    "SampleSpec",
    "CollectorFolderError",
    "EvidenceWriteError",
    "collect",
    "nested_output_path",
    "plan_samples",
    "split_driver_command",
    "write_atomically",
]

COLLECT_EXPERIMENTS = ("direct_vs_host", "host_cell_policy", "tool_selection")
TEMP_PREFIX = "evalkit-paired-"
# §5.3: when several reason codes apply, the first in this order wins.
REASON_PRIORITY = (
    "workspace_head_changed",
    "driver_timeout",
    "driver_platform_unsupported",
    "sample_contract_error",
    "driver_receipt_missing",
    "attestation_rejected",
    "cell_evidence_incomplete",
)
MAX_CALL_HASHES = 10_000  # §3.6: outer_call_ids_sha256 holds at most 10,000 entries
PROVENANCE_NOTES = {
    "live_host": "Collected by evalkit pairs collect from driver receipts and Audit records of "
    "an automated live Host driver.",
    "manual_bridge": "Collected by evalkit pairs collect from driver receipts and Audit records "
    "relayed by a manual bridge operator.",
    "scripted": "Collected by evalkit pairs collect with a scripted driver: collector testing "
    "only, never real-model evidence.",
}
_SCRIPTED_MODULE = "evalkit.paired.scripted_driver"


# ----------------------------------------------------------------------------- options


@dataclass(frozen=True)
class CollectOptions:
    """The options of `evalkit pairs collect` (spec §8.1). `None` counts take the defaults."""

    repo: Path
    base_revision: str
    driver_command: tuple[str, ...]
    output: Path
    experiment: str = "direct_vs_host"
    model_config_digest: str | None = None
    model_config_record: Path | None = None
    pairs: int | None = None
    repetitions: int | None = None
    variant: str | None = None
    fixture_revision: str | None = None
    driver_kind: str = "live_host"
    case_manifest: str | None = None
    nested: bool = False
    strict: bool = False
    time_limit: float = DEFAULT_TIME_LIMIT
    kill_grace: float = DEFAULT_KILL_GRACE

    @property
    def count(self) -> int:
        """Pairs per case, or repetitions per scenario in `tool_selection` (default 3)."""
        value = self.repetitions if self.experiment == "tool_selection" else self.pairs
        return 3 if value is None else value


def split_driver_command(text: str) -> tuple[str, ...]:
    """Split `--driver-command` with shell-style quoting; it is run without a shell (§8.1)."""
    try:
        argv = tuple(shlex.split(text))
    except ValueError:
        raise UsageError("--driver must name an executable") from None
    if not argv or not argv[0]:
        raise UsageError("--driver must name an executable")
    return argv


def nested_output_path(output: Path) -> Path:
    """The nested group's file: `.nested_code_mode` inserted before the extension (§8.1)."""
    return output.with_name(f"{output.stem}.nested_code_mode{output.suffix}")


def _check_options(o: CollectOptions) -> None:
    """The usage rules of §8.1, in option order; each raises `UsageError` with its message."""
    if o.experiment not in COLLECT_EXPERIMENTS:
        raise UsageError(
            "--experiment must be one of direct_vs_host, host_cell_policy, or tool_selection"
        )
    if o.nested and o.experiment != "direct_vs_host":
        raise UsageError(
            f"--experimental-nested cannot be combined with --experiment {o.experiment}"
        )
    selection = o.experiment == "tool_selection"
    if selection and o.pairs is not None:
        raise UsageError("--pairs applies only to paired experiments; use --repetitions")
    if not selection and o.repetitions is not None:
        raise UsageError("--repetitions applies only to --experiment tool_selection")
    if not 1 <= o.count <= 10:
        raise UsageError(
            "repetitions must be between 1 and 10"
            if selection
            else "pairs must be between 1 and 10"
        )
    digest = o.model_config_digest
    if digest is None and not selection:
        raise UsageError(
            "a paired experiment needs --model-config-digest (the pinned 64-hex SHA-256 of the "
            "model configuration)"
        )
    if (digest is not None or not selection) and not (
        isinstance(digest, str) and is_sha256_hex(digest)
    ):
        raise UsageError("--model-config-digest must be an exact lowercase 64-hex SHA-256")
    if o.model_config_record is not None:
        if digest is None:
            raise UsageError("--model-config-record requires --model-config-digest")
        if _record_digest(o.model_config_record) != digest:
            raise UsageError("model config record does not match --model-config-digest")
    if selection and o.variant not in ("direct", "host_code_mode"):
        raise UsageError("--experiment tool_selection requires --variant direct or host_code_mode")
    if not selection and o.variant is not None:
        raise UsageError("--variant applies only to --experiment tool_selection")
    if not o.driver_command or not o.driver_command[0]:
        raise UsageError("--driver must name an executable")
    if shutil.which(o.driver_command[0]) is None:
        raise UsageError("--driver must name an executable")
    if o.driver_kind not in PROVENANCE_NOTES:
        raise UsageError("--manual-bridge and --scripted-driver cannot be combined")
    if _runs_scripted_driver(o.driver_command) and o.driver_kind != "scripted":
        # The shipped scripted driver is never real-model evidence (§8.6): mark it as such.
        raise UsageError("the shipped scripted driver requires --scripted-driver")
    if o.time_limit <= 0:
        raise UsageError("--driver-timeout must be a positive number of seconds")
    for path in _outputs(o):
        if not path.parent.is_dir():
            raise UsageError(f"output directory does not exist: {path.parent}")
        if _exists_not_regular(path):  # a device, directory, FIFO or link: never replaced
            raise UsageError(f"output exists and is not a regular file: {path}")
        if o.driver_kind == "scripted" and _under_data_evidence(path):
            raise UsageError("scripted-driver evidence must never be stored under data/evidence/")


def _runs_scripted_driver(argv: Sequence[str]) -> bool:
    return any(arg == _SCRIPTED_MODULE or Path(arg).name == "scripted_driver.py" for arg in argv)


def _under_data_evidence(path: Path) -> bool:
    """Whether `path` lies under a `data/evidence/` directory (§8.6: never for scripted output)."""
    parents = Path(os.path.abspath(path)).parents
    return any(p.name == "evidence" and p.parent.name == "data" for p in parents)


def _record_digest(path: Path) -> str:
    """The §8.5 digest of a model/configuration record file (a JSON object)."""
    messages = OpenMessages(
        lstat_failed=f"could not read model config record: {path}",
        not_regular=f"could not read model config record: {path}",
        too_large="model config record exceeds the 1 MiB limit",
        open_failed=f"could not read model config record: {path}",
        changed_identity=f"could not read model config record: {path}",
    )
    data = read_bounded(path, limit=1024 * 1024, messages=messages, error=UsageError)
    try:
        record = decode_bounded(data.decode("utf-8"))
    except (UnicodeDecodeError, SyntaxProblem, BoundsError):
        raise UsageError(f"model config record must be a bounded JSON object: {path}") from None
    if not isinstance(record, dict):
        raise UsageError(f"model config record must be a bounded JSON object: {path}")
    return digest_of(record)


def _outputs(o: CollectOptions) -> list[Path]:
    return [o.output, nested_output_path(o.output)] if o.nested else [o.output]


# ----------------------------------------------------------------------------- the plan


@dataclass(frozen=True)
class SampleSpec:
    """One planned sample: its place in the evidence and the lane identity the driver gets."""

    case: Case
    pair: int | None
    ordinal: int | None
    repetition: int | None
    lane: str | None
    variant: str
    surface: str
    policy: str | None

    @property
    def label(self) -> str:
        """`<case_id>-p<pair>-<ordinal>-<lane>` or `<case_id>-r<repetition>` (§8.3)."""
        if self.repetition is not None:
            return f"{self.case.case_id}-r{self.repetition}"
        return f"{self.case.case_id}-p{self.pair}-{self.ordinal}-{self.lane}"


def lane_identity(experiment: str, lane: str | None, case: Case, variant: str | None = None):
    """`(variant, surface, policy)` of a lane (spec §1.3)."""
    if experiment == "tool_selection":
        return variant, variant, None  # the surface equals the variant (§8.1)
    if experiment == "host_cell_policy":
        return "host_code_mode", "host_code_mode", LANE_POLICIES[lane]
    if lane == "baseline":
        return "direct", "direct", None
    if experiment == "nested_code_mode":
        return "code_mode", case.nested_surface, None
    return "host_code_mode", "host_code_mode", None


def plan_samples(
    experiment: str, manifest: CaseManifest, count: int, variant: str | None = None
) -> list[SampleSpec]:
    """Every sample in run order: cases in manifest order, pairs ascending, lanes by pair order."""
    plan: list[SampleSpec] = []
    for case_id in manifest.experiment_cases(experiment):
        case = manifest.case(case_id)
        for number in range(1, count + 1):
            if experiment == "tool_selection":
                v, s, p = lane_identity(experiment, None, case, variant)
                plan.append(SampleSpec(case, None, None, number, None, v, s, p))
                continue
            order = ODD_ORDER if number % 2 else EVEN_ORDER
            for ordinal, lane in enumerate(order, start=1):
                v, s, p = lane_identity(experiment, lane, case)
                plan.append(SampleSpec(case, number, ordinal, None, lane, v, s, p))
    return plan


# ----------------------------------------------------------------------------- results


@dataclass(frozen=True)
class SampleResult:
    """One built sample and the first payload-safe message explaining its status, if any."""

    label: str
    sample: dict[str, Any]
    message: str | None = None

    def line(self) -> str:
        reason = self.sample.get("reason_code")
        text = f"sample {self.label}: {self.sample['status']}"
        if reason:
            text += f" ({reason})"
        if self.message:
            text += f": {self.message}"
        return text


@dataclass(frozen=True)
class GroupResult:
    """One written evidence file: the experiment group, its samples and the strict result."""

    experiment: str
    output: Path
    evidence: Evidence
    samples: tuple[SampleResult, ...]
    strict: StrictResult | None = None


@dataclass(frozen=True)
class CollectResult:
    """Everything one collector run produced; `exit_code` follows §8.1."""

    groups: tuple[GroupResult, ...]
    strict: bool
    missing_outputs: tuple[Path, ...] = ()

    @property
    def exit_code(self) -> int:
        if self.missing_outputs:
            return 1
        if self.strict:
            return 0 if all(g.strict is not None and g.strict.passed for g in self.groups) else 1
        return 1 if any(s.sample["status"] == "fail" for g in self.groups for s in g.samples) else 0


# ----------------------------------------------------------------------------- one sample


@dataclass
class _Run:
    """The state of a collector run every sample needs."""

    options: CollectOptions
    experiment: str
    repo: Path
    base: str
    source: str  # the commit the workspaces come from: fixture or base (§3.3)
    manifest: CaseManifest
    root: Path
    environ: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))

    @property
    def posix(self) -> bool:
        return os.name == "posix"  # §8.3: POSIX only; elsewhere every sample is unsupported


class _Status:
    """The effective-status pipeline of §5.3 step 1: only ever lowers a status."""

    def __init__(self, status: str) -> None:
        self.status = status
        self.reasons: set[str] = set()
        self.message: str | None = None

    def _note(self, reason: str | None, message: str | None) -> None:
        if reason:
            self.reasons.add(reason)
        if message and self.message is None:
            self.message = message

    def fail(self, reason: str | None = None, message: str | None = None, *, force=False) -> None:
        """Lower to `fail`; `unsupported` stays unless `force` (a HEAD change, §5.3)."""
        if self.status != "unsupported" or force:
            self.status = "fail"
        self._note(reason, message)

    def partial(self, reason: str | None = None, message: str | None = None) -> None:
        if self.status == "pass":
            self.status = "partial"
        self._note(reason, message)

    @property
    def reason_code(self) -> str | None:
        return next((r for r in REASON_PRIORITY if r in self.reasons), None)


def _empty_sample(spec: SampleSpec) -> dict[str, Any]:
    return {
        "case_id": spec.case.case_id,
        "pair": spec.pair,
        "ordinal": spec.ordinal,
        "repetition": spec.repetition,
        "lane": spec.lane,
        "variant": spec.variant,
        "surface": spec.surface,
        "policy": spec.policy,
        "status": "fail",
        "correctness": None,
        "runtime_gates": dict.fromkeys(spec.case.runtime_contracts),
        "fixture_oracle": {"available": False, "passed": None},
        "instrumentation": None,
        "metrics": dict.fromkeys(METRIC_KEYS),
        "outer_call_ids_sha256": None,
        "efficiency_attestation": None,
        "host_cell_attestation": None,
    }


def _finish(spec: SampleSpec, sample: dict[str, Any], status: _Status) -> SampleResult:
    sample["status"] = status.status
    if status.reason_code is not None:
        sample["reason_code"] = status.reason_code
    return SampleResult(spec.label, sample, status.message)


def run_sample(run: _Run, spec: SampleSpec) -> SampleResult:
    """The sample pipeline of spec §8.4 for one planned sample."""
    sample = _empty_sample(spec)
    if not run.posix:
        status = _Status("unsupported")
        status.reasons.add("driver_platform_unsupported")
        return _finish(spec, sample, status)
    workspace = run.root / "worktrees" / spec.label
    try:  # 1. a fresh detached worktree, clean before the driver starts
        admin = add_worktree(run.repo, workspace, run.source)
    except GitError:
        status = _Status("fail")
        status.fail("sample_contract_error", "could not create the sample worktree")
        return _finish(spec, sample, status)
    try:
        if not is_clean(workspace):
            status = _Status("fail")
            status.fail("sample_contract_error", "fresh benchmark worktree is not clean")
            return _finish(spec, sample, status)
        # 2. A receipt path nobody can predict, in a directory created now: a leftover or
        # planted receipt can never satisfy this sample.
        receipt_path = _fresh_receipt_path(run.root / "receipts", spec.label)
        env = driver_environment(  # 3. the §8.2 contract
            run.environ,
            workspace=str(workspace),
            case_id=spec.case.case_id,
            prompt=spec.case.prompt,
            variant=spec.variant,
            surface=spec.surface,
            base_revision=run.base,
            case_fingerprint=spec.case.fingerprint,
            receipt=str(receipt_path),
            host_cell_policy=spec.policy,
        )
        started_ns = _clock_mark(receipt_path.parent)
        try:  # 4. under the time limit, in its own process group
            outcome = run_driver(
                run.options.driver_command,
                cwd=str(workspace),
                env=env,
                time_limit=run.options.time_limit,
                kill_grace=run.options.kill_grace,
            )
        except OSError:  # not executable, or exec refused
            status = _Status("fail")
            status.fail("sample_contract_error", "driver could not be started")
            return _finish(spec, sample, status)
        head_changed = head_of(workspace) != run.source  # 5.
        receipt: Receipt | None = None
        receipt_error: str | None = None
        if not outcome.timed_out:
            try:  # 6.
                _check_receipt_is_new(receipt_path, started_ns)
                receipt = read_receipt(receipt_path)
            except ReceiptError as exc:
                receipt_error = exc.message
        status = _Status(receipt.status if receipt is not None else "fail")
        if outcome.timed_out:
            status.fail("driver_timeout", "driver exceeded its time limit")
        if head_changed:
            status.fail("workspace_head_changed", "driver changed the workspace HEAD", force=True)
        if receipt_error is not None:
            status.fail("sample_contract_error", receipt_error)
        elif receipt is None and not outcome.timed_out:
            status.fail("driver_receipt_missing")
        oracle = run_fixture_oracle(  # 8.
            spec.case.case_id, repo=run.repo, source=run.source, workspace=workspace
        )
        sample["fixture_oracle"] = oracle.to_dict()
        clean = is_clean(workspace)
        if receipt is not None:
            _from_receipt(run, spec, sample, status, receipt, outcome, workspace, oracle)
        if "workspace_clean" in spec.case.runtime_contracts:  # 9.
            sample["runtime_gates"]["workspace_clean"] = clean
            if not clean:
                status.fail()
        oracle_failed = oracle.passed is False or (
            spec.case.fixture_oracle_required and not oracle.available
        )
        if oracle_failed:
            status.fail()
        if outcome.exit_code not in (0, None):
            status.fail()  # a non-zero exit turns pass or partial into fail
        if any(v is not True for v in sample["runtime_gates"].values()):
            status.partial()
        return _finish(spec, sample, status)  # 11.
    finally:
        remove_worktree(run.repo, workspace, admin)  # the registration recorded at creation


def _fresh_receipt_path(receipts: Path, label: str) -> Path:
    """`<receipts>/<label>-<random>/<random>.json`: random names created when the sample starts."""
    directory = Path(tempfile.mkdtemp(prefix=f"{label}-", dir=receipts))
    return directory / f"{secrets.token_hex(16)}.json"


def _clock_mark(directory: Path) -> int:
    """The file-system clock just before the driver starts (the change time of a new file), so
    a receipt's own change time can be compared with it on the same clock."""
    mark = directory / ".started"
    mark.touch(exist_ok=False)
    try:
        return os.lstat(mark).st_ctime_ns
    finally:
        mark.unlink()


def _check_receipt_is_new(path: Path, started_ns: int) -> None:
    """Reject a receipt that existed before its sample's driver started (§5.1, issue 11)."""
    try:
        st = os.lstat(path)
    except OSError:
        return  # missing: read_receipt reports it
    if st.st_ctime_ns < started_ns:
        raise ReceiptError("driver result existed before the driver started")


def _from_receipt(run, spec, sample, status, receipt, outcome, workspace, oracle) -> None:
    """Steps 7, 9 and 10 for a receipt that passed §5.1, and the rules of §5.3 steps 2–5."""
    case = spec.case
    summary: AuditSummary | None = None
    if receipt.status != "unsupported":
        oracle_failed = oracle.passed is False
        try:
            session = receipt_audit_selection(receipt)
            repair = receipt_repair_turns(receipt)
            wall = receipt_task_wall_time_ms(
                receipt,
                elapsed_ms=outcome.elapsed_ms,
                manual_bridge=run.options.driver_kind == "manual_bridge",
            )
            correctness = receipt_correctness(
                receipt,
                validation_required=case.validation_required,
                fixture_oracle_failed=oracle_failed,
            )
            assert session is not None
            audit_db, session_id = session
            summary = read_audit(workspace / audit_db, session_id)  # 7. absolute paths win
            if len(summary.outer_call_ids_sha256) > MAX_CALL_HASHES:
                raise AuditError("Audit session exceeds 10,000 outer calls")
        except (ReceiptError, AuditError) as exc:
            status.fail("sample_contract_error", exc.message)
        else:
            metrics = sample["metrics"]
            metrics["task_wall_time_ms"] = wall
            if repair is not None:
                metrics["repair_turns"], metrics["repair_turns_by_reason"] = repair
            for name in (
                "outer_calls",
                "serialized_tool_result_bytes",
                "job_observe_calls",
                "immediate_observe_calls",
                "same_kind_serial_calls",
                "observe_after_delivered_failure",
            ):
                metrics[name] = getattr(summary, name)
            sample["outer_call_ids_sha256"] = list(summary.outer_call_ids_sha256)
            sample["correctness"] = correctness
            gates = sample["runtime_gates"]
            for name in case.runtime_contracts:  # 9. the Audit-based contracts
                if name == "runtime_evidence":
                    gates[name] = summary.runtime_evidence(spec.variant, spec.surface)
                elif name != "workspace_clean":
                    gates[name] = getattr(summary, name)
            for reason, _field, _detail in correctness_problems(
                correctness, case.validation_required
            ):
                if reason == "correctness_failed":
                    status.fail()
                else:
                    status.partial()
    _efficiency(run, spec, sample, status, receipt)  # 10.
    if run.experiment == "host_cell_policy":
        ids = summary.outer_call_ids_sha256 if summary is not None else None
        _host_cells(spec, sample, status, receipt, ids)


def _efficiency(run: _Run, spec: SampleSpec, sample, status: _Status, receipt: Receipt) -> None:
    """§5.3 step 3: copy a valid, matching attestation verbatim; otherwise reject the sample."""
    digest = run.options.model_config_digest
    value = receipt.get("efficiency_attestation")
    required = run.experiment != "tool_selection" or digest is not None
    if value is None and not required:
        return
    expected = {
        "model_config_digest": digest,
        "base_revision": run.base,
        "case_fingerprint": spec.case.fingerprint,
        "variant": spec.variant,
        "surface": spec.surface,
    }
    message = efficiency_attestation_error(receipt.fields, expected=expected)
    if message is not None:
        status.fail("attestation_rejected", message)
        return
    sample["efficiency_attestation"] = thaw(value)


def _host_cells(spec, sample, status: _Status, receipt: Receipt, ids) -> None:
    """§5.3 step 4: structure, policy and source decide the copy; the rest caps the status."""
    value = receipt.get("host_cell_attestation")
    message = host_cell_attestation_error(
        receipt.fields, policy=spec.policy, outer_call_ids_sha256=ids or ()
    )
    if value is None:
        status.partial("cell_evidence_incomplete", message)
        return
    counts = cell_counts(value)
    findings = check_host_cell_attestation(
        value,
        policy=spec.policy,
        outer_call_ids_sha256=ids,
        nonempty_cells=counts.nonempty_cells if counts else None,
        empty_cells=counts.empty_cells if counts else None,
    )
    reasons = {f.reason for f in findings}
    if counts is None or reasons & {"attestation_fields", "attestation_mismatch"}:
        status.fail("attestation_rejected", message)
        return
    sample["host_cell_attestation"] = thaw(value)  # only fixed values and hashes remain
    sample["metrics"]["nonempty_cells"] = counts.nonempty_cells
    sample["metrics"]["empty_cells"] = counts.empty_cells
    if "single_call_violation" in reasons:
        status.fail("attestation_rejected", message)
    if reasons & {"cell_ids_not_unique", "cell_coverage_incomplete", "canonical_audit_missing"}:
        status.partial("cell_evidence_incomplete", message)


# ----------------------------------------------------------------------------- the run


def _exists_not_regular(path: Path) -> bool:
    try:
        return not stat.S_ISREG(os.lstat(path).st_mode)
    except FileNotFoundError:
        return False
    except OSError:
        return True


class EvidenceWriteError(OSError, EvalkitError):
    """The evidence could not be written where asked; `saved` is where it was kept instead."""

    def __init__(self, message: str, saved: Path | None) -> None:
        super().__init__(message)
        self.saved = saved

    def __str__(self) -> str:
        return self.args[0]


def write_atomically(path: Path, text: str) -> None:
    """Write `text` to `path` via a temporary file in the same directory and a rename (§8.1).

    Only a regular file (or nothing) at `path` is ever replaced: a device, directory, FIFO or
    link is refused, checked again just before the rename.
    """
    if _exists_not_regular(path):
        raise EvidenceWriteError(f"output exists and is not a regular file: {path}", None)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        if _exists_not_regular(path):
            raise EvidenceWriteError(f"output exists and is not a regular file: {path}", None)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _evidence(run: _Run, experiment: str, results: list[SampleResult]) -> Evidence:
    """Assemble, validate (schema v1) and return the evidence of one group."""
    o = run.options
    paired = experiment != "tool_selection"
    by_case: dict[str, list[SampleResult]] = {}
    for r in results:
        by_case.setdefault(r.sample["case_id"], []).append(r)
    cases = []
    for case_id in run.manifest.experiment_cases(experiment):
        case = run.manifest.case(case_id)
        entry: dict[str, Any] = {"case_id": case_id, "case_fingerprint": case.fingerprint}
        samples = [r.sample for r in by_case.get(case_id, [])]
        if paired:
            pairs: dict[int, list[dict[str, Any]]] = {}
            for s in samples:
                pairs.setdefault(s["pair"], []).append(s)
            entry["pairs"] = [
                {
                    "pair": number,
                    "order": list(ODD_ORDER if number % 2 else EVEN_ORDER),
                    "samples": sorted(two, key=lambda s: s["ordinal"]),
                }
                for number, two in sorted(pairs.items())
            ]
        else:
            entry["repetitions"] = samples
        cases.append(entry)
    counts = dict.fromkeys(STATUSES, 0)
    for r in results:
        counts[r.sample["status"]] += 1
    doc = {
        "schema_version": 1,
        "kind": "paired_evidence",
        "experiment": experiment,
        "base_revision": run.base,
        "fixture_revision": run.source if run.source != run.base else None,
        "model_config_digest": o.model_config_digest,
        "pair_count": o.count if paired else None,
        "repetition_count": None if paired else o.count,
        "case_ids": list(run.manifest.experiment_cases(experiment)),
        "cases": cases,
        "status_counts": counts,
        "provenance": {
            "source": "collected",
            "driver_kind": o.driver_kind,
            "note": PROVENANCE_NOTES[o.driver_kind],
        },
        "notes": [],
    }
    return parse_evidence(doc, manifest=run.manifest)


def _manifest(o: CollectOptions, repo: Path, base: str) -> CaseManifest:
    """The bundled manifest, or `--case-manifest` read from the base commit itself (§8.1)."""
    if o.case_manifest is None:
        return load_cases()
    path = Path(o.case_manifest)
    if path.is_absolute():
        try:
            path = path.resolve().relative_to(repo.resolve())
        except ValueError:
            raise UsageError(
                f"case manifest must be committed at the base revision: {o.case_manifest}"
            ) from None
    relpath = path.as_posix()
    data = committed_file(repo, base, relpath)
    if data is None:
        raise UsageError(f"case manifest must be committed at the base revision: {relpath}")
    return decode_cases(data, path=f"{base[:12]}:{relpath}")


def collect(
    options: CollectOptions,
    *,
    echo: Callable[[str], None] = print,
    environ: Mapping[str, str] | None = None,
) -> CollectResult:
    """Run the collector (spec §8). Setup and usage problems raise `EvalkitError` (exit 2).

    Args:
        options: The checked command-line options.
        echo: Receives the payload-safe summary lines (stdout in the CLI).
        environ: The collector environment the driver inherits (default `os.environ`).
    """
    _check_options(options)
    program = options.driver_command[0]
    if os.sep in program:  # the driver runs in the workspace: pin a relative path now
        options = replace(
            options, driver_command=(os.path.abspath(program), *options.driver_command[1:])
        )
    repo = repo_toplevel(options.repo)
    base = resolve_commit(repo, options.base_revision, what="base")
    if resolve_commit(repo, "HEAD", what="base") != base:
        raise UsageError(
            "base revision must equal the current checkout HEAD; check out the target commit "
            "before benchmarking"
        )
    source = base
    if options.fixture_revision is not None:
        source = resolve_commit(repo, options.fixture_revision, what="fixture")
    manifest = _manifest(options, repo, base)  # fingerprints are computed here, before any run
    root = Path(tempfile.mkdtemp(prefix=TEMP_PREFIX))
    try:
        run = _Run(options, options.experiment, repo, base, source, manifest, root)
        if environ is not None:
            run.environ = environ
        groups = [(options.experiment, options.output)]
        if options.nested:
            groups.append(("nested_code_mode", nested_output_path(options.output)))
        results: list[GroupResult] = []
        for experiment, output in groups:
            group_run = replace(run, experiment=experiment)
            group_run.root = root / experiment  # each group gets its own worktrees/receipts
            for sub in ("worktrees", "receipts"):
                (group_run.root / sub).mkdir(parents=True)
            folders = _folder_state(group_run.root)
            plan = plan_samples(experiment, manifest, options.count, options.variant)
            samples = []
            for spec in plan:
                try:
                    result = run_sample(group_run, spec)
                    gone = _folder_state(group_run.root) != folders
                except (OSError, EvalkitError):
                    if _folder_state(group_run.root) == folders:
                        raise  # not the folder: reported as it is
                    result, gone = None, True
                if gone:  # the driver removed or replaced the collector's own folder
                    _stopped(group_run, experiment, output, plan, samples, spec, results, echo)
                echo(result.line())
                samples.append(result)
            evidence = _evidence(group_run, experiment, samples)
            results.append(GroupResult(experiment, output, evidence, tuple(samples)))
        final = []
        for group in results:
            _write_evidence(group.output, dump_evidence(group.evidence), echo)
            strict = None
            if options.strict:
                strict = strict_check(
                    group.evidence,
                    manifest=manifest,
                    expected=Expected(
                        options.model_config_digest, base, group.evidence.fixture_revision
                    ),
                )
            final.append(replace(group, strict=strict))
        missing = tuple(g.output for g in final if not g.output.is_file())
        outcome = CollectResult(tuple(final), options.strict, missing)
        for line in summary_lines(outcome):
            echo(line)
        return outcome
    finally:
        _cleanup(repo, root)


def _write_evidence(output: Path, text: str, echo: Callable[[str], None]) -> None:
    """Write one group's evidence; when that fails, keep it in a new file beside the output.

    Every sample already ran: losing them to a full disk or a replaced output would waste the
    whole run. The kept copy gets a fresh name (created exclusively, so it replaces nothing).
    """
    try:
        write_atomically(output, text)
        return
    except OSError as exc:
        reason = str(exc) if isinstance(exc, EvidenceWriteError) else exc.strerror or str(exc)
    saved = _keep(output, text, echo)
    where = f"; the collected evidence was kept in {saved}" if saved else ""
    raise EvidenceWriteError(f"could not write the evidence to {output} ({reason}){where}", saved)


def _keep(output: Path, text: str, echo: Callable[[str], None]) -> Path | None:
    """Keep evidence that cannot go to `output` in a new file beside it (or in the temporary
    directory): `<stem>.unsaved-<random><suffix>`, created exclusively; None when neither works."""
    for directory in (output.parent, Path(tempfile.gettempdir())):
        try:
            fd, name = tempfile.mkstemp(
                prefix=f"{output.stem}.unsaved-", suffix=output.suffix or ".json", dir=directory
            )
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
        except OSError:
            continue
        echo(f"evidence kept in: {name}")
        return Path(name)
    return None


def _folder_state(root: Path) -> tuple[tuple[int, int] | None, ...]:
    """The identity (device, inode) of a group's folder and its `worktrees/` and `receipts/`,
    None for one that is gone or is not a directory: a driver must never touch them."""
    out = []
    for path in (root, root / "worktrees", root / "receipts"):
        try:
            st = os.lstat(path)
        except OSError:
            out.append(None)
            continue
        out.append((st.st_dev, st.st_ino) if stat.S_ISDIR(st.st_mode) else None)
    return tuple(out)


class CollectorFolderError(EvalkitError):
    """A driver removed or replaced the collector's own temporary folder: the run stopped, and
    the samples it had completed were kept (`saved`)."""

    def __init__(self, message: str, saved: tuple[Path, ...]) -> None:
        super().__init__(message)
        self.saved = saved


def _stopped(
    run: _Run,
    experiment: str,
    output: Path,
    plan: list[SampleSpec],
    done: list[SampleResult],
    spec: SampleSpec,
    results: list[GroupResult],
    echo: Callable[[str], None],
) -> None:
    """Stop a run whose group folder a driver removed or replaced (issue 21): the samples run
    before are kept with the evidence of the groups already complete, in files of their own
    beside the outputs (as when the final write fails), each a valid evidence file in which
    this sample and those not run are failures (`sample_contract_error`). Always raises
    `CollectorFolderError`, naming the folder and the sample whose driver ran when it went."""
    message = "the driver removed the collector's temporary folder"
    broken = _Status("fail")
    broken.fail("sample_contract_error", message)
    rest = [_finish(spec, _empty_sample(spec), broken)]
    for later in plan[plan.index(spec) + 1 :]:
        not_run = _Status("fail")
        not_run.fail("sample_contract_error", "not run: the collector's folder was removed")
        rest.append(_finish(later, _empty_sample(later), not_run))
    echo(rest[0].line())
    kept = []
    groups = [(g.output, g.evidence) for g in results]
    groups.append((output, _evidence(run, experiment, [*done, *rest])))
    for path, evidence in groups:
        saved = _keep(path, dump_evidence(evidence), echo)
        if saved is not None:
            kept.append(saved)
    where = (
        f"; the {len(done)} completed {'sample was' if len(done) == 1 else 'samples were'} kept "
        f"in {', '.join(map(str, kept))}"
        if kept
        else "; the completed samples could not be kept (no writable directory)"
    )
    raise CollectorFolderError(
        f"collection stopped at sample {spec.label}: its driver removed or replaced the "
        f"collector's temporary folder {run.root} (its worktrees and receipts){where}",
        tuple(kept),
    )


def _cleanup(repo: Path, root: Path) -> None:
    """Remove every worktree this run created, then the whole temporary directory (§8.3)."""
    for group in root.iterdir() if root.is_dir() else ():
        worktrees = group / "worktrees"
        for path in worktrees.iterdir() if worktrees.is_dir() else ():
            remove_worktree(repo, path)
    shutil.rmtree(root, ignore_errors=True)


def summary_lines(result: CollectResult) -> list[str]:
    """The payload-safe human summary of §8.1: experiment, revision prefix, counts, verdict."""
    lines = []
    for g in result.groups:
        ev = g.evidence
        counts = ", ".join(f"{k} {v}" for k, v in ev.status_counts.items())
        unit = "pairs per case" if ev.paired else "repetitions per scenario"
        lines.append(f"experiment: {ev.experiment}")
        lines.append(f"base revision: {ev.base_revision[:12]}")
        if ev.fixture_revision:
            lines.append(f"fixture revision: {ev.fixture_revision[:12]}")
        lines.append(f"driver: {ev.provenance.driver_kind}")
        lines.append(
            f"samples: {len(ev.samples())} ({len(ev.case_ids)} cases, "
            f"{ev.pair_count or ev.repetition_count} {unit})"
        )
        lines.append(f"status counts: {counts}")
        lines.append(f"evidence: {g.output}")
        if g.strict is not None:
            s = g.strict
            lines.append(
                f"strict: {s.verdict} ({s.qualified_units} of {s.required_units} {s.unit}s "
                "qualified)"
            )
            lines.extend(f"finding: {f.line()}" for f in s.findings)
        if ev.provenance.driver_kind == "scripted":
            lines.append(
                "note: scripted-driver evidence tests the collector only and is not "
                "real-model evidence"
            )
    for path in result.missing_outputs:
        lines.append(f"missing evidence file: {path}")
    return lines
