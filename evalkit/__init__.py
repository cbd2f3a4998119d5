"""evalkit: judge A/B evaluations of coding-agent tools from their transcripts.

The data flows through the package in this order (one module per step):

* `evalkit.transcripts` — read stream-json JSONL segments into one event list (§1.1–1.6)
* `evalkit.answer` — the final answer text (§1.7)
* `evalkit.envelope` — split explore responses into file sections; the envelope view (§2, §4)
* `evalkit.allocation` — explore allocation efficiency (§3)
* `evalkit.sufficiency`, `evalkit.occupancy`, `evalkit.summary` — the companion metrics (§5, §6, §1.11)
* `evalkit.session` — one parsed session with all of the above
* `evalkit.frames` — pandas DataFrames: `sessions_df`, `calls_df`, `sections_df`, `tool_calls_df`
* `evalkit.sweep` — corpus discovery, the baseline sweep and the arm table (§7, §8)
* `evalkit.paired` — paired evidence: schema, strict gate, per-pair tables
* `evalkit.stats` — small-n statistics shared by arm tables and per-pair tables
* `evalkit.report` — the printed blocks, in the reference's exact text format
* `evalkit.cli` — the `evalkit` command

Section numbers refer to the reference-metrics specification. Every `chars` value is a count of
UTF-16 code units, as the reference harness measures (Decision 1).
"""

__version__ = "0.1.0"
