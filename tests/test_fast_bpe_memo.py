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

