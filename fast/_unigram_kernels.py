"""Compiled Unigram kernels: the Viterbi over a double array or a hash trie, token emission, offsets.

One source, two modes (``tokspec._jit``): every function here is a numba ``@kernel`` (nopython,
nogil) and runs unchanged as plain Python with ``TOKSPEC_JIT=0``. Inputs are numpy arrays only.

Definitions are ``tokspec.formats.unigram_model``'s (the spec ``Unigram exactness``, checked by
``tests/test_fast_unigram_datrie.py`` against ``tokspec.reference.unigram`` and the libraries):
positions are UTF-8 byte offsets of one normalized pretoken ``data[lo:hi]``; only character
starts are relaxed (pieces are whole strings); an edge ``start -> end`` is a matchable piece, or
the *unknown edge* over one character when no one-character piece covers it. Sums are float64, or
float32 (each sum rounded, sentencepiece) when ``f32``; ties keep the first predecessor (``last``:
the latest, for tests); ``reset > 0`` re-bases scores past that magnitude as sentencepiece 0.2.x
does (``UnigramModel.score_reset``).

Theorem relied on: Viterbi's optimal substructure with the tie rule applied at each relaxation
(positions relaxed in increasing order, so "first predecessor" is "earliest start"). Re-basing
subtracts the same offset from every live score, so it changes no comparison except through
float32 rounding, which the kernels reproduce operation for operation. Pieces are whole UTF-8
strings, so no piece ends inside a character: a start walks its first character's bytes without
looking for pieces, relaxes that character's end once (its one-character piece, else the unknown
edge), then walks on relaxing every piece it passes. Each end position gets at most one
relaxation per start, so this order relaxes exactly what a walk relaxing as it goes would.

Two tries, one Viterbi loop each (the benchmark compares the tries only; both loops are inlined
into their callers, ``forward_pretokens`` and ``_unigram_emit.encode_pretokens``: a call per
pretoken passed 12 arguments, about a fifth of the pass on English's short pretokens; each caller
tests the trie kind once, outside its pretoken loop, so each loop compiles as if the other trie
did not exist):

- double array (Aoe; ``tokspec.fast._double_array``): child of ``s`` on byte ``c`` is
  ``t = base[s] + c`` iff ``check[t] == s``: two loads and a compare per byte. Base, check and
  value of a slot are packed in one 16-byte uint32 unit with every slot reference pre-scaled to
  its unit's index (:meth:`DoubleArray.units`), so a step is ``t4 = units[s4] + 4 * c``, then
  ``units[t4 + 1] == s4``: one cache line (the check and value of ``t`` and the base for the next
  step), and on the walk's dependency chain only a load and an add with a scaled index (no shift,
  no mask, no negative-index code). A walk at a childless node (base 0) probes a slot of the
  root's children region, which the walks keep in cache, and stops.
- ``HashTrie`` (``tokspec.fast._hash_trie``): open addressing with linear probing over int64 keys
  ``node * 256 + byte`` in a power-of-two table (load <= 1/2): a multiply, a mask, one or more
  probes per byte.

Tokens and offsets from the best paths: ``tokspec.fast._unigram_emit``.

Complexity: O(n * L) per pretoken, L = the longest piece in bytes; a re-basing costs O(L) and
happens at most once per 1e5 of score. Memory: O(max pretoken) scratch plus O(n) output.
Out of scope: n-best, sampling, user-defined symbols.
"""

from __future__ import annotations

import numpy as np

from tokspec._jit import kernel

__all__ = [
    "char_of_byte",
    "char_of_byte_into",
    "forward_da",
    "forward_hash",
    "forward_pretokens",
    "lookup_da",
    "lookup_hash",
]

_NEG = -np.inf


@kernel
def _round(x: float, f32: bool) -> float:
    """One path-score operation in the model's arithmetic (float32 rounding when ``f32``)."""
    if f32:
        return np.float64(np.float32(x))
    return x


@kernel
def _char_len(lead: int) -> int:
    if lead < 0x80:
        return 1
    if lead < 0xE0:
        return 2
    if lead < 0xF0:
        return 3
    return 4


@kernel
def _u(i: int) -> int:
    """``i`` (>= 0) as an unsigned array index: numba emits its negative-index wraparound (a shift,
    a mask and an add, or a compare and a select) only for signed indices. Same value."""
    return np.uint64(i)


@kernel(inline=True)
def forward_da(data: np.ndarray, lo: int, hi: int, units: np.ndarray, scores: np.ndarray,
               unk_score: float, f32: bool, last: bool, reset: float, best: np.ndarray,
               bstart: np.ndarray, bid: np.ndarray) -> None:
    """Viterbi forward pass over ``data[lo:hi]`` walking the double array (packed, pre-scaled
    ``units``: slot ``t`` is ``units[4t:4t+4]`` = 4 base, 4 check, value + 1, has a child;
    :meth:`DoubleArray.units`).

    Fills ``best[0..n]``, ``bstart`` (predecessor position, -1 unreached) and ``bid`` (piece id,
    -1 for an unknown edge), positions relative to ``lo``. Each start walks its first character
    without relaxing (no piece ends inside a character: pieces are whole strings), then relaxes
    that character's end once (its piece, else the unknown edge), then walks on (module docstring).
    Inlined into its callers (one call per pretoken would pass 12 arguments). Nothing in it slices
    an array or calls a kernel taking one (the re-basing is written out), and every position index
    is unsigned (:func:`_u`): measured on English pretokens, a slice and a call each cost the
    caller an atomic reference-count pair per pretoken, and signed indices numba's wraparound code
    per access."""
    n = hi - lo
    for i in range(n + 1):
        best[i] = _NEG
        bstart[i] = -1
        bid[i] = -1
    best[0] = 0.0
    frontier = 0
    limit = reset if reset > 0.0 else np.inf  # one compare per start instead of two
    for start in range(n):
        lead = data[_u(lo + start)]
        if 0x80 <= lead < 0xC0:
            continue  # not a character start
        here = best[start]
        if abs(here) > limit:  # sentencepiece's re-basing: subtract here from start and every reached later position
            for i in range(start, frontier + 1):
                if i == start or bstart[i] >= 0:
                    best[i] = _round(best[i] - here, f32)
            here = 0.0
        full = start + _char_len(lead)  # the end of the first character
        end = min(full, n)
        s4 = np.uint64(0)  # the root's unit
        q = start
        while q < end:  # the first character's bytes
            t4 = np.uint64(units[s4]) + (np.uint64(data[_u(lo + q)]) << np.uint64(2))
            if units[t4 + np.uint64(1)] != s4:  # always in range: the arrays are padded
                break
            s4 = t4
            q += 1
        v = np.int64(-1)  # the unknown edge, unless the character is a piece
        if q == full:
            v = np.int64(units[s4 + np.uint64(2)]) - 1
        cand = _round(here + (unk_score if v < 0 else scores[v]), f32)
        if cand >= best[_u(end)] and (last or cand > best[_u(end)]):  # the tie rule
            best[_u(end)] = cand
            bstart[_u(end)] = start
            bid[_u(end)] = v
        if q == full:  # walk on from the character's node
            while q < n:
                t4 = np.uint64(units[s4]) + (np.uint64(data[_u(lo + q)]) << np.uint64(2))
                if units[t4 + np.uint64(1)] != s4:  # a childless node's base is 0: a (cached) root-region slot
                    break
                s4 = t4
                q += 1
                v = np.int64(units[s4 + np.uint64(2)]) - 1  # the same 16-byte unit as the check just read
                if v >= 0:
                    cand = here + scores[v]
                    if f32:
                        cand = np.float64(np.float32(cand))
                    if cand >= best[_u(q)] and (last or cand > best[_u(q)]):
                        best[_u(q)] = cand
                        bstart[_u(q)] = start
                        bid[_u(q)] = v
        frontier = max(frontier, max(end, q))  # every position this start reached is <= it


@kernel
def _hash_child(keys: np.ndarray, child: np.ndarray, mask: int, node: int, byte: int) -> int:
    """Child of ``node`` on ``byte`` in the open-addressing table, or -1."""
    b = np.int64(byte)  # a uint8 would overflow (numpy) or wrap: widen first
    key = node * 256 + b
    h = (node * 0x9E3779B1 + b * 0x85EBCA77) & mask
    while True:
        k = keys[h]
        if k == key:
            return child[h]
        if k < 0:
            return -1
        h = (h + 1) & mask


@kernel(inline=True)
def forward_hash(data: np.ndarray, lo: int, hi: int, keys: np.ndarray, child: np.ndarray, mask: int,
                 node_value: np.ndarray, scores: np.ndarray, unk_score: float, f32: bool, last: bool,
                 reset: float, best: np.ndarray, bstart: np.ndarray, bid: np.ndarray) -> None:
    """:func:`forward_da` with the trie step done in the hash trie (everything else identical)."""
    n = hi - lo
    for i in range(n + 1):
        best[i] = _NEG
        bstart[i] = -1
        bid[i] = -1
    best[0] = 0.0
    frontier = 0
    limit = reset if reset > 0.0 else np.inf
    for start in range(n):
        lead = data[_u(lo + start)]
        if 0x80 <= lead < 0xC0:
            continue
        here = best[start]
        if abs(here) > limit:
            for i in range(start, frontier + 1):
                if i == start or bstart[i] >= 0:
                    best[i] = _round(best[i] - here, f32)
            here = 0.0
        full = start + _char_len(lead)
        end = min(full, n)
        s = 0
        q = start
        while q < end:
            t = _hash_child(keys, child, mask, s, data[_u(lo + q)])
            if t < 0:
                break
            s = t
            q += 1
        v = -1
        if q == full:
            v = node_value[s]
        cand = _round(here + (unk_score if v < 0 else scores[v]), f32)
        if cand >= best[_u(end)] and (last or cand > best[_u(end)]):
            best[_u(end)] = cand
            bstart[_u(end)] = start
            bid[_u(end)] = v
        if q == full:
            while q < n:
                t = _hash_child(keys, child, mask, s, data[_u(lo + q)])
                if t < 0:
                    break
                s = t
                q += 1
                v = node_value[s]
                if v >= 0:
                    cand = here + scores[v]
                    if f32:
                        cand = np.float64(np.float32(cand))
                    if cand >= best[_u(q)] and (last or cand > best[_u(q)]):
                        best[_u(q)] = cand
                        bstart[_u(q)] = start
                        bid[_u(q)] = v
        frontier = max(frontier, max(end, q))  # every position this start reached is <= it


@kernel
def lookup_da(data: np.ndarray, lo: int, hi: int, units: np.ndarray) -> int:
    """The id of the piece equal to ``data[lo:hi]``, or -1 (``units`` as in :func:`forward_da`)."""
    s4 = np.uint64(0)
    for q in range(lo, hi):
        t4 = np.uint64(units[s4]) + (np.uint64(data[q]) << np.uint64(2))
        if units[t4 + np.uint64(1)] != s4:
            return -1
        s4 = t4
    return int(np.int64(units[s4 + np.uint64(2)]) - 1)


@kernel
def lookup_hash(data: np.ndarray, lo: int, hi: int, keys: np.ndarray, child: np.ndarray, mask: int,
                node_value: np.ndarray) -> int:
    """:func:`lookup_da` in the hash trie."""
    s = 0
    for q in range(lo, hi):
        s = _hash_child(keys, child, mask, s, data[q])
        if s < 0:
            return -1
    return node_value[s]


@kernel
def char_of_byte(data: np.ndarray) -> np.ndarray:
    """``out[b]`` = index of the character containing byte ``b`` (``out[len] = characters``)."""
    out = np.empty(len(data) + 1, dtype=np.int64)
    char_of_byte_into(data, out)
    return out


@kernel
def char_of_byte_into(data: np.ndarray, out: np.ndarray) -> None:
    """:func:`char_of_byte` into ``out`` (at least ``len(data) + 1`` entries)."""
    c = -1
    for b in range(len(data)):
        if not 0x80 <= data[b] < 0xC0:
            c += 1
        out[b] = c
    out[len(data)] = c + 1


@kernel
def forward_pretokens(data: np.ndarray, bounds: np.ndarray, use_hash: bool, units: np.ndarray,
                      hkeys: np.ndarray, hchild: np.ndarray,
                      hmask: int, hvalue: np.ndarray, scores: np.ndarray, unk_score: float, f32: bool,
                      last: bool, reset: float) -> tuple[np.ndarray, np.ndarray]:
    """The Viterbi forward pass alone over every pretoken (the trie comparison of the benchmark):
    predecessors and ids of every position, pretoken by pretoken (``n + 1`` entries each)."""
    total = len(bounds) - 1
    width = 1
    for p in range(len(bounds) - 1):
        total += bounds[p + 1] - bounds[p]
        width = max(width, bounds[p + 1] - bounds[p] + 1)
    best = np.empty(width, dtype=np.float64)
    all_start = np.empty(total, dtype=np.int64)
    all_id = np.empty(total, dtype=np.int64)
    at = 0
    if use_hash:  # one loop per trie: each compiles as if the other did not exist
        for p in range(len(bounds) - 1):
            lo = bounds[p]
            hi = bounds[p + 1]
            forward_hash(data, lo, hi, hkeys, hchild, hmask, hvalue, scores, unk_score, f32, last, reset,
                         best, all_start[at:at + hi - lo + 1], all_id[at:at + hi - lo + 1])
            at += hi - lo + 1
    else:
        for p in range(len(bounds) - 1):
            lo = bounds[p]
            hi = bounds[p + 1]
            # the pass writes its predecessors and ids in place (views: no copy)
            forward_da(data, lo, hi, units, scores, unk_score, f32, last, reset, best,
                       all_start[at:at + hi - lo + 1], all_id[at:at + hi - lo + 1])
            at += hi - lo + 1
    return all_start, all_id
