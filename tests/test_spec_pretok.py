"""Peek2's Table 1 checked cell by cell against the cl100k regex; regex span properties.

Representatives of each category are taken from the whole Unicode range (every 13th code point,
thinned to ~40 per category, plus every whitespace kind), so letters, numbers and 'other' from many scripts), with several right contexts.
"""

from __future__ import annotations

import functools
import sys

import pytest

from tokspec.spec import pretok as P


@functools.lru_cache(maxsize=1)
def _representatives() -> dict[int, list[str]]:
    seen: dict[int, list[str]] = {k: [] for k in range(7)}
    extra = [ord(c) for c in " '\r\n\t\x0b\x0c\x1c\x85\xa0\u1680\u2000\u2028\u2029\u202f\u3000"]
    for cp in [*range(0, sys.maxunicode + 1, 13), *extra]:
        if 0xD800 <= cp <= 0xDFFF:
            continue
        seen[P.peek_category(chr(cp))].append(chr(cp))
    return {k: sorted(set(v))[:: max(1, len(set(v)) // 40)] for k, v in seen.items()}


def test_pattern_is_read_from_tiktoken() -> None:
    pat = P.cl100k_pattern()
    assert pat.startswith("'(?i:[sdmt]|ll|ve|re)") and len(P._split_top_level(pat)) == 8


def test_categories() -> None:
    assert [P.peek_category(c) for c in " '\nAé\u3000٣!"] == [1, 2, 3, 4, 4, 5, 6, 0]
    assert P.peek_category("\x1c") == 0  # str.isspace() but not regex \s


def test_categories_of_every_ascii_character() -> None:
    """Section 3.1 on ASCII, from an independent statement: Unicode White_Space in ASCII is TAB..CR
    and the space; letters and digits are str's; the smaller sets (space, quote, CR/LF) first."""
    white_space = {"\t", "\n", "\x0b", "\x0c", "\r", " "}

    def category(c: str) -> int:
        special = {" ": 1, "'": 2, "\r": 3, "\n": 3}
        if c in special:
            return special[c]
        return 4 if c.isalpha() else 5 if c in white_space else 6 if c.isdigit() else 0
    assert {c: P.peek_category(c) for c in map(chr, range(128))} == {c: category(c) for c in map(chr, range(128))}


@pytest.mark.parametrize("k0", range(7))
def test_table_row_agrees_with_regex(k0: int) -> None:
    reps = _representatives()
    for k1 in range(7):
        for c0 in reps[k0]:
            for c1 in reps[k1][:8]:
                for rest in ("", "a", " ", "1", "\n", "'"):
                    v = P.prop_peek2_cell(c0, c1, rest)
                    assert v.holds, v.witness


@pytest.mark.parametrize("k0", range(7))
def test_end_of_text_uses_the_crlf_column(k0: int) -> None:
    for c0 in _representatives()[k0]:
        v = P.prop_peek2_end_of_text(c0)
        assert v.holds, v.witness


def test_cell_check_can_fail() -> None:
    """A wrong table entry is reported (the property is not vacuous)."""
    saved = P.PEEK2_TABLE
    try:
        P.PEEK2_TABLE = ((4,) * 7,) + saved[1:]  # type: ignore[misc]
        v = P.prop_peek2_cell("!", "!")
        assert not v.holds and v.witness == {"text": "!!", "cell": [0, 0], "table": 4, "regex": 3}
    finally:
        P.PEEK2_TABLE = saved  # type: ignore[misc]


def test_contraction_fallback_is_the_only_exception() -> None:
    assert P.cl100k_branch("'sx") == 0 and P.cl100k_branch("'x") == 1
    assert P.prop_peek2_cell("'", "x").holds and P.prop_peek2_cell("'", "ſ").holds  # ſ folds to s


def test_regex_spans_partition_and_equality() -> None:
    text = "It's 2024!  Hello\r\n\tworld"
    spans = P.regex_spans(P.cl100k_pattern(), text)
    assert P.prop_spans_partition(text, spans).holds
    assert not P.prop_spans_partition(text, spans[1:]).holds
    assert P.prop_spans_equal(text, spans, list(spans)).holds
    v = P.prop_spans_equal(text, spans[:1] + [(2, 5)] + spans[2:], spans)
    assert not v.holds and v.witness is not None and v.witness["first_diff"] == 1


def test_cl100k_branch_of_the_empty_text_is_refused() -> None:
    """Every alternative needs a character: an empty text has no branch (callers pass c0 + c1)."""
    with pytest.raises(AssertionError, match="^cl100k pattern matches nothing at the start of ''$"):
        P.cl100k_branch("")
