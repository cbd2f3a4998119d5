"""Notebook support: deterministic output, where the data is, and where figures go.

Every evalkit notebook starts with

    import evalkit.notebook as nb
    nb.setup()

so that outputs are the same on every run (nbval compares them): the Agg backend, a fixed
figure size and dpi, fixed pandas display options, no progress bars, and figure files written
without timestamps.
"""

from __future__ import annotations

import os
from pathlib import Path

from evalkit.paths import bundled_corpus, bundled_evidence, repo_root

__all__ = [
    "FIGSIZE",
    "DPI",
    "setup",
    "corpus_dir",
    "harbor_corpus_dir",
    "evidence_file",
    "figures_dir",
    "save_figure",
    "show_path",
    "execute",
]

FIGSIZE = (7.0, 4.0)
DPI = 100
# Figure files carry no creation date or software version, so the same figure is the same bytes.
_PNG_METADATA = {"Software": None}
_SVG_METADATA = {"Date": None, "Creator": None}


def setup() -> None:
    """Make notebook output deterministic: Agg backend, fixed sizes, display options, no progress."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt
    import pandas as pd

    plt.rcdefaults()
    plt.rcParams.update(
        {
            "figure.figsize": FIGSIZE,
            "figure.dpi": DPI,
            "savefig.dpi": DPI,
            "svg.hashsalt": "evalkit",
            "font.family": "DejaVu Sans",
            "axes.spines.top": False,
            "axes.spines.right": False,
        }
    )
    pd.set_option("display.width", 120)
    pd.set_option("display.max_columns", 20)
    pd.set_option("display.max_rows", 60)
    pd.set_option("display.precision", 4)
    # Fixed-point floats: a tiny difference prints as 0.0000, never in scientific notation.
    pd.set_option("display.float_format", "{:.4f}".format)
    pd.set_option("display.max_colwidth", 60)
    os.environ["EVALKIT_PROGRESS"] = "0"
    _show_figures_inline()


def _show_figures_inline() -> None:
    # Under Agg a Figure shows only as text; in a kernel, render it as PNG when it is the value of
    # a cell. nbval compares the text form (`<Figure size 700x400 with 1 Axes>`), not pixels.
    try:
        from IPython import get_ipython
        from IPython.core.pylabtools import select_figure_formats
    except ImportError:
        return
    shell = get_ipython()
    if shell is not None:
        select_figure_formats(shell, {"png"}, dpi=DPI)


def corpus_dir(parameter: str | os.PathLike[str] | None = None) -> Path:
    """The corpus a notebook analyses: its parameter, else `$EVALKIT_CORPUS`, else the bundled one."""
    chosen = parameter or os.environ.get("EVALKIT_CORPUS") or bundled_corpus()
    return Path(chosen)


def harbor_corpus_dir(parameter: str | os.PathLike[str] | None = None) -> Path:
    """The trial corpus a notebook analyses: its parameter, else `$EVALKIT_HARBOR_CORPUS`, else
    the small synthetic harbor corpus (`evalkit.synthetic.harbor`), written once per process into
    a temporary directory (the same seed gives the same files, so the outputs are the same)."""
    chosen = parameter or os.environ.get("EVALKIT_HARBOR_CORPUS")
    if chosen:
        return Path(chosen)
    global _HARBOR_TMP
    if _HARBOR_TMP is None:
        import atexit
        import shutil
        import tempfile

        from evalkit.synthetic.harbor import generate_harbor_corpus

        tmp = tempfile.mkdtemp(prefix="evalkit-harbor-")
        atexit.register(shutil.rmtree, tmp, True)  # only the directory made here
        _HARBOR_TMP = Path(tmp) / "synthetic-harbor"
        generate_harbor_corpus(_HARBOR_TMP)
    return _HARBOR_TMP


_HARBOR_TMP: Path | None = None


def evidence_file(parameter: str | os.PathLike[str] | None = None) -> Path:
    """The evidence file a notebook reviews: its parameter, `$EVALKIT_EVIDENCE`, or the bundled one."""
    chosen = parameter or os.environ.get("EVALKIT_EVIDENCE") or bundled_evidence()
    return Path(chosen)


def show_path(path: str | os.PathLike[str]) -> str:
    """A path as a notebook may print it: relative to the checkout, never a machine path."""
    p = Path(path).resolve()
    try:
        return p.relative_to(repo_root()).as_posix()
    except ValueError:
        return p.name


def figures_dir() -> Path:
    """`reports/figures/` in the checkout (override with `$EVALKIT_FIGURES`)."""
    return Path(os.environ.get("EVALKIT_FIGURES") or repo_root() / "reports" / "figures")


def save_figure(fig, name: str, directory: str | os.PathLike[str] | None = None) -> Path:
    """Save `fig` as `<name>.png` and `<name>.svg`, byte-identical on every run.

    Returns:
        The PNG's path. Print it with `show_path`, not as is.
    """
    out = Path(directory) if directory is not None else figures_dir()
    out.mkdir(parents=True, exist_ok=True)
    png = out / f"{name}.png"
    fig.savefig(png, dpi=DPI, metadata=_PNG_METADATA)
    fig.savefig(out / f"{name}.svg", metadata=_SVG_METADATA)
    return png


def execute(paths: list[str | os.PathLike[str]], *, timeout: int = 600) -> None:
    """Run notebooks top to bottom in a fresh kernel and save them with their outputs.

    This is how the committed notebooks are refreshed after a change to evalkit's output:
    `python -m evalkit.notebook notebooks/*.ipynb`. nbval then compares every later run
    with what was saved.
    """
    import nbformat
    from nbclient import NotebookClient

    for path in paths:
        path = Path(path)
        nb = nbformat.read(path, as_version=4)
        NotebookClient(
            nb,
            timeout=timeout,
            kernel_name="python3",
            record_timing=False,
            resources={"metadata": {"path": str(path.parent)}},
        ).execute()
        nbformat.write(nb, path)
        print(f"executed {path}")


if __name__ == "__main__":
    import sys

    execute(sys.argv[1:])
