"""`evalkit campaign`: the tables of parse-bench-readme.mjs (spec §7.3, §8.5).

Expected lines follow the spec's templates, with figures worked out from fixtures built by
tests/arm_helpers.py and, for the bundled campaign, from the published sufficiency and
allocation table (§12.4), which the synthetic campaign reproduces.
"""

from __future__ import annotations

import json

import pytest

from evalkit.cli import main
from evalkit.outputs.campaign_text import fmt_time, fmt_tok
from evalkit.paths import bundled_corpus
from evalkit.tables.campaign import avg, save
from tests.arm_helpers import campaign_run

ROOT = bundled_corpus() / "ab-readme"


def run_cli(capsys, *argv):
    code = main(["campaign", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


def lj(s, w):
    return s.ljust(w)


# --- the reference's number formats (§8.5) ----------------------------------------------------


@pytest.mark.parametrize(
    "s, text", [(119.6, "1m 60s"), (59.4, "59s"), (60, "1m 0s"), (326.5, "5m 27s"), (0, "0s")]
)
def test_fmt_time(s, text):
    assert fmt_time(s) == text


@pytest.mark.parametrize(
    "t, text",
    [(1_900_000, "1.9M"), (999_499, "999k"), (999_500, "1000k"), (1_000_000, "1.0M"), (0, "0k")],
)
def test_fmt_tok(t, text):
    assert fmt_tok(t) == text


def test_save_and_avg():
    assert save(150, 100) == -50  # the with-arm is larger: negative
    assert save(25, 100) == 75
    assert save(5, 0) == 0
    assert avg([]) == 0 and avg([-276, -71, -71, -45, -27, -79, -7]) == -82


# --- the bundled campaign -----------------------------------------------------------------------

# §12.4 sufficiency and allocation, as published (calls, again, read-ret, read-miss, grep,
# moved on, alloc eff, envelope).
PUBLISHED_T3 = [
    ("vscode", "26", "21 81%", "0 0%", "1 4%", "1 4%", "3 12%", "63.2%", "442k"),
    ("excalidraw", "18", "14 78%", "0 0%", "0 0%", "0 0%", "4 22%", "94.7%", "338k"),
    ("django", "11", "6 55%", "1 9%", "0 0%", "0 0%", "4 36%", "96.2%", "186k"),
    ("tokio", "16", "12 75%", "0 0%", "0 0%", "1 6%", "3 19%", "92.9%", "343k"),
    ("okhttp", "8", "4 50%", "0 0%", "0 0%", "0 0%", "4 50%", "97.9%", "151k"),
    ("gin", "8", "4 50%", "0 0%", "0 0%", "0 0%", "4 50%", "99.0%", "116k"),
    ("alamofire", "23", "19 83%", "1 4%", "0 0%", "0 0%", "3 13%", "89.0%", "306k"),
]


@pytest.fixture(scope="module")
def bundled():
    import contextlib
    import io

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        assert main(["campaign", str(ROOT)]) == 0
    return out.getvalue(), err.getvalue()


@pytest.mark.parametrize("want", PUBLISHED_T3, ids=lambda r: r[0])
def test_bundled_sufficiency_and_allocation_rows(bundled, want):
    repo, calls, *cells, eff, env = want
    line = (
        lj(repo, 11)
        + " "
        + lj(calls, 7)
        + " "
        + "".join(lj(c, 9) for c in cells[:4])
        + lj(cells[4], 13)
        + lj(eff, 12)
        + env
    )
    assert line in bundled[0].splitlines()


def test_bundled_pooled_lines(bundled):
    lines = bundled[0].splitlines()
    assert (
        "POOLED (110 answered explore calls): explore again 80 (73%) · Read a file we returned "
        "2 (2%) · Read a file we did not return 1 (1%) · Grep/Glob 2 (2%) · moved on / answered "
        "25 (23%)"
    ) in lines
    assert "POOLED allocation efficiency: 86.7% over 110 calls / 1.9M chars" in lines


def test_bundled_layout(bundled):
    out, err = bundled
    lines = out.split("\n")
    assert lines[0] == (
        "repo        n(w/wo)  time WITH→WITHOUT      tools W→WO   tokens W→WO (saved)     "
        "cost W→WO (saved)"
    )
    assert [line[:11].strip() for line in lines[1:8]] == [
        "vscode",
        "excalidraw",
        "django",
        "tokio",
        "okhttp",
        "gin",
        "alamofire",
    ]
    assert lines[8] == "" and lines[9].startswith("AVERAGE saved:  cost ")
    assert lines[10:17] == [
        "",
        "",
        "RESIDUAL CONTEXT OCCUPANCY — retrieval tokens still in the window at end of run",
        "(WITH = codegraph responses · WITHOUT = Read + Grep/Glob + Bash responses)",
        "multi-turn sessions",
        "",
        "repo        turns   final ctx W→WO        residual W→WO         % of ctx W→WO     "
        "% of window W→WO",
    ]
    assert "CAVEAT" not in out  # the campaign is multi-turn
    # excalidraw/run5's third turn failed: dropped, so excalidraw has 4 with-arm runs
    assert lines[2].startswith("excalidraw  4/4      ")
    assert "note: excalidraw/run5 headless-with dropped: its result is not success" in err
    assert "synthetic" in err and "synthetic" not in out
    assert out.endswith('Definitions: README.md, "What the words mean"; evalkit columns\n')


def test_bundled_vscode_run_listing_shows_the_with_arm_reads(bundled):
    # §12.4: vscode run4 of the with-arm still used Read (rd5 bs7)
    (line,) = [x for x in bundled[0].splitlines() if x.startswith("  vscode      W: ")]
    assert " cg5 rd5 bs7 " in line


# --- selection (§7.3) and the optional lines ----------------------------------------------------


@pytest.fixture
def tree(tmp_path):
    root = tmp_path / "ab-readme"
    # django: complete; one with-run raced, one without-run contaminated
    campaign_run(root, "django", "run1", "with", dur_ms=100_000, explores=2)
    campaign_run(root, "django", "run2", "with", dur_ms=140_000, explores=1, raced=True)
    campaign_run(
        root,
        "django",
        "run1",
        "without",
        dur_ms=200_000,
        explores=0,
        reads=3,
        answer="see lib/a.js",
    )
    campaign_run(
        root,
        "django",
        "run2",
        "without",
        dur_ms=300_000,
        explores=0,
        reads=1,
        cli="returned",
        answer="see lib/a.js",
    )
    # gin: with-arm only (incomplete); okhttp: without-arm only (no with-arm runs)
    campaign_run(root, "gin", "run1", "with", dur_ms=50_000)
    campaign_run(root, "okhttp", "run1", "without", explores=0, greps=2, answer="x")
    # a directory that is not one of the seven
    campaign_run(root, "kubernetes", "run1", "with")
    return root


def test_selection_and_optional_lines(capsys, tree):
    code, out, err = run_cli(capsys, tree)
    assert code == 0
    lines = out.split("\n")
    django = next(x for x in lines if x.startswith("django "))
    assert django.startswith("django      1/1      1m 40s→3m 20s         ")
    assert django.endswith("  [1 raced run excluded]")
    assert "gin         (incomplete: w=1 wo=0)" in lines
    assert "okhttp      (incomplete: w=0 wo=1)" in lines
    assert "vscode      (incomplete: w=0 wo=0)" in lines
    assert "gin         (incomplete)" in lines
    assert "okhttp      (no with-arm runs)" in lines
    assert "vscode      (no with-arm runs)" in lines
    assert err.splitlines()[:2] == [
        "[excluded] django/run2 without-arm got codegraph CLI output 1x",
        "[excluded] 1 contaminated without-arm run(s); CG_INCLUDE_CONTAMINATED=1 keeps them",
    ]
    assert "note: kubernetes/ is not in the repo list, not read (add it with --repos)" in err
    # single-turn sessions: the occupancy table says so and the caveat ends the section
    assert "SINGLE-TURN sessions — see the caveat below" in lines
    i = lines.index("per run (retrieval residual · tool mix — cg=explore rd=Read gr=Grep bs=Bash):")
    runs = [x for x in lines[i + 1 :] if x.startswith("  ") and " W: " in x]
    assert [x.split()[0] for x in runs] == ["django", "okhttp", "gin"]
    caveat = lines.index(next(x for x in lines if x.startswith("CAVEAT: ")))
    assert lines[caveat - 1] == "" and caveat > i


def test_include_switches_keep_the_runs(capsys, tree):
    code, out, err = run_cli(capsys, tree, "--include-raced", "--include-contaminated")
    assert code == 0
    django = next(x for x in out.splitlines() if x.startswith("django "))
    assert django.startswith("django      2/2      2m 0s→4m 10s         ")
    assert "raced" not in django
    assert "[excluded]" not in err


def test_include_switches_from_the_reference_environment(capsys, tree, monkeypatch):
    monkeypatch.setenv("CG_INCLUDE_CONTAMINATED", "1")
    code, out, err = run_cli(capsys, tree)
    assert "[excluded]" not in err
    assert next(x for x in out.splitlines() if x.startswith("django ")).startswith(
        "django      1/2 "
    )


def test_repos_overrides_the_list(capsys, tree):
    code, out, err = run_cli(capsys, tree, "--repos", "gin,django")
    lines = out.split("\n")
    assert [x.split()[0] for x in lines[1:3]] == ["gin", "django"]
    assert "note: okhttp/ is not in the repo list" in err


def test_multi_turn_occupancy_and_fixed_overhead(capsys, tmp_path):
    root = tmp_path / "c"
    campaign_run(root, "gin", "run1", "with", turns=3, ctx=2000)
    campaign_run(root, "gin", "run1", "without", turns=3, ctx=1500, explores=0, reads=2, answer="x")
    code, out, _ = run_cli(capsys, root, "--repos", "gin")
    lines = out.split("\n")
    assert "multi-turn sessions" in lines and "CAVEAT" not in out
    # first request: ctx + 100 in both arms' builders → 2100 vs 1600
    assert "FIXED overhead: codegraph's tool schema + MCP instructions cost +500 tok" in lines
    # turns: 2 requests per with-segment, 3 per without-segment; final ctx 2,200 and 1,800
    assert "gin         6/9     " + "2k→2k".ljust(21) in "\n".join(lines)


def test_missing_root_is_exit_2(capsys, tmp_path):
    code, out, err = run_cli(capsys, tmp_path / "nope")
    assert code == 2 and out == "" and "no such directory" in err


def test_a_root_without_campaign_runs_says_so(capsys, tmp_path, tree):
    (tmp_path / "logs" / "ab-x").mkdir(parents=True)
    code, out, err = run_cli(capsys, tmp_path / "logs")
    assert code == 0 and "(incomplete: w=0 wo=0)" in out
    assert f"note: no campaign run of the listed repos under {tmp_path / 'logs'} (a run is " in err
    assert "every table is empty" in err
    code, out, err = run_cli(capsys, tree, "--repos", "gin")  # a run was found: no note
    assert "no campaign run" not in err
    code, out, err = run_cli(capsys, tree, "--repos", "vscode")
    assert "no campaign run of the listed repos" in err


def test_json_of_the_bundled_campaign_names_no_machine_path(capsys):
    code, out, _ = run_cli(capsys, "--json")
    assert code == 0 and json.loads(out)["root"] == "data/corpus/ab-readme"


def test_json(capsys, tree):
    code, out, _ = run_cli(capsys, tree, "--json")
    assert code == 0
    doc = json.loads(out)
    django = next(r for r in doc["repos"] if r["repo"] == "django")
    assert django["with"]["n"] == 1 and django["raced_excluded"] == 1
    assert django["with"]["time"] == 100.0 and django["without"]["time"] == 200.0
    assert doc["excluded"]["contaminated"] == [{"repo": "django", "run": "run2", "cli_outputs": 1}]


def test_markdown(capsys, tree):
    code, out, _ = run_cli(capsys, tree, "--markdown")
    head = out.splitlines()[0]
    assert head == (
        "|  | django · headless-with | django · headless-without | okhttp · headless-without "
        "| gin · headless-with |"
    )


def test_a_higher_residual_is_explained_and_a_lower_one_is_not(capsys, bundled, tmp_path):
    from evalkit.outputs.campaign_text import HIGHER_EXPLANATION

    lines = bundled[0].split("\n")
    (i,) = [k for k, x in enumerate(lines) if x.startswith("AVERAGE: retrieval residual ")]
    assert " HIGHER with codegraph  ·  share-of-context " in lines[i]
    assert lines[i + 1 : i + 5] == list(HIGHER_EXPLANATION)
    assert lines[i + 5].startswith(
        "FIXED overhead: codegraph's tool schema + MCP instructions cost +"
    )
    # a with-arm that leaves less behind: "lower", no explanation
    root = tmp_path / "low"
    campaign_run(root, "gin", "run1", "with", explores=1)
    campaign_run(root, "gin", "run1", "without", explores=0, reads=6, answer="x")
    _, out, _ = run_cli(capsys, root, "--repos", "gin")
    lines = out.split("\n")
    (i,) = [k for k, x in enumerate(lines) if x.startswith("AVERAGE: retrieval residual ")]
    assert " lower with codegraph" in lines[i]
    assert lines[i + 1].startswith("FIXED overhead: ")


def test_the_later_tokens_definition_is_an_option_and_says_so(capsys, tree):
    _, ref, _ = run_cli(capsys, tree)
    _, later, err = run_cli(capsys, tree, "--processed", "message-usage")
    assert "not the reference's" in err
    row = lambda text: next(x for x in text.splitlines() if x.startswith("django "))  # noqa: E731
    # the builders' result events carry an empty usage: the reference's tokens are 0
    assert "0k→0k" in row(ref) and "0k→0k" not in row(later)


def test_json_writes_a_non_finite_figure_as_null(capsys, tmp_path):
    # A duration of 10**400 ms reads as Infinity, as JSON.parse reads it; the times saved become
    # Infinity - Infinity = NaN. Neither may reach the JSON (JSON.stringify writes null).
    for arm in ("with", "without"):
        campaign_run(tmp_path / "c", "gin", "run1", arm, dur_ms=10**400)
    code, out, _ = run_cli(capsys, tmp_path / "c", "--repos", "gin", "--json")

    def refuse(name):
        raise AssertionError(f"{name} in the JSON")

    assert code == 0 and json.loads(out, parse_constant=refuse)["repos"][0]["complete"]
    assert "null" in out
