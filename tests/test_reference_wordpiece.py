"""Reference WordPiece (BERT): the greedy definition on tiny vocabularies, and conformance (ids AND
offsets) with HF ``tokenizers`` on bert-base-uncased, raw and through the ``hf:`` engine."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tokenizers import Tokenizer, pre_tokenizers

from tokspec import InvalidTextError, load_engine
from tokspec.corpus import build_corpus
from tokspec.errors import UnsupportedComponentError, VocabularyError
from tokspec.normalize import Aligned
from tokspec.reference.bert_normalizer import BertNormalizerConfig, bert_normalize
from tokspec.reference.bert_pretokenizer import bert_pretokenize, is_bert_punctuation
from tokspec.reference.wordpiece import (
    WordPieceConfig,
    WordPieceReference,
    wordpiece_encoder_from_tokenizer_json,
    wordpiece_word,
)
from tokspec.vocab import named_path

TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=40)
BERTY = st.text(st.sampled_from("Ab \t\n,.!$^\u00e9e\u0301\u4e00\u4e01\u0130\u00adx\x00\ufffd\u3000\u2e42\U0001F600"),
                max_size=16)


# -- the definition on tiny vocabularies ----------------------------------------------------------

def test_greedy_longest_match_first() -> None:
    cfg = WordPieceConfig({"[UNK]": 0, "un": 1, "unaff": 2, "##able": 3, "##a": 4, "##ble": 5})
    assert wordpiece_word("unaffable", cfg) == [(2, 0, 5), (3, 5, 9)]   # not un + ...
    assert wordpiece_word("unx", cfg) == [(0, 0, 3)]                    # one miss spoils the word
    assert wordpiece_word("a" * 101, WordPieceConfig({"[UNK]": 0, "a": 1, "##a": 2})) == [(0, 0, 101)]


@st.composite
def vocab_and_word(draw: st.DrawFn) -> tuple[WordPieceConfig, str]:
    words = draw(st.lists(st.text("abc", min_size=1, max_size=3), max_size=8))
    conts = draw(st.lists(st.text("abc", min_size=1, max_size=3), max_size=8))
    vocab = {"[UNK]": 0}
    for w in [*words, *("##" + c for c in conts)]:
        vocab.setdefault(w, len(vocab))
    return WordPieceConfig(vocab, max_chars=draw(st.integers(1, 8))), draw(st.text("abc", min_size=1, max_size=8))


@given(case=vocab_and_word())
def test_hyp_wordpiece_is_greedy_longest_match(case: tuple[WordPieceConfig, str]) -> None:
    """Spec: tokens tile the word; each is the longest vocabulary entry at its start; else [UNK]."""
    cfg, word = case
    toks = wordpiece_word(word, cfg)
    if toks == [(0, 0, len(word))]:
        return
    assert len(word) <= cfg.max_chars
    assert [t[1] for t in toks] == [0] + [t[2] for t in toks[:-1]] and toks[-1][2] == len(word)
    for tid, s, e in toks:
        surface = ("##" if s else "") + word[s:e]
        assert cfg.vocab[surface] == tid
        longer = [("##" if s else "") + word[s:x] for x in range(e + 1, len(word) + 1)]
        assert not any(p in cfg.vocab for p in longer)


# -- conformance with HF --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def bert() -> tuple[Tokenizer, WordPieceReference, WordPieceReference]:
    path = named_path("bert-base-uncased")
    hf = Tokenizer.from_file(str(path))
    hf.no_truncation()
    hf.no_padding()
    hf.encode_special_tokens = True
    return (hf, wordpiece_encoder_from_tokenizer_json(path, "r", offsets="library"),
            wordpiece_encoder_from_tokenizer_json(path, "r"))


def _same_as_hf(hf: Tokenizer, ref: WordPieceReference, text: str) -> None:
    enc = hf.encode(text, add_special_tokens=False)
    got = ref.encode(text)
    assert (got.ids, got.offsets) == (tuple(enc.ids), tuple(map(tuple, enc.offsets))), text[:80]


def test_bert_equals_hf_on_corpus(bert: tuple[Tokenizer, WordPieceReference, WordPieceReference]) -> None:
    for text in build_corpus():
        _same_as_hf(bert[0], bert[1], text)


@given(text=st.one_of(TEXT, BERTY))
def test_hyp_bert_equals_hf(bert: tuple[Tokenizer, WordPieceReference, WordPieceReference], text: str) -> None:
    _same_as_hf(bert[0], bert[1], text)


def test_bert_edge_cases(bert: tuple[Tokenizer, WordPieceReference, WordPieceReference]) -> None:
    for text in ["a" * 100, "a" * 101, "x" * 150 + " hi", "[CLS] [SEP]", "\u0130stanbul", "A\u0378B",
                 "\u00adx\u200by", "\u4e00\u4e01abc", "$5^2|~", "e\u0301t\u00e9", "\U0001F600\u200d"]:
        _same_as_hf(bert[0], bert[1], text)


def test_bert_contract_equals_production_engine(bert: tuple[Tokenizer, WordPieceReference, WordPieceReference]) -> None:
    engine = load_engine("hf:bert-base-uncased")
    for text in build_corpus():
        a, b = engine.encode(text), bert[2].encode(text)
        assert (a.ids, a.offsets) == (b.ids, b.offsets), text[:80]


@given(text=st.one_of(TEXT, BERTY))
def test_hyp_bert_pretokenizer_equals_hf(text: str) -> None:
    """BertPreTokenizer alone (on un-normalized text): same pieces and spans as HF."""
    want = [(p, tuple(o)) for p, o in pre_tokenizers.BertPreTokenizer().pre_tokenize_str(text)]
    got = [(a.text, a.original_span(0, len(a.text))) for a in bert_pretokenize(Aligned.of(text))]
    assert got == want


def test_strip_accents_none_follows_lowercase() -> None:
    assert bert_normalize("\u00c9a", BertNormalizerConfig(strip_accents=None, lowercase=True)).text == "ea"
    assert bert_normalize("\u00c9a", BertNormalizerConfig(strip_accents=None, lowercase=False)).text == "\u00c9a"
    assert bert_normalize("\u00c9a", BertNormalizerConfig(strip_accents=True, lowercase=False)).text == "Ea"


def test_ascii_symbols_are_bert_punctuation() -> None:
    assert all(is_bert_punctuation(c) for c in "$+<=>^`|~")
    assert not is_bert_punctuation("a") and not is_bert_punctuation("\u00d7")  # × is Sm


def test_errors(tmp_path: Path, bert: tuple[Tokenizer, WordPieceReference, WordPieceReference]) -> None:
    with pytest.raises(VocabularyError, match="unk_token"):
        WordPieceConfig({"a": 0})
    with pytest.raises(InvalidTextError):
        bert[1].encode("\udc00")
    data = json.loads(named_path("bert-base-uncased").read_bytes())
    data["pre_tokenizer"] = {"type": "Whitespace"}
    path = tmp_path / "t.json"
    path.write_text(json.dumps(data))
    with pytest.raises(UnsupportedComponentError, match="Whitespace"):
        wordpiece_encoder_from_tokenizer_json(path, "x")
