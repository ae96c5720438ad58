"""Unit tests of tokspec.spec.wordpiece and tokspec.spec.unigram."""

from __future__ import annotations

import pytest

from tokspec.spec import unigram as U
from tokspec.spec import wordpiece as W

VOCAB = frozenset({"un", "unaff", "##aff", "##able", "##a", "##ble", "a"})


def test_wordpiece_definition() -> None:
    assert W.wordpiece_word(VOCAB, "unaffable") == ["unaff", "##able"]
    assert W.wordpiece_word(VOCAB, "unx") == ["[UNK]"]  # whole-word unknown
    assert W.wordpiece_word(VOCAB, "a" * 5, max_chars=4) == ["[UNK]"]


def test_greedy_pieces_detects_non_greedy() -> None:
    assert W.prop_greedy_pieces(VOCAB, ["unaff", "##able", "[UNK]", "a"]).holds
    v = W.prop_greedy_pieces(VOCAB, ["un", "##aff", "##able"])
    assert not v.holds and v.witness is not None and v.witness["expected"] == ["unaff", "##able"]
    v = W.prop_greedy_pieces(VOCAB, ["un", "##x"])  # should have been one [UNK] for the word
    assert not v.holds and v.witness is not None and v.witness["expected"] == ["[UNK]"]


def test_unigram_brute_force() -> None:
    scores = {"a": -1.0, "b": -1.0, "ab": -1.5, "abb": -3.0}
    assert U.all_segmentations(scores, "abb") == [["a", "b", "b"], ["ab", "b"], ["abb"]]
    assert U.best_segmentations(scores, "abb") == (-2.5, [["ab", "b"]])
    assert U.best_segmentations(scores, "c") == (None, [])


def test_viterbi_optimal_property() -> None:
    scores = {"a": -1.0, "b": -1.0, "ab": -1.5}
    assert U.prop_viterbi_optimal(scores, "ab", ["ab"]).holds
    assert not U.prop_viterbi_optimal(scores, "ab", ["a", "b"]).holds
    assert not U.prop_viterbi_optimal(scores, "ab", ["ab", "x"]).holds
    assert U.prop_viterbi_optimal(scores, "c", None).holds
    assert not U.prop_viterbi_optimal(scores, "ab", None).holds


def test_tie_break_prefers_longest_last_piece() -> None:
    scores = {"a": -1.0, "aa": -1.0}
    assert U.preferred_segmentation(scores, "aaaaa") == ["a", "aa", "aa"]
    assert U.prop_tie_break(scores, "aaaaa", ["a", "aa", "aa"]).holds
    assert not U.prop_tie_break(scores, "aaaaa", ["aa", "aa", "a"]).holds


def test_tie_break_refuses_a_nan_score() -> None:
    """A NaN score leaves "optimal" undefined (no segmentation's score equals the maximum): the
    brute-force definition refuses loudly instead of returning an arbitrary segmentation."""
    with pytest.raises(AssertionError, match="^an optimal segmentation has a last piece$"):
        U.preferred_segmentation({"a": float("nan")}, "a")
