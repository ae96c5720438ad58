"""HF ``Metaspace`` on identity-normalized text, compiled: normalized bytes and pretoken bounds.

:func:`metaspace_bytes` is what :meth:`tokspec.fast._hf_identity.IdentityMetaspace.arrays` computes
without alignment (the ids-only path of ``DatrieUnigram.encode_ids``), in one pass over the UTF-8
bytes instead of a ``str.replace``, an encode and several numpy temporaries: every space (0x20)
becomes the marker's bytes, one marker is put in front (``prepend``) unless the replaced text
already starts with one, and with ``split`` a pretoken starts at every marker but the one at byte 0.
UTF-8 is self-synchronizing, so a match of the marker's whole encoding is the marker character
(the reasoning of ``_hf_identity._starts_of``). Checked against ``IdentityMetaspace.arrays`` for
every scheme and split flag by ``tests/test_fast_metaspace.py``. O(n) for n bytes.
Out of scope: text the normalizer changes (the caller checks ``IdentityMetaspace.applies``).
"""

from __future__ import annotations

import numpy as np

from tokspec._jit import kernel

__all__ = ["metaspace_bytes"]


@kernel
def _marker_at(data: np.ndarray, q: int, end: int, marker: np.ndarray) -> bool:
    """Do ``data[q:end]`` start with the marker's bytes?"""
    if q + len(marker) > end:
        return False
    for j in range(len(marker)):
        if data[q + j] != marker[j]:
            return False
    return True


@kernel
def metaspace_bytes(raw: np.ndarray, marker: np.ndarray, prepend: bool, split: bool, out: np.ndarray,
                    bounds: np.ndarray) -> tuple[int, int]:
    """``(k, b)``: ``out[:k]`` the normalized bytes of the text ``raw`` (UTF-8; an empty one gives
    the prepended marker alone, so callers skip empty texts) and ``bounds[:b]`` its pretoken byte
    bounds (``0``, the cuts, ``k``). ``out`` needs
    ``len(marker) * (len(raw) + 1)`` entries, ``bounds`` ``len(raw) + 2``."""
    n = len(raw)
    ml = len(marker)
    k = 0
    if prepend and not (n > 0 and (raw[0] == 32 or _marker_at(raw, 0, n, marker))):
        for j in range(ml):
            out[j] = marker[j]
        k = ml
    for i in range(n):
        c = raw[i]
        if c == 32:
            for j in range(ml):
                out[k + j] = marker[j]
            k += ml
        else:
            out[k] = c
            k += 1
    bounds[0] = 0
    b = 1
    if split:
        for q in range(1, k):
            if out[q] == marker[0] and _marker_at(out, q, k, marker):
                bounds[b] = q
                b += 1
    bounds[b] = k
    return k, b + 1
