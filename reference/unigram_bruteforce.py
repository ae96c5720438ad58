"""Brute-force Unigram segmentation: the specification of optimality the Viterbi must meet.

Enumerate EVERY segmentation of a short normalized pretoken into edges (the edge definition of
``unigram_viterbi``: matchable pieces, plus one-character unknown edges where no matchable
one-character piece exists), score each left to right in the model's arithmetic, keep the best.

Tie-break as a definition over whole segmentations (valid when sums are exact, e.g. dyadic
scores; with rounding, only the optimal SCORE is specified): ``"hf"``/``"spm"`` pick, among the
optimal segmentations, the one whose edge starts read right to left are lexicographically
SMALLEST (the last piece as long as possible, then the one before it, ...); ``"last"`` the largest.

Complexity: exponential (up to 2^(n-1) segmentations); use for n <= ~12 only.
Out of scope: anything but the argmax (no n-best, no sampling).
"""

from __future__ import annotations

from collections.abc import Iterator

from tokspec.reference.unigram_viterbi import Edge, TieBreak, edge_score, edges_at, path_add
from tokspec.formats.unigram_model import UnigramModel

__all__ = ["all_segmentations", "segmentation_score", "best_segmentations", "bruteforce"]


def all_segmentations(model: UnigramModel, index: dict[str, int], text: str,
                      max_len: int) -> Iterator[list[Edge]]:
    """Every chain of edges from 0 to ``len(text)``, depth first."""
    def extend(start: int, prefix: list[Edge]) -> Iterator[list[Edge]]:
        if start == len(text):
            yield list(prefix)
            return
        for edge in edges_at(model, index, text, start, max_len):
            prefix.append(edge)
            yield from extend(edge[1], prefix)
            prefix.pop()
    return extend(0, [])


def segmentation_score(model: UnigramModel, seg: list[Edge]) -> float:
    """Left-to-right sum of edge scores in the model's arithmetic (what Viterbi accumulates)."""
    total = 0.0
    for edge in seg:
        total = path_add(model, total, edge_score(model, edge))
    return total


def best_segmentations(model: UnigramModel, index: dict[str, int], text: str,
                       max_len: int) -> tuple[float, list[list[Edge]]]:
    """(best score, every segmentation reaching it). Empty text: (0.0, [[]])."""
    best: float | None = None
    winners: list[list[Edge]] = []
    for seg in all_segmentations(model, index, text, max_len):
        score = segmentation_score(model, seg)
        if best is None or score > best:
            best, winners = score, [seg]
        elif score == best:
            winners.append(seg)
    return (0.0 if best is None else best), winners


def bruteforce(model: UnigramModel, index: dict[str, int], text: str, max_len: int,
               tie_break: TieBreak = "hf") -> list[Edge]:
    """The optimal segmentation chosen by the tie-break definition in the module docstring."""
    _, winners = best_segmentations(model, index, text, max_len)
    def key(seg: list[Edge]) -> list[int]:
        return [edge[0] for edge in reversed(seg)]
    return max(winners, key=key) if tie_break == "last" else min(winners, key=key)
