"""The compiled tiling of the ``spm:`` adapter: sentencepiece's pieces laid over its normalized text.

:func:`tile_kernel` is :func:`tokspec.engines._spm.aligned_spans` over arrays (the adapter's
``encode_arrays`` path; the module docstring of :mod:`tokspec.engines._spm` gives the rules: an
ordinary piece takes its own characters, a byte piece one byte of a normalized character, an
unknown piece the characters up to where the next piece matches). ``tests/test_adapter_arrays.py``
checks that both agree, compiled and interpreted, on the corpus and on about 1 MB. Importable from
:mod:`tokspec.engines._spm` as before.
"""

from __future__ import annotations

import numpy as np

from tokspec._jit import kernel

__all__ = ["tile_kernel"]

_ORDINARY, _BYTE, _UNKNOWN = 0, 1, 2


@kernel
def tile_kernel(norm: np.ndarray, offs: np.ndarray, ids: np.ndarray, kind_of_id: np.ndarray,
                piece_flat: np.ndarray, piece_at: np.ndarray, dummy: int
                ) -> tuple[np.ndarray, np.ndarray, bool]:
    """:func:`aligned_spans` over arrays: ``norm`` the normalized text's code points, ``offs`` its
    offsets (``len(norm) + 1``), token ``k`` of kind ``kind_of_id[ids[k]]`` (0 ordinary, 1 byte,
    2 unknown) and, when ordinary, text ``piece_flat[piece_at[id]:piece_at[id + 1]]``; ``dummy``
    the dummy-prefix index or -1. Returns (starts, ends, tiled); when ``tiled`` is False the
    spans are meaningless. O(len(norm) + tokens) (an unknown piece scans to the next match).
    """
    n = len(norm)
    t_count = len(ids)
    starts = np.zeros(t_count, dtype=np.int64)
    ends = np.zeros(t_count, dtype=np.int64)
    nxt = np.empty(n, dtype=np.int64)
    for i in range(n):
        if offs[i] > offs[i + 1]:
            return starts, ends, False
    bound = offs[n]
    for i in range(n - 1, -1, -1):
        if offs[i + 1] > offs[i]:
            bound = offs[i + 1]
        nxt[i] = max(bound, offs[i])
    pos = 0
    byte = 0
    for k in range(t_count):
        kind = kind_of_id[ids[k]]
        if (byte != 0 and kind != _BYTE) or pos >= n:
            return starts, ends, False
        if kind == _BYTE:
            starts[k] = offs[pos]
            ends[k] = nxt[pos]
            byte += 1
            cp = norm[pos]
            width = 1 if cp < 0x80 else 2 if cp < 0x800 else 3 if cp < 0x10000 else 4
            if byte == width:
                pos += 1
                byte = 0
            continue
        if kind == _UNKNOWN:
            following = -1
            if k + 1 < t_count and kind_of_id[ids[k + 1]] == _ORDINARY:
                following = ids[k + 1]
            end = pos + 1
            while end < n and (following < 0 or not _matches(norm, end, piece_flat, piece_at, following)):
                end += 1
        elif _matches(norm, pos, piece_flat, piece_at, ids[k]):
            end = pos + piece_at[ids[k] + 1] - piece_at[ids[k]]
        else:
            return starts, ends, False
        first = -1
        last_end = 0
        for i in range(pos, end):
            if i != dummy:
                if first < 0:
                    first = i
                    last_end = nxt[i]
                last_end = max(last_end, nxt[i])
        if first < 0:
            starts[k] = offs[pos]
            ends[k] = offs[pos]
        else:
            starts[k] = offs[first]
            ends[k] = last_end
        pos = end
    return starts, ends, pos == n and byte == 0


@kernel
def _matches(norm: np.ndarray, pos: int, piece_flat: np.ndarray, piece_at: np.ndarray, pid: int) -> bool:
    """``norm[pos:]`` starts with the text of piece ``pid``. O(piece)."""
    a = piece_at[pid]
    size = piece_at[pid + 1] - a
    if pos + size > len(norm):
        return False
    for t in range(size):
        if norm[pos + t] != piece_flat[a + t]:
            return False
    return True
