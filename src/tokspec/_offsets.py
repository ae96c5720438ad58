"""Character offsets from token byte lengths: the one derivation every byte-level engine uses.

Convention (see ``tokspec._types``): a token with UTF-8 byte span ``[b0, b1)`` covers characters
from the one containing byte ``b0`` to the one containing byte ``b1 - 1`` inclusive; an empty token
(``b0 == b1``) gets the empty span at the character boundary at or before ``b0``.
"""

from __future__ import annotations

from collections.abc import Iterable

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
    """
    spans = []
    pos = 0
    for n in lengths:
        spans.append((pos, pos + n))
        pos += n
    return char_offsets_from_byte_spans(text, spans)
