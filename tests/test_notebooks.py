"""Notebook hygiene: saved after a clean run, parameterised, no machine paths in outputs.

nbval (run by the plain `pytest`) re-executes every notebook and compares outputs; these checks
make sure there is something real to compare.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))
MACHINE_PATH = re.compile(r"(/work/|/tmp/|/root/|/home/|/Users/|ipykernel_\d+|[A-Z]:\\\\)")


def code_cells(path):
    return [c for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"]


def test_the_four_notebooks_exist():
    names = [p.name for p in NOTEBOOKS]
    for stem in (
        "01_baseline_sweep",
        "02_arm_table",
        "03_per_pair_tables",
        "04_one_run",
        "05_explore_a_corpus",
    ):
        assert f"{stem}.ipynb" in names


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_saved_after_a_clean_top_to_bottom_run(path):
    counts = [c["execution_count"] for c in code_cells(path)]
    assert all(isinstance(n, int) for n in counts), "every code cell has run"
    assert counts == list(range(1, len(counts) + 1)), "restart and run all before saving"
    assert any(c["outputs"] for c in code_cells(path))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_starts_with_a_parameters_cell(path):
    first = code_cells(path)[0]
    assert "parameters" in first.get("metadata", {}).get("tags", [])


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_no_machine_paths_or_errors_in_outputs(path):
    for cell in code_cells(path):
        for out in cell["outputs"]:
            assert out["output_type"] != "error"
            blob = json.dumps({k: v for k, v in out.items() if k != "data"}) + json.dumps(
                {k: v for k, v in out.get("data", {}).items() if not k.startswith("image/")}
            )
            assert not MACHINE_PATH.search(blob), MACHINE_PATH.search(blob).group(0)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_logic_lives_in_the_package(path):
    # Notebooks call evalkit and explain; they define no functions or classes of their own.
    for cell in code_cells(path):
        assert not re.search(r"^\s*(def|class) ", "".join(cell["source"]), re.M)
