"""Compiled Unigram encoding: best paths -> tokens -> offsets (one source, two modes: ``tokspec._jit``).

:func:`encode_pretokens` is the whole fast encode after normalization, in one kernel call per text:
the Viterbi of ``tokspec.fast._unigram_kernels`` per pretoken, the backtrack, unknown edges turned
into tokens as the model's library does, then original-text offsets. Definitions:
``tokspec.formats.unigram_model``; checked by ``tests/test_fast_unigram_datrie.py`` and
``tests/test_fast_unigram_kernels.py`` against the reference and the libraries.

Loop shape (measured on English, ``fast:mon-unigram`` ids, ~6-byte pretokens): the trie kind is
tested once, outside the pretoken loop, and each trie's loop has the backtrack and emission written
out. With the test inside the loop, the two inlined passes' reference-count releases were merged
into one block that numba's pruning could not pair with the acquisitions, so every pretoken paid
six atomic increment/decrement pairs (the kernel ran 1.7x slower); with the emission in an
inlined helper kernel taking the arrays, it ran 2.4x slower (not in instruction counts: a stall).
Out of scope: n-best, sampling, user-defined symbols.
"""

from __future__ import annotations

import numpy as np
from tokspec.fast._unigram_kernels import (
    _char_len,
    char_of_byte_into,
    forward_da,
    forward_hash,
    lookup_da,
    lookup_hash,
)

from tokspec._jit import kernel

__all__ = ["encode_pretokens"]


@kernel
def _byte_tokens_ok(data: np.ndarray, lo: int, hi: int, byte_ids: np.ndarray) -> bool:
    """Byte fallback can cover ``data[lo:hi]`` (every byte has its ``<0xNN>`` piece)."""
    for q in range(lo, hi):
        if byte_ids[data[q]] < 0:
            return False
    return True


@kernel
def _emit_bytes(data: np.ndarray, lo: int, hi: int, byte_ids: np.ndarray, per_char: bool, hf: bool,
                ids: np.ndarray, ts: np.ndarray, te: np.ndarray, k: int) -> int:
    """Byte tokens of ``data[lo:hi]`` from ``k``; returns the new count. Spans: ``per_char`` (the
    contract) each byte its character; else the library's (HF: the whole run; sentencepiece: empty
    at the character's start but the last byte, whose span is the character)."""
    c0 = lo
    for q in range(lo, hi):
        if not 0x80 <= data[q] < 0xC0:
            c0 = q
        ids[k] = byte_ids[data[q]]
        if per_char:
            ts[k] = c0
            te[k] = c0 + _char_len(data[c0])
        elif hf:
            ts[k] = lo
            te[k] = hi
        else:
            ts[k] = lo
            te[k] = hi if q == hi - 1 else lo
        k += 1
    return k


@kernel
def _offsets(ts: np.ndarray, te: np.ndarray, k: int, cob: np.ndarray, o_start: np.ndarray,
             o_end: np.ndarray, sp_start: np.ndarray, sp_end: np.ndarray, contract: bool) -> None:
    """Byte spans of the normalized text -> original character offsets, in place.

    Contract: the hull of the non-empty origins of the token's characters (the empty span at the
    first origin if all are empty); library or empty tokens: first span start, last span end."""
    for i in range(k):
        cs = cob[ts[i]]
        ce = cob[te[i]]
        if contract and cs < ce:
            a = -1
            b = -1
            for c in range(cs, ce):
                if o_start[c] < o_end[c]:
                    a = o_start[c] if a < 0 else min(a, o_start[c])
                    b = max(b, o_end[c])
            if a < 0:
                a = o_start[cs]
                b = a
            ts[i] = a
            te[i] = b
        elif cs == ce:
            ts[i] = sp_start[cs]
            te[i] = sp_start[cs]
        else:
            ts[i] = sp_start[cs]
            te[i] = sp_end[ce - 1]


@kernel
def encode_pretokens(data: np.ndarray, bounds: np.ndarray, use_hash: bool, units: np.ndarray,
                     hkeys: np.ndarray, hchild: np.ndarray,
                     hmask: int, hvalue: np.ndarray, scores: np.ndarray, unk_score: float, unk_id: int,
                     f32: bool, last: bool, reset: float, hf: bool, fuse_unk: bool,
                     byte_ids: np.ndarray, contract: bool, o_start: np.ndarray, o_end: np.ndarray,
                     sp_start: np.ndarray, sp_end: np.ndarray, best: np.ndarray, bstart: np.ndarray,
                     bid: np.ndarray, es: np.ndarray, eid: np.ndarray, ids: np.ndarray, ts: np.ndarray,
                     te: np.ndarray, cob: np.ndarray, with_offsets: bool) -> int:
    """Ids and original character offsets of every pretoken ``data[bounds[p]:bounds[p+1]]``.

    Viterbi (:func:`forward_da` or :func:`forward_hash`), backtrack, then unknown edges become
    tokens as the model's library does (``hf``: runs fused when ``fuse_unk``, a run is its piece,
    else byte pieces, else ``unk_id``; sentencepiece: byte pieces per character, else runs merged
    into one ``unk_id``; ``byte_ids`` empty: no byte fallback), then :func:`_offsets` with the
    per-normalized-character arrays (``o_*``: contract origins, ``sp_*``: library spans).
    Returns the token count k: token i is ``ids[i]`` over ``ts[i]:te[i]``. Work arrays are the
    caller's (reused across calls: fresh pages cost more than the whole Viterbi): ``best`` ..
    ``eid`` of at least the longest pretoken + 1 entries, ``ids``/``ts``/``te`` of ``len(data)``
    (at most one token per byte), ``cob`` of ``len(data) + 1``. O(total bytes * L)."""
    fallback = len(byte_ids) == 256
    k = 0
    if use_hash:  # one loop per trie, the emission written out in each (see the module docstring)
        for p in range(len(bounds) - 1):
            lo = bounds[p]
            hi = bounds[p + 1]
            forward_hash(data, lo, hi, hkeys, hchild, hmask, hvalue, scores, unk_score, f32, last, reset,
                         best, bstart, bid)
            m = 0  # backtrack: edges ending at e, collected right to left
            e = hi - lo
            while e > 0:
                es[m] = e
                eid[m] = bid[e]
                m += 1
                e = bstart[e]
            prev_unk = False
            j = m - 1
            s = lo
            while j >= 0:
                end = lo + es[j]
                pid = eid[j]
                if pid >= 0:  # a piece
                    ids[k] = pid
                    ts[k] = s
                    te[k] = end
                    k += 1
                    prev_unk = False
                elif hf:
                    while fuse_unk and j > 0 and eid[j - 1] < 0:  # fuse the run of unknowns
                        j -= 1
                        end = lo + es[j]
                    run = lookup_hash(data, s, end, hkeys, hchild, hmask, hvalue)
                    if run >= 0:
                        ids[k] = run
                        ts[k] = s
                        te[k] = end
                        k += 1
                    elif fallback and _byte_tokens_ok(data, s, end, byte_ids):
                        k = _emit_bytes(data, s, end, byte_ids, contract, True, ids, ts, te, k)
                    else:
                        ids[k] = unk_id
                        ts[k] = s
                        te[k] = end
                        k += 1
                elif fallback and _byte_tokens_ok(data, s, end, byte_ids):
                    k = _emit_bytes(data, s, end, byte_ids, contract, False, ids, ts, te, k)
                    prev_unk = False
                elif prev_unk:
                    te[k - 1] = end  # sentencepiece merges a run of unknowns into one unk
                else:
                    ids[k] = unk_id
                    ts[k] = s
                    te[k] = end
                    k += 1
                    prev_unk = True
                s = end
                j -= 1
    else:
        for p in range(len(bounds) - 1):
            lo = bounds[p]
            hi = bounds[p + 1]
            forward_da(data, lo, hi, units, scores, unk_score, f32, last, reset, best, bstart, bid)
            m = 0  # backtrack: edges ending at e, collected right to left
            e = hi - lo
            while e > 0:
                es[m] = e
                eid[m] = bid[e]
                m += 1
                e = bstart[e]
            prev_unk = False
            j = m - 1
            s = lo
            while j >= 0:
                end = lo + es[j]
                pid = eid[j]
                if pid >= 0:  # a piece
                    ids[k] = pid
                    ts[k] = s
                    te[k] = end
                    k += 1
                    prev_unk = False
                elif hf:
                    while fuse_unk and j > 0 and eid[j - 1] < 0:  # fuse the run of unknowns
                        j -= 1
                        end = lo + es[j]
                    run = lookup_da(data, s, end, units)
                    if run >= 0:
                        ids[k] = run
                        ts[k] = s
                        te[k] = end
                        k += 1
                    elif fallback and _byte_tokens_ok(data, s, end, byte_ids):
                        k = _emit_bytes(data, s, end, byte_ids, contract, True, ids, ts, te, k)
                    else:
                        ids[k] = unk_id
                        ts[k] = s
                        te[k] = end
                        k += 1
                elif fallback and _byte_tokens_ok(data, s, end, byte_ids):
                    k = _emit_bytes(data, s, end, byte_ids, contract, False, ids, ts, te, k)
                    prev_unk = False
                elif prev_unk:
                    te[k - 1] = end  # sentencepiece merges a run of unknowns into one unk
                else:
                    ids[k] = unk_id
                    ts[k] = s
                    te[k] = end
                    k += 1
                    prev_unk = True
                s = end
                j -= 1
    if with_offsets:  # else ts/te stay byte spans of the normalized text (ids-only callers)
        char_of_byte_into(data, cob)
        _offsets(ts, te, k, cob, o_start, o_end, sp_start, sp_end, contract)
    return k
