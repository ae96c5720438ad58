"""HF ``Precompiled`` (a sentencepiece charsmap applied HF's way) as a kernel over an aligned state.

Input: the state of ``tokspec.fast._hf_norm_kernels`` (code points ``cp``, HF spans ``ss``/``se``,
contract origins ``os_``/``oe``) and ``joined``: ``joined[i]`` is true when character ``i``
continues the extended grapheme cluster of character ``i - 1`` (``tokspec.fast._hf_clusters``).
What it computes is ``tokspec.formats.spm_normalize.hf_precompiled`` (the readable version, the
oracle of ``tests/test_fast_hf_precompiled.py``), HF's documented algorithm:

- per cluster: if it has at least two characters and fewer than 6 UTF-8 bytes, and some charsmap
  key is a prefix of its bytes, the whole cluster becomes the SHORTEST such key's replacement
  (HF's ``transform`` takes the first common-prefix match); otherwise each character alone is
  replaced by the shortest key prefixing its own bytes, or kept;
- HF's ``replace`` alignment: each new character an edit ``(c, 0)``; more new than old characters
  turn the last extra ones into insertions (change 1); fewer fold the difference into the LAST
  edit so far, even an earlier cluster's, and with no edit yet the deletion is simply lost (HF's
  spans are positional: later characters shift left);
- spans from the edit list (an edit with change <= 0 takes the next old character's span and
  consumes ``1 - change`` of them; an insertion the last consumed one's); origins per new character
  ``(os_[lo], max(oe[lo:hi]))`` over the old characters ``[lo, hi)`` it was made from.

The shortest key is found with ``tokspec.fast._spm_kernels.longest_key`` (the one charsmap walk)
limited to 1, 2, ... bytes: the first limit with a match is the shortest key (at most 5 walks of at
most 5 bytes); a lone character's result is memoized per code point (``memo``, owned by the plan).
Replacement strings are decoded from the pool by :func:`_decode` (the plan checks at build time
that the pool is valid UTF-8). Cost: O(n) for n characters (at most 25 trie steps each, once per
distinct character), output grows by doubling between runs of :func:`_edits`. Out of scope:
building the clusters (Python, ``regex``).
"""

from __future__ import annotations

import numpy as np

from tokspec._jit import kernel
from tokspec.fast._spm_kernels import longest_key

__all__ = ["CONSONANT", "GCB_VALUES", "INCB_EXTEND", "LINKER", "cluster_flags", "precompiled_step"]

#: Grapheme_Cluster_Break values, numbered as ``cluster_flags`` reads its table (0: Other).
GCB_VALUES = ("Other", "CR", "LF", "Control", "Extend", "ZWJ", "Regional_Indicator", "Prepend", "SpacingMark",
              "L", "V", "T", "LV", "LVT")
_CR, _LF, _CONTROL, _EXTEND, _ZWJ, _RI, _PREPEND, _SPACING, _L, _V, _T, _LV, _LVT = range(1, 14)
CONSONANT, LINKER, INCB_EXTEND = 1, 2, 3  # Indic_Conjunct_Break values in the ``incb`` table (0: None)


@kernel
def cluster_flags(cps: np.ndarray, gcb: np.ndarray, pict: np.ndarray, incb: np.ndarray, out: np.ndarray) -> bool:
    """``out[i]``: character ``i`` continues the extended grapheme cluster of ``i - 1`` (UAX #29
    rules GB3-GB13 with GB9c, over per-code-point tables: ``gcb`` the Grapheme_Cluster_Break value
    numbered as :data:`GCB_VALUES`, ``pict`` Extended_Pictographic, ``incb`` Indic_Conjunct_Break);
    returns whether any is set. Context is carried in three states: the length of the run of
    Regional_Indicators before ``i`` (GB12/13: join after an odd run), ``ExtPict Extend*`` then
    ``ZWJ`` (GB11), and ``Consonant [Extend Linker]*`` with or without a Linker (GB9c). O(n).
    Checked against ``regex``'s ``\\X`` by ``tests/test_fast_hf_precompiled.py``."""
    any_join = False
    ri_run = 0
    pict_ext = False   # the characters up to i - 1 end with ExtPict Extend*
    pict_zwj = False   # ... end with ExtPict Extend* ZWJ
    conj = 0           # ... end with Consonant [Extend Linker]*: 1 without a Linker, 2 with one
    p = -1
    for i in range(len(cps)):
        c = cps[i]
        g = gcb[c]
        join = False
        if i > 0:
            if p == _CR and g == _LF:
                join = True
            elif p == _CONTROL or p == _CR or p == _LF or g == _CONTROL or g == _CR or g == _LF:
                join = False
            elif p == _L and (g == _L or g == _V or g == _LV or g == _LVT):
                join = True
            elif (p == _LV or p == _V) and (g == _V or g == _T):
                join = True
            elif (p == _LVT or p == _T) and g == _T:
                join = True
            elif g == _EXTEND or g == _ZWJ or g == _SPACING or p == _PREPEND:
                join = True
            elif incb[c] == CONSONANT and conj == 2:
                join = True
            elif pict_zwj and pict[c]:
                join = True
            elif g == _RI and ri_run % 2 == 1:
                join = True
        out[i] = join
        any_join = any_join or join
        pict_zwj = pict_ext and g == _ZWJ
        pict_ext = bool(pict[c]) or (pict_ext and g == _EXTEND)
        ri_run = ri_run + 1 if g == _RI else 0
        k = incb[c]
        conj = 1 if k == CONSONANT else (2 if conj > 0 and k == LINKER else (conj if k == INCB_EXTEND else 0))
        p = g
    return any_join


@kernel
def _put_utf8(buf: np.ndarray, k: int, c: int) -> int:
    """Write ``c``'s UTF-8 bytes at ``buf[k:]``; returns the new end."""
    if c < 0x80:
        buf[k] = c
        return k + 1
    if c < 0x800:
        buf[k], buf[k + 1] = 0xC0 | (c >> 6), 0x80 | (c & 0x3F)
        return k + 2
    if c < 0x10000:
        buf[k], buf[k + 1], buf[k + 2] = 0xE0 | (c >> 12), 0x80 | ((c >> 6) & 0x3F), 0x80 | (c & 0x3F)
        return k + 3
    buf[k], buf[k + 1] = 0xF0 | (c >> 18), 0x80 | ((c >> 12) & 0x3F)
    buf[k + 2], buf[k + 3] = 0x80 | ((c >> 6) & 0x3F), 0x80 | (c & 0x3F)
    return k + 4


@kernel
def _shortest(buf: np.ndarray, n: int, units: np.ndarray, root: int) -> int:
    """The pool index of the SHORTEST charsmap key prefixing ``buf[:n]``, or -1."""
    for limit in range(1, n + 1):
        used, at = longest_key(buf, 0, limit, units, root)
        if used > 0:
            return int(at)
    return -1


@kernel
def _decode(pool: np.ndarray, at: int, out: np.ndarray, k: int) -> int:
    """The code points of the NUL-terminated UTF-8 string at ``pool[at:]`` into ``out[k:]``; the
    new end (``out`` must have room for as many entries as the string has bytes)."""
    i = at
    while i < len(pool) and pool[i] != 0:
        b = int(pool[i])
        n = 1 if b < 0x80 else 2 if b < 0xE0 else 3 if b < 0xF0 else 4
        c = b if n == 1 else b & (0x3F >> (n - 1))
        for q in range(1, n):
            c = (c << 6) | (int(pool[i + q]) & 0x3F)
        out[k] = c
        k += 1
        i += n
    return k


@kernel
def _grow(a: np.ndarray, need: int) -> np.ndarray:
    b = np.empty(max(need, 2 * len(a)), dtype=a.dtype)
    b[:len(a)] = a
    return b


@kernel
def _single(c: int, buf: np.ndarray, units: np.ndarray, root: int, memo: np.ndarray) -> int:
    """:func:`_shortest` of the one character ``c``, memoized per code point in ``memo``."""
    at = memo[c]
    if at == -2:
        at = _shortest(buf, _put_utf8(buf, 0, c), units, root)
        memo[c] = at
    return int(at)


@kernel
def _edits(cp: np.ndarray, joined: np.ndarray, s: int, t: int, units: np.ndarray, pool: np.ndarray, root: int,
           memo: np.ndarray, most: int, ecp: np.ndarray, ech: np.ndarray, elo: np.ndarray, ehi: np.ndarray
           ) -> tuple[int, int, int]:
    """The edit list from cluster start ``s`` on (``t`` edits so far), while a cluster's worst case
    (``most`` new characters per old one) fits: ``(s, t, room needed)``, ``s == len(cp)`` when done.
    The arrays are never reassigned here (a reassigned array costs reference counting per step)."""
    m = len(cp)
    buf = np.empty(12, np.uint8)  # a cluster is read while under 6 bytes: at most 5 + 4
    while s < m:
        e = s + 1
        while e < m and joined[e]:
            e += 1
        if t + (e - s) * most > len(ecp):
            return s, t, t + (e - s) * most
        at = -1
        if e - s >= 2:  # a cluster of fewer than 6 bytes is looked up whole
            nb = 0
            for i in range(s, e):
                nb = _put_utf8(buf, nb, cp[i]) if nb < 6 else nb + 1
            if nb < 6:
                at = _shortest(buf, nb, units, root)
        parts = 1 if at >= 0 else e - s
        for p in range(parts):
            lo, hi = (s, e) if at >= 0 else (s + p, s + p + 1)
            look = at if at >= 0 else memo[cp[lo]]
            if look == -2:  # the memo's miss (a call with array arguments costs; a hit is this load)
                look = _single(cp[lo], buf, units, root, memo)
            if look < 0:  # kept as it is
                ecp[t] = cp[lo]
                new = 1
            else:
                new = _decode(pool, look, ecp, t) - t
            for q in range(t, t + new):
                ech[q], elo[q], ehi[q] = 0, lo, hi
            diff = new - (hi - lo)
            for q in range(t + new - max(diff, 0), t + new):  # more new characters: the last are insertions
                ech[q] = 1
            t += new
            if diff < 0 and t > 0:  # fewer: folded into the last edit so far
                ech[t - 1] += diff
        s = e
    return s, t, 0


@kernel
def precompiled_step(cp: np.ndarray, ss: np.ndarray, se: np.ndarray, os_: np.ndarray, oe: np.ndarray,
                     joined: np.ndarray, units: np.ndarray, pool: np.ndarray, root: int, memo: np.ndarray,
                     most: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The state after HF ``Precompiled`` (module docstring). ``memo``: -2 per code point before
    the first call, then each character's own lookup (a pure function of the code point and the
    charsmap, so an entry is the same whoever writes it: threads may share the memo). ``most``: the
    longest replacement in bytes, at least 1 (a bound of the new characters per old one)."""
    m = len(cp)
    ecp = np.empty(m + 16, np.int32)  # the edit list: new character, change, old source [lo, hi)
    ech, elo, ehi = np.empty(m + 16, np.int64), np.empty(m + 16, np.int64), np.empty(m + 16, np.int64)
    s, t, need = _edits(cp, joined, 0, 0, units, pool, root, memo, most, ecp, ech, elo, ehi)
    while s < m:  # out of room: grow, go on from the cluster that did not fit
        ecp, ech, elo, ehi = _grow(ecp, need), _grow(ech, need), _grow(elo, need), _grow(ehi, need)
        s, t, need = _edits(cp, joined, s, t, units, pool, root, memo, most, ecp, ech, elo, ehi)
    ncp, nss, nse = ecp[:t].copy(), np.empty(t, np.int64), np.empty(t, np.int64)
    nos, noe = np.empty(t, np.int64), np.empty(t, np.int64)
    pos = 0
    for q in range(t):
        at = pos - 1  # an insertion: the last consumed old character (the first edit of a
        if ech[q] <= 0:  # replacement has change <= 0, so pos >= 1 at every insertion)
            at = pos
            pos += 1 - ech[q]
        nss[q], nse[q] = ss[at], se[at]
        end = oe[elo[q]]
        for i in range(elo[q] + 1, ehi[q]):  # a whole cluster: the furthest origin end
            end = max(end, oe[i])
        nos[q], noe[q] = os_[elo[q]], end
    return ncp, nss, nse, nos, noe
