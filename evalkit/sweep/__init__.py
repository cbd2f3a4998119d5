"""The sweep's entry point: `evalkit.sweep.run_sweep(DIR)` and what it returns.

The work is done by the layers: `evalkit.corpus` discovers and parses the sessions,
`evalkit.tables` aggregates them (`evalkit.tables.sweep` holds `run_sweep` and `SweepResult`),
`evalkit.outputs.sweep_text` prints them. This module re-exports the names notebooks and users
already import from `evalkit.sweep`.
"""

from evalkit.tables.sweep import *  # noqa: F403
from evalkit.tables.sweep import __all__  # noqa: F401
