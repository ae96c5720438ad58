"""Character offsets from token byte lengths: the one derivation every byte-level engine uses.

Convention (see ``tokspec._types``): a token with UTF-8 byte span ``[b0, b1)`` covers characters
from the one containing byte ``b0`` to the one containing byte ``b1 - 1`` inclusive; an empty token
(``b0 == b1``) gets the empty span at the character boundary at or before ``b0``.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from tokspec._types import Span

__all__ = ["byte_to_char_index", "char_offsets_from_byte_lengths", "char_offsets_from_byte_spans"]


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
    checks that), computed in bulk: this is on the hot path of every byte-level engine, where the
    per-character table costs more than the tokenizer itself. O(bytes) in numpy, O(tokens) in Python.
    """
    lens = np.fromiter(lengths, dtype=np.int64)
    ends = np.cumsum(lens)
    starts = ends - lens
    data = text.encode("utf-8")
    if len(data) == len(text):  # ASCII: byte index == character index
        return list(zip(starts.tolist(), ends.tolist()))
    table = _char_index_of_bytes(data)
    start_chars = table[starts]
    end_chars = np.where(lens > 0, table[np.maximum(ends - 1, 0)] + 1, start_chars)
    return list(zip(start_chars.tolist(), end_chars.tolist()))


def _char_index_of_bytes(data: bytes) -> np.ndarray:
    """``t[b]`` = index of the character containing byte ``b`` (plus ``t[len] = n_chars``):
    a byte starts a character unless it is a continuation byte ``0b10xxxxxx``."""
    arr = np.frombuffer(data, dtype=np.uint8)
    is_start = (arr & 0xC0) != 0x80
    table = np.empty(len(arr) + 1, dtype=np.int64)
    np.cumsum(is_start, out=table[:-1])
    table[:-1] -= 1
    table[-1] = int(is_start.sum())
    return table
