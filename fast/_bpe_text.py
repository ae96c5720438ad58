"""``encode_ids`` of the ``fast:`` BPE engines in ONE compiled call: Peek2 spans, then the merge.

Why: on a 0.5-2 KB text the fixed cost of ``FastBpeEncoder.encode_ids`` was about 8 us before any
pretoken was encoded (issue 29: 3.5 us to dispatch two kernels of 9 and 17 arguments, the rest
Python between them: the span arrays, the category and fold tables looked up per call, the byte
copy, ``np.errstate``). Here one kernel takes the text's UTF-8 bytes (``str.encode``) and code
points, allocates the span arrays itself, runs the Peek2 kernel of the pattern and then
``bpe_kernel._encode`` over its spans, so a call crosses from Python to machine code once.

Nothing new is computed: the same two kernels run in the same order on the same arrays (the spans
are Peek2's, contiguous from character 0, so ``_encode`` counts byte positions from the code
points as ``CompiledBPE.encode_text_ids(..., contiguous=True)`` does). Theorems relied on: those of
``pretok_peek2`` (pretokenizer exactness) and ``bpe_kernel`` (BPE exactness); the tests check this
path against ``encode_arrays`` and tiktoken (``tests/test_fast_bpe_text.py``). The callees are
called with the argument types their other callers use, so each keeps one compiled version.

Thread safety: everything a call writes is allocated by that call (the shared pair-validity memo
takes whole-word writes only, see ``_bpe_probe._valid``). O(n) beyond the merge's own cost.
Out of scope: offsets (``CompiledBPE.encode_text``), spans that are not Peek2's.
"""

from __future__ import annotations

import numpy as np

from tokspec._jit import JIT_ENABLED, kernel
from tokspec.fast.bpe_kernel import _encode
from tokspec.fast.pretok_peek2 import _cl100k_kernel, _o200k_kernel

__all__ = ["text_ids", "ids_of_text"]


@kernel
def text_ids(raw: np.ndarray, cps: np.ndarray, o200k: bool, cat_table: np.ndarray, branch: np.ndarray,
             max_digits: int, to_end_first: bool, fold_cps: np.ndarray, fold_to: np.ndarray,
             tok_len: np.ndarray, next_prefix: np.ndarray, left: np.ndarray, right: np.ndarray,
             root: np.ndarray, trie: np.ndarray, pairs: np.ndarray, memo: np.ndarray, max_len: int,
             pieces: np.ndarray, level3: np.ndarray) -> np.ndarray:
    """Token ids (int64) of the text whose UTF-8 bytes are ``raw`` and code points ``cps``: the
    spans of ``_o200k_kernel`` if ``o200k`` else of ``_cl100k_kernel`` (its table, ``branch``,
    ``max_digits``, ``to_end_first``), each encoded by ``_encode`` with the BPE tables given
    (``CompiledBPE._tables``, in that order). O(n) + the merge."""
    n = len(cps)
    starts = np.empty(n, dtype=np.int64)
    ends = np.empty(n, dtype=np.int64)
    if o200k:
        count = _o200k_kernel(cps, cat_table, fold_cps, fold_to, starts, ends)
    else:
        count = _cl100k_kernel(cps, cat_table, branch, max_digits, to_end_first, fold_cps, fold_to, starts, ends)
    data = np.empty(len(raw), dtype=np.uint8)  # writable, as every other caller of _encode passes it
    data[:] = raw
    offsets = count < 0  # False, as a plain bool: a literal False would compile _encode again
    ids, _, _ = _encode(data, np.empty(0, dtype=np.int64), cps, starts[:count], ends[:count], offsets, tok_len,
                        next_prefix, left, right, root, trie, pairs, memo, max_len, pieces, level3)
    return ids


def ids_of_text(raw: np.ndarray, cps: np.ndarray, args: tuple[object, ...]) -> np.ndarray:
    """:func:`text_ids` of ``raw, cps`` and the fixed ``args`` (``kernel_args`` of the pattern, then
    ``CompiledBPE._tables``); interpreted, under ``np.errstate(over="ignore")`` (the hashes wrap in
    numpy int64 as they do compiled)."""
    if JIT_ENABLED:
        return text_ids(raw, cps, *args)
    with np.errstate(over="ignore"):
        return text_ids(raw, cps, *args)
