"""Bounded receipt reader (spec §5.1) and receipt field rules (spec §5.2)."""

from __future__ import annotations

import json
import os
import time

import pytest

from evalkit.paired import ReceiptError, read_receipt
from evalkit.paired.receipts import (
    MAX_RECEIPT_BYTES,
    receipt_audit_selection,
    receipt_correctness,
    receipt_repair_turns,
    receipt_task_wall_time_ms,
)
from tests.paired_helpers import SENTINEL


def _receipt(tmp_path, obj=None, *, text=None, name="receipt.json"):
    path = tmp_path / name
    if text is None:
        obj = {"status": "pass", "audit_db": "a.sqlite3", "workflow_session_id": "s"} | (obj or {})
        text = json.dumps(obj)
    path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return path


def _padded(size: int) -> bytes:
    head = b'{"status": "pass", "pad": "'
    tail = b'"}'
    return head + b"x" * (size - len(head) - len(tail)) + tail


def _error(path) -> str:
    with pytest.raises(ReceiptError) as info:
        read_receipt(path)
    return str(info.value)


def test_valid_receipt(tmp_path):
    receipt = read_receipt(_receipt(tmp_path))
    assert receipt.status == "pass"
    assert receipt_audit_selection(receipt) == ("a.sqlite3", "s")


def test_step0_missing_receipt_is_not_an_error(tmp_path):
    assert read_receipt(tmp_path / "absent.json") is None


def test_step1_lstat_failure(tmp_path, monkeypatch):
    monkeypatch.setattr("evalkit.paired.receipts.os.path.lexists", lambda p: True)
    assert _error(tmp_path / "vanished.json") == "driver did not create its result receipt"


def test_step2_symlink_fifo_and_directory_refused_without_blocking(tmp_path):
    real = _receipt(tmp_path)
    link = tmp_path / "link.json"
    link.symlink_to(real)
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    started = time.monotonic()
    for path in (link, fifo, tmp_path):
        assert _error(path) == "driver result must be a regular file"
    assert time.monotonic() - started < 0.5


def test_step3_and_step6_size_bound(tmp_path):
    exact = _receipt(tmp_path, text=_padded(MAX_RECEIPT_BYTES))
    assert read_receipt(exact).status == "pass"
    over = _receipt(tmp_path, text=_padded(MAX_RECEIPT_BYTES + 1), name="over.json")
    assert _error(over) == "driver result exceeds the 64 KiB receipt limit"


def test_step6_growth_after_lstat(tmp_path, monkeypatch):
    path = _receipt(tmp_path)
    real_open = os.open

    def growing_open(p, flags, *args):
        with open(p, "ab") as fh:
            fh.write(b" " * MAX_RECEIPT_BYTES)
        return real_open(p, flags, *args)

    monkeypatch.setattr("evalkit.paired._files.os.open", growing_open)
    assert _error(path) == "driver result exceeds the 64 KiB receipt limit"


def test_step4_open_failure(tmp_path, monkeypatch):
    path = _receipt(tmp_path)

    def failing_open(p, flags, *args):
        raise PermissionError(13, "denied")

    monkeypatch.setattr("evalkit.paired._files.os.open", failing_open)
    assert _error(path) == "driver result must be a readable regular file"


def test_step5_file_replaced_between_check_and_read(tmp_path, monkeypatch):
    path = _receipt(tmp_path)
    replacement = _receipt(tmp_path, name="replacement.json")
    real_open = os.open

    def swapping_open(p, flags, *args):
        os.replace(replacement, path)
        return real_open(p, flags, *args)

    monkeypatch.setattr("evalkit.paired._files.os.open", swapping_open)
    assert _error(path) == "driver result changed identity before read"


def test_step5_fifo_swapped_in_after_lstat_does_not_block(tmp_path, monkeypatch):
    path = _receipt(tmp_path)
    real_open = os.open

    def fifo_open(p, flags, *args):
        os.unlink(p)
        os.mkfifo(p)
        return real_open(p, flags, *args)

    monkeypatch.setattr("evalkit.paired._files.os.open", fifo_open)
    started = time.monotonic()
    assert _error(path) == "driver result changed identity before read"
    assert time.monotonic() - started < 0.5


def test_step7_non_utf8(tmp_path):
    path = _receipt(tmp_path, text=b'{"status": "pass", "x": "\xff"}')
    assert _error(path) == "driver result must be UTF-8 JSON"


def test_step8a_syntax_error_gives_decoder_position_only(tmp_path):
    path = _receipt(tmp_path, text=f'{{"status": "pass", "{SENTINEL}": }}')
    message = _error(path)
    assert message.startswith("driver result is not valid JSON: Expecting value: line 1 column")
    assert SENTINEL not in message


@pytest.mark.parametrize(
    "text",
    [
        "[" * 10_000 + "]" * 10_000,
        '{"status": "pass", "n": ' + "1" * 10_000 + "}",
        '{"status": "pass", "n": NaN}',
        '{"status": "pass", "status": "pass"}',
        '{"status": "pass", "n": 9007199254740992}',
    ],
    ids=["nesting", "digits", "nan", "duplicate", "2^53"],
)
def test_step8b_bounded_json(tmp_path, text):
    assert _error(_receipt(tmp_path, text=text)) == "driver result is not valid bounded JSON"


def test_step9_non_object(tmp_path):
    assert _error(_receipt(tmp_path, text='["pass"]')) == "driver result must be a JSON object"


@pytest.mark.parametrize("status", [None, "passed", 1, ["pass"]])
def test_step10_bad_status(tmp_path, status):
    path = _receipt(tmp_path, text=json.dumps({"status": status}))
    assert _error(path) == "driver result status must be pass, fail, partial, or unsupported"


def test_audit_selection_required_unless_unsupported(tmp_path):
    r = read_receipt(_receipt(tmp_path, text='{"status": "unsupported"}'))
    assert receipt_audit_selection(r) is None
    r = read_receipt(_receipt(tmp_path, text='{"status": "fail", "workflow_session_id": "s"}'))
    with pytest.raises(ReceiptError, match="^non-unsupported driver result requires audit_db$"):
        receipt_audit_selection(r)
    r = read_receipt(_receipt(tmp_path, text='{"status": "pass", "audit_db": "a"}'))
    with pytest.raises(
        ReceiptError, match="^non-unsupported driver result requires workflow_session_id$"
    ):
        receipt_audit_selection(r)


def test_task_timing_omitted_null_object(tmp_path):
    omitted = read_receipt(_receipt(tmp_path))
    assert receipt_task_wall_time_ms(omitted, elapsed_ms=5000) == 5000
    with pytest.raises(
        ReceiptError, match="^manual bridge result must state task_timing explicitly$"
    ):
        receipt_task_wall_time_ms(omitted, elapsed_ms=5000, manual_bridge=True)
    null = read_receipt(_receipt(tmp_path, {"task_timing": None}))
    assert receipt_task_wall_time_ms(null, elapsed_ms=5000) is None
    assert receipt_task_wall_time_ms(null, elapsed_ms=5000, manual_bridge=True) is None
    span = {"started_at_ms": 1760700000000, "ended_at_ms": 1760700171500}
    obj = read_receipt(_receipt(tmp_path, {"task_timing": span}))
    assert receipt_task_wall_time_ms(obj, elapsed_ms=5000) == 171500
    backwards = {"started_at_ms": 2, "ended_at_ms": 1}
    bad = read_receipt(_receipt(tmp_path, {"task_timing": backwards}))
    with pytest.raises(
        ReceiptError, match="^run annotation task_timing ended_at_ms precedes started_at_ms$"
    ):
        receipt_task_wall_time_ms(bad, elapsed_ms=None)


def test_repair_turns_rules_never_echo_unknown_reasons(tmp_path):
    ok = read_receipt(
        _receipt(tmp_path, {"repair_turns": {"total": 1, "by_reason": {"invalid_arguments": 1}}})
    )
    assert receipt_repair_turns(ok) == (1, {"invalid_arguments": 1})
    unknown = read_receipt(
        _receipt(tmp_path, {"repair_turns": {"total": 1, "by_reason": {SENTINEL: 1}}})
    )
    with pytest.raises(ReceiptError) as info:
        receipt_repair_turns(unknown)
    assert str(info.value) == "unsupported repair reason"
    mismatch = read_receipt(
        _receipt(tmp_path, {"repair_turns": {"total": 2, "by_reason": {"invalid_arguments": 1}}})
    )
    with pytest.raises(
        ReceiptError, match="^run annotation repair_turns.total must equal by_reason sum$"
    ):
        receipt_repair_turns(mismatch)


def test_correctness_rules(tmp_path):
    none = read_receipt(_receipt(tmp_path))
    assert receipt_correctness(none, validation_required=False) is None
    partial = read_receipt(_receipt(tmp_path, {"correctness": {"task_verdict": "pass"}}))
    assert receipt_correctness(partial, validation_required=False) == {
        "task_verdict": "pass",
        "validation_verdict": "not_required",
    }
    assert receipt_correctness(partial, validation_required=True) == {
        "task_verdict": "pass",
        "validation_verdict": "unavailable",
    }
    # A failed oracle forces a failed task verdict; a passed oracle never creates a pass.
    assert (
        receipt_correctness(partial, validation_required=False, fixture_oracle_failed=True)[
            "task_verdict"
        ]
        == "fail"
    )
    bad = read_receipt(_receipt(tmp_path, {"correctness": "pass"}))
    with pytest.raises(ReceiptError, match="^driver correctness must be an object when present$"):
        receipt_correctness(bad, validation_required=False)


def test_receipt_is_frozen_and_ignores_unknown_fields(tmp_path):
    receipt = read_receipt(_receipt(tmp_path, {"private_model_text": SENTINEL}))
    with pytest.raises(TypeError):
        receipt.fields["status"] = "fail"  # type: ignore[index]
