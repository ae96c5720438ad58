"""Character offsets from token byte lengths: the one derivation every byte-level engine uses.

Convention (see ``tokspec._types``): a token with UTF-8 byte span ``[b0, b1)`` covers characters
from the one containing byte ``b0`` to the one containing byte ``b1 - 1`` inclusive; an empty token
(``b0 == b1``) gets the empty span at the character boundary at or before ``b0``.

Two forms of each derivation: the list form (``char_offsets_from_*``, tuples, for the reference
layer and small inputs) and the array form (``char_spans_from_*``, int64 numpy arrays computed by
compiled :func:`tokspec._jit.kernel` code, no Python object per token: the hot path of every
production adapter and fast engine). Both give the same spans (tests/test_offsets.py checks them
against a slow oracle, and compiled against interpreted).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from tokspec._jit import kernel
from tokspec._types import Span

__all__ = ["byte_to_char_index", "char_offsets_from_byte_lengths", "char_offsets_from_byte_spans",
           "char_spans_from_byte_lengths", "char_spans_from_byte_spans", "utf8_array"]


def byte_to_char_index(text: str) -> list[int]:
    """``table[b]`` is the index of the character containing UTF-8 byte ``b`` of ``text``.

    The table has one extra entry, ``table[len(utf8)] == len(text)``. O(bytes).
    """
    table: list[int] = []
    for i, ch in enumerate(text):
        table.extend([i] * len(ch.encode("utf-8")))
    table.append(len(text))
    return table


def char_offsets_from_byte_spans(text: str, spans: Iterable[tuple[int, int]]) -> list[Span]:
    """Map UTF-8 byte spans of ``text`` to character spans by the module's convention."""
    table = byte_to_char_index(text)
    out: list[Span] = []
    for b0, b1 in spans:
        if b1 <= b0:
            out.append((table[b0], table[b0]))
        else:
            out.append((table[b0], table[b1 - 1] + 1))
    return out


def char_offsets_from_byte_lengths(text: str, lengths: Iterable[int]) -> list[Span]:
    """Character spans of consecutive tokens whose UTF-8 byte lengths are ``lengths``.

    The lengths must add up to at most ``len(text.encode())``; tokens are laid end to end from byte 0.
    Same result as :func:`char_offsets_from_byte_spans` over the running sums (tests/test_offsets.py
    checks that); the list form of :func:`char_spans_from_byte_lengths`. O(bytes) compiled,
    O(tokens) to build the tuples.
    """
    starts, ends = char_spans_from_byte_lengths(text, np.fromiter(lengths, dtype=np.int64))
    return list(zip(starts.tolist(), ends.tolist()))


def utf8_array(text: str | bytes) -> np.ndarray:
    """The UTF-8 bytes of ``text`` as a uint8 array (a view when given bytes). O(bytes) in C."""
    data = text.encode("utf-8") if isinstance(text, str) else text
    return np.frombuffer(data, dtype=np.uint8)


def char_spans_from_byte_lengths(text: str | bytes, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Array form of :func:`char_offsets_from_byte_lengths`: ``(starts, ends)`` int64 arrays.

    ``text`` is the str or its UTF-8 bytes; ``lengths`` any integer array (non-negative, adding up
    to at most the byte length; ValueError otherwise). ASCII text needs no table (byte index ==
    character index: running sums); otherwise one compiled pass over the bytes the tokens cover.
    O(bytes), no Python object per token.
    """
    data = utf8_array(text)
    lens = np.ascontiguousarray(lengths, dtype=np.int64)
    if len(lens) and (int(lens.min()) < 0 or int(lens.sum()) > len(data)):
        raise ValueError(f"token byte lengths must be >= 0 and add up to at most {len(data)} bytes "
                         f"(got sum {int(lens.sum())}, min {int(lens.min())})")
    if isinstance(text, str) and len(data) == len(text):  # ASCII
        ends = np.cumsum(lens)
        return ends - lens, ends
    return _spans_of_lengths(data, lens)


def char_spans_from_byte_spans(text: str | bytes, b0: np.ndarray, b1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Array form of :func:`char_offsets_from_byte_spans` for spans ``[b0[i], b1[i])`` (each within
    the text's bytes; ValueError otherwise). O(bytes + tokens) compiled."""
    data = utf8_array(text)
    b0 = np.ascontiguousarray(b0, dtype=np.int64)
    b1 = np.ascontiguousarray(b1, dtype=np.int64)
    if len(b0) != len(b1) or (len(b0) and (int(b0.min()) < 0 or int(b0.max()) > len(data)
                                         or int(b1.max()) > len(data))):
        raise ValueError(f"byte spans must lie within the text's {len(data)} bytes")
    return _spans_of_byte_spans(data, b0, b1)


@kernel
def _spans_of_lengths(data: np.ndarray, lens: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Tokens laid end to end over ``data`` (UTF-8) with byte lengths ``lens`` -> char spans.

    ``cur`` counts the character-start bytes (not ``0b10xxxxxx``) in ``data[:b]``, so the
    character holding byte ``b`` is ``cur + is_start(data[b]) - 1`` and a token ending at byte
    ``b1`` ends one past character ``cur - 1``. One pass over the covered bytes: O(bytes + tokens).
    """
    n = len(lens)
    starts = np.empty(n, dtype=np.int64)
    ends = np.empty(n, dtype=np.int64)
    b = 0
    cur = 0
    size = len(data)
    for k in range(n):
        if b < size:
            first = cur + (1 if (data[b] & 0xC0) != 0x80 else 0) - 1
        else:
            first = cur
        stop = b + lens[k]
        if stop == b:
            starts[k] = first
            ends[k] = first
            continue
        while b < stop:
            if (data[b] & 0xC0) != 0x80:
                cur += 1
            b += 1
        starts[k] = first
        ends[k] = cur
    return starts, ends


@kernel
def _spans_of_byte_spans(data: np.ndarray, b0: np.ndarray, b1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Arbitrary byte spans -> char spans through the byte -> character table. O(bytes + spans)."""
    size = len(data)
    table = np.empty(size + 1, dtype=np.int64)
    c = -1
    for b in range(size):
        if (data[b] & 0xC0) != 0x80:
            c += 1
        table[b] = c
    table[size] = c + 1
    n = len(b0)
    starts = np.empty(n, dtype=np.int64)
    ends = np.empty(n, dtype=np.int64)
    for k in range(n):
        starts[k] = table[b0[k]]
        ends[k] = table[b0[k]] if b1[k] <= b0[k] else table[b1[k] - 1] + 1
    return starts, ends
