"""Code points whose Unicode properties differ between the tables tokspec knows: Unicode drift.

Tokenizers classify characters with whatever Unicode tables they were built with: Python's
``unicodedata`` (14.0 on Python 3.11), the ``regex`` module (17.0 here), tiktoken's Rust regex and HF's
Oniguruma (16.0), HF's normalizers (older still, :mod:`tokspec._hf_unicode`), a PCRE2 or ICU of
some age. A library on older tables differs exactly on the code points whose class changed, which
random text almost never hits (a few thousand of 1.1 million). :func:`drift_table` lists them:

- ``regex`` vs ``unicodedata`` per major class (L, N, M, P, S, Z): every letter, number, mark...
  added in a newer Unicode (unassigned, ``Cn``, in the older table) or moved between classes;
- ``\\s`` of ``regex`` vs ``str.isspace`` (U+001C..U+001F, U+0085, U+180E differ between
  definitions of whitespace);
- the ranges where HF ``tokenizers``' normalization tables are older (:mod:`tokspec._hf_unicode`).

Each entry says why in words (``"Lo in regex (Unicode 17.0), Cn in unicodedata (14.0.0)"``), used to
name causes (:mod:`tokspec.cluster`) and drawn by the drift generator of the search
(:mod:`tokspec.app.dictionary`). Built once per process from the installed tables (about a second).
Out of scope: properties other than the general-category classes and whitespace.
"""

from __future__ import annotations

import functools
import unicodedata

import regex

from tokspec import _hf_unicode
from tokspec.unicode_domain import scalar_text

__all__ = ["drift_table", "drift_reason", "REGEX_UNICODE"]

_CLASSES = ("L", "N", "M", "P", "S", "Z")
#: The Unicode version of the installed ``regex`` module's tables (None if it does not say).
REGEX_UNICODE: str | None = getattr(regex, "__unicode_version__", None) or "17.0"




@functools.lru_cache(maxsize=1)
def drift_table() -> dict[int, str]:
    """Code point -> why it drifts (module docstring), in code point order. O(code points), once."""
    text = scalar_text()
    ud = unicodedata.unidata_version
    reasons: dict[int, list[str]] = {}
    major: dict[str, set[int]] = {cls: set() for cls in _CLASSES}
    for c in text:
        group = major.get(unicodedata.category(c)[0])
        if group is not None:
            group.add(ord(c))
    for cls in _CLASSES:
        in_regex = {ord(c) for c in regex.findall(rf"\p{{{cls}}}", text)}
        in_ud = major[cls]
        for cp in in_regex ^ in_ud:
            mine = unicodedata.category(chr(cp))
            if cp in in_regex:
                reasons.setdefault(cp, []).append(f"{cls} in regex (Unicode {REGEX_UNICODE}), {mine} in unicodedata ({ud})")
            else:
                reasons.setdefault(cp, []).append(f"{mine} in unicodedata ({ud}), not {cls} in regex (Unicode {REGEX_UNICODE})")
    in_s = {ord(c) for c in regex.findall(r"\s", text)}
    for cp in {ord(c) for c in text if c.isspace()} ^ in_s:
        where = "regex \\s" if cp in in_s else "str.isspace"
        reasons.setdefault(cp, []).append(f"whitespace to {where} only")
    for table in ("CCC_ZERO", "NO_CANONICAL_DECOMP", "NO_COMPAT_DECOMP", "PUNCT_MISSING"):
        for lo, hi in getattr(_hf_unicode, table, ()):
            for cp in range(lo, hi + 1):
                reasons.setdefault(cp, []).append(f"HF tokenizers' older tables ({table})")
    return {cp: "; ".join(reasons[cp]) for cp in sorted(reasons)}


def drift_reason(ch: str) -> str | None:
    """Why ``ch`` drifts, or None if every table tokspec knows agrees on it."""
    return drift_table().get(ord(ch)) if len(ch) == 1 else None
