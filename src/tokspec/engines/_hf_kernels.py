"""Compiled helpers of the hf: adapter's offset corrections (``tokspec.engines._hf``): the bulk
passes over token arrays, so that only the few tokens a correction may change are looked at in
Python.

Each kernel is a :func:`tokspec._jit.kernel` (compiled, or plain Python under ``TOKSPEC_JIT=0``)
and computes exactly what the per-token Python of ``_hf_align`` computes on the tokens it handles;
tokens it cannot decide are handed back to that Python (tests/test_hf_fast_offsets.py checks the
two paths give equal offsets, compiled and interpreted).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from tokspec._jit import kernel

__all__ = ["CharTable", "code_points", "char_byte_starts", "coverage", "split_byte_runs"]


class CharTable:
    """A per-code-point yes/no property computed lazily and cached: ``lookup(cps)`` gives
    ``fn(chr(cp))`` for each code point, calling ``fn`` once per distinct code point ever seen.
    O(len(cps)) in numpy plus one call per new code point."""

    def __init__(self, fn: Callable[[str], bool]) -> None:
        self.fn = fn
        self.table = np.full(0x110000, -1, dtype=np.int8)

    def lookup(self, cps: np.ndarray) -> np.ndarray:
        vals: np.ndarray = self.table[cps]
        unknown = vals < 0
        if unknown.any():
            for cp in np.unique(cps[unknown]).tolist():
                self.table[cp] = 1 if self.fn(chr(cp)) else 0
            vals = self.table[cps]
        return vals


def code_points(text: str) -> np.ndarray:
    """The code points of ``text`` (uint32, no copy of the UTF-32 buffer). O(n) in C."""
    return np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)


def char_byte_starts(cps: np.ndarray) -> np.ndarray:
    """``out[c]``: the UTF-8 byte offset of character ``c``; ``out[n]`` the byte length. O(n)."""
    lens = 1 + (cps >= 0x80).astype(np.int64) + (cps >= 0x800) + (cps >= 0x10000)
    out = np.zeros(len(cps) + 1, dtype=np.int64)
    np.cumsum(lens, out=out[1:])
    return out


@kernel
def coverage(starts: np.ndarray, ends: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``covered[c]``: some token covers character ``c`` (``covered[n]`` is False);
    ``last_by_end[a]``: the index of the last non-empty token ending at ``a`` (-1 if none).
    O(n + tokens)."""
    depth = np.zeros(n + 1, dtype=np.int64)
    last_by_end = np.full(n + 1, -1, dtype=np.int64)
    for k in range(len(starts)):
        if starts[k] < ends[k]:
            depth[starts[k]] += 1
            depth[ends[k]] -= 1
            last_by_end[ends[k]] = k
    covered = np.zeros(n + 1, dtype=np.bool_)
    run = 0
    for c in range(n):
        run += depth[c]
        covered[c] = run > 0
    return covered, last_by_end


@kernel
def split_byte_runs(bval: np.ndarray, starts: np.ndarray, ends: np.ndarray, data: np.ndarray,
                    cbyte: np.ndarray, ident: np.ndarray, metaspace: bool
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Case 2 of ``tokspec.engines._hf`` (byte fallback) for the runs it can decide alone.

    A run is a maximal sequence of byte tokens (``bval[k] >= 0``: the byte a ``<0xHH>`` token
    stands for) sharing one span ``[s, e)``. When every character of the span is its own surface
    (``ident[c] == 1``: the normalizer leaves it as is) the span's normalized bytes are the text's
    own bytes ``data[cbyte[s]:cbyte[e]]``, and ``HfEngine._byte_owners`` gives: if the run is
    exactly those bytes, each byte token the character holding its byte; if it is the metaspace
    marker (E2 96 81) followed by exactly those bytes (or the marker alone) and the span does not
    start with the marker, the marker's tokens the empty span ``(s, s)`` and the rest as before.
    Those runs are rewritten in the returned copies of ``starts``/``ends``; every other run is
    returned in ``todo`` as (first, stop) index pairs for the Python path. O(tokens + bytes).
    """
    t_count = len(bval)
    out_s = starts.copy()
    out_e = ends.copy()
    todo = np.empty(2 * t_count, dtype=np.int64)
    nt = 0
    k = 0
    while k < t_count:
        if bval[k] < 0:
            k += 1
            continue
        s = starts[k]
        e = ends[k]
        j = k + 1
        while j < t_count and bval[j] >= 0 and starts[j] == s and ends[j] == e:
            j += 1
        ok = s < e
        c = s
        while ok and c < e:
            if ident[c] != 1:
                ok = False
            c += 1
        skip = 0
        run_len = j - k
        if ok:
            b0 = cbyte[s]
            b1 = cbyte[e]
            if (metaspace and run_len >= 3 and bval[k] == 0xE2 and bval[k + 1] == 0x96
                    and bval[k + 2] == 0x81):
                whole_marker = (b1 - b0 >= 3 and data[b0] == 0xE2 and data[b0 + 1] == 0x96
                                and data[b0 + 2] == 0x81)
                if not whole_marker:
                    skip = 3
            if skip == 3 and run_len == 3:
                for t in range(3):
                    out_s[k + t] = s
                    out_e[k + t] = s
                k = j
                continue
            if run_len - skip != b1 - b0:
                ok = False
            t = 0
            while ok and t < b1 - b0:
                if bval[k + skip + t] != data[b0 + t]:
                    ok = False
                t += 1
        if not ok:
            todo[nt] = k
            todo[nt + 1] = j
            nt += 2
            k = j
            continue
        for t in range(skip):
            out_s[k + t] = s
            out_e[k + t] = s
        c = s
        for t in range(run_len - skip):
            while cbyte[c + 1] <= cbyte[s] + t:
                c += 1
            out_s[k + skip + t] = c
            out_e[k + skip + t] = c + 1
        k = j
    return out_s, out_e, todo[:nt]
