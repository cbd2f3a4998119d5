"""Benchmark (a script, not a test): how often the hierarchical bootstrap's interval covers the
true mean paired delta on simulated paired corpora.

Usage:
    python tests/benchmarks/bench_coverage.py [--corpora 300] [--resamples 999]

Each corpus has T tasks of K trials in two arms; every task has its own difficulty and its own
effect around a true delta of 0.3, and trials are noisy within a task
(`tests.test_paired_stats.simulated_corpus`). Prints, per (T, K), the share of 95% intervals
that contain 0.3: close to 0.95 is the aim. `pytest -m slow` asserts it for two designs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.test_paired_stats import bootstrap_coverage  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpora", type=int, default=300)
    parser.add_argument("--resamples", type=int, default=999)
    args = parser.parse_args()
    print(f"coverage of the 95% hierarchical bootstrap over {args.corpora} simulated corpora")
    for tasks, trials in ((5, 2), (10, 1), (10, 3), (20, 2), (30, 1)):
        cov = bootstrap_coverage(args.corpora, tasks, trials, n_resamples=args.resamples)
        print(f"  {tasks:>2} tasks x {trials} trials: {cov:.3f}")


if __name__ == "__main__":
    main()
