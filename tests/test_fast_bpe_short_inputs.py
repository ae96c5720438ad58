"""``fast:cl100k_base`` / ``fast:o200k_base`` (Peek2 + the backtracking BPE kernel, offsets fused in)
against tiktoken, ids AND offsets, on a fixed adversarial set of short texts: every string of up to
two characters over representatives of 1- to 4-byte UTF-8 and of each pretokenizer class, runs of
one character (the backtracking's worst shapes), and seeded random mixtures. Deterministic (no
hypothesis budget), so every kernel branch these reach is checked in every run.
"""

from __future__ import annotations

import itertools
import random

import pytest

from tokspec import load_engine

# ASCII letters/digits/space/punct, 2-byte (é, combining acute), 3-byte (中, NBSP-like U+3000,
# U+FFFD), 4-byte (emoji, CJK ext B), newline pairs, a quote for contractions
ALPHABET = "a Z7'\n\r!\u00e9\u0301\u4e2d\u3000\ufffd\U0001f642\U00020000\t"
WORDS = ["hello", " world", "It's", "\u4e2d\u6587", "123456", "  \n\n", "\U0001f642\u200d\U0001f642",
         "caf\u00e9", "'ll", "___", "....", "\u0645\u0631\u062d\u0628\u0627", "x" * 33]


def _texts() -> list[str]:
    out = ["".join(t) for n in (1, 2) for t in itertools.product(ALPHABET, repeat=n)]
    out += [ch * n for ch in "a 1!\u4e2d\U0001f642\n" for n in (3, 7, 16, 41)]
    rng = random.Random(13)
    out += ["".join(rng.choice(WORDS + list(ALPHABET)) for _ in range(rng.randint(2, 8))) for _ in range(300)]
    return out


@pytest.mark.parametrize("vocab", ["cl100k_base", "o200k_base"])
def test_fast_equals_tiktoken_on_short_adversarial_texts(vocab: str) -> None:
    fast, tik = load_engine(f"fast:{vocab}"), load_engine(f"tiktoken:{vocab}")
    for text in _texts():
        got, want = fast.encode(text), tik.encode(text)
        assert (got.ids, got.offsets) == (want.ids, want.offsets), text
        assert fast.encode_ids(text).tolist() == list(want.ids or ()), text  # type: ignore[attr-defined]
