"""Benchmark (a script, not a test): `evalkit report` against `evalkit sweep` on the same corpus.

Usage:
    python tests/benchmarks/bench_report.py [--jobs N] [--trials 2]

Prints, for the bundled corpus and for a synthetic harbor tree (`python -m evalkit.synthetic
harbor`, read with `--layout harbor --profile sourcegraph`), the wall time of the sweep's text
report and of the HTML report, both with a warm store (each is run once first, untimed), in one
process. The report's extra time is the pages: every session read again in full for its
timeline, and the figures drawn. Nothing is asserted; read the figures and their ratio.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from evalkit.outputs.html.site import ReportOptions, write_report
from evalkit.outputs.sweep_text import render_text
from evalkit.outputs.trials_text import render_trials_text
from evalkit.paths import bundled_corpus
from evalkit.synthetic.harbor import generate_harbor_corpus
from evalkit.tables.sweep import run_sweep
from evalkit.tables.trials import run_trial_sweep


def _timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def _row(name: str, sweep: float, report: float, sessions: int) -> str:
    return (
        f"{name:<28} sweep {sweep:6.2f} s   report {report:6.2f} s   "
        f"x{report / sweep:5.1f}   ({sessions} session pages)"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--trials", type=int, default=2)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        cache = Path(tmp) / "cache"
        corpus = bundled_corpus()
        opts = ReportOptions(cache_dir=cache, jobs=args.jobs)

        def sweep():
            render_text(run_sweep(corpus, cache_dir=cache, jobs=args.jobs, progress=None))

        def report():
            return write_report(corpus, Path(tmp) / "bundled", opts)

        sweep()
        written = report()
        print(_row("bundled corpus", _timed(sweep), _timed(report), written.sessions))

        harbor = Path(tmp) / "harbor"
        generate_harbor_corpus(harbor, trials=args.trials)
        hopts = ReportOptions(
            layout="harbor", profile="sourcegraph", cache_dir=cache, jobs=args.jobs
        )

        def trials():
            render_trials_text(
                run_trial_sweep(
                    harbor, layout="harbor", profile="sourcegraph", cache_dir=cache, jobs=args.jobs
                )
            )

        def harbor_report():
            return write_report(harbor, Path(tmp) / "harbor-site", hopts)

        trials()
        written = harbor_report()
        print(
            _row("synthetic harbor tree", _timed(trials), _timed(harbor_report), written.sessions)
        )


if __name__ == "__main__":
    main()
