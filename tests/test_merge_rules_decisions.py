"""``merge_rules``: every branch of ``decide`` on hand-built structures, the cut rules against their
definitions (brute force over small texts), and the exact reasons a serial decision gives.

The reason (``Decision.why``) and the family are the contract ``merge-check``, the ``lopt:`` engines'
descriptions and the merge report show: each names the first unmet condition of the theorem, so they
are compared whole. The rules are checked against the plain statement of each (``tokspec.spec.merge``):
``space`` = a space with any character before it, ``space-after-letter`` = a space after a ``\\p{L}``.
"""

from __future__ import annotations

import io
import itertools
import tempfile
import unicodedata
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import regex

from tokspec.engines._bytelevel import PATTERNS
from tokspec.fast.merge_rules import (GPT2_PATTERN, KNOWN_BPE_PATTERNS, RULES, CutRule, Decision,
                                      _normalizer_ok, _pre_tokenizer_rule, decide)

ALPHABET = [" ", "a", "Z", "\u00e9", "\u4e2d", "1", "\n", ".", "\u00a0", "_", "\u0301"]


def test_rules_are_their_definitions_on_every_short_text() -> None:
    assert {k: (r.name, r.theorem, r.widen) for k, r in RULES.items()} == {
        "space": ("space", "M3w", False), "space-after-letter": ("space-after-letter", "M2/M3u", False)}
    for n in range(5):
        for chars in itertools.product(ALPHABET, repeat=n) if n < 4 else _sample(n):
            text = "".join(chars)
            for c in range(-1, len(text) + 2):
                inside = 0 < c < len(text) and text[c] == " "
                assert RULES["space"].is_cut(text, c) == inside, (text, c)
                after_letter = inside and unicodedata.category(text[c - 1]).startswith("L")
                assert RULES["space-after-letter"].is_cut(text, c) == after_letter, (text, c)


def _sample(n: int) -> list[tuple[str, ...]]:
    import random

    rng = random.Random(n)
    return [tuple(rng.choice(ALPHABET) for _ in range(n)) for _ in range(400)]


def test_is_cut_never_at_the_ends_whatever_the_pattern() -> None:
    anything = CutRule("any", "none", regex.compile(r"(?s).?"))
    text = "ab c"
    assert [c for c in range(-2, len(text) + 3) if anything.is_cut(text, c)] == [1, 2, 3]
    assert not anything.is_cut("", 0)


def test_describe_names_the_rule_or_says_serial() -> None:
    assert Decision("fam", RULES["space"], "M3w").describe() == "fam: rule space (M3w)"
    assert Decision("fam", None, "because").describe() == "fam: serial encoding (because)"


# -- decide: dispatch and odd input ------------------------------------------------------------

class _Liar(dict):
    """A mapping that claims every key and has none (``decide`` must not raise on it)."""

    def __contains__(self, key: object) -> bool:
        return True

    def __getitem__(self, key: Any) -> Any:
        raise KeyError(key)


def _tj(model: Any = None, normalizer: Any = None, pre: Any = None, **extra: Any) -> dict[str, Any]:
    return {"format": "tokenizer.json", "model": {"type": "BPE"} if model is None else model,
            "normalizer": normalizer, "pre_tokenizer": pre, **extra}


def test_decide_without_a_readable_structure() -> None:
    for odd in (None, [], "tokenizer.json", 3):
        dec = decide(odd)
        assert (dec.family, dec.rule, dec.why) == (
            "unknown structure", None, "the engine exposes no structure tokspec can read")
    for fmt in (None, "what", 7):
        dec = decide({"format": fmt} if fmt is not None else {})
        assert (dec.family, dec.rule, dec.why) == (
            "unknown structure", None, f"format={fmt!r} is not tokenizer.json, sentencepiece or regex-bpe")


@pytest.mark.parametrize(("structure", "family", "why"), [
    (_tj(model="BPE"), "tokenizer.json structure",
     "malformed structure (AttributeError: 'str' object has no attribute 'get')"),
    (_tj(pre={"type": "Whitespace"}, added_tokens=5), "tokenizer.json structure",
     "malformed structure (TypeError: 'int' object is not iterable)"),
    (_tj(normalizer={"type": "Replace", "content": " ", "pattern": _Liar(x=1)}),
     "tokenizer.json structure", "malformed structure (KeyError: 'String')"),
    ({"format": "sentencepiece", "model_type": "bpe", "add_dummy_prefix": np.array([1, 2])},
     "sentencepiece structure", "malformed structure (ValueError: The truth value of an array with "
     "more than one element is ambiguous. Use a.any() or a.all())"),
])
def test_malformed_structures_are_serial_and_say_so(structure: dict, family: str, why: str) -> None:
    dec = decide(structure)
    assert (dec.family, dec.rule, dec.why) == (family, None, why)


# -- regex-bpe ---------------------------------------------------------------------------------

def test_regex_bpe_known_patterns_by_name_or_text() -> None:
    cases = {**{n: n for n in KNOWN_BPE_PATTERNS}, **{p: n for n, p in PATTERNS.items()},
             GPT2_PATTERN: "gpt2"}
    assert set(cases.values()) >= set(KNOWN_BPE_PATTERNS)
    for pattern, name in cases.items():
        dec = decide({"format": "regex-bpe", "pattern": pattern})
        assert (dec.family, dec.rule, dec.why) == (f"regex-bpe {name}", RULES["space-after-letter"], "M2")
    for unknown in (r"\S+|\s", None, "gpt2 ", PATTERNS["cl100k_base"] + "|x"):
        dec = decide({"format": "regex-bpe", "pattern": unknown})
        assert (dec.family, dec.rule, dec.why) == (
            "regex-bpe (unknown pattern)", None,
            "M2 is proved only for the cl100k/o200k/qwen2/llama3/gpt2 patterns")


# -- tokenizer.json: normalizers ---------------------------------------------------------------

def test_normalizers_proved_to_commute_and_the_rest() -> None:
    for t in ("BertNormalizer", "Lowercase", "NFC", "NFD", "NFKC", "NFKD", "StripAccents"):
        assert _normalizer_ok({"type": t}) is None
    assert _normalizer_ok(None) is None
    for t in ("Strip", "Precompiled", "Prepend", None):
        assert _normalizer_ok({"type": t}) == f"normalizer {t!r} is not proved to commute with a cut at a space"
    assert _normalizer_ok({"type": "Sequence", "normalizers": []}) is None
    assert _normalizer_ok({"type": "Sequence"}) is None
    assert _normalizer_ok({"type": "Sequence", "normalizers": [{"type": "NFC"}, {"type": "Lowercase"}]}) is None
    two_bad = {"type": "Sequence", "normalizers": [{"type": "NFC"}, {"type": "Strip"}, {"type": "Prepend"}]}
    assert _normalizer_ok(two_bad) == "normalizer 'Strip' is not proved to commute with a cut at a space"
    nested = {"type": "Sequence", "normalizers": [{"type": "Sequence", "normalizers": [{"type": "Prepend"}]}]}
    assert _normalizer_ok(nested) == "normalizer 'Prepend' is not proved to commute with a cut at a space"


@pytest.mark.parametrize(("pattern", "content", "why"), [
    ({"String": "a"}, None, "Replace without content"),
    ({"String": "a"}, 5, "Replace without content"),
    ({"String": "ab"}, "x", "Replace with a pattern longer than one character"),
    ({"String": ""}, "x", "Replace with a pattern longer than one character"),
    ({"String": 1}, "x", "Replace with a pattern longer than one character"),
    (None, "x", "Replace with a pattern longer than one character"),
    ({}, "x", "Replace with a pattern longer than one character"),
    ({"Regex": "ab"}, "x", "Replace with a pattern longer than one character"),
    ({"Regex": 3}, "x", "Replace with a pattern longer than one character"),
    ({"Regex": "[ab]c"}, "x", "Replace with a pattern longer than one character"),
    ({"Regex": "[]"}, "x", "Replace with a pattern longer than one character"),
    ({"Regex": r"\p{NoSuchProperty}"}, "x", "Replace pattern this module cannot read"),
    ({"Regex": r"[\p{NoSuchProperty}]"}, "x", "Replace pattern this module cannot read"),
    ({"Regex": r"[a\]]"}, "x", None),
    ({"Regex": r"\P{Zs}"}, "x", None),
    ({"Regex": r"\p{Zs}"}, " ", None),
    ({"Regex": r"\p{Zs}"}, "x", "Replace rewrites the space"),
    ({"String": "."}, "x", None),
    ({"String": " "}, " ", None),
])
def test_replace_normalizers(pattern: Any, content: Any, why: str | None) -> None:
    n = {"type": "Replace", "pattern": pattern, "content": content}
    assert _normalizer_ok(n) == why
    dec = decide(_tj({"type": "WordPiece"}, n, {"type": "Whitespace"}))
    assert (dec.rule is None, dec.why) == ((True, why) if why else (False, "M3w"))


# -- tokenizer.json: pre-tokenizers ------------------------------------------------------------

def seq(*steps: dict[str, Any]) -> dict[str, Any]:
    return {"type": "Sequence", "pretokenizers": list(steps)}


SPLIT = {"type": "Split", "pattern": {"Regex": PATTERNS["cl100k_base"]}, "behavior": "Isolated"}
OUT_OF_M2 = "Split with a pattern or behaviour outside M2's scope"


@pytest.mark.parametrize(("pre", "want"), [
    (None, (None, "no pre-tokenizer: the model sees the whole text")),
    (seq(), (None, "empty pre-tokenizer sequence")),
    ({"type": "Sequence"}, (None, "empty pre-tokenizer sequence")),
    ({"type": "BertPreTokenizer"}, ("space", "BertPreTokenizer")),
    ({"type": "Whitespace"}, ("space", "Whitespace")),
    ({"type": "WhitespaceSplit"}, ("space", "WhitespaceSplit")),
    (seq({"type": "Whitespace"}, {"type": "WhitespaceSplit"}), ("space", "Whitespace+WhitespaceSplit")),
    (seq({"type": "Whitespace"}, {"type": "Digits"}), ("space", "Whitespace+Digits")),
    (seq({"type": "Punctuation"}, {"type": "Digits"}), (None, "no step of the pre-tokenizer splits at spaces")),
    ({"type": "Metaspace"}, ("space-after-letter", "Metaspace")),
    ({"type": "Metaspace", "split": True, "replacement": "\u2581", "prepend_scheme": "first"},
     ("space-after-letter", "Metaspace")),
    ({"type": "Metaspace", "prepend_scheme": "never"}, ("space-after-letter", "Metaspace")),
    ({"type": "Metaspace", "prepend_scheme": "always"}, ("space-after-letter", "Metaspace")),
    (seq({"type": "Whitespace"}, {"type": "Metaspace"}), ("space-after-letter", "Whitespace+Metaspace")),
    ({"type": "Metaspace", "split": False}, (None, "Metaspace(split=false): the model sees whole runs of words")),
    ({"type": "Metaspace", "split": None}, ("space-after-letter", "Metaspace")),
    ({"type": "Metaspace", "replacement": "_"}, (None, "Metaspace with unknown replacement/prepend_scheme")),
    ({"type": "Metaspace", "prepend_scheme": "sometimes"},
     (None, "Metaspace with unknown replacement/prepend_scheme")),
    (seq({"type": "Metaspace"}, {"type": "Whitespace"}),
     (None, "pre-tokenizer 'Metaspace' is not in any theorem's scope")),
    ({"type": "ByteLevel"}, ("space-after-letter", "ByteLevel")),
    ({"type": "ByteLevel", "use_regex": True}, ("space-after-letter", "ByteLevel")),
    ({"type": "ByteLevel", "use_regex": False},
     (None, "ByteLevel(use_regex=false) without a proved Split before it")),
    (seq({"type": "Whitespace"}, {"type": "ByteLevel", "use_regex": False}),
     (None, "ByteLevel(use_regex=false) without a proved Split before it")),
    (seq(SPLIT, {"type": "ByteLevel", "use_regex": False}), ("space-after-letter", "Split+ByteLevel")),
    (seq({"type": "ByteLevel"}, {"type": "Whitespace"}),
     (None, "pre-tokenizer 'ByteLevel' is not in any theorem's scope")),
    (SPLIT, ("space-after-letter", "Split")),
    (SPLIT | {"pattern": {"Regex": GPT2_PATTERN}}, ("space-after-letter", "Split")),
    (SPLIT | {"pattern": {"Regex": PATTERNS["o200k_base"]}}, ("space-after-letter", "Split")),
    (seq(SPLIT, {"type": "Whitespace"}), ("space-after-letter", "Split+Whitespace")),
    (seq({"type": "Whitespace"}, SPLIT), ("space-after-letter", "Whitespace+Split")),
    (SPLIT | {"behavior": "Removed"}, (None, OUT_OF_M2)),
    ({"type": "Split", "pattern": {"Regex": GPT2_PATTERN}}, (None, OUT_OF_M2)),
    (SPLIT | {"invert": True}, (None, OUT_OF_M2)),
    (SPLIT | {"invert": False}, ("space-after-letter", "Split")),
    (SPLIT | {"pattern": {"Regex": r"\s+"}}, (None, OUT_OF_M2)),
    (SPLIT | {"pattern": {"String": " "}}, (None, OUT_OF_M2)),
    (SPLIT | {"pattern": None}, (None, OUT_OF_M2)),
    ({"type": "CharDelimiterSplit"}, (None, "pre-tokenizer 'CharDelimiterSplit' is not in any theorem's scope")),
    (seq({"type": "Whitespace"}, {"type": "UnicodeScripts"}),
     (None, "pre-tokenizer 'UnicodeScripts' is not in any theorem's scope")),
])
def test_pre_tokenizer_rules(pre: dict[str, Any] | None, want: tuple[str | None, str]) -> None:
    assert _pre_tokenizer_rule(pre) == want


@pytest.mark.parametrize(("structure", "family", "rule", "why"), [
    (_tj({}), "None (no normalizer, None)", None, "model type None unknown"),
    (_tj({"type": "WordLevel"}, None, {"type": "WhitespaceSplit"}), "WordLevel (no normalizer, WhitespaceSplit)",
     "space", "M3w"),
    (_tj({"type": "Unigram"}, {"type": "NFKC"}, {"type": "Metaspace"}), "Unigram (NFKC, Metaspace)",
     "space-after-letter", "M3u"),
    (_tj({"type": "BPE"}, {"type": "NFKC"}, seq(SPLIT, {"type": "ByteLevel", "use_regex": False})),
     "BPE (NFKC, Split+ByteLevel)", None, "a regex pre-tokenizer behind a normalizer is outside M2's scope"),
    (_tj({"type": "BPE"}, {"type": "NFKC"}, SPLIT), "BPE (NFKC, Split)", None,
     "a regex pre-tokenizer behind a normalizer is outside M2's scope"),
    (_tj({"type": "BPE"}, None, SPLIT), "BPE (no normalizer, Split)", "space-after-letter", "M2"),
    (_tj({"type": "BPE"}, None, seq({"type": "Digits"}, {"type": "ByteLevel"})),
     "BPE (no normalizer, Digits+ByteLevel)", "space-after-letter", "M2"),
    (_tj({"type": "BPE"}, {"type": "Strip"}, {"type": "ByteLevel"}), "BPE (Strip, ByteLevel)", None,
     "normalizer 'Strip' is not proved to commute with a cut at a space"),
    (_tj({"type": "BPE"}, None, seq()), "BPE (no normalizer, Sequence)", None, "empty pre-tokenizer sequence"),
    (_tj({"type": "BPE", "dropout": 1}, None, {"type": "ByteLevel"}), "BPE (no normalizer, ByteLevel)", None,
     "BPE dropout is random"),
    (_tj({"type": "BPE", "dropout": 0.5}, None, {"type": "ByteLevel"}), "BPE (no normalizer, ByteLevel)",
     None, "BPE dropout is random"),
    (_tj({"type": "BPE", "dropout": 0}, None, {"type": "ByteLevel"}), "BPE (no normalizer, ByteLevel)",
     "space-after-letter", "M2"),
    (_tj({"type": "BPE", "dropout": 0.0}, None, {"type": "ByteLevel"}), "BPE (no normalizer, ByteLevel)",
     "space-after-letter", "M2"),
    (_tj({"type": "WordPiece", "dropout": 0.5}, None, {"type": "Whitespace"}),
     "WordPiece (no normalizer, Whitespace)", "space", "M3w"),
])
def test_tokenizer_json_decisions(structure: dict, family: str, rule: str | None, why: str) -> None:
    dec = decide(structure)
    assert (dec.family, None if dec.rule is None else dec.rule.name, dec.why) == (family, rule, why)
    if rule is not None:
        assert dec.rule is RULES[rule]


@pytest.mark.parametrize(("token", "straddles"), [
    ({"content": "a b"}, True), ({"content": "a\tb"}, True), ({"content": "\u3000x"}, True),
    ({"content": "ab", "lstrip": True}, True), ({"content": "ab", "rstrip": True}, True),
    ({"content": "ab", "lstrip": False, "rstrip": False}, False), ({"content": "a b", "special": True}, False),
    ({"content": "a b", "special": False}, True), ({}, False), ({"content": "\u2581ab"}, False),
    ({"lstrip": True}, True),
])
def test_added_tokens_that_may_straddle_a_space(token: dict[str, Any], straddles: bool) -> None:
    plain = {"content": "xy", "special": False}
    dec = decide(_tj({"type": "WordPiece"}, None, {"type": "Whitespace"}, added_tokens=[plain, token]))
    assert dec.family == "WordPiece (no normalizer, Whitespace)"
    if straddles:
        assert (dec.rule, dec.why) == (None, f"added token {token.get('content', '')!r} may straddle a space")
    else:
        assert (dec.rule, dec.why) == (RULES["space"], "M3w")


def test_a_special_token_does_not_hide_the_tokens_after_it() -> None:
    tokens = [{"content": "[CLS] x", "special": True}, {"content": "y z", "special": False}]
    dec = decide(_tj({"type": "WordPiece"}, None, {"type": "Whitespace"}, added_tokens=tokens))
    assert (dec.rule, dec.why) == (None, "added token 'y z' may straddle a space")


# -- sentencepiece -----------------------------------------------------------------------------

SPM_OK = {"format": "sentencepiece", "model_type": "bpe", "normalizer_name": "identity",
          "add_dummy_prefix": True, "remove_extra_whitespaces": True, "escape_whitespaces": True,
          "treat_whitespace_as_suffix": False, "split_by_whitespace": True,
          "allow_whitespace_only_pieces": False, "byte_fallback": False, "charsmap": None,
          "user_symbols": ["<x>"], "space_piece": True}


def spm_family(s: dict[str, Any]) -> str:
    return (f"sentencepiece {s.get('model_type')} ({s.get('normalizer_name', 'declared')}, "
            f"dummy_prefix={bool(s.get('add_dummy_prefix'))}, "
            f"remove_extra_whitespaces={bool(s.get('remove_extra_whitespaces'))}, "
            f"byte_fallback={bool(s.get('byte_fallback'))})")


def test_sentencepiece_bpe_gets_m5_and_widens_with_the_dummy_prefix() -> None:
    for dummy in (True, False):
        s = SPM_OK | {"add_dummy_prefix": dummy, "remove_extra_whitespaces": dummy, "space_piece": dummy,
                      "byte_fallback": not dummy}
        dec = decide(s)
        assert (dec.family, dec.why) == (spm_family(s), "M5 (identity normalization)")
        assert dec.family.endswith(f"dummy_prefix={dummy}, remove_extra_whitespaces={dummy}, "
                                   f"byte_fallback={not dummy})")
        assert (dec.rule.name, dec.rule.theorem, dec.rule.widen) == ("spm-space", "M5", dummy)
        text = "a b1 2 \u00e9 . x  y"
        assert [c for c in range(len(text)) if dec.rule.is_cut(text, c)] == [1, 4, 6]
    s = {k: v for k, v in SPM_OK.items() if k != "normalizer_name"}
    assert decide(s).family.startswith("sentencepiece bpe (declared, dummy_prefix=True")


@pytest.mark.parametrize(("change", "why"), [
    ({"model_type": "unigram"}, "sentencepiece's Unigram adds path scores in float32 over the whole text, "
     "so a word's segmentation depends on the score before it (M6: witnessed past ~370K characters); "
     "no cut is sound"),
    ({"model_type": "char"}, "model_type='char' outside M5"),
    ({"model_type": None}, "model_type=None outside M5"),
    ({"split_by_whitespace": False}, "split_by_whitespace=False is outside M5 (needs True)"),
    ({"split_by_whitespace": None}, "split_by_whitespace=None is outside M5 (needs True)"),
    ({"escape_whitespaces": False}, "escape_whitespaces=False is outside M5 (needs True)"),
    ({"treat_whitespace_as_suffix": True}, "treat_whitespace_as_suffix=True is outside M5 (needs False)"),
    ({"allow_whitespace_only_pieces": True}, "allow_whitespace_only_pieces=True is outside M5 (needs False)"),
    ({"remove_extra_whitespaces": False}, "add_dummy_prefix and remove_extra_whitespaces differ: a piece "
     "starting with a space encodes differently"),
    ({"add_dummy_prefix": False}, "add_dummy_prefix and remove_extra_whitespaces differ: a piece "
     "starting with a space encodes differently"),
    ({"user_symbols": ["<x>", "a\u2581b"]}, "a user-defined symbol holds a space"),
    ({"user_symbols": ["a b"]}, "a user-defined symbol holds a space"),
    ({"space_piece": False}, "no normal piece '\u2581': the dummy prefix's token is not known"),
])
def test_sentencepiece_settings_outside_m5_are_serial(change: dict[str, Any], why: str) -> None:
    s = SPM_OK | change
    dec = decide(s)
    assert (dec.family, dec.rule, dec.why) == (spm_family(s), None, why)


def test_sentencepiece_without_user_symbols_or_space_piece_keys() -> None:
    s = {k: v for k, v in SPM_OK.items() if k not in ("user_symbols",)} | {"user_symbols": None}
    assert decide(s).why == "M5 (identity normalization)"
    s = SPM_OK | {"add_dummy_prefix": False, "remove_extra_whitespaces": False}
    del s["space_piece"]
    assert decide(s).why == "M5 (identity normalization)"


def test_sentencepiece_charsmap_that_rewrites_the_space_is_serial() -> None:
    """A real charsmap (sentencepiece compiles the rule ' ' -> '_'): M5 refuses it, with the note."""
    import sentencepiece

    from tokspec.fast._charsmap import spm_cut_pattern
    from tokspec.formats.spm_normalize import CharsMap
    from tokspec.formats.spm_model import load_spm_model

    folder = Path(tempfile.mkdtemp(prefix="tokspec-rules-"))
    (folder / "rules.tsv").write_text("20\t5F\n", encoding="utf-8")
    buf = io.BytesIO()
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=iter(["hello world the quick brown fox"] * 50), model_writer=buf,
        vocab_size=30, model_type="bpe", normalization_rule_tsv=str(folder / "rules.tsv"),
        hard_vocab_limit=False, minloglevel=3)
    (folder / "m.model").write_bytes(buf.getvalue())
    cm = CharsMap.parse(load_spm_model(folder / "m.model").precompiled_charsmap, "space-rewritten")
    pattern, note = spm_cut_pattern(cm)
    assert pattern is None and "rewrites a space" in note
    dec = decide(SPM_OK | {"charsmap": cm})
    assert (dec.family, dec.rule, dec.why) == (spm_family(SPM_OK), None, note)
