"""Benchmark suite ``reference-bpe``: how far the reference BPE and pretokenizers are from production.

Rows (subject vs baseline, same input, same process), on English-like and Chinese-like text:

- ``reference:NAME`` vs ``tiktoken:NAME`` (the adapter: ids and contract offsets), and vs
  ``tiktoken-raw:NAME`` (the library's ``encode_ordinary`` alone: ids, no offsets);
- ``pretok:cl100k_base`` (the regex split alone) vs ``tiktoken-raw:cl100k_base`` (split and BPE);
- full runs only: the same for o200k, ``hf-converted:cl100k_base`` vs ``tiktoken:cl100k_base``
  (HF running the recovered merges) and ``pretok:cl100k_base`` vs ``pretok:hf-split-cl100k_base``.

Text is generated here at run time from a seed: English-like text is words of random syllables
with Zipf-distributed frequencies, spaces, commas and full stops; Chinese-like text is CJK unified
ideographs (Zipf over the first 3000 of the block) with a full-width comma or full stop every 8-30
characters, as real Chinese has. ``quick=True`` uses ~20 kB per input, cl100k only, one repetition;
``quick=False`` ~1 MB and the best of 3 (the reference rows once: they take seconds).
Out of scope: realism of the text beyond these shapes; special tokens.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import tokspec
from tokspec.app.bench import BenchRow, time_best
from tokspec.reference.pretok_regex import PATTERNS
from tokspec.formats.vocab import load_named_tiktoken

__all__ = ["run", "english_like", "chinese_like"]

SUITE = "reference-bpe"
_ONSETS = ["", "b", "c", "d", "f", "g", "h", "l", "m", "n", "p", "r", "s", "t", "w", "th", "st", "pr"]
_VOWELS = ["a", "e", "i", "o", "u", "ea", "ou", "ai"]
_CODAS = ["", "", "n", "r", "s", "t", "l", "nd", "ng", "ck"]


def _zipf_pick(rng: random.Random, items: list[str], n: int) -> list[str]:
    weights = [1.0 / (rank + 1) for rank in range(len(items))]
    return rng.choices(items, weights=weights, k=n)


def english_like(n_bytes: int, *, seed: int = 0) -> str:
    """About ``n_bytes`` of ASCII text: Zipf words made of random syllables, with punctuation."""
    rng = random.Random(seed)
    words = ["".join(rng.choice(_ONSETS) + rng.choice(_VOWELS) + rng.choice(_CODAS)
                     for _ in range(rng.randint(1, 3))) for _ in range(5000)]
    out: list[str] = []
    size = 0
    while size < n_bytes:
        sentence = _zipf_pick(rng, words, rng.randint(4, 18))
        sentence[0] = sentence[0].capitalize()
        text = " ".join(sentence) + rng.choice([". ", ", ", ". ", "? ", ".\n"])
        out.append(text)
        size += len(text)
    return "".join(out)


def chinese_like(n_bytes: int, *, seed: int = 0) -> str:
    """About ``n_bytes`` of UTF-8 (3 bytes per ideograph): Zipf ideographs with full-width
    punctuation every 8-30 characters."""
    rng = random.Random(seed)
    chars = [chr(0x4E00 + i) for i in rng.sample(range(20000), 3000)]
    out: list[str] = []
    size = 0
    while size < n_bytes:
        clause = "".join(_zipf_pick(rng, chars, rng.randint(8, 30))) + rng.choice("，。，、。")
        out.append(clause)
        size += len(clause.encode("utf-8"))
    return "".join(out)


def _timed(name: str, text: str, repeat: int) -> tuple[str, float]:
    """Best seconds of encoding ``text`` with engine ``name``; ``tiktoken-raw:NAME`` times the
    tiktoken library's ``encode_ordinary`` directly (ids only)."""
    if name.startswith("tiktoken-raw:"):
        import tiktoken  # built from the verified local ranks: tiktoken's registry would download
        arg = name.partition(":")[2]
        enc = tiktoken.Encoding(arg, pat_str=PATTERNS[arg], special_tokens={},
                                mergeable_ranks=load_named_tiktoken(arg).ranks)
        fn: Callable[[], object] = lambda: enc.encode_ordinary(text)  # noqa: E731
    else:
        engine = tokspec.load_engine(name)
        fn = lambda: engine.encode(text)  # noqa: E731
    time_best(fn, repeat=1)  # warm-up: lazy tables, caches
    return name, time_best(fn, repeat=repeat)


def _row(case: str, subject: str, baseline: str, text: str, repeat: int) -> BenchRow:
    _, sub_s = _timed(subject, text, repeat if not subject.startswith("reference:") else 1)
    _, base_s = _timed(baseline, text, repeat)
    return BenchRow(SUITE, case, subject, baseline, len(text.encode("utf-8")), sub_s, base_s)


def run(*, quick: bool) -> list[BenchRow]:
    """Measure the rows of the module docstring; see there for sizes and repetitions."""
    size = 20_000 if quick else 1_000_000
    repeat = 1 if quick else 3
    names = ("cl100k_base",) if quick else ("cl100k_base", "o200k_base")
    rows: list[BenchRow] = []
    for case, text in (("english", english_like(size)), ("chinese", chinese_like(size))):
        for name in names:
            rows.append(_row(f"{case} bpe", f"reference:{name}", f"tiktoken:{name}", text, repeat))
            rows.append(_row(f"{case} bpe", f"reference:{name}", f"tiktoken-raw:{name}", text, repeat))
        rows.append(_row(f"{case} pretok", "pretok:cl100k_base", "tiktoken-raw:cl100k_base", text, repeat))
        if not quick:
            rows.append(_row(f"{case} bpe", "hf-converted:cl100k_base", "tiktoken:cl100k_base", text, repeat))
            rows.append(_row(f"{case} pretok", "pretok:cl100k_base", "pretok:hf-split-cl100k_base", text,
                             repeat))
    return rows
