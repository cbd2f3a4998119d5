"""The caveat sentences evalkit prints beside allocation numbers, in one place.

The CLI, the markdown report and the notebooks all quote these, so a caveat reads the same
wherever a number can be misread. Wording follows the project's own doc (seed; spec §3.1, §8.4,
§12.1).
"""

from __future__ import annotations

__all__ = [
    "SYNTHETIC_CORPUS",
    "RELATIVE_METRIC",
    "NEVER_QUOTE_MEDIAN",
    "never_quote_median",
    "UNCITED_IS_NOT_UNUSED",
    "SIGNAL_IN_TAIL",
    "SMALL_N",
    "SWEEP_CAVEATS",
    "COMPARISON_SCOPE",
    "CAMPAIGN_CALIBRATION",
    "CAMPAIGN_FIXED_TEXT",
    "TOKENS_OWN",
    "READ_ALLOCATION_OWN",
    "SYNTHETIC_HARBOR_CORPUS",
    "READ_ALLOCATION_CAVEATS",
]

SYNTHETIC_CORPUS = (
    "This is evalkit's bundled corpus: a synthetic reconstruction calibrated to the published "
    "summary statistics. Its numbers demonstrate and regression-test the pipeline and say "
    "nothing about any real tool."
)

RELATIVE_METRIC = (
    "Relative metric: attribution is by citation, so compare two builds on the same question; "
    "it is not an absolute measure of waste."
)


def never_quote_median(tool: str = "codegraph") -> str:
    """The never-quote-the-median caveat naming the tool under test (a profile's label)."""
    return (
        f'Never quote the median as waste ("{tool} wastes 10% of what it returns"): flow-question '
        "answers name most files on the chain and the metric is byte-weighted, so the typical "
        "session scores high whatever the build."
    )


NEVER_QUOTE_MEDIAN = never_quote_median()

UNCITED_IS_NOT_UNUSED = (
    "Uncited is not unused: an agent can read a file, rule it out and never name it; that was "
    "useful work and this metric calls it waste. The error is one-sided."
)

SIGNAL_IN_TAIL = (
    "The signal is in the tail: the discrimination lives at p25 and below, not around the "
    "median; read the lowest sessions."
)

SMALL_N = (
    "Small n: an arm has a handful of runs of 1–5 explore calls each; report the range, "
    "not the median of three."
)

COMPARISON_SCOPE = (
    "Occupancy shares are Claude Code on its window and do not transfer to another host; "
    "compare the arms' ratio, not the absolute share."
)

CAMPAIGN_CALIBRATION = (
    "The bundled campaign is calibrated to the published explore sufficiency and allocation "
    "figures only: its throughput, token and occupancy numbers are whatever the synthetic "
    "transcripts give, not the published ones."
)

CAMPAIGN_FIXED_TEXT = (
    "The campaign's explanatory paragraphs (why a residual is higher, the fixed-overhead note, "
    "the single-turn caveat, how to read the last table) are evalkit's wording: the harness's "
    "own text is not public; every figure and table line is the harness's."
)

TOKENS_OWN = (
    "Token and cost columns beyond tokens_processed and cost_usd are evalkit's own: each "
    "request counted once by message id, output from result.modelUsage, totals carried over "
    "--resume not added twice. They never change a number the harness prints."
)

# In the order `evalkit sweep` prints them.
SWEEP_CAVEATS = (
    RELATIVE_METRIC,
    NEVER_QUOTE_MEDIAN,
    UNCITED_IS_NOT_UNUSED,
    SIGNAL_IN_TAIL,
    SMALL_N,
)

READ_ALLOCATION_OWN = (
    "Read allocation is evalkit's own figure, not the reference harness's: it charges the chars "
    "of every call that names one file (Read, or a file field a tool profile declares) to that "
    "file, so an arm without an explore tool gets a figure too; it never enters the explore "
    "allocation numbers."
)

SYNTHETIC_HARBOR_CORPUS = (
    "This corpus was written by evalkit's synthetic harbor-corpus generator: every transcript, "
    "reward and number in it is invented. It demonstrates the pipeline and says nothing about "
    "any real tool."
)

# Beside every read-allocation figure: what it is, and the allocation caveats that apply to it.
READ_ALLOCATION_CAVEATS = (READ_ALLOCATION_OWN, RELATIVE_METRIC, UNCITED_IS_NOT_UNUSED)
