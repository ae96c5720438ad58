"""The pattern-dictionary and Unicode-drift text source of the search (``diff --fuzz``, ``check_against``).

Random text rarely holds ``'LLx`` (an upper-case contraction followed by letters, the only place a
case-sensitive contraction rule shows), U+0085 or U+FEFF next to a letter, or one of the ~15,000 code
points whose class differs between Unicode versions. This source draws texts made of 1-10 parts:
an entry of the pattern dictionary (:mod:`tokspec.fuzz.dictionary`, shared with the
ClusterFuzzLite dictionaries), a *drift* character (:func:`tokspec.unicode_drift.drift_table`), or a
short word (ASCII letters in both cases, digits) for the entries to stick to. Seeded:
deterministic per seed, so the plugin's counted search stays reproducible. Cost about that of
tokspec's own generators (``cost = 1``).

Out of scope: long texts (the other sources draw those).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

__all__ = ["DictionarySource", "dictionary_text"]

_WORDS = ("a", "x", "ab", "he", "the", "The", "his", "Sam", "ALL", "it", "We", "em", "1", "42", "2026", "é", "ño", "Ω")


def dictionary_text(rng: random.Random, entries: tuple[str, ...], drift: list[int]) -> str:
    """One text of 1-10 parts (module docstring), drawn with ``rng``."""
    parts = []
    for _ in range(rng.randint(1, 10)):
        r = rng.random()
        if r < 0.5:
            parts.append(rng.choice(entries))
        elif r < 0.7 and drift:
            parts.append(chr(rng.choice(drift)))
        else:
            parts.append(rng.choice(_WORDS))
    return "".join(parts)


class DictionarySource:
    """Seeded texts from the pattern dictionary and the drift table (module docstring)."""

    name = "pattern dictionary + Unicode drift"
    cost = 1

    def __init__(self, seed: int) -> None:
        from tokspec.fuzz.dictionary import SPECIALS
        from tokspec.unicode_drift import drift_table

        self.rng = random.Random(seed * 7919 + 26)
        self.entries = SPECIALS
        self.drift = list(drift_table())

    def run(self, until: float, on_text: Callable[[str], bool]) -> None:
        """Feed texts to ``on_text`` until the monotonic time ``until`` or until it returns True."""
        while time.monotonic() < until:
            if on_text(dictionary_text(self.rng, self.entries, self.drift)):
                return
