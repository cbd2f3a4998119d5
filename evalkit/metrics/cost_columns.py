"""The cost columns of the sessions and models frames, declared apart from the costs themselves.

`evalkit.store.columns` declares every column, and so needs these names at import; they live in
this small module so that declaring them does not import the pricing (`evalkit.metrics.costs`
and its price table's classes), which a sweep never runs. `evalkit.metrics.costs` re-exports
them.
"""

from __future__ import annotations

__all__ = ["COST_COLUMNS", "MODEL_COST_COLUMNS"]

# The cost columns as `evalkit.store.columns` declares columns: (name, dtype, unit, meaning), in
# the sessions frame (and the per-model ones below in the models frame); filled when frames are
# built (`evalkit.corpus.pricing`), never stored.
COST_COLUMNS: tuple[tuple[str, str, str, str], ...] = (
    (
        "priced_cost_usd",
        "Float64",
        "USD",
        "the token ledger priced per model on the session's date (price_table); <NA> when a "
        "model is unknown or a token count is missing (price_reason)",
    ),
    (
        "recorded_cost_usd",
        "Float64",
        "USD",
        "the cost the log records (Claude Code total_cost_usd, Inspect total_cost, an ATIF "
        "trajectory's total_cost_usd, a harbor result.json's agent_result.cost_usd); <NA> when "
        "it records none",
    ),
    ("cost_usd", "Float64", "USD", "recorded_cost_usd where there is one, else priced_cost_usd"),
    ("cost_source", "string", "label", "which cost cost_usd is: recorded, priced, or <NA>"),
    (
        "cost_difference_usd",
        "Float64",
        "USD",
        "recorded_cost_usd − priced_cost_usd, where both exist",
    ),
    (
        "cost_difference_share",
        "Float64",
        "fraction",
        "(recorded − priced) / recorded; beyond ±0.05 a stale price table or an unusual plan",
    ),
    (
        "priced_lower_bound",
        "boolean",
        "flag",
        "the priced cost may be short (output snapshots, a long-context tier not applied)",
    ),
    ("price_reason", "string", "text", "why priced_cost_usd is <NA>, in words"),
    (
        "price_table",
        "string",
        "label",
        "the price table and its version (genai-prices 0.2.3), or the user prices file",
    ),
    ("price_date", "string", "label", "the date whose prices were used; <NA>: the latest"),
)
MODEL_COST_COLUMNS: tuple[tuple[str, str, str, str], ...] = (
    ("priced_cost_usd", "Float64", "USD", "this model's tokens priced on the session's date"),
    (
        "recorded_cost_usd",
        "Float64",
        "USD",
        "this model's recorded cost (costUSD in result.modelUsage, an Inspect model's total_cost)",
    ),
    ("input_cost_usd", "Float64", "USD", "what the uncached input cost"),
    ("cache_read_cost_usd", "Float64", "USD", "what the cache reads cost"),
    ("cache_write_5m_tokens", "Float64", "tokens", "cache writes kept 5 minutes (or unsplit)"),
    ("cache_write_5m_cost_usd", "Float64", "USD", "what the 5-minute cache writes cost"),
    ("cache_write_1h_tokens", "Float64", "tokens", "cache writes kept one hour"),
    ("cache_write_1h_cost_usd", "Float64", "USD", "what the 1-hour cache writes cost"),
    ("output_cost_usd", "Float64", "USD", "what the output cost (reasoning inside)"),
    ("table_model", "string", "label", "the price table's model id the model name matched"),
    ("price_source", "string", "label", "genai-prices and its version, or the user prices file"),
    ("price_reason", "string", "text", "why priced_cost_usd is <NA>, in words"),
)
