"""tokspec._offsets: byte spans -> character spans, against a slow oracle written here."""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from tokspec._offsets import (
    byte_to_char_index,
    char_offsets_from_byte_lengths,
    char_offsets_from_byte_spans,
)


def oracle_char_of_byte(text: str, b: int) -> int:
    """The character containing byte ``b``: the last character whose first byte is <= b."""
    owner = 0
    for i in range(len(text) + 1):
        if len(text[:i].encode("utf-8")) <= b:
            owner = i
    return owner


@given(st.text(max_size=60))
@example("")
@example("a\u65e5\U0001f600\x00\u0301")
def test_hyp_byte_to_char_index(text: str) -> None:
    table = byte_to_char_index(text)
    n = len(text.encode("utf-8"))
    assert len(table) == n + 1 and table[n] == len(text)
    assert table[:n] == [oracle_char_of_byte(text, b) for b in range(n)]


@st.composite
def text_and_cuts(draw: st.DrawFn) -> tuple[str, list[int]]:
    """A text and token byte lengths that lay end to end over all or part of its UTF-8 bytes,
    cutting anywhere (inside multi-byte characters too), zero lengths included."""
    text = draw(st.text(max_size=30))
    n = len(text.encode("utf-8"))
    cuts = sorted(draw(st.lists(st.integers(0, n), max_size=12)))
    ends = cuts + [draw(st.integers(cuts[-1] if cuts else 0, n))]
    lengths, pos = [], 0
    for end in ends:
        lengths.append(end - pos)
        pos = end
    return text, lengths


@given(text_and_cuts())
@example(("\u65e5", [1, 1, 1]))
@example(("a\u65e5b", [2, 2, 1]))
@example(("\U0001f600", [0, 4, 0]))
def test_hyp_char_offsets_from_byte_lengths(case: tuple[str, list[int]]) -> None:
    text, lengths = case
    spans = char_offsets_from_byte_lengths(text, lengths)
    assert len(spans) == len(lengths)
    pos = 0
    for (s, e), n in zip(spans, lengths):
        if n == 0:  # empty token: empty span at the character boundary at or before pos
            owner = oracle_char_of_byte(text, pos) if pos < len(text.encode("utf-8")) else len(text)
            assert (s, e) == (owner, owner)
        else:  # characters holding its first and last byte, inclusive
            assert (s, e) == (oracle_char_of_byte(text, pos), oracle_char_of_byte(text, pos + n - 1) + 1)
            assert text[s:e].encode("utf-8").find(text.encode("utf-8")[pos:pos + n]) >= 0
        pos += n


@given(text_and_cuts())
def test_hyp_spans_agree_with_lengths(case: tuple[str, list[int]]) -> None:
    text, lengths = case
    spans, pos = [], 0
    for n in lengths:
        spans.append((pos, pos + n))
        pos += n
    assert char_offsets_from_byte_spans(text, spans) == char_offsets_from_byte_lengths(text, lengths)


@given(st.text(), st.lists(st.integers(0, 8), max_size=40))
def test_bulk_lengths_equal_plain_spans(text: str, cuts: list[int]) -> None:
    """The vectorized byte-lengths path equals the plain per-span definition, for any partition of
    the text's bytes (tokens inside characters and empty tokens included)."""
    total = len(text.encode("utf-8"))
    lengths, used = [], 0
    for c in cuts:
        n = min(c, total - used)
        lengths.append(n)
        used += n
    lengths.append(total - used)
    spans, pos = [], 0
    for n in lengths:
        spans.append((pos, pos + n))
        pos += n
    assert char_offsets_from_byte_lengths(text, lengths) == char_offsets_from_byte_spans(text, spans)
