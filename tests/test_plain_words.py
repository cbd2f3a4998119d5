"""Plain words for users: nothing evalkit prints, shows in a notebook or says in an error cites the
specification — no `§`, no `Decision N`, no `quirk N`, no spec-only labels such as `CG-4`.

Docstrings and comments may cite the spec (they are for developers); everything else is checked
three ways: every string literal of the package that is not a docstring, every command's --help
and a representative output of each command over the bundled corpus (errors included), and
every notebook's markdown and saved outputs.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
from pathlib import Path

import pytest

from evalkit.cli import build_parser, main
from evalkit.paths import bundled_corpus, bundled_evidence, repo_root

SPEC_WORDS = re.compile(
    r"§|\bDecisions? \d+|\b[Qq]uirks?\b|\bCG-\d+\b|\bspec\b|\bspecification\b|\bseed's\b"
    r"|\bthe design's\b|\befficiency-evidence design\b"
)
PACKAGE = repo_root() / "evalkit"
CORPUS = bundled_corpus()
INTERACTIVE = next((CORPUS / "interactive").iterdir())


def spec_words(text: str) -> list[str]:
    return [m.group(0) for m in SPEC_WORDS.finditer(text)]


def test_the_pattern_catches_what_it_is_for():
    caught = (
        "see §7.1, Decision 4, quirk 18, Quirks, the CG-4 sidecar, the spec, the seed's table, "
        "the design's layout"
    )
    assert spec_words(caught) == [
        "§",
        "Decision 4",
        "quirk",
        "Quirks",
        "CG-4",
        "spec",
        "seed's",
        "the design's",
    ]
    assert not spec_words("a seed of 0, special cases, the reference harness, explore calls")


# --- every string literal that is not a docstring ---------------------------------------------


def non_docstring_strings(source: str) -> list[tuple[int, str]]:
    tree = ast.parse(source)
    docs = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list):
            # Docstrings, and bare string statements documenting the attribute above them.
            docs |= {
                id(s.value)
                for s in body
                if isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant)
            }
    return [
        (n.lineno, n.value)
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs
    ]


MODULES = sorted(PACKAGE.rglob("*.py"))
# Text reproduced character for character from the reference harness's own output, where
# parity wins: compare-arms.mjs titles its sections with the project's metric labels (the
# plain-words frame of the same block names them in words).
REFERENCE_VERBATIM = {"outputs/compare_text.py": {"CG-7", "CG-8", "CG-9"}}


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.relative_to(PACKAGE).as_posix())
def test_no_spec_words_in_what_the_code_can_print(path):
    allowed = REFERENCE_VERBATIM.get(path.relative_to(PACKAGE).as_posix(), set())
    found = [
        f"{path.relative_to(repo_root())}:{line}: {words}"
        for line, text in non_docstring_strings(path.read_text(encoding="utf-8"))
        if (words := [w for w in spec_words(text) if w not in allowed])
    ]
    assert not found, found


# --- what the commands print --------------------------------------------------------------------


def command_paths(parser: argparse.ArgumentParser, path=()):
    yield list(path)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from command_paths(sub, (*path, name))


COMMANDS = list(command_paths(build_parser()))


def test_every_command_is_covered():
    names = {" ".join(p) for p in COMMANDS}
    assert {"", "run", "session", "sweep", "pairs check", "pairs report", "pairs collect"} <= names
    assert {"cache", "cache info", "cache prune", "cache clear"} <= names


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: " ".join(p) or "evalkit")
def test_help_is_in_plain_words(path, capsys):
    with pytest.raises(SystemExit) as done:
        main([*path, "--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage:")
    assert not spec_words(out), spec_words(out)


def printed(capsys, argv) -> tuple[int, str]:
    code = main(argv)
    got = capsys.readouterr()
    return code, got.out + got.err


SESSION_A = str(CORPUS / "cg22" / "ab-express" / "run-baseline-1.jsonl")
CAMPAIGN = [
    str(CORPUS / "ab-readme" / "gin" / "run1" / f"run-headless-with{t}.jsonl")
    for t in ("", ".t2", ".t3")
]
OUTPUTS = {
    "sweep": ["sweep", "--no-cache", "-j", "1", "--list-files"],
    "sweep --json": ["sweep", "--no-cache", "-j", "1", "--json"],
    "run --envelope": ["run", SESSION_A, "--envelope"],
    "run --json": ["run", SESSION_A, "--json"],
    "run multi-turn": ["run", *CAMPAIGN],
    "run lowest": ["run", str(CORPUS / "cg8-val" / "run-headless-with.jsonl")],
    "session": ["session", "--log-dir", str(INTERACTIVE)],
    "pairs report": ["pairs", "report", str(bundled_evidence())],
    "pairs report --json": ["pairs", "report", str(bundled_evidence()), "--json"],
    "pairs check --strict": ["pairs", "check", str(bundled_evidence()), "--strict"],
    "columns": ["columns"],
    "stats": ["stats", str(CORPUS), "--arms", "baseline,new", "-j", "1", "--cluster", "repo"],
    "stats --json": ["stats", str(CORPUS), "--arms", "baseline,new", "-j", "1", "--json"],
}


@pytest.mark.parametrize("name", OUTPUTS)
def test_outputs_over_the_bundled_data_are_in_plain_words(name, capsys):
    code, out = printed(capsys, OUTPUTS[name])
    assert code in (0, 1) and out.strip()
    assert not spec_words(out), spec_words(out)


def test_cache_outputs_are_in_plain_words(tmp_path, capsys):
    from evalkit.corpus.discover import discover
    from evalkit.corpus.parse import analyse_sessions
    from evalkit.store.shards import CorpusStore, code_fingerprint
    from evalkit.tables.sweep import run_sweep

    cache = str(tmp_path / "cache")
    run_sweep(CORPUS / "cg22", cache_dir=cache, jobs=1)
    root = CORPUS / "cg8-val"
    old = CorpusStore(cache, root, fingerprint=code_fingerprint() + "-older")  # another version
    analyse_sessions(root, discover(root).sessions, cache=old, jobs=1)
    run_sweep(CORPUS / "cg8-val", cache_dir=cache, jobs=1, format="claude-code")
    (tmp_path / "cache" / "sweep" / "ab").mkdir(parents=True)
    (tmp_path / "cache" / "sweep" / "ab" / ("ab" + "0" * 62 + ".json")).write_text("{}")
    (tmp_path / "cache" / "sweep" / "ab" / "notes.txt").write_text("not evalkit's")
    outs = []
    for argv in (
        [],
        ["--json"],
        ["prune", "--dry-run"],
        ["prune", "--json", "--dry-run"],
        ["prune"],
        ["prune"],  # nothing left to prune
        ["clear", "--dry-run"],
        ["clear"],
        ["clear"],  # nothing left
        [],
    ):
        code, out = printed(capsys, ["cache", *argv, "--cache-dir", cache])
        assert code == 0 and out.strip()
        outs.append(out)
    assert not spec_words("\n".join(outs)), spec_words("\n".join(outs))


def test_sweep_markdown_is_in_plain_words(tmp_path, capsys):
    md = tmp_path / "sweep.md"
    assert main(["sweep", "--no-cache", "-j", "1", "--markdown", str(md)]) == 0
    capsys.readouterr()
    assert not spec_words(md.read_text(encoding="utf-8"))


def errors(tmp: Path) -> dict[str, list[str]]:
    (tmp / "notes.txt").write_text("not evidence\n")
    (tmp / "logs").mkdir()
    (tmp / "logs" / "app.jsonl").write_text('{"level": "info", "msg": "started"}\n')
    return {
        "run: no such file": ["run", str(tmp / "missing.jsonl")],
        "run: not a transcript": ["run", str(repo_root() / "README.md")],
        "run: bad option": ["run", SESSION_A, "--window-tokens", "-5"],
        "sweep: no such directory": ["sweep", str(tmp / "nowhere")],
        "sweep: unknown arm": ["sweep", "--no-cache", "-j", "1", "--arms", "baseline,neww"],
        "sweep: app logs": ["sweep", "--no-cache", "-j", "1", str(tmp / "logs")],
        "session: no project": ["session", str(tmp / "no-project")],
        "pairs check: not evidence": ["pairs", "check", str(tmp / "notes.txt")],
        "pairs report: no file": ["pairs", "report", str(tmp / "missing.json")],
        "columns: unknown frame": ["columns", "nope"],
        "cache: not a directory": ["cache", "prune", "--cache-dir", str(tmp / "notes.txt")],
    }


ERRORS = [
    "run: no such file",
    "run: not a transcript",
    "run: bad option",
    "sweep: no such directory",
    "sweep: unknown arm",
    "sweep: app logs",
    "session: no project",
    "pairs check: not evidence",
    "pairs report: no file",
    "columns: unknown frame",
    "cache: not a directory",
]


@pytest.mark.parametrize("name", ERRORS)
def test_errors_are_in_plain_words(name, tmp_path, capsys):
    cases = errors(tmp_path)
    assert set(cases) == set(ERRORS)
    code, out = printed(capsys, cases[name])
    assert out.strip()
    assert "Traceback" not in out
    assert not spec_words(out), spec_words(out)


# --- what the notebooks show --------------------------------------------------------------------

NOTEBOOKS = sorted((repo_root() / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebooks_show_plain_words(path):
    found = []
    for i, cell in enumerate(json.loads(path.read_text(encoding="utf-8"))["cells"]):
        texts = ["".join(cell["source"])] if cell["cell_type"] == "markdown" else []
        for out in cell.get("outputs", []):
            texts.append("".join(out.get("text", "")))
            texts += [
                "".join(v) if isinstance(v, list) else str(v)
                for k, v in out.get("data", {}).items()
                if not k.startswith("image/")
            ]
        found += [f"cell {i}: {w}" for t in texts for w in spec_words(t)]
    assert not found, found
