"""Tiny tokenizers of every family with random settings, for fuzzing ``lopt``'s structural rules.

:func:`tiny_tokenizer` draws a family and its settings (normalizer, pre-tokenizer, options,
sentencepiece NormalizerSpec/TrainerSpec fields) and builds a real library tokenizer from a tiny
vocabulary: HF ``tokenizers`` (WordPiece, Unigram, byte-level BPE; vocabularies from
``tokspec.fuzz.strategies``), tiktoken (tiny rank tables, every proved pattern), sentencepiece
(trained in-process on a tiny text with the drawn options). Settings outside every theorem are
drawn too, so the decision's serial fallback is exercised. :func:`structural_rule_check` is the
property: for the rule ``tokspec.fast.merge_rules`` decides from the engine's structure (if any),
cutting the text at EVERY position the rule allows gives pieces that stitch to the serial
encoding (``tokspec.spec.merge.sound_cuts_theorem``). A claimed rule that fails is a bug in a
theorem's scope or proof.

Out of scope: large vocabularies (the named and trained models are covered by the tests).
"""

from __future__ import annotations

import io
import json
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from tokspec import Encoder
from tokspec.fuzz import strategies as ts
from tokspec.spec._verdict import Verdict, holds
from tokspec.spec.merge import sound_cuts_theorem

__all__ = ["tiny_tokenizer", "structural_rule_check", "TEXT_ALPHABET", "merge_text"]

TEXT_ALPHABET = list("ab AB1.,'\n\t") + ["  ", "é", "e\u0301", "中", "\u200b", "\u00a0", "ß", "İ",
                                          "ͺ", "¨", "ﬁ", "\u3000", "▁", "##", "don't", "Ġ"]
_NORMALIZERS: list[Any] = [
    None, {"type": "Lowercase"}, {"type": "NFC"}, {"type": "NFKC"}, {"type": "NFD"},
    {"type": "Sequence", "normalizers": [{"type": "NFD"}, {"type": "StripAccents"}]},
    {"type": "Replace", "pattern": {"String": "a"}, "content": "bb"},
    {"type": "Replace", "pattern": {"Regex": "\\p{Zs}"}, "content": " "},
    {"type": "Replace", "pattern": {"String": " "}, "content": "_"},        # outside Lemma N
    {"type": "Replace", "pattern": {"String": "a "}, "content": "x"},       # outside Lemma N
    {"type": "Strip", "strip_left": True, "strip_right": True},            # outside Lemma N
]
_SPACE_SPLITS: list[Any] = [{"type": "BertPreTokenizer"}, {"type": "Whitespace"},
                            {"type": "WhitespaceSplit"}]
_LOCAL = [{"type": "Punctuation", "behavior": "Isolated"},
          {"type": "Digits", "individual_digits": True}]


def merge_text() -> st.SearchStrategy[str]:
    """Short texts over an alphabet full of spaces, marks, letters that normalize oddly."""
    return st.lists(st.sampled_from(TEXT_ALPHABET), max_size=24).map("".join)


@st.composite
def _bert_normalizer(draw: st.DrawFn) -> dict[str, Any]:
    return {"type": "BertNormalizer", "clean_text": draw(st.booleans()),
            "handle_chinese_chars": draw(st.booleans()),
            "strip_accents": draw(st.sampled_from([None, True, False])), "lowercase": draw(st.booleans())}


@st.composite
def _pre_tokenizer(draw: st.DrawFn, last: dict[str, Any] | None) -> dict[str, Any] | None:
    steps = draw(st.lists(st.sampled_from(_SPACE_SPLITS + _LOCAL), max_size=3))
    if last is not None:
        steps.append(last)
    if not steps:
        return None
    return steps[0] if len(steps) == 1 else {"type": "Sequence", "pretokenizers": steps}


@st.composite
def _hf_wordpiece(draw: st.DrawFn) -> dict[str, Any]:
    words = sorted(draw(ts.wordpiece_vocab(alphabet="abAB1", max_entries=14)))
    vocab = {w: i for i, w in enumerate(["[UNK]", *words])}
    return {"normalizer": draw(st.one_of(st.sampled_from(_NORMALIZERS), _bert_normalizer())),
            "pre_tokenizer": draw(_pre_tokenizer(None)),
            "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                      "max_input_chars_per_word": draw(st.sampled_from([3, 100])), "vocab": vocab}}


@st.composite
def _hf_unigram(draw: st.DrawFn) -> dict[str, Any]:
    scores = draw(ts.unigram_scores(alphabet="ab▁", max_pieces=10))
    pieces = [["<unk>", 0.0]] + [[p, float(s)] for p, s in sorted(scores.items())]
    meta = {"type": "Metaspace", "replacement": "\u2581", "split": draw(st.booleans()),
            "prepend_scheme": draw(st.sampled_from(["always", "first", "never"]))}
    return {"normalizer": draw(st.sampled_from(_NORMALIZERS)),
            "pre_tokenizer": draw(_pre_tokenizer(meta)),
            "model": {"type": "Unigram", "unk_id": 0, "vocab": pieces,
                      "byte_fallback": False}}


@st.composite
def _hf_byte_bpe(draw: st.DrawFn) -> dict[str, Any]:
    from tokspec.engines._bytelevel import PATTERNS
    from tokspec.fast.merge_rules import GPT2_PATTERN

    alphabet = [chr(c) for c in range(0x21, 0x7F)] + [chr(c) for c in range(0xA1, 0xAD)] + \
        [chr(c) for c in range(0xAE, 0x100)] + [chr(c) for c in range(0x100, 0x144)]
    merges = draw(st.lists(st.sampled_from([("a", "b"), ("Ġ", "a"), ("b", "b"), ("Ġa", "b"),
                                            ("a", "a"), ("Ġ", "Ġ")]), max_size=5, unique=True))
    vocab = {ch: i for i, ch in enumerate(alphabet)}
    kept = []
    for a, b in merges:
        if a in vocab and b in vocab and a + b not in vocab:
            vocab[a + b] = len(vocab)
            kept.append(f"{a} {b}")
    byte_level: dict[str, Any] = {"type": "ByteLevel", "add_prefix_space": draw(st.booleans()),
                                  "trim_offsets": False, "use_regex": True}
    pre: dict[str, Any]
    if draw(st.booleans()):
        pattern = draw(st.sampled_from([*PATTERNS.values(), GPT2_PATTERN, "\\s"]))
        pre = {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": pattern}, "behavior": "Isolated", "invert": False},
            {**byte_level, "use_regex": False}]}
    else:
        pre = {**byte_level, "use_regex": draw(st.booleans())}
    return {"normalizer": draw(st.sampled_from([None, None, {"type": "NFC"}])), "pre_tokenizer": pre,
            "model": {"type": "BPE", "vocab": vocab, "merges": kept, "dropout": None,
                      "unk_token": None, "byte_fallback": False}}


def _hf_engine(sections: dict[str, Any]) -> Encoder:
    from tokspec.engines._hf import HfEngine
    from tokspec.formats.vocab import TokenizerJson

    data = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [],
            "post_processor": None, "decoder": None, **sections}
    return HfEngine("hf:tiny", TokenizerJson("<tiny>", "0" * 64, data))


@lru_cache(maxsize=64)
def _spm_engine(options: tuple[tuple[str, Any], ...]) -> Encoder | None:
    """A sentencepiece model trained on a tiny text with ``options``; None if training refuses."""
    import sentencepiece

    from tokspec.engines._spm import SpmEngine
    from tokspec.formats.spm_model import load_spm_model

    text = ["ab ab abba ba", "AB 1 ab ba", "aab  bba é ab", "ba ab ab ab", "中 ab 中中"] * 20
    out = io.BytesIO()
    try:
        sentencepiece.SentencePieceTrainer.train(
            sentence_iterator=iter(text), model_writer=out, vocab_size=dict(options)["vocab_size"],
            num_threads=1, minloglevel=3, character_coverage=1.0, hard_vocab_limit=False,
            **{k: v for k, v in options if k != "vocab_size"})
    except RuntimeError:
        return None
    path = Path(tempfile.mkdtemp(prefix="tokspec-tiny-spm-")) / "tiny.model"
    path.write_bytes(out.getvalue())
    return SpmEngine(f"spm:{path}", load_spm_model(path))


@st.composite
def _spm(draw: st.DrawFn) -> Encoder | None:
    byte_fallback = draw(st.booleans())
    options = (("model_type", draw(st.sampled_from(["bpe", "bpe", "unigram"]))),
               ("vocab_size", 300 if byte_fallback else draw(st.sampled_from([20, 30]))),
               ("byte_fallback", byte_fallback),
               ("normalization_rule_name", draw(st.sampled_from(["identity", "nmt_nfkc", "nfkc"]))),
               ("add_dummy_prefix", draw(st.booleans())),
               ("remove_extra_whitespaces", draw(st.booleans())),
               ("split_by_whitespace", draw(st.sampled_from([True, True, True, False]))),
               ("treat_whitespace_as_suffix", draw(st.sampled_from([False, False, False, True]))))
    return _spm_engine(options)


@st.composite
def _tiktoken(draw: st.DrawFn) -> Encoder:
    from tokspec.engines._bytelevel import PATTERNS, TiktokenEngine
    from tokspec.fast.merge_rules import GPT2_PATTERN
    from tokspec.formats.vocab import TiktokenVocab

    ranks = {bytes([b]): b for b in range(256)}
    for extra in draw(st.lists(st.sampled_from([b"ab", b" a", b"bb", b" ab", b"aa"]), max_size=4,
                               unique=True)):
        ranks[extra] = len(ranks)
    pattern = draw(st.sampled_from([*PATTERNS.values(), GPT2_PATTERN]))
    return TiktokenEngine("tiktoken:tiny", TiktokenVocab("<tiny>", "0" * 64, ranks), pattern, {}, "tiny")


@st.composite
def tiny_tokenizer(draw: st.DrawFn) -> Encoder | None:
    """One tiny tokenizer of a random family with random settings (None: sentencepiece refused)."""
    family = draw(st.sampled_from(["hf-wordpiece", "hf-unigram", "hf-bpe", "tiktoken", "spm"]))
    if family == "spm":
        return draw(_spm())
    if family == "tiktoken":
        return draw(_tiktoken())
    build = {"hf-wordpiece": _hf_wordpiece, "hf-unigram": _hf_unigram, "hf-bpe": _hf_byte_bpe}[family]
    return _hf_engine(draw(build()))


def structural_rule_check(engine: Encoder | None, text: str) -> Verdict:
    """The rule decided from ``engine``'s structure holds at every position of ``text``."""
    from tokspec.fast.merge_structure import decision_for

    if engine is None:
        return holds("vacuous: sentencepiece refused the drawn options")
    decision, _ = decision_for(engine)
    if decision.rule is None:
        return holds(f"vacuous: serial ({decision.why})")
    return sound_cuts_theorem(engine, text, decision.rule.is_cut, decision.rule.widen)


def describe(engine: Encoder | None) -> str:
    """A replayable description of a drawn engine (its structure) for failure reports."""
    from tokspec.fast.merge_structure import structure_of

    if engine is None:
        return "none"
    s, _ = structure_of(engine)
    return json.dumps({k: v for k, v in (s or {}).items() if k not in ("charsmap", "vocab")},
                      default=str, ensure_ascii=False)[:2000]
