"""sentencepiece's normalizer for ids only: the normalized bytes, no alignment (compiled).

:func:`normalize_ids` computes the bytes ``out[:k]`` that
:func:`tokspec.fast._spm_kernels.spm_normalize` computes (the same rules: longest charsmap key
replaced, else one UTF-8 character copied; ``remove_extra``, ``dummy``, ``escape``), without the
per-character ``n2o``/``r1`` arrays that only offsets need. ``tests/test_fast_spm_norm_ids.py``
checks the two agree byte for byte, and the engine's ids against sentencepiece.

What makes it faster than ``spm_normalize`` on prose (branch mispredictions were its cost):

- :func:`ascii_rules`: for an ASCII byte followed by an ASCII byte (or the end), the charsmap's
  longest match is decided by the byte alone (the key ``c``, or no key) whenever no key starts
  with ``c`` and an ASCII byte; nmt_nfkc maps tab and newline to a space and deletes the other
  controls that way. Such a byte is written without a branch on its value: escape, dropped space
  and deleted byte are arithmetic.
- A non-ASCII lead byte that no key starts with (``starts``: most CJK) is copied without a walk.

Complexity O(n * K) (K the longest key) as ``spm_normalize``. The buffer is the caller's: when
``out`` is too short the call returns ``-1 - size`` (grow ``out`` to ``size`` and call again).
Out of scope: alignment and offsets (``spm_normalize``), user-defined symbols.
"""

from __future__ import annotations

import numpy as np

from tokspec._jit import kernel
from tokspec.fast._spm_kernels import longest_key
from tokspec.fast._unigram_kernels import _char_len

__all__ = ["ASCII_WALK", "ASCII_DELETE", "ascii_rules", "normalize_ids"]

#: :func:`ascii_rules` entries other than a byte: "walk the charsmap" and "deleted".
ASCII_WALK = 255
ASCII_DELETE = 128


@kernel
def ascii_rules(units: np.ndarray, pool: np.ndarray) -> np.ndarray:
    """``out[c]`` for a byte ``c`` followed by an ASCII byte or the end of the text: the ASCII byte
    ``c`` is replaced by (``c`` itself when no key applies), :data:`ASCII_DELETE` (an empty
    replacement), or :data:`ASCII_WALK` (a key ``c d...`` may start here for an ASCII ``d``, or the
    key ``c``'s replacement is not one ASCII byte, or ``c`` is not ASCII: the caller walks).
    darts-clone steps as ``spm_normalize``'s walk; O(128 * 128). 256 entries."""
    out = np.empty(256, dtype=np.uint8)
    size = len(units)
    for c in range(256):
        out[c] = c if c < 128 else ASCII_WALK
    if size == 0:
        return out
    root = (units[0] >> 10) << ((units[0] & 512) >> 6)
    for c in range(128):
        node = root ^ c
        if node >= size or (units[node] & 0x800000FF) != c:
            continue  # no key starts with c: copied
        unit = units[node]
        node ^= (unit >> 10) << ((unit & 512) >> 6)
        if (unit >> 8) & 1 and node < size:  # c alone is a key: its replacement
            at = units[node] & 0x7FFFFFFF
            rl = 0
            while at + rl < len(pool) and pool[at + rl] != 0:
                rl += 1
            if rl == 0:
                out[c] = ASCII_DELETE
            elif rl == 1 and pool[at] < 0x80:
                out[c] = pool[at]
            else:
                out[c] = ASCII_WALK
        for d in range(128):
            nxt = node ^ d
            if nxt < size and (units[nxt] & 0x800000FF) == d:
                out[c] = ASCII_WALK  # some key continues with c d
    return out


@kernel(inline=True)
def normalize_ids(data: np.ndarray, units: np.ndarray, pool: np.ndarray, tables: np.ndarray, dummy: bool,
                  remove_extra: bool, escape: bool, out: np.ndarray) -> int:
    """Normalize the UTF-8 bytes ``data`` into ``out``; return ``k`` (``out[:k]`` the normalized
    text), or ``-1 - size`` when ``out`` needs ``size`` bytes (nothing usable was written).
    ``tables``: :func:`ascii_rules` (256 entries) then ``starters`` (256: may a key start with
    this byte?)."""
    n = len(data)
    size = len(units)
    root = 0
    if size > 0:
        root = (units[0] >> 10) << ((units[0] & 512) >> 6)
    pos = 0
    while remove_extra and pos < n:  # leading spaces (a rule whose replacement is " ", or " ")
        c = data[pos]
        if tables[c] != ASCII_WALK and (pos + 1 == n or data[pos + 1] < 0x80):  # decided by the table
            if tables[c] != 32:
                break
            pos += 1
            continue
        used, at = longest_key(data, pos, n, units, root)
        if at >= 0:
            if not (at < len(pool) and pool[at] == 32 and (at + 1 == len(pool) or pool[at + 1] == 0)):
                break
        elif data[pos] == 32:
            used = 1
        else:
            break
        pos += used
    if pos == n:
        return 0
    if len(out) < 3:
        return -1 - 8
    space_len = 3 if escape else 1
    k = 0
    if dummy:  # the dummy prefix
        out[0] = 0xE2 if escape else 32
        out[1] = 0x96
        out[2] = 0x81
        k = space_len
    rx = 1 if remove_extra else 0
    esc = 1 if escape else 0
    prev = rx  # "the last byte written is a space that swallows the next" (remove_extra only)
    while pos < n:
        if k + 3 * (n - pos) <= len(out):  # room for 3 bytes per input byte: the ASCII loop
            # unsigned positions: numba then emits no negative-index wraparound code (2/3 of the time)
            p = np.uint64(pos)
            kk = np.uint64(k)
            stop = np.uint64(n)
            final = np.uint64(n - 1)
            one = np.uint64(1)
            while p < stop:
                r = int(tables[data[p]])
                if r == ASCII_WALK or (p < final and data[p + one] >= 0x80):  # (the end counts as ASCII)
                    break
                sp = 1 if r == 32 else 0  # no branch on the byte's value from here on
                gone = r >> 7  # deleted (ASCII_DELETE)
                drop = gone | (sp & prev)
                e = sp & esc
                out[kk] = r + e * (0xE2 - 32)
                out[kk + one] = 0x96
                out[kk + one + one] = 0x81
                kk += np.uint64((1 + 2 * e) * (1 - drop))
                prev = (prev & gone) | (sp & rx)
                p += one
            pos = np.int64(p)
            k = np.int64(kk)
            if pos == n:
                break
        c = int(data[pos])  # the general step: one rule application
        used = 0
        at = -1
        if c >= 0x80 and not tables[256 + c]:
            used = 0  # no key starts with this lead byte: the character is copied
        else:
            used, at = longest_key(data, pos, n, units, root)
        if at >= 0:
            rl = 0
            while at + rl < len(pool) and pool[at + rl] != 0:
                rl += 1
        else:
            used = min(_char_len(c), n - pos)
            rl = used
        a = 0
        while prev and a < rl and (pool[at + a] if at >= 0 else data[pos + a]) == 32:
            a += 1  # spaces swallowed by a space before them
        if a < rl:
            if k + 3 * rl + 3 > len(out):
                return -1 - (2 * len(out) + 3 * rl + 8)
            for i in range(a, rl):
                b = pool[at + i] if at >= 0 else data[pos + i]
                if b == 32 and escape:
                    out[k] = 0xE2
                    out[k + 1] = 0x96
                    out[k + 2] = 0x81
                    k += 3
                else:
                    out[k] = b
                    k += 1
            last = pool[at + rl - 1] if at >= 0 else data[pos + rl - 1]
            prev = rx if last == 32 else 0
        pos += used
    while remove_extra and k >= space_len and _ends_in_space(out, k, escape):
        k -= space_len  # trailing spaces
    return k


@kernel
def _ends_in_space(out: np.ndarray, k: int, escape: bool) -> bool:
    """Do ``out[:k]`` end with the space character (U+2581 when escaped)?"""
    if escape:
        return out[k - 3] == 0xE2 and out[k - 2] == 0x96 and out[k - 1] == 0x81
    return out[k - 1] == 32
