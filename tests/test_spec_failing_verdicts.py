"""Failing verdicts of the offsets, unigram, wordpiece and merge properties carry the witness their
docstrings promise, recomputed here from the engines and definitions (not copied from the verdict),
and passing verdicts say what was checked.
"""

from __future__ import annotations

import json
import re

import pytest

from tokspec import load_engine
from tokspec.spec import load_claims
from tokspec.spec import merge as M
from tokspec.spec import merge_core as MC
from tokspec.spec import merge_published as MP
from tokspec.spec import offsets as O
from tokspec.spec import unigram as U
from tokspec.spec import wordpiece as W
from tokspec.spec._verdict import Verdict

CLAIMS = load_claims()


def _vocabulary() -> str:
    """Every docstring of the spec modules and their functions: the terms explanations may use."""
    import tokspec.spec as spec
    mods = [spec, O, U, W, MC, MP] + [__import__(f"tokspec.spec.{m}", fromlist=["_"]) for m in spec.SPEC_MODULES]
    return "\n".join(x.__doc__ or "" for m in mods for x in [m, *vars(m).values()] if x is m or callable(x))


VOCABULARY = _vocabulary()
#: Ordinary English the docstrings happen not to use. Every other word of an explanation (outside
#: quoted input) is a word of the docstrings: a garbled or misspelt explanation is caught.
PLAIN = {"ok", "hold", "extension", "decode", "decoded", "changes", "prefixes", "splits", "reversed",
         "covered", "stop", "behaves", "row", "agrees", "choice", "break", "disagree", "qualifying",
         "halves", "midpoint", "filtered"}
WORDS = {w.lower() for w in re.findall(r"[A-Za-z]+", VOCABULARY)} | PLAIN


def _prose(explanation: str) -> None:
    """Explanations are prose in the spec's terms: all-capital words are terms of its docstrings,
    and every word outside quotes is a word of them (or of :data:`PLAIN`)."""
    assert isinstance(explanation, str) and explanation.strip()
    for term in re.findall(r"\b[A-Z][A-Z0-9_]+\b", explanation):
        assert re.search(rf"\b{re.escape(term)}\b", VOCABULARY), f"{term!r} in {explanation!r}"
    unquoted = re.sub(r"'[^']*'|\"[^\"]*\"", " ", explanation)
    for word in re.findall(r"[A-Za-z]+", unquoted):
        assert word.lower() in WORDS, f"{word!r} in {explanation!r} is no word of the spec's docstrings"


def _failing(v: Verdict, keys: set[str]) -> dict:
    """A failing verdict: non-empty explanation, a JSON-able witness with exactly ``keys``."""
    assert not v.holds
    _prose(v.explanation)
    assert isinstance(v.witness, dict) and set(v.witness) == keys, v.witness
    json.dumps(v.witness)
    return v.witness


def _holding(v: Verdict, *words: str) -> None:
    assert v.holds and v.witness is None
    _prose(v.explanation)
    for w in words:
        assert w in v.explanation, (w, v.explanation)


# --- offsets ----------------------------------------------------------------------------------

def test_contiguous_partition_verdicts() -> None:
    _holding(O.prop_contiguous_partition("", []), "empty")
    assert _failing(O.prop_contiguous_partition("", [(0, 0)]), {"got"}) == {"got": [(0, 0)]}
    assert _failing(O.prop_contiguous_partition("abc", [(1, 3)]), {"text", "offsets"})["offsets"] == [(1, 3)]
    assert _failing(O.prop_contiguous_partition("abc", []), {"text", "offsets"})["offsets"] == []
    assert _failing(O.prop_contiguous_partition("abc", [(0, 2)]), {"text", "offsets"})["text"] == "abc"
    w = _failing(O.prop_contiguous_partition("abc", [(0, 1), (1, 1), (1, 3)]), {"text", "index", "span"})
    assert w == {"text": "abc", "index": 1, "span": [1, 1]}
    v = O.prop_contiguous_partition("abcd", [(0, 1), (2, 4)])
    assert _failing(v, {"text", "index", "span", "prev_end"}) == {
        "text": "abcd", "index": 1, "span": [2, 4], "prev_end": 1}
    assert v.explanation.startswith("token 1 does not start where token 0 ends")
    # a token may start inside the previous token's last multi-byte character, not an ASCII one
    _holding(O.prop_contiguous_partition("aé", [(0, 2), (1, 2)]), "2 spans", "2 characters")
    _failing(O.prop_contiguous_partition("ab", [(0, 2), (1, 2)]), {"text", "index", "span", "prev_end"})


def test_offsets_from_token_bytes_places_empty_tokens() -> None:
    """A zero-length token sits where the next byte's character starts, or at the end."""
    assert O.offsets_from_token_bytes("aé", [1, 0, 2, 0]) == [(0, 1), (1, 1), (1, 2), (2, 2)]
    assert O.offsets_from_token_bytes("", [0]) == [(0, 0)]


def test_offsets_match_bytes_verdicts() -> None:
    text = "aé"
    tokens = [b"a", "é".encode()]
    _holding(O.prop_offsets_match_bytes(text, [(0, 1), (1, 2)], tokens), "match")
    assert _failing(O.prop_offsets_match_bytes(text, [(0, 1)], [b"a"]), {"text"}) == {"text": text}
    w = _failing(O.prop_offsets_match_bytes(text, [(0, 1), (1, 1)], tokens), {"text", "first_diff", "got", "expected"})
    assert w == {"text": text, "first_diff": 1, "got": [[0, 1], [1, 1]], "expected": [[0, 1], [1, 2]]}
    w = _failing(O.prop_offsets_match_bytes(text, [(0, 1)], tokens), {"text", "first_diff", "got", "expected"})
    assert w["first_diff"] == 1 and w["expected"] == [[0, 1], [1, 2]]


def test_monotone_cover_verdicts() -> None:
    _holding(O.prop_monotone_cover("ab c", [(0, 2), (3, 4)]), "2 ordered spans")
    w = _failing(O.prop_monotone_cover("ab", [(0, 3)]), {"text", "index", "span"})
    assert w == {"text": "ab", "index": 0, "span": [0, 3]}
    v = O.prop_monotone_cover("abc", [(1, 3), (0, 1)])
    assert _failing(v, {"text", "index", "span", "prev"}) == {"text": "abc", "index": 1, "span": [0, 1], "prev": [1, 3]}
    assert v.explanation.startswith("token 1 is out of order with token 0")
    v = O.prop_monotone_cover("abc", [(0, 1), (2, 3)])
    w = _failing(v, {"text", "index", "offsets"})
    assert w == {"text": "abc", "index": 1, "offsets": [[0, 1], [2, 3]]} and "'b'" in v.explanation
    claim = CLAIMS["offsets.normalizing_monotone"]
    _failing(claim.check(**claim.counterexample), {"text", "index", "span", "prev"})
    assert claim.check(**{**claim.counterexample, "allow_reordering": True}).holds


# --- unigram and wordpiece ---------------------------------------------------------------------

SCORES = {"a": -1.0, "b": -1.0, "ab": -1.5, "abc": -5.0, "c": -1.0}


def test_viterbi_optimal_verdicts() -> None:
    _holding(U.prop_viterbi_optimal(SCORES, "ab", ["ab"]), "-1.5", "1 optimal")
    _holding(U.prop_viterbi_optimal(SCORES, "x", None), "no segmentation")
    w = _failing(U.prop_viterbi_optimal(SCORES, "ab", None), {"text", "got", "best"})
    assert w == {"text": "ab", "got": None, "best": [["ab"]]}
    w = _failing(U.prop_viterbi_optimal(SCORES, "x", ["x"]), {"text", "got", "best"})
    assert w == {"text": "x", "got": ["x"], "best": []}
    w = _failing(U.prop_viterbi_optimal(SCORES, "ab", ["a", "c"]), {"text", "got"})
    assert w == {"text": "ab", "got": ["a", "c"]}
    w = _failing(U.prop_viterbi_optimal(SCORES, "ab", ["a", "b"]), {"text", "got", "got_score", "best", "best_score"})
    assert w == {"text": "ab", "got": ["a", "b"], "got_score": -2.0, "best": ["ab"], "best_score": -1.5}


def test_viterbi_missing_segmentation_witness_is_three_optimal_ones_in_brute_force_order() -> None:
    """An engine that finds no segmentation where some exist: like the span witnesses (three spans
    from the first difference) the witness stays three items long, the first optimal segmentations
    the brute force enumerates; here all 2^3 splits of "aaaa" tie, so more than three exist."""
    scores = {"a": -1.0, "aa": -2.0, "aaa": -3.0, "aaaa": -4.0}
    best, winners = U.best_segmentations(scores, "aaaa")
    assert len(winners) == 8 and winners == U.all_segmentations(scores, "aaaa")
    w = _failing(U.prop_viterbi_optimal(scores, "aaaa", None), {"text", "got", "best"})
    assert w == {"text": "aaaa", "got": None, "best": [["a", "a", "a", "a"], ["a", "a", "aa"], ["a", "aa", "a"]]}


def test_tie_break_verdicts() -> None:
    scores = {"a": -1.0, "b": -1.0, "ab": -2.0}
    _holding(U.prop_tie_break(scores, "ab", ["ab"]), "tie-break")
    w = _failing(U.prop_tie_break(scores, "ab", ["a", "b"]), {"text", "got", "expected"})
    assert w == {"text": "ab", "got": ["a", "b"], "expected": ["ab"]}
    assert _failing(U.prop_tie_break(scores, "ab", None), {"text", "got", "expected"})["got"] is None


def test_greedy_word_and_pieces_verdicts() -> None:
    vocab = {"un", "##aff", "##able", "unaff"}
    _holding(W.prop_greedy_word(vocab, "unaffable", ["unaff", "##able"]), "'unaffable'")
    w = _failing(W.prop_greedy_word(vocab, "unaffable", ["un", "##aff", "##able"]), {"word", "got", "expected"})
    assert w == {"word": "unaffable", "got": ["un", "##aff", "##able"], "expected": ["unaff", "##able"]}
    _holding(W.prop_greedy_pieces(vocab, ["unaff", "##able", "[UNK]", "un"]), "WordPiece greedy longest match", "2 checks")
    w = _failing(W.prop_greedy_pieces(vocab, ["un", "##aff", "##able"]), {"word", "got", "expected"})
    assert w["word"] == "unaffable"


# --- merge: Definition M1 and the published statements -----------------------------------------

def _toks(engine, text: str, delta: int = 0) -> list[tuple]:
    enc = engine.encode(text)
    return [(i, (s + delta, e + delta)) for i, (s, e) in zip(enc.ids, enc.offsets)]


def test_pieces_equation_witness_is_the_first_divergence() -> None:
    eng = load_engine("hf:bert-base-uncased")
    text, cut = "hello unaffable", 10
    _holding(MC.pieces_equation(eng, "hello world", [5]), "1 cuts")
    w = _failing(MC.pieces_equation(eng, text, [cut]), {"text", "cuts", "first_divergence", "serial", "merged"})
    serial, merged = _toks(eng, text), _toks(eng, text[:cut]) + _toks(eng, text[cut:], cut)
    k = next(i for i, (x, y) in enumerate(zip(serial, merged)) if x != y)
    assert w == {"text": text, "cuts": [cut], "first_divergence": k, "serial": serial[k:k + 5],
                 "merged": merged[k:k + 5]}


def _replay(name: str, keys: set[str]) -> tuple[dict, dict, object]:
    claim = CLAIMS[name]
    ce = dict(claim.counterexample)
    eng = load_engine(ce["engine"])
    return _failing(claim.check(**ce), keys), ce, eng


def test_theorem_4_1_witness() -> None:
    w, ce, eng = _replay("merge.lopt_theorem_4_1",
                         {"text", "chunk_len", "overlap", "matches", "serial_ids", "merged_ids"})
    assert (w["text"], w["chunk_len"], w["overlap"]) == (ce["text"], ce["chunk_len"], ce["overlap"])
    assert w["serial_ids"] == list(eng.encode(ce["text"]).ids) != w["merged_ids"]
    assert w["merged_ids"] and all(isinstance(i, int) for i in w["merged_ids"])
    assert w["matches"] and all(n > 0 for _, _, n in w["matches"])


def test_lemma_7_1_witness() -> None:
    w, ce, eng = _replay("merge.lopt_lemma_7_1", {"s1", "so", "s2", "run", "T", "serial_ids", "merged_ids"})
    assert (w["s1"], w["so"], w["s2"]) == (ce["s1"], ce["so"], ce["s2"])
    assert w["T"] == MP.max_token_chars(eng) and len(w["run"]) == 3
    assert w["merged_ids"] and all(isinstance(i, int) for i in w["merged_ids"])
    assert w["serial_ids"] == list(eng.encode(ce["s1"] + ce["so"] + ce["s2"]).ids) != w["merged_ids"]


def test_lemma_7_3_witness() -> None:
    w, ce, eng = _replay("merge.lopt_lemma_7_3", {"text", "l", "r", "piece", "expected", "got"})
    toks = _toks(eng, ce["text"])
    a, b = toks[ce["l"] - 1][1][0], toks[ce["r"] - 1][1][1]
    assert (w["text"], w["l"], w["r"], w["piece"]) == (ce["text"], ce["l"], ce["r"], ce["text"][a:b])
    assert w["expected"] == [t[0] for t in toks[ce["l"] - 1:ce["r"]]]
    assert w["got"] == list(eng.encode(ce["text"][a:b]).ids) != w["expected"]
    assert "vacuous" in MP.lopt_lemma_7_3(eng, ce["text"], 2, 2).explanation


def test_blog_witness() -> None:
    w, ce, eng = _replay("merge.blog_overlap_theorem", {"text", "mid", "overlap", "serial", "merged"})
    assert (w["text"], w["mid"], w["overlap"]) == (ce["text"], ce["mid"], ce["overlap"])
    assert w["serial"] == _toks(eng, ce["text"]) != w["merged"]
    text, mid, overlap = ce["text"], ce["mid"], ce["overlap"]
    lo = max(0, mid - overlap)
    assert w["merged"] == ([t for t in _toks(eng, text[:mid + overlap]) if t[1][0] < mid]
                           + [t for t in _toks(eng, text[lo:], lo) if t[1][0] >= mid])
    assert "T(S)" in claim_explanation("merge.blog_overlap_theorem")
    assert "vacuous" in MP.blog_overlap_theorem(eng, ce["text"], 0, ce["overlap"]).explanation


def claim_explanation(name: str) -> str:
    claim = CLAIMS[name]
    return claim.check(**claim.counterexample).explanation


def test_blog_theorem_with_the_midpoint_after_the_first_character() -> None:
    """m = 1 is inside the text (not vacuous), and R is T(S[0:]) when m - w < 0: with R cut one
    character late, "unaffable" would re-tokenize as "naffable" and the halves would not join."""
    eng = load_engine("hf:bert-base-uncased")
    _holding(MP.blog_overlap_theorem(eng, "unaffable", 1, MP.max_token_chars(eng)), "halves", "T(S)")


def test_parallel_tokenizer_witness() -> None:
    w, ce, eng = _replay("merge.parallel_tokenizer_overlap",
                         {"text", "chunk_len", "overlap", "serial_ids", "merged_ids"})
    assert (w["text"], w["chunk_len"], w["overlap"]) == (ce["text"], ce["chunk_len"], ce["overlap"])
    assert w["serial_ids"] == list(eng.encode(ce["text"]).ids) != w["merged_ids"]
    assert w["merged_ids"] and all(isinstance(i, int) for i in w["merged_ids"])
    assert "vacuous" in MP.parallel_tokenizer_claim(eng, ce["text"], ce["chunk_len"], 1).explanation


@pytest.mark.parametrize("name", ["merge.lopt_theorem_4_1", "merge.parallel_tokenizer_overlap"])
def test_chunked_claims_hold_without_a_real_cut(name: str) -> None:
    """One chunk covering the whole text: nothing to merge, the claims hold (not vacuously)."""
    claim = CLAIMS[name]
    ce = claim.counterexample
    eng = load_engine(ce["engine"])
    text = ce["text"]
    v = claim.check(eng, text, len(text) + 1, max(ce["overlap"], MP.max_token_chars(eng)))
    assert v.holds and "vacuous" not in v.explanation, v


def test_pieces_equation_widen_moves_only_the_start() -> None:
    """M5's widening sets the first token's start of each later piece to the cut, keeping its id."""
    eng = load_engine("hf:bert-base-uncased")
    assert MC.pieces_equation(eng, "hello world", [6], widen=True).holds   # "world" starts at 6
    v = MC.pieces_equation(eng, "hello world", [5], widen=True)            # " world": widened to 5
    w = _failing(v, {"text", "cuts", "first_divergence", "serial", "merged"})
    serial = _toks(eng, "hello world")
    assert w["first_divergence"] == 1 and w["serial"] == serial[1:]
    assert w["merged"] == [(serial[1][0], (5, serial[1][1][1]))]


def test_pieces_equation_widen_leaves_the_first_piece_alone() -> None:
    """Widening is for pieces after the first: the first piece starts where the text does, so a
    first token that starts later (leading spaces BERT drops) keeps its start; with no cut the
    equation is F(S) == F(S), widen or not."""
    eng = load_engine("hf:bert-base-uncased")
    assert _toks(eng, "  hello world")[0][1][0] == 2
    assert MC.pieces_equation(eng, "  hello world", [], widen=True).holds
    assert MC.pieces_equation(eng, "  hello world", [8], widen=True).holds   # "world" starts at 8


def test_pieces_equation_witness_shows_five_tokens_of_each_side_from_the_divergence() -> None:
    """Like the span witnesses (a few items from the first difference), the serial and merged
    tokens shown stop five tokens after the first divergence, on each side."""
    from types import SimpleNamespace

    class MarksFirstChar:   # per-character tokens; a text's first character gets id 0
        def encode(self, text: str) -> SimpleNamespace:
            return SimpleNamespace(ids=[0 if i == 0 else ord(c) for i, c in enumerate(text)],
                                   offsets=[(i, i + 1) for i in range(len(text))])

    text = "abcdefghijkl"
    w = _failing(MC.pieces_equation(MarksFirstChar(), text, [1]), {"text", "cuts", "first_divergence", "serial", "merged"})
    assert w["first_divergence"] == 1
    assert w["serial"] == [(ord(c), (i, i + 1)) for i, c in enumerate(text) if 1 <= i <= 5]
    assert w["merged"] == [(0, (1, 2))] + [(ord(c), (i, i + 1)) for i, c in enumerate(text) if 2 <= i <= 5]


@pytest.mark.parametrize("engine", ["tiktoken:cl100k_base", "hf:bert-base-uncased"])
def test_max_token_chars_refuses_a_vocabulary_file_that_is_not_the_engines(
        engine: str, monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from tokspec.formats import vocab
    from tokspec.errors import VocabularyError
    eng = load_engine(engine)
    forged = {".tiktoken": "YQ== 0\n", ".json": '{"model": {"vocab": {"a": 0}}}'}
    name = next(n for n, e in vocab.NAMED_FILES.items()
                if e.sha256 == eng.info.vocab_sha256 and not n.endswith(".vocab"))
    suffix = ".tiktoken" if ".tiktoken" in vocab.named_path(name).name else ".json"
    path = tmp_path / f"forged{suffix}"
    path.write_text(forged[suffix], encoding="utf-8")
    monkeypatch.setattr(vocab, "named_path", lambda n: path)
    with pytest.raises(VocabularyError, match="sha256"):
        MP.max_token_chars(eng)


def test_monotone_cover_allows_reordering_only_inside_one_cluster() -> None:
    """A step back inside a base + combining marks is reordering; across two bases it is not."""
    assert O.prop_monotone_cover("e\u0301\u0327", [(0, 3), (1, 2)]).holds
    v = O.prop_monotone_cover("ab\u0301", [(0, 3), (1, 2)])
    assert _failing(v, {"text", "index", "span", "prev"})["prev"] == [0, 3]


def test_monotone_cover_counts_a_class_0_character_that_decomposes_to_marks_as_a_mark() -> None:
    """U+0F75 has combining class 0 but decomposes to U+0F71 U+0F74 (129, 132): NFC of U+2DF8
    U+0F75 puts U+2DF8 (230) last, so HF's (and the reference's) byte tokens of U+2DF8 come after
    the two vowel signs and step back (finding 4766982baa57d88c of prop--hf_mon-unigram, the
    offsets as HF gave them). U+0F77 decomposes to U+0FB2, a starter, first: nothing moves across
    it, and the same step back fails."""
    hf_offsets = [(0, 0), (1, 2), (1, 2), (0, 1), (0, 1), (0, 1)]
    assert O.prop_monotone_cover("\u2df8\u0f75", hf_offsets).holds
    v = O.prop_monotone_cover("\u2df8\u0f77", hf_offsets)
    assert _failing(v, {"text", "index", "span", "prev"})["prev"] == [1, 2]
    assert [c for c in "\u0f73\u0f75\u0f81\u0f77\u0f76" if O._reorderable(c)] == ["\u0f73", "\u0f75", "\u0f81"]


def test_monotone_cover_lets_marks_meet_across_a_character_no_token_covers() -> None:
    """mon-unigram's normalizer removes U+200B before NFC, so U+A679 (230) and U+0859 (220) meet
    and NFC puts U+0859 first (finding 1e2bdd6fe18869d9 of prop--hf_mon-unigram, the offsets as
    HF, the reference and ``fast:`` gave them). Covered, the same U+200B keeps them apart, and a
    starter between the marks still does."""
    hf_offsets = [(0, 0), (2, 3), (2, 3), (2, 3), (0, 1), (0, 1), (0, 1)]
    assert O.prop_monotone_cover("\ua679\u200b\u0859", hf_offsets).holds
    covered = [(0, 0), (2, 3), (2, 3), (2, 3), (0, 2), (0, 1), (0, 1)]
    v = O.prop_monotone_cover("\ua679\u200b\u0859", covered)
    assert _failing(v, {"text", "index", "span", "prev"})["prev"] == [2, 3]
    v = O.prop_monotone_cover("\ua679x\u0859", [*hf_offsets, (1, 2)])
    assert _failing(v, {"text", "index", "span", "prev"})["prev"] == [2, 3]


def test_empty_piece_is_never_part_of_a_segmentation() -> None:
    scores = {"": 0.0, "a": -1.0, "aa": -1.5}
    assert sorted(U.all_segmentations(scores, "aa")) == [["a", "a"], ["aa"]]
    assert U.best_segmentations(scores, "aa") == (-1.5, [["aa"]])


@pytest.mark.parametrize("engine", ["hf:bert-base-uncased", "hf:mon-unigram"])
def test_max_token_chars_is_the_longest_vocabulary_entry(engine: str) -> None:
    """Read independently from the tokenizer.json (dict vocab for WordPiece, [piece, score] list
    for Unigram): UTF-8 bytes of the longest entry, WordPiece's "##" not counted."""
    from tokspec.formats import vocab
    eng = load_engine(engine)
    name = next(n for n, e in vocab.NAMED_FILES.items()
                if e.sha256 == eng.info.vocab_sha256 and not n.endswith(".vocab"))
    table = json.loads(vocab.named_path(name).read_text(encoding="utf-8"))["model"]["vocab"]
    words = [entry[0] for entry in table] if isinstance(table, list) else list(table)
    assert MP.max_token_chars(eng) == max(len(w.removeprefix("##").encode("utf-8")) for w in words) > 4


def test_match_counts_only_tokens_inside_the_overlap() -> None:
    """LoPT's Match: a token starting before ``lo`` is not inside [lo, hi) even if it ends there."""
    toks = [(1, (0, 2)), (2, (2, 4)), (3, (4, 6))]
    assert MP._match(toks, toks, 0, 6) == (0, 0, 3)
    assert MP._match(toks, toks, 1, 4) == (1, 1, 1)
    assert MP._match(toks, [(9, (0, 2))], 0, 6) == (0, 0, 1)


def test_longest_common_ids_ties_and_no_run() -> None:
    """Ties go to the run ending last in ``a`` (then the first in ``b``); no common id: the empty
    run at the end of ``a`` (so the merge keeps all of ``a``)."""
    assert MP._longest_common_ids([1, 2, 9, 1, 2], [1, 2]) == (3, 0, 2)
    assert MP._longest_common_ids([1], [1, 1]) == (0, 0, 1)
    assert MP._longest_common_ids([1, 2], [3]) == (2, 0, 0)
    assert MP._longest_common_ids([1, 9, 1], [1]) == (2, 0, 1)   # a tie of one-id runs too


def test_longest_common_ids_against_brute_force() -> None:
    """The longest common run; ties: the one starting (so ending) last in ``a``, then first in
    ``b``; none: the empty run at the end of ``a``. Random small id lists over a 3-id alphabet."""
    import random
    rng = random.Random(13)
    for _ in range(400):
        a = [rng.randrange(3) for _ in range(rng.randint(0, 7))]
        b = [rng.randrange(3) for _ in range(rng.randint(0, 7))]
        runs = []
        for i in range(len(a)):
            for j in range(len(b)):
                n = 0
                while i + n < len(a) and j + n < len(b) and a[i + n] == b[j + n]:
                    n += 1
                runs.append((n, i, -j))
        n, i, j = max(runs, default=(0, 0, 0))
        assert MP._longest_common_ids(a, b) == ((i, -j, n) if n else (len(a), 0, 0)), (a, b)


def test_split_and_sound_cuts_pass_widen_on() -> None:
    """M5's widening reaches pieces_equation through both entry points (see the widen test above)."""
    eng = load_engine("hf:bert-base-uncased")
    assert M.split_equation(eng, "hello world", 5).holds
    assert not M.split_equation(eng, "hello world", 5, widen=True).holds
    assert M.sound_cuts_theorem(eng, "hello world", M.rule_space).holds
    assert not M.sound_cuts_theorem(eng, "hello world", M.rule_space, widen=True).holds
    v = M.sound_cuts_theorem(eng, "a b", M.rule_space, widen=True)      # the cut at 1 is tried
    assert _failing(v, {"text", "cuts", "first_divergence", "serial", "merged"})["cuts"] == [1]


def test_blog_theorem_is_vacuous_with_the_midpoint_at_an_end() -> None:
    eng = load_engine("hf:bert-base-uncased")
    w = MP.max_token_chars(eng)
    for mid in (0, 5):
        assert MP.blog_overlap_theorem(eng, "hello", mid, w).explanation.startswith("vacuous"), mid
    assert not MP.blog_overlap_theorem(eng, "hello", 2, w).explanation.startswith("vacuous")


def test_pieces_equation_when_the_pieces_give_a_prefix_of_the_serial_tokens() -> None:
    """Divergence at the shorter length: an encoder that drops the last character of odd-length
    texts encodes "abc" + "d" to a prefix of its encoding of "abcd"."""
    from types import SimpleNamespace

    class DropsOddTail:
        def encode(self, text: str) -> SimpleNamespace:
            n = len(text) - len(text) % 2
            return SimpleNamespace(ids=[ord(c) for c in text[:n]], offsets=[(i, i + 1) for i in range(n)])

    w = _failing(MC.pieces_equation(DropsOddTail(), "abcd", [3]), {"text", "cuts", "first_divergence", "serial", "merged"})
    assert w == {"text": "abcd", "cuts": [3], "first_divergence": 2, "serial": [(99, (2, 3)), (100, (3, 4))], "merged": []}


def test_published_merge_statements_say_why_they_hold() -> None:
    """Passing and vacuous verdicts of the published statements are prose in the spec's words and
    say which case they are (a vacuous pass is never mistaken for a checked one)."""
    eng = load_engine("hf:bert-base-uncased")
    text = "the cat sat on the mat and the dog sat on the log"
    _holding(MP.lopt_theorem_4_1(eng, "hello world", 5, 0), "vacuous", "n_i = 0")
    _holding(MP.lopt_lemma_7_1(eng, "the cat ", "sat on the mat and the dog sat on", " the log"),
             "qualifying runs", "F(S)")
    _holding(MP.lopt_lemma_7_1(eng, "a", "b", "c"), "vacuous", "longer than T")
    _holding(MP.blog_overlap_theorem(eng, text, 20, 19), "halves", "T(S)")
    # "mat" starts exactly at the midpoint 19: it is one of R's tokens starting ">= m"
    assert (19, 22) in eng.encode(text).offsets
    _holding(MP.blog_overlap_theorem(eng, text, 19, 19), "halves", "T(S)")
    _holding(MP.parallel_tokenizer_claim(eng, text, 20, 18), "serial ids")
    _holding(MP.parallel_tokenizer_claim(eng, text, 20, 1), "vacuous", "longest token")
    _holding(MP.lopt_lemma_7_3(eng, text, 2, 4), "tokens 2..4")
    _holding(MC.pieces_equation(eng, text, [3, 7]), "2 cuts", "serial encoding")


def test_max_token_chars_reads_only_tokenizer_json_and_tiktoken_files() -> None:
    """A vocabulary known only as a WordPiece vocab.txt (named "<name>.vocab") is not read as a
    tokenizer.json: an engine claiming its sha256 gets the documented VocabularyError."""
    from types import SimpleNamespace

    from tokspec.formats import vocab
    from tokspec.errors import VocabularyError
    sha = vocab.NAMED_FILES["bert-base-uncased.vocab"].sha256
    assert all(e.sha256 != sha for n, e in vocab.NAMED_FILES.items() if not n.endswith(".vocab"))
    engine = SimpleNamespace(info=SimpleNamespace(name="vocab-txt-only", vocab_sha256=sha))
    with pytest.raises(VocabularyError, match=f"vocabulary sha256={sha!r} is not a named one"):
        MP.max_token_chars(engine)


# --- the published statements' run finders, against brute force --------------------------------

def _run_length(left: list, right: list, l: int, r: int, ok=lambda t: True) -> int:
    n = 0
    while (l + n < len(left) and r + n < len(right) and ok(left[l + n]) and ok(right[r + n])
           and left[l + n][1] == right[r + n][1]):
        n += 1
    return n


def _maximal_runs(left: list, right: list) -> set[tuple[int, int, int]]:
    """Runs of equal spans that cannot be extended at either end (brute force)."""
    return {(i1, i2, _run_length(left, right, i1, i2)) for i1 in range(len(left)) for i2 in range(len(right))
            if left[i1][1] == right[i2][1] and not (i1 and i2 and left[i1 - 1][1] == right[i2 - 1][1])}


def _random_tokens(rng, n: int, start: int = 0) -> list:
    """Tokens with spans over a short text from ``start``, of random length, cut at random points
    (so two lists may end together, or either may stop first); ids are irrelevant to spans."""
    end = start + rng.randint(n, 12)
    cuts = sorted(rng.sample(range(start + 1, end), n - 1)) if n > 1 else []
    bounds = [start, *cuts, end]
    return [(rng.randrange(3), (a, b)) for a, b in zip(bounds, bounds[1:])]


def test_runs_and_match_agree_with_brute_force() -> None:
    """Lemma 7.1's maximal runs and LoPT's Match (the longest run inside [lo, hi), the first by
    right index then left index on ties; (0, 0, 0) without any) on many random span lists."""
    import random
    rng = random.Random(71)
    for _ in range(400):
        left = _random_tokens(rng, rng.randint(1, 7))
        right = _random_tokens(rng, rng.randint(1, 7), rng.choice([0, 0, 2, 4]))
        assert set(MP._runs(left, right)) == _maximal_runs(left, right), (left, right)
        assert len(MP._runs(left, right)) == len(_maximal_runs(left, right))
        lo, hi = sorted(rng.sample(range(0, 17), 2))

        def inside(t) -> bool:
            return lo <= t[1][0] and t[1][1] <= hi
        best = (0, 0, 0)
        for r in range(len(right)):
            for l in range(len(left)):
                n = _run_length(left, right, l, r, inside)
                best = (l, r, n) if n > best[2] else best
        assert MP._match(left, right, lo, hi) == best, (left, right, lo, hi)


def test_lemma_7_1_counts_its_qualifying_runs() -> None:
    """The passing verdict counts every prefix t^l_{i1..i1+j} of a maximal run whose text is longer
    than T, computed here from the brute-force runs (one prefix is exactly T long: not counted;
    one is longer than T only when measured from the run's first character, "a" ending it)."""
    eng = load_engine("hf:bert-base-uncased")
    s1, so, s2 = "the cat ", "sat on the mat and a dog sat on", " the log"
    left, right = _toks(eng, s1 + so), _toks(eng, so + s2, len(s1))
    t_max = MP.max_token_chars(eng)
    lengths = [left[i1 + j][1][1] - left[i1][1][0] for i1, _, k in _maximal_runs(left, right) for j in range(k)]
    assert t_max in lengths      # the boundary case is present
    want = sum(n > t_max for n in lengths)
    v = MP.lopt_lemma_7_1(eng, s1, so, s2)
    _holding(v, f"{want} qualifying runs")
    assert v.explanation.startswith(f"{want} ")


def test_lemma_7_3_from_the_first_token() -> None:
    eng = load_engine("hf:bert-base-uncased")
    _holding(MP.lopt_lemma_7_3(eng, "the cat sat", 1, 2), "tokens 1..2", "F(S[0:7])")
    v = MP.lopt_lemma_7_3(eng, "the cat sat", 1, 1)
    _holding(v, "vacuous")


def test_published_statement_failures_name_the_statement() -> None:
    for name, words in (("merge.lopt_theorem_4_1", "Theorem 4.1's premise holds (every n_i > 0) but T != Tokenizer(S)"),
                        ("merge.lopt_lemma_7_1", "Lemma 7.1's premise holds but F(S) differs"),
                        ("merge.lopt_lemma_7_3", "F of the tokens' text is not the tokens")):
        claim = CLAIMS[name]
        v = claim.check(**claim.counterexample)
        assert not v.holds and words in v.explanation, (name, v.explanation)


def test_chunk_spans_of_an_empty_text_is_one_empty_chunk() -> None:
    """LoPT eq. 1 gives no chunk for n = 0; the statements then encode one empty chunk at 0."""
    assert MP._chunk_spans(0, 5, 3) == [(0, 0)]
    assert MP._chunk_spans(7, 3, 2) == [(0, 5), (3, 7), (6, 7)]


def test_monotone_cover_allows_overlap_and_a_cluster_before_more_text() -> None:
    """Overlapping spans are not a step back (tokens of one normalized character share its
    originals: same span, or a later start with the same end); a reordered cluster may be followed
    by more text (the cluster is the span pair's range, not the rest of the text)."""
    _holding(O.prop_monotone_cover("ab", [(0, 2), (0, 2)]), "2 ordered spans")
    _holding(O.prop_monotone_cover("ab", [(0, 2), (1, 2)]), "2 ordered spans")
    _holding(O.prop_monotone_cover("e\u0301\u0327x", [(0, 3), (1, 2), (3, 4)]), "3 ordered spans")


def test_sound_cuts_are_the_positions_of_definition_m1() -> None:
    """A rule that holds everywhere cuts at every position 0 < c < len(S) (Definition M1's cuts),
    never at 0: the verdict is that of pieces_equation on exactly those cuts, witness included."""
    eng = load_engine("hf:bert-base-uncased")
    text = "hello"
    v = M.sound_cuts_theorem(eng, text, lambda t, c: True)
    assert v == MC.pieces_equation(eng, text, list(range(1, len(text))))
    assert _failing(v, {"text", "cuts", "first_divergence", "serial", "merged"})["cuts"] == [1, 2, 3, 4]


def test_pieces_equation_on_a_pretokenizer_compares_spans_with_no_ids() -> None:
    """A pretokenizer engine's Encoding has ids None: Definition M1 still applies, token by span
    (an id-less token is (None, span)); a cut inside a pretoken fails with those tokens as witness."""
    eng = load_engine("pretok:cl100k_base")
    assert MC.pieces_equation(eng, "hello world", [5]).holds          # M2's rule: " world" starts a pretoken
    w = _failing(MC.pieces_equation(eng, "hello world", [2]), {"text", "cuts", "first_divergence", "serial", "merged"})
    assert w["first_divergence"] == 0
    assert w["serial"] == [(None, (0, 5)), (None, (5, 11))]
    assert w["merged"] == [(None, (0, 2)), (None, (2, 5)), (None, (5, 11))]
