"""``HashTrie`` (tokspec.fast._hash_trie), the double array's benchmark twin, against a dict.

Exactness: ``get(k)`` is the value stored for ``k`` and -1 for every other byte string (prefixes
and extensions of keys, the empty string, bytes no key uses), on arbitrary key sets including
ones that force hash collisions and probing; bad input is a named error.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from tokspec.fast._hash_trie import HashTrie

keys_values = st.dictionaries(st.binary(max_size=6), st.integers(0, 2 ** 40), max_size=30)


def _probes(table: dict[bytes, int]) -> set[bytes]:
    """Every key, every prefix and one-byte extension of a key, and a few strangers."""
    out = {b"", b"\x00", b"\xff", b"zz", bytes(range(8))}
    for k in table:
        out.update(k[:i] for i in range(len(k) + 1))
        out.update(k + bytes([b]) for b in (0, 97, 255))
        out.add(k[1:])
    return out


def _check(table: dict[bytes, int]) -> None:
    trie = HashTrie(list(table), list(table.values()))
    for probe in _probes(table):
        assert trie.get(probe) == table.get(probe, -1), probe


@given(table=keys_values)
@example(table={b"a": 1, b"ab": 2, b"abc": 3})
@example(table={b"": 7, b"\x00": 0})
@example(table={b"xab": 5})  # a lookup of "ab" must start at the root, not one byte in
@example(table={b"\x00": 1, b"\x04": 2})  # both root edges hash to slot 0: the edge key 0 is not "free"
def test_hyp_get_equals_dict(table: dict[bytes, int]) -> None:
    _check(table)


def test_many_keys_with_long_probe_chains() -> None:
    """A few hundred keys sharing prefixes: the table is dense and lookups walk probe chains."""
    rng = random.Random(3)
    table = {bytes(rng.choice(b"ab\x00\xff") for _ in range(rng.randint(1, 9))): rng.randrange(10 ** 6)
             for _ in range(400)}
    _check(table)


def test_value_of_the_empty_key_is_the_root_payload() -> None:
    assert HashTrie([b""], [4]).get(b"") == 4
    assert HashTrie([b"a"], [4]).get(b"") == -1


def test_bad_input_is_a_named_error() -> None:
    with pytest.raises(ValueError, match=r"keys and values differ in length: 2 != 1"):
        HashTrie([b"a", b"b"], [1])
    with pytest.raises(ValueError, match=r"values must be >= 0, got -1 for key b'b'"):
        HashTrie([b"a", b"b"], [1, -1])


def test_table_layout_invariants() -> None:
    """The documented layout, read back: a power-of-two table of the smallest size >= 2 * edges
    (load <= 1/2), each edge ``node * 256 + byte`` in the first free slot of its probe sequence from
    its hash, ``child`` the node its key leads to, every node's payload in ``node_value``."""
    rng = random.Random(5)
    for count in (0, 1, 2, 7, 60):
        table = {bytes(rng.choice(b"a\x00\xff") for _ in range(rng.randint(1, 5))): rng.randrange(100)
                 for _ in range(count)}
        trie = HashTrie(list(table), list(table.values()))
        size = trie.mask + 1
        edges = int((trie.keys >= 0).sum())
        assert edges == len({k[:i] for k in table for i in range(1, len(k) + 1)})  # one edge per prefix
        assert set(trie.keys[trie.keys < 0].tolist()) <= {-1}  # a free slot holds -1
        assert size & trie.mask == 0 and size >= 2 * max(edges, 1) and not (size // 2 >= 2 * max(edges, 1))
        assert len(trie.keys) == len(trie.child) == size and trie.keys.dtype == trie.child.dtype == np.int64
        seen: dict[bytes, int] = {b"": 0}
        for key in sorted({k[:i] for k in table for i in range(1, len(k) + 1)}, key=len):
            node, byte = seen[key[:-1]], key[-1]
            slot = (node * 0x9E3779B1 + byte * 0x85EBCA77) & trie.mask
            while trie.keys[slot] != node * 256 + byte:
                assert trie.keys[slot] >= 0, key  # no free slot before the key's own (linear probing)
                slot = (slot + 1) & trie.mask
            seen[key] = int(trie.child[slot])
        assert sorted(seen.values()) == list(range(len(seen)))  # nodes 0..n-1, the root is 0
        assert trie.node_value.tolist() == [table.get(k, -1) for k in sorted(seen, key=seen.__getitem__)]
