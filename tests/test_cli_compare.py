"""`evalkit compare`: the ARM COMPARISON block of compare-arms.mjs (spec §8.4), line by line.

Expected lines are built from the spec's row template (`"  " + lj(label, 36)` then, per arm,
`" " + rj(cell, 23)`) with cells worked out by hand from fixtures whose figures are known by
construction (tests/arm_helpers.py), and from the published cg22 express sample (§12.3).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from evalkit.cli import main
from evalkit.paths import bundled_corpus, published_dir
from tests.arm_helpers import write_run

EXPRESS = bundled_corpus() / "cg22" / "ab-express"

# §8.4, transcribed: the fixed text after the table.
HOW_TO_READ = [
    "  how to read this",
    "    occupancy  compare each arm's RETRIEVAL residual (codegraph in a with-arm,",
    "               file-access in a without-arm). Shares are Claude Code on a 200k",
    "               window and do NOT transfer to another host; the ratio does.",
    '    sufficiency  pooled across runs because it is per-CALL. "explore again" is',
    '               ambiguous by construction; "Read a file we returned" is an',
    "               allocation miss, the two recall rows are recall misses.",
    "    allocation  RELATIVE, not absolute — attribution is by citation, and an agent",
    "               can use a file without naming it. Compare builds on the SAME",
    '               question; never quote it as "codegraph wastes N% of what it returns."',
    "    all three  small-n. Runs make 1–5 explore calls, so read the range, not the",
    "               median of one run. RUNS>=2, and the 7-repo campaign for a verdict.",
]


def row(label: str, *cells: str) -> str:
    return "  " + label.ljust(36) + "".join(" " + c.rjust(23) for c in cells)


def run_cli(capsys, *argv):
    code = main(["compare", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


# --- the published sample (§12.3): every row it publishes -------------------------------------


def published_rows():
    with open(
        published_dir() / "arm_comparison_cg22_express.csv", newline="", encoding="utf-8"
    ) as fh:
        return list(csv.DictReader(fh))


@pytest.fixture(scope="module")
def express_text():
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        assert main(["compare", str(EXPRESS), "new", "baseline"]) == 0
    return out.getvalue()


@pytest.mark.parametrize("want", published_rows(), ids=lambda r: r["row"])
def test_published_cg22_express_row(express_text, want):
    label = want["row"] if want["row"] == "runs" else "  " + want["row"]
    assert row(label, want["new"], want["baseline"]) in express_text.splitlines()


def test_every_published_row_is_checked():
    # the CSV holds every cell the project published (§12.3), rows of every metric
    assert {r["metric"] for r in published_rows()} == {
        "runs",
        "behavior",
        "occupancy",
        "sufficiency",
        "allocation",
        "contamination",
    }
    assert len(published_rows()) == 18


def test_block_layout_on_the_bundled_express_arms(express_text):
    lines = express_text.split("\n")
    assert lines[0] == ""
    assert lines[1] == f"====== ARM COMPARISON — {EXPRESS} ======"
    assert lines[2] == row("", "new", "baseline")
    assert lines[3] == row("runs", "3", "3")
    # no non-success, race, errored or contamination rows when nothing calls for them
    assert lines[4:6] == ["", "  behavior"]
    assert lines[6] == row("  duration (s)", "24 [18–35]", "26 [24–30]")
    assert lines[7] == row("  tool calls", "3 [1–3]", "3")
    assert lines[10] == row("  Bash", "1 [0–1]", "0")
    assert lines[12:14] == [
        "",
        "  residual context occupancy (CG-7) — tokens still resident at end of run",
    ]
    assert lines[14] == row(
        "  final context (tok)", "50,558 [45,525–51,538]", "50,423 [50,226–50,563]"
    )
    assert lines[19:21] == [
        "",
        "  explore sufficiency (CG-8) — pooled over every answered explore call",
    ]
    assert lines[27:29] == [
        "",
        "  explore allocation efficiency (CG-9) — share of returned bytes the answer cited",
    ]
    assert lines[29] == row("  explore calls with source", "5", "6")
    assert lines[32] == row("  envelope (chars)", "66,210", "63,949")
    assert lines[33:35] == ["", "  contamination — the CLI must never be how codegraph is reached"]
    assert lines[37] == ""
    assert lines[38:-1] == HOW_TO_READ
    assert lines[-1] == ""  # every line ends with a newline


def test_synthetic_label_goes_to_stderr_only(capsys):
    code, out, err = run_cli(capsys, EXPRESS, "new", "baseline")
    assert code == 0
    assert "synthetic" in err and "synthetic" not in out


# --- optional rows ------------------------------------------------------------------------------


@pytest.fixture
def messy(tmp_path):
    d = tmp_path / "arms"
    write_run(d, "run-a-1.jsonl", dur_ms=10000)
    write_run(d, "run-a-2.jsonl", dur_ms=20000, subtype="error_max_turns")
    write_run(d, "run-a-3.jsonl", dur_ms=30000, raced=True)
    write_run(d, "run-b-1.jsonl", dur_ms=5000, errored=1, cli="returned")
    write_run(d, "run-b-2.jsonl", dur_ms=5000, cli="blocked")
    return d


def test_optional_rows_and_contamination_lines(capsys, messy):
    code, out, _ = run_cli(capsys, messy, "a", "b")
    assert code == 0
    lines = out.split("\n")
    assert lines[3:6] == [
        row("runs", "3", "2"),
        row("  of which non-success", "1", "0"),
        row("  MCP cold-start race", "1", "0"),
    ]
    assert row("  duration (s)", "20 [10–30]", "5") in lines  # equal ends print the median only
    assert row("  errored/unanswered (not bucketed)", "1", "1") in lines
    # a raced run's explore errored too: a has 1 (the race), b has 1 (the errored explore)
    assert row("  CLI calls that RETURNED output", "0", "1") in lines
    assert row("  CLI attempts blocked", "0", "2") in lines
    i = lines.index(row("  CLI attempts blocked", "0", "2"))
    assert lines[i + 1 : i + 4] == [
        "  !! b reached codegraph through Bash — those runs are CONTAMINATED",
        "     (a without-arm was not without codegraph; a with-arm has bytes attributed to Bash,"
        " not codegraph)",
        "",
    ]


def test_one_run_cells_and_missing_values(capsys, tmp_path):
    d = tmp_path / "one"
    write_run(d, "run-solo.jsonl", explores=0, dur_ms=1500, answer="nothing to cite")
    code, out, _ = run_cli(capsys, d, "solo")
    assert code == 0
    lines = out.split("\n")
    assert lines[2] == row("", "solo")
    assert row("  duration (s)", "2") in lines  # Math.round(1.5) = 2
    # no explore call: nothing answered, no envelope
    assert row("  answered explore calls", "0") in lines
    assert row("  explore again", "—") in lines
    assert row("  pooled efficiency", "—") in lines
    assert row("  per-run efficiency", "—") in lines
    assert row("  envelope (chars)", "0") in lines


def test_sufficiency_cells_round_with_tofixed(capsys, tmp_path):
    d = tmp_path / "s"
    write_run(d, "run-a-1.jsonl", explores=2)  # explore again, then moved on
    write_run(d, "run-a-2.jsonl", explores=1)  # moved on
    code, out, _ = run_cli(capsys, d, "a")
    lines = out.split("\n")
    assert row("  answered explore calls", "3") in lines
    assert row("  explore again", "1  33%") in lines
    assert row("  moved on / answered", "2  67%") in lines


# --- empty arms and usage errors ------------------------------------------------------------


def test_an_arm_without_runs_warns_and_is_left_out(capsys, messy):
    code, out, err = run_cli(capsys, messy, "a", "ghost")
    assert code == 0
    assert f"  WARN: no run logs for arm 'ghost' in {messy}" in err.splitlines()
    assert out.split("\n")[2] == row("", "a")


def test_no_arm_with_runs_is_exit_1(capsys, messy):
    code, out, err = run_cli(capsys, messy, "x", "y")
    assert code == 1
    assert out == ""
    assert err.splitlines()[-1] == f"no run logs for x/y in {messy}"


@pytest.mark.parametrize("argv", [(), ("somewhere",)])
def test_usage_is_exit_1(capsys, argv):
    code, out, err = run_cli(capsys, *argv)
    assert code == 1
    assert out == ""
    assert err == "usage: evalkit compare DIR LABEL [LABEL ...]\n"


def test_missing_directory_is_exit_2(capsys, tmp_path):
    code, out, err = run_cli(capsys, tmp_path / "nope", "a")
    assert code == 2
    assert out == "" and len(err.splitlines()) == 1 and "no such directory" in err


def test_unknown_exclude_rule_is_exit_2(capsys, messy):
    code, _, err = run_cli(capsys, messy, "a", "--exclude", "raced,slow")
    assert code == 2 and "unknown rule 'slow'" in err


# --- run hygiene --------------------------------------------------------------------------------


def test_exclude_drops_runs_and_says_how_many_per_arm(capsys, messy):
    code, out, err = run_cli(capsys, messy, "a", "b", "--exclude", "raced,contaminated,failed")
    assert code == 0
    lines = out.split("\n")
    assert lines[3] == row("runs", "1", "1")
    assert row("  of which non-success", "0", "0") not in lines
    notes = [line for line in err.splitlines() if "--exclude" in line]
    assert notes == [
        "note: arm a: runs dropped by --exclude: failed 1 · raced 1 · contaminated 0",
        "note: arm b: runs dropped by --exclude: failed 0 · raced 0 · contaminated 1",
    ]


def test_default_drops_nothing(capsys, messy):
    _, _, err = run_cli(capsys, messy, "a", "b")
    assert "--exclude" not in err


def test_an_unreadable_run_is_named_and_the_rest_compared(capsys, tmp_path):
    d = tmp_path / "z"
    write_run(d, "run-a-1.jsonl")
    (d / "run-a-01.jsonl").write_text("{}\n")  # zero-padded: the reference looks for run-a-1
    (d / "run-a-2.jsonl").write_text('{"type":"result","duration_ms":"soon"}\n')
    code, out, err = run_cli(capsys, d, "a")
    assert code == 0
    assert out.split("\n")[3] == row("runs", "2")  # run-a-01 reads run-a-1.jsonl, as the reference
    assert "note: run a-2 left out of arm a:" in err


def test_a_zero_padded_run_without_its_rebuilt_name_is_left_out(capsys, tmp_path):
    d = tmp_path / "pad"
    write_run(d, "run-a-02.jsonl")
    write_run(d, "run-a-3.jsonl")
    code, out, err = run_cli(capsys, d, "a")
    assert code == 0
    assert out.split("\n")[3] == row("runs", "1")
    assert "note: run a-2 left out of arm a: run-a-02.jsonl: the run index is zero-padded" in err


# --- JSON and markdown ---------------------------------------------------------------------------


def test_json_has_the_same_figures_unrounded(capsys):
    code, out, _ = run_cli(capsys, EXPRESS, "new", "baseline", "--json")
    assert code == 0
    doc = json.loads(out)
    new = doc["arms"][0]
    assert new["label"] == "new" and new["runs"] == 3
    assert new["dur"] == {"median": 24.0, "min": 18.0, "max": 35.0, "n": 3}
    assert new["sufficiency"]["counts"]["explore_again"] == 2
    pooled = new["allocation"]["pooled_efficiency_pct"]
    assert f"{pooled:.1f}" == "96.9" and pooled != round(pooled, 1)


def test_markdown_is_transposed_with_the_better_cell_bold(capsys):
    code, out, _ = run_cli(capsys, EXPRESS, "new", "baseline", "--markdown")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "|  | new | baseline |"
    assert "| runs | 3 | 3 |" in lines
    assert "| duration (s) | **24 [18–35]** | 26 [24–30] |" in lines
    assert "| Read | **0** | 1 |" in lines
    assert "| codegraph calls | 2 [1–2] | 2 |" in lines  # no direction, no bold
    assert "| allocation efficiency | **100.0% [92.5%–100.0%]** | 81.9% [81.9%–82.0%] |" in lines
    assert "| explore again | **2 in 5** | 3 in 6 |" in lines
    assert "| moved on / answered | **3 in 5** | 0 in 6 |" in lines


def test_markdown_over_several_directories_has_repo_columns(capsys):
    other = bundled_corpus() / "cg22" / "ab-excalidraw"
    code, out, _ = run_cli(capsys, EXPRESS, "new", "baseline", "--dir", other, "--markdown")
    assert code == 0
    assert out.splitlines()[0] == (
        "|  | express · new | express · baseline | excalidraw · new | excalidraw · baseline |"
    )
    # the better cell is chosen within each repo: excalidraw's arms both read nothing
    assert "| Read | **0** | 1 | 0 | 0 |" in out.splitlines()


# §8.4, transcribed: every line of the table between the title and the fixed text, as
# (label with its leading spaces, or a title / empty line), when no optional row is called for.
SPEC_LINES = [
    ("",),
    ("runs",),
    "",
    "  behavior",
    ("  duration (s)",),
    ("  tool calls",),
    ("  Read",),
    ("  Grep/Glob",),
    ("  Bash",),
    ("  codegraph calls",),
    "",
    "  residual context occupancy (CG-7) — tokens still resident at end of run",
    ("  final context (tok)",),
    ("  codegraph residual (tok)",),
    ("  file-access residual (tok)",),
    ("  → retrieval residual (tok)",),
    ("  → share of final context",),
    "",
    "  explore sufficiency (CG-8) — pooled over every answered explore call",
    ("  answered explore calls",),
    ("  explore again",),
    ("  Read a file we returned",),
    ("  Read a file we did not return",),
    ("  Grep/Glob",),
    ("  moved on / answered",),
    "",
    "  explore allocation efficiency (CG-9) — share of returned bytes the answer cited",
    ("  explore calls with source",),
    ("  pooled efficiency",),
    ("  per-run efficiency",),
    ("  envelope (chars)",),
    "",
    "  contamination — the CLI must never be how codegraph is reached",
    ("  CLI calls that RETURNED output",),
    ("  CLI attempts blocked",),
    "",
]


def test_every_bundled_arm_directory_compares(capsys):
    dirs = sorted(Path(bundled_corpus()).glob("cg*/ab-*"))
    assert len(dirs) == 9
    for d in dirs:
        code, out, _ = run_cli(capsys, d, "new", "baseline")
        assert code == 0 and out.startswith(f"\n====== ARM COMPARISON — {d} ======\n")
        lines = out.split("\n")[2:-1]
        assert lines[len(SPEC_LINES) :] == HOW_TO_READ
        for got, want in zip(lines, SPEC_LINES, strict=False):
            if isinstance(want, str):
                assert got == want
            else:  # a row: the label padded to 36, then two right-aligned 23-wide cells
                assert got.startswith("  " + want[0].ljust(36)) and len(got) == 2 + 36 + 48
        for label in ("new", "baseline"):  # one arm alone: one column
            code, out, _ = run_cli(capsys, d, label)
            assert code == 0 and out.split("\n")[2] == row("", label)
    code, out, _ = run_cli(capsys, bundled_corpus() / "cg8-val", "headless-with")
    assert code == 0 and row("runs", "1") in out.split("\n")


def test_comparison_frame_has_every_row_in_its_section():
    from evalkit.outputs.compare_text import comparison_frame
    from evalkit.tables.compare import compare_arms

    df = comparison_frame(compare_arms(EXPRESS, ["new", "baseline"]))
    assert list(df.columns) == ["section", "row", "new", "baseline"]
    assert len(df) == 24
    for want in published_rows():  # "Grep/Glob" is a row of two sections
        (hit,) = df[(df["row"] == want["row"]) & (df["section"] == want["metric"])].index
        assert list(df.loc[hit, ["new", "baseline"]]) == [want["new"], want["baseline"]]


def test_json_escapes_a_label_that_is_not_utf8(tmp_path, capsys):
    import json

    label = "n\udcff"  # the byte 0xff of a file name, as Python holds it
    write_run(tmp_path, f"run-{label}-1.jsonl")
    write_run(tmp_path, "run-baseline-1.jsonl")
    assert main(["compare", str(tmp_path), label, "baseline", "--json"]) == 0
    out = capsys.readouterr().out
    out.encode("utf-8")  # printable on a strict UTF-8 stdout
    assert "\\udcff" in out  # the escape JSON.stringify writes for a lone surrogate
    assert [a["label"] for a in json.loads(out)["arms"]] == [label, "baseline"]
