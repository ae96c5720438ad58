"""reference/bpe_hf.py reads each tokenizer.json option the way HF ``tokenizers`` does (checked by
running both, ids AND offsets, on short adversarial texts over hand-written tiny models), and
refuses a malformed or unsupported file with a VocabularyError / UnsupportedComponentError whose
one-line message names the offending component and value."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import tokspec
from tokspec.errors import UnsupportedComponentError, VocabularyError
from tokspec.reference.bpe_hf import HfBpeEncoder, bpe_word, model_from_json, parse_pretokenizer
from tokspec.formats.vocab import TokenizerJson

#: Short texts that exercise merges, unknown characters, spaces and punctuation.
TEXTS = ["abc", "aabcc", "cab ab", "abcabc", " a  bc ", "ab,c!", "xab", "abx yb", "é a", "a\tb\nc",
         "bcab", "ccc", ""]


def _tokenizer(model: dict[str, Any], pre: dict[str, Any] | None = None, **top: Any) -> dict[str, Any]:
    data: dict[str, Any] = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [],
                            "normalizer": None, "pre_tokenizer": pre, "post_processor": None,
                            "decoder": None, "model": {"type": "BPE", **model}}
    data.update(top)
    return data


def _write(tmp_path: Path, data: dict[str, Any]) -> str:
    path = tmp_path / f"tiny{len(list(tmp_path.iterdir()))}.json"  # a new name: engines are cached by name
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return str(path)


def _assert_same_as_hf(tmp_path: Path, data: dict[str, Any], texts: list[str] = TEXTS) -> None:
    path = _write(tmp_path, data)
    ref, prod = tokspec.load_engine(f"reference:{path}"), tokspec.load_engine(f"hf:{path}")
    for text in texts:
        assert ref.encode(text) == prod.encode(text), text


def _ref(data: dict[str, Any], **kwargs: Any) -> HfBpeEncoder:
    return HfBpeEncoder(TokenizerJson("tiny.json", "0" * 64, data), "reference:tiny.json", **kwargs)


VOCAB = {"a": 0, "b": 1, "c": 2, " ": 3, "ab": 4, "bc": 5, "abc": 6, "ca": 7, "[UNK]": 8}
MERGES = [["a", "b"], ["ab", "c"], ["c", "a"], ["b", "c"]]


# ---- the model object ------------------------------------------------------------------------------

def test_merge_strings_and_lists_are_the_same_merges(tmp_path: Path) -> None:
    as_lists = _tokenizer({"vocab": VOCAB, "merges": MERGES, "unk_token": "[UNK]"})
    as_strings = _tokenizer({"vocab": VOCAB, "merges": [" ".join(m) for m in MERGES], "unk_token": "[UNK]"})
    assert model_from_json(as_lists["model"]) == model_from_json(as_strings["model"])
    _assert_same_as_hf(tmp_path, as_strings)
    _assert_same_as_hf(tmp_path, as_lists)


@pytest.mark.parametrize("bad", ["a b c", "ab", "a  b", "a\tb", ["a"], ["a", "b", "c"], ["a", 1], 7, None])
def test_malformed_merge_is_named_with_its_position(bad: Any) -> None:
    model = {"vocab": VOCAB, "merges": [["a", "b"], bad]}
    expected = re.escape(f"merge #1 must be 'LEFT RIGHT' or [LEFT, RIGHT], got {bad!r}")
    with pytest.raises(VocabularyError, match=f"^{expected}$"):
        model_from_json(model)


@pytest.mark.parametrize("merges, missing", [
    ([["a", "b"], ["b", "x"]], "x"),           # the right side
    ([["a", "b"], ["y", "b"]], "y"),           # the left side
    ([["a", "b"], ["c", "c"]], "cc"),          # the merged token
])
def test_merge_naming_a_token_outside_the_vocab_is_named(merges: list[list[str]], missing: str) -> None:
    a, b = merges[1]
    with pytest.raises(VocabularyError, match=f"^{re.escape(f'merge #1 {a!r} {b!r}: token {missing!r} is not in the vocab')}$"):
        model_from_json({"vocab": VOCAB, "merges": merges})


def test_continuing_prefix_is_dropped_from_the_right_side_of_a_merge(tmp_path: Path) -> None:
    vocab = {"a": 0, "##a": 1, "b": 2, "##b": 3, "ab": 4, "##ab": 5, "aab": 6, "[UNK]": 7}
    merges = [["a", "##b"], ["##a", "##b"], ["a", "##ab"]]
    model = {"vocab": vocab, "merges": merges, "unk_token": "[UNK]", "continuing_subword_prefix": "##"}
    parsed = model_from_json(model)
    assert parsed.merges == {(0, 3): (0, 4), (1, 3): (1, 5), (0, 5): (2, 6)}
    assert parsed.continuing_subword_prefix == "##"
    data = _tokenizer(model, {"type": "Whitespace"})
    _assert_same_as_hf(tmp_path, data, ["ab aab abab ba", "aaab b", "c ab"])


def test_empty_affixes_mean_none() -> None:
    model = model_from_json({"vocab": VOCAB, "merges": MERGES, "continuing_subword_prefix": "",
                             "end_of_word_suffix": ""})
    assert model.continuing_subword_prefix is None and model.end_of_word_suffix is None
    assert model.merges[(0, 1)] == (0, 4)  # "" as a prefix would still give "ab": no prefix is cut


@pytest.mark.parametrize("dropout", [None, 0, 0.0])
def test_dropout_off_is_accepted(dropout: Any) -> None:
    assert model_from_json({"vocab": VOCAB, "merges": MERGES, "dropout": dropout}).merges


@pytest.mark.parametrize("dropout", [0.5, 1])
def test_dropout_on_is_refused(dropout: Any) -> None:
    with pytest.raises(UnsupportedComponentError, match=f"^BPE dropout={dropout!r} is random; unsupported$"):
        model_from_json({"vocab": VOCAB, "merges": MERGES, "dropout": dropout})


def test_model_defaults() -> None:
    model = model_from_json({"vocab": VOCAB})
    assert model.merges == {}
    assert (model.unk_token, model.continuing_subword_prefix, model.end_of_word_suffix) == (None, None, None)
    assert (model.fuse_unk, model.byte_fallback, model.ignore_merges) == (False, False, False)
    flags = model_from_json({"vocab": VOCAB, "fuse_unk": 1, "byte_fallback": 1, "ignore_merges": 1,
                             "unk_token": "[UNK]", "end_of_word_suffix": "</w>"})
    assert (flags.fuse_unk, flags.byte_fallback, flags.ignore_merges) == (True, True, True)
    assert (flags.unk_token, flags.end_of_word_suffix) == ("[UNK]", "</w>")


@pytest.mark.parametrize("file_flag", [False, True])
def test_ignore_merges_from_the_file_and_its_override(tmp_path: Path, file_flag: bool) -> None:
    """'abc' is a token that the merges reach only as ab+c: with ignore_merges a whole word equal to
    a token is emitted at once; the override reproduces a library that reads the flag otherwise."""
    vocab = {"a": 0, "b": 1, "c": 2, "bc": 3, "abc": 4, "ab": 5}
    merges = [["b", "c"], ["a", "b"], ["ab", "c"]]
    data = _tokenizer({"vocab": vocab, "merges": merges, "ignore_merges": file_flag}, {"type": "Whitespace"})
    _assert_same_as_hf(tmp_path, data, ["abc", "abc abcabc", "cabc"])
    whole, merged = [(4, 0, 3)], [(0, 0, 1), (3, 1, 3)]
    assert bpe_word(model_from_json(data["model"]), "abc") == (whole if file_flag else merged)
    for override in (False, True):
        engine = _ref(data, ignore_merges=override)
        assert engine.model.ignore_merges is override
        assert engine.encode("abc").ids == ((4,) if override else (0, 3))


def test_unk_token_outside_the_vocab_is_named() -> None:
    engine = _ref(_tokenizer({"vocab": VOCAB, "merges": MERGES, "unk_token": "<unk>"}))
    assert engine.encode("abc").ids == (6,)  # no unknown character: the unk token is not needed
    with pytest.raises(VocabularyError, match=r"^unk_token='<unk>' is not in the vocabulary$"):
        engine.encode("abxc")


@pytest.mark.parametrize("fuse", [False, True])
def test_unknown_characters_with_and_without_unk_token(tmp_path: Path, fuse: bool) -> None:
    texts = ["xyab", "axyb", "xx yy", "abx", "x", "éèab"]
    _assert_same_as_hf(tmp_path, _tokenizer({"vocab": VOCAB, "merges": MERGES, "unk_token": "[UNK]",
                                             "fuse_unk": fuse}), texts)
    # Without an unk token HF drops the character and shifts the later offsets (finding
    # hf-dropped-char-offsets): same ids; a reference token starts and ends on characters it keeps.
    path = _write(tmp_path, _tokenizer({"vocab": VOCAB, "merges": MERGES, "fuse_unk": fuse}))
    ref, prod = tokspec.load_engine(f"reference:{path}"), tokspec.load_engine(f"hf:{path}")
    pieces = {i: p for p, i in VOCAB.items()}
    for text in texts:
        enc = ref.encode(text)
        assert enc.ids == prod.encode(text).ids, text
        kept = ["".join(c for c in text[s:e] if c in VOCAB) for s, e in enc.offsets]
        assert kept == [pieces[i] for i in enc.ids], text
        assert all(text[s] in VOCAB and text[e - 1] in VOCAB for s, e in enc.offsets), text


def test_an_unknown_after_byte_fallback_tokens_is_not_fused_into_them(tmp_path: Path) -> None:
    """fuse_unk joins consecutive unknowns only: a character spelt by byte-fallback tokens closes
    the run, so the unknown after it is a new [UNK] (as in HF). Texts with an unknown BEFORE a
    byte-fallback character are left out: HF emits the byte tokens ahead of the pending [UNK]
    there (ids out of text order, e.g. "éaé" -> <0x61>, [UNK]), which the reference does not copy."""
    vocab = {"<0x61>": 0, "<0x62>": 1, "[UNK]": 2, "c": 3}
    data = _tokenizer({"vocab": vocab, "merges": [], "unk_token": "[UNK]", "fuse_unk": True,
                       "byte_fallback": True})
    _assert_same_as_hf(tmp_path, data, ["aé", "aéé", "caéx", "bé", "é"])


def test_end_of_word_suffix_on_the_last_symbol(tmp_path: Path) -> None:
    vocab = {"a": 0, "b": 1, "a</w>": 2, "b</w>": 3, "ab</w>": 4, "ab": 5, "[UNK]": 6}
    merges = [["a", "b</w>"], ["a", "b"]]
    data = _tokenizer({"vocab": vocab, "merges": merges, "unk_token": "[UNK]", "end_of_word_suffix": "</w>"},
                      {"type": "Whitespace"})
    _assert_same_as_hf(tmp_path, data, ["ab abab a b ba", "bab", "abc"])


# ---- pretokenizers ---------------------------------------------------------------------------------

def _bytelevel_vocab() -> dict[str, int]:
    from tokspec.reference.bpe_hf import bytes_to_unicode
    return {ch: b for b, ch in bytes_to_unicode().items()} | {"ab": 256, "Ġa": 257}


@pytest.mark.parametrize("use_regex", [False, True])
@pytest.mark.parametrize("prefix", [False, True])
def test_bytelevel_options_equal_hf(tmp_path: Path, use_regex: bool, prefix: bool) -> None:
    pre = {"type": "ByteLevel", "add_prefix_space": prefix, "trim_offsets": False, "use_regex": use_regex}
    data = _tokenizer({"vocab": _bytelevel_vocab(), "merges": [["a", "b"], ["Ġ", "a"]]}, pre)
    texts = ["ab ab", "a  b!", "x's ab", "aab\n a", "é ab"]
    path = _write(tmp_path, data)
    ref, prod = tokspec.load_engine(f"reference:{path}"), tokspec.load_engine(f"hf:{path}")
    for text in texts:
        assert ref.encode(text).ids == prod.encode(text).ids, text
        if not prefix:
            assert ref.encode(text) == prod.encode(text), text
    pt = parse_pretokenizer(pre)
    assert (pt.byte_level, pt.prefix_space, pt.byte_split is not None) == (True, prefix, use_regex)


def test_bytelevel_use_regex_defaults_to_true() -> None:
    pt = parse_pretokenizer({"type": "ByteLevel"})
    assert pt.byte_split is not None and not pt.prefix_space
    assert [w[0] for w in pt.words("ab cd", 0, 5)] == ["ab", "Ġcd"]


def test_sequence_of_splits_then_bytelevel_equals_hf(tmp_path: Path) -> None:
    pre = {"type": "Sequence", "pretokenizers": [
        {"type": "Whitespace"},
        {"type": "Split", "pattern": {"String": "b"}, "behavior": "MergedWithNext", "invert": False},
        {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}]}
    data = _tokenizer({"vocab": _bytelevel_vocab(), "merges": [["a", "b"], ["Ġ", "a"]]}, pre)
    _assert_same_as_hf(tmp_path, data, ["abab cab", "bb a!b", "a.b b"])


def test_split_without_invert_key_is_not_inverted() -> None:
    pt = parse_pretokenizer({"type": "Split", "pattern": {"String": "-"}, "behavior": "Removed"})
    assert pt.pieces("a-b--c", 0, 6) == [(0, 1), (2, 3), (5, 6)]
    assert not pt.byte_level


@pytest.mark.parametrize("pre", [{"type": "Whitespace"}, {"type": "ByteLevel", "add_prefix_space": True}])
def test_words_carry_one_origin_and_one_inserted_flag_per_model_character(pre: dict[str, Any]) -> None:
    """Word's contract: per model character, the original character it comes from and whether it
    was inserted; so both lists are as long as the word, for words that start past 0 too."""
    text = "ab cd, éf"
    words = parse_pretokenizer(pre).words(text, 0, len(text))
    assert len(words) > 2
    for string, origin, inserted in words:
        assert len(origin) == len(inserted) == len(string), (string, origin, inserted)
        assert not any(inserted[1:]), inserted  # only a prefix space is ever inserted


def test_no_pretokenizer_is_the_empty_sequence() -> None:
    """No pre_tokenizer and a Sequence of none both leave the text one piece, without ByteLevel:
    the same parsed Pretokenizer (its byte_level a bool, False)."""
    none, empty = parse_pretokenizer(None), parse_pretokenizer({"type": "Sequence", "pretokenizers": []})
    assert none == empty and none.byte_level is False and empty.byte_level is False


def test_no_pretokenizer_is_one_piece(tmp_path: Path) -> None:
    pt = parse_pretokenizer(None)
    assert pt.pieces("ab c", 0, 4) == [(0, 4)] and not pt.byte_level
    _assert_same_as_hf(tmp_path, _tokenizer({"vocab": VOCAB, "merges": MERGES, "unk_token": "[UNK]"}))


@pytest.mark.parametrize("pre, message", [
    ({"type": "Split", "pattern": {}, "behavior": "Isolated"}, "Split pattern {}: expected Regex or String"),
    ({"type": "Split", "behavior": "Isolated"}, "Split pattern {}: expected Regex or String"),  # no pattern
    ({"type": "Split", "pattern": {"Glob": "a*"}, "behavior": "Isolated"},
     "Split pattern {'Glob': 'a*'}: expected Regex or String"),
    ({"type": "Split", "pattern": {"String": "a"}, "behavior": "Contiguous"},
     "Split behavior='Contiguous'; supported: ('Isolated', 'Removed', 'MergedWithPrevious', 'MergedWithNext')"),
    ({"type": "Split", "pattern": {"String": "a"}},
     "Split behavior=None; supported: ('Isolated', 'Removed', 'MergedWithPrevious', 'MergedWithNext')"),
    ({"type": "Sequence", "pretokenizers": [{"type": "ByteLevel"}, {"type": "Whitespace"}]},
     "pre_tokenizer 'ByteLevel' at position 0 is unsupported (supported: Split, Whitespace, ByteLevel last)"),
    ({"type": "Sequence", "pretokenizers": [{"type": "Whitespace"}, {"type": "Digits"}]},
     "pre_tokenizer 'Digits' at position 1 is unsupported (supported: Split, Whitespace, ByteLevel last)"),
])
def test_unsupported_pretokenizers_are_named(pre: dict[str, Any], message: str) -> None:
    with pytest.raises(UnsupportedComponentError, match=f"^{re.escape(message)}$"):
        parse_pretokenizer(pre)
    with pytest.raises(UnsupportedComponentError, match=re.escape(message)):
        _ref(_tokenizer({"vocab": VOCAB, "merges": MERGES}, pre))


# ---- post-processors, added tokens, normalizer -----------------------------------------------------

@pytest.mark.parametrize("post", [
    None,
    {"type": "TemplateProcessing", "single": [], "pair": [], "special_tokens": {}},
    {"type": "BertProcessing", "sep": ["[UNK]", 8], "cls": ["[UNK]", 8]},
    {"type": "ByteLevel", "trim_offsets": False},
    {"type": "RobertaProcessing", "sep": ["[UNK]", 8], "cls": ["[UNK]", 8], "trim_offsets": False},
    {"type": "Sequence", "processors": [{"type": "ByteLevel", "trim_offsets": False},
                                        {"type": "BertProcessing", "sep": ["[UNK]", 8], "cls": ["[UNK]", 8]}]},
    {"type": "Sequence", "processors": []},
])
def test_post_processors_that_keep_offsets_are_accepted(post: dict[str, Any] | None) -> None:
    engine = _ref(_tokenizer({"vocab": VOCAB, "merges": MERGES}, post_processor=post))
    assert engine.encode("abc ab").ids == (6, 3, 4)


@pytest.mark.parametrize("post, message", [
    ({"type": "ByteLevel", "trim_offsets": True}, "post_processor 'ByteLevel' with trim_offsets=True"),
    ({"type": "ByteLevel"}, "post_processor 'ByteLevel' with trim_offsets=None"),
    ({"type": "RobertaProcessing", "trim_offsets": True}, "post_processor 'RobertaProcessing' with trim_offsets=True"),
    ({"type": "Sequence", "processors": [{"type": "TemplateProcessing"}, {"type": "Foo"}]},
     "post_processor 'Foo' with trim_offsets=None"),
])
def test_post_processors_that_edit_offsets_are_refused(post: dict[str, Any], message: str) -> None:
    with pytest.raises(UnsupportedComponentError, match=f"^{re.escape(message)} edits offsets; unsupported$"):
        _ref(_tokenizer({"vocab": VOCAB, "merges": MERGES}, post_processor=post))


def _added(content: str, tid: int, **flags: Any) -> dict[str, Any]:
    return {"id": tid, "content": content, "single_word": False, "lstrip": False, "rstrip": False,
            "normalized": False, "special": False} | flags


@pytest.mark.parametrize("flag", ["lstrip", "rstrip", "single_word"])
def test_added_token_strip_flags_are_refused(flag: str) -> None:
    data = _tokenizer({"vocab": VOCAB, "merges": MERGES}, added_tokens=[_added("ca", 7), _added("<x>", 9, **{flag: True})])
    with pytest.raises(UnsupportedComponentError, match=f"^added token '<x>' has {flag}=true$"):
        _ref(data)


def test_added_tokens_special_empty_and_both_passes_equal_hf(tmp_path: Path) -> None:
    vocab = VOCAB | {"<s>": 9, "cab": 10, "<n>": 11}
    added = [_added("<s>", 9, special=True), _added("cab", 10, normalized=True), _added("<n>", 11),
             _added("", 12, special=False)]
    data = _tokenizer({"vocab": vocab, "merges": MERGES, "unk_token": "[UNK]"}, {"type": "Whitespace"},
                      added_tokens=added)
    engine = _ref(data)
    assert engine.added == [{"<n>": 11}, {"cab": 10}]
    texts = ["<s>cab", "acab<n>cab", "<n><n>", "c<n>ab cab", "<s", "abcab"]
    path = _write(tmp_path, data)
    ref, prod = tokspec.load_engine(f"reference:{path}"), tokspec.load_engine(f"hf:{path}")
    for text in texts:
        assert ref.encode(text) == prod.encode(text), text


def test_added_tokens_around_prefix_space_pretokens_equal_hf(tmp_path: Path) -> None:
    """Added tokens at the start, the end, back to back and in an empty text leave no empty run for
    ByteLevel's prefix space to turn into a token; a normalized token is only looked for inside the
    text the non-normalized pass left over ("ab" never spans an extracted "b")."""
    vocab = _bytelevel_vocab() | {"<x>": 258}
    added = [_added("<x>", 258, normalized=True), _added("ab", 256, normalized=True), _added("b", 98)]
    pre = {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False, "use_regex": True}
    data = _tokenizer({"vocab": vocab, "merges": [["a", "b"], ["Ġ", "a"]]}, pre, added_tokens=added)
    texts = ["", "<x>", "<x>a", "a<x>", "<x><x>", "ab", "xaby", "a b<x> ab<x>"]
    path = _write(tmp_path, data)
    ref, prod = tokspec.load_engine(f"reference:{path}"), tokspec.load_engine(f"hf:{path}")
    for text in texts:
        assert ref.encode(text).ids == prod.encode(text).ids, text


def test_sequence_post_processor_without_its_list_is_not_a_crash() -> None:
    """A Sequence post-processor whose "processors" key is absent holds no processor: accepted, as
    the empty Sequence is (anything refused would be an UnsupportedComponentError, never a TypeError)."""
    engine = _ref(_tokenizer({"vocab": VOCAB, "merges": MERGES}, post_processor={"type": "Sequence"}))
    assert engine.encode("abc ab").ids == _ref(_tokenizer({"vocab": VOCAB, "merges": MERGES})).encode("abc ab").ids


def test_normalizer_is_refused_naming_the_file_and_type() -> None:
    data = _tokenizer({"vocab": VOCAB, "merges": MERGES}, normalizer={"type": "Lowercase"})
    with pytest.raises(UnsupportedComponentError, match=r"^'tiny.json': normalizer 'Lowercase' is unsupported$"):
        _ref(data)


def test_engine_info_names_the_reference() -> None:
    engine = _ref(_tokenizer({"vocab": VOCAB, "merges": MERGES}))
    assert engine.info.name == "reference:tiny.json"
    assert engine.info.kind == "tokenizer"
    assert engine.info.library == "tokspec.reference.bpe_hf"
    assert engine.info.vocab_sha256 == "0" * 64
    assert "tiny.json" in engine.info.description


@pytest.mark.parametrize("pattern", [r"b*", r"(?=a)", r"x?"])
@pytest.mark.parametrize("behavior", ["Isolated", "Removed", "MergedWithPrevious"])
def test_split_with_empty_matches_equals_hf(tmp_path: Path, pattern: str, behavior: str) -> None:
    """An empty match delimits nothing; the matches after it still count."""
    pre = {"type": "Split", "pattern": {"Regex": pattern}, "behavior": behavior, "invert": False}
    _assert_same_as_hf(tmp_path, _tokenizer({"vocab": VOCAB, "merges": MERGES, "unk_token": "[UNK]"}, pre),
                       ["abba cab", "bbb", "acbxb", "a"])


@pytest.mark.parametrize("pattern", [r"a{1,2}+", r"\p{L}{1,2}+", r"[ab]{2}+", r"\x61{1,2}+", r"\d{1,3}+|\D"])
def test_interval_plus_atoms_are_read_as_oniguruma_reads_them(tmp_path: Path, pattern: str) -> None:
    """Each atom kind before ``{n,m}+`` (a literal, ``\\p{..}``, a bracket class, an escape)."""
    vocab = {c: i for i, c in enumerate("ab1234 ")} | {"[UNK]": 7}
    pre = {"type": "Split", "pattern": {"Regex": pattern}, "behavior": "Isolated", "invert": False}
    _assert_same_as_hf(tmp_path, _tokenizer({"vocab": vocab, "merges": [], "unk_token": "[UNK]"}, pre),
                       ["aaaaab", "ababab a", "1234567 12", "baaab"])


_HF_BEHAVIOR = {"Isolated": "isolated", "Removed": "removed", "MergedWithPrevious": "merged_with_previous",
                "MergedWithNext": "merged_with_next"}


@given(st.sampled_from([r"b*", r"x?", r"(?=a)", r"a|", r"\s*", r"(?<=a)", r"ab|b*", r"\b", r"a+"]),
       st.sampled_from(sorted(_HF_BEHAVIOR)), st.booleans(), st.text("ab c", max_size=9))
def test_hyp_split_pieces_equal_hf_split(pattern: str, behavior: str, invert: bool, text: str) -> None:
    """Split alone, on patterns that match the empty string: the same pieces as HF's Split."""
    from tokenizers import Regex, pre_tokenizers
    ours = parse_pretokenizer({"type": "Split", "pattern": {"Regex": pattern}, "behavior": behavior,
                               "invert": invert}).pieces(text, 0, len(text))
    hf = pre_tokenizers.Split(Regex(pattern), _HF_BEHAVIOR[behavior], invert=invert).pre_tokenize_str(text)
    assert ours == [tuple(span) for _, span in hf]
