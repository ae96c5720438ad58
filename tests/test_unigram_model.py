"""Core Unigram model and the shared normalization: checked against the production libraries.

- HF normalizers with alignment (``tokspec.formats.normalize``) vs HF ``tokenizers`` probed character by
  character (a WordLevel tokenizer whose pretokenizer isolates every normalized character reports
  each one's original offsets).
- HF's Unicode tables (``tokspec._hf_unicode``) re-derived from the installed library.
- HF's score parsing (``serde_json_f64``) vs the values HF itself holds (its own re-serialization).
- sentencepiece's normalizer (``tokspec.formats.spm_normalize``) vs ``SentencePieceProcessor.normalize``
  with offsets.
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest
import regex
import sentencepiece
from hypothesis import given
from hypothesis import strategies as st
from tokenizers import Regex, Tokenizer, models, normalizers, pre_tokenizers

from tokspec import _hf_unicode as hfu
from tokspec.formats import normalize as nz
from tokspec.corpus import build_corpus
from tokspec.errors import UnsupportedComponentError, VocabularyError
from tokspec.formats.models import trained_model
from tokspec.formats.normalize import Aligned
from tokspec.formats.spm_normalize import CharsMap, SpmNormalizer
from tokspec.formats.unigram_model import (
    serde_json_f64,
    unigram_model_from_spm,
    unigram_model_from_tokenizer_json,
)
from tokspec.formats.spm_model import load_spm_model
from tokspec.formats.vocab import named_path
from tokspec.versions import check_finding

TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=24)
MARKY = st.text(st.sampled_from(
    " \t\u3000\u2029"
    "ae\u0301\u0316\u0327\u0898\u05a7\U00016af0\U00011d42\u1100\u1161\u11a8\uac00\ufb01\u2474"
    "\uff21\u0130\u03a3\u4e00\u200b\x00\ufffd\t\u00a0 Ab\u0958\u0f73\u1e9b"), max_size=12)

# (HF normalizer, tokspec equivalent) pairs under test
PAIRS = {
    "NFC": (normalizers.NFC(), lambda a: nz.unicode_form(a, "NFC")),
    "NFD": (normalizers.NFD(), lambda a: nz.unicode_form(a, "NFD")),
    "NFKC": (normalizers.NFKC(), lambda a: nz.unicode_form(a, "NFKC")),
    "NFKD": (normalizers.NFKD(), lambda a: nz.unicode_form(a, "NFKD")),
    "Lowercase": (normalizers.Lowercase(), nz.lowercase),
    "clean": (normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=False,
                                         strip_accents=False, lowercase=False), nz.bert_clean),
    "cjk": (normalizers.BertNormalizer(clean_text=False, handle_chinese_chars=True,
                                       strip_accents=False, lowercase=False), nz.bert_cjk_spacing),
    "replace": (normalizers.Replace(Regex("[ab]+"), "XYZ"),
                lambda a: nz.replace(a, regex.compile("[ab]+"), "XYZ")),
    "delete": (normalizers.Replace(Regex("[ab\u200b]"), ""),
               lambda a: nz.replace(a, regex.compile("[ab\u200b]"), "")),
    "strip": (normalizers.Strip(left=True, right=True), lambda a: nz.strip(a, left=True, right=True)),
    "rstrip": (normalizers.Strip(left=False, right=True), lambda a: nz.strip(a, left=False, right=True)),
}


def hf_alignment(norm: normalizers.Normalizer, text: str) -> list[tuple[str, tuple[int, int]]]:
    """Each normalized character with the original offsets HF reports for it."""
    tok = Tokenizer(models.WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
    tok.normalizer = norm
    tok.pre_tokenizer = pre_tokenizers.Split(Regex(r"(?m)."), behavior="isolated")
    enc = tok.encode(text, add_special_tokens=False)
    return list(zip(norm.normalize_str(text), [tuple(o) for o in enc.offsets]))


def ours(fn: object, text: str) -> list[tuple[str, tuple[int, int]]]:
    a = fn(Aligned.of(text))  # type: ignore[operator]
    return list(zip(a.text, a.spans))


@pytest.mark.parametrize("name", sorted(PAIRS))
@given(text=st.one_of(TEXT, MARKY))
def test_hyp_hf_normalizer_alignment(name: str, text: str) -> None:
    hf_norm, fn = PAIRS[name]
    assert ours(fn, text) == hf_alignment(hf_norm, text)


@pytest.mark.parametrize("name", ["NFC", "NFKC", "clean", "Lowercase"])
def test_hf_normalizer_alignment_on_corpus(name: str) -> None:
    hf_norm, fn = PAIRS[name]
    for text in build_corpus()[::3]:
        assert ours(fn, text) == hf_alignment(hf_norm, text), text[:80]


def test_contract_origins_of_composition_and_prepend() -> None:
    a = nz.prepend(nz.unicode_form(Aligned.of("e\u0301x"), "NFC"), "\u2581")
    assert a.text == "\u2581\u00e9x"
    assert a.spans == ((0, 1), (0, 1), (2, 3))            # HF: composed char -> first source only
    assert a.origins == ((0, 0), (0, 2), (2, 3))          # contract: both sources; prepend: empty
    assert a.contract_span(0, 2) == (0, 2) and a.contract_span(0, 1) == (0, 0)


# -- HF's Unicode tables, re-derived from the installed library -----------------------------------

def _hf_per_char(norm: normalizers.Normalizer, cps: list[int]) -> dict[int, str]:
    out = norm.normalize_str("\n".join(map(chr, cps))).split("\n")
    assert len(out) == len(cps)
    return dict(zip(cps, out))


def _ranges_contain(ranges: tuple[tuple[int, int], ...]) -> set[int]:
    return {cp for lo, hi in ranges for cp in range(lo, hi + 1)}


def test_hf_ccc_zero_table_matches_library() -> None:
    nfc = normalizers.NFC()
    unknown = set()
    for cp in range(0x110000):
        ccc = unicodedata.combining(chr(cp)) if not 0xD800 <= cp < 0xE000 else 0
        if ccc == 0:
            continue
        probe = "q" + chr(cp) + "\u0334" if ccc > 1 else "q\u0301" + chr(cp)
        if nfc.normalize_str(probe) == probe:   # HF did not reorder: it does not know the ccc
            unknown.add(cp)
    assert unknown == _ranges_contain(hfu.CCC_ZERO)


@pytest.mark.slow
def test_hf_tables_match_library_exhaustively() -> None:
    cps = [c for c in range(0x110000) if not 0xD800 <= c < 0xE000 and c != 10]
    low = _hf_per_char(normalizers.Lowercase(), cps)
    assert {c: s for c, s in low.items() if s != chr(c).lower()} == hfu.LOWER
    nfkd = _hf_per_char(normalizers.NFKD(), cps)
    assert {c for c in cps if nfkd[c] == chr(c) != unicodedata.normalize("NFKD", chr(c))} == \
        _ranges_contain(hfu.NO_COMPAT_DECOMP)


def test_hf_tables_spot_checks() -> None:
    """tokspec._hf_unicode holds HF's Unicode tables as of the recorded tokenizers (a Unicode-version
    fact: asserted with that version, re-checked and reported with others)."""
    low = _hf_per_char(normalizers.Lowercase(), sorted(hfu.LOWER))
    nfkd = _hf_per_char(normalizers.NFKD(), sorted(_ranges_contain(hfu.NO_COMPAT_DECOMP)))
    check_finding("hf-unicode-tables-lowercase", "tokenizers", low == hfu.LOWER)
    check_finding("hf-unicode-tables-nfkd", "tokenizers", all(out == chr(c) for c, out in nfkd.items()))


# -- score parsing --------------------------------------------------------------------------------

def test_serde_parse_equals_the_scores_hf_holds() -> None:
    """HF re-serializes its f64 scores with a shortest round-trip formatter: Python's float()
    of that output is exactly the value HF holds. Our parse of the ORIGINAL file must equal it."""
    path = named_path("mon-unigram")
    held = json.loads(Tokenizer.from_file(str(path)).to_str())["model"]["vocab"]
    raw = json.loads(Path(path).read_bytes(), parse_float=str, parse_int=str)["model"]["vocab"]
    ours_ = [serde_json_f64(s) for _, s in raw]
    assert ours_ == [float(s) for _, s in held]
    exact = [float(s) for _, s in raw]
    assert sum(a != b for a, b in zip(ours_, exact)) > 1000   # the difference is real and common


@pytest.mark.parametrize("literal", ["0", "-100", "1.5e-05", "-0.001234", "1e-320", "-2.5",
                                     "123456789012345678901234.5", "-13.843325008003077"])
def test_serde_parse_close_to_exact(literal: str) -> None:
    got, exact = serde_json_f64(literal), float(literal)
    assert got == exact or abs(got - exact) <= 4 * abs(exact) * 2**-52


def test_tokenizer_json_model_shape() -> None:
    m = unigram_model_from_tokenizer_json(named_path("mon-unigram"))
    assert m.flavour == "hf" and m.byte_fallback and len(m.byte_ids) == 256 and -1 not in m.byte_ids
    assert m.unk_score == min(m.scores) - 10 and all(m.matchable)
    pre = m.pretokenize("a\u200bb  c")
    assert [p.text for p in pre] == ["\u2581ab", "\u2581", "\u2581c"]
    assert [p.original_span(0, len(p.text)) for p in pre] == [(0, 3), (3, 4), (4, 6)]


def test_unsupported_pipeline_components_raise(tmp_path: Path) -> None:
    data = json.loads(named_path("mon-unigram").read_bytes())
    data["normalizer"] = {"type": "BertNormalizer"}
    path = tmp_path / "t.json"
    path.write_text(json.dumps(data))
    with pytest.raises(UnsupportedComponentError, match="BertNormalizer"):
        unigram_model_from_tokenizer_json(path)
    data["normalizer"] = None
    data["pre_tokenizer"] = {"type": "ByteLevel"}
    path.write_text(json.dumps(data))
    with pytest.raises(UnsupportedComponentError, match="ByteLevel"):
        unigram_model_from_tokenizer_json(path)


def test_duplicate_pieces_are_a_vocabulary_error(tmp_path: Path) -> None:
    data = json.loads(named_path("mon-unigram").read_bytes())
    data["model"]["vocab"][10] = list(data["model"]["vocab"][11])
    path = tmp_path / "dup.json"
    path.write_text(json.dumps(data))
    with pytest.raises(VocabularyError, match="duplicate piece"):
        unigram_model_from_tokenizer_json(path)


# -- sentencepiece normalizer ---------------------------------------------------------------------

SPM_KINDS = ["spm-unigram", "spm-unigram-bytes", "spm-unigram-identity"]


@pytest.fixture(scope="module", params=SPM_KINDS)
def spm_pair(request: pytest.FixtureRequest) -> tuple[sentencepiece.SentencePieceProcessor, SpmNormalizer]:
    path = str(trained_model(request.param))
    return sentencepiece.SentencePieceProcessor(model_file=path), SpmNormalizer(load_spm_model(path))


def _spm_check(pair: tuple[sentencepiece.SentencePieceProcessor, SpmNormalizer], text: str) -> None:
    sp, ours_ = pair
    want_text, want_n2o = sp.normalize(text, with_offsets=True)
    got = ours_.normalize(text)
    n2o = [s for s, _ in got.spans] + ([got.spans[-1][1]] if got.spans else [])
    assert got.text == want_text
    if got.text:
        assert n2o == list(want_n2o)


@given(text=st.one_of(TEXT, MARKY, st.text(" \t\n\u3000\u00a0ab\ufb01\u00ad\x0b", max_size=12)))
def test_hyp_spm_normalizer_equals_sentencepiece(spm_pair: tuple[sentencepiece.SentencePieceProcessor, SpmNormalizer], text: str) -> None:
    _spm_check(spm_pair, text)


def test_spm_normalizer_on_corpus(spm_pair: tuple[sentencepiece.SentencePieceProcessor, SpmNormalizer]) -> None:
    for text in build_corpus()[::2]:
        _spm_check(spm_pair, text)


def test_spm_model_shape() -> None:
    m = unigram_model_from_spm(trained_model("spm-unigram-bytes"))
    assert m.flavour == "spm" and m.float32 and m.byte_fallback and not m.fuse_unk
    assert not m.matchable[m.unk_id] and not any(m.matchable[i] for i in m.byte_ids)


def test_malformed_charsmap_is_a_vocabulary_error() -> None:
    with pytest.raises(VocabularyError, match="truncated"):
        CharsMap.parse(b"\x01\x00", "m.model")
    with pytest.raises(VocabularyError, match="trie size"):
        CharsMap.parse(b"\xff\x00\x00\x00abcd", "m.model")


# -- HF's Precompiled normalizer (the sentencepiece charsmap applied HF's way) --------------------

@pytest.fixture(scope="module")
def charsmap_pair() -> tuple[normalizers.Normalizer, CharsMap]:
    blob = load_spm_model(trained_model("spm-unigram")).precompiled_charsmap
    cm = CharsMap.parse(blob, "spm-unigram")
    assert cm is not None
    return normalizers.Precompiled(blob), cm


@given(text=st.one_of(TEXT, MARKY, st.text("\x7f\x0b\r\n \uff21\u0301\ufb01\u2474\u200d\U0001F468a", max_size=10)))
def test_hyp_hf_precompiled_alignment(charsmap_pair: tuple[normalizers.Normalizer, CharsMap], text: str) -> None:
    from tokspec.formats.spm_normalize import hf_precompiled
    hf_norm, cm = charsmap_pair
    a = hf_precompiled(Aligned.of(text), cm)
    assert list(zip(a.text, a.spans)) == hf_alignment(hf_norm, text)


def test_hf_precompiled_on_corpus(charsmap_pair: tuple[normalizers.Normalizer, CharsMap]) -> None:
    from tokspec.formats.spm_normalize import hf_precompiled
    hf_norm, cm = charsmap_pair
    for text in build_corpus()[::2]:
        a = hf_precompiled(Aligned.of(text), cm)
        assert list(zip(a.text, a.spans)) == hf_alignment(hf_norm, text), text[:80]
