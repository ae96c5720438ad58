"""Sentencepiece Unigram ids in one compiled call: normalizer, Viterbi and emission fused.

:func:`spm_encode_ids` is ``DatrieUnigram.encode_ids`` for a sentencepiece model over the double
array: :func:`tokspec.fast._spm_kernels.spm_normalize` and then
:func:`tokspec.fast._unigram_emit.encode_pretokens` (the whole normalized text is one pretoken, as
in sentencepiece) without the alignment and offsets, which ids do not need. It computes nothing of
its own: what it saves is one numba dispatch and the Python between the two kernels (unboxing about
30 arguments costs microseconds, a visible share of a 1 KB call). Exactness is therefore that of
the two kernels (spec/ "Unigram exactness"; ``tests/test_fast_spm_ids.py`` checks this path
against ``encode_arrays``, sentencepiece and the interpreted kernels).

Buffers are the caller's (reused across calls). The normalizer may regrow its own (it returns
them); the Viterbi's must hold the normalized text, whose size is known only after normalizing: if
they are too small the call returns ``-1 - k`` with ``k`` the normalized length, and the caller
grows them and runs :func:`encode_pretokens` itself on ``out[:k]``. O(n * L) as the two kernels.
Out of scope: HF pipelines, offsets, the hash trie (the benchmark's baseline takes the general path).
"""

from __future__ import annotations

import numpy as np
from tokspec.fast._spm_kernels import spm_normalize
from tokspec.fast._unigram_emit import encode_pretokens

from tokspec._jit import kernel

__all__ = ["spm_encode_ids"]


@kernel
def spm_encode_ids(raw: np.ndarray, cm_units: np.ndarray, pool: np.ndarray, copies: np.ndarray, dummy: bool,
                   remove_extra: bool, escape: bool, rep: np.ndarray, out: np.ndarray, n2o: np.ndarray,
                   r1: np.ndarray, units: np.ndarray, scores: np.ndarray, unk_score: float, unk_id: int,
                   last: bool, reset: float, byte_ids: np.ndarray, bounds: np.ndarray, best: np.ndarray,
                   bstart: np.ndarray, bid: np.ndarray, es: np.ndarray, eid: np.ndarray, ids: np.ndarray,
                   ts: np.ndarray, te: np.ndarray) -> tuple[int, np.ndarray, np.ndarray, np.ndarray]:
    """``(count, out, n2o, r1)``: ``ids[:count]`` are the ids of ``raw`` (UTF-8 bytes); the three
    arrays are the normalizer's buffers (maybe regrown: keep them), ``out[:k]`` the normalized text.
    ``count < 0``: the Viterbi buffers (``best`` .. ``te``, and ``bounds`` of 2) were shorter than
    ``k + 1`` for ``k = -1 - count``; nothing was encoded (module docstring). Arguments are those of
    the two kernels, sentencepiece's flavour fixed (float32 sums, no fused unknowns)."""
    out, n2o, r1, k, m = spm_normalize(raw, cm_units, pool, copies, dummy, remove_extra, escape, rep, out,
                                       n2o, r1)
    if k + 1 > len(best) or k + 1 > len(ids):
        return -1 - k, out, n2o, r1
    bounds[0] = 0
    bounds[1] = k
    none = np.zeros(0, dtype=np.int64)
    count = encode_pretokens(out[:k], bounds, False, units, none, none, 0, none, scores, unk_score, unk_id,
                             True, last, reset, False, False, byte_ids, True, none, none, none, none, best,
                             bstart, bid, es, eid, ids, ts, te, none, False)
    return count, out, n2o, r1
