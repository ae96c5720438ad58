"""Text families for ``tokspec complexity``: ``family(n) -> text`` of exactly n characters, seeded.

Families (issue 24): one long run of each character class a pretokenizer treats alike (letters of
several scripts, digits, punctuation, each kind of whitespace, combining marks, emoji), one
repeated character, adversarial periodic strings (the shapes of ``tokspec.fuzz.strategies``'
repetitions), vocabulary pieces glued together, many short words, special-token prefixes (``<``,
``<|``), and ordinary prose (tokspec's corpus joined). A run of one class is one pretoken for
cl100k-style patterns (``\\p{L}+``, punctuation runs) and so exercises byte-pair merging over one
piece (``tokspec.spec.complexity`` C2).

Every family is deterministic given (name, n, seed): a record's witness is regenerated from them.
Out of scope: texts that depend on an engine's vocabulary beyond its token surfaces on the corpus.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable

__all__ = ["FAMILIES", "family_text"]


def _run(alphabet: str) -> Callable[[int, random.Random], str]:
    return lambda n, rng: "".join(rng.choices(alphabet, k=n))  # one C call: a 1M text in ~0.1 s


def _periodic(unit: str) -> Callable[[int, random.Random], str]:
    return lambda n, rng: (unit * (n // len(unit) + 1))[:n]


def _words(n: int, rng: random.Random) -> str:
    out, size = [], 0
    while size < n:
        word = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(1, 4))) + " "
        out.append(word)
        size += len(word)
    return "".join(out)[:n]


@functools.lru_cache(maxsize=1)
def _corpus() -> tuple[str, ...]:
    from tokspec.corpus import build_corpus

    return tuple(build_corpus(seed=0))


def _prose(n: int, rng: random.Random) -> str:
    corpus = _corpus()
    text = ""
    while len(text) < n:
        text += " ".join(rng.sample(corpus, min(40, len(corpus))))
    return text[:n]


def _vocab_pieces(n: int, rng: random.Random) -> str:
    pieces = ["ing", "tion", "the", "er", "an", "re", "on", "ed", "es", "ent"]
    out, size = [], 0
    while size < n:
        piece = rng.choice(pieces)
        out.append(piece)
        size += len(piece)
    return "".join(out)[:n]


FAMILIES: dict[str, Callable[[int, random.Random], str]] = {
    "repeated-letter": _periodic("a"),
    "latin-letters": _run("abcdefghijklmnopqrstuvwxyz"),
    "cyrillic-letters": _run("абвгдежзийклмнопрстуфхцчшщыэюя"),
    "cjk": _run("的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年"),
    "digits": _run("0123456789"),
    "dashes": _periodic("-"),
    "punctuation": _run("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"),
    "spaces": _periodic(" "),
    "newlines": _periodic("\n"),
    "tabs": _periodic("\t"),
    "mixed-whitespace": _run(" \t\n\r\u00a0\u3000"),
    "combining-marks": lambda n, rng: "a" + "".join(rng.choice("\u0300\u0301\u0302\u0308") for _ in range(n - 1)),
    "emoji": _run("😀😂🙂🚀🌍👍"),
    "periodic-ab": _periodic("ab"),
    "periodic-aab": _periodic("aab"),
    "periodic-abc-space": _periodic("abc "),
    "vocab-pieces": _vocab_pieces,
    "short-words": _words,
    "special-lt": _periodic("<"),
    "special-lt-bar": _periodic("<|"),
    "prose": _prose,
}


def family_text(name: str, n: int, seed: int = 0) -> str:
    """The text of family ``name`` with ``n`` characters (deterministic in name, n, seed). O(n)."""
    if name not in FAMILIES:
        raise ValueError(f"unknown family name={name!r}; known: {', '.join(FAMILIES)}")
    if n < 1:
        raise ValueError(f"n must be >= 1, got n={n!r}")
    text = FAMILIES[name](n, random.Random(f"{name}:{n}:{seed}"))
    assert len(text) == n, (name, n, len(text))
    return text
