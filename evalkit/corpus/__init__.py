"""A corpus of sessions: discovery by layout rules (`discover`), per-session records (`records`),
the cache (`cache`), parsing in parallel (`parse`), the column dictionary (`columns`), the entity
DataFrames (`frames`) and the loader that ties them together (`load`: discover → parse records →
frames; `evalkit.load_corpus` adds the sweep's tables on top)."""
