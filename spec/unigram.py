"""Unigram: optimality of a segmentation, by brute force over all segmentations.

Source: ``/work/shared/seeds/unigram-double-array-viterbi.txt``, "The Viterbi Algorithm" ("the
encoder picks the segmentation whose token scores sum to the highest value") and "Final
comparison" ("produces token-exact output against the reference").

The definition (:func:`best_segmentations`) enumerates every split of a short string into
vocabulary pieces: exponential on purpose, it is the specification Viterbi must meet. Scores are
compared exactly after summing in left-to-right order, the order a Viterbi accumulates them; an
engine summing in another order could differ in the last bit, which this module would report.

Out of scope: normalization and the whitespace marker (engines apply them before Viterbi), unknown
characters and byte fallback (a text with an uncovered character has no segmentation here).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from tokspec.spec._verdict import Claim, Verdict, fails, holds, register

__all__ = ["segmentation_score", "all_segmentations", "best_segmentations", "prop_viterbi_optimal",
           "preferred_segmentation", "prop_tie_break"]


def segmentation_score(scores: Mapping[str, float], pieces: Sequence[str]) -> float:
    """Sum of piece scores, left to right."""
    total = 0.0
    for p in pieces:
        total += scores[p]
    return total


def all_segmentations(scores: Mapping[str, float], text: str) -> list[list[str]]:
    """Every way to write ``text`` as a sequence of vocabulary pieces. O(2^n) for n characters."""
    if not text:
        return [[]]
    out: list[list[str]] = []
    for end in range(1, len(text) + 1):
        head = text[:end]
        if head in scores:
            out += [[head] + tail for tail in all_segmentations(scores, text[end:])]
    return out


def best_segmentations(scores: Mapping[str, float], text: str) -> tuple[float | None, list[list[str]]]:
    """The maximum score and every segmentation reaching it (``(None, [])`` if there is none)."""
    segs = all_segmentations(scores, text)
    if not segs:
        return None, []
    best = max(segmentation_score(scores, s) for s in segs)
    return best, [s for s in segs if segmentation_score(scores, s) == best]


def prop_viterbi_optimal(scores: Mapping[str, float], text: str, pieces: Sequence[str] | None) -> Verdict:
    """``pieces`` (an engine's segmentation of ``text``, None if it found none) is one of the
    maximum-score segmentations. Ties: any optimal segmentation passes here; which one a library
    picks is the business of a differential check."""
    best, winners = best_segmentations(scores, text)
    if pieces is None or best is None:
        if pieces is None and best is None:
            return holds("no segmentation exists and the engine found none")
        return fails("engine and brute force disagree on whether a segmentation exists",
                     text=text, got=None if pieces is None else list(pieces), best=winners[:3])
    if "".join(pieces) != text or any(p not in scores for p in pieces):
        return fails("pieces are not a segmentation of the text into vocabulary pieces",
                     text=text, got=list(pieces))
    got = segmentation_score(scores, pieces)
    if list(pieces) in winners:
        return holds(f"optimal (score {got}, {len(winners)} optimal segmentations)")
    return fails("segmentation is not optimal", text=text, got=list(pieces), got_score=got,
                 best=winners[0], best_score=best)


def preferred_segmentation(scores: Mapping[str, float], text: str) -> list[str] | None:
    """The optimal segmentation both HF and sentencepiece return on ties, defined by brute force:
    from the end, the *longest last piece* that still completes an optimal segmentation, then the
    preferred segmentation of the rest. (A Viterbi that relaxes positions left to right and keeps
    the first predecessor reaching the best score at each end position returns exactly this.)
    None when no segmentation exists. Exponential; for short texts only."""
    if not text:
        return []
    best, _ = best_segmentations(scores, text)
    if best is None:
        return None
    for k in range(len(text)):          # k = start of the last piece; smallest k = longest piece
        last = text[k:]
        if last not in scores:
            continue
        head_best, _ = best_segmentations(scores, text[:k])
        if head_best is not None and head_best + scores[last] == best:
            head = preferred_segmentation(scores, text[:k])
            assert head is not None
            return head + [last]
    raise AssertionError("an optimal segmentation has a last piece")


def prop_tie_break(scores: Mapping[str, float], text: str, pieces: Sequence[str] | None) -> Verdict:
    """Among optimal segmentations, ``pieces`` is the one HF/sentencepiece pick
    (:func:`preferred_segmentation`). Source: engineer C's reference (``reference/unigram_viterbi.py``
    docstring: "keeps the FIRST predecessor that reached the best score") confirmed against both
    libraries there; this states it without a Viterbi."""
    want = preferred_segmentation(scores, text)
    if (None if pieces is None else list(pieces)) == want:
        return holds("the library tie-break segmentation")
    return fails("not the tie-break choice (longest last piece among optimal segmentations)",
                 text=text, got=None if pieces is None else list(pieces), expected=want)


register(Claim("unigram.viterbi_optimal", "seeds/unigram-double-array-viterbi.txt, The Viterbi Algorithm",
               "Viterbi returns a segmentation with the highest total piece score.", "checked",
               prop_viterbi_optimal))
register(Claim("unigram.tie_break", "reference/unigram_viterbi.py docstring (engineer C, by experiment on "
               "HF tokenizers and sentencepiece); seeds/unigram-double-array-viterbi.txt, Final comparison "
               "(token-exact output requires the same tie-break)",
               "Among optimal segmentations, both libraries return the one with the longest last piece, "
               "recursively.", "checked", prop_tie_break))
