"""Suite ``parallel``: chunked parallel encoding (tokspec's ``lopt`` and the published merges)
against serial encoding by the same engine, with 2 workers, on generated prose-like text.

One row per (engine, strategy), plus ``lopt`` through threads and processes explicitly:
subject = the merge through its backend (``tokspec.fast.parallel``
``auto``: threads for tiktoken, processes for HF ``tokenizers`` engines), baseline = one serial
``engine.encode`` of the whole text. Process pools are started and warmed before timing (start-up
is reported separately as a note in the case name, not hidden in the ratio). Every subject's
output is compared with the serial output and the row's case says ``exact`` or ``DIFFERS``.
Ratios are honest for this machine: with 2 cores the ceiling is 2x, and pickling chunks to worker
processes costs real time. Out of scope: batch throughput of many texts (not what merges are for).
"""

from __future__ import annotations

import random

from tokspec import Encoder, load_engine
from tokspec.bench import BenchRow, time_best
from tokspec.fast.merge_engines import merge_text
from tokspec.fast.parallel import Runner, default_chunk_len

__all__ = ["run", "generate_text"]

_ENGINES = ("tiktoken:cl100k_base", "hf:bert-base-uncased", "hf:mon-unigram")
_STRATEGIES = ("lopt", "lopt-paper", "overlap-filter", "id-lcs", "delimiter")
_WORKERS = 2


def generate_text(n_chars: int, seed: int = 0) -> str:
    """Prose-like text: pseudo-words of random letters, punctuation, digits, newlines. O(n)."""
    rng = random.Random(seed)
    letters = "etaoinshrdlucmfwypvbgkjqxz" + "éü"
    out: list[str] = []
    size = 0
    while size < n_chars:
        word = "".join(rng.choice(letters[: rng.randint(8, 28)]) for _ in range(rng.randint(1, 10)))
        sep = rng.choices([" ", ", ", ". ", "\n", " 42 "], weights=[80, 8, 6, 4, 2])[0]
        out.append(word + sep)
        size += len(word) + len(sep)
    return "".join(out)[:n_chars]


def _row(engine: Encoder, strategy: str, text: str, serial_s: float, repeat: int,
         backend_name: str = "auto") -> BenchRow:
    runner = Runner(backend_name, _WORKERS)
    backend = runner.resolve(engine)
    chunk_len = default_chunk_len(len(text), _WORKERS, backend)
    result = merge_text(engine, text, strategy=strategy, chunk_len=chunk_len, runner=runner)  # warm-up
    exact = "exact" if result.encoding == engine.encode(text) else "DIFFERS"
    subject_s = time_best(lambda: merge_text(engine, text, strategy=strategy, chunk_len=chunk_len,
                                             runner=runner), repeat=repeat)
    return BenchRow("parallel", f"{engine.info.name} {len(text) // 1000}k {exact}",
                    f"{strategy} {backend} x{_WORKERS}", "serial encode", len(text.encode("utf-8")),
                    subject_s, serial_s)


def run(*, quick: bool) -> list[BenchRow]:
    """quick: 20k characters, cl100k only, lopt only; full: ~1 MB per engine, all strategies,
    plus 4 MB for cl100k with lopt."""
    rows = []
    cases = [("tiktoken:cl100k_base", 20_000, ("lopt",))] if quick else (
        [(e, 1_000_000, _STRATEGIES) for e in _ENGINES] + [("tiktoken:cl100k_base", 4_000_000, ("lopt",))])
    repeat = 1 if quick else 3
    for name, n_chars, strategies in cases:
        engine = load_engine(name)
        text = generate_text(n_chars)
        serial_s = time_best(lambda: engine.encode(text), repeat=repeat)
        rows.extend(_row(engine, s, text, serial_s, repeat) for s in strategies)
        if not quick:  # the lossless merge through every applicable backend, measured side by side
            rows.extend(_row(engine, "lopt", text, serial_s, repeat, b) for b in ("threads", "processes"))
    return rows
