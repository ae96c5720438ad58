"""Reference byte-level BPE with tiktoken semantics: the naive minimum-rank merge loop.

Definition (the seeds' Algorithm 1; tiktoken's ``_educational.bpe_encode``). A vocabulary is a map
``ranks: bytes -> int`` in which every single byte is a token; the rank is also the token id. To
encode one pretoken ``p`` (a byte string):

1. start from the list of its single bytes;
2. among adjacent pairs ``(a, b)`` whose concatenation ``a + b`` is a token, take the one with the
   smallest ``ranks[a + b]``; on a tie (the same token at several places) the leftmost;
3. replace that pair by ``a + b`` and repeat step 2 until no adjacent pair concatenates to a token.

A text is encoded by splitting it into pretokens with a regex (:mod:`tokspec.reference.pretok_regex`)
and encoding each pretoken alone. Invariants of the output of :func:`bpe_pieces`:

- B1 (lossless): ``b"".join(pieces) == p``.
- B2 (tokens): every piece is a key of ``ranks``.
- B3 (closed): no two adjacent pieces concatenate to a token of rank below ``max_rank``.
- B4 (whole pretoken): if ``p`` itself is a token, the result is ``[p]`` (tiktoken short-circuits
  this; it also follows from the loop when the vocabulary is merge-reachable, and the tests check
  that the short-circuit never changes the loop's answer on the real vocabularies).

``max_rank`` restricts the vocabulary to ranks below it; :mod:`bpe_merges_from_ranks` uses it to
find the pair a token is merged from.

Oracle speed note: the loop keeps a list of the ranks of adjacent pairs and updates the two
entries next to each merge, so one step is two C-level list scans (``min``, ``index``) instead of
re-hashing every pair. It is still the O(m^2) loop of the definition for a pretoken of m bytes
(worst case: long runs such as 10^4 spaces or one repeated letter); that is tiktoken's own choice
for pieces under 100 bytes, accepted here because this module is the oracle, not the fast path.

Out of scope: special tokens, normalization, offsets of characters (see :mod:`engines`).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping

import regex

from tokspec._offsets import char_offsets_from_byte_spans
from tokspec._types import Encoder, Encoding, EngineInfo, Span

__all__ = ["NO_MERGE", "NaiveBpeEncoder", "bpe_pieces", "bpe_ids", "encode_pieces_of_text"]

#: The rank given to an adjacent pair whose concatenation is not a token (larger than any rank).
NO_MERGE = sys.maxsize


def _pair_rank(ranks: Mapping[bytes, int], a: bytes, b: bytes, max_rank: int) -> int:
    """``ranks[a + b]`` if that is a token of rank below ``max_rank``, else NO_MERGE."""
    rank = ranks.get(a + b, NO_MERGE)
    return rank if rank < max_rank else NO_MERGE


def bpe_pieces(piece: bytes, ranks: Mapping[bytes, int], *, max_rank: int = NO_MERGE,
               shortcut: bool = True) -> list[bytes]:
    """Encode one pretoken by the minimum-rank merge loop; return its token byte strings.

    ``shortcut=True`` returns ``[piece]`` at once when ``piece`` is itself a token below
    ``max_rank`` (Invariant B4). O(m^2) for m bytes; O(1) hash look-up when the shortcut applies.
    """
    if shortcut and ranks.get(piece, NO_MERGE) < max_rank:
        return [piece]
    parts = [piece[i:i + 1] for i in range(len(piece))]
    # pair[i] is the rank of parts[i] + parts[i + 1] (NO_MERGE when not a token).
    pair = [_pair_rank(ranks, parts[i], parts[i + 1], max_rank) for i in range(len(parts) - 1)]
    while pair:
        best = min(pair)
        if best == NO_MERGE:
            break
        i = pair.index(best)  # leftmost occurrence of the minimum rank
        # Merge parts[i] and parts[i + 1]; the pair ranks on both sides of the new part change.
        parts[i] = parts[i] + parts.pop(i + 1)
        pair.pop(i)
        if i > 0:
            pair[i - 1] = _pair_rank(ranks, parts[i - 1], parts[i], max_rank)
        if i < len(pair):
            pair[i] = _pair_rank(ranks, parts[i], parts[i + 1], max_rank)
    return parts


def bpe_ids(piece: bytes, ranks: Mapping[bytes, int]) -> list[int]:
    """Token ids (= ranks) of one pretoken; see :func:`bpe_pieces`."""
    return [ranks[p] for p in bpe_pieces(piece, ranks)]


def encode_pieces_of_text(pretokens: list[bytes], ranks: Mapping[bytes, int]) -> list[bytes]:
    """Concatenate :func:`bpe_pieces` of each pretoken in order (pretokens never merge together)."""
    out: list[bytes] = []
    for p in pretokens:
        out.extend(bpe_pieces(p, ranks))
    return out


def _byte_starts(text: str) -> list[int]:
    """``starts[i]`` is the UTF-8 byte offset of character ``i``; ``starts[len(text)]`` the total."""
    starts = [0]
    for ch in text:
        starts.append(starts[-1] + len(ch.encode("utf-8")))
    return starts


class NaiveBpeEncoder(Encoder):
    """tiktoken semantics: regex pretokens, then :func:`bpe_pieces` on each pretoken's UTF-8 bytes.

    Ids are ranks. Offsets follow ``tokspec._types``: a token's byte span inside its pretoken is
    mapped to the characters it touches. Characters matched by no alternative of the pattern are
    dropped, as tiktoken drops them (never happens for the patterns in ``pretok_regex``, P1).
    Cost: one regex pass plus :func:`bpe_pieces` per distinct pretoken of the call (O(sum of m^2)
    worst case); a repeated pretoken reuses its pieces (a pretoken's pieces depend on its bytes only).
    """

    def __init__(self, ranks: Mapping[bytes, int], pattern: regex.Pattern[str], *, name: str,
                 vocab_sha256: str | None, description: str = "") -> None:
        self.ranks = ranks
        self.pattern = pattern
        self._by_id = {rank: tok for tok, rank in ranks.items()}
        self.info = EngineInfo(name=name, kind="tokenizer", library="tokspec.reference.bpe_naive",
                               library_version="1", vocab_sha256=vocab_sha256,
                               description=description)

    def _encode(self, text: str) -> Encoding:
        starts = _byte_starts(text)
        ids: list[int] = []
        byte_spans: list[Span] = []
        seen: dict[bytes, list[bytes]] = {}  # pretoken -> its pieces, within this call
        for m in self.pattern.finditer(text):
            pos = starts[m.start()]  # byte offset of this pretoken in the whole text
            pretoken = m.group().encode("utf-8")
            if pretoken not in seen:
                seen[pretoken] = bpe_pieces(pretoken, self.ranks)
            for piece in seen[pretoken]:
                ids.append(self.ranks[piece])
                byte_spans.append((pos, pos + len(piece)))
                pos += len(piece)
        return Encoding.of(ids, char_offsets_from_byte_spans(text, byte_spans))

    def token_piece(self, token_id: int) -> str:
        tok = self._by_id.get(token_id)
        return str(token_id) if tok is None else tok.decode("utf-8", errors="backslashreplace")
