"""HF ``tokenizers``' Unicode normalization forms (NFC, NFD, NFKC, NFKD) as a compiled step over
aligned code point arrays: :func:`_form`, the ``FORM`` row of ``tokspec.fast._hf_norm_kernels``
(whose module docstring defines the state: code points, HF spans, contract origins).

UAX #15 over the tables of ``tokspec.fast._hf_norm_tables``: each character is replaced by its
decomposition (first kept, rest inserted), runs of non-starters are stably sorted by combining
class, and with composition each character not blocked from the last starter composes with it
(the composite's change is the sum of both minus one; its origin is the hull of the two sources);
HF's spans are positional, so a reordered mark takes its slot's span.

Theorem relied on to skip work: before a starter with no decomposition that is not the second of
any composition (an *inert* character), no step looks across, so the text is processed per segment
between inert characters and an inert character alone is copied (UAX #15, the
``NFC_Quick_Check`` boundary). The same holds before any character whose decomposition starts with
a starter that, with composition, is the second of no pair (reordering never moves a character
across a starter; composition pairs a character only with the last starter before it): where the
info table carries the bits of :func:`mark_form_bits` (``tokspec.fast._hf_compiled`` passes such a
copy), segments also end before such characters (``é``, ``ё``, a Hangul syllable under NFC), and a
segment of one character whose own segment pass returns it unchanged is copied; without the bits
the segments are the inert ones (slower, same output). Checked by ``tests/test_fast_hf_form_bits.py``
(with the bits == without, on every decomposable character) and ``tests/test_fast_hf_norm.py``
(against ``tokspec.formats.normalize`` and HF). Cost: O(n) for n characters, plus a binary search
per composition candidate; a run of L non-starters is sorted in place (L <= 16) or by a merge sort.
"""

from __future__ import annotations

import numpy as np

from tokspec._jit import kernel

__all__ = ["LIMIT", "mark_form_bits"]

LIMIT = 0x30000  # tokspec.fast._hf_norm_tables.LIMIT: tables have LIMIT + 1 entries, lookups clamp to it
_SECOND, _CANON, _COMPAT = 1 << 8, 1 << 9, 1 << 10  # the tables' info bits (the tests check they agree)
#: info bits set by :func:`mark_form_bits` in a copy of the tables' info, shifted by the form (0-3):
#: ``_ALONE``: the character alone is its own normalization, aligned to itself (what
#: :func:`_form_segment` returns on it alone); ``_BOUNDARY``: no step of the form looks across the
#: boundary before the character (the first character of its decomposition is a starter, and with
#: composition not the second of any pair)
_ALONE, _BOUNDARY = 1 << 11, 1 << 15
_SHORT_RUN = 16  # runs of non-starters up to this length are sorted in place (_sort_run)


@kernel
def _state(size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Uninitialized state arrays of ``size`` characters."""
    return (np.empty(size, np.int32), np.empty(size, np.int64), np.empty(size, np.int64),
            np.empty(size, np.int64), np.empty(size, np.int64))


@kernel
def _ccc(info: np.ndarray, c: int) -> int:
    return int(info[min(c, LIMIT)] & 255)


@kernel
def _inert(info: np.ndarray, c: int, mask: int, boundary: int) -> bool:
    """No step of the form looks across the boundary before ``c`` (module docstring): ``c`` is
    inert (no bit of ``mask``) or has the form's ``_BOUNDARY`` bit."""
    bits = info[min(c, LIMIT)]
    return bool(bits & mask == 0 or bits & boundary)


@kernel
def _compose(keys: np.ndarray, vals: np.ndarray, a: int, b: int) -> int:
    """The primary composite of ``a`` + ``b``, or -1 (binary search of the sorted pair keys)."""
    key = (np.int64(a) << 21) | b
    i = np.searchsorted(keys, key)
    if i < len(keys) and keys[i] == key:
        return int(vals[i])
    return -1


@kernel
def _sort_run(tcp: np.ndarray, tch: np.ndarray, tlo: np.ndarray, thi: np.ndarray, i: int, j: int,
              info: np.ndarray) -> None:
    """Stable sort of ``[i, j)`` by combining class: nothing for a run of fewer than two, an
    insertion sort in place (no allocation; strict comparison keeps it stable) up to
    ``_SHORT_RUN`` characters, else a merge sort, O(L log L) on a run of L."""
    if j - i < 2:
        return
    if j - i <= _SHORT_RUN:
        for k in range(i + 1, j):
            c, h, lo, hi = tcp[k], tch[k], tlo[k], thi[k]
            key = _ccc(info, c)
            q = k
            while q > i and _ccc(info, tcp[q - 1]) > key:
                tcp[q], tch[q], tlo[q], thi[q] = tcp[q - 1], tch[q - 1], tlo[q - 1], thi[q - 1]
                q -= 1
            tcp[q], tch[q], tlo[q], thi[q] = c, h, lo, hi
        return
    cls = np.empty(j - i, np.int64)
    for k in range(i, j):
        cls[k - i] = _ccc(info, tcp[k])
    order = np.argsort(cls, kind="mergesort") + i
    tcp[i:j], tch[i:j], tlo[i:j], thi[i:j] = tcp[order], tch[order], tlo[order], thi[order]


@kernel
def _form_segment(cp: np.ndarray, s: int, e: int, compat: int, compose: bool, info: np.ndarray,
                  dec_start: np.ndarray, dec_flat: np.ndarray, keys: np.ndarray, vals: np.ndarray,
                  tcp: np.ndarray, tch: np.ndarray, tlo: np.ndarray, thi: np.ndarray) -> int:
    """Decompose, reorder and (``compose``) recompose ``cp[s:e]`` into ``t*`` (code point, change,
    first and last source index); returns the count."""
    t = 0
    for i in range(s, e):  # full decomposition: the first character replaces, the rest insert
        c = cp[i]
        at = dec_start[compat, min(c, LIMIT)]
        if at < 0:
            tcp[t], tch[t], tlo[t], thi[t] = c, 0, i, i
            t += 1
        else:
            for q in range(dec_flat[at]):
                tcp[t], tch[t], tlo[t], thi[t] = dec_flat[at + 1 + q], 1 if q else 0, i, i
                t += 1
    i = 0
    while i < t:  # canonical ordering of each run of non-starters [i, j) (j: a starter or the end)
        j = i
        while j < t and _ccc(info, tcp[j]) != 0:
            j += 1
        _sort_run(tcp, tch, tlo, thi, i, j, info)
        i = j + 1
    if not compose:
        return t
    k = 0
    starter = -1
    last = -1  # ccc of the last character kept after the starter (-1: none)
    for q in range(t):
        c = tcp[q]
        ccc = _ccc(info, c)
        if starter >= 0 and last < ccc and info[c] & _SECOND:  # not blocked (last: -1 or a mark's class)
            comp = _compose(keys, vals, tcp[starter], c)
            if comp >= 0:
                tcp[starter] = comp
                tch[starter] += tch[q] - 1
                tlo[starter] = min(tlo[starter], tlo[q])
                thi[starter] = max(thi[starter], thi[q])
                continue
        if ccc == 0:
            starter, last = k, -1
        else:
            last = ccc
        tcp[k], tch[k], tlo[k], thi[k] = c, tch[q], tlo[q], thi[q]
        k += 1
    return k


@kernel
def _form(cp: np.ndarray, ss: np.ndarray, se: np.ndarray, os_: np.ndarray, oe: np.ndarray, form: int,
          info: np.ndarray, dec_start: np.ndarray, dec_flat: np.ndarray, keys: np.ndarray, vals: np.ndarray
          ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One normalization form (``form``: bit 1 compat, bit 0 compose) over the state (module docstring)."""
    m = len(cp)
    compat, compose = (form >> 1) & 1, (form & 1) == 1
    mask = 255 | (_COMPAT if compat else _CANON) | (_SECOND if compose else 0)
    alone, boundary = _ALONE << form, _BOUNDARY << form
    size = 0
    for i in range(m):
        at = dec_start[compat, min(cp[i], LIMIT)]
        size += 1 if at < 0 else dec_flat[at]
    ncp, nss, nse, nos, noe = _state(size)
    tcp, tch, tlo, thi = np.empty(size, np.int32), np.empty(size, np.int64), np.empty(size, np.int64), \
        np.empty(size, np.int64)
    k = 0
    s = 0
    while s < m:
        e = s + 1
        while e < m and not _inert(info, cp[e], mask, boundary):
            e += 1
        if e == s + 1 and (info[min(cp[s], LIMIT)] & alone or _inert(info, cp[s], mask, 0)):  # stable alone
            ncp[k], nss[k], nse[k], nos[k], noe[k] = cp[s], ss[s], se[s], os_[s], oe[s]
            k += 1
            s = e
            continue
        t = _form_segment(cp, s, e, compat, compose, info, dec_start, dec_flat, keys, vals, tcp, tch, tlo, thi)
        pos = s
        for q in range(t):  # HF's positional spans; the contract's origins follow the sources
            at = pos - 1  # an insertion: the last consumed character (never the segment's first output)
            if tch[q] <= 0:
                at = pos
                pos += 1 - tch[q]
            ncp[k], nss[k], nse[k] = tcp[q], ss[at], se[at]
            nos[k], noe[k] = min(os_[tlo[q]], os_[thi[q]]), max(oe[tlo[q]], oe[thi[q]])
            k += 1
        s = e
    return ncp[:k], nss[:k], nse[:k], nos[:k], noe[:k]


@kernel
def mark_form_bits(info: np.ndarray, form: int, dec_start: np.ndarray, dec_flat: np.ndarray, keys: np.ndarray,
                   vals: np.ndarray) -> None:
    """Set the bits ``_ALONE << form`` and ``_BOUNDARY << form`` of ``info`` in place, every entry
    (``_ALONE``: the character alone comes out of :func:`_form_segment` as itself, with no change
    and its own source, so :func:`_form` copies it: exact by construction, the bit is the segment
    pass's own result, Unicode's ``NFC_Quick_Check=Yes`` for one character; ``_BOUNDARY``: the
    first character ``d`` of its decomposition (itself if none) has combining class 0 and, with
    composition, is the second of no pair: reordering never moves a character across a starter,
    and composition pairs a character only with the last starter before it, so nothing before
    ``d`` interacts with ``d`` or anything after it)."""
    compat, compose = (form >> 1) & 1, (form & 1) == 1
    one = np.empty(1, np.int32)
    size = 1 + int(dec_flat.max())  # the longest decomposition
    tcp, tch, tlo, thi = np.empty(size, np.int32), np.empty(size, np.int64), np.empty(size, np.int64), \
        np.empty(size, np.int64)
    for c in range(len(info)):
        at = dec_start[compat, c]
        first = c if at < 0 else dec_flat[at + 1]
        if _ccc(info, first) == 0 and not (compose and info[min(first, LIMIT)] & _SECOND):
            info[c] |= _BOUNDARY << form
        if at >= 0:
            one[0] = c
            t = _form_segment(one, 0, 1, compat, compose, info, dec_start, dec_flat, keys, vals, tcp, tch, tlo, thi)
            if not (t == 1 and tcp[0] == c and tch[0] == 0 and tlo[0] == 0 and thi[0] == 0):
                continue
        info[c] |= _ALONE << form
