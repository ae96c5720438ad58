"""Tokspec's text domain as data: every Unicode scalar value, and HF's view of a class over it.

The text domain is the Unicode scalar values (every code point but the surrogates U+D800..U+DFFF).
Tables keyed by code point (Peek2's classes, Unicode drift, HF's unassigned set) are derived by
running a classifier over all of them at once; :func:`scalar_values` and :func:`scalar_text` are
that input, built once per process. :func:`hf_regex_inside` asks the installed HF ``tokenizers``
which characters of a text its own regex engine (Oniguruma, with its Unicode tables) puts inside
``prop``: the one probe that sees HF's tables rather than the ``regex`` module's.
"""

from __future__ import annotations

import functools

import numpy as np

__all__ = ["scalar_values", "scalar_text", "hf_regex_inside"]


@functools.lru_cache(maxsize=1)
def scalar_values() -> np.ndarray:
    """Every code point but the surrogates, ascending, as little-endian uint32 (1,112,064 of them).
    Cached: do not write to it."""
    cps: np.ndarray = np.concatenate([np.arange(0xD800), np.arange(0xE000, 0x110000)]).astype("<u4")
    cps.setflags(write=False)
    return cps


@functools.lru_cache(maxsize=1)
def scalar_text() -> str:
    """:func:`scalar_values` as one string (character ``i`` is ``scalar_values()[i]``)."""
    return scalar_values().tobytes().decode("utf-32-le")


def hf_regex_inside(prop: str, text: str) -> np.ndarray:
    """Per character of ``text``: True where HF ``tokenizers``' regex engine matches it inside a run
    of ``prop`` (a character class, matched as ``prop+`` by a Split that removes the matches; a
    character it leaves is outside). Membership of a class is per character (no look-around), so
    probing all characters in one text gives each one's membership. O(len(text)) in Rust."""
    from tokenizers import Regex, pre_tokenizers  # the installed release's tables, on demand

    inside = np.ones(len(text), dtype=bool)
    split = pre_tokenizers.Split(Regex(prop + "+"), behavior="removed")
    for _piece, (start, end) in split.pre_tokenize_str(text):
        inside[start:end] = False
    return inside
