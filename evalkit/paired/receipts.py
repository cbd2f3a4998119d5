"""The bounded driver-receipt reader and receipt field rules (spec §5).

A receipt is the JSON file a driver writes for one sample. evalkit reads receipts only during
collection (spec §8, a later stage); the reader ships now so that it is tested on its own.

`read_receipt(path)` follows the exact step order and messages of §5.1: `lstat`, regular file,
64 KiB size bound, a non-blocking no-follow open, an identity re-check, a bounded read, UTF-8,
bounded JSON, a top-level object and a known `status`. It returns None when the path does not
exist (the sample then fails with `driver_receipt_missing`, and no error is raised).

The field helpers (`receipt_audit_selection`, `receipt_repair_turns`, `receipt_task_wall_time_ms`,
`receipt_correctness`) validate the optional fields of §5.2 the collector copies into a sample.
No other receipt field is ever validated, copied or echoed.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalkit.paired._files import OpenMessages, read_bounded
from evalkit.paired._json import BoundsError, SyntaxProblem, decode_bounded
from evalkit.paired.errors import ReceiptError
from evalkit.paired.schema import REPAIR_REASONS, STATUSES, freeze

__all__ = [
    "MAX_RECEIPT_BYTES",
    "Receipt",
    "read_receipt",
    "receipt_audit_selection",
    "receipt_correctness",
    "receipt_repair_turns",
    "receipt_task_wall_time_ms",
]

MAX_RECEIPT_BYTES = 65_536
_MESSAGES = OpenMessages(
    lstat_failed="driver did not create its result receipt",
    not_regular="driver result must be a regular file",
    too_large="driver result exceeds the 64 KiB receipt limit",
    open_failed="driver result must be a readable regular file",
    changed_identity="driver result changed identity before read",
)


@dataclass(frozen=True)
class Receipt:
    """A receipt that passed §5.1: its claimed `status` and the frozen decoded object."""

    status: str
    fields: Mapping[str, Any]

    def get(self, key: str, default: Any = None) -> Any:
        return self.fields.get(key, default)


def read_receipt(path: str | Path) -> Receipt | None:
    """Read one driver receipt with the bounds and messages of spec §5.1.

    Returns:
        The receipt, or None when nothing exists at `path` (step 0: the caller records
        `driver_receipt_missing`).

    Raises:
        ReceiptError: steps 1–10, each with its exact message.
    """
    if not os.path.lexists(path):
        return None
    data = read_bounded(path, limit=MAX_RECEIPT_BYTES, messages=_MESSAGES, error=ReceiptError)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ReceiptError("driver result must be UTF-8 JSON") from None
    try:
        obj = decode_bounded(text)
    except SyntaxProblem as exc:
        # The decoder's position text only ("Expecting value: line 1 column 1 (char 0)").
        raise ReceiptError(f"driver result is not valid JSON: {exc.message}") from None
    except BoundsError:
        raise ReceiptError("driver result is not valid bounded JSON") from None
    if not isinstance(obj, dict):
        raise ReceiptError("driver result must be a JSON object")
    if obj.get("status") not in STATUSES or not isinstance(obj.get("status"), str):
        raise ReceiptError("driver result status must be pass, fail, partial, or unsupported")
    return Receipt(status=obj["status"], fields=freeze(obj))


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def receipt_audit_selection(receipt: Receipt) -> tuple[str, str] | None:
    """`(audit_db, workflow_session_id)`, required unless the status is `unsupported` (§5.2).

    The session id is used transiently to select Audit rows and never written to evidence.
    """
    if receipt.status == "unsupported":
        return None
    audit_db = receipt.get("audit_db")
    if not isinstance(audit_db, str) or not audit_db:
        raise ReceiptError("non-unsupported driver result requires audit_db")
    session = receipt.get("workflow_session_id")
    if not isinstance(session, str) or not session:
        raise ReceiptError("non-unsupported driver result requires workflow_session_id")
    return audit_db, session


def receipt_repair_turns(receipt: Receipt) -> tuple[int, dict[str, int]] | None:
    """The caller's repair annotation `(total, by_reason)`, or None when absent (§5.2).

    An unknown reason key is refused without echoing it (spec §11, "Unknown names in errors").
    """
    value = receipt.get("repair_turns")
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise ReceiptError("run annotation repair_turns must be an object")
    total, by_reason = value.get("total"), value.get("by_reason", {})
    if not _is_count(total):
        raise ReceiptError("run annotation repair_turns.total must be a non-negative integer")
    if not isinstance(by_reason, Mapping):
        raise ReceiptError("run annotation repair_turns.by_reason must be an object")
    if set(by_reason) - set(REPAIR_REASONS):
        raise ReceiptError("unsupported repair reason")
    if not all(_is_count(n) for n in by_reason.values()):
        raise ReceiptError(
            "run annotation repair_turns.by_reason values must be non-negative integers"
        )
    if sum(by_reason.values()) != total:
        raise ReceiptError("run annotation repair_turns.total must equal by_reason sum")
    return total, dict(by_reason)


def receipt_task_wall_time_ms(
    receipt: Receipt, *, elapsed_ms: int | None, manual_bridge: bool = False
) -> int | None:
    """`task_wall_time_ms` from the receipt's `task_timing` (spec §5.2, §8.6).

    Omitted: the runner's own `elapsed_ms` (refused for a manual bridge). Explicit null: unknown.
    An object: `ended_at_ms - started_at_ms`.
    """
    if "task_timing" not in receipt.fields:
        if manual_bridge:
            raise ReceiptError("manual bridge result must state task_timing explicitly")
        return elapsed_ms
    timing = receipt.get("task_timing")
    if timing is None:
        return None
    if not isinstance(timing, Mapping):
        raise ReceiptError("run annotation task_timing must be an object or null")
    started, ended = timing.get("started_at_ms"), timing.get("ended_at_ms")
    for name, value in (("started_at_ms", started), ("ended_at_ms", ended)):
        if not _is_count(value):
            raise ReceiptError(f"run annotation task_timing.{name} must be a non-negative integer")
    if ended < started:
        raise ReceiptError("run annotation task_timing ended_at_ms precedes started_at_ms")
    return ended - started


def receipt_correctness(
    receipt: Receipt, *, validation_required: bool, fixture_oracle_failed: bool = False
) -> dict[str, str] | None:
    """The sample's `correctness` from the receipt (spec §5.3 step 2).

    Only the receipt's verdicts count. A failed fixture oracle forces `task_verdict: "fail"`; a
    passed oracle never creates a pass (spec §11). A missing verdict becomes `unavailable`, or
    `not_required` for validation on a case that does not require it.
    """
    value = receipt.get("correctness")
    missing_validation = "unavailable" if validation_required else "not_required"
    if value is None:
        if fixture_oracle_failed:
            return {"task_verdict": "fail", "validation_verdict": missing_validation}
        return None
    if not isinstance(value, Mapping):
        raise ReceiptError("driver correctness must be an object when present")
    task = value.get("task_verdict", "unavailable")
    validation = value.get("validation_verdict", missing_validation)
    if task not in ("pass", "fail", "unavailable"):
        raise ReceiptError("driver correctness task_verdict must be pass, fail, or unavailable")
    if validation not in ("pass", "fail", "not_required", "unavailable"):
        raise ReceiptError(
            "driver correctness validation_verdict must be pass, fail, not_required, or unavailable"
        )
    if fixture_oracle_failed:
        task = "fail"
    return {"task_verdict": task, "validation_verdict": validation}
