"""Case manifest and fingerprints (spec §2)."""

from __future__ import annotations

import copy
import hashlib
import json

import pytest

from evalkit.paired import CaseManifestError, case_fingerprint, load_cases, model_config_digest
from evalkit.paired.manifest import BUNDLED_MANIFEST

FINGERPRINTS = {
    "readonly_review": "52ddd75a701c462fd33b295f8dd3e9be3d8f0071df95707baf21ce8dec98075e",
    "guarded_multi_file_edit": "1d0d7ba620cf6262205b160e76ecb0fa784e8a6cfa0799b915599caf3491587b",
    "long_validation_handoff": "0db6c839cc5c7570ff4727f79ebf9244b79e79d26a33f37a2a4dd5cc8be3c625",
    "selection_single_read": "4b7d16f03aa60c4d546883c3b782e02e9e420ae1b8fac56dac17c4f16651fd8b",
    "selection_batch_read": "04bd072ecc7ff4af71857b33f97963e32bcd7c166fae1174c8242054c9e63da8",
    "selection_cross_tool_review": "ae367ddfb6894012fbe816fd2dddf35461ba87f18092895559b269325c8cdfce",
    "selection_compound_source_context": (
        "cb30c334f56907d987fd803e3732b09ef27c519bf36f74b0fb81b74662d9885e"
    ),
}


def _raw() -> dict:
    return json.loads(BUNDLED_MANIFEST.read_text(encoding="utf-8"))


def test_bundled_fingerprints():
    manifest = load_cases()
    assert {c.case_id: c.fingerprint for c in manifest.cases} == FINGERPRINTS
    assert manifest.experiment_cases("tool_selection") == tuple(FINGERPRINTS)[3:]
    for name in ("direct_vs_host", "host_cell_policy", "nested_code_mode"):
        assert manifest.experiment_cases(name) == tuple(FINGERPRINTS)[:3]


def test_fingerprint_ignores_key_order_but_not_content():
    case = _raw()["cases"][0]
    reordered = dict(reversed(list(case.items())))
    assert case_fingerprint(reordered) == FINGERPRINTS["readonly_review"]
    changed = copy.deepcopy(case)
    changed["prompt"] = changed["prompt"][:-1] + "!"
    assert case_fingerprint(changed) != FINGERPRINTS["readonly_review"]
    changed = copy.deepcopy(case)
    changed["prompt"] += "é"  # hashed as raw UTF-8, not as a \u escape
    payload = json.dumps(changed, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert case_fingerprint(changed) == hashlib.sha256(payload.encode("utf-8")).hexdigest()
    assert "é".encode() in payload.encode("utf-8")


def test_model_config_digest_uses_the_fingerprint_serialization():
    record = {"model": "m", "host_version": "1", "nested": {"b": 1, "a": [1, 2]}}
    same = {"nested": {"a": [1, 2], "b": 1}, "host_version": "1", "model": "m"}
    assert model_config_digest(record) == model_config_digest(same)
    assert len(model_config_digest(record)) == 64


def _write(tmp_path, obj):
    path = tmp_path / "cases.json"
    path.write_text(json.dumps(obj), encoding="utf-8")
    return path


def _case(i, change):
    def apply(doc):
        change(doc["cases"][i])

    return apply


MANIFEST_ERRORS = [
    (lambda d: d.update(schema_version=2), "unsupported case manifest schema_version"),
    (lambda d: d.update(kind="x"), "case manifest kind must be paired_evidence_cases"),
    (lambda d: d.update(cases=[]), "case manifest cases must be a non-empty array"),
    (lambda d: d["cases"].__setitem__(1, "x"), "cases[1] must be an object"),
    (_case(0, lambda c: c.update(title="")), "cases[0].title must be a non-empty string"),
    (_case(0, lambda c: c.pop("prompt")), "cases[0].prompt must be a non-empty string"),
    (
        _case(0, lambda c: c.update(case_id="Bad")),
        "cases[0].case_id must match ^[a-z][a-z0-9_]{0,63}$",
    ),
    (_case(1, lambda c: c.update(case_id="readonly_review")), "duplicate case id: readonly_review"),
    (
        _case(0, lambda c: c["surfaces"].update(code_mode="e1")),
        "cases[0].surfaces must map direct and host_code_mode to themselves and code_mode to "
        "read_only, guarded_edit, or validation",
    ),
    (
        _case(0, lambda c: c.update(validation_required=1)),
        "cases[0].validation_required must be a boolean",
    ),
    (
        _case(0, lambda c: c.update(runtime_contracts=["runtime_evidence", "runtime_evidence"])),
        "cases[0].runtime_contracts must be unique names from runtime_evidence, workspace_clean, "
        "multi_file_edit, long_handoff, selection_admission",
    ),
    (_case(0, lambda c: c.update(extra=1)), "cases[0] contains unsupported fields"),
    (
        lambda d: d["experiments"]["direct_vs_host"].append("unknown_case"),
        "case manifest experiments must map each experiment to known case ids",
    ),
    (
        lambda d: d["experiments"].update(tool_selection=[]),
        "case manifest experiments must map each experiment to known case ids",
    ),
]


@pytest.mark.parametrize(("change", "message"), MANIFEST_ERRORS)
def test_manifest_errors(tmp_path, change, message):
    doc = _raw()
    change(doc)
    with pytest.raises(CaseManifestError) as info:
        load_cases(_write(tmp_path, doc))
    assert str(info.value) == message


def test_manifest_file_errors(tmp_path):
    path = tmp_path / "cases.json"
    with pytest.raises(CaseManifestError, match="^could not read case manifest: "):
        load_cases(path)
    path.write_bytes(b"\xff")
    with pytest.raises(CaseManifestError, match="^case manifest must be UTF-8: "):
        load_cases(path)
    path.write_text("{\n\n,", encoding="utf-8")
    with pytest.raises(CaseManifestError) as info:
        load_cases(path)
    assert str(info.value) == f"case manifest is not valid JSON: {path}:3"
    path.write_text('{"a": 1, "a": 1}', encoding="utf-8")
    with pytest.raises(CaseManifestError, match="^case manifest is not valid bounded JSON: "):
        load_cases(path)
    path.write_text("[]", encoding="utf-8")
    with pytest.raises(CaseManifestError, match="^case manifest must be a JSON object$"):
        load_cases(path)
    path.write_bytes(b" " * (1024 * 1024 + 1))
    with pytest.raises(CaseManifestError, match="^case manifest exceeds the 1 MiB limit$"):
        load_cases(path)


def test_prompts_are_ascii():
    for case in _raw()["cases"]:
        assert case["prompt"].isascii()
