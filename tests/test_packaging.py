"""Repository hygiene: environment.yml follows pyproject, README starts with the set-up commands."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_environment_yml_installs_the_package_with_every_extra():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = sorted(project["optional-dependencies"])
    env = (ROOT / "environment.yml").read_text()
    pip_lines = re.findall(r"^\s*-\s*(-e \.\[[^\]]*\])\s*$", env, re.M)
    assert pip_lines, "environment.yml must pip-install this checkout"
    assert sorted(pip_lines[0][len("-e .[") : -1].split(",")) == extras
    py = re.search(r"python>=(\d+\.\d+)", env).group(1)
    assert project["requires-python"] == f">={py}"
    # Dependencies are declared once, in pyproject: none is pinned separately here.
    for dep in project["dependencies"]:
        name = re.match(r"[A-Za-z0-9_.-]+", dep).group(0)
        assert not re.search(rf"^\s*-\s*{name}\b", env, re.M | re.I), f"{name} duplicated"


def test_readme_first_code_block_is_the_two_setup_commands():
    readme = (ROOT / "README.md").read_text()
    first = re.findall(r"```[^\n]*\n(.*?)```", readme, re.S)[0]
    commands = [line.split("#")[0].strip() for line in first.strip().splitlines()]
    assert commands == ['pip install -e ".[dev]" && evalkit sweep', "pytest"]
    ci = (ROOT / ".ci" / "run").read_text()
    assert 'pip install -e ".[dev]" && evalkit sweep' in ci and "\npytest\n" in ci


def test_ruff_is_clean():
    import shutil
    import subprocess
    import sys

    ruff = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    for args in (["check", "evalkit", "tests"], ["format", "--check", "evalkit", "tests"]):
        done = subprocess.run([ruff, *args], cwd=ROOT, capture_output=True, text=True)
        assert done.returncode == 0, done.stdout + done.stderr
