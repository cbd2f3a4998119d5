"""Notebooks on any corpus (issue 23, Build 8): every corpus notebook runs under papermill on a
harbor tree with Codex and ATIF trials and on a Claude Code + Codex + Inspect pattern-layout
tree, with the matching `layout` / `profile` / `outcomes` / `arms` parameters; nothing leaks
to stderr (no warning in a cell); notebook 04 opens Codex, Inspect and ATIF sessions.

The trees come from `tests.agent_trees`. Slow: a dozen notebook runs.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from evalkit.paths import repo_root
from tests.agent_trees import ATIF_AGENT, MIXED_LAYOUT, build_harbor_agents, build_mixed_pattern

papermill = pytest.importorskip("papermill")
pytest.importorskip("inspect_ai")

pytestmark = pytest.mark.slow

NOTEBOOKS = {p.name[:2]: p for p in sorted((repo_root() / "notebooks").glob("*.ipynb"))}
CORPUS_NOTEBOOKS = ("01", "02", "04", "05", "06", "07")
# The parameters each notebook takes beside `corpus` (03 reads an evidence file, not a corpus).
TAKES = {
    "01": {"layout", "profile", "outcomes"},
    "02": {"layout", "profile", "outcomes", "arms"},
    "04": {"layout", "profile", "outcomes", "session"},
    "05": {"layout", "profile", "outcomes"},
    "06": {"layout", "profile", "outcomes", "arms", "prices"},
    "07": {"layout", "profile", "outcomes", "arm_dir", "labels", "campaign_root"},
}


@pytest.fixture(scope="module")
def trees(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("trees")
    harbor = tmp / "harbor-runs"
    harbor.mkdir()
    build_harbor_agents(harbor)
    mixed = tmp / "mixed-runs"
    mixed.mkdir()
    csv = build_mixed_pattern(mixed)
    return {
        "harbor": (harbor, {"layout": "harbor", "profile": "sourcegraph"}),
        "mixed": (mixed, {"layout": MIXED_LAYOUT, "outcomes": str(csv)}),
    }


def run(code: str, tmp_path: Path, monkeypatch, caplog, **parameters) -> list[dict]:
    """Run notebook `code` with `parameters`; its cells' outputs, stderr refused."""
    monkeypatch.setenv("PYTHONPATH", str(repo_root()))
    monkeypatch.setenv("EVALKIT_FIGURES", str(tmp_path / "figures"))
    for name in ("EVALKIT_CORPUS", "EVALKIT_HARBOR_CORPUS", "EVALKIT_EVIDENCE"):
        monkeypatch.delenv(name, raising=False)
    path = NOTEBOOKS[code]
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
    assert not warnings, warnings  # every parameter given is one the notebook takes
    outputs = [o for c in json.loads(out.read_text())["cells"] for o in c.get("outputs", [])]
    leaked = ["".join(o["text"]) for o in outputs if o.get("name") == "stderr"]
    assert not leaked, leaked
    return outputs


def text(outputs: list[dict]) -> str:
    parts = []
    for o in outputs:
        parts.append("".join(o.get("text", "")))
        parts += ["".join(v) for k, v in o.get("data", {}).items() if not k.startswith("image/")]
    return "\n".join(parts)


def test_every_corpus_notebook_takes_the_corpus_parameters():
    for code in CORPUS_NOTEBOOKS:
        params = set(papermill.inspect_notebook(str(NOTEBOOKS[code])))
        assert params == TAKES[code] | {"corpus"}, code


@pytest.mark.parametrize("tree", ["harbor", "mixed"])
@pytest.mark.parametrize("code", CORPUS_NOTEBOOKS)
def test_every_notebook_runs_on_the_tree(code, tree, trees, tmp_path, monkeypatch, caplog):
    root, params = trees[tree]
    given = {k: v for k, v in params.items() if k in TAKES[code]}
    blob = text(run(code, tmp_path, monkeypatch, caplog, corpus=str(root), **given))
    assert "Empty DataFrame" not in blob  # an empty table says why instead
    if code == "05":
        n = 20 if tree == "harbor" else 6
        assert f"{n} sessions (" in blob
    if code == "06":
        arms = "baseline, codex, mcp, openhands" if tree == "harbor" else "claude, codex, inspect"
        assert f"arms: {arms}" in blob


@pytest.mark.parametrize(
    ("tree", "session", "line"),
    [
        ("harbor", "suite/codex/t1/t1_1/agent/codex.txt", "(codex, codex-exec); headless"),
        (
            "harbor",
            f"suite/{ATIF_AGENT}/t1/t1_1/agent/trajectory.json",
            f"({ATIF_AGENT}, atif); headless",
        ),
        ("mixed", "inspect/t2/1/log.eval#t2:1", "(inspect, inspect); headless"),
        (
            "mixed",
            "codex/t1/1/rollout-2030-01-01T10-00-00-x.jsonl",
            "(codex, codex-rollout); headless",
        ),
    ],
)
def test_notebook_04_shows_another_agents_session(
    tree, session, line, trees, tmp_path, monkeypatch, caplog
):
    root, params = trees[tree]
    blob = text(
        run("04", tmp_path, monkeypatch, caplog, corpus=str(root), session=session, **params)
    )
    assert f"session: {session} {line}" in blob
    assert "Claude Code metrics" in blob  # why the explore tables are not there, in one line
    assert "  call " in blob or "call thread" in blob  # the session's tool calls are shown
