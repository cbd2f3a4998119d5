"""`python -m evalkit.corpus generate …` — an alias of `python -m evalkit.synthetic generate …`.

The synthetic-corpus generator moved to `evalkit.synthetic`; `evalkit.corpus` is now the loader
of your own corpus. This alias keeps old commands working.
"""

import sys

from evalkit.synthetic.__main__ import main

if __name__ == "__main__":
    print(
        "note: the corpus generator is now `python -m evalkit.synthetic`; "
        "`evalkit.corpus` loads your own corpus",
        file=sys.stderr,
    )
    sys.exit(main())
