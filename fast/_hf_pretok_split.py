"""HF ``Split``, ``Whitespace`` and ``WhitespaceSplit`` over an aligned normalized state, compiled.

Input: the state ``tokspec.fast._hf_norm_kernels.run_chain`` returns (code points with HF spans and
contract origins) and a program of split steps (rows ``(kind, a, b, behavior, invert)``, built by
``tokspec.fast._hf_split_plan``). A piece is a range ``[start, end)`` of the normalized code
points; the text starts as one piece (HF's root) and every step cuts each piece again, exactly as
``tokspec.formats.hf_split.SplitStep`` does (the oracle; ``tests/test_fast_hf_split.py`` checks
both agree, and HF ``tokenizers``):

- matches are found inside one piece, never across two: ``CLASS`` with ``least == 0`` makes every
  character whose class bit ``a`` is set a match of its own (a one-character-class regex), with
  ``least >= 1`` every maximal run of such characters at least ``least`` long (``X+``, ``X{k,}``:
  leftmost-greedy, a shorter run has no match); ``STRING`` the leftmost non-overlapping
  occurrences of the literal ``strs[a:a+b]``; ``WORDS`` (HF ``Whitespace``, ``\\w+|[^\\w\\s]+``
  inverted and ``Removed``) keeps the maximal runs of word characters (bit ``a``) and of the
  characters neither word nor space (bit ``b``), each run a piece, and drops the rest;
- matches and the gaps between them tile the piece; ``invert`` swaps their roles, and the
  behavior (:data:`ISOLATED` ... :data:`CONTIGUOUS`, HF's ``SplitDelimiterBehavior``) joins them
  into pieces as ``tokspec.formats.hf_split.apply_behavior`` does; empty pieces are dropped.

Then :func:`pieces_arrays` writes the pieces out (UTF-8 bytes, pretoken byte bounds, per character
origin start/end and HF span start/end, what ``DatrieUnigram.normalized`` returns), through HF's
``Metaspace`` when one ends the pipeline: per piece every space becomes the marker, a marker goes in
front of a piece not starting with one (``prepend`` 1: always; 2: ``first``, a piece whose first
character's HF span starts at 0, or the unsplit root), and with ``split`` a pretoken starts at every
marker but the piece's first character. O(m * steps) (``STRING``: O(m * len(literal)) at worst).
Out of scope (no compiled plan): regexes other than one character class, Metaspace before a split.
"""

from __future__ import annotations

import numpy as np

from tokspec._jit import kernel

__all__ = ["CLASS", "STRING", "WORDS", "ISOLATED", "REMOVED", "MERGED_WITH_PREVIOUS", "MERGED_WITH_NEXT",
           "CONTIGUOUS", "split_pieces", "pieces_arrays"]

CLASS, STRING, WORDS = 0, 1, 2
ISOLATED, REMOVED, MERGED_WITH_PREVIOUS, MERGED_WITH_NEXT, CONTIGUOUS = range(5)


@kernel
def _klass(c: int, kind: int, a: int, b: int) -> int:
    """A character's class under step kind ``kind``: CLASS 1 in the class, 0 not; WORDS 1 word,
    0 space, 2 other (word comes first: ``\\w+`` is the first alternative)."""
    if kind == CLASS:
        return (c >> a) & 1
    if (c >> a) & 1:
        return 1
    return 0 if (c >> b) & 1 else 2


@kernel
def _matches(cp: np.ndarray, bits: np.ndarray, s: int, e: int, row: np.ndarray, strs: np.ndarray,
             ms: np.ndarray, me: np.ndarray) -> int:
    """The matches of step ``row`` in piece ``[s, e)`` into ``ms``/``me``, in order; their count."""
    kind, a, b = row[0], row[1], row[2]
    n = 0
    i = s
    if kind == STRING:
        while i + b <= e:
            j = 0
            while j < b and cp[i + j] == strs[a + j]:
                j += 1
            if j == b:
                ms[n], me[n] = i, i + b
                n += 1
                i += b
            else:
                i += 1
        return n
    while i < e:
        hit = _klass(bits[cp[i]], kind, a, b)
        if hit == 0:
            i += 1
            continue
        j = i + 1
        if kind == CLASS and b == 0:  # one character, one match
            ms[n], me[n] = i, j
            n += 1
            i = j
            continue
        while j < e and _klass(bits[cp[j]], kind, a, b) == hit:
            j += 1
        if kind == WORDS or j - i >= b:
            ms[n], me[n] = i, j
            n += 1
        i = j
    return n


@kernel
def _cut(s: int, e: int, ms: np.ndarray, me: np.ndarray, n: int, behavior: int, invert: bool,
         rs: np.ndarray, re_: np.ndarray, rm: np.ndarray, out_s: np.ndarray, out_e: np.ndarray, k: int) -> int:
    """Pieces of ``[s, e)`` from its ``n`` matches by ``behavior``/``invert``, appended to
    ``out_s``/``out_e`` from ``k`` (empty ones dropped); the new count."""
    r = 0  # the runs tiling [s, e): (rs, re_, rm = is a delimiter)
    pos = s
    for t in range(n):
        if ms[t] > pos:
            rs[r], re_[r], rm[r] = pos, ms[t], invert
            r += 1
        rs[r], re_[r], rm[r] = ms[t], me[t], not invert
        r += 1
        pos = me[t]
    if pos < e:
        rs[r], re_[r], rm[r] = pos, e, invert
        r += 1
    if behavior == MERGED_WITH_NEXT:  # the mirror of MERGED_WITH_PREVIOUS, read from the right
        first = k
        before = False
        for t in range(r - 1, -1, -1):
            if rm[t] and not before and k > first:
                out_s[k - 1] = rs[t]
            else:
                out_s[k], out_e[k] = rs[t], re_[t]
                k += 1
            before = rm[t]
        out_s[first:k] = out_s[first:k][::-1].copy()
        out_e[first:k] = out_e[first:k][::-1].copy()
        return k
    first = k
    before = False
    for t in range(r):
        if behavior == REMOVED and rm[t]:
            continue
        join = k > first and ((behavior == MERGED_WITH_PREVIOUS and rm[t] and not before)
                              or (behavior == CONTIGUOUS and rm[t] == before))
        if join:
            out_e[k - 1] = re_[t]
        else:
            out_s[k], out_e[k] = rs[t], re_[t]
            k += 1
        before = rm[t]
    return k


@kernel
def split_pieces(cp: np.ndarray, bits: np.ndarray, prog: np.ndarray, strs: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray]:
    """(starts, ends) of the pieces of the whole text after every step of ``prog`` (module docstring)."""
    m = len(cp)
    starts = np.zeros(1, np.int64)
    ends = np.full(1, m, np.int64)
    ms, me = np.empty(m + 1, np.int64), np.empty(m + 1, np.int64)
    rs, re_, rm = np.empty(2 * m + 2, np.int64), np.empty(2 * m + 2, np.int64), np.empty(2 * m + 2, np.bool_)
    for q in range(len(prog)):
        row = prog[q]
        out_s, out_e = np.empty(m + 1, np.int64), np.empty(m + 1, np.int64)
        k = 0
        for p in range(len(starts)):
            s, e = starts[p], ends[p]  # never empty but the root of an empty text (no match, no piece)
            n = _matches(cp, bits, s, e, row, strs, ms, me)
            if row[0] == WORDS:  # the matches are the pieces
                out_s[k:k + n], out_e[k:k + n] = ms[:n], me[:n]
                k += n
            else:
                k = _cut(s, e, ms, me, n, row[3], row[4] != 0, rs, re_, rm, out_s, out_e, k)
        starts, ends = out_s[:k], out_e[:k]
    return starts, ends


@kernel
def _put(data: np.ndarray, k: int, c: int) -> int:
    """Write code point ``c`` as UTF-8 at ``data[k]``; the next free index."""
    if c < 0x80:
        data[k] = c
        return k + 1
    if c < 0x800:
        data[k], data[k + 1] = 0xC0 | (c >> 6), 0x80 | (c & 0x3F)
        return k + 2
    if c < 0x10000:
        data[k], data[k + 1], data[k + 2] = 0xE0 | (c >> 12), 0x80 | ((c >> 6) & 0x3F), 0x80 | (c & 0x3F)
        return k + 3
    data[k], data[k + 1] = 0xF0 | (c >> 18), 0x80 | ((c >> 12) & 0x3F)
    data[k + 2], data[k + 3] = 0x80 | ((c >> 6) & 0x3F), 0x80 | (c & 0x3F)
    return k + 4


@kernel
def pieces_arrays(cp: np.ndarray, ss: np.ndarray, se: np.ndarray, os_: np.ndarray, oe: np.ndarray,
                  starts: np.ndarray, ends: np.ndarray, metaspace: bool, marker: int, prepend: int, split: bool,
                  root: bool, alignment: bool
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(bytes, bounds, origin starts, origin ends, span starts, span ends) of the pieces
    ``[starts[p], ends[p])`` (module docstring; ``root``: the pieces are the unsplit text;
    ``alignment=False``: the last four are empty)."""
    npieces = len(starts)
    lead = np.zeros(npieces, np.bool_)
    n = 0
    for p in range(npieces):
        s, e = starts[p], ends[p]
        if metaspace and e > s and cp[s] != 32 and cp[s] != marker:
            lead[p] = prepend == 1 or (prepend == 2 and (root or ss[s] == 0))
        n += e - s + lead[p]
    chars = np.empty(n, np.int64)  # the output characters, their source index (-1 - i: a marker put before i)
    src = np.empty(n, np.int64)
    first = np.zeros(n, np.bool_)  # does a pretoken start here?
    t = 0
    for p in range(npieces):
        s, e = starts[p], ends[p]
        if e <= s:
            continue
        first[t] = True
        if lead[p]:
            chars[t], src[t] = marker, -1 - s
            t += 1
        for i in range(s, e):
            c = cp[i]
            if metaspace and c == 32:
                c = marker
            if metaspace and split and c == marker and i > s:
                first[t] = True
            chars[t], src[t] = c, i
            t += 1
    size = 0
    cuts = 0
    for i in range(n):
        c = chars[i]
        size += 1 + (c >= 0x80) + (c >= 0x800) + (c >= 0x10000)
        cuts += first[i]
    data = np.empty(size, np.uint8)
    bounds = np.empty(cuts + 1, np.int64)
    bounds[0] = 0
    na = n if alignment else 0
    a0, a1, a2, a3 = np.empty(na, np.int64), np.empty(na, np.int64), np.empty(na, np.int64), np.empty(na, np.int64)
    k = 0
    b = 0
    for i in range(n):
        if first[i] and i > 0:
            b += 1
            bounds[b] = k
        k = _put(data, k, chars[i])
        j = src[i]
        if not alignment:
            continue
        if j < 0:  # a marker put in front: the next character's HF span, an empty origin at its start
            j = -1 - j
            a0[i], a1[i], a2[i], a3[i] = ss[j], ss[j], ss[j], se[j]
        else:
            a0[i], a1[i], a2[i], a3[i] = os_[j], oe[j], ss[j], se[j]
    if n > 0:
        bounds[cuts] = k
    return data, bounds, a0, a1, a2, a3
