"""``HashTrie``: a byte trie as an open-addressing hash table in numpy arrays (benchmark twin).

The baseline the double array (``tokspec.fast._double_array``) is measured against: the same
trie, the same Viterbi loop (``tokspec.fast._unigram_kernels.forward_hash``), only the child step
differs. Representation invariants: nodes are numbered in order of creation (keys in order,
each key's bytes in order: a parent before its children), the root is 0;
``node_value[v]`` is the payload of the key ending at node ``v`` (-1: none). The edge
``(node, byte) -> child`` is stored at the first free slot from ``h = (node * 0x9E3779B1 +
byte * 0x85EBCA77) & mask`` on (linear probing): ``keys[slot] = node * 256 + byte`` (-1: free),
``child[slot]``. The table has a power-of-two size of at least twice the number of edges (load
<= 1/2). Both hash factors are below 2**32 and nodes below 2**31, so the sum never overflows
int64 (no sign bit, same value compiled and interpreted).

Build: O(total key bytes) Python steps. Out of scope: deletion, growth after build.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["HashTrie"]

_PAYLOAD = 256


class HashTrie:
    """A static byte trie mapping byte strings to non-negative ints (see module docstring)."""

    def __init__(self, keys: Sequence[bytes], values: Sequence[int]) -> None:
        if len(keys) != len(values):
            raise ValueError(f"keys and values differ in length: {len(keys)} != {len(values)}")
        children: list[dict[int, int]] = [{}]
        payload = [-1]
        for key, val in zip(keys, values):
            if val < 0:
                raise ValueError(f"values must be >= 0, got {val} for key {key!r}")
            node = 0
            for byte in key:
                nxt = children[node].get(byte)
                if nxt is None:
                    nxt = len(children)
                    children[node][byte] = nxt
                    children.append({})
                    payload.append(-1)
                node = nxt
            payload[node] = val
        edges = sum(len(c) for c in children)
        size = 1
        while size < 2 * max(edges, 1):
            size *= 2
        self.mask = size - 1
        self.keys = np.full(size, -1, dtype=np.int64)
        self.child = np.full(size, -1, dtype=np.int64)
        for node, kids in enumerate(children):
            for byte, nxt in kids.items():
                h = (node * 0x9E3779B1 + byte * 0x85EBCA77) & self.mask
                while self.keys[h] >= 0:
                    h = (h + 1) & self.mask
                self.keys[h] = node * 256 + byte
                self.child[h] = nxt
        self.node_value = np.asarray(payload, dtype=np.int64)

    def get(self, key: bytes) -> int:
        """The value stored for ``key``, or -1. O(len(key)) expected."""
        from tokspec.fast._unigram_kernels import lookup_hash
        data = np.frombuffer(key, dtype=np.uint8)
        return int(lookup_hash(data, 0, len(data), self.keys, self.child, self.mask, self.node_value))
