"""Byte-level BPE decoding over one flat byte table: ``decode(ids)`` with no Python object per token.

Relies on theorem D2 of :mod:`tokspec.spec.decode` (checked by ``prop_bytelevel_prefixes`` and D1 by
``prop_bytelevel_round_trip`` in tests/test_spec_decode.py): the decode of any id sequence is the
UTF-8 decoding, maximal invalid subparts replaced by one U+FFFD each, of the tokens' bytes joined.
So the tokens' bytes are gathered from one flat ``uint8`` table by numpy fancy indexing (ids ->
``[start, end)`` ranges -> one index array) and decoded once.

Invariant of :class:`FlatBytes`: token ``i``'s bytes are ``flat[at[i]:at[i + 1]]``; an id with
``at[i] == at[i + 1]`` and no special string is no token (decode raises UnknownIdError, a ValueError, naming it).
Cost: O(vocab bytes) to build, O(total bytes) per decode in numpy. Out of scope: HF/sentencepiece
decoders (the Unigram engines' decode is ``tokspec.fast.unigram_decode``).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from tokspec.fast._decode_errors import UnknownIdError

__all__ = ["FlatBytes", "UnknownIdError"]


class FlatBytes:
    """All token bytes in one array (module docstring); ``specials`` maps extra ids to strings."""

    def __init__(self, ranks: Mapping[bytes, int], specials: Mapping[str, int] | None = None) -> None:
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

    def decode(self, ids: list[int]) -> str:
        """The tokens' bytes joined, decoded with ``errors="replace"`` (theorem D2)."""
        arr = np.asarray(ids, dtype=np.int64).reshape(-1)
        if len(arr) and (arr.min() < 0 or arr.max() >= len(self.known) or not self.known[arr].all()):
            bad = next(int(i) for i in arr if not 0 <= i < len(self.known) or not self.known[i])
            raise UnknownIdError(f"id={bad!r} is no token of this vocabulary")
        starts, ends = self.at[arr], self.at[arr + 1]
        lengths = ends - starts
        # index of every byte: for token k, starts[k] + 0 .. lengths[k] - 1
        offsets = np.repeat(starts - np.concatenate(([0], np.cumsum(lengths)[:-1])), lengths)
        index = offsets + np.arange(int(lengths.sum()), dtype=np.int64)
        return self.flat[index].tobytes().decode("utf-8", errors="replace")
