"""Spec properties fail on real counterexamples with the witness fields they document, and hold on
valid inputs; the registry refuses malformed claims; the cut rules and offset helpers decide as
their docstrings say (checked against independent predicates written here).

Verdict contract (``tokspec.spec._verdict.Verdict``): ``explanation`` is always a non-empty string;
a failing verdict's ``witness`` is a JSON-able dict describing the input and both sides.
"""

from __future__ import annotations

import json
import re
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tokspec.spec import _verdict
from tokspec.spec import bpe as B
from tokspec.spec import load_claims
from tokspec.spec import merge as M
from tokspec.spec import offsets as O
from tokspec.spec import pretok as P
from tokspec.spec import wordpiece as W
from tokspec.spec._verdict import Claim, Verdict


def _docstrings(module: object) -> str:
    return "\n".join(getattr(x, "__doc__", None) or "" for x in [module, *vars(module).values()]
                     if x is module or callable(x))


#: Ordinary English the spec's docstrings happen not to use (see _well_formed).
PLAIN = {"ok", "hold", "extension", "decode", "decoded", "changes", "prefixes", "splits", "reversed",
         "covered", "stop", "behaves", "row", "agrees", "choice", "break", "disagree", "qualifying",
         "halves", "midpoint", "filtered"}
_SPEC = [__import__(f"tokspec.spec.{m}", fromlist=["_"]) for m in
         ("_verdict", "bpe", "offsets", "pretok", "wordpiece", "unigram", "merge", "merge_core", "merge_published")]
WORDS = {w.lower() for m in _SPEC for w in re.findall(r"[A-Za-z]+", _docstrings(m))} | PLAIN


def _well_formed(v: Verdict, module: object = None) -> Verdict:
    """The Verdict contract; with ``module``, the explanation's all-capital terms (CR/LF, BPE) are
    terms of that spec module's docstrings (an explanation is prose in the module's vocabulary),
    and every word outside quotes is a word of the spec's docstrings or of :data:`PLAIN` (a garbled
    or misspelt explanation is caught)."""
    assert isinstance(v.explanation, str) and v.explanation.strip()
    docs = _docstrings(module) if module is not None else ""
    for term in re.findall(r"\b[A-Z][A-Z0-9_]+\b", v.explanation) if module is not None else []:
        assert re.search(rf"\b{re.escape(term)}\b", docs), f"{term!r} in {v.explanation!r}"
    unquoted = re.sub(r"'[^']*'|\"[^\"]*\"", " ", v.explanation)
    for word in re.findall(r"[A-Za-z]+", unquoted) if module is not None else []:
        assert word.lower() in WORDS, f"{word!r} in {v.explanation!r} is no word of the spec's docstrings"
    if not v.holds:
        assert isinstance(v.witness, dict) and v.witness
        assert None not in v.witness.values(), v.witness
        json.dumps(v.witness)
    return v


# --- pretok: span equality and partition -------------------------------------------------------

def test_spans_equal_holds_and_counts() -> None:
    spans = [(0, 2), (2, 3), (3, 7)]
    v = _well_formed(P.prop_spans_equal("abcdefg", spans, [list(s) for s in spans]), P)
    assert v.holds and "pretokenizer" in v.explanation and "3 spans" in v.explanation


def test_spans_equal_witness_is_three_spans_from_the_first_difference() -> None:
    text = "a" * 8
    want = [(i, i + 1) for i in range(8)]
    got = want[:2] + [(2, 4)] + [(i, i + 1) for i in range(4, 8)]
    v = _well_formed(P.prop_spans_equal(text, got, want, what="peek2"), P)
    assert not v.holds and v.explanation.startswith("peek2") and "span 2" in v.explanation
    assert v.witness == {"text": text, "first_diff": 2, "got": [[2, 4], [4, 5], [5, 6]],
                         "expected": [[2, 3], [3, 4], [4, 5]]}
    default = P.prop_spans_equal(text, got, want)
    assert default.explanation.startswith("pretokenizer")


@pytest.mark.parametrize("got_len, want_len", [(2, 4), (4, 2), (0, 1)])
def test_spans_equal_prefix_differs_at_the_shorter_length(got_len: int, want_len: int) -> None:
    spans = [(i, i + 1) for i in range(4)]
    got, want = spans[:got_len], spans[:want_len]
    v = _well_formed(P.prop_spans_equal("abcd", got, want), P)
    k = min(got_len, want_len)
    assert not v.holds and v.witness["first_diff"] == k
    assert v.witness["got"] == [list(s) for s in got[k:k + 3]]
    assert v.witness["expected"] == [list(s) for s in want[k:k + 3]]


def test_spans_partition_holds_on_a_partition() -> None:
    v = _well_formed(P.prop_spans_partition("hello world", [(0, 5), (5, 11)]), P)
    assert v.holds and "2 spans" in v.explanation


@pytest.mark.parametrize("spans, index", [
    ([(0, 2), (3, 5)], 1),          # gap
    ([(0, 2), (2, 2), (2, 5)], 1),  # empty span
    ([(1, 5)], 0),                  # does not start at 0
    ([(0, 3), (2, 5)], 1),          # overlap
])
def test_spans_partition_fails_on_gaps_and_empty_spans(spans: list, index: int) -> None:
    v = _well_formed(P.prop_spans_partition("abcde", spans), P)
    assert not v.holds and v.witness == {"text": "abcde", "index": index}
    assert f"span {index}" in v.explanation


def test_spans_partition_fails_when_spans_stop_early() -> None:
    v = _well_formed(P.prop_spans_partition("abcde", [(0, 2), (2, 4)]), P)
    assert not v.holds and v.witness == {"text": "abcde", "end": 4} and "end" in v.explanation
    v = _well_formed(P.prop_spans_partition("ab", []), P)
    assert not v.holds and v.witness == {"text": "ab", "end": 0}


# --- pretok: Peek2's end-of-text column ---------------------------------------------------------

@pytest.mark.parametrize("c0", ["a", " ", "1", "'", "\n", "\t", "!"])
def test_peek2_end_of_text_holds_on_every_category(c0: str) -> None:
    v = _well_formed(P.prop_peek2_end_of_text(c0), P)
    assert v.holds and f"row {P.peek_category(c0)}" in v.explanation


def test_peek2_end_of_text_detects_a_wrong_table(monkeypatch: pytest.MonkeyPatch) -> None:
    """A transcription error in column 3 of row 4 (letters) is caught with the cell as witness."""
    row = 4
    actual = P.cl100k_branch("a")
    wrong = (actual + 1) % 5
    table = [list(r) for r in P.PEEK2_TABLE]
    table[row][3] = wrong
    monkeypatch.setattr(P, "PEEK2_TABLE", tuple(tuple(r) for r in table))
    v = _well_formed(P.prop_peek2_end_of_text("a"), P)
    assert not v.holds
    assert v.witness == {"text": "a", "row": row, "table": wrong, "regex": actual}
    assert f"row {row}" in v.explanation and str(actual) in v.explanation


def test_peek2_cell_contraction_exception_is_only_the_quote_letter_cell(monkeypatch: pytest.MonkeyPatch) -> None:
    """Section 3.3's fallback excuses branch 1 in cell (2, 4) only: a wrong cell elsewhere whose
    regex branch is 1 (space before a letter: row 1, column 4) is caught."""
    assert P.cl100k_branch(" a") == 1 and P.PEEK2_TABLE[1][4] == 1
    table = [list(r) for r in P.PEEK2_TABLE]
    table[1][4] = 3
    monkeypatch.setattr(P, "PEEK2_TABLE", tuple(tuple(r) for r in table))
    v = _well_formed(P.prop_peek2_cell(" ", "a"), P)
    assert not v.holds and v.witness == {"text": " a", "cell": [1, 4], "table": 3, "regex": 1}
    v = _well_formed(P.prop_peek2_cell("'", "a", "bc"), P)   # quote, letter, no contraction: excused
    assert v.holds and "cell (2, 4)" in v.explanation


# --- bpe: the seed's worked example -------------------------------------------------------------

def test_seed_example_holds_for_the_definition() -> None:
    v = _well_formed(B.prop_seed_example(), B)
    assert v.holds and "abacbb" in v.explanation and f"{len(B.SEED_EXAMPLE_PREFIXES)} checks" in v.explanation


def test_seed_example_fails_for_an_encoder_that_never_merges() -> None:
    v = _well_formed(B.prop_seed_example(lambda ranks, data: [data[i:i + 1] for i in range(len(data))]), B)
    assert not v.holds
    # the first prefix that merges anything is "ab"
    assert v.witness == {"prefix": b"ab".hex(), "expected": [b"ab".hex()], "got": [b"a".hex(), b"b".hex()]}


# --- bpe: the corollaries and validity, with exact witnesses --------------------------------

TINY = {b"a": 0, b"b": 1, b"c": 2, b"bc": 3, b"ab": 4}


def _split(d: bytes) -> list[bytes]:
    return [d[i:i + 1] for i in range(len(d))]


def test_output_valid_witnesses() -> None:
    _well_formed(B.prop_output_valid(TINY, b"abc", lambda d: B.bpe_encode(TINY, d)), B)
    v = _well_formed(B.prop_output_valid(TINY, b"abc", lambda d: [b"ab"]), B)
    assert not v.holds and v.witness == {"data": "616263", "got": ["6162"]}
    v = _well_formed(B.prop_output_valid(TINY, b"cab", lambda d: [d[:2], d[2:]]), B)
    assert not v.holds and v.witness == {"data": "636162", "got": ["6361"]}

    answers = iter([[b"a", b"bc"], [b"ab", b"c"]])   # answers differently when asked again
    v = _well_formed(B.prop_output_valid(TINY, b"abc", lambda d: next(answers)), B)
    assert not v.holds and v.witness == {"data": "616263", "got": ["61", "6263"]}


def test_substrings_and_last_token_witnesses() -> None:
    def unstable(d: bytes) -> list[bytes]:      # merges only inputs of even length
        return B.bpe_encode(TINY, d) if len(d) % 2 == 0 else _split(d)
    v = _well_formed(B.prop_substrings_valid(TINY, b"abca", unstable), B)
    # abca has even length: a bc a; the run a bc (abc, odd) comes back split
    assert not v.holds and "0..2" in v.explanation
    assert v.witness == {"data": "61626361", "encoding": ["61", "6263", "61"], "run": ["61", "6263"],
                         "run_encoding": ["61", "62", "63"]}
    v = _well_formed(B.prop_substrings_valid(TINY, b"abcab"), B)
    assert v.holds and "Corollary II" in v.explanation
    v = _well_formed(B.prop_last_token_determines(TINY, b"abc", unstable), B)
    # abc (odd) comes back split, while its prefix ab (even) merges: a b c != [ab] + c
    assert not v.holds and v.witness == {"data": "616263", "prefix_len": 3, "encoding": ["61", "62", "63"],
                                         "shorter": ["6162"]}
    assert v.explanation.startswith("Corollary IIa:")
    v = _well_formed(B.prop_last_token_determines(TINY, b"abc"), B)
    assert v.holds and "3 prefixes" in v.explanation


def test_shared_token_and_extension_witnesses() -> None:
    ranks = {b"a": 0, b"b": 1, b"ab": 2, b"ba": 3}

    def broken(d: bytes) -> list[bytes]:        # forgets a merge on long inputs only
        out = B.bpe_encode(ranks, d)
        return [d[:1], d[1:2], *out[1:]] if len(d) >= 6 else out
    v = _well_formed(B.prop_shared_token_concat(ranks, b"ab", b"ab", b"ab", broken), B)
    assert "Corollary III:" in v.explanation
    assert not v.holds and v.witness == {"left": "6162", "token": "6162", "right": "6162",
                                         "joined": ["6162", "6162", "6162"], "encoding": ["61", "62", "6162", "6162"]}
    assert "premise" in _well_formed(B.prop_shared_token_concat(ranks, b"a", b"b", b"a"), B).explanation
    # b b ends with the token b, but b a encodes as [ba]: only one side has the token at the seam
    v = _well_formed(B.prop_shared_token_concat(ranks, b"b", b"b", b"a"), B)
    assert v.holds and "premise" in v.explanation
    v = _well_formed(B.prop_compatible_extension(ranks, b"abab", b"ab", broken), B)
    assert "Corollary IIIa:" in v.explanation
    assert not v.holds and v.witness == {"data": "61626162", "token": "6162", "expected": ["6162", "6162", "6162"],
                                         "encoding": ["61", "62", "6162", "6162"]}
    assert "premise" in _well_formed(B.prop_compatible_extension(ranks, b"", b"ab"), B).explanation
    # the definition meets both premises here: the passing verdicts name their corollary
    v = _well_formed(B.prop_shared_token_concat(ranks, b"ab", b"ab", b"ab"), B)
    assert v.holds and v.explanation.startswith("Corollary III:")
    v = _well_formed(B.prop_compatible_extension(ranks, b"abab", b"ab"), B)
    assert v.holds and v.explanation.startswith("Corollary IIIa:")


def test_last_token_refutes_an_encoder_that_returns_nothing() -> None:
    """A non-empty prefix encoded to no token at all has no last token: Corollary IIa fails at the
    first prefix (the shorter encoding is reported empty), whatever the shorter prefixes give."""
    v = _well_formed(B.prop_last_token_determines(TINY, b"ab", lambda d: []), B)
    assert not v.holds and v.witness == {"data": "6162", "prefix_len": 1, "encoding": [], "shorter": []}
    # a flaky engine that returns nothing once: no last token, so no shorter prefix is encoded
    answers = iter([[]])
    v = _well_formed(B.prop_last_token_determines(TINY, b"ab", lambda d: next(answers, _split(d))), B)
    assert not v.holds and v.witness == {"data": "6162", "prefix_len": 1, "encoding": [], "shorter": []}


def test_byte_roundtrip_and_shortcut_witnesses() -> None:
    table = {0: b"h", 1: "é".encode(), 2: b"x"}
    v = _well_formed(B.prop_byte_roundtrip("hé", [0, 1], table.__getitem__), B)
    assert v.holds and "2 tokens" in v.explanation and "3 input bytes" in v.explanation
    v = _well_formed(B.prop_byte_roundtrip("hé", [0, 2], table.__getitem__), B)
    assert not v.holds and v.witness == {"text": "hé", "first_diff_byte": 1, "decoded": "6878", "expected": "68c3a9"}
    v = _well_formed(B.prop_byte_roundtrip("hé", [0], table.__getitem__), B)
    assert v.witness["first_diff_byte"] == 1
    ce = B.SHORTCUT_COUNTEREXAMPLE
    v = _well_formed(B.prop_whole_piece_shortcut(**ce), B)
    assert not v.holds and v.witness == {"ranks": {k.hex(): r for k, r in ce["ranks"].items()}, "data": "61626364",
                                         "bpe": ["61", "6263", "64"], "shortcut": ["61626364"]}
    assert "BPE splits it" in v.explanation
    assert "BPE encodes it as itself" in _well_formed(B.prop_whole_piece_shortcut(TINY, b"ab"), B).explanation
    assert "premise" in _well_formed(B.prop_whole_piece_shortcut(TINY, b"abc"), B).explanation


def test_engine_is_bpe_explains_both_ways() -> None:
    v = _well_formed(B.prop_engine_is_bpe(TINY, b"abc", lambda d: B.bpe_encode(TINY, d)), B)
    assert v.holds and "3 bytes" in v.explanation
    v = _well_formed(B.prop_engine_is_bpe(TINY, b"abc", _split), B)
    assert not v.holds and v.witness == {"data": "616263", "expected": ["61", "6263"], "got": ["61", "62", "63"]}
    assert "BPE definition" in v.explanation    # names what it compared against


def test_output_valid_accepts_single_bytes_outside_the_vocabulary() -> None:
    """"only vocabulary tokens (or single bytes)": ranks without single-byte entries still encode
    every byte as itself, and that output is valid."""
    ranks = {b"ab": 0}
    v = _well_formed(B.prop_output_valid(ranks, b"bab", lambda d: B.bpe_encode(ranks, d)), B)
    assert v.holds and B.bpe_encode(ranks, b"bab") == [b"b", b"ab"]


def test_shared_token_premise_needs_the_token_at_the_end_of_the_left_side() -> None:
    """a b encodes as [ab] (not ending in b) while b b starts with b: the premise is not met, even
    though the right side alone would meet it."""
    ranks = {b"a": 0, b"b": 1, b"ab": 2, b"ba": 3}
    assert B.bpe_encode(ranks, b"ab") == [b"ab"] and B.bpe_encode(ranks, b"bb") == [b"b", b"b"]
    v = _well_formed(B.prop_shared_token_concat(ranks, b"a", b"b", b"b"), B)
    assert v.holds and v.explanation.startswith("premise not met")


# --- merge: M5's cut rule against an independent statement of it ------------------------------

def _spm_rule(text: str, c: int, bad_last: frozenset[str], bad_first: frozenset[str]) -> bool:
    if not (0 < c and c + 1 < len(text)) or text[c] != " ":
        return False
    before, after = text[c - 1], text[c + 1]
    letter_or_digit = all(unicodedata.category(ch)[0] in ("L", "N") for ch in (before, after))
    return letter_or_digit and before not in bad_last and after not in bad_first


@pytest.mark.parametrize("text, c, bad_last, bad_first, want", [
    ("ab cd", 2, "", "", True), ("é 1", 1, "", "", True), ("ab cd", 2, "b", "", False),
    ("ab cd", 2, "", "c", False), ("ab cd", 2, "c", "b", True), ("a, b", 2, "", "", False),
    ("ab  c", 2, "", "", False), ("ab ", 2, "", "", False), ("_ a", 1, "", "", False),
    ("a _", 1, "", "", False), ("xa b", 2, "x", "", True), ("a bc", 1, "", "c", True),
])
def test_rule_spm_space_examples(text: str, c: int, bad_last: str, bad_first: str, want: bool) -> None:
    assert M.rule_spm_space(text, c, frozenset(bad_last), frozenset(bad_first)) is want


@given(st.text(alphabet="ab1 ,é_\u0663", max_size=8), st.integers(-1, 9),
       st.frozensets(st.sampled_from("ab1é"), max_size=2), st.frozensets(st.sampled_from("ab1é"), max_size=2))
def test_rule_spm_space_matches_its_statement(text: str, c: int, bad_last: frozenset[str],
                                              bad_first: frozenset[str]) -> None:
    assert M.rule_spm_space(text, c, bad_last, bad_first) == _spm_rule(text, c, bad_last, bad_first)


# --- offsets helpers ------------------------------------------------------------------------------

@pytest.mark.parametrize("ch, want", [(" ", True), ("\n", True), ("\ufffd", True), ("\x00", True),
                                      ("\u200b", True), ("\u0301", True), ("a", False), ("1", False)])
def test_default_skippable(ch: str, want: bool) -> None:
    assert O.default_skippable(ch) is want


def test_one_cluster_looks_only_after_the_first_character() -> None:
    assert O._one_cluster("xe\u0301\u0327", 1, 4)       # base e, then two combining marks
    assert not O._one_cluster("xe\u0301f", 1, 4)
    assert O._one_cluster("ab", 0, 1)


# --- the registry refuses malformed claims; load_claims skips unwritten modules -----------------

def _fake(status: str, counterexample: dict | None = None) -> Claim:
    return Claim("test.fake", "nowhere", "nothing.", status, B.prop_seed_example, counterexample)


def test_register_refuses_duplicates_and_falsified_claims_without_witness(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_verdict, "CLAIMS", {})
    with pytest.raises(AssertionError, match="test.fake"):
        _verdict.register(_fake("falsified"))
    claim = _fake("falsified", {})
    assert _verdict.register(claim) is claim and _verdict.CLAIMS == {"test.fake": claim}
    with pytest.raises(AssertionError, match="duplicate claim test.fake"):
        _verdict.register(_fake("checked"))


def test_load_claims_skips_a_spec_module_not_written_yet(monkeypatch: pytest.MonkeyPatch) -> None:
    from tokspec import spec
    monkeypatch.setattr(spec, "SPEC_MODULES", ("bpe", "not_written_yet"))
    claims = load_claims()
    assert "bpe.seed_example" in claims


# --- helpers: pattern splitting, validity, WordPiece's limits ----------------------------------

def test_split_top_level_splits_only_outside_groups_and_classes() -> None:
    assert P._split_top_level(r"a|b\|c|(d|e)|[f|g]|h") == ["a", r"b\|c", "(d|e)", "[f|g]", "h"]
    # a group or class right at the start, and groups nested two deep
    assert P._split_top_level("(a|b)|c") == ["(a|b)", "c"]
    assert P._split_top_level("[|]|c") == ["[|]", "c"]
    assert P._split_top_level("((a|b)|c)|d") == ["((a|b)|c)", "d"]


def test_is_valid_defaults_to_the_definition() -> None:
    assert B.is_valid(TINY, [b"a", b"bc"]) and not B.is_valid(TINY, [b"ab", b"c"])
    assert B.is_valid(TINY, []) and B.is_valid(TINY, [b"ab", b"c"], lambda d: [d[:2], d[2:]])


def test_wordpiece_limits_and_unknown_token() -> None:
    vocab = {"a", "##a"}
    assert W.wordpiece_word(vocab, "a" * 100) == ["a"] + ["##a"] * 99
    assert W.wordpiece_word(vocab, "a" * 101) == ["[UNK]"]
    assert _well_formed(W.prop_greedy_word(vocab, "b", ["[UNK]"])).holds
    assert _well_formed(W.prop_greedy_word(vocab, "b", ["<unk>"], unk="<unk>")).holds
    assert not W.prop_greedy_word(vocab, "b", ["[UNK]"], unk="<unk>").holds


def test_wordpiece_property_uses_the_engines_continuation_prefix() -> None:
    vocab = {"a", "@@a", "##a"}
    assert W.prop_greedy_word(vocab, "aa", ["a", "@@a"], prefix="@@").holds
    assert not W.prop_greedy_word(vocab, "aa", ["a", "##a"], prefix="@@").holds


def test_a_verdict_is_a_real_bool_each_way() -> None:
    """``holds`` is True or False (not merely truthy or falsy), so ``if verdict:`` works on both."""
    failing = _verdict.fails("differs at token 3", got=[1], want=[2])
    assert failing.holds is False and not failing
    assert failing.explanation == "differs at token 3" and failing.witness == {"got": [1], "want": [2]}
    passing = _verdict.holds("same tokens")
    assert passing.holds is True and passing and passing.witness is None


@pytest.mark.parametrize("rule", ["space", "space-after-letter"])
def test_a_cut_where_the_rule_does_not_hold_is_vacuously_sound_and_says_so(rule: str) -> None:
    verdict = M.lopt_cut_theorem("tiktoken:cl100k_base", "hello world", 2, rule)  # inside a word
    assert verdict.holds is True and verdict.explanation == f"vacuous: rule {rule} does not hold at c=2"
