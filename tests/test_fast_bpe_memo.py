"""The compiled BPE's pair-validity memo (``tokspec.fast.bpe_kernel``: direct-mapped, one int64 word
``key << 1 | valid`` per slot, ``key = a << 20 | b``, shared by all calls of one ``CompiledBPE``).

Every word the kernel leaves in the memo sits in its key's slot and holds the verdict of the Python
encoder's ``BacktrackBPE.is_valid_pair`` for that pair: the memo stores truths, so a hit can only
give the verdict a recomputation would. (Whether hits happen is a speed matter, for the benchmarks;
a wrong stored word would corrupt ids only on later hits, which short tests may never make.)
"""

from __future__ import annotations

import random

import numpy as np
from tokspec.fast import bpe_kernel
from tokspec.fast.bpe_backtrack import BacktrackBPE
from tokspec.fast.bpe_kernel import CompiledBPE
from tokspec.fuzz.strategies import trained_bpe_ranks

PAIR_SHIFT = 20


def _setup(seed: int) -> tuple[BacktrackBPE, CompiledBPE, list[bytes]]:
    ranks = trained_bpe_ranks(seed, alphabet=b"abc", merges=60, segments=20, segment_len=(20, 40))
    rng = random.Random(seed)
    texts = [bytes(rng.choice(b"abc") for _ in range(rng.randint(10, 60))) for _ in range(40)]
    return BacktrackBPE(ranks, self_check=False), CompiledBPE.from_ranks(ranks), texts


def test_memo_words_are_true_verdicts_in_their_slots() -> None:
    for seed in (0, 1):
        python, compiled, texts = _setup(seed)
        compiled.memo.fill(-1)
        for data in texts:
            assert compiled.encode_bytes(data).tolist() == python.encode(data)
        used = np.flatnonzero(compiled.memo >= 0)
        assert len(used) >= 10, "the encodings checked pairs through the memo"
        mask = len(compiled.memo) - 1
        for slot in used.tolist():
            word = int(compiled.memo[slot])
            key = word >> 1
            a, b = key >> PAIR_SHIFT, key & ((1 << PAIR_SHIFT) - 1)
            assert int(bpe_kernel._slot(key, mask)) == slot
            assert bool(word & 1) == python.is_valid_pair(a, b), (a, b)



def test_a_slot_answers_only_for_its_own_key() -> None:
    """``_valid`` on a prepared memo: a word carrying the asked pair's key is a hit (its bit is
    returned as is, even when planted wrong on purpose: no recomputation); a word of another key in
    that slot (here the key 2 * key, whose word shifted right by 2 equals the asked key) is a miss:
    the verdict is recomputed and written over it."""
    python, compiled, _ = _setup(0)
    left, right, pairs = (compiled.arrays["split_left"], compiled.arrays["split_right"], compiled.pairs)
    memo = np.full(1 << 10, -1, dtype=np.int64)
    mask = len(memo) - 1
    with np.errstate(over="ignore"):  # the hash multiply wraps in int64 on purpose
        checked = _plant_and_ask(python, memo, mask, left, right, pairs)
    assert checked >= 20


def _plant_and_ask(python: BacktrackBPE, memo: np.ndarray, mask: int, left: np.ndarray, right: np.ndarray,
                   pairs: np.ndarray) -> int:
    checked = 0
    for a in range(256, len(python.tokens)):
        for b in (97, 98, 99, a):
            if not (python.reachable[a] and python.reachable[b]):
                continue
            truth = python.is_valid_pair(a, b)
            key = a << PAIR_SHIFT | b
            slot = int(bpe_kernel._slot(key, mask))
            memo[slot] = (key << 1) | (0 if truth else 1)  # this key, the wrong verdict
            assert bool(bpe_kernel._valid(a, b, memo, left, right, pairs)) is (not truth)
            memo[slot] = ((2 * key) << 1) | (0 if truth else 1)  # another key in the slot
            assert bool(bpe_kernel._valid(a, b, memo, left, right, pairs)) is truth
            assert int(memo[slot]) == (key << 1) | (1 if truth else 0)
            checked += 1
    return checked


def test_python_pair_memo_answers_hits_as_stored_and_only_for_their_pair() -> None:
    """``BacktrackBPE.is_valid_pair`` memoizes: asking a pair stores one entry; asking again returns
    the stored verdict as is (planted wrong on purpose: no recomputation), while every other pair
    still gets its own true verdict (from a second encoder with an untouched memo)."""
    python, _, _ = _setup(0)
    fresh = BacktrackBPE(python.ranks, self_check=False)
    ids = [t for t in range(len(python.tokens)) if python.reachable[t]][-12:] + [97, 98, 99]
    checked = 0
    for a in ids:
        for b in ids:
            python._pair_cache.clear()
            truth = python.is_valid_pair(a, b)
            assert truth == fresh.is_valid_pair(a, b)
            (key,) = python._pair_cache  # one stored entry, for this pair
            python._pair_cache[key] = not truth
            assert python.is_valid_pair(a, b) is (not truth)
            for c, d in ((b, a), (a, a), (b, b)):
                if (c, d) != (a, b):
                    assert python.is_valid_pair(c, d) == fresh.is_valid_pair(c, d), (a, b, c, d)
            checked += 1
    assert checked >= 100
