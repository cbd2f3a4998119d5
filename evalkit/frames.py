"""Alias of `evalkit.corpus.frames`, kept so that `from evalkit.frames import sessions_df` goes on
working; new code imports from `evalkit.corpus.frames` (or `evalkit.corpus`)."""

from evalkit.corpus.frames import *  # noqa: F403
from evalkit.corpus.frames import __all__  # noqa: F401
