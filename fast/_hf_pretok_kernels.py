"""HF ``Metaspace`` over an aligned normalized state, compiled: bytes, pretoken bounds, alignment.

Input: the state :func:`tokspec.fast._hf_norm_kernels.run_chain` returns (code points with HF spans
and contract origins). HF's documented ``Metaspace`` (one-character ``replacement``): every space
U+0020 becomes the marker, aligned as the space was; with ``prepend`` (scheme ``always``, or
``first`` on the whole text) a marker is put in front of a non-empty text that does not already
start with one, with the first character's HF span and an empty origin at that span's start; with
``split`` a pretoken starts at every marker but the first character. Output: the UTF-8 bytes, the
pretoken byte bounds (``[0]`` alone for an empty text: no pretoken), and per character (origin
start, origin end, span start, span end), what ``DatrieUnigram.normalized`` returns. O(m).
:func:`chain_metaspace` runs the normalizer program and this in one call. Checked against
``tokspec.formats.hf_pipeline`` by ``tests/test_fast_hf_norm.py``.
Out of scope: multi-character markers, other pretokenizers (no compiled plan).
"""

from __future__ import annotations

import numpy as np

from tokspec._jit import kernel
from tokspec.fast._hf_norm_kernels import run_chain

__all__ = ["chain_metaspace", "metaspace_arrays"]


@kernel
def _utf8_len(c: int) -> int:
    return 1 + (c >= 0x80) + (c >= 0x800) + (c >= 0x10000)


@kernel
def metaspace_arrays(cp: np.ndarray, ss: np.ndarray, se: np.ndarray, os_: np.ndarray, oe: np.ndarray, marker: int,
                     prepend: bool, split: bool, alignment: bool = True
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(bytes, bounds, origin starts, origin ends, span starts, span ends) (module docstring);
    ``alignment=False``: the last four are empty (ids-only callers)."""
    m = len(cp)
    lead = 1 if prepend and m > 0 and cp[0] != 32 and cp[0] != marker else 0
    n = m + lead
    size = lead * _utf8_len(marker)  # output character i: the marker if i < lead, else cp[i - lead]
    cuts = 0  # with spaces replaced by the marker
    for i in range(m):
        c = marker if cp[i] == 32 else cp[i]
        size += _utf8_len(c)
        cuts += split and i + lead > 0 and c == marker
    data = np.empty(size, np.uint8)
    bounds = np.empty(cuts + 1 + (n > 0), np.int64)
    bounds[0] = 0
    k = 0
    b = 1
    for i in range(n):
        c = marker if i < lead or cp[i - lead] == 32 else cp[i - lead]
        if split and i > 0 and c == marker:
            bounds[b] = k
            b += 1
        if c < 0x80:
            data[k] = c
        elif c < 0x800:
            data[k], data[k + 1] = 0xC0 | (c >> 6), 0x80 | (c & 0x3F)
        elif c < 0x10000:
            data[k], data[k + 1], data[k + 2] = 0xE0 | (c >> 12), 0x80 | ((c >> 6) & 0x3F), 0x80 | (c & 0x3F)
        else:
            data[k], data[k + 1] = 0xF0 | (c >> 18), 0x80 | ((c >> 12) & 0x3F)
            data[k + 2], data[k + 3] = 0x80 | ((c >> 6) & 0x3F), 0x80 | (c & 0x3F)
        k += _utf8_len(c)
    bounds[b:] = k  # the end, when there is a pretoken
    if not alignment:
        none = np.empty(0, np.int64)
        return data, bounds, none, none, none, none
    a0, a1, a2, a3 = np.empty(n, np.int64), np.empty(n, np.int64), np.empty(n, np.int64), np.empty(n, np.int64)
    a0[:lead], a1[:lead], a2[:lead], a3[:lead] = ss[:lead], ss[:lead], ss[:lead], se[:lead]
    a0[lead:], a1[lead:], a2[lead:], a3[lead:] = os_, oe, ss, se
    return data, bounds, a0, a1, a2, a3


@kernel
def chain_metaspace(text: np.ndarray, prog: np.ndarray, strs: np.ndarray, classes: np.ndarray, info: np.ndarray,
                    dec_start: np.ndarray, dec_flat: np.ndarray, keys: np.ndarray, vals: np.ndarray,
                    map_start: np.ndarray, map_flat: np.ndarray, marker: int, prepend: bool, split: bool,
                    alignment: bool
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`tokspec.fast._hf_norm_kernels.run_chain` then :func:`metaspace_arrays`, in one call
    (a pipeline with no Precompiled step: the state never crosses into Python)."""
    cp, ss, se, os_, oe = run_chain(text, prog, strs, classes, info, dec_start, dec_flat, keys, vals,
                                    map_start, map_flat)
    return metaspace_arrays(cp, ss, se, os_, oe, marker, prepend, split, alignment)
