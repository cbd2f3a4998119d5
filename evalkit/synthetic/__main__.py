"""`python -m evalkit.synthetic generate OUT [--seed N] [--scale K]` — regenerate the corpus."""

from __future__ import annotations

import argparse
import sys
import time

from evalkit.synthetic.generate import SEED, generate_corpus
from evalkit.synthetic.harbor import HARBOR_SEED, generate_harbor_corpus

_HELP = f"""\
Regenerate the bundled synthetic corpus (data/corpus) or a larger copy of it.

examples:
  python -m evalkit.synthetic generate data/corpus            # the committed corpus
  python -m evalkit.synthetic generate /tmp/corpus10 --scale 10  # 10x, for sweep benchmarks
  python -m evalkit.synthetic harbor /tmp/harbor      # the small MCP A/B (harbor layout)

The same seed always gives byte-identical files. The default seed is {SEED}.
exit status: 0 written, 1 the seed does not solve the published figures, 2 usage error."""


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m evalkit.synthetic",
        description=_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = p.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("generate", help="write the corpus into OUT")
    g.add_argument("out", metavar="OUT")
    g.add_argument("--seed", type=int, default=SEED)
    g.add_argument("--scale", type=int, default=1, help="write K full copies (benchmarks)")
    h = sub.add_parser("harbor", help="write the small harbor-layout MCP A/B corpus into OUT")
    h.add_argument("out", metavar="OUT")
    h.add_argument("--seed", type=int, default=HARBOR_SEED)
    h.add_argument("--trials", type=int, default=2, help="trials per task and arm (default 2)")
    args = p.parse_args(argv)
    if args.cmd == "harbor":
        if args.trials < 1:
            p.error("--trials must be at least 1")
        n = generate_harbor_corpus(args.out, seed=args.seed, trials=args.trials)
        print(f"wrote {n} files to {args.out}", file=sys.stderr)
        return 0
    if args.scale < 1:
        p.error("--scale must be at least 1")
    t = time.perf_counter()
    try:
        n = generate_corpus(args.out, seed=args.seed, scale=args.scale)
    except RuntimeError as exc:
        print(f"evalkit.synthetic: {exc}", file=sys.stderr)
        return 1
    print(f"wrote {n} files to {args.out} in {time.perf_counter() - t:.1f}s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
