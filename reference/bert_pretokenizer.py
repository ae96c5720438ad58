"""The BERT pretokenizer (HF ``BertPreTokenizer``): split on whitespace (removed) and on
punctuation (each punctuation character its own pretoken).

Punctuation is HF's definition: ASCII punctuation (``char::is_ascii_punctuation``, which includes
symbols such as ``$+<=>^`|~``) or a Unicode punctuation category P*, by HF's (older) Unicode tables
(``tokspec._hf_unicode.PUNCT_EXTRA`` / ``PUNCT_MISSING``). Whitespace is Rust's
``char::is_whitespace`` (the White_Space property).

Out of scope: other HF pretokenizers.
"""

from __future__ import annotations

import string
import unicodedata

from tokspec import _hf_unicode as hfu
from tokspec.formats.normalize import Aligned, is_rust_whitespace

__all__ = ["is_bert_punctuation", "bert_pretokenize"]


def is_bert_punctuation(c: str) -> bool:
    """HF ``is_bert_punc``: ASCII punctuation or Unicode P* (HF's tables)."""
    if c in string.punctuation:
        return True
    cp = ord(c)
    if hfu.in_ranges(cp, hfu.PUNCT_EXTRA):
        return True
    return unicodedata.category(c).startswith("P") and not hfu.in_ranges(cp, hfu.PUNCT_MISSING)


def bert_pretokenize(a: Aligned) -> list[Aligned]:
    """Pretokens of a normalized string: maximal runs of non-space, non-punctuation characters,
    and single punctuation characters, in order. O(n)."""
    out: list[Aligned] = []
    start: int | None = None          # start of the current word run
    for i, c in enumerate(a.text):
        if is_rust_whitespace(c) or is_bert_punctuation(c):
            if start is not None:
                out.append(a.slice(start, i))
                start = None
            if not is_rust_whitespace(c):
                out.append(a.slice(i, i + 1))
        elif start is None:
            start = i
    if start is not None:
        out.append(a.slice(start, len(a.text)))
    return out
