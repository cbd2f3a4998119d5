"""Alias of `evalkit.outputs.notebook`, kept so that notebooks' `evalkit.notebook.setup()` and
`python -m evalkit.notebook notebooks/*.ipynb` go on working."""

import sys

from evalkit.outputs.notebook import *  # noqa: F403
from evalkit.outputs.notebook import __all__, execute  # noqa: F401

if __name__ == "__main__":
    execute(sys.argv[1:])
