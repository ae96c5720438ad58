"""``tokspec.fast._hf_identity``: on text an HF Unigram normalizer leaves unchanged, the Metaspace
arrays equal what the general path (``tokspec.formats.hf_pipeline`` + ``_alignment_arrays``) gives, for
every prepend scheme, split on and off, and each kind of identity check; elsewhere the plan does
not apply, and pipelines it cannot shortcut get no plan. Fast in interpreted mode (a mutation
killer); ``fast:mon-unigram`` against ``hf:`` on its corpus and 1 MB is in
tests/test_fast_unigram_datrie.py."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import regex
from hypothesis import example, given
from hypothesis import strategies as st

from tokspec import load_engine
from tokspec.fast._hf_identity import IdentityMetaspace, _replace_is_identity, _starts_of, identity_plan
from tokspec.fast.unigram_datrie import _alignment_arrays
from tokspec.formats.hf_pipeline import _normalizer, hf_pipeline
from tokspec.formats.normalize import Aligned
from tokspec.formats.vocab import TokenizerJson

MON_NORMALIZER = {"type": "Sequence", "normalizers": [
    {"type": "Replace", "pattern": {"Regex": "[\\u00AD\\u200B\\u200C\\u200D\\u2060\\uFEFF]"}, "content": ""},
    {"type": "Replace", "pattern": {"Regex": "\\p{Zs}"}, "content": " "}, {"type": "NFC"}]}
NORMALIZERS: list[Any] = [
    None, MON_NORMALIZER, {"type": "NFKC"}, {"type": "NFD"},
    {"type": "Strip", "strip_left": True, "strip_right": False},
    {"type": "Strip", "strip_left": False, "strip_right": True},
    {"type": "Sequence", "normalizers": [{"type": "Strip", "strip_left": True, "strip_right": True},
                                         {"type": "Replace", "pattern": {"String": "ab"}, "content": "ab"}]},
]
ALPHABET = st.sampled_from(list("ab \u2581\u00e9\u00a0\u200b\t\u00ad\u3000x") + ["e\u0301", "\ufb01", "\U0001f642"])
TEXTS = st.lists(ALPHABET, min_size=1, max_size=14).map("".join)


def _json(normalizer: Any, scheme: str | None = "always", split: bool = True, **extra: Any) -> dict[str, Any]:
    pre: dict[str, Any] = {"type": "Metaspace", "replacement": "\u2581", "split": split, **extra}
    if scheme is not None:
        pre["prepend_scheme"] = scheme
    return {"normalizer": normalizer, "pre_tokenizer": pre}


def _general(data: dict[str, Any], text: str) -> tuple[np.ndarray, np.ndarray, tuple[np.ndarray, ...]]:
    """What the engine computes without a plan (unigram_datrie.normalized's general path)."""
    pres = [p for p in hf_pipeline(TokenizerJson("t.json", "0" * 64, data))(text) if p.text]
    encoded = [p.text.encode("utf-8") for p in pres]
    bounds = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(b) for b in encoded], out=bounds[1:])
    return np.frombuffer(b"".join(encoded), dtype=np.uint8), bounds, _alignment_arrays(pres)


@given(TEXTS, st.sampled_from(range(len(NORMALIZERS))), st.sampled_from(["always", "first", "never"]),
       st.booleans())
@example("a b", 1, "always", True)
@example("\u2581a", 0, "always", True)   # already starts with the marker: nothing prepended
@example(" a", 0, "first", True)
@example("a  b", 0, "never", False)
@example("\U0001f642 \u00e9", 2, "always", True)
@example("xab", 6, "always", True)  # "ab" -> "ab": same text, moved spans: the general path
def test_plan_equals_the_general_path_wherever_it_applies(text: str, which: int, scheme: str, split: bool) -> None:
    data = _json(NORMALIZERS[which], scheme, split)
    plan = identity_plan(data)
    assert isinstance(plan, IdentityMetaspace)
    general = _general(data, text)
    # identity: the same characters, each aligned to itself (a two-character match replaced by
    # itself keeps the text but moves HF's spans: not the identity)
    identity = _normalizer(NORMALIZERS[which], "t.json")(Aligned.of(text)) == Aligned.of(text)
    assert plan.applies(text) == identity  # the checks are exact on this alphabet
    if not plan.applies(text):
        return
    got = plan.arrays(text)
    assert got[0].tobytes() == general[0].tobytes()
    assert got[1].tolist() == general[1].tolist()
    assert [a.tolist() for a in got[2]] == [a.tolist() for a in general[2]]
    bare = plan.arrays(text, alignment=False)  # ids only: the same bytes and bounds, no alignment
    assert bare[0].tobytes() == got[0].tobytes() and bare[1].tolist() == got[1].tolist()
    assert [len(a) for a in bare[2]] == [0, 0, 0, 0]


def test_old_add_prefix_space_files_and_their_default() -> None:
    for extra, prepend in (({"add_prefix_space": True}, True), ({"add_prefix_space": False}, False), ({}, True)):
        plan = identity_plan(_json(None, None, True, **extra))
        assert plan is not None and plan.prepend is prepend
        assert plan.arrays("a")[0].tobytes() == ("\u2581a" if prepend else "a").encode("utf-8")


@pytest.mark.parametrize("data", [
    _json({"type": "Lowercase"}),
    _json({"type": "Prepend", "prepend": "\u2581"}),
    _json({"type": "Precompiled", "precompiled_charsmap": ""}),
    _json({"type": "Sequence", "normalizers": [{"type": "NFC"}, {"type": "Lowercase"}]}),
    _json({"type": "Replace", "pattern": {"Other": "x"}, "content": ""}),
    _json(None, "sometimes"),
    {"normalizer": None, "pre_tokenizer": {"type": "Metaspace", "replacement": "__", "prepend_scheme": "always"}},
    {"normalizer": None, "pre_tokenizer": {"type": "WhitespaceSplit"}},
    {"normalizer": None, "pre_tokenizer": None},
    {"normalizer": None, "pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "Metaspace"}]}},
])
def test_pipelines_without_a_plan(data: dict[str, Any]) -> None:
    assert identity_plan(data) is None


def test_empty_text_and_each_check_refuse() -> None:
    plan = identity_plan(_json(NORMALIZERS[6]))
    assert plan is not None
    assert not plan.applies("") and plan.applies("a b") and not plan.applies(" a") and not plan.applies("a\u3000")
    mon = identity_plan(_json(MON_NORMALIZER))
    assert mon is not None and mon.applies("a b") and not mon.applies("a\u00a0b") and not mon.applies("a\u200bb")
    assert not mon.applies("e\u0301") and mon.applies("\u00e9")
    assert identity_plan(_json({"type": "NFKC"})).applies("\u00e9") is True  # type: ignore[union-attr]
    assert identity_plan(_json({"type": "NFKC"})).applies("\ufb01") is False  # type: ignore[union-attr]


def test_marker_starts_are_whole_characters() -> None:
    marker = np.frombuffer("\u2581".encode(), dtype=np.uint8)
    data = np.frombuffer("\u2581a\u2581\u2581b\u2582".encode(), dtype=np.uint8)
    assert _starts_of(data, marker).tolist() == [0, 4, 7]
    assert _starts_of(np.frombuffer(b"ab", dtype=np.uint8), marker).tolist() == []
    assert _starts_of(np.frombuffer("\u2581".encode(), dtype=np.uint8), marker).tolist() == [0]


def test_mon_unigram_takes_the_plan_and_equals_hf() -> None:
    fast, hf = load_engine("fast:mon-unigram"), load_engine("hf:mon-unigram")
    assert fast._identity is not None  # type: ignore[attr-defined]
    for text in ("Монгол улс бол Зүүн Хойд Азид", "a  b ", " x", "\u2581y z", "a\u00a0b\u200bc"):
        assert fast.encode(text) == hf.encode(text), text
        assert fast.encode_ids(text).tolist() == list(hf.encode(text).ids)  # type: ignore[attr-defined]


@given(TEXTS, st.sampled_from([(r"\p{Zs}", " "), (r"\p{Zs}", ""), (r"[\u00AD\u200B]", ""), (r"[ab]", "a"),
                               (r"[^ab]", " "), (r"[\]x]", "x"), (r" +", " "), (r"\P{L}", "b"), (r"[ab]", "ab")]))
@example("a b\u00a0", (r"\p{Zs}", " "))
@example("xa", (r"[ab]", "a"))
@example("]", (r"[\]x]", "x"))
def test_replace_identity_check_by_class_equals_the_walk(text: str, rule: tuple[str, str]) -> None:
    """The one-search check of a one-character class equals walking every match."""
    pattern, content = regex.compile(rule[0]), rule[1]
    walked = all(m.end() - m.start() == 1 and m.group() == content
                 for m in pattern.finditer(text) if m.end() > m.start())
    assert _replace_is_identity(pattern, content)(text) == walked


@pytest.mark.parametrize("source, content, one_search", [
    (r"\p{Zs}", " ", True), (r"[\u00AD\u200B]", "", True), (r"\P{L}", "", True), (r"[^ab]", "x", True),
    (r" +", " ", False), (r"[ab]", "ab", False), (r"[--a]", "x", False), (r"[a&&b]", "x", False),
    (r"[a||b]", "x", False), (r"[a~~b]", "x", False), (r"\p{Zs}\p{Zs}", " ", False), (r"[[a]]", "a", False),
])
def test_which_replace_checks_take_one_search(source: str, content: str, one_search: bool) -> None:
    """One C-level search (the per-call cost the module promises) exactly for one-character
    classes without V1 set operators and a content of at most one character."""
    check = _replace_is_identity(regex.compile(source), content)
    assert (check.__name__ == "one_search") is one_search
