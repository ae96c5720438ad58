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


# --- array form: compiled kernels ---------------------------------------------------------------

import random  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from tokspec._jit import interpreted  # noqa: E402
from tokspec._offsets import (  # noqa: E402
    _spans_of_byte_spans,
    _spans_of_lengths,
    char_spans_from_byte_lengths,
    char_spans_from_byte_spans,
    utf8_array,
)


def numpy_oracle(text: str, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The convention computed another way: a byte -> character table by np.repeat of each
    character's UTF-8 length, gathered at each token's first and last byte."""
    widths = np.array([len(c.encode("utf-8")) for c in text], dtype=np.int64)
    table = np.append(np.repeat(np.arange(len(text)), widths), len(text))
    ends_b = np.cumsum(lengths)
    starts_b = ends_b - lengths
    starts = table[starts_b]
    ends = np.where(lengths > 0, table[np.maximum(ends_b - 1, 0)] + 1, starts)
    return starts, ends


def random_unicode(rng: random.Random, n: int) -> str:
    """Text mixing ASCII, 2-, 3- and 4-byte characters, controls and marks (no surrogates)."""
    pools = [(0x20, 0x7E), (0x00, 0x1F), (0x80, 0x7FF), (0x800, 0xD7FF), (0xE000, 0xFFFF),
             (0x10000, 0x10FFFF)]
    return "".join(chr(rng.randint(*rng.choice(pools))) for _ in range(n))


def random_cuts(rng: random.Random, total: int, max_len: int = 9) -> np.ndarray:
    lengths, used = [], 0
    while used < total:
        n = min(rng.randint(0, max_len), total - used)
        lengths.append(n)
        used += n
    return np.array(lengths, dtype=np.int64)


@given(st.text(), st.randoms(use_true_random=False))
def test_hyp_array_spans_equal_list_form_and_interpreted(text: str, rng: random.Random) -> None:
    """Array form == list form == the interpreted kernels, for any partition and any spans."""
    data = utf8_array(text)
    lengths = random_cuts(rng, len(data))
    starts, ends = char_spans_from_byte_lengths(text, lengths)
    assert list(zip(starts.tolist(), ends.tolist())) == char_offsets_from_byte_lengths(text, lengths.tolist())
    py_s, py_e = interpreted(_spans_of_lengths)(data, lengths)
    c_s, c_e = _spans_of_lengths(data, lengths)
    assert np.array_equal(py_s, c_s) and np.array_equal(py_e, c_e)
    b0 = np.array([rng.randint(0, len(data)) for _ in range(10)], dtype=np.int64)
    b1 = np.array([rng.randint(int(b), len(data)) for b in b0], dtype=np.int64)
    spans = char_spans_from_byte_spans(text, b0, b1)
    assert list(zip(*(a.tolist() for a in spans))) == char_offsets_from_byte_spans(text, zip(b0.tolist(), b1.tolist()))
    py = interpreted(_spans_of_byte_spans)(data, b0, b1)
    assert all(np.array_equal(x, y) for x, y in zip(py, spans))


@pytest.mark.parametrize("kind", ["mixed", "cjk", "ascii"])
def test_long_text_array_spans_equal_numpy_oracle(kind: str) -> None:
    """>= 1 MB of text: the compiled kernel equals an independent numpy derivation."""
    rng = random.Random(kind)
    if kind == "mixed":
        text = random_unicode(rng, 450_000)
    elif kind == "cjk":
        text = "".join(chr(rng.randint(0x4E00, 0x9FFF)) for _ in range(350_000))
    else:
        text = "".join(rng.choice("abc de\n") for _ in range(1_050_000))
    assert len(text.encode("utf-8")) >= 1_000_000
    lengths = random_cuts(rng, len(text.encode("utf-8")))
    starts, ends = char_spans_from_byte_lengths(text, lengths)
    o_s, o_e = numpy_oracle(text, lengths)
    assert np.array_equal(starts, o_s) and np.array_equal(ends, o_e)


def test_bad_lengths_are_a_value_error() -> None:
    with pytest.raises(ValueError, match="add up"):
        char_spans_from_byte_lengths("ab", np.array([2, 1]))
    with pytest.raises(ValueError, match=">= 0"):
        char_spans_from_byte_lengths("ab", np.array([3, -1]))
    with pytest.raises(ValueError, match="within"):
        char_spans_from_byte_spans("ab", np.array([0]), np.array([3]))
