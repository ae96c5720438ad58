"""Sentencepiece Unigram ids in one compiled call: normalizer, Viterbi and emission fused.

:func:`spm_ids` is ``DatrieUnigram.encode_ids`` for a sentencepiece model (float32 sums, the
first predecessor kept on ties) over the double array: :func:`tokspec.fast._spm_norm_ids.normalize_ids`,
then :func:`forward32` over the whole normalized text (one pretoken, as in sentencepiece), then
:func:`emit_ids`. It computes what ``_unigram_kernels.forward_da`` and
``_unigram_emit.encode_pretokens`` compute for this flavour, ids only; ``tests/test_fast_spm_ids.py``
checks it against sentencepiece, ``encode_arrays`` and the interpreted kernels.

Why it is faster than the general kernels (measured on 0.5-2 KB prose: forward 12.7 -> 9.8 ns per
byte, a dispatch of 15 arguments instead of 27, no intermediate copies):

- Path scores are float32 arrays summed in float32. Theorem relied on: for float32 ``a`` and
  ``b``, rounding their float64 sum (or difference) to float32 gives the float32 sum, since 53 >=
  2 * 24 + 2 (double rounding is innocuous: Figueroa, "When is double rounding innocuous?", 1995).
  So this is operation for operation the general kernel's ``np.float32(a + b)`` in float64; the
  comparisons of float32 values are exact in either width. Predecessors and piece ids are int32.
- The backtrack reverses the predecessor chain in place (``bstart[e]`` becomes the next end), so
  emission walks the path forwards with no edge arrays.

Buffers are the caller's (reused across calls); the return value is the token count, or
``-1 - size`` when a buffer is too short (``out`` needs ``size`` bytes, ``best``/``bstart``/``bid``/``ids``
``size + 1`` entries: grow them and call again). O(n * L) for n normalized bytes, L the longest piece.
Out of scope: HF pipelines, offsets, ``tie_break="last"``, the hash trie (the engine takes the general
kernels for those).
"""

from __future__ import annotations

import numpy as np
from tokspec.fast._spm_norm_ids import normalize_ids

from tokspec._jit import kernel

__all__ = ["emit_ids", "forward32", "spm_ids"]


@kernel
def forward32(data: np.ndarray, n: int, units: np.ndarray, scores: np.ndarray, unk_score: float,
              reset: float, best: np.ndarray, bstart: np.ndarray, bid: np.ndarray) -> None:
    """Viterbi forward pass over ``data[:n]`` (``units``: packed double array as ``forward_da``),
    in float32: ``best`` (float32) and ``bstart`` (-1 unreached) for ``0..n``, ``bid`` (-1: the
    unknown edge) at every reached position. Ties keep the first predecessor; ``reset > 0``
    re-bases as sentencepiece 0.2.x (``_unigram_kernels._rebase``)."""
    unk = np.float32(unk_score)
    for i in range(n + 1):
        best[i] = -np.inf
        bstart[i] = -1
    best[0] = 0
    frontier = 0
    for start in range(n):
        lead = data[start]
        if 0x80 <= lead < 0xC0:
            continue  # not a character start
        here = best[start]
        if reset > 0.0 and abs(here) > reset:
            for i in range(start, frontier + 1):  # subtract here from every reached position
                if i == start or bstart[i] >= 0:
                    best[i] = best[i] - here
            here = best[start]
        single = start + (1 if lead < 0x80 else (2 if lead < 0xE0 else (3 if lead < 0xF0 else 4)))
        has_single = False
        s = 0
        q = start
        while q < n:
            t = units[4 * s] + data[q]
            if units[4 * t + 1] != s:  # in range: the arrays are padded
                break
            s = t
            q += 1
            v = units[4 * s + 2]
            if v >= 0:
                frontier = max(frontier, q)
                cand = here + scores[v]
                if cand > best[q]:
                    best[q] = cand
                    bstart[q] = start
                    bid[q] = v
                if q == single:
                    has_single = True
            if units[4 * s + 3] == 0:  # no child
                break
        if not has_single:  # the unknown edge over one character
            end = min(single, n)
            frontier = max(frontier, end)
            cand = here + unk
            if cand > best[end]:
                best[end] = cand
                bstart[end] = start
                bid[end] = -1


@kernel
def emit_ids(data: np.ndarray, n: int, bstart: np.ndarray, bid: np.ndarray, unk_id: int,
             byte_ids: np.ndarray, ids: np.ndarray) -> int:
    """Tokens of the best path to ``n`` into ``ids``; returns their count. An unknown edge becomes
    its bytes' ``<0xNN>`` pieces when ``byte_ids`` (256 entries) has them all, else ``unk_id``,
    a run of such unknowns one ``unk_id`` (sentencepiece). Destroys ``bstart``."""
    after = -1
    e = n
    while e > 0:  # reverse the chain: bstart[e] becomes the end of the edge after e
        s = bstart[e]
        bstart[e] = after
        after = e
        e = s
    fallback = len(byte_ids) == 256
    k = 0
    s = 0
    e = after
    prev_unk = False
    while e > 0:
        pid = bid[e]
        if pid >= 0:
            ids[k] = pid
            k += 1
            prev_unk = False
        else:
            ok = fallback
            for q in range(s, e if fallback else s):
                if byte_ids[data[q]] < 0:
                    ok = False
            if ok:
                for q in range(s, e):
                    ids[k] = byte_ids[data[q]]
                    k += 1
                prev_unk = False
            elif not prev_unk:
                ids[k] = unk_id
                k += 1
                prev_unk = True
        s = e
        e = bstart[e]
    return k


@kernel
def spm_ids(data: np.ndarray, cm_units: np.ndarray, pool: np.ndarray, tables: np.ndarray, flags: int,
            units: np.ndarray, scores: np.ndarray, unk_score: float, unk_id: int, reset: float,
            byte_ids: np.ndarray, out: np.ndarray, best: np.ndarray, back: np.ndarray, ids: np.ndarray) -> int:
    """Ids of the UTF-8 bytes ``data`` into ``ids``; returns their count (or ``-1 - size``: module
    docstring). ``flags``: 1 dummy prefix, 2 remove extra whitespace, 4 escape spaces;
    ``cm_units``, ``pool``, ``tables``: the normalizer's (``normalize_ids``); ``units``,
    ``scores`` (float32), ``unk_score``, ``reset``, ``byte_ids``: the Viterbi's; ``back`` holds
    ``bstart`` then ``bid`` (int32, ``len(best)`` each)."""
    k = normalize_ids(data, cm_units, pool, tables, flags & 1 != 0, flags & 2 != 0, flags & 4 != 0, out)
    if k < 0:
        return k
    width = len(best)
    if k + 1 > width or k + 1 > len(ids) or 2 * width > len(back):
        return -1 - k
    bstart = back[:width]
    bid = back[width:2 * width]
    forward32(out, k, units, scores, unk_score, reset, best, bstart, bid)
    return emit_ids(out, k, bstart, bid, unk_id, byte_ids, ids)
