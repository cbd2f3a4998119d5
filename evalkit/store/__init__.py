"""The store layer: what evalkit keeps between runs, so that a warm run reads no transcript.

* `rows` — the stored row of an analysed session (its payload's fields, declared once);
* `manifest` — what a stored row was computed from (files, their state, digests);
* `keys` — where the cache lives and what keys it (code digest, reading limits, directories);
* `shards` — the corpus store: rows in Parquet shards with a JSON side index;
* `snapshot` — a sweep's whole output stored against the state of its tree;
* `admin` — the cache's life cycle (`evalkit cache`: list, prune, clear).

It sits between the session model and the corpus (`evalkit.corpus` uses it) and imports
nothing of the corpus: a session is anything with a log and its files (`manifest.StoredSession`).
"""
