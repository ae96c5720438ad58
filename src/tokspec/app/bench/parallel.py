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

from tokspec import Encoder, Encoding, load_engine
from tokspec.app.bench import BenchRow, time_best
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


def _row(engine: Encoder, strategy: str, text: str, serial: tuple[float, Encoding], repeat: int,
         backend_name: str = "auto") -> BenchRow:
    """Time one strategy; the untimed warm-up run (which also starts pools) checks exactness."""
    runner = Runner(backend_name, _WORKERS)
    backend = runner.resolve(engine)
    chunk_len = default_chunk_len(len(text), _WORKERS, backend)
    result = merge_text(engine, text, strategy=strategy, chunk_len=chunk_len, runner=runner)
    exact = "exact" if result.encoding == serial[1] else "DIFFERS"
    subject_s = time_best(lambda: merge_text(engine, text, strategy=strategy, chunk_len=chunk_len,
                                             runner=runner), repeat=repeat)
    return BenchRow("parallel", f"{engine.info.name} {len(text) // 1000}k {exact}",
                    f"{strategy} {backend} x{_WORKERS}", "serial encode", len(text.encode("utf-8")),
                    subject_s, serial[0])


def _serial(engine: Encoder, text: str, repeat: int) -> tuple[float, Encoding]:
    out: list[Encoding] = []
    seconds = time_best(lambda: out.append(engine.encode(text)), repeat=repeat)
    return seconds, out[0]


def run(*, quick: bool) -> list[BenchRow]:
    """quick: 20k characters, cl100k, lopt only. Full: 1 MB per engine; lopt through auto, threads
    and processes, and each published strategy through auto; best of 2 runs each."""
    rows: list[BenchRow] = []
    cases: list[tuple[str, int, tuple[str, ...]]]
    if quick:
        cases = [("tiktoken:cl100k_base", 20_000, ("lopt",))]
    else:
        cases = [(e, 1_000_000, _STRATEGIES) for e in _ENGINES]
    repeat = 1 if quick else 2
    for name, n_chars, strategies in cases:
        engine = load_engine(name)
        text = generate_text(n_chars)
        serial = _serial(engine, text, repeat)
        rows.extend(_row(engine, s, text, serial, repeat) for s in strategies)
        if not quick:  # the lossless merge through both pool kinds, measured side by side
            rows.extend(_row(engine, "lopt", text, serial, repeat, b) for b in ("threads", "processes"))
    return rows
