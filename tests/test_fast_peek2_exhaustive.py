"""Peek2 (compiled kernel and plain-Python run search) against the production patterns on EVERY string
of up to three characters over one representative of each class the patterns tell apart, plus
seeded random strings up to 12 characters over the same alphabet with contraction letters.

Peek2 decides from the categories of two characters and run ends, so the short strings reach every
branch-table cell, every end-of-text case and every run of length 1..3; deterministic (no
hypothesis budget), a few seconds with the kernels interpreted.
"""

from __future__ import annotations

import itertools
import random

import pytest
from tokspec.fast import pretok_peek2 as p2
from tokspec.reference.pretok_regex import split as regex_split

# space, quote, CR, LF, tab, NBSP (\s, not space), Ll, Lu (and contraction letter), Lt, Lm, Lo,
# Mn, Nd, No, punctuation, '/', long s (folds to s), NUL
ALPHABET = " '\r\n\t\xa0aS\u01c5\u02b0\u4e2d\u03011\u00b2!/\u017f\x00"
CONTRACTION = "'sSdmtlLveEr\u017f"


def _short_strings() -> list[str]:
    return ["".join(t) for n in (1, 2, 3) for t in itertools.product(ALPHABET, repeat=n)]


def _random_strings(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    pool = ALPHABET + CONTRACTION * 2
    return ["".join(rng.choice(pool) for _ in range(rng.randint(4, 12))) for _ in range(count)]


def _first_difference(pattern: str, texts: list[str], form: object) -> str | None:
    for text in texts:
        want = [(s, e) for s, e in regex_split(text, pattern)]
        got = form(text, pattern)  # type: ignore[operator]
        if got != want:
            return f"{pattern} {text!r}: got {got}, regex {want}"
    return None


@pytest.mark.parametrize("pattern", p2.PATTERN_NAMES)
def test_kernel_equals_regex_on_all_short_strings(pattern: str) -> None:
    texts = _short_strings() + _random_strings(1, 1500)
    assert _first_difference(pattern, texts, p2.split) is None


@pytest.mark.parametrize("pattern", p2.PATTERN_NAMES)
def test_run_search_equals_regex_on_all_short_strings(pattern: str) -> None:
    texts = _short_strings() + _random_strings(2, 1500)
    assert _first_difference(pattern, texts, p2.split_runs) is None


# The runs Peek2 finds seven categories per 8-byte load (letters, o200k's lower-case words,
# punctuation, whitespace forwards and its last CR/LF backwards): every run length 1..24 of each
# kind, at every offset 0..9 from the text's start (the backward search reads one at a time within
# six characters of it), before a letter, a digit, punctuation, whitespace and the end of text.
_RUNS = {"letters": "abcXyZ", "lower": "hello", "punctuation": "!'(.-/", "o200k punctuation": "!(.-\u0301",
         "spaces": " ", "space and tab": " \t", "line ends": "\r\n", "whitespace with line ends": "  \n\t\r ",
         "whitespace with NBSP": "\xa0 \t"}
_AFTER = ("", "a", "7", "!", " ", "\n", " x")


def _run_texts() -> list[str]:
    texts = []
    for unit in _RUNS.values():
        for length in range(1, 25):
            run = (unit * length)[:length]
            for offset in range(10):
                for after in _AFTER:
                    texts.append("q" * offset + run + after)
                    texts.append(" " * offset + run + after)
    return texts


@pytest.mark.parametrize("pattern", p2.PATTERN_NAMES)
def test_kernel_equals_regex_on_runs_of_every_length_at_every_offset(pattern: str) -> None:
    assert _first_difference(pattern, _run_texts(), p2.split) is None
