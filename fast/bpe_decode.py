"""Byte-level BPE decoding over one flat byte table: ``decode(ids)`` with no Python object per token.

Relies on theorem D2 of :mod:`tokspec.spec.decode` (checked by ``prop_bytelevel_prefixes`` and D1 by
``prop_bytelevel_round_trip`` in tests/test_spec_decode.py): the decode of any id sequence is the
UTF-8 decoding, maximal invalid subparts replaced by one U+FFFD each, of the tokens' bytes joined.
So the tokens' bytes are gathered from one flat ``uint8`` table by numpy fancy indexing (ids ->
``[start, end)`` ranges -> one index array) and decoded once.

Invariant of :class:`FlatBytes`: token ``i``'s bytes are ``flat[at[i]:at[i + 1]]``; an id with
``at[i] == at[i + 1]`` and no special string is no token (decode raises UnknownIdError, a
ValueError, naming it). Cost: O(vocab bytes) to build, O(total bytes) per decode in numpy. A numpy
call costs about 10 us whatever its size, more than the whole decode of a few tokens (decode
comparison calls decode on every short prefix of an encoding), so a list of at most :data:`SHORT`
Python ints is joined from a list of the tokens' ``bytes`` instead (one Python object per token,
built once): the same result, several times cheaper per call. Out of scope: HF/sentencepiece
decoders (the Unigram engines' decode is ``tokspec.fast.unigram_decode``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Protocol

import numpy as np

from tokspec.fast._decode_errors import UnknownIdError

__all__ = ["FlatBytes", "SHORT", "UnknownIdError"]

#: A list of at most this many Python ints takes the short path (module docstring).
SHORT = 64


class ByteIdPairs(Protocol):
    """What :class:`FlatBytes` reads: ``(token bytes, id)`` pairs from ``.items()`` (a rank mapping,
    or pairs where two ids share bytes)."""

    def items(self) -> Iterable[tuple[bytes, int]]: ...


class FlatBytes:
    """All token bytes in one array (module docstring); ``specials`` maps extra ids to strings."""

    def __init__(self, ranks: ByteIdPairs, specials: Mapping[str, int] | None = None) -> None:
        table = dict((i, t) for t, i in ranks.items())
        for s, i in (specials or {}).items():
            table.setdefault(i, s.encode("utf-8"))
        size = max(table, default=-1) + 1
        lengths = np.zeros(size, dtype=np.int64)
        for i, t in table.items():
            lengths[i] = len(t)
        self.at = np.zeros(size + 1, dtype=np.int64)
        np.cumsum(lengths, out=self.at[1:])
        self.flat = np.frombuffer(b"".join(table[i] if i in table else b"" for i in range(size)), dtype=np.uint8)
        self.known = np.zeros(size, dtype=bool)
        self.known[list(table)] = True
        self.n_vocab = int(np.argmin(np.append(self.known, False)))  # first id that is no token
        # the short path's table: each token's bytes, None for an id that is no token
        self._pieces = [table.get(i) for i in range(size)]

    def decode(self, ids: list[int]) -> str:
        """The tokens' bytes joined, decoded with ``errors="replace"`` (theorem D2)."""
        if type(ids) is list and len(ids) <= SHORT and all(type(i) is int for i in ids):
            return self._decode_short(ids)
        arr = np.asarray(ids, dtype=np.int64).reshape(-1)
        if len(arr) and (arr.min() < 0 or arr.max() >= len(self.known) or not self.known[arr].all()):
            bad = next(int(i) for i in arr if not 0 <= i < len(self.known) or not self.known[i])
            raise UnknownIdError(f"id={bad!r} is no token of this vocabulary")
        starts, ends = self.at[arr], self.at[arr + 1]
        lengths = ends - starts
        # index of every byte: for token k, starts[k] + 0 .. lengths[k] - 1
        offsets = np.repeat(starts - np.concatenate(([0], np.cumsum(lengths)[:-1])), lengths)
        index = offsets + np.arange(int(lengths.sum()), dtype=np.int64)
        text: str = self.flat[index].tobytes().decode("utf-8", errors="replace")
        return text

    def _decode_short(self, ids: list[int]) -> str:
        """:meth:`decode` of a few Python ints from per-token ``bytes`` (module docstring)."""
        pieces = self._pieces
        try:
            if ids and min(ids) < 0:
                raise IndexError  # a negative index would wrap around in Python
            return b"".join([pieces[i] for i in ids]).decode("utf-8", errors="replace")  # type: ignore[misc]  # None: TypeError
        except (IndexError, TypeError):  # out of range, or a hole (None)
            bad = next(i for i in ids if not 0 <= i < len(pieces) or pieces[i] is None)
            raise UnknownIdError(f"id={bad!r} is no token of this vocabulary") from None
