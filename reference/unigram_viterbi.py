"""The reference Unigram Viterbi: best segmentation of one normalized pretoken.

Definitions (the spec this module implements; ``unigram_bruteforce`` checks it by enumeration):

- An *edge* ``(start, end, id)`` covers characters ``text[start:end]``: either a matchable piece
  equal to that substring (score ``scores[id]``), or an *unknown edge* over ONE character that no
  matchable one-character piece covers (score ``unk_score``, id ``unk_id``).
- A *segmentation* is a chain of edges from 0 to ``len(text)``; its score is the left-to-right sum
  of its edge scores (in float32 when ``model.float32``: sentencepiece's arithmetic).
- Viterbi returns a segmentation of maximal score. Tie-break, found by experiment (hypothesis
  over tied vocabularies, ``tests/test_reference_unigram.py``): BOTH libraries relax positions left
  to right and an end position keeps the FIRST predecessor that reached the best score, i.e. the
  earliest start (the longest last piece). ``tie_break="hf"`` and ``"spm"`` name this rule for
  each library (they coincide); ``"last"`` (keep the latest predecessor) exists so tests show the
  tie-break matters. The libraries still pick different segmentations of the same model when
  their ARITHMETIC differs: sentencepiece sums in float32 (``model.float32``), and HF parses
  tokenizer.json scores 1 ulp off (``tokspec.formats.unigram_model.serde_json_f64``); an early experiment
  that looked like a different HF tie-break was exactly that.
- Score re-basing (``model.score_reset``, sentencepiece 0.2.x; None for HF): before relaxing the
  edges leaving ``start``, if ``|best[start]| > score_reset``, that score is subtracted (in the
  model's arithmetic) from ``best[start]`` and from every position after ``start`` reached so
  far. Without float32 rounding this would change no decision; with it, the later sums are
  rounded near 0 instead of near -1e5, so long inputs (past ~100K characters, where path scores
  pass -1e5) segment differently (finding ``spm-score-reset-long-input``).

Positions are characters, not bytes: pieces are whole strings, so a byte-level lattice has edges
only between character boundaries and both views give the same segmentations.

Complexity: O(n * L) substring lookups, L = the longest matchable piece in characters; no caches.
Out of scope: n-best, sampling, user-defined-symbol bonuses.
"""

from __future__ import annotations

import struct
from typing import Literal

from tokspec.formats.unigram_model import UnigramModel

__all__ = ["TieBreak", "Edge", "viterbi", "edges_at", "edge_score", "f32", "path_add"]

TieBreak = Literal["hf", "spm", "last"]
Edge = tuple[int, int, int, bool]  # (start, end, id, is_unknown), characters of the pretoken


def f32(x: float) -> float:
    """Round ``x`` to the nearest float32 (exact for sums of two float32 values)."""
    return float(struct.unpack("<f", struct.pack("<f", x))[0])


def path_add(model: UnigramModel, total: float, score: float) -> float:
    """One step of a path score, in the model's arithmetic."""
    return f32(total + f32(score)) if model.float32 else total + score


def edges_at(model: UnigramModel, index: dict[str, int], text: str, start: int,
             max_len: int) -> list[Edge]:
    """All edges leaving ``start``, shortest first (the order both libraries enumerate them)."""
    out: list[Edge] = []
    has_single = False
    for end in range(start + 1, min(len(text), start + max_len) + 1):
        pid = index.get(text[start:end])
        if pid is not None and model.matchable[pid]:
            out.append((start, end, pid, False))
            has_single = has_single or end == start + 1
    if not has_single:  # an unknown edge over exactly one character
        out.append((start, start + 1, model.unk_id, True))
    return out


def edge_score(model: UnigramModel, edge: Edge) -> float:
    return model.unk_score if edge[3] else model.scores[edge[2]]


def viterbi(model: UnigramModel, index: dict[str, int], max_len: int, text: str,
            tie_break: TieBreak = "hf") -> list[Edge]:
    """Best segmentation of ``text``: its edges ``(start, end, id, is_unknown)`` in order.

    ``index`` maps piece -> id (built once by the caller), ``max_len`` is the longest matchable
    piece in characters. Empty text gives ``[]``.
    """
    n = len(text)
    best: list[float | None] = [0.0] + [None] * n
    back: list[Edge | None] = [None] * (n + 1)   # the best edge ending at each position
    for start in range(n):
        here = best[start]
        assert here is not None, "every position is reachable (unknown edges)"
        if model.score_reset is not None and abs(here) > model.score_reset:
            _rebase(model, best, start, min(n, start + max_len), here)
            here = 0.0
        for edge in edges_at(model, index, text, start, max_len):
            end = edge[1]
            cand = path_add(model, here, edge_score(model, edge))
            old = best[end]
            # strict '>' keeps the first (earliest-start) edge on ties; "last" keeps the latest
            if old is None or cand > old or (tie_break == "last" and cand == old):
                best[end], back[end] = cand, edge
    return _backtrack(back, n)


def _rebase(model: UnigramModel, best: list[float | None], start: int, last: int, offset: float) -> None:
    """Subtract ``offset`` from the scores of ``start`` and of the reached positions after it.

    Only ``start .. last`` can be reached yet: edges from before ``start`` end at most
    ``max_len - 1`` characters after it (the caller passes ``last = start + max_len``, clipped)."""
    for i in range(start, last + 1):
        old = best[i]
        if old is not None:
            best[i] = f32(old - offset) if model.float32 else old - offset


def _backtrack(back: list[Edge | None], n: int) -> list[Edge]:
    out: list[Edge] = []
    end = n
    while end > 0:
        edge = back[end]
        assert edge is not None
        out.append(edge)
        end = edge[0]
    out.reverse()
    return out
