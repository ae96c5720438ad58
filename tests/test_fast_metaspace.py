"""The HF ids-only fast path: ``tokspec.fast._metaspace.metaspace_bytes`` and ASCII-free identity checks.

- The kernel (compiled and interpreted) against ``IdentityMetaspace.arrays`` (the numpy version,
  itself checked against the general HF path by ``tests/test_fast_hf_identity.py``) for every
  prepend scheme, split flag and markers of 1, 3 and 4 UTF-8 bytes;
- ``IdentityMetaspace.applies`` on ASCII text (only the checks not marked true on all ASCII text)
  against running every check, and which checks carry the mark;
- ``fast:mon-unigram`` ``encode_ids`` (which takes both) against its ``encode_arrays`` and HF.
"""

from __future__ import annotations

import functools
import string
from typing import Any

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from tokspec import _interpreted, load_engine
from tokspec.fast import _metaspace
from tokspec.fast._hf_identity import IdentityMetaspace, identity_plan
from tokspec.fast.unigram_datrie import DatrieUnigram, datrie_encoder

MARKERS = ["\u2581", "_", "\U0001f642"]
ALPHABET = st.sampled_from(list("ab \u2581_\u00e9\t") + ["\U0001f642", "\u4e2d"])
TEXTS = st.lists(ALPHABET, min_size=1, max_size=16).map("".join)
MON_NORMALIZER = {"type": "Sequence", "normalizers": [
    {"type": "Replace", "pattern": {"Regex": "[\\u00AD\\u200B\\u200C\\u200D\\u2060\\uFEFF]"}, "content": ""},
    {"type": "Replace", "pattern": {"Regex": "\\p{Zs}"}, "content": " "}, {"type": "NFC"}]}


@functools.cache
def plain_kernels() -> Any:
    return _interpreted.interpreted_module(_metaspace)


def kernel_arrays(module: Any, plan: IdentityMetaspace, text: str) -> tuple[bytes, list[int]]:
    raw = np.frombuffer(text.encode("utf-8"), dtype=np.uint8)
    out = np.full(len(plan.marker_bytes) * (len(raw) + 1), 0xEE, dtype=np.uint8)  # exactly the bound
    bounds = np.full(len(raw) + 2, -7, dtype=np.int64)
    k, b = module.metaspace_bytes(raw, plan.marker_bytes, plan.prepend, plan.split, out, bounds)
    return out[:k].tobytes(), bounds[:b].tolist()


@given(TEXTS, st.sampled_from(MARKERS), st.booleans(), st.booleans())
@example(" a b", "\u2581", True, True)      # a leading space becomes the marker: nothing prepended
@example("\u2581a", "\u2581", True, True)   # already starts with the marker
@example("a  b ", "\u2581", False, True)
@example("\U0001f642 x", "\U0001f642", True, False)
@example("_", "_", True, True)
@example("a\u2581", "_", True, True)        # another marker's bytes are plain text
def test_kernel_equals_the_numpy_arrays(text: str, marker: str, prepend: bool, split: bool) -> None:
    plan = IdentityMetaspace([], marker, prepend, split)
    data, bounds, _ = plan.arrays(text, alignment=False)
    want = (data.tobytes(), bounds.tolist())
    assert kernel_arrays(_metaspace, plan, text) == want
    assert kernel_arrays(plain_kernels(), plan, text) == want


def _plan(normalizer: Any) -> IdentityMetaspace:
    plan = identity_plan({"normalizer": normalizer,
                          "pre_tokenizer": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always"}})
    assert plan is not None
    return plan


@pytest.mark.parametrize(("normalizer", "ascii_checks"), [
    (MON_NORMALIZER, 0),
    ({"type": "NFKD"}, 0),
    ({"type": "Replace", "pattern": {"Regex": "[a-c\u00e9]"}, "content": "x"}, 1),   # ASCII in the class
    ({"type": "Replace", "pattern": {"Regex": "[\u00e9x]"}, "content": "x"}, 0),     # only its content
    ({"type": "Replace", "pattern": {"String": "ab"}, "content": "ab"}, 1),          # walked, not one search
    ({"type": "Strip", "strip_left": True, "strip_right": True}, 1),
])
def test_which_checks_are_skipped_on_ascii(normalizer: Any, ascii_checks: int) -> None:
    assert len(_plan(normalizer).ascii_checks) == ascii_checks


@given(st.text(alphabet=string.printable + "\x00\x7f", min_size=1, max_size=20),
       st.sampled_from(range(4)))
@example(" a ", 3)
@example("abc", 1)
def test_applies_on_ascii_equals_every_check(text: str, which: int) -> None:
    normalizer = [MON_NORMALIZER, {"type": "Replace", "pattern": {"Regex": "[a-c]"}, "content": "x"},
                  {"type": "Sequence", "normalizers": [{"type": "NFC"}, {"type": "Replace", "pattern":
                   {"Regex": "\\p{Zs}"}, "content": " "}]},
                  {"type": "Strip", "strip_left": True, "strip_right": False}][which]
    plan = _plan(normalizer)
    assert plan.applies(text) == all(check(text) for check in plan.checks)


@functools.cache
def mon() -> DatrieUnigram:
    return datrie_encoder("mon-unigram")


@pytest.mark.parametrize("text", [
    "hello world", " lead", "\u2581marker first", "Сайн байна уу, найз минь", "tab\tand  two", "x",
    "non\u00a0breaking", "soft\u00adhyphen", "e\u0301 composed?", "\u4e2d\u6587 \U0001f642", "a" * 300,
    " " * 7, "\u2581" * 3, "  \u2581 ",  # the output bound: every byte a marker
])
def test_mon_unigram_ids_equal_encode_arrays_and_hf(text: str) -> None:
    library = load_engine("hf:mon-unigram").library_tokenizer  # type: ignore[attr-defined]
    ids = mon().encode_ids(text)
    assert ids.dtype == np.int64
    assert ids.tolist() == mon().encode_arrays(text).ids.tolist() == library.encode(text, add_special_tokens=False).ids
