"""The compiled BPE's packed hash tables and dense third trie level, filled in numpy at load
(``tokspec.fast._bpe_probe.fill_table`` / ``fill_level3``: no compile on a cold start).

Contract: ``fill_table`` gives exactly the table that linear probing gives inserting the keys one by
one in index order (the layout the compiled fill had: checked slot for slot against a plain loop
here, including clusters that wrap past the table's end, loads up to 15/16, and the order-sensitive
case where a later key's home lies inside an earlier key's probe); every key is then found by
``_get`` with its value and no other key is. ``fill_level3``'s entry for a three-byte UTF-8 prefix
is ``_get``'s answer for the trie child, -1 where the depth-2 node is missing; ``_longest``, which
reads it, finds the longest reachable token. Small tables: a
fraction of a second interpreted (TOKSPEC_JIT=0). The same check on cl100k_base and o200k_base's
own tables (against the plain loop, about 10 s) is ``slow`` (TOKSPEC_SLOW=1).
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from tokspec.fast._bpe_probe import _get, _longest, fill_level3, fill_table
from tokspec.fast.bpe_backtrack import BacktrackBPE
from tokspec.fast.bpe_kernel import CompiledBPE, _hash_table
from tokspec.fast.bpe_tables import NODE_BITS
from tokspec.fuzz.strategies import trained_bpe_ranks

_M = 0x5851F42D4C957F2D  # _bpe_probe's multiplier


def _home(key: int, size: int) -> int:
    """``_slot``'s home slot, from its definition: the int64 product (wrapped), shifted right 32."""
    product = (key * _M) % (1 << 64)
    if product >= 1 << 63:
        product -= 1 << 64
    return (product >> 32) & (size - 1)


def _one_by_one(keys: list[int], vals: list[int], vbits: int, size: int) -> list[int]:
    """Linear probing, one key at a time in index order: each key in the first empty slot from its home."""
    table = [-1] * size
    for key, val in zip(keys, vals):
        h = _home(key, size)
        while table[h] >= 0:
            h = (h + 1) % size
        table[h] = (key << vbits) | val
    return table


def _filled(keys: list[int], vals: list[int], vbits: int, size: int) -> list[int]:
    table = np.full(size, -1, dtype=np.int64)
    fill_table(np.array(keys, dtype=np.int64), np.array(vals, dtype=np.int64), vbits, table)
    return [int(e) for e in table]


def _keys_with_homes(homes: list[int], size: int) -> list[int]:
    """Distinct keys whose home slots are ``homes``, in that order (the smallest such keys)."""
    found: list[int] = []
    for home in homes:
        key = 0
        while _home(key, size) != home or key in found:
            key += 1
        found.append(key)
    return found


@pytest.mark.parametrize(("size", "n", "vbits", "seed"), [
    (16, 8, 4, 0), (16, 15, 4, 1), (64, 32, 20, 2), (64, 60, 24, 3), (1024, 512, 20, 4),
    (1024, 1000, 24, 5), (16, 1, 4, 6),
])
def test_fill_equals_one_by_one_insertion(size: int, n: int, vbits: int, seed: int) -> None:
    rng = random.Random(seed)
    keys = rng.sample(range(1 << 36), n)
    vals = [rng.randrange(1 << vbits) for _ in range(n)]
    want = _one_by_one(keys, vals, vbits, size)
    assert _filled(keys, vals, vbits, size) == want
    assert sum(e >= 0 for e in want) == n


def test_fill_follows_index_order_where_probes_cross() -> None:
    """Keys 0 and 1 both at home 3, key 2 at home 4: one by one, key 1 takes slot 4 before key 2
    exists, so key 2 goes to 5. (Rounds where every key steps at once, without the lower key's
    eviction of the higher, would put key 2 at 4 and key 1 at 5.)"""
    keys = _keys_with_homes([3, 3, 4], 16)
    got = _filled(keys, [5, 6, 7], 4, 16)
    assert got[3:6] == [keys[0] << 4 | 5, keys[1] << 4 | 6, keys[2] << 4 | 7]
    assert got == _one_by_one(keys, [5, 6, 7], 4, 16)
    reverse = _keys_with_homes([4, 3, 3], 16)  # the higher key first at 4: it keeps it
    assert _filled(reverse, [1, 2, 3], 4, 16)[3:6] == [reverse[1] << 4 | 2, reverse[0] << 4 | 1, reverse[2] << 4 | 3]


def test_fill_wraps_past_the_last_slot() -> None:
    keys = _keys_with_homes([15, 15, 0, 15], 16)
    got = _filled(keys, [1, 2, 3, 4], 4, 16)
    assert got == _one_by_one(keys, [1, 2, 3, 4], 4, 16)
    assert [got[15], got[0], got[1], got[2]] == [keys[0] << 4 | 1, keys[1] << 4 | 2, keys[2] << 4 | 3, keys[3] << 4 | 4]
    assert got[3:15] == [-1] * 12


def test_no_keys_leave_the_table_empty() -> None:
    assert _filled([], [], 8, 16) == [-1] * 16
    assert _hash_table(np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64), 8).tolist() == [-1] * 16


@pytest.mark.parametrize("seed", [0, 1])
def test_hash_table_finds_every_key_and_no_other(seed: int) -> None:
    rng = random.Random(seed)
    keys = rng.sample(range(1 << 30), 300)
    vals = [rng.randrange(1 << 20) for _ in keys]
    table = _hash_table(np.array(keys, dtype=np.int64), np.array(vals, dtype=np.int64), 20)
    assert len(table) == 1024  # the next power of two above twice the keys: load <= 1/2
    assert table.tolist() == _one_by_one(keys, vals, 20, 1024)
    with np.errstate(over="ignore"):  # interpreted (TOKSPEC_JIT=0): the hash wraps in int64
        for key, val in zip(keys, vals):
            assert _get(table, key, 20) == val
        absent = set(range(1 << 30, (1 << 30) + 200))
        assert all(_get(table, key, 20) == -1 for key in absent)


def _level3_by_probe(root: np.ndarray, trie: np.ndarray) -> list[int]:
    want = []
    for idx in range(1 << 16):
        lead, c1, c2 = idx >> 12, (idx >> 6) & 0x3F, idx & 0x3F
        node = int(root[256 + ((0xE0 | lead) << 8 | (0x80 | c1))])
        with np.errstate(over="ignore"):
            want.append(-1 if node < 0 else int(_get(trie, node << 8 | (0x80 | c2), NODE_BITS)))
    return want


@pytest.mark.parametrize("alphabet", ["中文字的一是不了", "ａｂ中\uffef\u0800"])
def test_level3_is_the_tries_third_step(alphabet: str) -> None:
    """Every entry, set or not, equals ``_get`` on the trie (lead bytes E0..EF, all continuations)."""
    ranks = trained_bpe_ranks(5, alphabet=alphabet.encode(), merges=120, segment_len=(9, 30))
    compiled = CompiledBPE.from_ranks(ranks)
    want = _level3_by_probe(compiled.arrays["root"], compiled.trie)
    assert sum(n >= 0 for n in want) >= 3  # the vocabulary reaches level 3 somewhere
    level3 = np.empty(1 << 16, dtype=np.int32)
    fill_level3(compiled.arrays["root"], compiled.trie, level3)
    assert level3.tolist() == want
    assert compiled.level3.tolist() == want


@pytest.mark.parametrize("alphabet", ["中文字的一是不了", "ａｂ中\uffef\u0800"])
def test_longest_match_reads_level3_and_the_hashed_trie(alphabet: str) -> None:
    """``_longest`` (the walk ``_counting_kernels`` calls; ``_encode`` writes it out) is the id of
    the longest reachable token starting at ``pos`` and ending by ``end``, from every position of
    mixed 1-, 2- and 3-byte text with stray lead and continuation bytes (level 3 must be read for
    a lead E0..EF and two continuation bytes only), with ``end`` also cut inside a character."""
    ranks = trained_bpe_ranks(5, alphabet=alphabet.encode(), merges=120, segment_len=(9, 30))
    python = BacktrackBPE(ranks, self_check=False)
    compiled = CompiledBPE.from_ranks(ranks)
    reachable = {tok: t for t, tok in enumerate(python.tokens) if python.reachable[t]}
    a = compiled.arrays
    rng = random.Random(7)
    parts = [c.encode() for c in [*alphabet, "a", "é"]] + [t for t in reachable if len(t) > 3]
    parts += [b"\xe4", b"\xef", b"\x80", b"\xbf", b"A"]  # stray lead and continuation bytes: not UTF-8
    deep = 0
    for _ in range(60):
        data = b"".join(rng.choice(parts) for _ in range(rng.randint(1, 7)))
        buf = np.frombuffer(data, dtype=np.uint8)
        for pos in range(len(data)):
            for end in sorted({len(data), *(min(len(data), pos + k) for k in (1, 2, 3, 4))}):
                q = max(q for q in range(pos + 1, end + 1) if data[pos:q] in reachable)
                deep += q - pos > 3
                with np.errstate(over="ignore"):  # interpreted (TOKSPEC_JIT=0): the hash wraps in int64
                    got = _longest(buf, pos, end, compiled.max_len, a["root"], compiled.trie, len(a["tok_len"]),
                                   compiled.level3)
                assert got == reachable[data[pos:q]], (data, pos, end)
    assert deep > 0  # some matches went past level 3 into the hashed trie


def test_level3_of_single_bytes_is_empty() -> None:
    compiled = CompiledBPE.from_ranks({bytes([i]): i for i in range(256)})
    assert compiled.level3.tolist() == [-1] * (1 << 16)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_named_vocabulary_tables_equal_one_by_one_insertion(name: str) -> None:
    from tokspec.fast.bpe_tables import PAIR_SHIFT
    from tokspec.formats.vocab import load_named_tiktoken
    vocab = load_named_tiktoken(name)
    compiled = CompiledBPE.from_ranks(vocab.ranks, vocab.sha256)
    a = compiled.arrays
    for table, k, v, bits in ((compiled.trie, "edge_keys", "edge_vals", NODE_BITS),
                              (compiled.pairs, "pair_keys", "pair_vals", PAIR_SHIFT)):
        assert table.tolist() == _one_by_one(a[k].tolist(), a[v].tolist(), bits, len(table))
    assert compiled.level3.tolist() == _level3_by_probe(a["root"], compiled.trie)
