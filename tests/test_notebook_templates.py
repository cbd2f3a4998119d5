"""Notebooks are templates: each runs under papermill on a corpus that is not the bundled one.

The corpus is built here from a few copied sessions of the bundled corpus (two A/B pass/repo
directories and one multi-turn campaign run, under names of our own) plus an interactive Claude
Code project directory with subagents; notebook 03 gets an evidence file built by the paired
helpers, notebook 06 also a harbor run tree built by the harbor helpers. Each notebook must finish, describe *that* corpus (its own lowest session, its own
arms), and print nothing of the published comparison, which belongs to the bundled data only.
"""

from __future__ import annotations

import json
import logging
import re
import shutil
from pathlib import Path

import pytest

from evalkit.paths import bundled_corpus, repo_root
from evalkit.sweep import run_sweep
from tests.harbor_helpers import build_harbor_corpus
from tests.paired_helpers import collected_evidence, write_json
from tests.test_interactive import build_projects

papermill = pytest.importorskip("papermill")  # a dev dependency; skipped only outside one

NOTEBOOKS = sorted((repo_root() / "notebooks").glob("*.ipynb"))
# Notebooks another issue added before adopting the template rules, with the checks each fails.
# Each is a strict xfail, so an entry must go the day its notebook passes the check.
NOT_YET_TEMPLATES: dict[str, tuple[str, set[str]]] = {}


def templates(paths, check: str):
    """`paths` as parameters; a notebook that fails `check` by NOT_YET_TEMPLATES is a strict
    xfail."""
    out = []
    for p in paths:
        reason, fails = NOT_YET_TEMPLATES.get(p.name, ("", set()))
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if check in fails else []
        out.append(pytest.param(p, id=p.name, marks=marks))
    return out


# Words only the published-comparison sections print.
PUBLISHED = re.compile(r"published|reproduced|matches the", re.I)


@pytest.fixture(scope="module")
def own_corpus(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("own")
    root = tmp / "team-logs"
    src = bundled_corpus()
    shutil.copytree(src / "cg22" / "ab-express", root / "sprint-7" / "ab-express")
    shutil.copytree(src / "cg15" / "ab-client-go", root / "sprint-7" / "ab-client-go")
    shutil.copytree(src / "ab-readme" / "gin" / "run2", root / "campaign" / "gin" / "run2")
    _, _, log_dir = build_projects(tmp / "claude")
    # A project log directory as Claude Code names it: the escaped path of the project.
    shutil.copytree(log_dir, root / "claude-projects" / "-home-me-src-proj")
    return root


@pytest.fixture(scope="module")
def own_evidence(tmp_path_factory) -> Path:
    return write_json(
        tmp_path_factory.mktemp("ev") / "direct-vs-host.json", collected_evidence("direct_vs_host")
    )


def texts(nb: dict) -> list[str]:
    """Every text a run of the notebook printed or displayed (images left out)."""
    out = []
    for cell in nb["cells"]:
        for o in cell.get("outputs", []):
            out.append("".join(o.get("text", "")))
            for kind, value in o.get("data", {}).items():
                if not kind.startswith("image/"):
                    out.append("".join(value) if isinstance(value, list) else str(value))
    return out


def run_template(
    path: Path, tmp_path: Path, monkeypatch, caplog, env=None, **parameters
) -> list[str]:
    monkeypatch.setenv("PYTHONPATH", str(repo_root()))  # the kernel imports this checkout
    monkeypatch.setenv("EVALKIT_FIGURES", str(tmp_path / "figures"))
    monkeypatch.delenv("EVALKIT_CORPUS", raising=False)
    monkeypatch.delenv("EVALKIT_HARBOR_CORPUS", raising=False)
    monkeypatch.delenv("EVALKIT_EVIDENCE", raising=False)
    for name, value in (env or {}).items():
        monkeypatch.setenv(name, value)
    out = tmp_path / path.name
    with caplog.at_level(logging.WARNING):
        papermill.execute_notebook(
            str(path),
            str(out),
            parameters=parameters,
            kernel_name="python3",
            progress_bar=False,
            cwd=str(path.parent),
        )
    warnings = [r.getMessage() for r in caplog.records if r.name.startswith("papermill")]
    assert not warnings, warnings  # parameter cells parse; no unknown parameter
    return texts(json.loads(out.read_text(encoding="utf-8")))


def test_every_notebook_has_a_template_run():
    covered = {"01", "02", "03", "04", "05", "06", "07", "08"}
    assert {p.name[:2] for p in NOTEBOOKS} >= covered


@pytest.mark.parametrize("path", templates(NOTEBOOKS, "parameters"))
def test_parameters_are_listed_with_their_defaults(path):
    params = {name: p["default"] for name, p in papermill.inspect_notebook(str(path)).items()}
    first = json.loads(path.read_text())["cells"]
    source = next(c for c in first if c["cell_type"] == "code")["source"]
    assigned = [re.match(r"\w+", line).group(0) for line in "".join(source).splitlines()]
    assert assigned and list(params) == assigned
    assert all(value == "None" for value in params.values())  # every default defers to the env


@pytest.mark.parametrize(
    "path", templates((p for p in NOTEBOOKS if p.name[:2] != "03"), "own corpus")
)
def test_runs_on_a_corpus_of_ones_own(path, own_corpus, tmp_path, monkeypatch, caplog):
    printed = run_template(path, tmp_path, monkeypatch, caplog, corpus=str(own_corpus))
    blob = "\n".join(printed)
    assert not PUBLISHED.search(blob), PUBLISHED.search(blob).group(0)
    assert "synthetic" not in blob.lower()
    sweep = run_sweep(own_corpus, cache=False)
    lowest = sweep.tail(1)[0].log
    if path.name.startswith(("01", "04", "05")):
        assert lowest in blob  # the lowest session is this corpus's, computed
    if path.name.startswith(("01", "02")):
        assert "corpus: team-logs" in blob
    if path.name.startswith("04"):
        assert f"session: {lowest} (1 segment); interactive" in blob
        assert "SUBAGENT tools (2 subagent transcripts)" in blob
    if path.name.startswith("06"):  # no harbor trial: the A/B layouts, arms but no outcomes
        assert "corpus: team-logs; layout: the A/B layouts; tool profile: codegraph" in blob
        # a-old.jsonl is a project log by its content, whatever its name: not a trial run.
        assert "runs read: 14 of 16; arms: baseline, headless-with, headless-without, new" in blob
        assert "no outcome table: no run of baseline or headless-with names a task" in blob
    if path.name.startswith("08"):  # the A/B layouts: each pass/repo directory is a task
        assert "corpus: team-logs; layout: the A/B layouts; tool profile: codegraph" in blob
        assert "sprint-7/ab-express" in blob or "sprint-7/express" in blob
    if path.name.startswith("07"):  # its own first arm directory, the one beside it, its campaign
        assert "arm directory: sprint-7/ab-client-go; labels compared: new baseline" in blob
        assert (
            "| client-go · new | client-go · baseline | express · new | express · baseline |"
            in blob
        )
        assert "campaign root: campaign; repos: gin" in blob
        assert "\ngin         1/1 " in blob


def test_notebook_04_opens_the_session_it_is_given(own_corpus, tmp_path, monkeypatch, caplog):
    # The default (the lowest session) is interactive here; a named multi-turn run opens too.
    path = repo_root() / "notebooks" / "04_one_run.ipynb"
    log = "campaign/gin/run2/run-headless-with.jsonl"
    printed = "\n".join(
        run_template(path, tmp_path, monkeypatch, caplog, corpus=str(own_corpus), session=log)
    )
    assert f"session: {log} (3 segments); headless" in printed
    assert "Residual context occupancy" in printed


def test_the_lowest_session_of_that_corpus_is_interactive(own_corpus):
    # So the default run of notebook 04 above opened an interactive session with subagents.
    lowest = run_sweep(own_corpus, cache=False).tail(1)[0]
    assert lowest.layout == "interactive"


def test_notebook_03_reviews_an_evidence_file_of_ones_own(
    own_evidence, tmp_path, monkeypatch, caplog
):
    path = repo_root() / "notebooks" / "03_per_pair_tables.ipynb"
    printed = "\n".join(
        run_template(path, tmp_path, monkeypatch, caplog, evidence=str(own_evidence))
    )
    assert not PUBLISHED.search(printed), PUBLISHED.search(printed).group(0)
    assert "experiment: direct_vs_host   basis: collected" in printed
    assert "verdict: pass" in printed
    assert "no Host cells" in printed


@pytest.fixture(scope="module")
def interactive_only(tmp_path_factory) -> Path:
    """A corpus that is nothing but a Claude Code projects directory: no arms, no passes."""
    tmp = tmp_path_factory.mktemp("interactive")
    _, _, log_dir = build_projects(tmp / "claude")
    root = tmp / "projects"
    shutil.copytree(log_dir, root / "-home-me-src-proj")
    return root


@pytest.mark.parametrize(
    "path", templates((p for p in NOTEBOOKS if p.name[:2] != "03"), "interactive")
)
def test_runs_on_interactive_logs_alone(path, interactive_only, tmp_path, monkeypatch, caplog):
    printed = "\n".join(
        run_template(path, tmp_path, monkeypatch, caplog, corpus=str(interactive_only))
    )
    assert not PUBLISHED.search(printed)
    if path.name.startswith("02"):
        assert "no arm comparison" in printed
    if path.name.startswith("06"):
        assert "arms: none" in printed and "no outcome table: it needs two arms" in printed
    if path.name.startswith("08"):
        assert "arms: none" in printed and "no comparison: it needs two arms" in printed
    if path.name.startswith("07"):
        assert "no arm comparison: this corpus has no directory of arm runs" in printed
        assert "no campaign: this corpus has no campaign root" in printed


@pytest.fixture(scope="module")
def own_trials(tmp_path_factory) -> tuple[Path, Path]:
    """A harbor run tree of one's own (two arms, four tasks, two trials each) and its CSV."""
    tmp = tmp_path_factory.mktemp("trials")
    root = tmp / "mcp-bench"
    return root, build_harbor_corpus(root)


def test_notebook_06_reads_a_trial_tree_of_ones_own(own_trials, tmp_path, monkeypatch, caplog):
    root, csv = own_trials
    path = repo_root() / "notebooks" / "06_outcomes_and_cost.ipynb"
    printed = "\n".join(
        run_template(
            path, tmp_path, monkeypatch, caplog, corpus=str(root), profile="sourcegraph",
            outcomes=str(csv),
        )
    )  # fmt: skip
    assert not PUBLISHED.search(printed)
    assert "synthetic" not in printed.lower()
    assert (
        "corpus: mcp-bench; layout: harbor run tree; tool profile: sourcegraph (preset); "
        "runs read: 16 of 16; arms: baseline, mcp"
    ) in printed
    # t1 0.5 -> 1.0 helps, t2 1.0 -> 0.5 hurts, t3 0 -> 0 tie, t4 0.5 -> 1.0 (from the CSV) helps
    assert "mcp helps on 2 of 4 tasks, hurts on 1, ties on 1; 0 incomplete" in printed
    assert re.search(r"t4\s+0\.5000\s+2\s+1\.0000\s+2\s+0\.5000\s+helps", printed)


def test_notebook_06_takes_the_arms_to_pair(own_trials, tmp_path, monkeypatch, caplog):
    root, _ = own_trials
    path = repo_root() / "notebooks" / "06_outcomes_and_cost.ipynb"
    printed = "\n".join(
        run_template(path, tmp_path, monkeypatch, caplog, corpus=str(root), arms="mcp,baseline")
    )
    # no profile asked for: chosen from the tools the runs call (issue 23), sourcegraph's here
    assert "tool profile: sourcegraph (preset)" in printed
    assert "baseline against mcp:" in printed
    assert "1 incomplete" in printed  # t4's mcp trials have no reward without the CSV


def test_notebook_08_prints_the_apis_numbers(own_trials, tmp_path, monkeypatch, caplog):
    from evalkit.outputs.stats_text import render_stats_text
    from evalkit.tables.ab_stats import compare_arms, trial_runs

    root, csv = own_trials
    path = repo_root() / "notebooks" / "08_is_it_real.ipynb"
    printed = run_template(
        path, tmp_path, monkeypatch, caplog, corpus=str(root), profile="sourcegraph",
        outcomes=str(csv), margin="passed=0.25", seed=11,
    )  # fmt: skip
    runs = trial_runs(root, layout="harbor", profile="sourcegraph", outcomes=csv, cache=False)
    api = compare_arms(runs, "baseline", "mcp", margins={"passed": 0.25}, seed=11)
    assert render_stats_text(runs, api) in printed  # the report cell, character for character
    blob = "\n".join(printed)
    assert "synthetic" not in blob.lower()
    assert "equivalence: not shown equivalent within ±0.250" in blob
    assert "seed 11" in blob


def test_notebook_08_on_the_bundled_corpus_and_the_synthetic_tree(tmp_path, monkeypatch, caplog):
    # The default corpus (the synthetic harbor tree, written by the same generator and seed) and
    # the bundled corpus (each pass/repo directory a task): the report is the API's, exactly.
    from evalkit.outputs.stats_text import render_stats_text
    from evalkit.synthetic.harbor import generate_harbor_corpus
    from evalkit.tables.ab_stats import compare_arms, trial_runs

    path = repo_root() / "notebooks" / "08_is_it_real.ipynb"
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    printed = run_template(path, tmp_path / "a", monkeypatch, caplog)
    tree = tmp_path / "synthetic-harbor"
    generate_harbor_corpus(tree)
    runs = trial_runs(tree, layout="harbor", profile="sourcegraph", cache=False)
    assert render_stats_text(runs, compare_arms(runs, runs.baseline, runs.candidate)) in printed
    printed = run_template(
        path, tmp_path / "b", monkeypatch, caplog, corpus=str(bundled_corpus()),
        arms="baseline,new", cluster="repo",
    )  # fmt: skip
    runs = trial_runs(bundled_corpus(), arms=("baseline", "new"), cache=False)
    api = compare_arms(runs, "baseline", "new", cluster="repo")
    assert render_stats_text(runs, api) in printed


def test_notebook_07_compares_what_it_is_given(own_corpus, interactive_only, tmp_path,
                                               monkeypatch, caplog):  # fmt: skip
    # Any arm directory, labels and campaign root, none of them inside the corpus read.
    path = repo_root() / "notebooks" / "07_arm_comparison_and_campaign.ipynb"
    arm_dir = own_corpus / "sprint-7" / "ab-express"
    printed = "\n".join(
        run_template(
            path, tmp_path, monkeypatch, caplog, corpus=str(interactive_only),
            arm_dir=str(arm_dir), labels="baseline,new", campaign_root=str(own_corpus / "campaign"),
        )
    )  # fmt: skip
    assert not PUBLISHED.search(printed)
    assert "arm directory: ab-express; labels compared: baseline new" in printed
    assert "| express · baseline | express · new | client-go · baseline |" in printed
    assert "campaign root: campaign; repos: gin" in printed


# Names only the bundled data has: its top-level folders, the runs and files its published
# figures single out, and the cases of its evidence file.
BUNDLED_NAMES = re.compile(
    r"cg8-val|cg1[0-9]|cg2[0-9]|ab-readme|ab-express|run-baseline-\d|lib/express\.js|canvasNonce"
    r"|readonly_review|guarded_multi_file_edit|long_validation_handoff|excalidraw|client-go"
)
SECTION = "Only for the bundled"


@pytest.mark.parametrize("path", templates(NOTEBOOKS, "names"))
def test_bundled_names_appear_only_in_the_published_section(path):
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    starts = [i for i, c in enumerate(cells) if SECTION in "".join(c["source"])]
    assert len(starts) <= 1, "one published-comparison section at most"
    before = cells[: starts[0]] if starts else cells
    for i, cell in enumerate(before):
        source = "".join(cell["source"])
        hit = BUNDLED_NAMES.search(source)
        assert not hit, f"cell {i}: {hit.group(0)}"
    if starts:  # the section is the last one: no other top-level heading follows it
        after = [
            "".join(c["source"]) for c in cells[starts[0] + 1 :] if c["cell_type"] == "markdown"
        ]
        assert not any(re.search(r"^## ", t, re.M) for t in after)
        # It says what it does on any other corpus.
        assert re.search(r"prints? nothing", "".join(cells[starts[0]]["source"]))


def test_notebook_03_reviews_evidence_without_pairs(tmp_path, monkeypatch, caplog):
    # tool_selection evidence has repetitions, not pairs: the notebook says so and goes on.
    evidence = write_json(tmp_path / "selection.json", collected_evidence("tool_selection"))
    path = repo_root() / "notebooks" / "03_per_pair_tables.ipynb"
    printed = "\n".join(run_template(path, tmp_path, monkeypatch, caplog, evidence=str(evidence)))
    assert not PUBLISHED.search(printed)
    assert "experiment: tool_selection   basis: collected" in printed
    assert "task: none (this evidence has no pairs)" in printed and "no Host cells" in printed


def test_the_corpus_can_come_from_the_environment(own_corpus, tmp_path, monkeypatch, caplog):
    path = repo_root() / "notebooks" / "01_baseline_sweep.ipynb"
    env = {"EVALKIT_CORPUS": str(own_corpus)}
    printed = "\n".join(run_template(path, tmp_path, monkeypatch, caplog, env=env))
    assert "corpus: team-logs" in printed
    assert not PUBLISHED.search(printed)
