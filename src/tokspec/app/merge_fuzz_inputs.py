"""Generated inputs of ``tokspec merge-check --fuzz`` (:mod:`tokspec.app.cli_merge`): adversarial
repetitions, texts with interesting characters placed at chunk edges, long runs (one huge pretoken,
word or whitespace run), corpus texts, and texts built from the engine's own vocabulary. Seeded by
the caller's ``random.Random``; every text is a plain ``str`` inside tokspec's text domain.
"""

from __future__ import annotations

import random

from tokspec import Encoder

__all__ = ["gen_text"]

_REPEAT_UNITS = ["a", "ab", " ", "  a", "1", "12 ", "\n", "\t", " the", "'s", "..", "é", "\u0301",
                 "中", "😀", "\u200d", "aaaa", "    ", "##", "▁", "A", "xyz"]


def _vocab_words(engine: Encoder, rng: random.Random, k: int) -> list[str]:
    """Surfaces of random token ids (byte-level tokens decoded leniently; ## and ▁ undone)."""
    words = []
    token_bytes = getattr(engine, "token_bytes", None)
    for _ in range(k * 3):
        tid = rng.randrange(30000)
        try:
            w = token_bytes(tid).decode("utf-8", "ignore") if token_bytes else engine.token_piece(tid)
        except Exception:  # noqa: BLE001 - any failure here only skips a word of generated text
            continue
        w = w.removeprefix("##").replace("▁", " ")
        if w:
            words.append(w)
        if len(words) >= k:
            break
    return words or ["a"]


def gen_text(engine: Encoder, rng: random.Random, corpus: list[str], chunk_len: int) -> str:
    """One fuzz input: a repetition, edge-targeted, corpus or vocabulary text (chosen at random)."""
    kind = rng.randrange(5)
    if kind == 4:  # long runs: one huge pretoken / word / whitespace run, with a little around it
        run = rng.choice(["x", "a", "ab", " ", "1", "\n", "é", "中"]) * rng.randint(100, 1500)
        return rng.choice(["", "word ", "a "]) + run + rng.choice(["", " end", "b"])
    if kind == 0:
        unit = "".join(rng.choice(_REPEAT_UNITS) for _ in range(rng.randint(1, 3)))
        return unit * rng.randint(1, 200 // max(1, len(unit)) + 1)
    if kind == 1:
        out = []
        for _ in range(rng.randint(2, 6)):
            filler = rng.choice(["a", "b ", "x", " ", "ab"]) * max(0, chunk_len - rng.randint(0, 3))
            out.append(filler + rng.choice(_REPEAT_UNITS) * rng.randint(1, 30))
        return "".join(out)
    if kind == 2:
        return rng.choice(corpus)
    words = _vocab_words(engine, rng, rng.randint(5, 60))
    return "".join(w + rng.choice(["", "", " ", "\n", ","]) for w in words)
