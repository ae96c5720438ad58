"""The reference decoders (tokspec.reference.decode): their rules one by one, then each against its
production library on real vocabularies over random id sequences (hypothesis)."""

from __future__ import annotations

import functools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokspec import load_engine
from tokspec.decoding import decode_of
from tokspec.errors import UnsupportedComponentError
from tokspec.reference import decode as rd

FFFD = "\ufffd"


# ----------------------------------------------------------------------------- rules


def test_bytelevel_joins_bytes_and_replaces_maximal_subparts() -> None:
    by_id = {0: b"a", 1: b"\xf0\x9f", 2: b"\x99\x82", 3: b"\xff"}
    assert rd.decode_bytelevel(by_id, {}, [0, 1, 2]) == "a\U0001f642"
    assert rd.decode_bytelevel(by_id, {}, [0, 1]) == "a" + FFFD  # one U+FFFD for the cut character
    assert rd.decode_bytelevel(by_id, {}, [3, 3, 0]) == FFFD + FFFD + "a"
    assert rd.decode_bytelevel(by_id, {9: "<|x|>"}, [9, 0]) == "<|x|>a"
    assert rd.decode_bytelevel(by_id, {}, []) == ""
    with pytest.raises(rd.UnknownIdError, match="id=7"):
        rd.decode_bytelevel(by_id, {}, [0, 7])


def test_byte_of_piece() -> None:
    assert rd.byte_of_piece("<0x0A>") == 10 and rd.byte_of_piece("<0xFF>") == 255 and rd.byte_of_piece("<0x00>") == 0
    for not_byte in ("<0x0a>", "<0xG1>", "<0x0A", "0x0A>", "<0x0AA>", "<1x0A>", "x0x0Ax", "<0x>"):
        assert rd.byte_of_piece(not_byte) is None, not_byte


def test_byte_fallback_valid_runs_and_one_fffd_per_byte_token() -> None:
    assert rd.byte_fallback(["a", "<0xC3>", "<0xA9>", "b"]) == ["a", "é", "b"]
    assert rd.byte_fallback(["<0xE6>", "<0x9C>", "x"]) == [FFFD, FFFD, "x"]  # incomplete: per byte
    assert rd.byte_fallback(["<0xC3>", "<0xA9>", "<0xFF>"]) == [FFFD, FFFD, FFFD]  # one run, invalid
    assert rd.byte_fallback(["<0x41>"]) == ["A"] and rd.byte_fallback([]) == []


def test_wordpiece_step_prefix_space_and_cleanup() -> None:
    step = {"type": "WordPiece", "prefix": "##", "cleanup": True}
    assert "".join(rd._step(step, ["un", "##aff", "##able", "."])) == "unaffable."
    assert "".join(rd._step(step, ["a", "?", "b", "!", ",", "c"])) == "a? b!, c"
    assert "".join(rd._step({**step, "cleanup": False}, ["a", "."])) == "a ."
    assert "".join(rd._step(step, ["##x", "y"])) == "##x y"  # the first token keeps its prefix
    assert rd.wordpiece_cleanup(" do not") == " don't" and rd.wordpiece_cleanup(" n't 's 've 're 'm") == "n't's've're'm"
    assert rd.wordpiece_cleanup("a ' b") == "a'b"


def test_strip_fuse_replace_metaspace_steps() -> None:
    assert rd._strip("  ab  ", " ", 1, 0) == " ab  " and rd._strip("  ab  ", " ", 2, 1) == "ab "
    assert rd._strip("   ", " ", 2, 2) == "" and rd._strip("x", " ", 3, 3) == "x"
    assert rd._step({"type": "Fuse"}, ["a", "b", "c"]) == ["abc"]
    assert rd._step({"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "}, ["\u2581a\u2581"]) == [" a "]
    meta = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always"}
    assert rd._step(meta, ["\u2581a", "\u2581b"]) == ["a", " b"]
    assert rd._step({**meta, "prepend_scheme": "never"}, ["\u2581a"]) == [" a"]
    with pytest.raises(UnsupportedComponentError, match="CTC"):
        rd._step({"type": "CTC"}, [])
    with pytest.raises(UnsupportedComponentError):
        rd.HfDecoder({"model": {"type": "BPE", "vocab": {}}, "decoder": {"type": "ByteLevel"}})


def test_hf_tokens_added_first_unknown_skipped_no_decoder_joins_with_spaces() -> None:
    assert rd.hf_tokens({0: "a", 1: "b"}, {1: "[X]"}, [0, 1, 5, 0]) == ["a", "[X]", "a"]
    assert rd.decode_hf(None, {0: "a", 1: "b"}, {}, [0, 1]) == "a b"


def test_utf8_replace_per_byte() -> None:
    assert rd.utf8_replace_per_byte(b"a\xe6\x9cb") == "a" + FFFD + FFFD + "b"
    assert rd.utf8_replace_per_byte("é🙂".encode()) == "é🙂"
    assert rd.utf8_replace_per_byte(b"\xff") == FFFD and rd.utf8_replace_per_byte(b"") == ""


def test_spm_rules_on_a_synthetic_model() -> None:
    pieces = ["<unk>", "<s>", "\u2581", "\u2581a", "b", "<0x20>", "<0xC3>", "<0xA9>"]
    types = ["unknown", "control", "normal", "normal", "normal", "byte", "byte", "byte"]

    def dec(ids: list[int], dummy: bool = True) -> str:
        return rd.decode_spm(pieces, types, dummy, ids)

    assert dec([3, 3]) == "a a" and dec([3, 3], dummy=False) == " a a"
    assert dec([1, 2, 2, 3]) == "a"  # markers dropped one per piece while nothing is decoded yet
    assert dec([0, 3]) == " \u2047  a" and dec([5, 3]) == "  a"  # unknown / byte piece end that state
    assert dec([6, 7, 4]) == "éb" and dec([6, 4]) == FFFD + "b"
    with pytest.raises(rd.UnknownIdError):
        dec([8])


# ----------------------------------------------------------------------------- against production


def _spm_model(kind: str) -> str:
    from tokspec.formats.models import trained_model
    return str(trained_model(kind))


PAIRS = [("reference:cl100k_base", "tiktoken:cl100k_base"), ("reference:o200k_base", "tiktoken:o200k_base"),
         ("fast:cl100k_base", "tiktoken:cl100k_base"),
         ("reference:bert-base-uncased", "hf:bert-base-uncased"), ("reference:mon-unigram", "hf:mon-unigram"),
         ("spm-unigram", "spm-unigram"), ("spm-unigram-bytes", "spm-unigram-bytes")]


@functools.lru_cache(maxsize=None)
def _pair(a: str, b: str) -> tuple[object, object]:
    if not a.startswith(("reference:", "fast:")):  # a trained sentencepiece model
        path = _spm_model(a)
        return load_engine(f"reference:{path}"), load_engine(f"spm:{path}")
    return load_engine(a), load_engine(b)


@pytest.mark.parametrize("a,b", PAIRS)
@settings(max_examples=30)
@given(data=st.data())
def test_reference_decode_equals_production_on_random_ids(a: str, b: str, data: st.DataObject) -> None:
    ref, prod = _pair(a, b)
    n = min(ref.n_vocab, prod.n_vocab)  # type: ignore[attr-defined]
    specials = sorted(set(prod.special_tokens().values()))  # type: ignore[attr-defined]
    one = st.integers(0, n - 1) | (st.sampled_from(specials) if specials else st.nothing())
    ids = data.draw(st.lists(one, max_size=10))
    da, db = decode_of(ref, ids), decode_of(prod, ids)
    assert da.error is None and db.error is None, (da, db)
    assert da.text == db.text, (ids, da, db)


def test_spm_dummy_prefix_quirk_replays_against_sentencepiece() -> None:
    """The finding behind decode_spm's dummy-prefix rule: ``▁ ▁ x`` decodes to ``x``."""
    ref, prod = _pair("spm-unigram", "spm-unigram")
    index = {p: i for i, p in enumerate(prod.model.pieces)}  # type: ignore[attr-defined]
    for seq, want in ((["\u2581", "\u2581", "\u2581need"], "need"), (["<s>", "\u2581", "\u2581need"], "need"),
                      (["\u2581", "<unk>", "\u2581need"], " \u2047  need")):
        ids = [index[p] for p in seq]
        assert prod.decode(ids) == want and ref.decode(ids) == want  # type: ignore[attr-defined]


def test_a_sentencepiece_model_file_gets_its_decoder_on_every_load() -> None:
    """``reference:PATH.model`` loaded afresh (not from the registry's cache) decodes as
    sentencepiece's DecodeIds: the decoder is attached by the provider itself."""
    from tokspec.reference.engines import load

    path = _spm_model("spm-unigram")
    ref, prod = load("reference", path), load_engine(f"spm:{path}")
    ids = list(prod.encode("hello world, decode me").ids)
    assert ref.n_vocab == prod.n_vocab  # type: ignore[attr-defined]
    assert ref.decode(ids) == prod.decode(ids) == "hello world, decode me"  # type: ignore[attr-defined]
