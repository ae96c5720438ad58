"""Sentencepiece Unigram ids in one compiled call: normalizer, Viterbi and emission fused.

:func:`spm_ids` is ``DatrieUnigram.encode_ids`` for a sentencepiece model (float32 sums, the
first predecessor kept on ties) over the double array: :func:`tokspec.fast._spm_norm_ids.normalize_ids`,
then :func:`forward32` over the whole normalized text (one pretoken, as in sentencepiece), then
:func:`emit_ids`. It computes what ``_unigram_kernels.forward_da`` and
``_unigram_emit.encode_pretokens`` compute for this flavour, ids only; ``tests/test_fast_spm_ids.py``
checks it against sentencepiece, ``encode_arrays`` and the interpreted kernels.

Why it is faster than the general kernels (measured on 0.5-2 KB prose: forward 12.7 -> 9.8 ns per
byte, a dispatch of 9 arguments instead of 27, no alignment arrays, no intermediate copies):

- Path scores are float32 arrays summed in float32. Theorem relied on: for float32 ``a`` and
  ``b``, rounding their float64 sum (or difference) to float32 gives the float32 sum, since 53 >=
  2 * 24 + 2 (double rounding is innocuous: Figueroa, "When is double rounding innocuous?", 1995).
  So this is operation for operation the general kernel's ``np.float32(a + b)`` in float64; the
  comparisons of float32 values are exact in either width. Predecessors and piece ids are int32.
- Emission is the backtrack: tokens are written right to left, ending at the end of ``ids``, so
  there is one walk along the predecessors and no edge arrays.

Buffers are the caller's (reused across calls); the return value is ``j``, the tokens being
``ids[j:]``, or ``-1 - size`` when a buffer is too short (``out`` needs at least ``size`` bytes: the
normalizer may ask again for more, ``lat`` ``3 * (size + 1)`` entries, ``ids`` ``size + 1``: grow them and
call again; :class:`IdsBuffers`). O(n * L) for n normalized bytes, L the longest piece.
Out of scope: HF pipelines, offsets, ``tie_break="last"``, the hash trie (the engine takes the general
kernels for those).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from tokspec.fast._spm_kernels import starters
from tokspec.fast._spm_norm_ids import ascii_rules, normalize_ids

from tokspec._jit import kernel

__all__ = ["BATCH_BYTES", "IdsBuffers", "emit_ids", "engine_args", "forward32", "ids_of_texts", "pack_model", "spm_ids",
           "spm_ids_batch"]

_TABLES = 256 + 256  # ascii_rules, then starters

#: ``DatrieUnigram.encode_ids_batch`` encodes texts in groups of at most this many UTF-8 bytes (one
#: text longer than that: a group of its own): :func:`ids_of_texts` takes about 10 bytes of arrays a
#: byte (the joined text, ids as int64), so memory goes by the group, not the batch.
BATCH_BYTES = 1 << 21


@kernel(inline=True)
def forward32(data: np.ndarray, n: int, units: np.ndarray, scores: np.ndarray, unk_score: float,
              reset: float, best: np.ndarray, bstart: np.ndarray, bid: np.ndarray) -> None:
    """Viterbi forward pass over ``data[:n]`` (``units``: packed double array as ``forward_da``),
    in float32: ``best`` (float32) and ``bstart`` (-1 unreached) for ``0..n``, ``bid`` (-1: the
    unknown edge) at every reached position. Ties keep the first predecessor; ``reset > 0``
    re-bases as sentencepiece 0.2.x (as ``_unigram_kernels.forward_da``)."""
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
        s4 = np.uint64(0)  # the root's unit (units pre-scaled and unsigned: no shift, mask or wraparound code)
        q = start
        while q < n:
            t4 = np.uint64(units[s4]) + (np.uint64(data[q]) << np.uint64(2))
            if units[t4 + np.uint64(1)] != s4:  # in range: the arrays are padded
                break
            s4 = t4
            q += 1
            v = np.int64(units[s4 + np.uint64(2)]) - 1
            if v >= 0:
                frontier = max(frontier, q)
                cand = here + scores[v]
                if cand > best[q]:
                    best[q] = cand
                    bstart[q] = start
                    bid[q] = v
                if q == single:
                    has_single = True
            if units[s4 + np.uint64(3)] == 0:  # no child
                break
        if not has_single:  # the unknown edge over one character
            end = min(single, n)
            frontier = max(frontier, end)
            cand = here + unk
            if cand > best[end]:
                best[end] = cand
                bstart[end] = start
                bid[end] = -1


@kernel(inline=True)
def emit_ids(data: np.ndarray, n: int, bstart: np.ndarray, bid: np.ndarray, unk_id: int,
             byte_ids: np.ndarray, ids: np.ndarray) -> int:
    """Tokens of the best path to ``n``, written right to left so that they end at the end of
    ``ids``; returns ``j``, the index of the first token (``ids[j:]`` are the tokens). One walk
    back along the predecessors, no edge arrays. An unknown edge becomes its bytes' ``<0xNN>``
    pieces when ``byte_ids`` (256 entries) has them all, else ``unk_id``; a run of such unknowns
    is one ``unk_id`` (sentencepiece merges it; the run is the same read from either end)."""
    fallback = len(byte_ids) == 256
    j = len(ids)
    e = n
    prev_unk = False
    while e > 0:
        s = bstart[e]
        pid = bid[e]
        if pid >= 0:
            j -= 1
            ids[j] = pid
            prev_unk = False
        else:
            ok = fallback
            for q in range(s, e if fallback else s):
                if byte_ids[data[q]] < 0:
                    ok = False
            if ok:
                for q in range(e - 1, s - 1, -1):
                    j -= 1
                    ids[j] = byte_ids[data[q]]
                prev_unk = False
            elif not prev_unk:
                j -= 1
                ids[j] = unk_id
                prev_unk = True
        e = s
    return j


@kernel
def spm_ids(data: np.ndarray, mi: np.ndarray, mu: np.ndarray, md: np.ndarray, unk_score: float, reset: float,
            out: np.ndarray, lat: np.ndarray, ids: np.ndarray) -> int:
    """Ids of the UTF-8 bytes ``data``: ``ids[j:]`` for the returned ``j >= 0`` (or ``-1 - size``:
    module docstring). The model comes packed in three arrays (:func:`pack_model`: a numba call
    costs about 45 ns per argument, a visible share of a short text's encode): ``mi`` (int64: the
    charsmap's units, the byte pieces, ``unk_id``, flags), ``mu`` (uint8: the normalizer's tables,
    the pool), ``md`` (uint32: the double array's units, the float32 scores' bits);
    ``unk_score`` and ``reset`` the Viterbi's. ``lat`` (int32, ``3 * w``) holds ``best``
    (float32 bits), ``bstart``, ``bid`` for a normalized text of up to ``w - 1`` bytes."""
    ncm = mi[0]
    flags = mi[2]
    cm_units = mi[4:4 + ncm]
    k = normalize_ids(data, cm_units, mu[_TABLES:], mu[:_TABLES], flags & 1 != 0, flags & 2 != 0,
                      flags & 4 != 0, out)
    if k < 0:
        return k
    width = len(lat) // 3
    if k + 1 > width or k + 1 > len(ids):
        return -1 - k
    best = lat[:width].view(np.float32)
    bstart = lat[width:2 * width]
    bid = lat[2 * width:3 * width]
    nda = mi[3]
    forward32(out, k, md[:nda], md[nda:].view(np.float32), unk_score, reset, best, bstart, bid)
    return emit_ids(out, k, bstart, bid, mi[1], mi[4 + ncm:], ids)


@kernel
def spm_ids_batch(data: np.ndarray, bounds: np.ndarray, first: int, mi: np.ndarray, mu: np.ndarray,
                  md: np.ndarray, unk_score: float, reset: float, out: np.ndarray, lat: np.ndarray,
                  tmp: np.ndarray, ids: np.ndarray, cuts: np.ndarray, state: np.ndarray) -> None:
    """:func:`spm_ids` of each text ``data[bounds[t]:bounds[t + 1]]`` for ``t`` from ``first``, in
    one call: text ``t``'s ids are ``ids[cuts[t]:cuts[t + 1]]`` (``cuts[first]`` set by the
    caller). Stops at the first text that does not fit: ``state`` = (that text's index, the
    normalized size the work buffers ``out``/``lat``/``tmp`` need, else 0; the size ``ids``
    needs, else 0); all done: ``state[0] == len(bounds) - 1``. Each text is encoded on its own,
    by :func:`spm_ids` itself, so its ids are exactly that call's."""
    pos = cuts[first]
    for t in range(first, len(bounds) - 1):
        j = spm_ids(data[bounds[t]:bounds[t + 1]], mi, mu, md, unk_score, reset, out, lat, tmp)
        state[0] = t
        state[1] = 0
        state[2] = 0
        if j < 0:
            state[1] = -1 - j
            return
        m = len(tmp) - j
        if pos + m > len(ids):
            state[2] = pos + m
            return
        ids[pos:pos + m] = tmp[j:]
        pos += m
        cuts[t + 1] = pos
    state[0] = len(bounds) - 1


def ids_of_texts(ik: Any, encoded: Sequence[bytes], model: tuple[Any, ...],
                 bufs: IdsBuffers | None) -> tuple[list[np.ndarray], IdsBuffers]:
    """``[spm_ids ids of e for e in encoded]`` (UTF-8 texts) by :func:`spm_ids_batch` of module
    ``ik`` (this module, or its interpreted copy), in one kernel call unless a buffer has to grow;
    the work buffers ``bufs`` (reused, regrown: returned). The ids are views of one array."""
    lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
    bounds = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum(lengths, out=bounds[1:])
    data = np.frombuffer(bytearray(b"".join(encoded)), dtype=np.uint8)  # writable: spm_ids' array version
    need = 3 * int(lengths.max(initial=0)) + 8  # an ASCII text's worst case: all spaces
    if bufs is None or bufs.capacity < need:
        bufs = IdsBuffers(need, model)
    ids = np.empty(len(data) + len(encoded) + 16, dtype=np.int64)
    cuts = np.zeros(len(encoded) + 1, dtype=np.int64)
    state = np.zeros(3, dtype=np.int64)
    while True:
        ik.spm_ids_batch(data, bounds, int(state[0]), *bufs.args, ids, cuts, state)
        if state[0] == len(encoded):
            break
        if state[1] > 0:  # the normalized text outgrew the work buffers: grow, and go on from it
            bufs = IdsBuffers(max(int(state[1]), 2 * bufs.capacity), model)
        else:  # the ids outgrew their array (a text that expands): grow it for this text and the
            # rest's first guess, keep what is done
            t = int(state[0])
            size = max(int(state[2]) + len(data) - int(bounds[t + 1]) + len(encoded) - t + 16, 2 * len(ids))
            ids = np.concatenate([ids, np.empty(size - len(ids), dtype=np.int64)])
    return [ids[cuts[t]:cuts[t + 1]] for t in range(len(encoded))], bufs


def pack_model(cm_units: np.ndarray, pool: np.ndarray, tables: np.ndarray, flags: int, units: np.ndarray,
               scores: np.ndarray, unk_id: int, byte_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(mi, mu, md)`` of :func:`spm_ids`: ``mi`` = (len(cm_units), unk_id, flags, len(units),
    cm_units..., byte_ids...), ``mu`` = (tables (:data:`_TABLES` bytes), pool...), ``md`` =
    (units..., float32 scores as uint32 bits...). ``flags``: 1 dummy prefix, 2 remove extra
    whitespace, 4 escape spaces; ``tables``: ``ascii_rules`` then ``starters`` (as uint8)."""
    head = np.array([len(cm_units), unk_id, flags, len(units)], dtype=np.int64)
    mi = np.concatenate([head, np.asarray(cm_units, dtype=np.int64), np.asarray(byte_ids, dtype=np.int64)])
    mu = np.concatenate([np.asarray(tables, dtype=np.uint8), np.asarray(pool, dtype=np.uint8)])
    md = np.concatenate([np.asarray(units, dtype=np.uint32), np.asarray(scores, dtype=np.float32).view(np.uint32)])
    return mi, mu, md


def engine_args(spm: tuple[Any, ...], units: np.ndarray, scores: np.ndarray, unk_score: float, unk_id: int,
                reset: float, byte_ids: np.ndarray) -> tuple[Any, ...]:
    """The model's part of :func:`spm_ids`' arguments (``mi, mu, md, unk_score, reset``) from the
    engine's normalizer arguments ``spm`` (charsmap units, pool, copies, dummy, remove extra,
    escape) and Viterbi arrays (``scores`` float32 values, in any float dtype)."""
    cm_units, pool, _, dummy, remove_extra, escape = spm
    tables = np.concatenate([ascii_rules(cm_units, pool), starters(cm_units).astype(np.uint8)])
    flags = int(dummy) | 2 * int(remove_extra) | 4 * int(escape)
    return (*pack_model(cm_units, pool, tables, flags, units, scores, unk_id, byte_ids), unk_score, reset)


class IdsBuffers:
    """The work arrays of :func:`spm_ids` for a normalized text of up to ``capacity`` bytes;
    ``args``: the call's arguments after the text (``model``: :func:`engine_args`, then these)."""

    def __init__(self, capacity: int, model: tuple[Any, ...]) -> None:
        self.capacity = capacity
        self.out = np.empty(capacity, dtype=np.uint8)
        self.lat = np.empty(3 * (capacity + 1), dtype=np.int32)  # best (float32 bits), predecessors, piece ids
        self.ids = np.empty(capacity + 1, dtype=np.int64)
        self.args = (*model, self.out, self.lat, self.ids)
