"""Aoe's double-array trie over byte strings (J. Aoe 1989; the layout of Darts / sentencepiece).

Representation invariants: node 0 is the root. A transition from node ``s`` on byte ``c`` exists
iff ``check[t] == s`` for ``t = base[s] + c``, which is always a valid index (the arrays are padded
to ``max(base) + 256``); then ``t`` is the child. ``value[t]``
is the payload of the key ending at ``t`` (-1: no key ends there). Free slots have ``check == -1``.
The arrays are plain Python lists: in CPython a list index is cheaper than a numpy scalar index, and
the hot loop does two of them per byte step (``base``, ``check``) plus one for ``value``.

Build: keys are inserted into a temporary dict trie, then nodes are placed breadth first, each node's
children on a base where all their slots are free: the first free slot for a single child, else
the first fit found by a numpy scan over windows of candidate bases, starting near the last fit (not
always the smallest base: a little space traded for a build linear in practice). O(total key bytes) Python steps plus the
vectorized probes.
Out of scope: deletion, dynamic insertion after build, tails/compression (the arrays are ~1.1-1.3
slots per node).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence

import numpy as np

from tokspec.fast._cache import cache_dir, load_arrays, save_arrays

__all__ = ["DoubleArray", "NO_UNIT"]

_PAYLOAD = 256
#: :meth:`DoubleArray.units`' check of a slot no walk may enter (free, or the root): odd, so never a unit index
NO_UNIT = 0xFFFFFFFF
_FORMAT = 2  # bump when the layout changes: part of the cache key


class DoubleArray:
    """A static double-array trie mapping byte strings to non-negative ints."""

    def __init__(self, keys: Sequence[bytes], values: Sequence[int]) -> None:
        if len(keys) != len(values):
            raise ValueError(f"keys and values differ in length: {len(keys)} != {len(values)}")
        self.base: list[int] = [0]
        self.check: list[int] = [-2]  # the root is used and has no parent
        self.value: list[int] = [-1]
        self._first_free = 1
        self._multi_lo = 1
        self._free = np.zeros(1, dtype=bool)  # build-time mirror of check == -1, for vectorized probes
        self._place(self._dict_trie(keys, values))
        del self._free
        self._pad()

    def _pad(self) -> None:
        """Invariant: ``base[s] + 255 < len(check)`` for every slot, so a walk needs no bounds test."""
        need = max(self.base) + 256
        if need > len(self.check):
            extra = need - len(self.check)
            self.base.extend([0] * extra)
            self.check.extend([-1] * extra)
            self.value.extend([-1] * extra)

    @staticmethod
    def _dict_trie(keys: Sequence[bytes], values: Sequence[int]) -> dict[int, object]:
        """Nested dicts: byte -> child dict; the key ``_PAYLOAD`` (256, above every byte) holds a value."""
        root: dict[int, object] = {}
        for key, val in zip(keys, values):
            if val < 0:
                raise ValueError(f"values must be >= 0, got {val} for key {key!r}")
            node = root
            for byte in key:
                node = node.setdefault(byte, {})  # type: ignore[assignment]
            node[_PAYLOAD] = val
        return root

    def _grow(self, size: int) -> None:
        if size > len(self.check):
            extra = max(size - len(self.check), len(self.check) // 2) + 1024
            self.base.extend([0] * extra)
            self.check.extend([-1] * extra)
            self.value.extend([-1] * extra)
            self._free = np.concatenate([self._free, np.ones(extra, dtype=bool)])

    def _use(self, t: int, parent: int) -> None:
        self.check[t] = parent
        self._free[t] = False

    def _find_base(self, labels: list[int]) -> int:
        """Smallest base >= 1 whose slots ``base + c`` (c in labels) are all free.

        One child: the first free slot (a pointer that only moves forward). Several: a vectorized
        scan of a window of candidate bases (numpy AND of shifted free masks), window by window.
        """
        check = self.check
        while self._first_free < len(check) and check[self._first_free] != -1:
            self._first_free += 1
        lo = self._first_free - labels[0]
        if len(labels) == 1 and lo >= 1:
            self._grow(self._first_free + 1)
            return lo
        # Start where the last multi-child search ended (Darts' heuristic): the region below is
        # dense, and rescanning it for every node made the build quadratic.
        lo = max(lo, 1, self._multi_lo)
        window = 1 << 12
        while True:
            self._grow(lo + window + labels[-1] + 1)
            ok = self._free[lo + labels[0]:lo + labels[0] + window].copy()
            for c in labels[1:]:
                ok &= self._free[lo + c:lo + c + window]
            hit = int(ok.argmax())
            if ok[hit]:
                self._multi_lo = max(self._multi_lo, lo + hit - window)
                return lo + hit
            lo += window

    def _place(self, root: dict[int, object]) -> None:
        queue: list[tuple[int, dict[int, object]]] = [(0, root)]
        value, base = self.value, self.base
        for s, node in queue:  # breadth first; the list grows while we iterate
            labels = sorted(node)
            if labels and labels[-1] == _PAYLOAD:
                value[s] = node[_PAYLOAD]  # type: ignore[call-overload]  # the payload slot holds an int
                labels.pop()
            if not labels:
                continue
            b = self._find_base(labels)
            base[s] = b
            for c in labels:
                self._use(b + c, s)
                queue.append((b + c, node[c]))  # type: ignore[arg-type]

    @classmethod
    def cached(cls, keys: Sequence[bytes], values: Sequence[int]) -> DoubleArray:
        """Build, or load the arrays built earlier for exactly these keys and values.

        Cache: ``<cache root>/datrie/<sha256 of keys and values>.npz`` (``tokspec.fast._cache``),
        written atomically with a digest bound to that hash. A loaded trie is verified (digest, then
        every key maps to its value, O(total key bytes)); a mismatch or unreadable file is rebuilt,
        never trusted.
        """
        digest = hashlib.sha256(f"v{_FORMAT}".encode())
        for key, val in zip(keys, values):
            digest.update(len(key).to_bytes(4, "little") + key + val.to_bytes(8, "little", signed=True))
        folder = cache_dir("datrie")
        path = None if folder is None else folder / f"{digest.hexdigest()}.npz"
        loaded = None if path is None else load_arrays(path, path.stem)  # digest-verified
        if loaded is not None and set(loaded) == {"base", "check", "value"}:
            try:
                trie = cls._from_arrays(loaded["base"], loaded["check"], loaded["value"])
                if all(trie.get(k) == v for k, v in zip(keys, values)):
                    return trie
            except (ValueError, IndexError, TypeError):
                pass
        trie = cls(keys, values)
        if path is not None:
            save_arrays(path, path.stem, {"base": np.asarray(trie.base, dtype=np.int64),
                                          "check": np.asarray(trie.check, dtype=np.int64),
                                          "value": np.asarray(trie.value, dtype=np.int64)})
        return trie

    @classmethod
    def _from_arrays(cls, base: np.ndarray, check: np.ndarray, value: np.ndarray) -> DoubleArray:
        if not len(base) == len(check) == len(value) or len(base) == 0:
            raise ValueError("double-array arrays differ in length or are empty")
        trie = cls.__new__(cls)
        trie.base, trie.check, trie.value = base.tolist(), check.tolist(), value.tolist()
        trie._pad()
        return trie

    def units(self) -> np.ndarray:
        """The runtime layout of the compiled kernels: slot ``t`` is ``units[4t:4t+4]``, uint32 =
        (``4 * base``, ``4 * check`` or :data:`NO_UNIT` for a free slot and the root, ``value + 1``
        (0: no key ends there), ``fertile``: 1 iff some slot's check is ``t``).

        Every slot reference is pre-scaled to the index of its unit, so a walk holds the unit index
        ``s4 = 4s`` and one step is ``t4 = units[s4] + 4 * byte`` (an add with a scaled index, no
        shift or mask) and a transition exists iff ``units[t4 + 1] == s4``; all unsigned, so the
        compiled walk has no negative-index code. ``NO_UNIT`` is odd, never a unit index, so a free
        slot or the root rejects every walk. One step reads one 16-byte unit (check and value of
        ``t``, base of ``t`` for the next step), never split across cache lines (numpy's buffers
        are at least 16-byte aligned), not three arrays. A childless node keeps base 0, so a walk
        ending there probes the root's own children region (hot in cache) and stops; ``fertile``
        lets a kernel stop before that probe. O(slots).

        Raises ValueError if ``4 * slots`` does not fit in uint32 (a 250K-piece vocabulary takes
        ~780K slots, far below).
        """
        slots = len(self.check)
        if 4 * slots >= NO_UNIT:
            raise ValueError(f"{slots} slots: unit indices do not fit in uint32")
        base = np.asarray(self.base, dtype=np.int64)
        check = np.asarray(self.check, dtype=np.int64)
        value = np.asarray(self.value, dtype=np.int64)
        units = np.zeros(4 * slots, dtype=np.uint32)
        units[0::4] = 4 * base
        units[1::4] = np.where(check >= 0, 4 * check, NO_UNIT)  # free slots are -1, the root's parent -2
        units[2::4] = value + 1  # -1 (no key) becomes 0
        fertile = np.zeros(slots, dtype=np.uint32)
        fertile[check[check >= 0]] = 1
        units[3::4] = fertile
        return units

    def __len__(self) -> int:
        """Number of slots (used and free)."""
        return len(self.check)

    def get(self, key: bytes) -> int:
        """The value stored for ``key``, or -1. O(len(key))."""
        s = 0
        base, check = self.base, self.check
        for byte in key:
            t = base[s] + byte
            if check[t] != s:  # in range: see _pad
                return -1
            s = t
        return self.value[s]

    def prefixes(self, data: bytes, pos: int = 0) -> Iterator[tuple[int, int]]:
        """``(end, value)`` for every key equal to ``data[pos:end]``, shortest first."""
        s = 0
        base, check, value = self.base, self.check, self.value
        for q in range(pos, len(data)):
            t = base[s] + data[q]
            if check[t] != s:  # in range: see _pad
                return
            s = t
            if value[s] >= 0:
                yield q + 1, value[s]
