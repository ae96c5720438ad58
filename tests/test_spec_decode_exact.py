"""The round-trip properties D1-D4 (tokspec.spec.decode) verdict by verdict, on tiny engines written
here (no vocabulary: fast in interpreted mode, a mutation killer): each property's exact explanation,
witness and the prefix it stops at, so that a changed message, witness field, loop bound or scope
test is seen."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from tokspec.spec import decode as sd


@dataclass
class _Ids:
    ids: tuple[int, ...] | None


class _Engine:
    """``encode`` gives fixed ids (or one id per UTF-8 byte); ``decode`` is the given function."""

    def __init__(self, decode: Callable[[list[int]], str], ids: Sequence[int] | None = None, *,
                 none: bool = False) -> None:
        self.decode, self.fixed, self.none = decode, ids, none

    def encode(self, text: str) -> _Ids:
        if self.none:
            return _Ids(None)
        return _Ids(tuple(self.fixed) if self.fixed is not None else tuple(text.encode("utf-8")))


def _bytes_decode(ids: list[int]) -> str:
    return bytes(ids).decode("utf-8", errors="replace")


def _byte(i: int) -> bytes:
    return bytes([i])


def test_d1_verdicts_exactly() -> None:
    ok = sd.prop_bytelevel_round_trip(_Engine(_bytes_decode), "añ")
    assert ok.holds and ok.explanation == "D1: 3 tokens decode back to the text" and ok.witness is None
    bad = sd.prop_bytelevel_round_trip(_Engine(lambda ids: "x"), "ab")
    assert not bad.holds and bad.explanation == "D1: byte-level decode(encode(x)) differs from x"
    assert bad.witness == {"text": "ab", "ids": [97, 98], "decoded": "x"}
    seen: list[list[int]] = []
    none = sd.prop_bytelevel_round_trip(_Engine(lambda ids: seen.append(ids) or "", none=True), "")
    assert none.holds and none.explanation == "D1: 0 tokens decode back to the text" and seen == [[]]


def test_d2_verdicts_exactly() -> None:
    ok = sd.prop_bytelevel_prefixes(_Engine(_bytes_decode), "aé", _byte)
    assert ok.holds and ok.explanation == "D2: all 4 prefixes decode to a text prefix (+ U+FFFD at a cut)"
    assert ok.witness is None
    seen: list[list[int]] = []

    def logged(ids: list[int]) -> str:
        seen.append(list(ids))
        return _bytes_decode(ids)

    assert sd.prop_bytelevel_prefixes(_Engine(logged), "ab", _byte)
    assert seen == [[], [97], [97, 98]]  # every prefix, the empty and the whole one included
    none = sd.prop_bytelevel_prefixes(_Engine(lambda ids: "", none=True), "", _byte)
    assert none.holds and none.explanation == "D2: all 1 prefixes decode to a text prefix (+ U+FFFD at a cut)"


def test_d2_first_check_names_the_prefix() -> None:
    # wrong only on the whole id list: the last prefix must be checked
    last = sd.prop_bytelevel_prefixes(_Engine(lambda ids: "?" if len(ids) == 2 else _bytes_decode(ids)), "ab", _byte)
    assert not last.holds and last.explanation == "D2: a prefix decodes otherwise than its bytes with replacement"
    assert last.witness == {"text": "ab", "ids": [97, 98], "decoded": "?", "expected": "ab"}
    # wrong only on the empty prefix: the first must be checked too
    first = sd.prop_bytelevel_prefixes(_Engine(lambda ids: _bytes_decode(ids) if ids else "?"), "ab", _byte)
    assert not first.holds and first.witness == {"text": "ab", "ids": [], "decoded": "?", "expected": ""}
    # a cut character: the expected decode has one U+FFFD per maximal invalid subpart
    cut = sd.prop_bytelevel_prefixes(_Engine(lambda ids: bytes(ids).decode("utf-8", "ignore")), "é", _byte)
    assert cut.witness == {"text": "é", "ids": [0xC3], "decoded": "", "expected": "\ufffd"}


def test_d2_second_check_and_the_cut() -> None:
    # tokens whose bytes are right for their decode but not a prefix of the text
    pieces = {0: b"a", 1: b"x\xc3", 2: b"\xc3"}
    decode = lambda ids: b"".join(pieces[i] for i in ids).decode("utf-8", "replace")  # noqa: E731
    wrong = sd.prop_bytelevel_prefixes(_Engine(decode, [0, 1]), "a", pieces.__getitem__)
    assert not wrong.holds and wrong.explanation == "D2: a prefix's decode is not a prefix of the text plus one U+FFFD"
    assert wrong.witness == {"text": "a", "ids": [0, 1], "decoded": "ax\ufffd"}
    # one U+FFFD at the end is the cut, not text: allowed
    assert sd.prop_bytelevel_prefixes(_Engine(decode, [0, 2]), "a", pieces.__getitem__)
    # a U+FFFD not at the end is text that must be there
    assert not sd.prop_bytelevel_prefixes(_Engine(decode, [2, 0]), "a", pieces.__getitem__)
    assert sd.prop_bytelevel_prefixes(_Engine(decode, [2, 0]), "\ufffda", pieces.__getitem__)
    # without a U+FFFD at the end, the whole decode must be a prefix of the text
    pieces[3] = b"ax"
    assert not sd.prop_bytelevel_prefixes(_Engine(decode, [3]), "a", pieces.__getitem__)


def test_d3_verdicts_exactly() -> None:
    right = _Engine(lambda ids: "a b", [5, 6])
    ok = sd.prop_metaspace_round_trip(right, "a b", "\u2581a\u2581b", 0)
    assert ok.holds and ok.explanation == "D3: 2 tokens decode to the normalized text"
    bad = sd.prop_metaspace_round_trip(_Engine(lambda ids: " a b", [5, 6]), "a b", "\u2581a\u2581b", 0)
    assert not bad.holds and bad.explanation == "D3: decode(encode(x)) is not the normalized text"
    assert bad.witness == {"text": "a b", "ids": [5, 6], "decoded": " a b", "expected": "a b"}
    scope = "D3: out of scope (an unknown token, or a normalization starting with two markers)"
    unk = sd.prop_metaspace_round_trip(_Engine(lambda ids: "?", [5, 0]), "a", "\u2581a", 0)
    assert unk.holds and unk.explanation == scope
    two = sd.prop_metaspace_round_trip(_Engine(lambda ids: "?", [5]), " a", "\u2581\u2581a", 0)
    assert two.holds and two.explanation == scope
    # one marker, or two later on, is in scope
    assert not sd.prop_metaspace_round_trip(_Engine(lambda ids: "?", [5]), "a", "\u2581a\u2581\u2581", 0)
    assert not sd.prop_metaspace_round_trip(_Engine(lambda ids: "?", [5]), "a", "a\u2581\u2581", 0)
    none = sd.prop_metaspace_round_trip(_Engine(lambda ids: "", none=True), "", "", 0)
    assert none.holds and none.explanation == "D3: 0 tokens decode to the normalized text"


def test_expected_metaspace_exactly() -> None:
    assert sd.expected_metaspace("\u2581a\u2581b") == "a b"
    assert sd.expected_metaspace("  a") == " a" and sd.expected_metaspace("a ") == "a "
    assert sd.expected_metaspace("") == "" and sd.expected_metaspace("\u2581") == ""


def test_d4_verdicts_exactly() -> None:
    ok = sd.prop_wordpiece_round_trip(_Engine(lambda ids: "a, b", [1, 2, 3]), "A, b", ["a", ",", "b"], 100)
    assert ok.holds and ok.explanation == "D4: 3 words decode back"
    bad = sd.prop_wordpiece_round_trip(_Engine(lambda ids: "a , b", [1, 2, 3]), "a, b", ["a", ",", "b"], 100)
    assert not bad.holds and bad.explanation == "D4: decode(encode(x)) is not the normalized words joined"
    assert bad.witness == {"text": "a, b", "ids": [1, 2, 3], "decoded": "a , b", "expected": "a, b"}
    unk = sd.prop_wordpiece_round_trip(_Engine(lambda ids: "?", [100]), "x", ["x"], 100)
    assert unk.holds and unk.explanation == "D4: out of scope (an [UNK] token)"
    none = sd.prop_wordpiece_round_trip(_Engine(lambda ids: "", none=True), "", [], 100)
    assert none.holds and none.explanation == "D4: 0 words decode back"


def test_expected_wordpiece_exactly() -> None:
    assert sd.expected_wordpiece(["a", ".", "b", "?", "c", "!", "d", ",", "e"]) == "a. b? c! d, e"
    assert sd.expected_wordpiece([",", "a"]) == ", a" and sd.expected_wordpiece(["a", "b"]) == "a b"
    assert sd.expected_wordpiece(["a", ";", "'"]) == "a ; '" and sd.expected_wordpiece(["x"]) == "x"
    assert sd.CLEANUP_WORDS == frozenset({".", "?", "!", ","})


def test_exports() -> None:
    names: Any = sd.__all__
    assert sorted(names) == sorted(["prop_bytelevel_round_trip", "prop_bytelevel_prefixes",
                                    "prop_metaspace_round_trip", "prop_wordpiece_round_trip",
                                    "expected_wordpiece", "expected_metaspace", "CLEANUP_WORDS"])
