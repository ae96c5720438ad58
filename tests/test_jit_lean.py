"""``tokspec._jit.kernel(lean=True)``: numba's pipeline without its rewrite and SSA passes, for the
large scalar kernels a cold start waits for. Same results as the full pipeline; the plain function
when interpreted; and the fast BPE's merge kernel and its callees really are compiled lean (the
cold-start figure of issue 29 rests on it)."""

from __future__ import annotations

import random

import numpy as np
import pytest
from tokspec._jit import JIT_ENABLED, interpreted, kernel


def _runs_and_sums(data: np.ndarray, limit: int, out: np.ndarray) -> tuple[int, float]:
    """Loops, early exits, a name bound to an int on one path and a float on the other, a tuple
    result, writes into an array: what the merge kernel is made of, small."""
    count = 0
    total = 0.0
    i = 0
    while i < len(data):
        j = i + 1
        while j < len(data) and data[j] == data[i]:  # a run of equal values
            j += 1
        if j - i > limit:
            weight = 2.5
        else:
            weight = j - i
        total += weight * int(data[i])  # int: numpy scalars would wrap in uint8 where numba does not
        out[count] = j - i
        count += 1
        if data[i] == 255:
            break
        i = j
    return count, total


def _cases(seed: int) -> list[tuple[np.ndarray, int]]:
    rng = random.Random(seed)
    cases = [(np.zeros(0, dtype=np.uint8), 1), (np.full(40, 255, dtype=np.uint8), 3)]
    for _ in range(200):
        n = rng.randrange(0, 60)
        alphabet = rng.choice([(0, 1), (7, 8, 9), (0, 255), tuple(range(5))])
        cases.append((np.array([rng.choice(alphabet) for _ in range(n)], dtype=np.uint8), rng.randrange(0, 5)))
    return cases


def test_lean_kernel_computes_what_the_full_pipeline_and_python_compute() -> None:
    lean = kernel(_runs_and_sums, lean=True, cache=False)
    full = kernel(_runs_and_sums, cache=False)
    for data, limit in _cases(29):
        got = []
        for fn in (lean, full, _runs_and_sums):
            out = np.full(len(data) + 1, -1, dtype=np.int64)
            count, total = fn(data, limit, out)
            got.append((int(count), float(total), out.tolist()))
        assert got[0] == got[1] == got[2], (data.tolist(), limit)
    assert interpreted(lean) is _runs_and_sums
    if not JIT_ENABLED:
        assert lean is _runs_and_sums and kernel(lean=True)(_runs_and_sums) is _runs_and_sums


@pytest.mark.skipif(not JIT_ENABLED, reason="compiled mode only: interpreted kernels have no pipeline")
def test_lean_kernel_skips_exactly_the_rewrite_and_ssa_passes() -> None:
    """numba's own record of the passes it ran (``pipeline_times``): the lean compile has no rewrite,
    branch-pruning or SSA pass and keeps type inference and lowering; the full one has them all."""
    lean = kernel(_runs_and_sums, lean=True, cache=False)
    full = kernel(_runs_and_sums, cache=False)
    data = np.array([1, 1, 2], dtype=np.uint8)
    passes = {}
    for name, fn in (("lean", lean), ("full", full)):
        fn(data, 1, np.empty(4, dtype=np.int64))
        cres = next(iter(fn.overloads.values()))
        passes[name] = {key.split("_", 1)[1] for key in cres.metadata["pipeline_times"]["nopython"]}
    dropped = {"reconstruct_ssa", "strip_phis", "nopython_rewrites", "generic_rewrites", "dead_branch_prune",
               "rewrite_semantic_constants"}
    assert dropped <= passes["full"]
    assert not dropped & passes["lean"]
    assert {"nopython_type_inference", "native_lowering"} <= passes["lean"]
    assert lean.targetoptions.get("no_rewrites") is True and not full.targetoptions.get("no_rewrites")


@pytest.mark.skipif(not JIT_ENABLED, reason="compiled mode only")
def test_the_bpe_merge_kernel_and_its_callees_are_lean() -> None:
    from tokspec.fast import _bpe_encode, _bpe_probe, _piece_cache, _piece_store, _piece_table
    kernels = [_bpe_encode._encode, _bpe_probe._slot, _bpe_probe._get, _bpe_probe._pair_valid,
               _piece_cache.cache_for, _piece_store.store_words, _piece_store.store_set, _piece_store.store_op,
               _piece_table._key_of_words, _piece_table._hash_of_key, _piece_table.filter_bit]
    for fn in kernels:
        assert fn.targetoptions.get("no_rewrites") is True, fn.py_func.__qualname__


def test_a_mutant_copy_keeps_lean_kernels_compiling() -> None:
    """``fuzz.mutants`` swaps ``kernel`` for its uncached one while a copy's decorators run: it
    takes ``lean`` like the real one (else every copy of the merge modules failed at import)."""
    from tokspec.fuzz.mutants import _uncached_kernel
    fn = _uncached_kernel(lean=True)(_runs_and_sums)
    out = np.empty(4, dtype=np.int64)
    assert fn(np.array([3, 3, 4], dtype=np.uint8), 5, out) == (2, 10.0)
    if JIT_ENABLED:
        assert fn.targetoptions.get("no_rewrites") is True and type(fn._cache).__name__ == "NullCache"
