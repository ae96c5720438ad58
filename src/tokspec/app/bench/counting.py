"""Suite ``counting``: the backtracking seed's two counting benchmarks, on o200k_base without
pretokenization (as the seed runs them), on a 20,000-token text cut from tokspec's corpus.

- ``interval N``: counting slices of about N tokens (N = 10, 100, 1,000, 10,000; 200 random slices,
  the byte length of N tokens at the text's mean token length): subject
  :class:`~tokspec.fast.bpe_counting.IntervalCounter` (built once, before timing; its build is the
  row ``interval build``), baseline: re-encoding each slice with the backtracking encoder
  (``CompiledBPE.encode_bytes``). The seed's claim: interval counts flat in N, re-encoding linear.
- ``append N``: the first N tokens' bytes appended one byte at a time (one ``push`` call per byte,
  Python call included) and in one ``extend`` call, against encoding those bytes once. The seed's
  claim: within a constant factor of one whole encode (the ratio flat in N).

Counts of subject and baseline are compared on every timed input; a mismatch raises.
"""

from __future__ import annotations

import functools
import json
import random
import sys

from tokspec.app.bench import BenchRow, time_best
from tokspec.corpus import build_corpus

__all__ = ["run"]

_SIZES = (10, 100, 1_000, 10_000)


@functools.lru_cache(maxsize=1)
def _setup() -> tuple[object, bytes]:
    from tokspec import load_engine
    from tokspec.fast.bpe_counting import CountingTables
    bpe = load_engine("fast:o200k_base").bpe  # type: ignore[attr-defined]
    data = "".join(build_corpus(seed=3)).encode()
    ids = bpe.encode_bytes(data)
    cut = sum(len(bpe.token_bytes(int(t))) for t in ids[:20_000])
    return CountingTables(bpe), data[:cut]


def _interval_rows(quick: bool) -> list[BenchRow]:
    from tokspec.fast.bpe_counting import IntervalCounter
    tables, data = _setup()
    enc = tables.bpe.encode_bytes  # type: ignore[attr-defined]
    per_token = len(data) / len(enc(data))
    rows = [BenchRow("counting", "interval build (20k tokens)", "IntervalCounter()", "encode whole",
                     len(data), time_best(lambda: IntervalCounter(tables, data)),  # type: ignore[arg-type]
                     time_best(lambda: enc(data)))]
    inter = IntervalCounter(tables, data)  # type: ignore[arg-type]
    rng = random.Random(0)
    for n in _SIZES:
        width = max(1, round(n * per_token))
        starts = [rng.randrange(0, len(data) - width) for _ in range(50 if quick else 200)]
        slices = [(i, i + width) for i in starts]
        if [inter.count(i, j) for i, j in slices] != [len(enc(data[i:j])) for i, j in slices]:
            raise AssertionError(f"interval counts differ from re-encoding at n={n}")
        sub = time_best(lambda: [inter.count(i, j) for i, j in slices])
        base = time_best(lambda: [enc(data[i:j]) for i, j in slices])
        per = sub / len(slices) * 1e6
        rows.append(BenchRow("counting", f"interval {n} tok ({per:.1f} us/query)", "IntervalCounter.count",
                             "backtracking re-encode", width * len(slices), sub, base))
    return rows


def _append_rows(quick: bool) -> list[BenchRow]:
    from tokspec.fast.bpe_counting import AppendingCounter
    tables, data = _setup()
    enc = tables.bpe.encode_bytes  # type: ignore[attr-defined]
    rows = []
    for n in _SIZES if not quick else _SIZES[:3]:
        ids = enc(data)[:n]
        lengths: list[int] = [len(tables.bpe.token_bytes(int(t))) for t in ids]  # type: ignore[attr-defined]
        chunk = data[:sum(lengths)]

        def by_byte() -> int:
            app = AppendingCounter(tables)  # type: ignore[arg-type]
            for b in chunk:
                app.push(b)
            return app.count

        def at_once() -> int:
            app = AppendingCounter(tables)  # type: ignore[arg-type]
            app.extend(chunk)
            return app.count

        if not by_byte() == at_once() == len(enc(chunk)):
            raise AssertionError(f"appending counts differ from encoding at n={n}")
        whole = time_best(lambda: enc(chunk))
        rows.append(BenchRow("counting", f"append {n} tok byte-by-byte", "AppendingCounter.push",
                             "encode whole once", len(chunk), time_best(by_byte), whole))
        rows.append(BenchRow("counting", f"append {n} tok one extend", "AppendingCounter.extend",
                             "encode whole once", len(chunk), time_best(at_once), whole))
    return rows


def run(*, quick: bool) -> list[BenchRow]:
    """The rows of the module docstring."""
    return _interval_rows(quick) + _append_rows(quick)


if __name__ == "__main__":  # pragma: no cover - manual use
    for row in run(quick="--quick" in sys.argv):
        print(json.dumps(row.as_dict()))
