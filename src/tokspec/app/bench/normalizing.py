"""Generated texts that HF Unigram normalizers change, for the bench and the tests.

:func:`normalizing_texts` writes words of Cyrillic (Mongolian's alphabet) and Latin letters, some
followed by a character a step of ``mon-unigram``'s normalizer changes or looks at: decomposed
accents and marks NFC composes or reorders, Hangul jamo, characters its ``Replace`` deletes
(U+00AD, U+200B..U+200D, U+2060, U+FEFF) or turns into a space (Zs: U+00A0, U+2002, U+202F,
U+3000), compatibility characters NFC keeps (U+FB01, U+2460, U+FF21), tabs, newlines and an emoji.
Deterministic in ``seed``; self-written, no external text. Out of scope: realistic word statistics.
"""

from __future__ import annotations

import random

__all__ = ["normalizing_texts"]

LETTERS = "абвгдеёжзийклмноөпрстуүфхцчшщъыьэюяaeiounrst"
EXTRAS = ["e\u0301", "\u0435\u0308", "\u0443\u0306", "\u00ad", "\u200b", "\u200d", "\ufeff", "\u2060",
          "\u00a0", "\u3000", "\u2002", "\u202f", "\ufb01", "\u2460", "\uff21", "\u0323\u0302", "\u1100\u1161",
          "\t", "\n", "\U0001f642", "\u0915\u093c", "a\u0328\u0301"]


def normalizing_texts(seed: int, count: int, size: int = 120) -> list[str]:
    """``count`` texts of about ``size`` characters (module docstring)."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        parts: list[str] = []
        while sum(map(len, parts)) < size:
            word = "".join(rng.choice(LETTERS) for _ in range(rng.randint(1, 8)))
            parts.append(word + rng.choice(EXTRAS) if rng.random() < 0.5 else word)
            parts.append(rng.choice([" ", " ", "  ", rng.choice(EXTRAS)]))
        out.append("".join(parts))
    return out
