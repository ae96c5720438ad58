"""NFC with alignment, paying Python's per-character cost only where NFC changes something.

:func:`nfc_aligned` normalizes ``text[start:end]`` as HF's ``NFC`` normalizer does (the core's
aligned ``tokspec.formats.normalize.unicode_form``, HF's tables) and returns the contract's origin of every
normalized character as two int64 arrays. Invariant it relies on: a boundary just before an ASCII
character is a normalization boundary, ``NFC(x + y) == NFC(x) + NFC(y)`` when ``y`` starts with an
ASCII character: ASCII characters are starters (combining class 0) that no canonical composition
takes as its second character, so nothing after the boundary composes or reorders with anything
before it. So only the *windows* ``[\\x00-\\x7f]?[^\\x00-\\x7f]+`` (a non-ASCII run and the ASCII
character before it) can change, and only those Python does not call NFC go through the core.

:func:`hull_offsets` maps token spans over the normalized text back to original spans: the hull of
the origins of its characters (a reordered mark keeps its own origin). O(n) numpy, plus Python
work per changed window (memoized by its text) and per token touching one. Out of scope: other normalization forms.
"""

from __future__ import annotations

import functools
import unicodedata

import numpy as np
import regex

from tokspec.formats.normalize import Aligned, unicode_form

__all__ = ["hull_offsets", "nfc_aligned"]

_WINDOW = regex.compile(r"[\x00-\x7f]?[^\x00-\x7f]+")


def nfc_aligned(text: str, start: int, end: int) -> tuple[str, np.ndarray, np.ndarray, np.ndarray]:
    """``(normalized, lo, hi, changed)`` for ``text[start:end]``: normalized character ``i`` came
    from original characters ``[lo[i], hi[i])``; ``changed[i]`` marks characters of windows NFC
    rewrote (there ``lo``/``hi`` need not be monotone)."""
    parts: list[str] = []
    los: list[np.ndarray] = []
    his: list[np.ndarray] = []
    flags: list[np.ndarray] = []
    pos = start

    def keep(s: int, e: int) -> None:  # an unchanged stretch: the identity alignment
        parts.append(text[s:e])
        los.append(np.arange(s, e, dtype=np.int64))
        his.append(np.arange(s + 1, e + 1, dtype=np.int64))
        flags.append(np.zeros(e - s, dtype=bool))

    for m in _WINDOW.finditer(text, start, end):
        if unicodedata.is_normalized("NFC", m.group()):
            continue
        keep(pos, m.start())
        norm, rel_lo, rel_hi = _window(m.group())
        parts.append(norm)
        los.append(rel_lo + m.start())
        his.append(rel_hi + m.start())
        flags.append(np.ones(len(norm), dtype=bool))
        pos = m.end()
    keep(pos, end)
    return "".join(parts), np.concatenate(los), np.concatenate(his), np.concatenate(flags)


@functools.lru_cache(maxsize=4096)
def _window(window: str) -> tuple[str, np.ndarray, np.ndarray]:
    """NFC of one window and its origins relative to the window's start (memoized: texts repeat
    their words; the arrays are never written to)."""
    a = unicode_form(Aligned.of(window), "NFC")
    return (a.text, np.array([o[0] for o in a.origins], dtype=np.int64),
            np.array([o[1] for o in a.origins], dtype=np.int64))


def hull_offsets(lo: np.ndarray, hi: np.ndarray, changed: np.ndarray, starts: np.ndarray,
                 ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Original spans of the (non-empty) normalized spans ``[starts[k], ends[k])``: ``min(lo)`` and
    ``max(hi)`` over each span; outside changed windows those are its first ``lo`` and last ``hi``."""
    out_lo, out_hi = lo[starts].copy(), hi[ends - 1].copy()
    touched = np.concatenate([[0], np.cumsum(changed)])
    for k in np.flatnonzero(touched[ends] > touched[starts]).tolist():
        s, e = int(starts[k]), int(ends[k])
        out_lo[k], out_hi[k] = lo[s:e].min(), hi[s:e].max()
    return out_lo, out_hi
