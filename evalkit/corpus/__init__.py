"""A corpus of sessions: discovery by layout rules (`discover`), per-session records (`records`),
the cache (`cache`), parsing in parallel (`parse`) and the entity DataFrames (`frames`)."""
