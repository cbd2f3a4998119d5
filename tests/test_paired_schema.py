"""Evidence loader (spec §3): structural messages, bounded JSON, hardened open, canonical dump."""

from __future__ import annotations

import json
import os

import pytest

from evalkit.paired import EvidenceError, dump_evidence, load_evidence, parse_evidence
from tests.paired_helpers import (
    SENTINEL,
    collected_evidence,
    mutated,
    sample_at,
    spec_example,
    write_json,
)

S = "cases[0].pairs[0].samples[0]"


def _top(key, value):
    def change(doc):
        doc[key] = value

    return change


def _sample(path, value):
    def change(doc):
        target = sample_at(doc)
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return change


def _drop(key):
    return lambda doc: doc.pop(key)


def _reconstructed(doc):
    doc["provenance"]["source"] = "reconstructed_from_published_summary"
    doc["provenance"]["driver_kind"] = None


def _pair(key, value):
    def change(doc):
        doc["cases"][0]["pairs"][0][key] = value

    return change


def _swap_cases(doc):
    doc["cases"][0], doc["cases"][1] = doc["cases"][1], doc["cases"][0]


def _dup_case_entry(doc):
    doc["cases"][1] = doc["cases"][0]


def _pairs_descending(doc):
    pairs = doc["cases"][0]["pairs"]
    pairs[0], pairs[2] = pairs[2], pairs[0]


def _selection_with_pairs(doc):
    entry = doc["cases"][0]
    entry["pairs"] = entry.pop("repetitions")


MESSAGES = [
    (_top("schema_version", 2), "unsupported evidence schema_version"),
    (_top("schema_version", True), "unsupported evidence schema_version"),
    (_top("kind", "other"), "evidence kind must be paired_evidence"),
    (_top("extra", SENTINEL), "evidence contains unsupported fields"),
    (_drop("notes"), "evidence lacks required field notes"),
    (_top("notes", "x"), "notes must be an array of at most 64 non-empty strings"),
    (
        _top("experiment", SENTINEL),
        "experiment must be one of direct_vs_host, host_cell_policy, nested_code_mode, or "
        "tool_selection",
    ),
    (_top("base_revision", "A" * 40), "base_revision must be an exact lowercase 40-hex Git commit"),
    (
        _top("model_config_digest", "ab"),
        "model_config_digest must be an exact lowercase 64-hex SHA-256",
    ),
    (
        _top("model_config_digest", None),
        "model_config_digest may be null only in reconstructed or tool_selection evidence",
    ),
    (_top("pair_count", -1), "pair_count must be null or a non-negative integer"),
    (_top("pair_count", 3.0), "pair_count must be null or a non-negative integer"),
    (_top("pair_count", True), "pair_count must be null or a non-negative integer"),
    (_top("pair_count", None), "pair_count must be a non-negative integer"),
    (_top("repetition_count", 3), "repetition_count must be null in paired evidence"),
    (_top("case_ids", ["readonly_review", "readonly_review"]), "duplicate case id in case_ids"),
    (_top("case_ids", [SENTINEL]), "case_ids[0] must be a case id from the case manifest"),
    (_swap_cases, "cases must follow the order of case_ids"),
    (_dup_case_entry, "duplicate case id in cases"),
    (_top("status_counts", {"pass": 1}), "status_counts lacks required field fail"),
    (
        lambda d: d["cases"][0].update(case_fingerprint=None),
        "cases[0].case_fingerprint may be null only in reconstructed evidence",
    ),
    (
        lambda d: (_reconstructed(d), d["provenance"].update(driver_kind="live_host")),
        "provenance.driver_kind must be null for reconstructed evidence",
    ),
    (lambda d: d["provenance"].update(note=""), "provenance.note must be a non-empty string"),
    (_pairs_descending, "cases[0].pairs must be unique and ascending"),
    (_pair("pair", 4), "cases[0].pairs[0].pair must be between 1 and pair_count"),
    (
        _pair("order", ["candidate", "baseline"]),
        "cases[0].pairs[0].order must alternate: odd pairs baseline first, even pairs candidate "
        "first",
    ),
    (
        lambda d: d["cases"][0]["pairs"][0]["samples"].pop(),
        "cases[0].pairs[0].samples must hold exactly two entries",
    ),
    (
        _sample(["case_id"], "guarded_multi_file_edit"),
        f"{S}.case_id must equal the enclosing case_id",
    ),
    (_sample(["pair"], 2), f"{S}.pair must equal the enclosing pair"),
    (_sample(["ordinal"], 2), f"{S}.ordinal must equal its position in samples"),
    (_sample(["lane"], "candidate"), f"{S}.lane must equal order at its position"),
    (_sample(["repetition"], 1), f"{S}.repetition must be null in paired evidence"),
    (_sample(["surface"], "read_only"), f"{S}.surface does not fit {S}.variant"),
    (
        _sample(["surface"], "e1"),
        f"{S}.surface must be one of direct, host_code_mode, read_only, guarded_edit, or validation",
    ),
    (
        _sample(["status"], "passed"),
        f"{S}.status must be one of fail, partial, pass, or unsupported",
    ),
    (_sample(["extra"], SENTINEL), f"{S} contains unsupported fields"),
    (lambda d: sample_at(d).pop("metrics"), f"{S} lacks required field metrics"),
    (
        _sample(["fixture_oracle", "passed"], True),
        f"{S}.fixture_oracle.passed must be null when available is false",
    ),
    (
        lambda d: sample_at(d, case_index=1).update(
            fixture_oracle={"available": True, "passed": None}
        ),
        "cases[1].pairs[0].samples[0].fixture_oracle.passed must be a boolean when available is true",
    ),
    (
        _sample(["metrics", "repair_turns"], None),
        f"{S}.metrics.repair_turns_by_reason requires repair_turns",
    ),
    (
        _sample(["metrics", "repair_turns"], 2),
        f"{S}.metrics.repair_turns must equal the repair_turns_by_reason sum",
    ),
    (
        _sample(["metrics", "outer_calls"], 1.5),
        f"{S}.metrics.outer_calls must be null or a non-negative integer",
    ),
    (
        _sample(["metrics", "outer_calls"], False),
        f"{S}.metrics.outer_calls must be null or a non-negative integer",
    ),
    (
        lambda d: sample_at(d)["outer_call_ids_sha256"].reverse(),
        f"{S}.outer_call_ids_sha256 must be unique and sorted",
    ),
    (
        _sample(["metrics", "outer_calls"], 9),
        f"{S}.outer_call_ids_sha256 must hold exactly metrics.outer_calls values",
    ),
    (
        _sample(["instrumentation"], ["a", "a"]),
        f"{S}.instrumentation must be a label or an array of 1..8 unique labels",
    ),
    (
        _sample(["instrumentation"], "-bad"),
        f"{S}.instrumentation must be a label or an array of 1..8 unique labels",
    ),
    (
        _sample(["correctness", "task_verdict"], SENTINEL),
        f"{S}.correctness.task_verdict must be one of pass, fail, or unavailable",
    ),
    (
        _sample(["efficiency_attestation"], [SENTINEL]),
        f"{S}.efficiency_attestation must be a JSON object",
    ),
    (_sample(["runtime_gates"], []), f"{S}.runtime_gates must be a JSON object"),
]


@pytest.mark.parametrize(("change", "message"), MESSAGES)
def test_structural_messages(change, message):
    doc = mutated(collected_evidence(), change)
    with pytest.raises(EvidenceError) as info:
        parse_evidence(doc)
    assert str(info.value) == message
    assert SENTINEL not in str(info.value)


def test_tool_selection_specific_messages():
    doc = collected_evidence("tool_selection")
    R = "cases[0].repetitions[0]"
    cases = [
        (_top("pair_count", 3), "pair_count must be null in tool_selection evidence"),
        (_selection_with_pairs, "cases[0] must hold repetitions in tool_selection evidence"),
        (
            lambda d: d["cases"][0]["repetitions"][0].update(lane="baseline"),
            f"{R}.lane must be null in tool_selection evidence",
        ),
        (
            lambda d: d["cases"][0]["repetitions"][0].update(repetition=4),
            f"{R}.repetition must be between 1 and repetition_count",
        ),
        (
            lambda d: d["cases"][0]["repetitions"].reverse(),
            "cases[0].repetitions must be unique and ascending",
        ),
    ]
    for change, message in cases:
        with pytest.raises(EvidenceError) as info:
            parse_evidence(mutated(doc, change))
        assert str(info.value) == message
    paired = collected_evidence()
    paired["cases"][0]["repetitions"] = paired["cases"][0].pop("pairs")
    with pytest.raises(EvidenceError, match=r"^cases\[0\] must hold pairs in paired evidence$"):
        parse_evidence(paired)


def test_spec_example_loads_and_round_trips(tmp_path):
    path = tmp_path / "example.json"
    path.write_text(dump_evidence(parse_evidence(spec_example())), encoding="utf-8")
    evidence = load_evidence(path)
    assert dump_evidence(evidence) == path.read_text(encoding="utf-8")
    assert evidence.to_dict() == spec_example()


def test_missing_lane_position_may_be_null():
    doc = collected_evidence()
    doc["cases"][0]["pairs"][0]["samples"][1] = None
    evidence = parse_evidence(doc)
    assert evidence.cases[0].pairs[0].samples[1] is None


def test_single_label_instrumentation_is_kept_as_written():
    doc = mutated(collected_evidence(), _sample(["instrumentation"], "original_v4"))
    evidence = parse_evidence(doc)
    assert evidence.cases[0].pairs[0].samples[0].instrumentation == "original_v4"
    assert evidence.cases[0].pairs[0].samples[0].instrumentation_key == ("original_v4",)
    assert json.loads(dump_evidence(evidence)) == doc


def test_evidence_is_immutable():
    evidence = parse_evidence(collected_evidence())
    sample = evidence.cases[0].pairs[0].samples[0]
    with pytest.raises(AttributeError):
        sample.status = "fail"  # type: ignore[misc]
    with pytest.raises(TypeError):
        sample.efficiency_attestation["variant"] = "direct"  # type: ignore[index]


# --- bounded JSON and the hardened open sequence (§3.1, §3.10)

BOUNDED = [
    ('{"a": NaN}', "NaN"),
    ('{"a": Infinity}', "Infinity"),
    ('{"a": 1, "a": 2}', "duplicate key"),
    ('{"a": 9007199254740992}', "2^53"),
    ('{"a": -9007199254740992}', "-2^53"),
    ('{"a": ' + "9" * 10_000 + "}", "10,000 digits"),
    ("[" * 65 + "]" * 65, "depth 65"),
    ("[" * 10_000 + "]" * 10_000, "depth 10,000"),
    ('{"a": 1e400}', "overflowing float"),
]


@pytest.mark.parametrize(("text", "why"), BOUNDED, ids=[b[1] for b in BOUNDED])
def test_bounded_json_is_refused(tmp_path, text, why):
    path = tmp_path / "e.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(EvidenceError) as info:
        load_evidence(path)
    assert str(info.value) == f"evidence file is not valid bounded JSON: {path}"


def test_depth_64_and_max_integer_are_not_bounds_errors(tmp_path):
    path = tmp_path / "e.json"
    path.write_text("[" * 64 + "]" * 64, encoding="utf-8")
    with pytest.raises(EvidenceError, match="must be a JSON object"):
        load_evidence(path)
    path.write_text('{"a": 9007199254740991}', encoding="utf-8")
    with pytest.raises(EvidenceError, match="lacks required field schema_version"):
        load_evidence(path)


def test_file_level_messages(tmp_path):
    missing = tmp_path / "missing.json"
    with pytest.raises(EvidenceError) as info:
        load_evidence(missing)
    assert str(info.value) == f"could not read evidence file: {missing}"

    real = write_json(tmp_path / "real.json", collected_evidence())
    link = tmp_path / "link.json"
    link.symlink_to(real)
    with pytest.raises(EvidenceError, match="^evidence file must be a regular file$"):
        load_evidence(link)
    with pytest.raises(EvidenceError, match="^evidence file must be a regular file$"):
        load_evidence(tmp_path)

    big = tmp_path / "big.json"
    big.write_bytes(b" " * (4 * 1024 * 1024 + 1))
    with pytest.raises(EvidenceError, match="^evidence file exceeds the 4 MiB limit$"):
        load_evidence(big)

    latin = tmp_path / "latin.json"
    latin.write_bytes(b'{"a": "\xe9"}')
    with pytest.raises(EvidenceError, match="^evidence file must be UTF-8 JSON$"):
        load_evidence(latin)

    broken = tmp_path / "broken.json"
    broken.write_text('{\n"a": }', encoding="utf-8")
    with pytest.raises(EvidenceError) as info:
        load_evidence(broken)
    assert str(info.value) == f"evidence file is not valid JSON: {broken}:2"


def test_file_replaced_between_lstat_and_open(tmp_path, monkeypatch):
    path = write_json(tmp_path / "e.json", collected_evidence())
    other = write_json(tmp_path / "other.json", collected_evidence())
    real_open = os.open

    def swapping_open(p, flags, *args):
        os.replace(other, path)
        return real_open(p, flags, *args)

    monkeypatch.setattr("evalkit.paired._files.os.open", swapping_open)
    with pytest.raises(EvidenceError, match="^evidence file changed identity before read$"):
        load_evidence(path)


def test_top_level_array_is_refused(tmp_path):
    path = write_json(tmp_path / "e.json", [1])
    with pytest.raises(EvidenceError, match="^evidence must be a JSON object$"):
        load_evidence(path)


def test_hex_identities_are_whole_strings():
    from evalkit.paired._json import is_commit_hex, is_sha256_hex

    assert is_sha256_hex("a" * 64) and is_commit_hex("0" * 40)
    # `$` would accept a trailing newline; identities must be exact.
    assert not is_sha256_hex("a" * 64 + "\n") and not is_commit_hex("0" * 40 + "\n")
    assert not is_sha256_hex("A" * 64) and not is_sha256_hex(None)
