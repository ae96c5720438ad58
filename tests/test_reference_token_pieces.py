"""Reference engines' readable token surfaces (``token_piece``) against the production libraries'
own id -> token maps, and the naive BPE helpers ``bpe_ids`` / ``encode_pieces_of_text`` against
tiktoken's core BPE on tiny rank tables (tiktoken accepts any rank table, so it is the oracle).

``token_piece`` contract (``tokspec._types.Encoder``): a vocabulary engine gives the token's text
(tiktoken-style engines: its bytes decoded as UTF-8 with invalid bytes backslash-escaped), and an id
outside the vocabulary gives the id as a decimal string.
"""

from __future__ import annotations

import json
from pathlib import Path

import tiktoken
from hypothesis import example, given
from hypothesis import strategies as st
from tokenizers import Tokenizer, models

from tokspec.fuzz.strategies import bpe_any_ranks, bpe_merge_ranks
from tokspec.reference.bert_normalizer import BertNormalizerConfig
from tokspec.reference.bpe_hf import HfBpeEncoder, bytes_to_unicode
from tokspec.reference.bpe_merges_from_ranks import HfConvertedEncoder, tokenizer_json_from_ranks
from tokspec.reference.bpe_naive import NaiveBpeEncoder, bpe_ids, bpe_pieces, encode_pieces_of_text
from tokspec.reference.pretok_regex import PATTERNS, compiled
from tokspec.reference.wordpiece import WordPieceConfig, WordPieceReference
from tokspec.formats.vocab import TokenizerJson

#: Multi-byte tokens that are valid UTF-8 ("é", "ab", "€") and invalid fragments (a lone
#: continuation byte pair, a truncated 3-byte sequence): token_piece must escape the latter.
EXTRA_TOKENS = [b"ab", b"\xc3\xa9", b"\xe2\x82\xac", b"\x82\xac", b"\xe2\x82", b"a\xff"]
ABSENT_IDS = [-1, 10**6]


def _byte_complete(ranks: dict[bytes, int]) -> dict[bytes, int]:
    """Every single byte plus ``ranks`` (single bytes missing from ``ranks`` get ranks >= 1000)."""
    return {bytes([b]): 1000 + b for b in range(256) if bytes([b]) not in ranks} | ranks


def _tiktoken(ranks: dict[bytes, int], pattern: str = PATTERNS["cl100k_base"]) -> tiktoken.Encoding:
    return tiktoken.Encoding("tiny", pat_str=pattern, mergeable_ranks=ranks, special_tokens={})


def _tiny_ranks() -> dict[bytes, int]:
    return {bytes([b]): b for b in range(256)} | {tok: 256 + i for i, tok in enumerate(EXTRA_TOKENS)}


def test_naive_token_piece_is_tiktokens_token_bytes_decoded_with_escapes() -> None:
    ranks = _tiny_ranks()
    engine = NaiveBpeEncoder(ranks, compiled("cl100k_base"), name="naive-tiny", vocab_sha256=None)
    prod = _tiktoken(ranks)
    for rank in sorted(ranks.values()):
        expected = prod.decode_single_token_bytes(rank).decode("utf-8", errors="backslashreplace")
        assert engine.token_piece(rank) == expected, rank
    assert engine.token_piece(ranks[b"\xff"]) == "\\xff"
    assert engine.token_piece(ranks[b"\xc3\xa9"]) == "é"
    for token_id in ABSENT_IDS:
        assert engine.token_piece(token_id) == str(token_id)


def _hf_bpe_json() -> dict[str, object]:
    """A tiny ByteLevel BPE whose vocabulary holds non-ASCII and multi-character entries."""
    table = bytes_to_unicode()
    vocab = {table[b]: b for b in range(256)}
    merges = [(b"a", b"b"), (b"\xc3", b"\xa9"), (b"ab", b"\xc3\xa9")]
    for a, b in merges:
        vocab["".join(table[x] for x in a + b)] = len(vocab)
    return {
        "version": "1.0", "added_tokens": [], "normalizer": None, "post_processor": None, "decoder": None,
        "truncation": None, "padding": None,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False,
                          "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
                  "ignore_merges": False, "vocab": vocab,
                  "merges": [["".join(table[x] for x in a), "".join(table[x] for x in b)] for a, b in merges]},
    }


def test_hf_bpe_token_piece_equals_hf_id_to_token() -> None:
    data = _hf_bpe_json()
    engine = HfBpeEncoder(TokenizerJson("tiny.json", "0" * 64, data), "reference:tiny.json")
    prod = Tokenizer.from_str(json.dumps(data))
    vocab = data["model"]["vocab"]  # type: ignore[index]
    assert list(engine.encode("abé").ids) == prod.encode("abé", add_special_tokens=False).ids == [vocab["abÃ©"]]
    for token_id in vocab.values():
        assert engine.token_piece(token_id) == prod.id_to_token(token_id), token_id
    for token_id in ABSENT_IDS[1:]:
        assert prod.id_to_token(token_id) is None
        assert engine.token_piece(token_id) == str(token_id)


def test_hf_converted_token_piece_is_the_bytelevel_spelling(tmp_path: Path) -> None:
    ranks = _tiny_ranks()
    path = tmp_path / "converted.json"
    path.write_text(json.dumps(tokenizer_json_from_ranks(ranks, PATTERNS["o200k_base"])), encoding="utf-8")
    engine = HfConvertedEncoder(path, name="hf-converted:tiny", vocab_sha256="0" * 64)
    table = bytes_to_unicode()
    for tok, rank in ranks.items():
        assert engine.token_piece(rank) == "".join(table[b] for b in tok), tok
    for token_id in ABSENT_IDS[1:]:
        assert engine.token_piece(token_id) == str(token_id)


def test_wordpiece_token_piece_equals_hf_id_to_token() -> None:
    vocab = {"[UNK]": 0, "un": 1, "##aff": 2, "##able": 3, "é": 4, "##ß": 5}
    engine = WordPieceReference(WordPieceConfig(vocab), BertNormalizerConfig(), "wp-tiny")
    prod = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
    for token_id in vocab.values():
        assert engine.token_piece(token_id) == prod.id_to_token(token_id), token_id
    for token_id in ABSENT_IDS:
        assert engine.token_piece(token_id) == str(token_id)


@given(st.one_of(bpe_merge_ranks(), bpe_any_ranks()), st.binary(min_size=1, max_size=10))
@example({b"a": 0, b"b": 1, b"c": 2, b"ab": 3, b"bc": 4, b"abc": 5}, b"abcbc")
@example({b"a": 0, b"b": 1, b"c": 2, b"bc": 3, b"ab": 4}, b"abc")
def test_hyp_bpe_ids_equals_tiktoken_single_piece(ranks: dict[bytes, int], piece: bytes) -> None:
    ranks = _byte_complete(ranks)
    assert bpe_ids(b"", ranks) == []  # (tiktoken's core panics on an empty piece)
    assert bpe_ids(piece, ranks) == _tiktoken(ranks)._encode_single_piece(piece)


@given(st.one_of(bpe_merge_ranks(), bpe_any_ranks()), st.text("abc \n", max_size=16))
@example({b"a": 0, b"b": 1, b"c": 2, b"ab": 3, b"bc": 4, b"abc": 5}, "abcbc ab\nabc")
def test_hyp_encode_pieces_of_text_equals_tiktoken(ranks: dict[bytes, int], text: str) -> None:
    """Pretokens are encoded independently and concatenated in order: tiktoken's encode_ordinary."""
    ranks = _byte_complete(ranks)
    pretokens = [m.encode("utf-8") for m in compiled("cl100k_base").findall(text)]
    pieces = encode_pieces_of_text(pretokens, ranks)
    assert b"".join(pieces) == text.encode("utf-8")
    assert [ranks[p] for p in pieces] == _tiktoken(ranks).encode_ordinary(text)
    assert pieces == [q for p in pretokens for q in bpe_pieces(p, ranks)]


@given(st.text("ab cé€\n", max_size=14))
@example("ab ab\u20acab")
def test_hyp_naive_encoder_drops_unmatched_text_as_tiktoken_does(text: str) -> None:
    """With a pattern that does not tile the text, unmatched characters produce no token (as in
    tiktoken), and every token's offsets still cover exactly its own bytes."""
    import regex
    ranks = _tiny_ranks()
    pattern = r"[abé€]+"
    engine = NaiveBpeEncoder(ranks, regex.compile(pattern), name="naive-gaps", vocab_sha256=None)
    enc = engine.encode(text)
    assert list(enc.ids) == _tiktoken(ranks, pattern).encode_ordinary(text)
    by_id = {r: t for t, r in ranks.items()}
    pieces = [by_id[i] for i in enc.ids]
    assert b"".join(pieces) == "".join(regex.findall(pattern, text)).encode("utf-8")
    for (s, e), piece in zip(enc.offsets, pieces):
        assert piece in text[s:e].encode("utf-8"), (text, s, e, piece)
