"""evalkit: judge A/B evaluations of coding-agent tools from their transcripts.

The package is built in layers; data flows one way, and a layer imports only the layers above
it in this list (`tests/test_layers.py` checks it):

* `evalkit.formats` — readers, one folder per agent format (`formats.claude_code`: stream-json
  segments, interactive project logs with subagents; §1.1–1.6, §1.10)
* `evalkit.metrics` — the final answer (§1.7), explore envelopes (§2, §4), allocation (§3),
  sufficiency (§5), occupancy (§6), per-session summary fields (§1.11), the token ledger
* `evalkit.session` — one parsed session (headless or interactive) with all of the above
* `evalkit.store` — what is kept between runs: the stored rows, their keys, the Parquet shards,
  a sweep's stored output, the cache's pruning; it knows nothing of the corpus
* `evalkit.corpus` — discovery by layout rules (§7), per-session records, the parsing engines,
  the column dictionary (`evalkit.columns`) and the DataFrames (`sessions_df`, `calls_df`,
  `sections_df`, `files_df`, `tool_calls_df`); `evalkit.load_corpus(DIR)` loads a whole corpus
  directory into them (with the sweep's tables, `evalkit.tables.corpus`)
* `evalkit.tables` — the quantile rule and the sweep's slice, per-call and arm tables (§8);
  beside it `evalkit.stats` (small-n statistics) and `evalkit.paired` (paired evidence: schema,
  strict gate, per-pair tables, collector)
* `evalkit.outputs` — printed blocks in the reference's text format, the sweep's text, markdown
  and JSON, figures, notebook support, caveat sentences; beside it `evalkit.synthetic`, the
  generator of the bundled synthetic corpus
* `evalkit.commands`, `evalkit.cli` — the `evalkit` command

`evalkit.ecma` (ECMAScript primitives), `evalkit.errors` and `evalkit.paths` serve every layer.
`evalkit.sweep`, `evalkit.frames` and `evalkit.notebook` are kept as entry points under their old
names. Section numbers refer to the reference-metrics specification. Every `chars` value is a
count of UTF-16 code units, as the reference harness measures (Decision 1).
"""

__version__ = "0.1.0"

__all__ = ["load_corpus", "Corpus", "columns", "__version__"]

# The entry points for a corpus, imported on first use so `import evalkit` stays light and the
# package's own modules (which import `evalkit` for its version) take no dependency on them.
_LAZY = {
    "load_corpus": ("evalkit.tables.corpus", "load_corpus"),
    "Corpus": ("evalkit.tables.corpus", "Corpus"),
}


def __getattr__(name: str):
    if name == "columns":
        import evalkit.columns as columns

        return columns
    if name in _LAZY:
        from evalkit.tables import corpus

        return getattr(corpus, _LAZY[name][1])
    raise AttributeError(f"module 'evalkit' has no attribute {name!r}")
