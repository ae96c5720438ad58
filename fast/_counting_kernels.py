"""Compiled kernels of :mod:`tokspec.fast.bpe_counting` (appending, prepending, interval counting).

All kernels work on raw bytes with no pretokenization and share the compiled backtracking BPE's
tables (``tokspec.fast.bpe_kernel``: ``tok_len``, ``next_prefix``, ``split_left/right``, the forward
trie ``root``/``trie``, the ``pairs`` table, the pair-validity ``memo``). New here: a *suffix trie*
(tokens read backwards) for the appending encoder, stored like the forward trie's deep levels (a
packed hash table ``(node << 8 | byte) -> child``) with ``sterm[node]`` = the token ending there.

Theorems relied on (seed ``bpe-backtracking-linear-encoder``, restated in ``tokspec.spec.counting``
as Theorems C1-C3 and checked there by the properties named):

- Appending (C1): ``last[e]``, the last token of the encoding of ``data[:e]``, is the one token
  ``t = data[s:e]`` with ``s == 0`` or the pair ``(last[s], t)`` valid (Corollaries IIa, IIIa, I).
  The count of ``data[:e]`` is ``depth[e] = depth[s] + 1``.
- Prepending (C2): the mirror image: ``first[s]`` is the one token ``t = data[s:e]`` with ``e`` the
  end or ``(t, first[e])`` valid.
- Interval (C3): if a valid encoding of ``data[i:p]`` ends with the token ``last[p]`` and ``p`` is
  a boundary of the encoding of ``data[:j]``, then the encoding of ``data[i:j]`` is it followed by
  the tokens of ``data[:j]``'s encoding after ``p`` (Corollaries II, III, I).
"""

from __future__ import annotations

import numpy as np

from tokspec._jit import kernel
from tokspec.fast.bpe_kernel import _get, _longest, _slot, _valid
from tokspec.fast.bpe_tables import NODE_BITS

__all__: list[str] = []

_NODE_BITS = NODE_BITS


@kernel
def _get_or_add(table: np.ndarray, key: int, new: int, vbits: int) -> int:
    """The value of ``key`` in a packed table (as ``bpe_kernel._get``); inserts ``new`` if absent."""
    mask = len(table) - 1
    h = _slot(key, mask)
    while True:
        e = table[h]
        if e < 0:
            table[h] = (np.int64(key) << vbits) | new
            return new
        if (e >> vbits) == key:
            return int(e & ((1 << vbits) - 1))
        h = (h + 1) & mask


@kernel
def _build_suffix_trie(tok_bytes: np.ndarray, tok_offsets: np.ndarray, tok_len: np.ndarray,
                       left: np.ndarray, table: np.ndarray, sterm: np.ndarray) -> int:
    """Insert every reachable token (single bytes; multi-byte tokens with a last merge, i.e.
    ``left[t] != t``) read backwards into ``table`` (empty, -1); ``sterm`` (-1) receives the token
    at its end node. Node 0 is the root. Returns the number of nodes. O(sum of token lengths)."""
    nodes = 1
    for t in range(len(tok_len)):
        n = tok_len[t]
        if n == 0 or (n > 1 and left[t] == t):
            continue
        node = 0
        for q in range(tok_offsets[t] + n - 1, tok_offsets[t] - 1, -1):
            child = _get_or_add(table, (np.int64(node) << 8) | tok_bytes[q], nodes, _NODE_BITS)
            if child == nodes:
                nodes += 1
            node = child
        sterm[node] = t
    return nodes


@kernel
def _append_run(data: np.ndarray, lo: int, hi: int, last: np.ndarray, depth: np.ndarray,
                found: np.ndarray, strie: np.ndarray, sterm: np.ndarray, tok_len: np.ndarray,
                left: np.ndarray, right: np.ndarray, pairs: np.ndarray, memo: np.ndarray,
                max_len: int) -> None:
    """Fill ``last[e]`` and ``depth[e]`` for ``lo < e <= hi`` (Theorem C1), given them for ``e <= lo``
    (``last[0] = -1``, ``depth[0] = 0``). ``found``: scratch of ``max_len + 1`` ints. Cost per byte:
    one backwards trie walk (<= longest token) plus the compatibility checks, longest candidate
    first (usually the first is the one)."""
    for e in range(lo + 1, hi + 1):
        node = 0
        k = 0
        q = e - 1
        stop = max(-1, e - 1 - max_len)
        while q > stop:
            node = _get(strie, (np.int64(node) << 8) | data[q], _NODE_BITS)
            if node < 0:
                break
            if sterm[node] >= 0:
                found[k] = sterm[node]
                k += 1
            q -= 1
        chosen = -1
        while k > 0:  # longest first
            k -= 1
            t = found[k]
            s = e - tok_len[t]
            if s == 0 or _valid(last[s], t, memo, left, right, pairs):
                chosen = t
                break
        last[e] = chosen  # -1 only if Corollary I failed (never for a self-checked vocabulary)
        depth[e] = depth[e - tok_len[chosen]] + 1 if chosen >= 0 else -1


@kernel
def _prepend_run(buf: np.ndarray, lo: int, hi: int, end: int, first: np.ndarray, depth: np.ndarray,
                 found: np.ndarray, root: np.ndarray, trie: np.ndarray, tok_len: np.ndarray,
                 left: np.ndarray, right: np.ndarray, pairs: np.ndarray, memo: np.ndarray,
                 max_len: int) -> None:
    """Fill ``first[s]`` and ``depth[s]`` for ``hi > s >= lo``, going down (Theorem C2): the text is
    ``buf[s:end]``, ``first[end] = -1``, ``depth[end] = 0``, and both are known for ``s >= hi``.
    ``found``: scratch of ``max_len + 1`` ints. Mirror image of :func:`_append_run`, on the forward
    trie."""
    n_ids = len(tok_len)
    for s in range(hi - 1, lo - 1, -1):
        k = 0
        found[k] = root[buf[s]]  # every byte is a token
        k += 1
        limit = min(end, s + max_len)
        if s + 1 < limit:
            node = root[256 + ((np.int64(buf[s]) << 8) | buf[s + 1])]
            q = s + 2
            while node >= 0:
                if node < n_ids:
                    found[k] = node
                    k += 1
                if q >= limit:
                    break
                node = _get(trie, (np.int64(node) << 8) | buf[q], _NODE_BITS)
                q += 1
        chosen = -1
        while k > 0:  # longest first
            k -= 1
            t = found[k]
            e = s + tok_len[t]
            if e == end or _valid(t, first[e], memo, left, right, pairs):
                chosen = t
                break
        first[s] = chosen
        depth[s] = depth[s + tok_len[chosen]] + 1 if chosen >= 0 else -1


@kernel
def _tree(last: np.ndarray, tok_len: np.ndarray, tin: np.ndarray, tout: np.ndarray) -> None:
    """Pre-order numbering of the prefix tree (node ``e``'s parent is ``e - len(last[e])``, root 0):
    ``tin[p] <= tin[j] < tout[p]`` iff ``p`` is a token boundary of the encoding of ``data[:j]``.
    O(n)."""
    n = len(last) - 1
    size = np.ones(n + 1, dtype=np.int64)
    for e in range(n, 0, -1):
        size[e - tok_len[last[e]]] += size[e]
    nxt = np.empty(n + 1, dtype=np.int64)  # next free number inside each node's range
    tin[0] = 0
    tout[0] = size[0]
    nxt[0] = 1
    for e in range(1, n + 1):
        parent = e - tok_len[last[e]]
        tin[e] = nxt[parent]
        tout[e] = tin[e] + size[e]
        nxt[e] = tin[e] + 1
        nxt[parent] += size[e]


@kernel
def _interval_count(data: np.ndarray, i: int, j: int, last: np.ndarray, depth: np.ndarray,
                    tin: np.ndarray, tout: np.ndarray, out: np.ndarray, alive: np.ndarray,
                    tok_len: np.ndarray, next_prefix: np.ndarray, left: np.ndarray,
                    right: np.ndarray, root: np.ndarray, trie: np.ndarray, pairs: np.ndarray,
                    memo: np.ndarray, max_len: int, level3: np.ndarray) -> int:
    """Token count of ``data[i:j]``: backtracking encode from ``i`` (as ``bpe_kernel._encode``) until
    its last token ``t`` ends at a boundary ``p`` of ``data[:j]``'s encoding with ``last[p] == t``,
    then add the depth difference (Theorem C3). Typically O(1) steps; worst case O(j - i) (e.g. a
    run of one byte, where the encoding depends on where the run starts). ``out``, ``alive``:
    scratch of ``j - i + 1`` entries."""
    if i >= j:
        return 0
    if i == 0:
        return int(depth[j])
    leaf = tin[j]
    for p in range(j - i + 1):
        alive[p] = 1
    count = 0
    pos = i
    cand = _longest(data, pos, j, max_len, root, trie, len(tok_len), level3)
    while True:
        stop = pos + tok_len[cand]
        if alive[stop - i] and (count == 0 or _valid(out[count - 1], cand, memo, left, right, pairs)):
            out[count] = cand
            count += 1
            pos = stop
            if pos == j:
                return count
            if tin[pos] <= leaf < tout[pos] and last[pos] == cand:
                return count + int(depth[j] - depth[pos])
            cand = _longest(data, pos, j, max_len, root, trie, len(tok_len), level3)
            continue
        cand = next_prefix[cand]
        while cand < 0:  # nothing left at pos: pos is no boundary; back up one token
            alive[pos - i] = 0
            count -= 1
            prev = out[count]
            pos -= tok_len[prev]
            cand = next_prefix[prev]
