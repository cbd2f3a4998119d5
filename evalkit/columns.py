"""The column dictionary (`evalkit.columns`): every frame's columns, in order, with dtype, unit
and meaning. An alias of `evalkit.corpus.columns`, where the declaration lives.

    >>> import evalkit.columns
    >>> evalkit.columns.dictionary_frame("sessions")
"""

from evalkit.corpus.columns import *  # noqa: F403
from evalkit.corpus.columns import __all__  # noqa: F401
