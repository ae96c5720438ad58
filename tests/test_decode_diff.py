"""Decode comparison and special tokens from text in ``tokspec diff`` (tokspec.decoding, tokspec.diff),
the special-token text source, and the two planted contract bugs with their clean twin."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tokspec import Encoder, Encoding, EngineInfo, load_engine
from tokspec.app.finder import Finder
from tokspec.app.special_text import SpecialTextSource, special_strings, special_texts, variants
from tokspec.decoding import (ALL_PREFIXES, RANDOM_SEQUENCES, SAMPLED, DecodeOutcome, decode_difference, decode_of, id_sequences, minimize_ids,
                              promoted_special, special_ids, vocab_size)
from tokspec.diff import compare, format_comparison, make_record
from tokspec.fuzz.authored_bugs import CLEAN_TWINS

BUGS = "tokspec.fuzz.authored_bugs:"


class _Toy(Encoder):
    """One token per character (id = code point); ``decoder`` is its decode, if any."""

    def __init__(self, name: str, decoder: Any = None, specials: dict[str, int] | None = None) -> None:
        self.info = EngineInfo(name, "tokenizer", "toy", "0", None)
        if decoder is not None:
            self.decode = decoder
        if specials is not None:
            self.special_tokens = lambda: dict(specials)

    def _encode(self, text: str) -> Encoding:
        return Encoding.of([ord(c) for c in text], [(i, i + 1) for i in range(len(text))])


def _chars(ids: list[int]) -> str:
    return "".join(map(chr, ids))


def test_decode_outcomes_agree_on_equal_text_or_both_errors() -> None:
    assert DecodeOutcome("a").same_as(DecodeOutcome("a")) and not DecodeOutcome("a").same_as(DecodeOutcome("b"))
    assert DecodeOutcome(None, "x").same_as(DecodeOutcome(None, "y"))
    assert not DecodeOutcome(None, "x").same_as(DecodeOutcome("a"))
    assert not DecodeOutcome("a").same_as(DecodeOutcome(None, "x"))


def test_decode_of_turns_raises_and_non_str_into_errors() -> None:
    def boom(ids: list[int]) -> str:
        raise SystemExit("bye\nnow")

    assert decode_of(_Toy("t", boom), [1]).error == "SystemExit: bye now"
    assert decode_of(_Toy("t", lambda ids: b"x"), [1]).error == "decode returned bytes, not str"
    assert decode_of(_Toy("t", _chars), [97, 98]) == DecodeOutcome("ab")


def test_optional_methods_are_read_defensively() -> None:
    plain = _Toy("t")
    assert special_ids(plain) == {} and vocab_size(plain) is None
    t = _Toy("t", _chars, {"<x>": 7})
    assert special_ids(t) == {7: "<x>"}
    t.n_vocab = 10  # type: ignore[attr-defined]
    assert vocab_size(t) == 10
    for bad in (0, -3, True, "10"):
        t.n_vocab = bad  # type: ignore[attr-defined]
        assert vocab_size(t) is None


def test_id_sequences_cover_whole_prefixes_slices_random_deterministically() -> None:
    ids = list(range(100, 200))
    seqs = list(id_sequences(ids, 5, n_vocab=50, specials=[7]))
    assert seqs == list(id_sequences(ids, 5, n_vocab=50, specials=[7]))
    assert seqs[0] == ("ids", tuple(ids))
    prefixes = [s for o, s in seqs if o == "prefix"]
    assert [len(p) for p in prefixes[:ALL_PREFIXES]] == list(range(1, ALL_PREFIXES + 1))
    assert len(prefixes) == ALL_PREFIXES + SAMPLED and len(set(prefixes)) == len(prefixes)
    assert all(tuple(ids[:len(p)]) == p for p in prefixes)
    slices = [s for o, s in seqs if o == "slice"]
    assert len(slices) == SAMPLED and all(s and 1 <= len(s) <= 16 for s in slices)
    randoms = [s for o, s in seqs if o == "random"]
    assert len(randoms) == RANDOM_SEQUENCES and all(i < 50 or i == 7 or 100 <= i < 200 for s in randoms for i in s)
    assert [o for o, _ in id_sequences([3], 1)] == ["ids"] + ["random"] * RANDOM_SEQUENCES
    assert [o for o, _ in id_sequences([], 1)] == ["ids"]


def test_minimize_ids_is_one_minimal() -> None:
    assert minimize_ids([5, 1, 9, 2, 9, 3], lambda s: 9 in s) == (9,)
    assert minimize_ids([1, 2, 3, 4], lambda s: 2 in s and 4 in s) == (2, 4)
    assert minimize_ids([1], lambda s: True) == (1,)


def test_compare_finds_decode_differences_minimized_and_recorded() -> None:
    a = _Toy("a", _chars)
    b = _Toy("b", lambda ids: _chars(ids).replace("x", ""))
    c = compare(a, b, "abxcd")
    assert c.classification == "decode differs" and c.decode is not None
    assert c.decode.ids == (ord("x"),) and c.decode.a.text == "x" and c.decode.b.text == ""
    record = make_record(a, b, c)
    assert record["decode"] == {"ids": [120], "origin": "ids", "a": {"text": "x"}, "b": {"text": ""}}
    assert "decode differs on ids [120]" in format_comparison(a, b, c)
    assert compare(a, _Toy("c", _chars), "abxcd").agree
    assert compare(a, _Toy("d"), "abxcd").agree  # no decode on one side: not compared
    assert decode_difference(a, _Toy("d"), "ab", [97]) is None


def test_special_token_from_text_class() -> None:
    a = _Toy("a", specials={"<x>": 999})

    class Promotes(_Toy):
        def _encode(self, text: str) -> Encoding:
            enc = super()._encode(text)
            return Encoding(tuple(999 if i == ord("!") else i for i in enc.ids or ()), enc.offsets)

    c = compare(Promotes("p"), a, "hi!")
    assert c.classification == "special token from text"
    assert promoted_special(a, a, [1, 999], [1, 999]) is False
    assert promoted_special(a, a, [1, 999], [1, 2]) is True
    assert promoted_special(_Toy("n"), _Toy("m"), [999], [1]) is False  # no table: no such class


def test_special_text_variants_and_source() -> None:
    tik = load_engine("tiktoken:cl100k_base")
    strings = special_strings(tik)
    assert strings[:5] == list(tik.special_tokens()) and "[MASK]" in strings and len(set(strings)) == len(strings)
    v = variants("<|endoftext|>")
    for must in ("<|endoftext|>", "<|endoftext|><|endoftext|>", "\u3000<|endoftext|>\u3000", "<|ENDOFTEXT|>",
                 "<|endoftext", "|endoftext|>", "<<|endoftext|>", "<|endoftext|>>", "word<|endoftext|>word"):
        assert must in v, must
    texts = special_texts(tik)
    assert len(texts) == len(set(texts)) and all(any(s in t for t in texts) for s in strings)
    src = SpecialTextSource(3, [tik])
    first = [src.text() for _ in range(20)]
    again = SpecialTextSource(3, [tik])
    assert first == [again.text() for _ in range(20)]
    assert sum(any(s[:4] in t for s in strings) for t in first) >= 15


@pytest.mark.parametrize("bug,cls", [("promotes_specials", "special token from text"),
                                     ("decode_drops_incomplete", "decode differs")])
def test_planted_contract_bugs_are_found_and_their_twin_is_clean(bug: str, cls: str) -> None:
    tik = load_engine("tiktoken:cl100k_base")
    planted, twin = load_engine(BUGS + bug), load_engine(CLEAN_TWINS[bug])
    finder = Finder(planted, tik, shrink_tests=200)
    texts = [("specials", t) for t in special_texts(planted, tik)] + [("text", "a🙂 b \U0001d538")]
    assert finder.replay(texts)
    assert finder.findings[0].comparison.classification == cls
    clean = Finder(twin, tik, shrink_tests=200)
    assert not clean.replay(texts) and not clean.findings


def test_tiktoken_decode_keeps_specials_and_hf_keeps_added_special_tokens() -> None:
    tik = load_engine("tiktoken:cl100k_base")
    assert tik.decode([100257, 15339]) == "<|endoftext|>hello"
    bert = load_engine("hf:bert-base-uncased")
    assert bert.decode([101, 7592, 102]) == "[CLS] hello [SEP]"
    assert list(bert.encode("[MASK]").ids) != [103]  # text mode: the string stays text


FINDINGS = Path(__file__).resolve().parent.parent / "corpora" / "production" / "decode_findings.json"


def test_stored_decode_findings_replay() -> None:
    """Disagreements between production decoders (corpora/production/decode_findings.json)."""
    findings = json.loads(FINDINGS.read_text(encoding="utf-8"))
    assert findings
    for f in findings:
        assert f["what"] and f["id"]
        outcomes = {}
        for name, stored in f["outputs"].items():
            engine = load_engine(name)
            call = getattr(engine, "library_decode", None) or engine.decode
            outcomes[name] = decode_of(_Toy("x", call), f["ids"])
            if "text" in stored:
                assert outcomes[name].text == stored["text"], (f["id"], name)
            elif "not_text" in stored:  # undefined behaviour (an out-of-bounds read): not the right text
                assert outcomes[name].text != stored["not_text"], (f["id"], name, outcomes[name])
            else:
                assert outcomes[name].error is not None and stored["error"] in outcomes[name].error, (f["id"], name)


def test_lopt_passes_decode_through() -> None:
    tik = load_engine("tiktoken:cl100k_base")
    lopt = load_engine("lopt:tiktoken:cl100k_base")
    assert lopt.decode([100257, 15339]) == tik.decode([100257, 15339])  # type: ignore[attr-defined]
    assert special_ids(lopt) == special_ids(tik) and vocab_size(lopt) == vocab_size(tik)
    assert compare(lopt, tik, "a🙂 <|endoftext|>").agree
    assert not hasattr(load_engine("lopt:pretok:cl100k_base"), "decode")
