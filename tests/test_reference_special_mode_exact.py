"""tokspec.reference.special_mode case by case on a one-id-per-character toy encoder (no vocabulary:
fast in interpreted mode, a mutation killer): word characters, flag boundaries, the pieces between
matches, post-processing offsets, refusal, and reading added tokens and templates from
tokenizer.json dicts, each error by its message."""

from __future__ import annotations

import pytest

from tokspec import Encoding
from tokspec.errors import DisallowedSpecialError, UnsupportedComponentError
from tokspec.reference.special_mode import (AddedToken, added_tokens_of, encode_special, refused_special,
                                            split_special, template_of)
from tokspec.reference.special_mode import _allowed, _word_char

A = AddedToken("<a>", 1)


def _plain(text: str) -> Encoding:
    return Encoding.of([ord(c) for c in text], [(i, i + 1) for i in range(len(text))])


def test_word_characters() -> None:
    assert _word_char("a") and _word_char("7") and _word_char("_") and _word_char("é")
    assert not _word_char("-") and not _word_char(" ") and not _word_char(".")


def test_single_word_boundaries() -> None:
    w = AddedToken("<w>", 4, single_word=True)
    assert _allowed("<w>", 0, 3, w) and _allowed(" <w> ", 1, 4, w) and _allowed(".<w>", 1, 4, w)
    assert not _allowed("a<w>", 1, 4, w) and not _allowed("<w>b", 0, 3, w) and not _allowed("_<w>", 1, 4, w)
    assert not _allowed("<w>_", 0, 3, w)
    assert _allowed("a<a>b", 1, 4, A)  # without the flag every position is allowed


def test_pieces_between_matches() -> None:
    spaced = AddedToken("<a> ", 1)  # a token ending in a space: lstrip of the next stops at it
    left = AddedToken("<l>", 2, lstrip=True)
    assert split_special("<a>  <l>", [spaced, left]) == [(0, 4, spaced), (4, 8, left)]
    assert split_special("x <l>", [left]) == [(0, 1, None), (1, 5, left)]
    right = AddedToken("<r>", 3, rstrip=True)
    assert split_special("<r>  ", [right]) == [(0, 5, right)]
    assert split_special("x<r>", [right]) == [(0, 1, None), (1, 4, right)]
    assert split_special("<r> x", [right]) == [(0, 4, right), (4, 5, None)]  # one space absorbed, not two
    w = AddedToken("<w>", 4, single_word=True)
    assert split_special(" <w>a", [w]) == [(0, 5, None)]  # the character after the match is checked
    assert split_special("<a><a>", [A]) == [(0, 3, A), (3, 6, A)]  # no empty piece between
    assert split_special("a<a", [A]) == [(0, 3, None)]
    longer, shorter = AddedToken("<ab>", 2), AddedToken("<a", 3)
    assert split_special("<ab>", [shorter, longer]) == [(0, 4, longer)]
    assert split_special("<ab>", [longer, shorter]) == [(0, 4, longer)]


class _NoIds:
    """An encode returning no ids (a pretokenizer-like piece): special mode adds nothing for it."""

    def __call__(self, text: str) -> Encoding:
        return Encoding(None, ((0, len(text)),))


def test_encode_special_pieces_and_template() -> None:
    enc = encode_special("xy<a>z", [A], _plain)
    assert enc.ids == (120, 121, 1, 122) and enc.offsets == ((0, 1), (1, 2), (2, 5), (5, 6))
    assert encode_special("q<a>", [A], _NoIds()).ids == (1,)
    post = encode_special("ab", [A], _plain, template=[7, None, 8], post_process=True)
    assert post.ids == (7, 97, 98, 8) and post.offsets == ((0, 0), (0, 1), (1, 2), (2, 2))
    before = encode_special("ab", [A], _plain, template=[5, 6, None], post_process=True)
    assert before.offsets == ((0, 0), (0, 0), (0, 1), (1, 2))
    assert encode_special("ab", [A], _plain, template=[], post_process=True).ids == (97, 98)
    assert encode_special("ab", [A], _plain, template=[7, None]).ids == (97, 98)  # post_process is off by default
    assert encode_special("ab", [A], _plain, template=[7, None], post_process=False).offsets == ((0, 1), (1, 2))


def test_encode_special_refusal() -> None:
    with pytest.raises(DisallowedSpecialError) as info:
        encode_special("a<a>b<z>", [A], _plain, disallowed=["<z>"])
    assert info.value.token == "<z>"
    assert encode_special("a<a>b<z", [A], _plain, disallowed=["<z>"]).ids == (97, 1, 98, 60, 122)
    assert refused_special("<z><y>", ["<y>", "<z>"]) == "<z>" and refused_special("<z", ["<z>"]) is None
    assert refused_special("ab<yy>", ["<y", "<yy>", "y>"]) == "<yy>"
    assert refused_special("xy", ["", "y"]) == "y" and refused_special("", [""]) is None


def test_added_tokens_of() -> None:
    data = {"added_tokens": [
        {"content": "<s>", "id": 1, "special": True},
        {"content": "word", "id": 2, "special": False},
        {"content": "<m>", "id": "3", "special": True, "single_word": 1, "lstrip": True, "rstrip": 0},
        {"content": "<n>", "id": 4, "special": True, "normalized": False, "rstrip": True}]}
    assert added_tokens_of(data) == [AddedToken("<s>", 1), AddedToken("<m>", 3, True, True, False),
                                     AddedToken("<n>", 4, False, False, True)]
    assert added_tokens_of({}) == [] and added_tokens_of({"added_tokens": None}) == []
    with pytest.raises(UnsupportedComponentError, match=r"^added token '<x>' is normalized=True$"):
        added_tokens_of({"added_tokens": [{"content": "<x>", "id": 5, "special": True, "normalized": True}]})
    # a normalized token that is not special is skipped, not refused
    assert added_tokens_of({"added_tokens": [{"content": "w", "id": 5, "normalized": True}]}) == []


def test_template_of_dicts() -> None:
    post = {"type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                       {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
            "special_tokens": {"[CLS]": {"id": "[CLS]", "ids": [101, "9"]}, "[SEP]": {"id": "[SEP]", "ids": [102]}}}
    assert template_of({"post_processor": post}) == [101, 9, None, 102]
    assert template_of({}) == [] and template_of({"post_processor": None}) == []
    with pytest.raises(UnsupportedComponentError, match=r"^post_processor type='ByteLevel' has no reference$"):
        template_of({"post_processor": {"type": "ByteLevel"}})
