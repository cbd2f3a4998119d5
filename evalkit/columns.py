"""The column dictionary (`evalkit.columns`): every frame's columns, in order, with dtype, unit
and meaning. An alias of `evalkit.store.columns`, where the declaration lives.

    >>> import evalkit.columns
    >>> evalkit.columns.dictionary_frame("sessions")
"""

from evalkit.store.columns import *  # noqa: F403
from evalkit.store.columns import __all__  # noqa: F401
