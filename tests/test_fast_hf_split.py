"""Compiled HF ``Split``, ``Whitespace`` and ``WhitespaceSplit`` pretokenizers (``tokspec.fast._hf_pretok_split``,
planned by ``tokspec.fast._hf_split_plan``): the arrays equal the general path
(``tokspec.formats.hf_pipeline`` with ``tokspec.formats.hf_split``, the oracle) for every kind of step,
behavior, ``invert`` and final ``Metaspace``; the character classes equal HF ``tokenizers``' own
(probed code point by code point: every one in the ``slow`` tests); Unigram models trained offline
with these pretokenizers run compiled from text to ids and equal HF (ids, library offsets) and
``reference:`` (ids, contract offsets); what cannot be compiled exactly has no plan. Fast in
interpreted mode (a mutation killer); the 1 MB text and the full probes are behind ``slow``."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from tokspec._unicode16 import UNICODE17_CHANGED, UNICODE17_NEW
from tokspec.app.bench.normalizing import normalizing_texts
from tokspec.fast import _hf_pretok_split as kernels
from tokspec.fast._hf_compiled import CompiledPipeline, compiled_plan
from tokspec.fast._hf_split_plan import split_plan
from tokspec.formats.hf_split import apply_behavior

from _hf_unigram_checks import assert_compiled_equals_reference_and_hf
from test_fast_hf_norm import _general

BEHAVIORS = ["Isolated", "Removed", "MergedWithPrevious", "MergedWithNext", "Contiguous"]
MS = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True}


def _split(pattern: str, behavior: str, invert: bool = False, string: bool = False) -> dict[str, Any]:
    return {"type": "Split", "pattern": {"String" if string else "Regex": pattern}, "behavior": behavior,
            "invert": invert}


def _seq(*steps: Any) -> dict[str, Any]:
    return {"type": "Sequence", "pretokenizers": list(steps)}


#: (pattern, is a String) of the Split steps the properties draw from: literals that overlap
#: themselves, one class alone, runs of one class, a bracket class of a property and an escape.
PATTERNS = [(" ", True), ("ab", True), ("aa", True), ("\\p{N}+", False), ("[\\p{P}\\s]", False),
            ("\\s{2,}", False), ("a", False), ("\\w+", False), ("\\d", False)]
PRES: list[Any] = [
    {"type": "Whitespace"}, {"type": "WhitespaceSplit"}, None,
    _seq({"type": "Whitespace"}, MS),
    _seq({"type": "WhitespaceSplit"}, {**MS, "prepend_scheme": "first"}),
    _seq({**MS, "prepend_scheme": "never", "split": False}),
    _seq(_split("\\d", "Isolated"), _split("-", "MergedWithNext", True, True),
         {**MS, "prepend_scheme": "first", "split": False}),
    _seq(_seq({"type": "Whitespace"}), _split("\\p{P}", "Removed"), {**MS, "prepend_scheme": "never"}),
    _seq(_split("\\d", "Isolated"), {"type": "Whitespace"}, MS),  # Whitespace on many pieces; its bits not 0, 1
]
NORMALIZERS: list[Any] = [None, {"type": "NFKC"}, {"type": "Strip"},  # Strip: the first piece starts past 0
                          {"type": "Sequence", "normalizers": [{"type": "Replace", "pattern": {"String": "x"},
                                                                "content": "  "}, {"type": "NFD"}]}]
PIECES = list("aab  -1.\u3000\u2581e\u0301\u00a0\t\u0660xY,_\u00b2\u0903") + ["\U0001f642", "aaa", "  ", "\u07fd"]
TEXTS = st.lists(st.sampled_from(PIECES), min_size=0, max_size=14).map("".join)


@functools.lru_cache(maxsize=None)
def _plan(data_json: str) -> CompiledPipeline:
    plan = compiled_plan(json.loads(data_json))
    assert plan is not None and plan.splits is not None, data_json
    return plan


def _compiled(data: dict[str, Any], text: str) -> tuple[bytes, list[int], list[list[int]]]:
    """The plan's arrays; without alignment (ids only) the same bytes and bounds, no alignment."""
    plan = _plan(json.dumps(data, sort_keys=True))
    out, bounds, aligned = plan.arrays(text)
    bare, bare_bounds, none = plan.arrays(text, alignment=False)
    assert (bare.tobytes(), bare_bounds.tolist(), [len(a) for a in none]) == (out.tobytes(), bounds.tolist(), [0] * 4)
    return out.tobytes(), bounds.tolist(), [a.tolist() for a in aligned if len(a)]


@given(TEXTS, st.sampled_from(PATTERNS), st.sampled_from(BEHAVIORS), st.booleans(),
       st.sampled_from(range(len(NORMALIZERS))), st.sampled_from([None, "always", "first"]))
@example("aaab aa", ("aa", True), "MergedWithNext", False, 0, None)  # overlapping candidates, left to right
@example("1--2 x", ("[\\p{P}\\s]", False), "Contiguous", False, 0, None)  # a first delimiter run alone
@example("  a   b", ("\\s{2,}", False), "MergedWithPrevious", True, 2, "first")
@example(" x a", ("a", False), "Isolated", False, 3, "first")  # Replace: spans past 0 for the first piece
def test_hyp_split_equals_general(text: str, pattern: tuple[str, bool], behavior: str, invert: bool,
                                  norm: int, scheme: str | None) -> None:
    step = _split(pattern[0], behavior, invert, pattern[1])
    pre = step if scheme is None else _seq(step, {**MS, "prepend_scheme": scheme})
    data = {"normalizer": NORMALIZERS[norm], "pre_tokenizer": pre}
    assert _compiled(data, text) == _general(data, text)


@given(TEXTS, st.sampled_from(range(len(PRES))), st.sampled_from(range(len(NORMALIZERS))))
@example("a_b\u00b2 \u0903-,,x", 0, 0)  # word characters (Pc, No, Mc), a run of others
@example("\u2581 a", 3, 0)  # a marker already in the piece: no second one in front
@example("", 1, 0)
@example("   ", 4, 2)  # nothing left: no pretoken
@example("\x7f\x80 \u07ff\u0800\uffff\U00010000\U00100000\U0010ffff", 2, 0)  # every UTF-8 length boundary
@example("ab1cd e2,f 3", 8, 0)
def test_hyp_pretokenizers_equal_general(text: str, pre: int, norm: int) -> None:
    data = {"normalizer": NORMALIZERS[norm], "pre_tokenizer": PRES[pre]}
    assert _compiled(data, text) == _general(data, text)


def test_behaviors_cut_like_the_oracle() -> None:
    """``_cut`` on every run pattern of a short piece equals ``apply_behavior`` (and HF's fold)."""
    ms, me = np.array([1, 2, 5, 7], dtype=np.int64), np.array([2, 4, 6, 8], dtype=np.int64)
    buf = [np.empty(20, np.int64), np.empty(20, np.int64), np.empty(20, np.bool_)]
    for code, behavior in enumerate(BEHAVIORS):
        for invert in (False, True):
            for n in range(5):
                out_s, out_e = np.full(20, -9, np.int64), np.full(20, -9, np.int64)
                out_s[0], out_e[0] = 100, 101  # an earlier piece: never joined
                k = kernels._cut(0, 9, ms, me, n, code, invert, *buf, out_s, out_e, 1)
                runs, pos = [], 0
                for s, e in zip(ms[:n].tolist(), me[:n].tolist()):
                    runs += [(pos, s, invert)] if s > pos else []
                    runs.append((s, e, not invert))
                    pos = e
                runs += [(pos, 9, invert)] if pos < 9 else []
                want = [(100, 101), *[p for p in apply_behavior(runs, behavior) if p[0] < p[1]]]
                assert list(zip(out_s[:k].tolist(), out_e[:k].tolist())) == want, (behavior, invert, n)


def test_matches_of_each_kind() -> None:
    cp = np.array([ord(c) for c in "aa b,-aaa_"], dtype=np.int64)
    bits = np.zeros(0x110000, np.uint8)
    bits[[ord("a"), ord("b"), ord("_")]] |= 1  # class 0: word
    bits[ord(" ")] |= 2  # class 1: space
    ms, me = np.empty(12, np.int64), np.empty(12, np.int64)
    strs = np.array([ord("a"), ord("a")], dtype=np.int64)

    def spans(row: tuple[int, ...], s: int = 0, e: int = len(cp)) -> list[tuple[int, int]]:
        n = kernels._matches(cp, bits, s, e, np.array(row, dtype=np.int64), strs, ms, me)
        return list(zip(ms[:n].tolist(), me[:n].tolist()))

    assert spans((kernels.WORDS, 0, 1, 0, 0)) == [(0, 2), (3, 4), (4, 6), (6, 10)]
    assert spans((kernels.CLASS, 0, 0, 0, 0)) == [(0, 1), (1, 2), (3, 4), (6, 7), (7, 8), (8, 9), (9, 10)]
    assert spans((kernels.CLASS, 0, 1, 0, 0)) == [(0, 2), (3, 4), (6, 10)]
    assert spans((kernels.CLASS, 0, 3, 0, 0)) == [(6, 10)] and spans((kernels.CLASS, 0, 5, 0, 0)) == []
    assert spans((kernels.CLASS, 1, 1, 0, 0)) == [(2, 3)]
    assert spans((kernels.STRING, 0, 2, 0, 0)) == [(0, 2), (6, 8)]
    assert spans((kernels.STRING, 0, 2, 0, 0), 8, 10) == []
    assert spans((kernels.STRING, 0, 1, 0, 0), 7, 9) == [(7, 8), (8, 9)]
    assert spans((kernels.CLASS, 0, 1, 0, 0), 1, 7) == [(1, 2), (3, 4), (6, 7)]  # runs stop at the piece
    strs = np.array([ord("-"), ord("a"), ord("_")], dtype=np.int64)  # a literal not at offset 0
    assert spans((kernels.STRING, 1, 2, 0, 0)) == [(8, 10)]


def test_split_plan_arrays_direct() -> None:
    """``SplitPlan.arrays`` on a state: with alignment by default, none (empty arrays) without."""
    plan = split_plan(_seq({"type": "WhitespaceSplit"}, MS))
    assert plan is not None
    cp = np.array([ord(c) for c in "ab c"], dtype=np.int64)
    ss = np.arange(4, dtype=np.int64)
    state = (cp, ss, ss + 1, ss, ss + 1)
    data, bounds, *aligned = plan.arrays(state)
    assert data.tobytes() == "\u2581ab\u2581c".encode() and bounds.tolist() == [0, 5, 9]
    assert [a.tolist() for a in aligned] == [[0, 0, 1, 3, 3], [0, 1, 2, 3, 4], [0, 0, 1, 3, 3], [1, 1, 2, 4, 4]]
    assert all(a.dtype == np.int64 for a in aligned)
    data2, bounds2, *none = plan.arrays(state, alignment=False)
    assert data2.tobytes() == data.tobytes() and bounds2.tolist() == [0, 5, 9] and [len(a) for a in none] == [0] * 4
    root = split_plan(_seq({**MS, "prepend_scheme": "first"}))  # no split: the root gets its marker
    assert root is not None and len(root.rows) == 0
    moved = (cp, ss + 2, ss + 3, ss + 2, ss + 3)  # normalization deleted two leading characters
    assert root.arrays(moved)[0].tobytes() == "\u2581ab\u2581c".encode()
    assert split_plan(_seq({"type": "WhitespaceSplit"}, {**MS, "prepend_scheme": "first"})).arrays(
        moved)[0].tobytes() == "abc".encode()  # a split piece starting past 0 gets none


@pytest.mark.parametrize("pre", [
    _split("a|b", "Isolated"), _split("a*", "Isolated"), _split(".", "Isolated"), _split("\\p{Han}", "Isolated"),
    _split("[[a]b]", "Isolated"), _split("\\p{L}{2,3}", "Isolated"), _split("", "Isolated", string=True),
    _split("a", "Bogus"), _split("(?i)a", "Isolated"), _split("[a--b]", "Isolated"), _split("\\h", "Isolated"),
    _seq(MS, {"type": "Whitespace"}), {"type": "BertPreTokenizer"}, {"type": "Metaspace", "replacement": "ab"},
    _seq({"type": "Whitespace"}, {**MS, "prepend_scheme": "sometimes"}), "Whitespace",
    _split("[a&&b]", "Isolated"), _split("[a||b]", "Isolated"), _split("[a~~b]", "Isolated"),
    {"type": "Split", "behavior": "Isolated"},  # no pattern at all
    {"type": "Split", "pattern": {}, "behavior": "Isolated"}, _seq({"type": "Whitespace"}, "x"),
])
def test_not_compilable_has_no_plan(pre: Any) -> None:
    assert split_plan(pre) is None
    assert compiled_plan({"normalizer": None, "pre_tokenizer": pre}) is None


def test_plan_limits_and_kernels() -> None:
    """At most 8 distinct classes; an empty Sequence is the root alone; the kernels module is kept."""
    eight = [_split(c, "Isolated") for c in "abcdefgh"]
    assert split_plan(_seq(*eight)) is not None and split_plan(_seq(*eight, _split("i", "Isolated"))) is None
    assert split_plan(_seq(*eight, _split("a+", "Isolated"))) is not None  # a class seen before: no new bit
    empty = split_plan({"type": "Sequence"})
    assert empty is not None and len(empty.rows) == 0 and not empty.metaspace and empty.strs.dtype == np.int64
    sentinel: Any = object()
    assert split_plan({"type": "Whitespace"}, sentinel).kernels is sentinel


def test_plan_rows() -> None:
    plan = split_plan(_seq({"type": "Whitespace"}, _split("\\p{N}{3,}", "Contiguous", True),
                           _split("ab", "MergedWithPrevious", string=True), _split("\\w+", "Removed"), MS))
    assert plan is not None and plan.metaspace and plan.prepend == 1 and plan.split and plan.marker == 0x2581
    assert plan.rows.tolist() == [[kernels.WORDS, 0, 1, 0, 0], [kernels.CLASS, 2, 3, kernels.CONTIGUOUS, 1],
                                  [kernels.STRING, 0, 2, kernels.MERGED_WITH_PREVIOUS, 0],
                                  [kernels.CLASS, 3, 1, kernels.REMOVED, 0]]  # Oniguruma's \w: not Whitespace's
    assert plan.strs.tolist() == [ord("a"), ord("b")]
    assert plan.bits[ord("x")] == 9 and plan.bits[ord(" ")] == 2 and plan.bits[ord("7")] == 13
    assert plan.bits[0x0660] == 13  # Arabic-Indic zero: Nd
    assert plan.bits[0x00b2] == 12 and plan.bits[0x200d] == 1  # finding hf-onig-word-class
    old = split_plan({**MS, "prepend_scheme": None, "add_prefix_space": False, "split": False})
    assert old is not None and (old.prepend, old.split, len(old.rows)) == (0, False, 0)
    bare = split_plan(_seq({"type": "Split", "pattern": {"Regex": "\\d"}, "behavior": "Isolated"},  # no invert key
                           _split("ab", "Removed", string=True), _split("cd", "Removed", string=True),
                           {"type": "Metaspace"}))  # no replacement, no prepend_scheme, no add_prefix_space
    assert bare is not None and bare.rows[:, [2, 4]].tolist() == [[0, 0], [2, 0], [2, 0]]  # one digit, one match
    assert bare.strs.tolist() == [ord(c) for c in "abcd"] and bare.rows[2, 1] == 2
    assert (bare.marker, bare.prepend, bare.split) == (0x2581, 1, True)
    first = split_plan(_seq({"type": "WhitespaceSplit"}, {**MS, "prepend_scheme": "first", "replacement": "_"}))
    assert first is not None and (first.prepend, first.marker) == (2, ord("_"))
    assert first.bits[0x3000] == first.bits[0x85] == 1 and first.bits[0x200b] == 0  # White_Space, not ZWSP


# ---- the character classes against HF tokenizers' own ----------------------------------------------
def _sample() -> list[int]:
    """Every 97th code point, the ASCII and Latin-1 ones, and those Unicode 17.0 added or changed."""
    extra = [cp for lo, hi in UNICODE17_NEW for cp in range(lo, hi + 1)] + list(UNICODE17_CHANGED)
    return sorted({*range(0x100), *range(0, 0xD800, 97), *range(0xE000, 0x110000, 97), *extra})


def _all() -> list[int]:
    return [*range(0xD800), *range(0xE000, 0x110000)]


def _hf_in_class(source: str, cps: list[int]) -> np.ndarray:
    """Which of ``cps`` HF's ``Split(Regex(source), "removed")`` removes (one call on all of them)."""
    tokenizers = pytest.importorskip("tokenizers")
    split = tokenizers.pre_tokenizers.Split(tokenizers.Regex(source), "removed")
    kept = np.zeros(len(cps), dtype=np.bool_)
    for _, (s, e) in split.pre_tokenize_str("".join(map(chr, cps))):  # offsets in characters
        kept[s:e] = True
    return ~kept


def _hf_whitespace_classes(cps: list[int]) -> np.ndarray:
    """Per code point c, how HF's ``Whitespace`` treats it after ``a``: 0 word, 1 space, 2 other."""
    tokenizers = pytest.importorskip("tokenizers")
    pieces = tokenizers.pre_tokenizers.Whitespace().pre_tokenize_str("".join("a" + chr(c) + " " for c in cps))
    out = np.ones(len(cps), dtype=np.int64)  # space: only "a" is left
    for _, (s, e) in pieces:
        i, r = divmod(s, 3)
        if r == 0 and e - s == 2:
            out[i] = 0  # "a" and c are one word
        elif r == 1:
            out[i] = 2  # c is a piece of its own
    return out


def _hf_whitespace_split_white(cps: list[int]) -> np.ndarray:
    """Which of ``cps`` HF's ``WhitespaceSplit`` cuts at (after ``a``, the piece is ``a`` alone)."""
    tokenizers = pytest.importorskip("tokenizers")
    pieces = tokenizers.pre_tokenizers.WhitespaceSplit().pre_tokenize_str("".join("a" + chr(c) + " " for c in cps))
    white = np.ones(len(cps), dtype=np.bool_)
    for _, (s, e) in pieces:
        if s % 3 == 0 and e - s == 2:
            white[s // 3] = False
    return white


def _check_classes(cps: list[int]) -> None:
    sources = ("\\w", "\\d", "\\p{P}", "\\p{L}", "[\\p{N}\\p{Zs}]")
    plan = split_plan(_seq({"type": "Whitespace"}, {"type": "WhitespaceSplit"},
                           *[_split(source, "Isolated") for source in sources]))
    assert plan is not None
    bits = plan.bits[np.array(cps)]
    word, space = (bits & 1) != 0, (bits & 2) != 0
    assert np.array_equal(_hf_whitespace_classes(cps), np.where(word, 0, np.where(space, 1, 2)))
    assert np.array_equal(_hf_whitespace_split_white(cps), (bits & 4) != 0)
    for j, source in [(1, "\\s"), *enumerate(sources, start=3)]:  # bits 0 and 2: above
        assert np.array_equal(_hf_in_class(source, cps), (bits >> j) & 1 != 0), source


def test_classes_equal_hf_on_a_sample() -> None:
    """``\\w``/``\\s`` of ``Whitespace``, White_Space and the Split classes equal HF's (Oniguruma,
    Unicode 16.0) on a sample of code points, all that 17.0 changed among them."""
    _check_classes(_sample())


@pytest.mark.slow
def test_classes_equal_hf_on_every_code_point() -> None:
    _check_classes(_all())


# ---- finding hf-onig-word-class: HF's Split \w is Oniguruma's, its Whitespace's is Unicode's ---------
FINDING = Path(__file__).resolve().parents[1] / "corpora" / "reference-wp-unigram" / "findings" / "hf-onig-word-class.json"


def _finding() -> dict[str, Any]:
    """HF's ``Whitespace`` against HF's ``Split`` of the regex it documents (``\\w+|[^\\w\\s]+``,
    removed, inverted), and which of the two each tokspec reference reproduces."""
    tokenizers = pytest.importorskip("tokenizers")
    from tokspec.formats.hf_split import ONIG_WORD_EXTRA, ONIG_WORD_MISSING, WHITESPACE_PATTERN, split_step
    pre = tokenizers.pre_tokenizers
    split = pre.Split(tokenizers.Regex(WHITESPACE_PATTERN), "removed", invert=True)
    ours_ws = split_step({"type": "Whitespace"}, "finding")
    ours_split = split_step(_split(WHITESPACE_PATTERN, "Removed", True), "finding")
    cases = []
    for text in ("a\u00b2b", "x\u00bd", "a\u200db"):
        a = [list(o) for _, o in pre.Whitespace().pre_tokenize_str(text)]
        b = [list(o) for _, o in split.pre_tokenize_str(text)]
        cases.append({"input": text, "a": a, "b": b,
                      "reference_reproduces_a": [list(p) for p in ours_ws.apply(text, 0, len(text))] == a,
                      "reference_reproduces_b": [list(p) for p in ours_split.apply(text, 0, len(text))] == b})
    return {"engines": ["hf tokenizers Whitespace (Unicode \\w, as the regex module's)",
                        "hf tokenizers Split(Regex(\"\\w+|[^\\w\\s]+\"), removed, invert) (Oniguruma \\w)"],
            "classification": "different segmentation", "cases": cases,
            "counts": {"word_to_oniguruma_only": len(ONIG_WORD_EXTRA), "word_to_unicode_only": len(ONIG_WORD_MISSING)},
            "probed": "every code point, tests/test_fast_hf_split.py::test_classes_equal_hf_on_every_code_point"}


def test_finding_hf_onig_word_class_replays() -> None:
    stored = json.loads(FINDING.read_text(encoding="utf-8"))
    assert _finding() == stored
    assert all(case["a"] != case["b"] and case["reference_reproduces_a"] and case["reference_reproduces_b"]
               for case in stored["cases"])


# ---- models trained offline, end to end --------------------------------------------------------------
TEXTS_REAL = normalizing_texts(41, 10) + ["Hello, world!  12 34 ab-cd\u3000x", " a1b2 ,. ", "", "   ",
                                          "x\u2581y \u2581 z--w\t\u00a0q_r\u00b2s", "e\u0301\u0301 \uff21\u2460"]


@functools.lru_cache(maxsize=1)
def _trained() -> dict[str, Any]:
    """A Unigram model trained by HF's ``UnigramTrainer`` with a ``Whitespace`` pretokenizer."""
    tokenizers = pytest.importorskip("tokenizers")
    tok = tokenizers.Tokenizer(tokenizers.models.Unigram())
    tok.normalizer = tokenizers.normalizers.NFKC()
    tok.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    trainer = tokenizers.trainers.UnigramTrainer(vocab_size=300, special_tokens=["<unk>"], unk_token="<unk>",
                                                 show_progress=False)
    tok.train_from_iterator(normalizing_texts(40, 400), trainer=trainer)
    data: dict[str, Any] = json.loads(tok.to_str())
    return data


@pytest.mark.parametrize("pre", [
    {"type": "Whitespace"}, {"type": "WhitespaceSplit"},
    _seq({"type": "Whitespace"}, MS),
    _seq(_split(" ", "MergedWithNext", string=True), {**MS, "prepend_scheme": "first"}),
    _seq(_split("\\p{P}+", "Isolated"), _split("\\d", "Contiguous", True), {"type": "WhitespaceSplit"}),
], ids=["whitespace", "whitespacesplit", "whitespace-metaspace", "split-string", "split-regexes"])
def test_trained_unigram_end_to_end(pre: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``fast:PATH`` on a model trained offline (its own Whitespace, or another pretokenizer put in
    its place) never takes the Python path; ids and offsets equal HF's (library) and reference:'s."""
    tokenizers = pytest.importorskip("tokenizers")
    from tokspec.fast.unigram_datrie import datrie_encoder
    from tokspec.reference.unigram import unigram_encoder_from_tokenizer_json
    path = tmp_path / "unigram.json"
    path.write_text(json.dumps({**_trained(), "pre_tokenizer": pre}), encoding="utf-8")
    fast = datrie_encoder(str(path))
    assert fast._compiled is not None and fast._compiled.splits is not None
    hf = tokenizers.Tokenizer.from_file(str(path))
    ref = unigram_encoder_from_tokenizer_json(path, "r")
    assert_compiled_equals_reference_and_hf(fast, ref, hf, TEXTS_REAL, monkeypatch, ids_too=True)


@pytest.mark.slow
def test_over_one_megabyte_equals_hf_and_reference(tmp_path: Path) -> None:
    """One 1.2 MB text through Whitespace then Metaspace: ids equal HF's and reference:'s, offsets
    equal reference:'s (contract) and, in library mode, HF's own."""
    tokenizers = pytest.importorskip("tokenizers")
    from tokspec.fast.unigram_datrie import datrie_encoder
    from tokspec.reference.unigram import unigram_encoder_from_tokenizer_json
    text = "".join(normalizing_texts(42, 4000, 300)) + "".join(TEXTS_REAL)
    assert len(text.encode()) > 1_000_000
    path = tmp_path / "unigram.json"
    path.write_text(json.dumps({**_trained(), "pre_tokenizer": PRES[3]}), encoding="utf-8")
    fast, ref = datrie_encoder(str(path)), unigram_encoder_from_tokenizer_json(path, "r")
    got, want = fast.encode(text), ref.encode(text)
    assert (got.ids, got.offsets) == (want.ids, want.offsets)
    fast.offsets = "library"
    hf = tokenizers.Tokenizer.from_file(str(path)).encode(text, add_special_tokens=False)
    lib = fast.encode(text)
    assert (list(lib.ids), list(lib.offsets)) == (hf.ids, hf.offsets)


if __name__ == "__main__":
    FINDING.write_text(json.dumps(_finding(), ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print("written", FINDING)
