"""The BERT normalizer's and pretokenizer's character classes where HF's tables depart from the
obvious definition (punctuation HF adds or lacks, the CJK range HF leaves out, the edges of every
CJK range), against HF ``tokenizers`` itself: a fast stand-in for the every-code-point test, which
the mutation run leaves out for its length."""

from __future__ import annotations

import string
import unicodedata

from tokenizers import normalizers, pre_tokenizers

from tokspec import _hf_unicode as hfu
from tokspec.formats.normalize import Aligned
from tokspec.reference.bert_normalizer import BertNormalizerConfig, bert_normalize, is_cjk_ideograph
from tokspec.reference.bert_pretokenizer import bert_pretokenize, is_bert_punctuation


def _edges(ranges: tuple[tuple[int, int], ...]) -> list[int]:
    return sorted({cp for lo, hi in ranges for cp in (lo - 1, lo, hi, hi + 1)})


def _punctuation_probes() -> list[str]:
    cps = set(_edges(hfu.PUNCT_EXTRA)) | set(_edges(hfu.PUNCT_MISSING)) | {ord(c) for c in string.printable}
    cps |= {0xA1, 0xBF, 0x2010, 0x3001, 0xFF01, 0x1F600, 0xD7, 0x5F, 0x2E42}  # P*, S*, Pc samples
    return [chr(cp) for cp in sorted(cps) if not 0xD800 <= cp < 0xE000]


def test_bert_punctuation_equals_hf_on_the_table_edges() -> None:
    hf = pre_tokenizers.BertPreTokenizer()
    for c in _punctuation_probes():
        text = f"x{c}y"
        want = [(p, tuple(o)) for p, o in hf.pre_tokenize_str(text)]
        got = [(a.text, a.original_span(0, len(a.text))) for a in bert_pretokenize(Aligned.of(text))]
        assert got == want, hex(ord(c))
        if not c.isspace() and c not in "xy":
            assert is_bert_punctuation(c) == (len(want) == 3), hex(ord(c))
    assert all(is_bert_punctuation(chr(cp)) for lo, hi in hfu.PUNCT_EXTRA for cp in range(lo, hi + 1))
    assert not any(is_bert_punctuation(chr(cp)) for lo, hi in hfu.PUNCT_MISSING for cp in range(lo, hi + 1))
    assert unicodedata.category("\u166d").startswith("S") and unicodedata.category("\u061d") == "Po"


def test_cjk_spacing_equals_hf_on_every_range_edge() -> None:
    hf = normalizers.BertNormalizer(clean_text=False, handle_chinese_chars=True, strip_accents=False,
                                    lowercase=False)
    config = BertNormalizerConfig(clean_text=False, handle_chinese_chars=True, strip_accents=False, lowercase=False)
    for cp in _edges(hfu.BERT_CJK) + _edges(hfu.BERT_CJK_HF_MISSING):
        text = f"a{chr(cp)}b"
        assert bert_normalize(text, config).text == hf.normalize_str(text), hex(cp)
        in_bert = hfu.in_ranges(cp, hfu.BERT_CJK)
        assert is_cjk_ideograph(chr(cp), "bert") == in_bert, hex(cp)
        assert is_cjk_ideograph(chr(cp)) == (in_bert and not hfu.in_ranges(cp, hfu.BERT_CJK_HF_MISSING)), hex(cp)
    assert bert_normalize("a\U0002b820b", BertNormalizerConfig(cjk_ranges="bert")).text == "a \U0002b820 b"
