"""reference/pretok_regex.py helpers: ``check_tiling`` reports the first index where spans stop
tiling a text (gap, overlap, empty span, uncovered end), and ``split`` defaults to the cl100k
pattern with Unicode 16.0 tables."""

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
