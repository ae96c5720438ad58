"""Shrinking, step one: try a small window around the first divergence before reducing the whole text.

A bug in a tokenizer is almost always local: a handful of characters around where the two token
sequences first differ reproduce it. :func:`tokspec.minimize.minimize_text` reduces from the whole
text, which on a 600,000-character input spends its budget on half-megabyte texts (and once stopped
at 631,552 characters). :func:`window_first` tests ``text[c - w:c + w]`` for ``w = 1, 2, 4, ...``
around the divergence character ``c`` (the smaller start of the two first diverging tokens) and
returns the first window that still fails, else the text itself; the usual reduction then starts
from it. Cost: O(log n) predicate calls on texts of at most twice the window, stopping at half the
text (a bug that needs the whole text -- a 4096-token buffer, an 8 KiB chunk seam -- costs about
one extra comparison of the text). Out of scope: faults (no divergence position: whole-text reduction).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["divergence_char", "window_first"]


def divergence_char(comparison: Any) -> int | None:
    """The first character the two first diverging tokens cover (None for a fault or agreement)."""
    if comparison.index is None:
        return None
    starts = []
    for outcome in (comparison.a, comparison.b):
        arrays = outcome.arrays
        if arrays is not None and comparison.index < len(arrays):
            starts.append(int(arrays.starts[comparison.index]))
    if not starts:  # both sides ended: the divergence is at the end of the shorter output
        return max(0, len(comparison.text) - 1)
    return min(starts)


def window_first(comparison: Any, still_fails: Callable[[str], bool]) -> str:
    """The smallest window ``text[c - w:c + w]`` (``w`` doubling from 1) that still fails, else the
    text (module docstring)."""
    text: str = comparison.text
    c = divergence_char(comparison)
    if c is None or len(text) <= 8:
        return text
    w = 1
    while 4 * w < len(text):
        window: str = text[max(0, c - w):c + w]
        if still_fails(window):
            return window
        w *= 2
    return text
