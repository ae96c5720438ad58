"""``encode_ids`` of many texts in two kernel calls: the ``fast:`` BPE engines' batch path.

Why: a kernel call releases the GIL and takes it back. On texts of 0.5-2 KB a call is ~15 us, of
which a few are Python holding the GIL, and two threads each calling ``encode_ids`` text by text
spent more time waiting to take the GIL back than they saved: 1000 texts of 1.5 KB, cl100k_base,
2 threads 0.78x one thread (5 KB: 1.36x; 20 KB: 1.77x; a pure compute kernel: 1.89x). Here a
whole share of texts costs two GIL-free calls, so each thread spends its time in the kernels.

What: the texts are joined; :func:`cl100k_spans_of_texts` / :func:`o200k_spans_of_texts` run Peek2
on each text's own code points (so no pretoken crosses a text's end, and each text gets exactly
the pretokens ``encode_ids`` gives it), shifted into the joined text; one ``_encode`` call encodes
every span (they tile the joined text from character 0, as one text's do); the ids are cut where
the tokens' byte lengths reach each text's end. Theorem relied on: BPE encodes each pretoken on
its own, so a text's ids are its pretokens' ids in order, whatever text comes before or after in
the joined buffer; and a token never crosses a pretoken, so the cuts fall between tokens.
Checked by ``tests/test_fast_bpe_batch.py`` against ``encode_ids`` text by text (texts starting
and ending in spaces, newlines, contractions and digits, which a pretoken crossing a text's end
would change; empty texts; both patterns; interpreted kernels).

Out of scope: offsets, special tokens. The spans loops are compiled only when first used (a
first batch after an empty cache pays Peek2's compile time again, inlined into the loop).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from tokspec._jit import JIT_ENABLED, kernel
from tokspec.fast._bpe_text import _I64, _NO_CBS
from tokspec.fast.bpe_kernel import _encode
from tokspec.fast.pretok_peek2 import _cl100k_kernel, _o200k_kernel

__all__ = ["cl100k_spans_of_texts", "o200k_spans_of_texts", "ids_of_texts", "spans_of_texts_for", "token_cuts"]


@kernel
def _shift_and_count(cps: np.ndarray, a: int, b: int, starts: np.ndarray, ends: np.ndarray, first: int,
                     count: int) -> int:
    """Shift spans ``first .. first + count`` by ``a``; the UTF-8 length of ``cps[a:b]``."""
    for j in range(first, first + count):
        starts[j] += a
        ends[j] += a
    size = 0
    for i in range(a, b):
        cp = cps[i]
        size += 1 if cp < 0x80 else 2 if cp < 0x800 else 3 if cp < 0x10000 else 4
    return size


@kernel
def cl100k_spans_of_texts(cps: np.ndarray, bounds: np.ndarray, table: np.ndarray, branch: np.ndarray,
                          max_digits: int, to_end_first: bool, fold_cps: np.ndarray, fold_to: np.ndarray,
                          starts: np.ndarray, ends: np.ndarray, byte_ends: np.ndarray) -> int:
    """Peek2 (cl100k family) spans of each text ``cps[bounds[k]:bounds[k + 1]]`` in the joined
    ``cps``, in order, into ``starts``/``ends``; ``byte_ends[k]``: the UTF-8 end of text ``k``.
    Returns the number of spans. O(len(cps))."""
    count = 0
    size = 0
    for k in range(len(bounds) - 1):
        a = bounds[k]
        b = bounds[k + 1]
        got = _cl100k_kernel(cps[a:b], table, branch, max_digits, to_end_first, fold_cps, fold_to,
                             starts[count:], ends[count:])
        size += _shift_and_count(cps, a, b, starts, ends, count, got)
        count += got
        byte_ends[k] = size
    return count


@kernel
def o200k_spans_of_texts(cps: np.ndarray, bounds: np.ndarray, table: np.ndarray, fold_cps: np.ndarray,
                         fold_to: np.ndarray, starts: np.ndarray, ends: np.ndarray, byte_ends: np.ndarray) -> int:
    """:func:`cl100k_spans_of_texts` with the o200k Peek2 kernel."""
    count = 0
    size = 0
    for k in range(len(bounds) - 1):
        a = bounds[k]
        b = bounds[k + 1]
        got = _o200k_kernel(cps[a:b], table, fold_cps, fold_to, starts[count:], ends[count:])
        size += _shift_and_count(cps, a, b, starts, ends, count, got)
        count += got
        byte_ends[k] = size
    return count


@kernel
def token_cuts(ids: np.ndarray, tok_len: np.ndarray, byte_ends: np.ndarray) -> np.ndarray:
    """``cuts[k]``: the number of tokens of texts ``0 .. k - 1`` (``len(byte_ends) + 1`` entries),
    where text ``k`` ends at UTF-8 byte ``byte_ends[k]`` and token ``i`` is ``tok_len[ids[i]]``
    bytes long (no token crosses a text's end). O(tokens + texts)."""
    cuts = np.empty(len(byte_ends) + 1, dtype=np.int64)
    cuts[0] = 0
    i = 0
    size = 0
    for k in range(len(byte_ends)):
        while i < len(ids) and size < byte_ends[k]:
            size += tok_len[ids[i]]
            i += 1
        cuts[k + 1] = i
    return cuts


def spans_of_texts_for(peek2: Callable[..., int]) -> Callable[..., int]:
    """The spans loop over the Peek2 kernel ``peek2`` (``pretok_peek2.kernel_args``' first item)."""
    if peek2 is _cl100k_kernel:
        return cl100k_spans_of_texts
    if peek2 is _o200k_kernel:
        return o200k_spans_of_texts
    raise ValueError(f"no spans loop for the Peek2 kernel {peek2!r}")


def ids_of_texts(texts: Sequence[str], spans_of_texts: Callable[..., int], peek2_args: tuple[Any, ...],
                 tables: tuple[Any, ...]) -> list[np.ndarray]:
    """The ids of each text (``str`` only), as ``encode_ids`` gives them, in two kernel calls (module
    docstring); ``tables``: ``CompiledBPE._tables`` (``tables[0]`` is ``tok_len``). Raises
    UnicodeEncodeError for a lone surrogate (the caller names it text by text). The arrays are
    views of one array. O(total length) beyond the merge's own cost."""
    if not texts:
        return []
    joined = "".join(texts)
    data = np.frombuffer(str.encode(joined), dtype=np.uint8)
    cps = np.frombuffer(joined.encode("utf-32-le"), dtype=np.uint32)
    bounds = np.zeros(len(texts) + 1, dtype=_I64)
    np.cumsum([str.__len__(t) for t in texts], out=bounds[1:])
    n = len(cps)
    starts = np.empty(n, dtype=_I64)
    ends = np.empty(n, dtype=_I64)
    byte_ends = np.empty(len(texts), dtype=_I64)
    if JIT_ENABLED:
        count = spans_of_texts(cps, bounds, *peek2_args, starts, ends, byte_ends)
        ids: np.ndarray = _encode(data, _NO_CBS, cps, starts[:count], ends[:count], False, *tables)
    else:
        with np.errstate(over="ignore"):  # the hashes wrap in numpy int64 as they do compiled
            count = spans_of_texts(cps, bounds, *peek2_args, starts, ends, byte_ends)
            ids = _encode(data, _NO_CBS, cps, starts[:count], ends[:count], False, *tables)
    cuts = token_cuts(ids, tables[0], byte_ends)
    return [ids[a:b] for a, b in zip(cuts[:-1].tolist(), cuts[1:].tolist())]
