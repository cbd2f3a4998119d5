"""The price table's answers for a store's sessions, kept beside them (issue 22).

Prices are never stored with a session's rows: every load prices the token ledgers again
(`evalkit.corpus.pricing`), so a new price table or another `--prices` file never needs a parse
and no stored row holds a stale price. Asking the table means importing it first, a third of a
second or more, most of a warm load of a small corpus. What the table answers for one model,
provider and instant never changes while the same table is installed, so its answers are kept
in the store directory, in `prices-<32 hex>.json` (the digest of `table_identity()`: the
table's version and data file); a load whose every lookup is there imports no table. Another
table's file has another name and is never read; a damaged file is ignored and written again.
User prices (`--prices FILE.toml`) are never kept: they are read from their file each time.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from typing import Any

from evalkit.metrics.prices import Rates, rates_from_json, rates_to_json, table_identity
from evalkit.store.temps import replace_file

__all__ = ["PRICES_FILE", "PriceMemo"]

PRICES_FILE = re.compile(r"^prices-[0-9a-f]{32}\.json\Z")
_VERSION = 1
_LIMIT = 64 << 20  # a larger file is not this module's: ignored


class PriceMemo(dict[str, "Rates | str"]):
    """The table's answers (`evalkit.metrics.prices.model_rates`'s `memo`) read from a store
    directory, and written back by `save` when a load added some.

    With no directory (no store) it only holds this load's answers.
    """

    def __init__(self, directory: str | os.PathLike[str] | None) -> None:
        super().__init__()
        self._path: str | None = None
        if directory is not None:
            digest = hashlib.sha256(table_identity().encode()).hexdigest()[:32]
            self._path = os.path.join(os.fspath(directory), f"prices-{digest}.json")
            self.update(_read(self._path))
        self._read = len(self)

    def save(self) -> None:
        """Write the answers back if this load added some (never raises: the memo is only a
        shortcut, and a store that cannot be written is still read)."""
        if self._path is None or len(self) == self._read:
            return
        directory = os.path.dirname(self._path)
        if not os.path.isdir(directory):
            return
        at: dict[int, int] = {}
        rates: list[Any] = []
        keys: dict[str, Any] = {}
        for key, value in self.items():
            if isinstance(value, str):
                keys[key] = value
                continue
            if id(value) not in at:
                at[id(value)] = len(rates)
                rates.append(rates_to_json(value))
            keys[key] = at[id(value)]
        doc = {"version": _VERSION, "table": table_identity(), "rates": rates, "keys": keys}
        data = json.dumps(doc, ensure_ascii=True, separators=(",", ":")).encode()
        replace_file(directory, self._path, data, ".json")
        self._read = len(self)


def _read(path: str) -> dict[str, Rates | str]:
    """The answers in `path`; none when it is missing, damaged or another table's."""
    import orjson

    try:
        with open(path, "rb") as fh:
            data = fh.read(_LIMIT + 1)
        if len(data) > _LIMIT:
            return {}
        doc = orjson.loads(data)
        if doc.get("version") != _VERSION or doc.get("table") != table_identity():
            return {}
        rates = [rates_from_json(r) for r in doc["rates"]]
        out: dict[str, Rates | str] = {}
        for key, value in doc["keys"].items():
            if type(value) is int and 0 <= value < len(rates):
                out[key] = rates[value]
            elif isinstance(value, str):
                out[key] = value
            else:
                return {}
        return out
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return {}
