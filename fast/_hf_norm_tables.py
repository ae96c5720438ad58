"""HF ``tokenizers``' Unicode normalization tables as numpy arrays, built at load from ``unicodedata``.

What the compiled normalizers (``tokspec.fast._hf_norm_kernels``) look up, per code point: the
canonical combining class, the full canonical and compatibility decompositions, whether the
character is the second of a primary composition, and the primary composites themselves. The data
is Python's ``unicodedata`` corrected by the deltas of ``tokspec._hf_unicode`` (where HF's Rust tables,
``unicode-normalization-alignments``, are older): the definitions are HF's documented NFC/NFD/NFKC/
NFKD (UAX #15) over those tables, written out per character here:

- ``ccc(c)``: 0 if ``c`` is in ``CCC_ZERO``, else ``unicodedata.combining(c)``;
- ``decomposition(c, compat)``: ``c`` itself if ``c`` is in ``NO_CANONICAL_DECOMP`` (or, compat,
  ``NO_COMPAT_DECOMP``), else Python's full NFD (NFKD) of ``c``;
- ``compose(a, b)``: the single character Python's NFC makes of ``a + b``, unless it is in
  ``NO_CANONICAL_DECOMP``; pairs are the two-character canonical decompositions and Hangul LV/LVT.

Unicode version: these tables are HF's only if Python's ``unicodedata`` is the version the deltas
were probed against (:data:`PROBED_UNIDATA`, Python 3.11); :func:`unicode_tables` records the running
version in :attr:`UnicodeTables.unidata_version`, and ``tests/test_fast_hf_norm.py`` checks the match
(a mismatch is a finding, not silently accepted). Build: O(LIMIT) Python steps (about 0.2 s), once per
process. Out of scope: lowercase, BERT character classes.
"""

from __future__ import annotations

import functools
import unicodedata
from dataclasses import dataclass

import numpy as np
import regex

from tokspec import _hf_unicode as hfu

__all__ = ["LIMIT", "PROBED_UNIDATA", "SECOND", "UnicodeTables", "class_bits", "unicode_tables"]

#: No code point at or above this has a decomposition or a non-zero combining class (Unicode 14:
#: the last are the CJK compatibility ideographs supplement, U+2F800..U+2FA1D); checked by the tests.
LIMIT = 0x30000
#: ``unicodedata.unidata_version`` the ``tokspec._hf_unicode`` deltas were derived with.
PROBED_UNIDATA = "14.0.0"
SECOND = 1 << 8     # info bit: the character is the second of a primary composition pair
CANON = 1 << 9      # info bit: canonical decomposition is not the character itself
COMPAT = 1 << 10    # info bit: compatibility decomposition is not the character itself


@dataclass(frozen=True)
class UnicodeTables:
    """Per code point up to :data:`LIMIT` (which has no data: the kernels look up ``min(c, LIMIT)``): ``info`` (ccc in bits 0-7, then :data:`SECOND`,
    :data:`CANON`, :data:`COMPAT`); ``dec_start[k, c]`` (k = 0 canonical, 1 compat) indexes
    ``dec_flat``, where a decomposition is stored as its length then its code points (-1: none);
    ``pair_keys`` sorted ``a << 21 | b`` with ``pair_vals`` the composite."""

    info: np.ndarray
    dec_start: np.ndarray
    dec_flat: np.ndarray
    pair_keys: np.ndarray
    pair_vals: np.ndarray
    unidata_version: str


def hf_ccc(c: str) -> int:
    """HF's canonical combining class of ``c`` (module docstring)."""
    ccc = unicodedata.combining(c)
    return 0 if ccc and hfu.in_ranges(ord(c), hfu.CCC_ZERO) else ccc


def hf_decomposition(c: str, compat: bool) -> str:
    """HF's full decomposition of ``c`` (module docstring; the characters of ``NO_COMPAT_DECOMP``
    have no canonical decomposition, so both lists hold for both kinds)."""
    if hfu.in_ranges(ord(c), hfu.NO_CANONICAL_DECOMP + hfu.NO_COMPAT_DECOMP):
        return c
    return unicodedata.normalize("NFKD" if compat else "NFD", c)


def _pair(cp: int, mapping: str) -> tuple[int, int] | None:
    """The pair ``cp`` is the primary composite of, from its decomposition mapping, or None
    (compatibility mappings are tagged and skipped)."""
    if not mapping:  # a Hangul syllable (no mapping, yet NFD changes it): LV = L + V, LVT = LV + T
        t = (cp - 0xAC00) % 28
        a, b = (cp - t, 0x11A7 + t) if t else map(ord, unicodedata.normalize("NFD", chr(cp)))
    else:
        parts = mapping.split()
        if len(parts) != 2 or parts[0].startswith("<"):  # a compatibility mapping: no composite
            return None
        a, b = int(parts[0], 16), int(parts[1], 16)
    if unicodedata.normalize("NFC", chr(a) + chr(b)) != chr(cp) or hfu.in_ranges(cp, hfu.NO_CANONICAL_DECOMP):
        return None
    return a, b


@functools.lru_cache(maxsize=1)
def unicode_tables() -> UnicodeTables:
    """The tables (module docstring), built once per process."""
    info = np.zeros(LIMIT + 1, dtype=np.int32)  # LIMIT itself: a code point with no data (the clamp)
    dec_start = np.full((2, LIMIT + 1), -1, dtype=np.int32)
    flat: list[int] = []
    pairs: dict[tuple[int, int], int] = {}
    for cp in [*range(0xD800), *range(0xE000, LIMIT + 1)]:
        c = chr(cp)
        info[cp] = hf_ccc(c)
        mapping = unicodedata.decomposition(c)
        if not mapping and unicodedata.is_normalized("NFD", c):  # no decomposition of any kind
            continue
        pair = _pair(cp, mapping)
        if pair is not None:
            pairs[pair] = cp
        for k, bit in ((0, CANON), (1, COMPAT)):
            d = hf_decomposition(c, bool(k))
            if d != c:
                info[cp] |= bit
                dec_start[k, cp] = len(flat)
                flat += [len(d), *map(ord, d)]
    keys = np.array(sorted((a << 21) | b for a, b in pairs), dtype=np.int64)
    vals = np.array([pairs[(int(k) >> 21, int(k) & 0x1FFFFF)] for k in keys], dtype=np.int32)
    for _, b in pairs:
        info[b] |= SECOND
    return UnicodeTables(info, dec_start, np.array(flat or [0], dtype=np.int32), keys, vals,
                         unicodedata.unidata_version)


@functools.lru_cache(maxsize=1)
def _all_code_points() -> tuple[str, np.ndarray]:
    """Every scalar value as one string, and the code point at each index."""
    index = np.concatenate([np.arange(0xD800), np.arange(0xE000, 0x110000)])
    return index.astype(np.uint32).tobytes().decode("utf-32-le"), index


def class_bits(patterns: list[regex.Pattern[str]]) -> np.ndarray | None:
    """uint8 membership over all code points: bit ``j`` set where pattern ``j`` matches the one
    character (at most 8 patterns). None if a pattern ever matches other than exactly one
    character (then it is no character class, and the caller has no compiled plan)."""
    bits = np.zeros(0x110000, dtype=np.uint8)
    if len(patterns) > 8:
        return None
    text, index = _all_code_points()
    for j, pattern in enumerate(patterns):
        hits = []
        for m in pattern.finditer(text):
            if m.end() - m.start() != 1:
                return None
            hits.append(m.start())
        bits[index[np.array(hits, dtype=np.int64)]] |= np.uint8(1 << j)
    return bits
