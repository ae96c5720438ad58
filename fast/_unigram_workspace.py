"""``DatrieUnigram``'s per-thread work buffers (``tokspec.fast.unigram_datrie``), reused across
encodes: :class:`Workspace` (named arrays, the ids-only buffer set, and the fused spm path's
:class:`tokspec.fast._spm_ids.IdsBuffers`). ``tests/test_fast_unigram_workspace.py`` checks that
any order of texts encodes as a fresh engine would.
"""

from __future__ import annotations

import threading

import numpy as np

from tokspec.fast._spm_ids import IdsBuffers as SpmIdsBuffers

__all__ = ["IdsBuffers", "Workspace"]


class Workspace(threading.local):
    """Per-thread buffers reused across encodes: allocating fresh arrays for every text costs page
    faults that, measured on this machine, took longer than the kernels themselves. One per
    engine and thread (``lopt:`` threads never share a buffer)."""

    def __init__(self) -> None:
        self.arrays: dict[str, np.ndarray] = {}
        self.spm_ids: SpmIdsBuffers | None = None

    def get(self, name: str, size: int, dtype: type) -> np.ndarray:
        """A buffer of at least ``size`` entries (contents undefined)."""
        have = self.arrays.get(name)
        if have is None or len(have) < size:
            have = np.empty(max(size, 2 * len(have) if have is not None else size), dtype=dtype)
            self.arrays[name] = have
        return have

    def keep(self, **grown: np.ndarray) -> None:
        """Keep buffers a kernel regrew."""
        self.arrays.update(grown)

    def ids_buffers(self, n: int, rep_size: int) -> IdsBuffers:
        """The buffers of ``DatrieUnigram._run``'s ids-only path for ``n`` input bytes (one set,
        regrown together)."""
        have: IdsBuffers | None = getattr(self, "ids", None)
        if have is None or have.capacity < n or len(have.norm[0]) < rep_size:
            have = IdsBuffers(max(n, 2 * have.capacity if have else n), rep_size)
            self.ids = have
        return have


class IdsBuffers:
    """``norm``: the normalizer's (rep, out, n2o, r1); ``viterbi``: (bounds, best, bstart, bid, es,
    eid, ids, ts, te), for inputs up to ``capacity`` bytes normalizing to at most 1.5x + 8 of that."""

    def __init__(self, capacity: int, rep_size: int) -> None:
        self.capacity = capacity
        self.norm = (np.empty(rep_size, dtype=np.uint8), np.empty(capacity + capacity // 2 + 8, dtype=np.uint8),
                     np.empty(capacity + 10, dtype=np.int64), np.empty(capacity + 9, dtype=np.int64))
        self.viterbi: tuple[np.ndarray, ...] = ()
        self.grow_viterbi(capacity + capacity // 2 + 9)

    def grow_viterbi(self, size: int) -> None:
        """Viterbi buffers of at least ``size`` entries (a normalized text of ``size - 1`` bytes)."""
        if self.viterbi and len(self.viterbi[1]) >= size:
            return
        self.viterbi = (np.zeros(2, dtype=np.int64), np.empty(size, dtype=np.float64),
                        *(np.empty(size, dtype=np.int64) for _ in range(7)))
