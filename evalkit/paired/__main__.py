"""`python -m evalkit.paired check|report FILE` and `collect ...` (see `evalkit.paired.cli`)."""

import sys

from evalkit.paired.cli import main

sys.exit(main())
