"""Unit tests of tokspec.spec.wordpiece and tokspec.spec.unigram."""

from __future__ import annotations

import pytest
from tokenizers import Tokenizer, models

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


def _hf_pieces(vocab: list[str], text: str, **options: object) -> list[str]:
    """HF ``tokenizers``' WordPiece model alone (no normalizer/pretokenizer) on one word."""
    model = models.WordPiece({p: i for i, p in enumerate(vocab)}, **options)
    return Tokenizer(model).encode(text, add_special_tokens=False).tokens


def test_greedy_verdicts_follow_the_production_defaults_and_options() -> None:
    """The properties' defaults are HF's (max_input_chars_per_word 100, "[UNK]", "##") and every
    option reaches the definition: judged on pieces HF itself produced, under HF's settings and
    under settings the property was not told about (an engine with a different limit/prefix)."""
    vocab = ["[UNK]", "<unk>", "a", "##a", "@@a", "b", "@@b"]
    for n in (100, 101):  # HF's default limit: 100 characters segment, 101 are one unknown
        word, hf = "a" * n, _hf_pieces(vocab, "a" * n, unk_token="[UNK]")
        assert hf == (["a"] + ["##a"] * (n - 1) if n <= 100 else ["[UNK]"])
        assert W.prop_greedy_word(vocab, word, hf).holds and W.prop_greedy_pieces(vocab, hf).holds
    long_limit = _hf_pieces(vocab, "a" * 101, unk_token="[UNK]", max_input_chars_per_word=101)
    assert not W.prop_greedy_word(vocab, "a" * 101, long_limit).holds
    assert not W.prop_greedy_pieces(vocab, long_limit).holds  # a 101-char word segmented is wrong
    # a tighter limit, passed on by both properties
    short = _hf_pieces(vocab, "aaaaaa", unk_token="[UNK]", max_input_chars_per_word=5)
    default_limit = _hf_pieces(vocab, "aaaaaa", unk_token="[UNK]")
    assert short == ["[UNK]"] and W.prop_greedy_word(vocab, "aaaaaa", short, max_chars=5).holds
    assert not W.prop_greedy_word(vocab, "aaaaaa", default_limit, max_chars=5).holds
    assert not W.prop_greedy_pieces(vocab, default_limit, max_chars=5).holds
    # another continuation prefix, passed on by prop_greedy_pieces
    at = _hf_pieces(vocab, "aab", unk_token="[UNK]", continuing_subword_prefix="@@")
    assert at == ["a", "@@a", "@@b"] and W.prop_greedy_pieces(vocab, at, prefix="@@").holds
    # another unknown token: "[UNK]" is then an ordinary piece, which greedy cannot produce for a
    # word "[UNK]" when the vocabulary has no such entry
    unk_vocab = [p for p in vocab if p != "[UNK]"]
    assert _hf_pieces(unk_vocab, "x", unk_token="<unk>") == ["<unk>"]
    assert W.prop_greedy_pieces(unk_vocab, ["<unk>", "a"], unk="<unk>").holds
    assert not W.prop_greedy_pieces(unk_vocab, ["[UNK]", "a"], unk="<unk>").holds


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
