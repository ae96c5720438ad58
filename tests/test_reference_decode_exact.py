"""tokspec.reference.decode at its edges, on synthetic inputs (no vocabulary: fast in interpreted
mode, a mutation killer): Strip's two scans when the content fills the token, byte pieces whose hex
digits are not digits, error messages by their text, and which sentencepiece pieces are special."""

from __future__ import annotations

import pytest

from tokspec.reference import decode as rd
from tokspec.reference.decode import UnknownIdError


def test_strip_trailing_scan() -> None:
    assert rd._strip("ab  ", " ", 0, 2) == "ab" and rd._strip("ab   ", " ", 0, 2) == "ab "
    assert rd._strip("ab ", " ", 0, 1) == "ab" and rd._strip("a b", " ", 0, 1) == "a b"
    # the content fills the token: the trailing scan stops where the leading one ended
    assert rd._strip("  ", " ", 0, 5) == "" and rd._strip("   ", " ", 1, 5) == ""
    assert rd._strip(" x ", " ", 1, 5) == "x" and rd._strip("xx", "x", 1, 1) == ""


def test_byte_of_piece_needs_hex_digits() -> None:
    for piece in ("<0xXX>", "<0xX1>", "<0x1X>", "<0xG0>", "<0x0g>"):
        assert rd.byte_of_piece(piece) is None, piece
    assert rd.byte_of_piece("<0xAF>") == 0xAF and rd.byte_of_piece("<0x9E>") == 0x9E


def test_error_messages() -> None:
    with pytest.raises(UnknownIdError, match=r"^id=9 is outside the model's 2 pieces$"):
        rd.decode_spm(["a", "b"], ["normal", "normal"], False, [0, 9])
    with pytest.raises(UnknownIdError, match=r"^id=-1 is outside the model's 2 pieces$"):
        rd.decode_spm(["a", "b"], ["normal", "normal"], False, [-1])
    with pytest.raises(UnknownIdError, match=r"^id=7 is no token of this vocabulary$"):
        rd.decode_bytelevel({0: b"a"}, {5: "<s>"}, [0, 5, 7])


def test_spm_decoder_specials_are_the_control_pieces() -> None:
    dec = rd.SpmDecoder(["<unk>", "<s>", "</s>", "\u2581a", "<0x41>"], ["unknown", "control", "control", "normal", "byte"], True)
    assert dec.specials == {"<s>": 1, "</s>": 2} and dec.n_vocab == 5
    engine = rd.attach(type("E", (), {})(), dec)
    assert engine.special_tokens() == {"<s>": 1, "</s>": 2} and engine.decode([1, 3, 4, 2]) == "aA"


def test_bytelevel_special_is_utf8() -> None:
    assert rd.decode_bytelevel({0: b"\xc3"}, {5: "é"}, [5, 0]) == "é\ufffd"
    assert rd.decode_bytelevel({0: b"\xc3", 1: b"\xa9"}, {}, [0, 1]) == "é"


def test_wordpiece_step_defaults() -> None:
    bare = {"type": "WordPiece"}  # prefix "##" and cleanup on by default
    assert rd._step(bare, ["a", "##b", "c", "."]) == ["a", "b", " c", "."]
    assert rd._step({**bare, "prefix": "@@"}, ["a", "@@b", "##c"]) == ["a", "b", " ##c"]
    assert rd._step({**bare, "cleanup": False}, ["a", "."]) == ["a", " ."]


def test_bytefallback_strip_replace_kinds() -> None:
    assert rd._step({"type": "ByteFallback"}, ["<0x41>", "b"]) == ["A", "b"]
    strip = {"type": "Strip", "content": " ", "start": 1, "stop": 2}
    assert rd._step(strip, ["  a  ", " b"]) == [" a", "b"]
    assert rd._step({"type": "Strip", "content": " ", "start": 1}, [" a ", "  "]) == ["a ", " "]
    assert rd._step({"type": "Strip", "content": " ", "stop": 1}, [" a ", "  "]) == [" a", " "]
    assert rd._step({"type": "Strip", "content": "x"}, ["xax"]) == ["xax"]
    assert rd._step({"type": "Strip", "content": "x", "start": 2, "stop": 0}, ["xxxa"]) == ["xa"]
    with pytest.raises(rd.UnsupportedComponentError, match=r"^HF decoder type='Replace' has no reference decoder$"):
        rd._step({"type": "Replace", "content": " "}, ["a"])  # no pattern: not a String replace
    with pytest.raises(rd.UnsupportedComponentError, match="type='Replace'"):
        rd._step({"type": "Replace", "pattern": {"Regex": "a"}, "content": " "}, ["a"])
    with pytest.raises(rd.UnsupportedComponentError, match="type='CTC'"):
        rd._step({"type": "CTC", "pattern": {"String": "a"}, "content": "b"}, ["a"])


def test_metaspace_step_replacement_and_first_token() -> None:
    assert rd._step({"type": "Metaspace"}, ["\u2581a", "\u2581b"]) == ["a", " b"]
    assert rd._step({"type": "Metaspace", "replacement": "_"}, ["_a", "\u2581b"]) == ["a", "\u2581b"]
    assert rd._step({"type": "Metaspace"}, ["\u2581a", "b"]) == ["a", "b"]  # the first token only
    assert rd._step({"type": "Metaspace"}, ["a", "\u2581b"]) == ["a", " b"]
    assert rd._step({"type": "Metaspace"}, ["\u2581"]) == [""] and rd._step({"type": "Metaspace"}, []) == []
    assert rd._step({"type": "Metaspace", "prepend_scheme": "first"}, ["\u2581a"]) == ["a"]


def test_sequence_step_applies_each_in_order() -> None:
    seq = {"type": "Sequence", "decoders": [{"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "},
                                            {"type": "ByteFallback"}, {"type": "Fuse"},
                                            {"type": "Strip", "content": " ", "start": 1, "stop": 0}]}
    assert rd._step(seq, ["\u2581a", "<0xC3>", "<0xA9>", "\u2581b"]) == ["aé b"]
    assert rd._step({"type": "Sequence", "decoders": []}, ["a", "b"]) == ["a", "b"]


def test_bytelevel_decoder_tables() -> None:
    dec = rd.ByteLevelDecoder({b"a": 0, b"b": 1, b"d": 3}, {"<|e|>": 7})
    assert dec.by_id == {0: b"a", 1: b"b", 3: b"d"} and dec.specials == {7: "<|e|>"}
    assert dec.n_vocab == 2 and dec([0, 7, 3]) == "a<|e|>d"  # ids 0 .. 1 are all tokens
    assert rd.ByteLevelDecoder({b"a": 1}, {}).n_vocab == 0 and rd.ByteLevelDecoder({}, {}).n_vocab == 0
    assert rd.ByteLevelDecoder({b"a": 0}, {}).n_vocab == 1
    engine = rd.attach(type("E", (), {})(), dec)
    assert engine.special_tokens() == {"<|e|>": 7} and engine.n_vocab == 2 and engine.decode([1]) == "b"


def test_hf_decoder_tables() -> None:
    data = {"model": {"type": "WordPiece", "vocab": {"a": 0, "##b": 1}},
            "added_tokens": [{"id": 4, "content": "[CLS]", "special": True},
                             {"id": 2, "content": "hi", "special": False}],
            "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True}}
    dec = rd.HfDecoder(data)
    assert dec.vocab == {0: "a", 1: "##b"} and dec.added == {4: "[CLS]", 2: "hi"}
    assert dec.specials == {"[CLS]": 4} and dec.n_vocab == 5 and dec([4, 0, 1, 2]) == "[CLS] ab hi"
    uni = rd.HfDecoder({"model": {"type": "Unigram", "vocab": [["\u2581x", -1.0], ["y", -2.0]]},
                        "decoder": {"type": "Metaspace"}})
    assert uni.vocab == {0: "\u2581x", 1: "y"} and uni.added == {} and uni.specials == {} and uni.n_vocab == 2
    assert uni([0, 1]) == "xy"
    none = rd.HfDecoder({"model": {"type": "WordLevel", "vocab": {}}, "added_tokens": None})
    assert none.n_vocab == 0 and none.decoder is None and none([]) == ""
    assert rd.HfDecoder({"model": {"type": "WordLevel", "vocab": {"q": 0}}}).n_vocab == 1
    with pytest.raises(rd.UnsupportedComponentError, match="type='CTC'"):
        rd.HfDecoder({"model": {"type": "WordLevel", "vocab": {}}, "decoder": {"type": "CTC"}})
