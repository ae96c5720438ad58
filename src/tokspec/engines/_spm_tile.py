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
                piece_flat: np.ndarray, piece_at: np.ndarray, dummy: int, byte_of_id: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray, bool]:
    """:func:`aligned_spans` over arrays: ``norm`` the normalized text's code points, ``offs`` its
    offsets (``len(norm) + 1``), token ``k`` of kind ``kind_of_id[ids[k]]`` (0 ordinary, 1 byte,
    2 unknown) and, when ordinary, text ``piece_flat[piece_at[id]:piece_at[id + 1]]``; ``dummy``
    the dummy-prefix index or -1; a byte piece must be the byte ``byte_of_id[id]`` of its
    character's UTF-8 (so pieces that tile ``norm`` spell it, byte pieces included). Returns
    (starts, ends, tiled); when ``tiled`` is False the spans are meaningless. O(len(norm) + tokens) (an unknown piece scans to the next match).
    """
    n = len(norm)
    t_count = len(ids)
    starts = np.empty(t_count, dtype=np.int64)
    ends = np.empty(t_count, dtype=np.int64)
    for i in range(n):
        if offs[i] > offs[i + 1]:
            return starts, ends, False
    pos = 0
    k = 0
    while k < t_count:
        if pos >= n:
            return starts, ends, False
        kind = kind_of_id[ids[k]]
        if kind == _BYTE:  # the character's bytes, all at once: each must be its byte piece
            cp = norm[pos]
            width = 1 if cp < 0x80 else 2 if cp < 0x800 else 3 if cp < 0x10000 else 4
            if k + width > t_count:
                return starts, ends, False
            char_start = offs[pos]
            char_end = _next_larger(offs, pos)
            want = cp if width == 1 else (0xF00 >> width) & 0xFF | (cp >> (6 * (width - 1)))
            for byte in range(width):
                if byte:
                    want = 0x80 | ((cp >> (6 * (width - 1 - byte))) & 0x3F)
                if byte_of_id[ids[k + byte]] != want:
                    return starts, ends, False
                starts[k + byte] = char_start
                ends[k + byte] = char_end
            k += width
            pos += 1
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
        first = pos + 1 if pos == dummy else pos
        last = end - 2 if end - 1 == dummy else end - 1
        if first > last:  # the dummy prefix alone
            starts[k] = offs[pos]
            ends[k] = offs[pos]
        else:  # _next_larger is non-decreasing in its position: the last character's is the largest
            starts[k] = offs[first]
            ends[k] = _next_larger(offs, last)
        pos = end
        k += 1
    return starts, ends, pos == n


@kernel
def _next_larger(offs: np.ndarray, i: int) -> int:
    """The exclusive input end of normalized character ``i``: the first offset after ``offs[i]``
    larger than it (``offs`` non-decreasing, ``len(norm) + 1`` entries), else ``offs[i]``.
    O(characters sharing ``i``'s offset), which one rule's output bounds."""
    n = len(offs) - 1
    v = offs[i]
    k = i + 1
    while k < n and offs[k] == v:
        k += 1
    return int(max(offs[k], v))


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
