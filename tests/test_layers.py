"""The package's layers: data flows one way, and every module sits in a layer.

formats → metrics → session → store → corpus → tables (with stats and paired) → outputs (with
the synthetic-corpus generator) → commands and cli. A module may import its own layer or any layer
to its left, never one to its right; imports inside functions and `TYPE_CHECKING` blocks count
too, since they are the same dependency taken later.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "evalkit"

# (layer name, module prefixes). Order is the direction data flows. A module belongs to the
# layer of its longest matching prefix.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("base", ("evalkit", "evalkit.ecma", "evalkit.errors", "evalkit.paths", "evalkit.published")),
    ("formats", ("evalkit.formats",)),
    ("metrics", ("evalkit.metrics",)),
    ("session", ("evalkit.session",)),
    # The store knows nothing of the corpus: a stored session is a protocol (log and files).
    ("store", ("evalkit.store",)),
    ("corpus", ("evalkit.corpus", "evalkit.frames", "evalkit.columns")),
    ("tables", ("evalkit.tables", "evalkit.sweep", "evalkit.stats", "evalkit.paired")),
    ("outputs", ("evalkit.outputs", "evalkit.notebook", "evalkit.synthetic")),
    (
        "commands",
        (
            "evalkit.commands",
            "evalkit.cli",
            "evalkit.__main__",
            "evalkit.corpus.__main__",
            "evalkit.paired.cli",
            "evalkit.paired.__main__",
        ),
    ),
)


def layer_of(module: str) -> int | None:
    """The index in LAYERS of `module`'s layer (longest prefix wins), or None."""
    best: tuple[int, int] | None = None
    for rank, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if module == prefix or module.startswith(prefix + "."):
                if best is None or len(prefix) > best[0]:
                    best = (len(prefix), rank)
    return None if best is None else best[1]


def module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported_modules(source: str, module: str) -> list[tuple[int, str]]:
    """Every evalkit module `source` imports, with its line (relative imports resolved)."""
    out = []
    package = module if module.count(".") == 0 else module.rsplit(".", 1)[0]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target == "evalkit":  # `from evalkit import x`: x may be a module
                out += [(node.lineno, f"evalkit.{a.name}") for a in node.names]
            out.append((node.lineno, target))
    return [(line, name) for line, name in out if name.split(".")[0] == "evalkit"]


def facade_lines(source: str, module: str) -> set[int]:
    """Lines of the package's lazy facade: `evalkit.__getattr__` hands out the public entry
    points (`evalkit.load_corpus`, `evalkit.Corpus`, `evalkit.columns`) on first use. It is
    the one exemption: no module reaches a later layer through it, since modules import the
    layer they need by name."""
    if module != "evalkit":
        return set()
    lines: set[int] = set()
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef) and node.name == "__getattr__":
            lines |= {n.lineno for n in ast.walk(node) if hasattr(n, "lineno")}
    return lines


def violations(module: str, source: str) -> list[str]:
    """The imports of `module` that run against the layer direction."""
    own = layer_of(module)
    found = []
    exempt = facade_lines(source, module)
    for line, target in imported_modules(source, module):
        if line in exempt:
            continue
        rank = layer_of(target)
        if own is not None and rank is not None and rank > own:
            found.append(
                f"{module}:{line} imports {target} "
                f"({LAYERS[own][0]} must not import {LAYERS[rank][0]})"
            )
    return found


def package_modules() -> list[tuple[str, Path]]:
    return sorted((module_name(p), p) for p in PACKAGE.rglob("*.py"))


def test_every_module_has_a_layer():
    missing = [name for name, _ in package_modules() if layer_of(name) is None]
    assert not missing


def test_imports_follow_the_layers():
    found = []
    for name, path in package_modules():
        found += violations(name, path.read_text(encoding="utf-8"))
    assert not found, "\n".join(found)


@pytest.mark.parametrize(
    ("module", "source"),
    [
        ("evalkit.formats.claude_code.transcripts", "from evalkit.metrics import allocation\n"),
        (
            "evalkit.metrics.allocation",
            "def f():\n    from evalkit.corpus.frames import calls_df\n",
        ),
        ("evalkit.metrics.summary", "from evalkit.tables.quantile import median\n"),
        ("evalkit.corpus.frames", "import evalkit.outputs.figures\n"),
        ("evalkit.tables.aggregate", "from ..outputs import caveats\n"),
        ("evalkit.session", "from evalkit import cli\n"),
    ],
)
def test_a_forbidden_import_is_reported(module, source):
    assert len(violations(module, source)) == 1


def test_only_the_package_facade_is_exempt():
    lazy = "def __getattr__(name):\n    from evalkit.tables import corpus\n"
    assert violations("evalkit", lazy) == []
    assert len(violations("evalkit.ecma", lazy)) == 1
    assert len(violations("evalkit", "def f():\n    from evalkit.tables import corpus\n")) == 1


def test_allowed_imports_are_not_reported():
    source = (
        "from evalkit.ecma import pl\nfrom evalkit.formats.claude_code import transcripts\n"
        "from . import envelope\n"
    )
    assert violations("evalkit.metrics.allocation", source) == []
    assert layer_of("evalkit.paired.cli") == layer_of("evalkit.cli")
    assert layer_of("evalkit.corpus.__main__") == layer_of("evalkit.commands")


# --- No import circle -------------------------------------------------------------------------


def import_graph(sources: dict[str, str]) -> dict[str, set[str]]:
    """Module → the package modules it imports (imports inside functions included; the lazy
    facade exempt). `from pkg import name` is an import of `pkg.name` when that is a module of
    the package, else of `pkg`; a package's `__init__` imported on the way to one of its
    modules is not counted (it is the same import)."""
    graph: dict[str, set[str]] = {}
    for module, source in sources.items():
        exempt = facade_lines(source, module)
        package = module if module.count(".") == 0 else module.rsplit(".", 1)[0]
        edges: set[str] = set()
        for node in ast.walk(ast.parse(source)):
            if getattr(node, "lineno", None) in exempt:
                continue
            if isinstance(node, ast.Import):
                edges |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                named = {f"{target}.{a.name}" for a in node.names} & sources.keys()
                edges |= named or {target}
        graph[module] = {t for t in edges if t in sources and t != module}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0

    def visit(v: str) -> None:
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def test_no_import_circle():
    sources = {name: path.read_text(encoding="utf-8") for name, path in package_modules()}
    found = circles(import_graph(sources))
    assert not found, "import circles:\n" + "\n".join(" ↔ ".join(c) for c in found)


def test_a_circle_is_reported_inside_a_layer_and_across_layers():
    inside = {
        "evalkit.corpus.a": "from evalkit.corpus import b\n",
        "evalkit.corpus.b": "def f():\n    from evalkit.corpus.c import x\n",
        "evalkit.corpus.c": "import evalkit.corpus.a\n",
        "evalkit.corpus.d": "from evalkit.corpus import a\n",
    }
    assert circles(import_graph(inside)) == [
        ["evalkit.corpus.a", "evalkit.corpus.b", "evalkit.corpus.c"]
    ]
    across = {
        "evalkit.metrics.m": "def f():\n    from evalkit.tables.t import y\n",
        "evalkit.tables.t": "from evalkit.metrics.m import z\n",
    }
    assert circles(import_graph(across)) == [["evalkit.metrics.m", "evalkit.tables.t"]]
    assert circles(import_graph({k: "" for k in inside})) == []
