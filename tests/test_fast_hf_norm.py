"""Compiled HF normalizers (``tokspec.fast._hf_compiled`` and its kernels): on text the normalizer
changes, the arrays equal the general path (``tokspec.formats.hf_pipeline``, the oracle) for every
supported step and Metaspace setting; ``fast:mon-unigram`` takes the compiled path and its ids and
offsets equal ``reference:`` and HF ``tokenizers`` on generated texts that need normalization; the
Unicode tables are the recorded version's. Fast in interpreted mode (a mutation killer); the
1 MB texts are behind the ``slow`` marker."""

from __future__ import annotations

import copy
import functools
import json
import unicodedata
from typing import Any

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from tokspec import load_engine
from tokspec.app.bench.normalizing import normalizing_texts
from tokspec import _hf_unicode as hfu
from tokspec.fast import _hf_norm_forms as forms
from tokspec.fast import _hf_norm_tables as tables
from tokspec.fast._hf_compiled import compiled_plan
from tokspec.fast._hf_identity import identity_plan
from tokspec.fast.unigram_datrie import DatrieUnigram, _alignment_arrays, datrie_encoder
from tokspec.formats.hf_pipeline import hf_pipeline
from tokspec.formats.unigram_model import UnigramModel
from tokspec.formats.vocab import TokenizerJson, named_path

MON: dict[str, Any] = json.loads(named_path("mon-unigram").read_text(encoding="utf-8"))
SPECS: list[Any] = [
    MON["normalizer"], {"type": "NFKC"}, {"type": "NFD"}, {"type": "NFKD"}, None,
    {"type": "Sequence", "normalizers": [{"type": "Strip", "strip_left": True, "strip_right": True},
                                         {"type": "NFC"}, {"type": "Prepend", "prepend": "\u2581x"}]},
    {"type": "Sequence", "normalizers": [
        {"type": "Replace", "pattern": {"String": "e\u0301"}, "content": "E"},
        {"type": "Replace", "pattern": {"String": "ab"}, "content": ""},
        {"type": "Strip", "strip_left": False, "strip_right": True},
        {"type": "Replace", "pattern": {"Regex": "\\p{Zs}"}, "content": "\u00b7 "},
        {"type": "Replace", "pattern": {"String": ""}, "content": "q"}, {"type": "NFKC"}]},
    {"type": "Sequence", "normalizers": [{"type": "Strip", "strip_left": True, "strip_right": False},
                                         {"type": "Replace", "pattern": {"String": "a"}, "content": "bc"}]},
    {"type": "Sequence", "normalizers": [{"type": "Strip"}, {"type": "NFD"}]},  # Strip's defaults: both ends
    {"type": "Replace", "pattern": {"String": "aa"}, "content": ""},  # a literal that overlaps itself
]
#: Characters the normalizers change or look at: marks of several classes, Hangul jamo and a
#: syllable, compatibility characters, Replace targets, White_Space, combining classes HF does not
#: know (U+07FD, U+1ABF), the composite HF does not compose (U+11938 = U+11935 U+11930).
PIECES = list("\x00\x7f\x80\u07ff\u0800\uffffab e\u0301\u0323\u0302\u0327\u093c\u05b0\u00e9\u00c5\u212b\u00a0\u3000\u2002\u200b\u00ad"
              "\ufeff\ufb01\u2460\uff21\u1100\u1161\u11a8\uac00\u0344\u0f73\t\u2581\u07fd\u1abf") + [
    "\U00011935\U00011930", "\U00011938", "\U0001d15e", "\u0915\u093c", "\U0001f642", "ab",
    "\u1112\u1175\u11c2", "\ud7a3", "\U00030000", "\U00100000"]
TEXTS = st.lists(st.sampled_from(PIECES), min_size=0, max_size=16).map("".join)


def _data(normalizer: Any, scheme: str = "always", split: bool = True) -> dict[str, Any]:
    return {"normalizer": normalizer,
            "pre_tokenizer": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": scheme, "split": split}}


def _general(data: dict[str, Any], text: str) -> tuple[bytes, list[int], list[list[int]]]:
    """What the engine computes without a plan (unigram_datrie.normalized's general path)."""
    pres = [p for p in hf_pipeline(TokenizerJson("t.json", "0" * 64, data))(text) if p.text]
    encoded = [p.text.encode("utf-8") for p in pres]
    bounds = [0, *np.cumsum([len(b) for b in encoded]).tolist()]
    aligned = _alignment_arrays(pres) if pres else ()
    return b"".join(encoded), bounds, [a.tolist() for a in aligned]


def _compiled(data: dict[str, Any], text: str, alignment: bool = True) -> tuple[bytes, list[int], list[list[int]]]:
    plan = compiled_plan(data)
    assert plan is not None
    out, bounds, aligned = plan.arrays(text, alignment)
    return out.tobytes(), bounds.tolist(), [a.tolist() for a in aligned if len(a)]


@given(TEXTS, st.sampled_from(range(len(SPECS))), st.sampled_from(["always", "first", "never"]), st.booleans())
@example("xe\u0301y", 0, "always", True)            # the finding hf-nfc-composition-orphan
@example("i\ua8e8\u0329x", 0, "always", True)       # hf-nfc-reordering-positional: spans by slot
@example("a\u0323\u0301\u0302 e\u0301\u0301", 1, "never", False)
@example("\u1100\u1161\u11a8\u200b \u3000a", 0, "first", True)
@example(" ab e\u0301 ", 6, "always", True)
@example("\u00ad\u200b", 0, "always", True)         # everything deleted: no pretoken
@example("\U00011935\U00011930\u07fd\u0301", 1, "always", True)
@example("\u04af\u1100\u1161", 0, "always", True)  # corpora/diff/f9155b249183e026d3d3.json
@example("\U00030000\u0301\U0001f642\u0301a\u0334\u0301", 1, "always", True)  # past the tables, blocked marks
@example("\U00100000\u0301\u1112\u1175\u11c2 \u1100\u1161", 0, "always", True)  # the last and first syllables
@example(" \u3000e\u0301 \u00a0", 8, "always", True)
@example("ab\x00e\u0301", 6, "never", True)     # a literal at the very start, NUL (code point 0)
@example("a\x00", 7, "always", True)
@example("aaa b aaaa", 9, "always", True)  # overlapping candidates: matches are left to right, disjoint
@example("xe\u0301\u0323y a\u030b\u0301", 0, "always", True)  # a run of two to sort; an equal class blocks
@example("\x7f\x80\u07ff\u0800\uffff\U00010000", 1, "always", True)  # UTF-8 length bounds
def test_hyp_compiled_equals_general(text: str, spec: int, scheme: str, split: bool) -> None:
    data = _data(SPECS[spec], scheme, split)
    assert _compiled(data, text) == _general(data, text)


def test_long_runs_of_marks_are_sorted_stably() -> None:
    # a run of 40 marks of two classes, interleaved (the sort's merge path), and a base before it
    text = "a" + "\u0301\u0323" * 20 + "\u0302" + " \u1100\u1161"
    for spec in (0, 1, 2, 3):
        assert _compiled(_data(SPECS[spec]), text) == _general(_data(SPECS[spec]), text)


def test_ids_only_skips_the_alignment() -> None:
    data = _data(SPECS[0])
    out, bounds, aligned = _compiled(data, "xe\u0301y z", alignment=False)
    want = _general(data, "xe\u0301y z")
    assert (out, bounds, aligned) == (want[0], want[1], [])


@pytest.mark.parametrize("normalizer, pre", [
    ({"type": "ByteLevel"}, None),
    ({"type": "Replace", "pattern": {"Regex": " {2,}?"}, "content": " "}, None),  # lazy: matches of exactly 2
    ({"type": "Replace", "pattern": {"Regex": " {2,3}"}, "content": " "}, None),
    ({"type": "Replace", "pattern": {"Regex": "ab+"}, "content": " "}, None),
    ({"type": "Replace", "pattern": {"Regex": "[a--b]"}, "content": ""}, None),  # set operations: V1 syntax
    ({"type": "Replace", "pattern": {"Regex": "[a&&b]"}, "content": ""}, None),
    ({"type": "Replace", "pattern": {"Regex": "[a||b]"}, "content": ""}, None),
    ({"type": "Replace", "pattern": {"Regex": "[a~~b]"}, "content": ""}, None),
    ({"type": "Replace", "pattern": {}, "content": ""}, None),  # neither Regex nor String
    ({"type": "Sequence", "normalizers": [{"type": "NFC"}, {"type": "Precompiled", "precompiled_charsmap": "!"}]}, None),
    ({"type": "Sequence", "normalizers": [{"type": "Replace", "pattern": {"Regex": f"[{c}]"}, "content": ""}
                                          for c in "abcdefghi"]}, None),  # more than 8 classes
    ({"type": "NFC"}, {"type": "BertPreTokenizer"}),  # (WhitespaceSplit compiles now: test_fast_hf_split)
    ({"type": "NFC"}, {"type": "Metaspace", "replacement": "__", "prepend_scheme": "always"}),
    ({"type": "NFC"}, {"type": "Metaspace", "replacement": "_", "prepend_scheme": "sometimes"}),
    ({"type": "Replace", "pattern": {"Regex": "[\\w]"}, "content": ""}, "Metaspace"),
])
def test_unsupported_pipelines_get_no_plan(normalizer: Any, pre: Any) -> None:
    data = {"normalizer": normalizer, "pre_tokenizer": pre or _data(None)["pre_tokenizer"]}
    if pre == "Metaspace":  # a class the plan takes: the counterpart that does get a plan
        data["pre_tokenizer"] = _data(None)["pre_tokenizer"]
        assert compiled_plan(data) is not None
        return
    assert compiled_plan(data) is None


def test_older_files_add_prefix_space() -> None:
    for flag, scheme in ((True, "always"), (False, "never"), (None, "always")):
        pre = {"type": "Metaspace"} if flag is None else {"type": "Metaspace", "add_prefix_space": flag}
        data = {"normalizer": {"type": "NFC"}, "pre_tokenizer": pre}
        assert _compiled(data, "e\u0301 b") == _general(_data({"type": "NFC"}, scheme), "e\u0301 b")


def test_class_bits_refuse_a_pattern_wider_than_one_character() -> None:
    import regex
    assert tables.class_bits([regex.compile("ab")]) is None
    assert tables.class_bits([regex.compile("[a]")] * 9) is None
    bits = tables.class_bits([regex.compile("[a]"), regex.compile("\\p{Zs}")])
    assert bits is not None and bits[ord("a")] == 1 and bits[0x3000] == 2 and bits[0x20] == 2 and bits[ord("b")] == 0


def test_unicode_tables_are_the_probed_version() -> None:
    """The HF deltas (tokspec._hf_unicode) were probed with Python's Unicode 14.0; another
    ``unicodedata`` would make these tables not HF's (a finding to record, not to hide)."""
    assert unicodedata.unidata_version == tables.PROBED_UNIDATA
    t = tables.unicode_tables()
    assert t.unidata_version == tables.PROBED_UNIDATA
    # the kernels clamp code points to their LIMIT, the tables' last entry (a code point with no data)
    assert len(t.info) == forms.LIMIT + 1 == tables.LIMIT + 1 and t.dec_start.shape == (2, forms.LIMIT + 1)
    assert (forms._SECOND, forms._CANON, forms._COMPAT) == (tables.SECOND, tables.CANON, tables.COMPAT)
    assert all(unicodedata.normalize("NFD", chr(c)) == chr(c) or hfu.in_ranges(c, hfu.NO_CANONICAL_DECOMP)
               for lo, hi in hfu.NO_COMPAT_DECOMP for c in range(lo, hi + 1))  # so NFD may leave them too
    # nothing past LIMIT decomposes or has a combining class (the kernels do not look there)
    assert not any(unicodedata.decomposition(chr(c)) or unicodedata.combining(chr(c))
                   for c in range(tables.LIMIT, 0x110000) if not 0xD800 <= c < 0xE000)
    assert t.info[0x1E0A] & tables.CANON and t.info[0x0307] & tables.SECOND and t.info[0x0301] & 255 == 230
    assert t.info[0x07FD] & 255 == 0 and not t.info[0x11938] & tables.CANON   # HF's older tables
    assert t.info[0xFB01] & tables.COMPAT and not t.info[0xFB01] & tables.CANON


@functools.lru_cache(maxsize=1)
def _mon() -> DatrieUnigram:
    return datrie_encoder("mon-unigram")


def test_mon_unigram_takes_the_compiled_path_and_equals_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    fast, ref = _mon(), load_engine("reference:mon-unigram")
    texts = normalizing_texts(1, 12)
    wants = [ref.encode(text) for text in texts]
    monkeypatch.setattr(UnigramModel, "pretokenize", lambda self, text: pytest.fail("the Python path was taken"))
    for text, want in zip(texts, wants):
        got = fast.encode(text)
        assert (got.ids, got.offsets) == (want.ids, want.offsets), text
        assert tuple(fast.encode_ids(text).tolist()) == want.ids


def _hf_variant(normalizer: Any) -> tuple[DatrieUnigram, Any]:
    """fast: (mon-unigram's model, the normalizer's plans) and HF on mon-unigram with another normalizer."""
    tokenizers = pytest.importorskip("tokenizers")
    data = {**MON, "normalizer": normalizer}
    fast = copy.copy(_mon())  # the same model and trie; this normalizer's plans
    fast._identity, fast._compiled = identity_plan(data), compiled_plan(data)
    assert fast._compiled is not None
    return fast, tokenizers.Tokenizer.from_str(json.dumps(data))


@pytest.mark.parametrize("spec", [0, 1, 3, 5])
def test_equals_hf_tokenizers(spec: int) -> None:
    """ids equal HF's, and in library mode the offsets equal HF's own (HF's spans, positional)."""
    fast, hf = _hf_variant(SPECS[spec])
    fast.offsets = "library"
    for text in normalizing_texts(2 + spec, 6) + ["xe\u0301y", "i\ua8e8\u0329x \u1100\u1161\u11a8"]:
        want = hf.encode(text, add_special_tokens=False)
        got = fast.encode(text)
        assert (list(got.ids), list(got.offsets)) == (want.ids, want.offsets), text
        assert fast.encode_ids(text).tolist() == want.ids, text


def test_regression_f9155b249183_composed_character_in_a_byte_run() -> None:
    """corpora/diff/f9155b249183e026d3d3.json: NFC composes U+1100 U+1161 into U+AC00, which falls
    back to bytes in one unknown run with U+04AF. fast: gives the contract's per-character origins
    (as reference: does); in library mode, HF's own offsets (the run's span for every byte token)."""
    tokenizers = pytest.importorskip("tokenizers")
    text = "\u04af\u1100\u1161"
    fast = _mon()
    got = fast.encode(text)
    assert got.offsets == ((0, 0), (0, 1), (0, 1), (1, 3), (1, 3), (1, 3))
    library = copy.copy(fast)
    library.offsets = "library"
    hf = tokenizers.Tokenizer.from_file(str(named_path("mon-unigram"))).encode(text, add_special_tokens=False)
    assert (list(library.encode(text).ids), list(library.encode(text).offsets)) == (hf.ids, hf.offsets)
    assert hf.offsets[1:] == [(0, 2)] * 5 and list(got.ids) == hf.ids  # U+1161 is covered by no HF token


@pytest.mark.slow
def test_over_one_megabyte_equals_hf_and_reference() -> None:
    """One 1.2 MB text the normalizer changes throughout: ids equal HF's and reference:'s, offsets
    equal reference:'s (contract) and, in library mode, HF's own."""
    tokenizers = pytest.importorskip("tokenizers")
    text = "".join(normalizing_texts(12, 4000, 300))
    assert len(text.encode()) > 1_000_000
    fast, ref = _mon(), load_engine("reference:mon-unigram")
    got, want = fast.encode(text), ref.encode(text)
    assert (got.ids, got.offsets) == (want.ids, want.offsets)
    library = copy.copy(fast)
    library.offsets = "library"
    hf = tokenizers.Tokenizer.from_file(str(named_path("mon-unigram"))).encode(text, add_special_tokens=False)
    lib = library.encode(text)
    assert (list(lib.ids), list(lib.offsets)) == (hf.ids, hf.offsets)


def test_bench_texts_need_normalization() -> None:
    """The bench row ``mon-unigram 0.5-2KB normalizing`` measures the compiled path: its texts are
    0.5-2 KB and mon-unigram's normalizer changes every one (the identity plan does not apply)."""
    from tokspec.app.bench.latency import normalizing_short_texts
    texts = normalizing_short_texts(20)
    assert texts == normalizing_short_texts(20) and all(400 < len(t.encode()) <= 2000 for t in texts)
    plan = identity_plan(MON)
    assert plan is not None and not any(plan.applies(t) for t in texts)


def test_lone_surrogate_is_refused_on_the_compiled_path() -> None:
    from tokspec.errors import InvalidTextError
    for fn in (_mon().encode, _mon().encode_ids):
        with pytest.raises(InvalidTextError, match="lone surrogate"):
            fn("e\u0301\ud800")


def test_table_definitions_per_character() -> None:
    """The per-character definitions the tables are built from (Unicode facts and HF's deltas),
    called directly (the tables themselves are built once per process)."""
    assert [tables.hf_ccc(c) for c in "a\u0301\u0323\u0334\u07fd\u1abf"] == [0, 230, 220, 1, 0, 0]
    assert tables.hf_decomposition("\u00e9", False) == "e\u0301" == tables.hf_decomposition("\u00e9", True)
    assert tables.hf_decomposition("\ufb01", True) == "fi" and tables.hf_decomposition("\ufb01", False) == "\ufb01"
    assert tables.hf_decomposition("\u1e69", False) == "s\u0323\u0307"  # full: two levels
    for c in ("\U00011938", "\u32ff", "\U0001fbf0"):  # HF's older tables: no decomposition of either kind
        assert tables.hf_decomposition(c, True) == c == tables.hf_decomposition(c, False)
    assert tables._pair(0xE9, "0065 0301") == (0x65, 0x301) and tables._pair(0x1E69, "1E63 0307") == (0x1E63, 0x307)
    assert tables._pair(0xAC00, "") == (0x1100, 0x1161) and tables._pair(0xAC01, "") == (0xAC00, 0x11A8)
    assert tables._pair(0xD7A3, "") == (0xD788, 0x11C2)
    for cp, mapping in ((0x958, "0915 093C"), (0x11938, "11935 11930"), (0xFB01, "<compat> 0066 0069"),
                        (0x212B, "00C5"), (0x344, "0308 0301")):  # exclusions, HF's missing one, compat, singletons
        assert tables._pair(cp, mapping) is None
