"""``lopt-paper``: the LoPT paper's Algorithm 3, as published (Shao et al., "LoPT: Lossless Parallel
Tokenization Acceleration for Long Context Inference of Large Language Model").

1. Split ``S`` into chunks ``s_i = S[Lc*(i-1) : Lc*i + Lo]`` (eq. 1).
2. Encode every chunk (in parallel), keeping each token's character span.
3. ``Match(P_i, P_{i+1})``: the longest run of consecutive tokens of chunk i and chunk i+1 whose
   *global* character spans are equal, among tokens lying inside the overlap ``[start_{i+1}, end_i)``.
   Token ids are not compared (the paper: "without expensive token ID comparisons").
4. If some run is shorter than the minimum-match threshold (2 in the paper's implementation; the
   paper's Theorem 4.1 only needs ``n > 0``), double ``Lc`` and start over.
5. ``T = T_1[:l_1+n_1] + T_2[r_1+n_1 : l_2+n_2] + ... + T_N[r_{N-1}+n_{N-1}:]`` (eq. 4).

This strategy is NOT lossless: ``tokspec.spec.merge`` holds the paper's theorem as a predicate and
``corpora/merge/`` holds inputs where the merged output differs from serial encoding.
Out of scope: the paper's C++ merge and process pool details; parallelism comes from ``encode_many``.
Complexity: O(n) characters encoded per attempt plus O(tokens) for matching; every
failed match doubles ``Lc``, so at most log2(n / Lc) + 1 attempts (the last one serial).
"""

from __future__ import annotations

from tokspec import Encoder
from tokspec.fast._chunking import (Anchor, Chunk, EncodeMany, MergeResult, MergeTrace,
                                    check_positive, encode_spans, fixed_spans, keep_slices)

__all__ = ["NAME", "match_positions", "merge"]

NAME = "lopt-paper"


def match_positions(left: Chunk, right: Chunk) -> tuple[int, int, int]:
    """``Match(P_i, P_{i+1})``: (l, r, n) for the longest run of ``n`` consecutive tokens,
    ``left[l:l+n]`` and ``right[r:r+n]``, with equal global spans inside the overlap; (0, 0, 0)
    when none. The first longest run (leftmost in the right chunk, then in the left) wins.

    Equal global spans lie inside the overlap ``[right.start, left.end)`` by themselves (a left
    token ends by ``left.end``, a right token starts from ``right.start``), so all tokens are
    compared and a token outside the overlap simply breaks a run. Runs are extended as in longest
    common substring, keyed by left index, so several tokens on one span (byte fallback) each
    count. O(tokens of both chunks) when spans are distinct; a span repeated ``a`` times on the
    left and ``b`` on the right costs ``a * b``.
    """
    left_at: dict[tuple[int, int], list[int]] = {}
    for k, (s, e) in enumerate(left.encoding.offsets):
        left_at.setdefault((s + left.start, e + left.start), []).append(k)
    best = (0, 0, 0)
    ending: dict[int, int] = {}  # left index j -> length of the run ending at (j, previous right token)
    for r, (s, e) in enumerate(right.encoding.offsets):
        now: dict[int, int] = {}
        for j in left_at.get((s + right.start, e + right.start), ()):
            n = ending.get(j - 1, 0) + 1
            now[j] = n
            if n > best[2]:
                best = (j - n + 1, r - n + 1, n)
        ending = now
    return best


def _attempt(engine: Encoder, text: str, chunk_len: int, overlap: int, min_match: int,
             encode_many: EncodeMany | None, trace: MergeTrace) -> MergeResult | None:
    """One split/encode/match pass; None (and a note) when some match is below the threshold."""
    chunks = encode_spans(engine, text, fixed_spans(len(text), chunk_len, overlap), encode_many)
    anchors = []
    for i in range(len(chunks) - 1):
        l_i, r_i, n_i = match_positions(chunks[i], chunks[i + 1])
        if n_i < min_match:
            trace.notes.append(f"Lc={chunk_len}: match {i}/{i + 1} has n={n_i} < {min_match}; doubling Lc")
            return None
        pos = chunks[i].start + chunks[i].encoding.offsets[l_i + n_i - 1][1]
        anchors.append(Anchor(i, l_i + n_i, r_i + n_i, pos, f"position match l={l_i} r={r_i} n={n_i}"))
    slices: list[tuple[int, int | None]] = []
    for i in range(len(chunks)):
        lo = anchors[i - 1].keep_right if i > 0 else 0
        hi = anchors[i].keep_left if i < len(anchors) else None
        slices.append((lo, hi))
    trace.chunks, trace.anchors = chunks, anchors
    trace.params["final_chunk_len"] = chunk_len
    return MergeResult(keep_slices(chunks, slices), trace)


def merge(engine: Encoder, text: str, *, chunk_len: int, overlap: int, min_match: int = 2,
          encode_many: EncodeMany | None = None) -> MergeResult:
    """Algorithm 3 of the LoPT paper (see module docstring); ``min_match`` is the threshold."""
    check_positive("chunk_len", chunk_len)
    check_positive("overlap", overlap, allow_zero=True)
    check_positive("min_match", min_match)
    trace = MergeTrace(NAME, {"chunk_len": chunk_len, "overlap": overlap, "min_match": min_match})
    lc = chunk_len
    while True:
        result = _attempt(engine, text, lc, overlap, min_match, encode_many, trace)
        if result is not None:
            return result
        lc *= 2
