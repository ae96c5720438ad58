"""``id-lcs``: ParallelTokenizer's merge (OpenLMLab/ParallelTokenizer): overlapping fixed chunks,
adjacent chunk encodings joined on their longest common contiguous run of token *ids*.

Chunks are ``S[k*C : k*C + C + O]`` for k = 0, 1, ... (the same split as LoPT's eq. 1). For chunks
i and i+1 the longest run of equal ids between the tail of chunk i's id list and the head of chunk
i+1's is found (ties: the run nearest the end of chunk i, as ParallelTokenizer does by matching
reversed lists); chunk i is kept up to the end of the run and chunk i+1 from just after it. Offsets
play no part. ParallelTokenizer searches the whole lists; like the LoPT paper's re-implementation
("ParallelTokenizer-Ours") we search a window of ``W`` ids at each side, ``W`` estimated from the
overlap's share of the chunk (twice the expected number of overlap tokens, plus 16).
With no common id at all, the chunks are simply concatenated (ParallelTokenizer only warns).

NOT lossless: a run of equal ids need not stand at the same text position (repetitive text), and
even at the same position both chunks can be wrong. See ``corpora/merge/``.
Complexity: O(|T_i| * |T_{i+1}|) per pair in the worst case (dynamic programming over id lists);
this is the "computational burden" the LoPT paper measures.
"""

from __future__ import annotations

from tokspec import Encoder
from tokspec.fast._chunking import (Anchor, EncodeMany, MergeResult, MergeTrace, check_positive,
                                    encode_spans, fixed_spans, keep_slices)

__all__ = ["NAME", "longest_common_run", "merge"]

NAME = "id-lcs"


def longest_common_run(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, int, int]:
    """(i, j, n): ``a[i:i+n] == b[j:j+n]`` with ``n`` maximal; among maximal runs the one ending
    last in ``a`` (then earliest in ``b``). (len(a), 0, 0) when no id is shared. O(len(a)*len(b)).
    """
    best = (len(a), 0, 0)
    prev = [0] * (len(b) + 1)
    for i in range(1, len(a) + 1):
        cur = [0] * (len(b) + 1)
        ai = a[i - 1]
        for j in range(1, len(b) + 1):
            if ai == b[j - 1]:
                run = prev[j - 1] + 1
                cur[j] = run
                if run > best[2] or (run == best[2] and i - run > best[0]):
                    best = (i - run, j - run, run)
        prev = cur
    return best


def _window(n_tokens: int, chunk_len: int, overlap: int) -> int:
    """Ids searched at each side: twice the overlap's expected token count, plus 16."""
    return 2 * ((overlap + 1) * n_tokens // max(1, chunk_len + overlap) + 1) + 16


def merge(engine: Encoder, text: str, *, chunk_len: int, overlap: int,
          encode_many: EncodeMany | None = None) -> MergeResult:
    """ParallelTokenizer's split / encode / longest-common-id-run merge (module docstring)."""
    check_positive("chunk_len", chunk_len)
    check_positive("overlap", overlap, allow_zero=True)
    trace = MergeTrace(NAME, {"chunk_len": chunk_len, "overlap": overlap})
    chunks = encode_spans(engine, text, fixed_spans(len(text), chunk_len, overlap), encode_many)
    slices: list[tuple[int, int | None]] = []
    lo = 0
    for i in range(len(chunks) - 1):
        a = chunks[i].encoding.ids or ()
        b = chunks[i + 1].encoding.ids or ()
        w = _window(len(a), chunk_len, overlap)
        base = max(0, len(a) - w)
        ia, jb, n = longest_common_run(a[base:], b[:w])
        ia += base
        keep_left = ia + n
        slices.append((lo, keep_left))
        lo = jb + n
        trace.anchors.append(Anchor(i, keep_left, lo, -1, f"longest common id run n={n}"
                                    + (" (none: plain concatenation)" if n == 0 else "")))
    slices.append((lo, None))
    trace.chunks = chunks
    return MergeResult(keep_slices(chunks, slices), trace)
