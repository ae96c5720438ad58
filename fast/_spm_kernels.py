"""sentencepiece's normalizer as compiled kernels (one source, two modes: ``tokspec._jit``).

Computes exactly what ``tokspec.formats.spm_normalize.SpmNormalizer.normalize`` computes (the readable
version; ``tests/test_fast_unigram_kernels.py`` checks the two agree, and both against
sentencepiece), over UTF-8 bytes instead of characters:

1. At each input position the LONGEST key of the precompiled charsmap (a darts-clone double
   array: ``units``; replacement strings in ``pool``) that prefixes the rest is replaced by its
   string, else one UTF-8 character is copied.
2. ``remove_extra``: leading spaces skipped, a space after a space dropped, trailing spaces
   removed; ``dummy``: one space prepended; ``escape``: every space written as U+2581.

Outputs per normalized character: ``n2o`` (the input byte consumed so far, sentencepiece's
``norm_to_orig``; one extra entry for the end), which is also where the rule application that
produced it starts, and ``r1``, where that rule ends (equal to ``n2o`` for the dummy prefix). :func:`spm_alignment` turns these into
the library spans and contract origins in input characters (``SpmNormalizer``'s rules).

Complexity: O(n * K) for n input bytes, K the longest charsmap key (a walk stops at the first
missing transition); output arrays grow by doubling, between runs of :func:`_normalize_run`. Out of scope: user-defined symbols,
``treat_whitespace_as_suffix`` (the model builder rejects them).
"""

from __future__ import annotations

import numpy as np

from tokspec._jit import kernel

__all__ = ["ascii_copies", "longest_key", "spm_alignment", "spm_normalize", "starters"]

@kernel
def _utf8_len(lead: int) -> int:
    if lead < 0x80:
        return 1
    if lead < 0xE0:
        return 2
    if lead < 0xF0:
        return 3
    return 4


@kernel
def _grow(a: np.ndarray, need: int) -> np.ndarray:
    if need <= len(a):
        return a
    b = np.empty(max(need, 2 * len(a)), dtype=a.dtype)
    b[:len(a)] = a
    return b


@kernel(inline=True)
def longest_key(data: np.ndarray, pos: int, n: int, units: np.ndarray, root: int) -> tuple[int, int]:
    """``(used, at)``: the LONGEST charsmap key prefixing ``data[pos:n]`` (its length in bytes, and
    its replacement's index in ``pool``), or ``(0, -1)`` when no key does. ``root``: the double
    array's root node (``(units[0] >> 10) << ((units[0] & 512) >> 6)``, 0 for an empty ``units``).

    darts-clone's common-prefix search: XOR the node with each byte, check the label, follow the
    offset; ``has_leaf`` marks a key end whose value (a pool index) sits in the unit reached next.
    O(K) for K the longest key (the walk stops at the first missing transition; at once for an
    empty ``units``, where every node is out of range). The one walk of every normalizer here:
    :func:`_replacement`, :func:`_normalize_run` and ``_spm_norm_ids.normalize_ids`` (inlined into
    each compiled caller: no call with array arguments in their hot loops)."""
    size = len(units)
    used = 0
    at = -1
    node = root
    for i in range(pos, n):
        node ^= data[i]
        if node >= size:
            break
        unit = units[node]
        if (unit & 0x800000FF) != data[i]:
            break
        node ^= (unit >> 10) << ((unit & 512) >> 6)
        if (unit >> 8) & 1 and node < size:
            used = i + 1 - pos
            at = units[node] & 0x7FFFFFFF
    return used, at


@kernel
def _replacement(units: np.ndarray, pool: np.ndarray, data: np.ndarray, pos: int,
                 rep: np.ndarray) -> tuple[int, int]:
    """Write the replacement at ``pos`` into ``rep``; return (its length, input bytes consumed):
    the LONGEST charsmap key prefixing ``data[pos:]`` (:func:`longest_key`), else one UTF-8
    character."""
    root = 0
    if len(units) > 0:
        root = (units[0] >> 10) << ((units[0] & 512) >> 6)
    used, at = longest_key(data, pos, len(data), units, root)
    rl = 0
    if at >= 0:
        while at + rl < len(pool) and pool[at + rl] != 0:
            rep[rl] = pool[at + rl]
            rl += 1
        return rl, used
    used = min(_utf8_len(data[pos]), len(data) - pos)
    for r in range(used):
        rep[r] = data[pos + r]
    return used, used


@kernel
def starters(units: np.ndarray) -> np.ndarray:
    """``out[b]``: may a charsmap key start with byte ``b``? (one darts-clone step from the root)"""
    out = np.zeros(256, dtype=np.bool_)
    if len(units) == 0:
        return out
    root = (units[0] >> 10) << ((units[0] & 512) >> 6)
    for b in range(256):
        node = root ^ b
        out[b] = node < len(units) and (units[node] & 0x800000FF) == b
    return out


@kernel
def ascii_copies(units: np.ndarray) -> np.ndarray:
    """``out[257 * c + d]`` for an ASCII byte ``c`` followed by ``d`` (a byte, or 256 at the end of
    the text): is ``c`` copied alone, as one unchanged character? True iff ``c`` is no charsmap key
    and no key begins with ``c d``: the walk of :func:`_replacement` then stops at ``d`` having
    passed no key end (longest match empty). False means "walk" (which may still find nothing).

    Why two bytes: nmt_nfkc has keys for most ASCII letters (a letter + combining mark composes), so
    the one-byte test (:func:`starters`) sends nearly every letter through the walk; those keys
    continue with a non-ASCII byte, so a letter followed by ASCII is decided by this table. O(128 * 256)."""
    out = np.zeros(128 * 257, dtype=np.bool_)
    size = len(units)
    if size == 0:
        out[:] = True
        return out
    root = (units[0] >> 10) << ((units[0] & 512) >> 6)
    for c in range(128):
        node = root ^ c
        if node >= size or (units[node] & 0x800000FF) != c:  # no key starts with c
            out[257 * c:257 * c + 257] = True
            continue
        unit = units[node]
        node ^= (unit >> 10) << ((unit & 512) >> 6)
        if (unit >> 8) & 1 and node < size:
            continue  # c alone is a key: always walk
        out[257 * c + 256] = True
        for d in range(256):
            nxt = node ^ d
            out[257 * c + d] = not (nxt < size and (units[nxt] & 0x800000FF) == d)
    return out


@kernel
def _normalize_run(data: np.ndarray, units: np.ndarray, pool: np.ndarray, copies: np.ndarray,
                   remove_extra: bool, escape: bool, root: int, rep: np.ndarray, out: np.ndarray,
                   n2o: np.ndarray, r1: np.ndarray, pos: int, k: int, m: int,
                   prev_space: bool) -> tuple[int, int, int, bool, int, int, int]:
    """The main loop of :func:`spm_normalize` from input byte ``pos`` (``k`` output bytes and ``m``
    characters written so far): returns ``(pos, k, m, prev_space, need_out, need_r1, need_n2o)``,
    the needs 0 at the end of the input, else the buffer sizes the next character requires (it is
    not consumed: the caller grows the buffers and calls again from ``pos``).

    No array is ever reassigned here: a compiled loop that may rebind an array variable pays
    reference counting on every iteration (measured: about 30 ns per input byte, against under 1 ns
    for the same loop over buffers that are only written)."""
    n = len(data)
    while pos < n:
        c = data[pos]
        if c < 0x80 and copies[257 * np.int64(c) + (data[pos + 1] if pos + 1 < n else 256)]:  # ASCII, no rule
            if c == 32 and prev_space:
                pos += 1
                continue
            if k + 3 > len(out) or m + 2 > len(r1) or m + 3 > len(n2o):  # the caller's sizes may differ
                return pos, k, m, prev_space, k + 3, m + 2, m + 3
            n2o[m] = pos
            r1[m] = pos + 1
            m += 1
            if c == 32 and escape:
                out[k] = 0xE2
                out[k + 1] = 0x96
                out[k + 2] = 0x81
                k += 3
            else:
                out[k] = c
                k += 1
            prev_space = remove_extra and c == 32
            pos += 1
            continue
        used, at = longest_key(data, pos, n, units, root)  # inlined: the walk of _replacement
        rl = 0
        if at >= 0:
            while at + rl < len(pool) and pool[at + rl] != 0:
                rep[rl] = pool[at + rl]
                rl += 1
        else:
            used = min(_utf8_len(data[pos]), n - pos)
            for r in range(used):
                rep[r] = data[pos + r]
            rl = used
        a = 0
        if prev_space:
            while a < rl and rep[a] == 32:
                a += 1
        if a < rl:
            if m + rl + 2 > len(r1) or m + rl + 3 > len(n2o) or k + 3 * rl + 3 > len(out):
                return pos, k, m, prev_space, k + 3 * rl + 3, m + rl + 2, m + rl + 3
            i = a
            while i < rl:
                cl = _utf8_len(rep[i])
                n2o[m] = pos
                r1[m] = pos + used
                m += 1
                if rep[i] == 32 and escape:
                    out[k] = 0xE2
                    out[k + 1] = 0x96
                    out[k + 2] = 0x81
                    k += 3
                else:
                    for b in range(cl):
                        out[k + b] = rep[i + b]
                    k += cl
                i += cl
            prev_space = rep[rl - 1] == 32
        pos += used
        if not remove_extra:
            prev_space = False
    return pos, k, m, prev_space, 0, 0, 0


@kernel
def spm_normalize(data: np.ndarray, units: np.ndarray, pool: np.ndarray, copies: np.ndarray, dummy: bool,
                  remove_extra: bool, escape: bool, rep: np.ndarray, out: np.ndarray, n2o: np.ndarray,
                  r1: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, int]:
    """Normalize input bytes into (normalized bytes ``out[:k]``, ``n2o[:m + 1]``, ``r1[:m]``) for m
    normalized characters (see module docstring; the rule producing character i starts at
    ``n2o[i]`` and ends at ``r1[i]``, ``n2o[i] == r1[i]`` only for the dummy prefix); returns
    ``(out, n2o, r1, k, m)``, the arrays regrown if they were too small. ``copies``:
    :func:`ascii_copies`; ``rep``: scratch of at least ``max(len(pool), 4)`` bytes. The caller passes
    (and keeps) the buffers, reused across calls.

    Fast path: an ASCII byte that :func:`ascii_copies` says is copied alone (given the next byte)
    is copied (or dropped, or escaped) directly."""
    n = len(data)
    out = _grow(out, 8)
    n2o = _grow(n2o, 2)
    space_len = 3 if escape else 1
    pos = 0
    while remove_extra and pos < n:  # leading spaces
        rl, used = _replacement(units, pool, data, pos, rep)
        if not (rl == 1 and rep[0] == 32):
            break
        pos += used
    if pos == n:
        n2o[0] = 0
        return out, n2o, r1, 0, 0
    k = 0  # output bytes
    m = 0  # output characters
    if dummy:  # the dummy prefix: a space covering no input
        r1 = _grow(r1, 1)
        n2o[0] = pos
        r1[0] = pos
        m = 1
        if escape:
            out[0] = 0xE2
            out[1] = 0x96
            out[2] = 0x81
        else:
            out[0] = 32
        k = space_len
    prev_space = remove_extra
    root = 0
    if len(units) > 0:
        root = (units[0] >> 10) << ((units[0] & 512) >> 6)
    while True:  # _normalize_run stops at the end, or before a write that needs bigger buffers
        pos, k, m, prev_space, need_out, need_r1, need_n2o = _normalize_run(
            data, units, pool, copies, remove_extra, escape, root, rep, out, n2o, r1, pos, k, m, prev_space)
        if need_out == 0:
            break
        out = _grow(out, need_out)
        r1 = _grow(r1, need_r1)
        n2o = _grow(n2o, need_n2o)
    while remove_extra and m > 0 and _is_space(out, k - space_len, k, escape):
        m -= 1       # trailing spaces: the end goes back to where they began
        k -= space_len
        pos = n2o[m]
    n2o[m] = pos
    return out, n2o, r1, k, m


@kernel
def _is_space(out: np.ndarray, start: int, end: int, escape: bool) -> bool:
    """Do the last output bytes ``out[start:end]`` spell the space character? (A UTF-8 text ending
    in E2 96 81 ends with the character U+2581.)"""
    if start < 0:
        return False
    if escape:
        return end - start == 3 and out[start] == 0xE2 and out[start + 1] == 0x96 and out[start + 2] == 0x81
    return end - start == 1 and out[start] == 32


@kernel
def spm_alignment(n2o: np.ndarray, r1: np.ndarray, m: int, table: np.ndarray, o_start: np.ndarray,
                  o_end: np.ndarray, sp_start: np.ndarray, sp_end: np.ndarray) -> None:
    """Per normalized character, in input characters (``table``: input byte -> character index):
    contract origin (the rule's characters plus input dropped right after the rule's LAST output
    character; empty at its position for the dummy prefix) and library span ``(n2o[i], n2o[i+1])``."""
    r0 = n2o
    last = m
    for i in range(m - 1, -1, -1):
        sp_start[i] = table[n2o[i]]
        sp_end[i] = table[n2o[i + 1]]
        if r0[i] == r1[i]:
            o_start[i] = table[r0[i]]
            o_end[i] = o_start[i]
            last = i
            continue
        if not (i + 1 < m and r0[i + 1] == r0[i] and r1[i + 1] == r1[i]):
            last = i  # the last character of its rule application
        o_start[i] = table[r0[i]]
        o_end[i] = max(table[r1[i]], table[n2o[last + 1]])
