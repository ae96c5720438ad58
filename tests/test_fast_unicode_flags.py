"""Peek2's per-code-point class flags (``tokspec.fast.peek2_unicode``) against independent oracles.

``flags()`` is derived once (``_derive_flags``: bulk removal of each class by HF ``tokenizers``'
``Split``) and cached on disk, so the engines never re-run the derivation. Here it is re-run and
checked for EVERY code point 0..0x10FFFF: against the ``regex`` module's classes (Unicode 17.0),
and, where the two Unicode versions disagree, against ``tokenizers`` probed one character at a time
(a different use of the 16.0 engine than the bulk derivation). The disagreements must be few and
all of the kind a newer Unicode brings. The on-disk/cached ``flags()`` must equal the derivation.
"""

from __future__ import annotations

import numpy as np
import pytest
import regex
from tokenizers import Regex, pre_tokenizers
from tokspec.fast import peek2_unicode as pu

# (bit, class) as the module documents them: letters, numbers, \s, upper (Lu Lt), lower (Ll), marks.
CLASSES = ((1, r"\p{L}"), (2, r"\p{N}"), (4, r"\s"), (8, r"[\p{Lu}\p{Lt}]"), (16, r"\p{Ll}"), (32, r"\p{M}"))
SURROGATES = range(0xD800, 0xE000)


def _all_text() -> tuple[str, np.ndarray]:
    """Every scalar value once, in order, and its code points (built here, not by the module)."""
    cps = [c for c in range(0x110000) if c not in SURROGATES]
    return "".join(map(chr, cps)), np.array(cps, dtype=np.int64)


def _regex_flags(text: str, cps: np.ndarray) -> np.ndarray:
    out = np.zeros(0x110000, dtype=np.uint8)
    for bit, prop in CLASSES:
        inside = np.zeros(len(text), dtype=bool)
        for m in regex.finditer(prop + "+", text):
            inside[m.start():m.end()] = True
        out[cps[inside]] |= bit
    return out


def _probe_one(ch: str) -> int:
    """The flags of one character, each class asked of ``tokenizers`` separately."""
    got = 0
    for bit, prop in CLASSES:
        split = pre_tokenizers.Split(Regex(prop), behavior="isolated")
        pieces = split.pre_tokenize_str(ch + "\x00")  # NUL is in none of the classes
        got |= bit if len(pieces) == 2 and pieces[0][0] == ch and pieces[1][0] == "\x00" else 0
        if len(pieces) == 1:  # ch and NUL stayed together: neither matched
            assert pieces[0][0] == ch + "\x00"
    return got


@pytest.fixture(scope="module")
def derived() -> np.ndarray:
    return pu._derive_flags()


def test_all_code_points_are_every_scalar_value_once() -> None:
    """The derivation's domain: 0..0x10FFFF without the surrogates (U+0000 and U+E000 included:
    no class holds them, so only this test notices if they go missing)."""
    _, cps = _all_text()
    got = pu._all_code_points()
    assert got.dtype == np.dtype("<u4") and np.array_equal(got, cps)
    assert pu._all_chars() == got.tobytes().decode("utf-32-le")


def test_derived_flags_shape(derived: np.ndarray) -> None:
    assert derived.shape == (0x110000,) and derived.dtype == np.uint8
    assert not derived[0xD800:0xE000].any(), "surrogates carry no class"


def test_derived_flags_equal_the_oracles_on_every_code_point(derived: np.ndarray) -> None:
    text, cps = _all_text()
    want17 = _regex_flags(text, cps)
    diff = np.flatnonzero(derived != want17)
    # Unicode 16.0 -> 17.0: ~4600 new letters and a few recategorised characters; nothing else.
    assert 0 < len(diff) < 8000, f"{len(diff)} code points differ from the regex module's classes"
    for cp in diff.tolist():
        assert derived[cp] == _probe_one(chr(cp)), f"U+{cp:04X}: derived {derived[cp]}, tokenizers says otherwise"
    # every difference is Unicode 17 adding a class to a character 16.0 left unassigned or changed
    assert (want17[diff] != 0).all()


def test_spot_checks_independent_of_any_engine(derived: np.ndarray) -> None:
    """Stable facts (Unicode 1.1 .. 16.0 alike): each class bit, and several bits at once."""
    assert derived[ord("A")] == 1 | 8 and derived[ord("a")] == 1 | 16
    assert derived[ord("7")] == 2 and derived[ord(" ")] == 4 and derived[ord("\n")] == 4
    assert derived[0x01C5] == 1 | 8            # Lt: upper class
    assert derived[0x02B0] == 1                # Lm: neither upper nor lower
    assert derived[0x0301] == 32               # Mn
    assert derived[0x2167] == 2                # Nl
    assert derived[0] == 0 and derived[ord("!")] == 0 and derived[0x10FFFF] == 0
    assert derived[0x20000] == 1               # CJK extension B (a supplementary plane)


def test_cached_flags_equal_a_fresh_derivation(derived: np.ndarray) -> None:
    assert np.array_equal(pu.flags(), derived)


# -- the category tables, from the (cached, checked above) flags, by what each category means ------

def _bits(f: np.ndarray) -> dict[str, np.ndarray]:
    return {"L": (f & 1) != 0, "N": (f & 2) != 0, "WS": (f & 4) != 0, "UP": (f & 8) != 0,
            "LO": (f & 16) != 0, "M": (f & 32) != 0}


def _special(*chars: str) -> np.ndarray:
    out = np.zeros(0x110000, dtype=bool)
    out[[ord(c) for c in chars]] = True
    return out


def test_cl100k_categories_mean_their_classes() -> None:
    """Smaller sets take precedence: space, quote, CR/LF, then numbers over letters over \\s."""
    cat, b = pu.cl100k_category_table.__wrapped__(), _bits(pu.flags())
    assert cat.shape == (0x110000,) and cat.dtype == np.uint8
    space, quote, crlf = _special(" "), _special("'"), _special("\r", "\n")
    plain = ~(space | quote | crlf)
    expect = {pu.SPACE: space, pu.QUOTE: quote, pu.CRLF: crlf, pu.NUMBER: plain & b["N"],
              pu.LETTER: plain & b["L"] & ~b["N"], pu.WHITESPACE: plain & b["WS"] & ~b["L"] & ~b["N"],
              pu.OTHER: plain & ~b["WS"] & ~b["L"] & ~b["N"]}
    for c, mask in expect.items():
        assert np.array_equal(cat == c, mask), f"category {c}: {np.flatnonzero((cat == c) != mask)[:5]}"


def test_o200k_categories_mean_their_classes() -> None:
    cat, b = pu.o200k_category_table.__wrapped__(), _bits(pu.flags())
    assert cat.shape == (0x110000,) and cat.dtype == np.uint8
    space, crlf = _special(" "), _special("\r", "\n")
    plain = ~(space | crlf)
    letter = plain & b["L"] & ~b["N"]
    expect = {pu.O_SPACE: space, pu.O_CRLF: crlf, pu.O_NUMBER: plain & b["N"],
              pu.O_LO: letter & b["LO"], pu.O_UP: letter & b["UP"] & ~b["LO"],
              pu.O_BOTH: letter & ~b["UP"] & ~b["LO"],
              pu.O_MARK: plain & b["M"] & ~b["L"] & ~b["N"],
              pu.O_WS: plain & b["WS"] & ~b["M"] & ~b["L"] & ~b["N"],
              pu.O_OTHER: plain & ~b["WS"] & ~b["M"] & ~b["L"] & ~b["N"]}
    for c, mask in expect.items():
        assert np.array_equal(cat == c, mask), f"category {c}: {np.flatnonzero((cat == c) != mask)[:5]}"


def test_fold_table_is_every_case_fold_of_the_contraction_letters() -> None:
    cps, to = pu.fold_table.__wrapped__()
    text, _ = _all_text()
    want = sorted((ord(m.group()), ord(x)) for x in "sdmtlver" for m in regex.finditer(f"(?i:{x})", text))
    assert list(zip(cps.tolist(), to.tolist())) == want
    assert cps.dtype == to.dtype == np.int64
    assert (0x017F, ord("s")) in want and (0x212A, ord("k")) not in want  # long s; Kelvin is a k


def test_code_points_are_ord_of_each_character() -> None:
    text = "a\x00\u00e9\u4e2d\U0001f642\U0010ffff"
    got = pu.code_points(text)
    assert got.dtype == np.uint32 and got.tolist() == [ord(c) for c in text]
    assert pu.code_points("").tolist() == []
