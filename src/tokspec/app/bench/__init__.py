"""``tokspec bench``: engines measured side by side in one run, reported as ratios.

A suite is a module ``tokspec.app.bench.<suite>`` with ``run(*, quick: bool) -> list[BenchRow]``. Every
row pairs a *subject* with a *baseline* timed in the same process on the same input, so the ratio
(baseline seconds / subject seconds; above 1 means the subject is faster) is meaningful even on a
noisy machine where absolute seconds are not. ``quick=True`` is a smoke run of a few seconds.
Speed is never asserted in tests; it is reported here.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass

__all__ = ["BenchRow", "SUITES", "fresh_copy", "time_best", "format_rows"]

#: suite name -> module. Each is owned by the layer it measures.
SUITES: dict[str, str] = {
    "reference-bpe": "tokspec.app.bench.reference_bpe",
    "reference-wp-unigram": "tokspec.app.bench.reference_wp_unigram",
    "fast": "tokspec.app.bench.fast",
    "parallel": "tokspec.app.bench.parallel",
    "memory": "tokspec.app.bench.memory",
    "scale": "tokspec.app.bench.scale",
    "counting": "tokspec.app.bench.counting",
    "latency": "tokspec.app.bench.latency",
    "cold": "tokspec.app.bench.cold",
    "stages": "tokspec.app.bench.stages",
}


@dataclass(frozen=True)
class BenchRow:
    suite: str
    case: str
    subject: str
    baseline: str
    input_bytes: int
    subject_s: float
    baseline_s: float
    unit: str = "s"  # "MB": subject_s and baseline_s are peak resident megabytes (growth), not seconds

    @property
    def ratio(self) -> float:
        """baseline_s / subject_s: above 1, the subject is faster (or, for "MB", smaller) than the baseline."""
        return self.baseline_s / self.subject_s if self.subject_s > 0 else float("inf")

    def as_dict(self) -> dict[str, object]:
        return {**asdict(self), "ratio": self.ratio}


def time_best(fn: Callable[[], object], *, repeat: int = 3) -> float:
    """Best wall-clock seconds of ``repeat`` calls of ``fn`` (best-of damps machine noise)."""
    best = float("inf")
    for _ in range(max(1, repeat)):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def fresh_copy(text: str) -> str:
    """A new ``str`` equal to ``text``, as a document just read or received arrives: with no UTF-8
    kept beside it. CPython keeps a non-ASCII str's UTF-8 once something asks for it
    (``PyUnicode_AsUTF8AndSize``: how a Rust or C extension reads a str), so a later call on the
    same object skips the conversion. Timing every engine on the one object let the second
    extension peer, and every peer in a later pass over the same texts, skip it. Measured on 2 MB
    (content already in the peer's own cache, best of 8; issue 29, stop 46): toktok-rs 18.0 ms
    on a new object against 17.0 ms on the converted one for standard-library source, 63.8
    against 61.4 ms for Chinese-like text; quicktok-v1 28.2 / 27.2 and 62.2 / 61.0 ms. The benches
    that claim new documents or per-call cost time each call on its own copy, made before the
    clock starts."""
    return text.encode("utf-8", "surrogatepass").decode("utf-8", "surrogatepass")


def _mb_per_s(n_bytes: int, seconds: float) -> str:
    return f"{n_bytes / seconds / 1e6:8.2f}" if seconds > 0 else "     inf"


def _format_memory(rows: list[BenchRow]) -> list[str]:
    """Memory rows: peak RSS of subject and baseline, and each per input byte."""
    head = (f"{'suite':<20} {'case':<34} {'subject':<28} {'baseline':<28} {'bytes':>9} "
            f"{'subj MB':>9} {'base MB':>9} {'subj/in':>8} {'base/in':>8}")
    lines = ["", "peak resident memory growth over loaded engines (MB); x/in = that growth per input byte",
             head, "-" * len(head)]
    for r in rows:
        mb_in = r.input_bytes / 1e6
        lines.append(
            f"{r.suite:<20.20} {r.case:<34.34} {r.subject:<28.28} {r.baseline:<28.28} {r.input_bytes:>9} "
            f"{r.subject_s:>9.0f} {r.baseline_s:>9.0f} {r.subject_s / mb_in:>7.1f}x {r.baseline_s / mb_in:>7.1f}x")
    return lines


def format_rows(rows: list[BenchRow]) -> str:
    """A fixed-width table: one line per row, subject and baseline MB/s and the ratio side by side
    (rows in seconds), then a table of peak memory (rows with ``unit == "MB"``)."""
    memory = [r for r in rows if r.unit == "MB"]
    rows = [r for r in rows if r.unit != "MB"]
    head = (f"{'suite':<20} {'case':<34} {'subject':<28} {'baseline':<28} {'bytes':>9} "
            f"{'subj MB/s':>9} {'base MB/s':>9} {'ratio':>8}")
    lines = [head, "-" * len(head)]
    for r in rows:
        lines.append(
            f"{r.suite:<20.20} {r.case:<34.34} {r.subject:<28.28} {r.baseline:<28.28} {r.input_bytes:>9} "
            f"{_mb_per_s(r.input_bytes, r.subject_s):>9} {_mb_per_s(r.input_bytes, r.baseline_s):>9} "
            f"{r.ratio:>7.2f}x")
    if memory:
        lines += _format_memory(memory)
    return "\n".join(lines)
