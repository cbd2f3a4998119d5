"""`evalkit pairs check|report` and `python -m evalkit.paired` (issue 6, Build item 8)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from evalkit.cli import main
from evalkit.paired import PUBLISHED_BASELINE
from evalkit.paired.cli import main as paired_main
from tests.paired_helpers import DIGEST, collected_evidence, sha, write_json
from tests.test_paired_baseline import MACHINE_ROWS, SEED_TABLE

BASELINE = str(PUBLISHED_BASELINE)


def test_report_prints_the_seed_table_and_deltas(capsys):
    assert main(["pairs", "report", BASELINE]) == 0
    out = capsys.readouterr().out
    normalized = [" ".join(line.split()) for line in out.splitlines()]
    seed = SEED_TABLE.splitlines()
    start = normalized.index(seed[0])
    assert normalized[start : start + 10] == seed
    deltas = normalized.index("Deltas (candidate_minus_baseline):")
    assert (
        normalized[deltas + 1]
        == "Task Pair Calls Result bytes Job observes Attested nonempty cells"
    )
    assert normalized[deltas + 2 : deltas + 11] == [
        "readonly_review 1 0 44,186 0 -3",
        "readonly_review 2 -3 37,660 0 -6",
        "readonly_review 3 0 43,763 0 -3",
        "guarded_multi_file_edit 1 0 51 0 -1",
        "guarded_multi_file_edit 2 0 0 0 0",
        "guarded_multi_file_edit 3 0 -1,149 0 0",
        "long_validation_handoff 1 -2 -7,706 0 -2",
        "long_validation_handoff 2 -1 14,173 0 -1",
        "long_validation_handoff 3 0 -2,894 0 0",
    ]
    assert "strict verdict: unverifiable" in out
    assert "composition observed in 4 of 9 composition-allowed samples" in out


def test_report_json_carries_the_same_numbers(capsys):
    assert main(["pairs", "report", BASELINE, "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["kind"] == "paired_evidence_report"
    got = [
        [
            p["case_id"],
            p["pair"],
            *(
                p["metrics"][m][lane]
                for m in (
                    "outer_calls",
                    "serialized_tool_result_bytes",
                    "job_observe_calls",
                    "nonempty_cells",
                )
                for lane in ("baseline", "candidate")
            ),
        ]
        for p in d["pairs"]
    ]
    assert got == MACHINE_ROWS
    assert [p["metrics"]["outer_calls"]["candidate_minus_baseline"] for p in d["pairs"]] == [
        0,
        -3,
        0,
        0,
        0,
        0,
        -2,
        -1,
        0,
    ]


def test_check_strict_exit_codes(capsys, tmp_path):
    assert main(["pairs", "check", BASELINE, "--strict"]) == 1
    out = capsys.readouterr().out
    assert "verdict: unverifiable" in out
    assert "finding: unverifiable_reconstruction" in out
    assert "driver_receipts:18" in out
    assert main(["pairs", "check", BASELINE]) == 0
    capsys.readouterr()

    good = write_json(tmp_path / "good.json", collected_evidence())
    assert main(["pairs", "check", str(good), "--strict"]) == 0
    assert "verdict: pass" in capsys.readouterr().out
    pinned = ["--expect-model-config-digest", DIGEST, "--expect-base-revision", "0" * 40]
    assert main(["pairs", "check", str(good), "--strict", *pinned]) == 1
    assert "noncomparable_source" in capsys.readouterr().out
    assert main(["pairs", "check", str(good), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["verdict"] == "pass"
    other = ["--expect-model-config-digest", sha("other")]
    assert main(["pairs", "check", str(good), "--strict", *other]) == 1


def test_unusable_input_exits_2(capsys, tmp_path):
    assert main(["pairs", "check", str(tmp_path / "missing.json")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("evalkit pairs: could not read evidence file: ")
    bad = tmp_path / "bad.json"
    bad.write_text("{}", encoding="utf-8")
    assert main(["pairs", "report", str(bad)]) == 2
    assert "evidence lacks required field schema_version" in capsys.readouterr().err
    assert main(["pairs", "check", BASELINE, "--expect-base-revision", "XYZ"]) == 2
    assert "--expect-base-revision must be" in capsys.readouterr().err
    assert paired_main(["check", str(tmp_path / "missing.json")]) == 2
    assert capsys.readouterr().err.startswith("evalkit-paired: could not read evidence file")


def test_help_teaches_exit_codes_and_the_gate(capsys):
    with pytest.raises(SystemExit) as info:
        main(["pairs", "--help"])
    out = capsys.readouterr().out
    assert info.value.code == 0 and "examples:" in out and "own --help" in out
    for argv in (["pairs", "check", "--help"], ["pairs", "report", "--help"]):
        with pytest.raises(SystemExit) as info:
            main(argv)
        assert info.value.code == 0
        out = capsys.readouterr().out
        assert "exit status" in out and "unverifiable" in out and "unusable input" in out
        assert "examples:" in out
    with pytest.raises(SystemExit):
        main(["pairs", "check", "--help"])
    out = capsys.readouterr().out
    assert "never trusts a stored flag" in out


def test_pairs_without_subcommand_is_a_usage_error(capsys):
    assert main(["pairs"]) == 2


def test_python_dash_m_evalkit_paired():
    root = Path(__file__).resolve().parents[1]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")])),
    }
    proc = subprocess.run(
        [sys.executable, "-m", "evalkit.paired", "check", BASELINE, "--strict"],
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )
    assert proc.returncode == 1
    assert "verdict: unverifiable" in proc.stdout


@pytest.mark.parametrize("text", ["[]", '{"schema_version": 1}'])
def test_a_structural_error_names_the_file(capsys, tmp_path, text):
    path = tmp_path / "evidence.json"
    path.write_text(text, encoding="utf-8")
    for run in (
        lambda: main(["pairs", "check", str(path)]),
        lambda: paired_main(["report", str(path)]),
    ):
        assert run() == 2
        err = capsys.readouterr().err
        assert err.count(str(path)) == 1 and len(err.splitlines()) == 1
