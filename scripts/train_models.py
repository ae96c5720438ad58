"""Train (or find in the cache) tokspec's reproducible models and print their engine names.

Usage: python scripts/train_models.py [--kind KIND ...] [--vocab-size N] [--seed S]
A thin CLI over :mod:`tokspec.formats.models` (see its docstring for kinds, sizes and the cache).
"""

from __future__ import annotations

import argparse
import time

from tokspec.formats import models


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kind", action="append", choices=models.KINDS,
                        help="model kind (repeatable; default: all)")
    parser.add_argument("--vocab-size", type=int, default=models.SMALL,
                        help=f"vocabulary size (SMALL={models.SMALL}, MID={models.MID})")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    for kind in args.kind or models.KINDS:
        start = time.perf_counter()
        name = models.engine_name(kind, vocab_size=args.vocab_size, seed=args.seed)
        print(f"{kind:22} {time.perf_counter() - start:7.2f}s  {name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
