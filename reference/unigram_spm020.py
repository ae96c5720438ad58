"""The Unigram Viterbi of sentencepiece 0.2.0, the lowest release tokspec installs next to.

sentencepiece 0.2.0's optimized encoder (``EncodeOptimized`` in its ``unigram_model.cc``) differs
from the Viterbi of :mod:`tokspec.reference.unigram_viterbi` (what 0.2.3, tokspec's CI release, does)
in two ways, found against the library (finding ``sentencepiece-0.2.0-viterbi-arithmetic`` in
``corpora/production/findings_old_releases.json``):

- V1 (arithmetic): the stored best score of each position is a float32, but the candidate score
  of a piece edge is computed in float64: the piece's score is the ``?:`` of a float32 score and
  a user-defined bonus written with the double literal ``0.1``, so its type is double. The
  candidate ``best[start] + score`` (exact in float64) is compared with the stored float32 with
  ``>``, and stored rounded to float32. An UNKNOWN edge's candidate stays float32 (both operands
  are float). So two paths whose float32 left-to-right sums tie can differ by one rounding here:
  the earlier relaxed one no longer always wins.
- V2: no score re-basing (``score_reset``): path scores just grow with the input.

Everything else (edges, their order, ``>`` keeping the first of equal candidates, backtracking,
unknown and byte-fallback emission) is the 0.2.3 rule, reused from :mod:`tokspec.reference.unigram`.
Same complexity: O(n * L) substring lookups per pretoken. Out of scope: user-defined symbols (the
models tokspec reads have none), n-best, sampling.
"""

from __future__ import annotations

from pathlib import Path

from tokspec.formats.unigram_model import UnigramModel, unigram_model_from_spm
from tokspec.reference.unigram import OffsetMode, Token, UnigramReference, _emit_spm
from tokspec.reference.unigram_viterbi import Edge, _backtrack, edges_at, f32

__all__ = ["viterbi_spm_0_2_0", "Spm020UnigramReference", "unigram_encoder_from_spm_model_0_2_0"]


def viterbi_spm_0_2_0(model: UnigramModel, index: dict[str, int], max_len: int, text: str) -> list[Edge]:
    """Best segmentation of ``text`` as sentencepiece 0.2.0 computes it (V1, V2 above).

    Invariant: ``best[i]`` is always a float32 value (it is stored rounded); a piece candidate is
    the float64 sum ``best[start] + scores[id]``, an unknown candidate ``f32(best[start] + unk)``.
    """
    n = len(text)
    best: list[float | None] = [0.0] + [None] * n
    back: list[Edge | None] = [None] * (n + 1)
    for start in range(n):
        here = best[start]
        assert here is not None, "every position is reachable (unknown edges)"
        for edge in edges_at(model, index, text, start, max_len):
            end = edge[1]
            if edge[3]:  # unknown edge: float + float in C++, a float32 sum
                cand = f32(here + model.unk_score)
            else:  # piece edge: double score (V1), the sum is not rounded before the comparison
                cand = here + model.scores[edge[2]]
            old = best[end]
            if old is None or cand > old:  # strict: the first of equal candidates stays
                best[end], back[end] = f32(cand), edge
    return _backtrack(back, n)


class Spm020UnigramReference(UnigramReference):
    """:class:`UnigramReference` with sentencepiece 0.2.0's Viterbi (:func:`viterbi_spm_0_2_0`);
    spm flavour only."""

    def encode_pretoken(self, text: str) -> list[Token]:
        edges = viterbi_spm_0_2_0(self.model, self.index, self.max_len, text)
        return _emit_spm(self.model, text, edges, self.offsets == "contract")


def unigram_encoder_from_spm_model_0_2_0(path: str | Path, name: str, *,
                                         offsets: OffsetMode = "contract") -> Spm020UnigramReference:
    """Reference engine for a sentencepiece Unigram ``.model`` as sentencepiece 0.2.0 encodes it
    (no re-basing: ``score_reset=None``)."""
    return Spm020UnigramReference(unigram_model_from_spm(path, score_reset=None), name, offsets=offsets)
