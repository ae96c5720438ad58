"""reference/unigram_viterbi.py score re-basing (sentencepiece's ``score_reset``) on short inputs:
subtracting the running score changes no decision when the arithmetic is exact (the module
docstring's claim), so on dyadic scores, where float32 and float64 sums are exact, Viterbi with a
tiny reset threshold (re-basing at almost every position) equals Viterbi without one. The
brute-force tie-break definition is checked on the same models."""

from __future__ import annotations

import dataclasses

from hypothesis import example, given
from hypothesis import strategies as st

from tokspec.formats.normalize import Aligned
from tokspec.reference.unigram_bruteforce import best_segmentations, bruteforce, segmentation_score
from tokspec.reference.unigram_viterbi import viterbi
from tokspec.formats.unigram_model import UnigramModel


@st.composite
def dyadic_models(draw: st.DrawFn) -> tuple[UnigramModel, str]:
    """Pieces over 'abc' (+ unknown 'd') with scores in quarters: every path sum is exact."""
    pieces = sorted(set(draw(st.lists(st.text("abc", min_size=1, max_size=3), min_size=1, max_size=10))))
    scores = [draw(st.integers(-12, -1)) / 4 for _ in pieces]
    model = UnigramModel(
        pieces=("<unk>", *pieces), scores=(0.0, *scores), matchable=(False,) + (True,) * len(pieces),
        unk_id=0, unk_score=min(scores) - 10, byte_fallback=False, byte_ids=(), fuse_unk=True,
        flavour="spm", float32=draw(st.booleans()), pretokenizer=lambda t: [Aligned.of(t)])
    return model, draw(st.text("abcd", min_size=1, max_size=14))


def _index(model: UnigramModel) -> tuple[dict[str, int], int]:
    return {p: i for i, p in enumerate(model.pieces)}, max(len(p) for p in model.pieces[1:])


TIED = UnigramModel(("<unk>", "a", "b", "ab", "ba", "aba"), (0.0, -1.0, -1.0, -2.0, -2.0, -3.0),
                    (False, True, True, True, True, True), 0, -12.0, False, (), True, "spm", True,
                    lambda t: [Aligned.of(t)])


@given(dyadic_models(), st.sampled_from([0.25, 0.5, 1.0, 2.5, 7.0]), st.sampled_from(["spm", "last"]))
@example((TIED, "abababab"), 0.25, "spm")
@example((TIED, "abababab"), 0.5, "last")
@example((dataclasses.replace(TIED, float32=False), "babab"), 1.0, "spm")
def test_hyp_rebasing_changes_no_decision_in_exact_arithmetic(case: tuple[UnigramModel, str], reset: float,
                                                              rule: str) -> None:
    model, text = case
    index, max_len = _index(model)
    plain = viterbi(model, index, max_len, text, rule)  # type: ignore[arg-type]
    rebased = dataclasses.replace(model, score_reset=reset)
    assert viterbi(rebased, index, max_len, text, rule) == plain  # type: ignore[arg-type]
    assert plain == bruteforce(model, index, text, max_len, rule)  # type: ignore[arg-type]


@given(dyadic_models())
def test_hyp_best_segmentations_are_exactly_the_optimal_ones(case: tuple[UnigramModel, str]) -> None:
    model, text = case
    index, max_len = _index(model)
    best, winners = best_segmentations(model, index, text, max_len)
    assert winners and len(set(map(tuple, winners))) == len(winners)
    assert all(segmentation_score(model, w) == best for w in winners)
    assert best == segmentation_score(model, viterbi(model, index, max_len, text)) < 0
    assert bruteforce(model, index, text, max_len) == bruteforce(model, index, text, max_len, "hf")


def test_empty_text_has_one_empty_segmentation() -> None:
    index, max_len = _index(TIED)
    assert best_segmentations(TIED, index, "", max_len) == (0.0, [[]])
    assert viterbi(TIED, index, max_len, "") == [] == bruteforce(TIED, index, "", max_len)


def test_ties_counted_on_a_fixed_case() -> None:
    """'aba' = a+b+a = ab+a = a+ba = aba, all scoring -3: four optimal segmentations."""
    index, max_len = _index(TIED)
    best, winners = best_segmentations(TIED, index, "aba", max_len)
    assert best == -3.0 and len(winners) == 4
    assert [e[2] for e in bruteforce(TIED, index, "aba", max_len, "hf")] == [5]
    assert [e[2] for e in bruteforce(TIED, index, "aba", max_len, "last")] == [1, 2, 1]


def test_rebasing_starts_strictly_above_the_threshold() -> None:
    """The documented rule re-bases when |best[start]| > score_reset, not at equality. Worked case
    in float32 with score_reset = 1: 'ab' = a (-1) + b (-3 * 2**-25) or ab (-1 - 2**-23). At start 1
    the score is exactly -1, so no re-basing: -1 + b rounds to -1 - 2**-23, a tie, and the first
    edge (ab) stays. Re-basing there would compare b (-3 * 2**-25) with ab + 1 (-2**-23): a + b."""
    model = UnigramModel(("<unk>", "a", "b", "ab"), (0.0, -1.0, -3 * 2.0**-25, -1 - 2.0**-23),
                         (False, True, True, True), 0, -20.0, False, (), True, "spm", True,
                         lambda t: [Aligned.of(t)], score_reset=1.0)
    index, max_len = _index(model)
    assert [e[2] for e in viterbi(model, index, max_len, "ab", "spm")] == [3]
    assert [e[2] for e in viterbi(dataclasses.replace(model, score_reset=0.5), index, max_len, "ab", "spm")] == [1, 2]


def test_float64_models_rebase_without_float32_rounding() -> None:
    """In float64 a re-based score stays a float64: ab (-0.2 + 1e-12) beats a + b (-0.2) with or
    without re-basing; rounding the re-based -0.1 + 1e-12 to float32 (-0.10000000149) would flip it."""
    model = UnigramModel(("<unk>", "a", "b", "ab"), (0.0, -0.1, -0.1, -0.2 + 1e-12), (False, True, True, True),
                         0, -20.0, False, (), True, "hf", False, lambda t: [Aligned.of(t)], score_reset=0.05)
    index, max_len = _index(model)
    assert [e[2] for e in viterbi(model, index, max_len, "ab")] == [3]
    assert viterbi(model, index, max_len, "ab") == viterbi(dataclasses.replace(model, score_reset=None), index,
                                                           max_len, "ab")
