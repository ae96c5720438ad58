"""reference/pretok_regex.py helpers: ``check_tiling`` reports the first index where spans stop
tiling a text (gap, overlap, empty span, uncovered end), and ``split`` defaults to the cl100k
pattern with Unicode 16.0 tables, and ``pin_unicode_16`` makes an escape match what HF's Oniguruma
(Unicode 16.0 tables) matches, for properties and classes beyond those of the production patterns."""

from __future__ import annotations

import pytest

from tokspec.reference.pretok_regex import check_tiling, compiled, split, split_with


@pytest.mark.parametrize("text, spans, first_bad", [
    ("abc", [(0, 1), (1, 3)], None),
    ("", [], None),
    ("abc", [(0, 3)], None),
    ("abc", [(1, 3)], 0),              # does not start at 0
    ("abc", [(0, 1), (2, 3)], 1),      # a gap
    ("abc", [(0, 2), (1, 3)], 2),      # an overlap
    ("abc", [(0, 0), (0, 3)], 0),      # an empty span
    ("abc", [(0, 1), (1, 1), (1, 3)], 1),
    ("abc", [(0, 2), (2, 1)], 2),      # a reversed span
    ("abc", [(0, 2)], 2),              # the end is not covered
    ("abc", [], 0),
    ("a", [(0, 2)], 2),                # past the end
])
def test_check_tiling_names_the_first_failure(text: str, spans: list[tuple[int, int]], first_bad: int | None) -> None:
    assert check_tiling(text, spans) == first_bad


def test_split_defaults_to_cl100k_with_unicode_16() -> None:
    text = "Hello 12345 world's\u088f\n\n x"  # U+088F is new in Unicode 17.0
    assert split(text) == split(text, "cl100k_base") == split(text, "cl100k_base", "16.0")
    assert split(text) == split_with(compiled("cl100k_base", "16.0"), text)
    assert split(text, "cl100k_base", "17.0") == split_with(compiled("cl100k_base", "17.0"), text)
    assert split(text) != split(text, "o200k_base")


def _probe_chars() -> list[str]:
    """The ends of every range new in Unicode 17.0, the code point whose category changed, and
    old characters of several categories (Lu, Ll, Lt, Lo, Nd, Zs, Cn in both versions)."""
    from tokspec.reference.pretok_regex import UNICODE17_CHANGED, UNICODE17_NEW
    ends = sorted({cp for lo, hi in UNICODE17_NEW for cp in (lo, hi)} | set(UNICODE17_CHANGED))
    return [chr(cp) for cp in ends] + ["a", "A", "\u01c5", "\u05d0", "1", " ", "\u0378", "_", "\u0300"]


@pytest.mark.parametrize("escape", [r"\p{LC}", r"\p{L}", r"\p{Lu}", r"\p{Ll}", r"\p{Lt}", r"\p{Lo}", r"\P{Ll}",
                                    r"\p{C}", r"\p{Cn}", r"\P{Cn}", r"\p{N}", r"\d", r"\D", r"\w", r"\W",
                                    r"\p{Latin}", r"\s"])
def test_pinned_escapes_match_what_oniguruma_matches(escape: str) -> None:
    """HF's Oniguruma has the Unicode 16.0 tables: the pinned escape matches the same characters."""
    from tokenizers import Regex, pre_tokenizers

    import regex

    from tokspec.reference.pretok_regex import pin_unicode_16
    pinned = regex.compile("(?-f)" + pin_unicode_16(escape), flags=regex.V1)
    removed = pre_tokenizers.Split(Regex(escape), "removed")
    for ch in _probe_chars():
        assert bool(pinned.fullmatch(ch)) == (removed.pre_tokenize_str(ch) == []), (escape, hex(ord(ch)))



def test_category_membership_agrees_with_the_regex_module() -> None:
    """``_in_category(c, p)``: does general category c belong to property p, as the regex module
    reads ``\\p{p}``? Checked on one character of every two-letter category. (``L&`` is left out:
    the regex module reads it as ``L``, not as ``LC``; no production pattern uses it.)"""
    import regex

    from tokspec.reference.pretok_regex import _GENERAL, _in_category
    categories = sorted(c for c in _GENERAL if len(c) == 2 and c not in ("LC", "L&"))
    for cat in categories:
        probe = regex.compile(rf"\p{{{cat}}}")
        ch = next(chr(cp) for cp in range(0x110000) if probe.fullmatch(chr(cp)))
        for prop in sorted(_GENERAL - {"L&"}):
            assert _in_category(cat, prop) == bool(regex.fullmatch(rf"\p{{{prop}}}", ch)), (cat, prop)


def test_pinned_l_ampersand_keeps_the_changed_letter() -> None:
    """U+0295 is Ll in Unicode 16.0 (Lo in 17.0): pinned, the cased-letter properties match it
    (``\\p{L&}``, which the regex module reads as any letter, matches it in both versions)."""
    import regex

    from tokspec.reference.pretok_regex import pin_unicode_16
    assert regex.fullmatch(r"\p{L&}", "\u0295") and not regex.fullmatch(r"\p{LC}", "\u0295")
    for escape in (r"\p{L&}", r"\p{LC}", r"\p{L}", r"\p{Ll}"):
        assert regex.compile(pin_unicode_16(escape), flags=regex.V1).fullmatch("\u0295"), escape
    assert not regex.compile(pin_unicode_16(r"\p{Lo}"), flags=regex.V1).fullmatch("\u0295")
