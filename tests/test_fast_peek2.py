"""Peek2 (tokspec.fast.pretok_peek2) against the production patterns run by ``regex``.

Exactness = identical span lists. Also re-derives the seed's 7x7 branch table cell by cell from the
regex (which alternative matches first at position 0), including the end-of-text column the seed's
table leaves out; the result is pinned in ``corpora/fast/peek2-table/cl100k_table_check.json``.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest
import regex
from hypothesis import example, given
from hypothesis import strategies as st

from tokspec.corpus import build_corpus
from tokspec.errors import UnknownEngineError
from tokspec.fast import pretok_peek2 as p2
from tokspec.reference.pretok_regex import PATTERNS
from tokspec.reference.pretok_regex import split as regex_split

NAMES = list(p2.PATTERN_NAMES)
TABLE_FILE = Path(__file__).resolve().parent.parent / "corpora" / "fast" / "peek2-table" / "cl100k_table_check.json"

# Hand-picked characters from every class the patterns distinguish (and the traps between them).
TRICKY = (
    " '\r\n\t\x0b\x0c\x1c\x1f\x85\xa0\u1680\u2000\u2028\u2029\u202f\u3000\u200b\u180e"  # spaces
    "aAsSdDmMtTlLvVeErR\u017f\u212a"   # contraction letters, long s, Kelvin sign
    "\u01c5\u02b0\u4e2d\u00e9\u00c9\u03c9"  # Lt, Lm, Lo, Ll, Lu, Greek
    "\u0301\u0903\u20dd"               # Mn, Mc, Me
    "0159\u0663\u2167\u00bd\u0e53"     # Nd, Arabic-Indic, Nl, No, Thai
    "\u0295\U00018d80\u088f"            # Ll in Unicode 16 (Lo in 17), letters new in Unicode 17
    ".,!?/-\u2019\u00b4`\"_@#\U0001f642\u200d\x00"  # punctuation, symbols, emoji, NUL
)


def spans_regex(text: str, name: str) -> list[tuple[int, int]]:
    return [(s, e) for s, e in regex_split(text, name)]


def assert_same(text: str, name: str) -> None:
    got, want = p2.split(text, name), spans_regex(text, name)
    if got != want:
        k = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
        pytest.fail(f"{name} {text!r}: first difference at pretoken {k}: "
                    f"peek2={[text[s:e] for s, e in got[k:k + 2]]} regex={[text[s:e] for s, e in want[k:k + 2]]}")


@pytest.mark.parametrize("name", NAMES)
@given(text=st.text(alphabet=TRICKY, max_size=40))
@example(text="'D")
@example(text="'Does it work?' She asked.")
@example(text="I'LL  \n\n x")
def test_hyp_tricky_alphabet(name: str, text: str) -> None:
    assert_same(text, name)


@pytest.mark.parametrize("name", NAMES)
@given(text=st.text(max_size=30))
def test_hyp_any_text(name: str, text: str) -> None:
    assert_same(text, name)


@pytest.mark.parametrize("name", NAMES)
def test_adversarial_cases(name: str) -> None:
    cases = []
    for ws in (" ", "  ", "   ", "\t", " \t", "\u3000 ", "\xa0"):
        for nxt in ("a", "\n", "\r\n", "1", ".", "'s", "", " \n ", "\u0301"):
            cases.append("x" + ws + nxt)
            cases.append(ws + nxt)
    cases += ["1" * k + "a" for k in range(1, 9)] + ["\u0663" * k for k in range(1, 6)]
    for apo in ("'", "\u2019"):
        for c in ("s", "S", "\u017f", "t", "T", "d", "m", "ll", "LL", "lL", "ve", "VE", "re", "Re", "x", ""):
            cases += [f"it{apo}{c}", f"{apo}{c}", f" {apo}{c}x", f"IT{apo}{c}"]
    cases += ["e\u0301t\u0301\u0301", "\u0301\u0301a", "A\u0301B", ".\u0301", "HelloWorld", "ABCdef",
              "\u01c5a", "a\u02b0A", "x/\n//y", " ./\n", "\u212a's"]
    for text in cases:
        assert_same(text, name)


@pytest.mark.parametrize("name", NAMES)
def test_corpus(name: str) -> None:
    for text in build_corpus(seed=2):
        assert_same(text, name)


def test_unknown_pattern_is_named_error() -> None:
    with pytest.raises(UnknownEngineError, match="r50k_base"):
        p2.split("x", "r50k_base")


def test_unicode_16_tables_as_tiktoken() -> None:
    """Classes follow Unicode 16.0 (tiktoken, HF, the pinned reference), not the regex module's 17.0."""
    o200k = p2._o200k_category_table()
    assert o200k[0x0295] == p2.O_LO                   # Ll in 16.0, Lo in 17.0
    assert p2.categories("\U00018d80\u088f").tolist() == [p2.OTHER, p2.OTHER]  # unassigned in 16.0
    for name in NAMES:
        assert_same("a\u0295A \u0295\u0295B x\U00018d80y \u088f", name)


def test_whitespace_class_is_the_regex_one_not_str_isspace() -> None:
    # U+001C is str.isspace() but not \s (Unicode White_Space): a Peek2 built on isspace would differ.
    assert "\x1c".isspace() and not regex.match(r"\s", "\x1c")
    assert p2.categories("\x1c")[0] == p2.OTHER
    assert_same("\x1ca \x1c\x1c b", "cl100k_base")


# -- the seed's table, re-derived -----------------------------------------------------------------

def _branch_regex(name: str) -> regex.Pattern[str]:
    """The production pattern with each alternative in a named group (whitespace ones merged)."""
    alts = regex.split(r"\|(?![^(]*\))", PATTERNS[name])  # split at top-level bars
    groups = [f"(?P<b{min(k, 4)}_{k}>{alt})" for k, alt in enumerate(alts)]
    compiled = regex.compile("|".join(groups))
    assert compiled.pattern.count("(?P<") == len(alts)
    return compiled


def _first_branch(pat: regex.Pattern[str], text: str) -> int:
    m = pat.match(text)
    assert m is not None and m.lastgroup is not None
    return int(m.lastgroup[1])


def _representatives(rng: random.Random) -> dict[int, list[str]]:
    table = p2._cl100k_category_table()
    reps: dict[int, list[str]] = {}
    for c in range(7):
        cps = np.flatnonzero(table == c)
        cps = cps[(cps < 0xD800) | (cps > 0xDFFF)]
        picks = list(cps[:12]) + [cps[rng.randrange(len(cps))] for _ in range(20)]
        reps[c] = sorted({chr(int(cp)) for cp in picks} | ({"s", "L", "x", "\u017f"} if c == 4 else set()))
    return reps


def derive_table(name: str) -> dict[str, object]:
    """For every (first, second-or-end) category pair: the branches the regex takes, on witnesses."""
    pat = _branch_regex(name)
    reps = _representatives(random.Random(0))
    cells: dict[str, object] = {}
    for c0 in range(7):
        for c1 in list(range(7)) + ["end"]:
            seen: dict[int, str] = {}
            for a in reps[c0]:
                for b in (reps[c1] if c1 != "end" else [""]):
                    for tail in ("", "l", "e", " ", "1", "\n"):
                        seen.setdefault(_first_branch(pat, a + b + (tail if b else "")), a + b + tail)
            cells[f"{c0},{c1}"] = {"paper": p2.CL100K_TABLE[c0][c1 if c1 != "end" else p2.CRLF],
                                   "regex_branches": {str(k): v for k, v in sorted(seen.items())}}
    return cells


@pytest.mark.parametrize("name", ["cl100k_base", "llama3", "qwen2"])
def test_seed_table_every_cell(name: str) -> None:
    """Each cell's branch is what the regex takes first; the contraction cell may fall back to 1."""
    cells = derive_table(name)
    for key, cell in cells.items():
        assert isinstance(cell, dict)
        branches = {int(b) for b in cell["regex_branches"]}
        allowed = {0, 1} if cell["paper"] == 0 else {cell["paper"]}
        assert branches <= allowed and cell["paper"] in branches, (name, key, cell)
    if name == "cl100k_base":
        pinned = json.loads(TABLE_FILE.read_text(encoding="utf-8"))
        assert {k: sorted(v["regex_branches"]) for k, v in pinned["cells"].items()} == \
               {k: sorted(v["regex_branches"]) for k, v in cells.items()}  # type: ignore[index]


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_stress_million_characters(name: str) -> None:
    """Opt-in (TOKSPEC_SLOW=1): a 1M-character text over the tricky alphabet, and long runs."""
    rng = random.Random(4)
    text = "".join(rng.choice(TRICKY) for _ in range(1_000_000))
    assert_same(text, name)
    for unit in (" ", "\n", "a", "1", "'s", " .", "\u0301"):
        assert_same(unit * 200_000 + "x", name)


# one character of each cl100k category: other, space, quote, CR/LF, letter, other whitespace, number
_EACH_CATEGORY = ["!", " ", "'", "\n", "x", "\t", "7"]


@pytest.mark.parametrize("name", ["cl100k_base", "llama3", "qwen2"])
def test_letter_runs_of_every_length_before_every_category(name: str) -> None:
    """The letters branch reads seven categories per 8-byte load (``_cl100k_kernel``): runs of 0..30
    letters (multi-byte and non-Latin letters too), after each prefix that selects the branch, end
    before each category and at the end of text exactly where the regex ends them."""
    for letters in ("a", "\u00e9", "\u0416", "\u4e2d"):
        for length in range(31):
            run = "".join(letters if k % 3 else "b" for k in range(length))
            for prefix in ("", "x", " ", "!", "\u4e2d"):
                for after in [*_EACH_CATEGORY, ""]:
                    assert_same(prefix + run + after + "tail", name)
                    assert_same(prefix + run + after, name)


# one character of each o200k category: other, space, CR/LF, other whitespace, upper, lower, both
# (a letter neither upper nor lower), mark, number
_EACH_O200K_CATEGORY = ["!", " ", "\n", "\t", "X", "x", "\u4e2d", "\u0301", "7"]


def test_o200k_word_runs_of_every_length_before_every_category() -> None:
    """o200k's common word (a lower-case letter, then its run of lower, both and mark characters)
    reads seven categories per 8-byte load (``_o200k_kernel``): runs of 0..30 such characters end
    before each category and at the end of text exactly where the regex ends them."""
    for inner in ("a", "\u00e9", "\u4e2d", "\u0301", "b\u0301"):
        for length in range(31):
            run = "a" + "".join(inner if k % 2 else "c" for k in range(length))
            for prefix in ("", " ", "!", "X"):
                for after in [*_EACH_O200K_CATEGORY, "'s", ""]:
                    assert_same(prefix + run + after + "tail", "o200k_base")
                    assert_same(prefix + run + after, "o200k_base")
