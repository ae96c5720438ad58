"""Causes of the contract classes "decode differs" and "special token from text" (issue 25):
named in the field's words, keyed by kind and side so one bug on many inputs is one cause."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from tokspec import load_engine
from tokspec.cluster import Clusters, cause_of
from tokspec.decoding import DecodeDifference, DecodeOutcome
from tokspec.diff import compare

ME = "tokspec.fuzz.authored_bugs:"


class _Engine:
    def __init__(self, name: str, specials: dict[str, int] | None = None) -> None:
        self.info = SimpleNamespace(name=name)
        self._specials = specials or {}

    def special_tokens(self) -> dict[str, int]:
        return dict(self._specials)


def _decode_case(ta: str | None, tb: str | None, ids: tuple[int, ...] = (5, 6),
                 specials: dict[str, int] | None = None) -> Any:
    a, b = _Engine("alpha", specials), _Engine("beta", specials)
    out = [DecodeOutcome(t) if t is not None else DecodeOutcome(None, "ValueError: bad id") for t in (ta, tb)]
    comparison = SimpleNamespace(classification="decode differs", text="x", index=None,
                                 decode=DecodeDifference(ids, out[0], out[1], "random"))
    return cause_of(a, b, comparison)  # type: ignore[arg-type]


@pytest.mark.parametrize("ta, tb, key, words", [
    (None, "ab", ("decode differs", "raises", "A", "ValueError"), "A (alpha) raises ValueError"),
    ("ab", None, ("decode differs", "raises", "B", "ValueError"), "B (beta) raises ValueError"),
    ("a", "a\ufffd", ("decode differs", "replacement", "A", True), "A (alpha) drops the bytes where the other writes 1"),
    ("a\ufffd\ufffd", "a\ufffd", ("decode differs", "replacement", "B", False), "B (beta) writes 1 U+FFFD where the other writes 2"),
    ("a<0xEA>", "a\u00ea", ("decode differs", "byte pieces", "A"), "A (alpha) shows byte-fallback pieces"),
    ("ab", "a<0x62>", ("decode differs", "byte pieces", "B"), "B (beta) shows byte-fallback"),
    ("un ##able", "unable", ("decode differs", "wordpiece joining", "A"), "A (alpha) keeps '##'"),
    ("unable", "un##able", ("decode differs", "wordpiece joining", "B"), "B (beta) keeps '##'"),
    ("\u2581hi", " hi", ("decode differs", "metaspace", "A"), "A (alpha) shows U+2581"),
    (" hi", "\u2581hi", ("decode differs", "metaspace", "B"), "B (beta) shows U+2581"),
    (" hi there", "hi there", ("decode differs", "leading space", "A"), "A (alpha) keeps a leading space"),
    ("hi", "\u2581hi", ("decode differs", "leading space", "B"), "B (beta) keeps a leading space"),
    ("hi there", "hi  there", ("decode differs", "joining spaces"), "spaces between tokens"),
    ("un able", "unable", ("decode differs", "joining spaces"), "joining rule"),
    ("ab\u00e9", "abe", ("decode differs", "at", "non-ASCII letter", "Ll"), "part at non-ASCII letter U+00E9"),
    ("abc", "ab", ("decode differs", "at", "letter", "Ll"), "part at letter U+0063"),
    ("ab", "abc", ("decode differs", "at", "letter", "Ll"), "part at letter U+0063"),
])
def test_decode_cause_names_the_rule(ta: str | None, tb: str | None, key: tuple[Any, ...], words: str) -> None:
    cause = _decode_case(ta, tb)
    assert cause.key == key
    assert words in cause.name and cause.name.startswith("decode differs: ")
    assert cause.classification == "decode differs"


def test_decode_cause_special_kept_and_its_side() -> None:
    specials = {"<|eot|>": 7}
    kept = _decode_case("a<|eot|>", "a", ids=(5, 7), specials=specials)
    assert kept.key == ("decode differs", "special kept", "A") and "'<|eot|>'" in kept.name
    other = _decode_case("a", "a<|eot|>", ids=(5, 7), specials=specials)
    assert other.key == ("decode differs", "special kept", "B")
    # the special's id is not in the sequence: its text is just text, the rule does not apply
    assert _decode_case("a<|eot|>", "a", ids=(5, 6), specials=specials).key[1] != "special kept"


def test_decode_cause_pivot_and_category() -> None:
    cause = _decode_case("a", "a\ufffd")
    assert cause.pivot == "\ufffd" and cause.category == "So"
    assert _decode_case("<0x41>", "A").pivot is None and _decode_case("<0x41>", "A").category is None
    assert _decode_case("x", "y").pivot == "x"  # the first character where the decodes part


def test_decode_cause_of_a_record_without_its_difference() -> None:
    comparison = SimpleNamespace(classification="decode differs", text="x", index=None, decode=None)
    cause = cause_of(_Engine("a"), _Engine("b"), comparison)  # type: ignore[arg-type]
    assert cause.key == ("decode differs",) and cause.name == "decode differs"


def _special_case(ids_a: list[int], ids_b: list[int], text: str) -> Any:
    specials = {"<|endoftext|>": 100257, "<|fim_prefix|>": 100258}
    arrays = [SimpleNamespace(ids=np.array(ids, dtype=np.int64)) for ids in (ids_a, ids_b)]
    comparison = SimpleNamespace(classification="special token from text", text=text, index=0, decode=None,
                                 a=SimpleNamespace(arrays=arrays[0]), b=SimpleNamespace(arrays=arrays[1]))
    return cause_of(_Engine("alpha", specials), _Engine("beta", {}), comparison)  # type: ignore[arg-type]


def test_special_cause_side_and_verbatim_or_near_miss() -> None:
    verbatim = _special_case([1, 100257, 2], [1, 27, 91, 2], "a<|endoftext|>b")
    assert verbatim.key == ("special token from text", "A", "verbatim")
    assert "A (alpha)" in verbatim.name and "'<|endoftext|>'" in verbatim.name and "100257" in verbatim.name
    assert "security finding" in verbatim.name and verbatim.pivot == "<"
    near = _special_case([1, 2], [1, 100258, 2], "a<|FIM_PREFIX|>b")
    assert near.key == ("special token from text", "B", "near miss") and "near miss" in near.name
    assert "B (beta)" in near.name
    neither = _special_case([1], [1], "a")
    assert neither.key == ("special token from text",) and "injection" in neither.name


def test_planted_contract_bugs_are_one_cause_each_against_tiktoken() -> None:
    tk = load_engine("tiktoken:cl100k_base")
    promotes, drops = load_engine(ME + "promotes_specials"), load_engine(ME + "decode_drops_incomplete")
    clusters = Clusters()
    for text in ("hi <|endoftext|> x", "<|fim_prefix|>a", "x<|endofprompt|>"):
        c = compare(promotes, tk, text)
        assert c.classification == "special token from text"
        clusters.add(cause_of(promotes, tk, c))
    for text in ("你好 🙂 ꙮ", "🙂🙂🙂 ok"):
        c = compare(drops, tk, text)
        assert c.classification == "decode differs"
        clusters.add(cause_of(drops, tk, c))
    assert clusters.summary() == "5 findings in 2 causes"
    names = list(clusters.names.values())
    assert "special-token injection" in names[0] and "drops the bytes" in names[1]
