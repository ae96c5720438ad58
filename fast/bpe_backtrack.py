"""Byte-level BPE without a merge loop: backtracking over prefix tokens, and a prefix-table DP.

Definitions (tiktoken semantics, the model every byte-level vocabulary here uses). A vocabulary
maps token bytes to a rank; the rank is also the token id. BPE on a byte string starts from single
bytes and repeatedly merges the adjacent pair whose concatenation is a token of lowest rank, the
leftmost such pair first, until no adjacent pair concatenates to a token. A token sequence is
*valid* if it is what BPE produces for its own concatenated bytes.

Theorem relied on (the seed ``bpe-backtracking-linear-encoder``; definitions and numbered
corollaries there):

- Corollary I: every byte string has exactly one valid encoding.
- Corollary II: every contiguous run of tokens of a valid encoding is valid.
- Corollary IIa: the last token of a valid encoding fixes the whole encoding.
- Corollary IIIa: if ``e_0..e_i`` is valid and the pair ``(e_i, e_j)`` is valid, then
  ``e_0..e_i e_j`` is valid.

So an encoding is valid iff every adjacent pair is valid (plus: each token alone is valid, i.e.
*reachable*), and :func:`is_valid_pair` decides pair validity by replaying BPE's merge history at
the boundary only (``_pair_valid``), with no quadratic pair table. The property that checks this
engine against the merge loop is spec/ property "BPE exactness" (the differential tests in
``tests/test_fast_bpe_backtrack.py`` against tiktoken's merge loop and ``tokspec.reference``).

This module is the readable Python form, and builds the tables that the compiled form
(``tokspec.fast.bpe_kernel``, what the ``fast:`` engines run) uses; the two are checked against
each other in ``tests/test_fast_kernels.py``. Two exact encoders, checked against each other in
the tests:

- :meth:`BacktrackBPE.encode` (backtracking): append the longest token matching at the current
  position; if the new pair is invalid, replace it by the next-longest prefix token; if none is left,
  pop and retry one position back. A per-position flag array (the seed's bitfield) marks positions
  proven not to be token boundaries, so each position is abandoned at most once: O(n * P) time where
  P bounds the prefix tokens at a position (the trie walk also costs up to the longest token length
  per successful push); typically ~1.3 candidates per position. Worst case: texts whose greedy
  choices keep failing (long runs of one rare byte pair).
- :meth:`BacktrackBPE.encode_via_table` (the seed's prefix-table dynamic programme): for every
  prefix end, the last token of the prefix's valid encoding is the one suffix token compatible with
  the last token of the remaining prefix. O(n * L) time, L = longest token.

Representation: the flag array is a ``bytearray`` (one byte per position) rather than packed bits:
in Python a bytearray index is O(1), a bit in a big int is not.

Scope: vocabularies whose tokens have rank-monotone merge histories (every trained vocabulary;
cl100k and o200k pass); others raise UnsupportedComponentError at build. Out of scope: pretokenization (see ``tokspec.fast.pretok_peek2``), special tokens, decoding to text.
"""

from __future__ import annotations

from collections.abc import Mapping

from tokspec.errors import UnsupportedComponentError, VocabularyError

__all__ = ["BacktrackBPE", "NonMonotoneVocabularyError", "SelfCheckError"]

_NONE = -1


class NonMonotoneVocabularyError(UnsupportedComponentError):
    """Token ``token_id`` is reachable only through a higher-ranked token (see module docstring)."""

    def __init__(self, message: str, token_id: int) -> None:
        super().__init__(message)
        self.token_id = token_id


class SelfCheckError(VocabularyError):
    """The built encoder failed its build-time self-check (a token does not encode to itself)."""


class BacktrackBPE:
    """Exact byte-level BPE encoder for a rank vocabulary (see module docstring).

    Build: O(sum of token lengths) dictionary operations. Fields (id-indexed lists):
    ``tokens[id]`` bytes; ``split_left/right[id]``: the pair BPE last merged into ``id``, or ``id``
    itself for base tokens (single bytes, and unreachable tokens); ``reachable[id]``: the token is
    the BPE encoding of its own bytes (only these can occur in an encoding); ``next_prefix[id]``: the
    longest reachable proper prefix token of ``id`` (-1: none).
    """

    def __init__(self, ranks: Mapping[bytes, int], *, self_check: bool = True) -> None:
        self._check_ranks(ranks)
        size = max(ranks.values()) + 1
        self.ranks: dict[bytes, int] = dict(ranks)
        self.tokens: list[bytes] = [b""] * size
        for tok, rank in ranks.items():
            self.tokens[rank] = tok
        self.max_len = max(len(t) for t in ranks)
        self.split_left = list(range(size))
        self.split_right = list(range(size))
        self.reachable = [False] * size
        self._compute_splits()
        self._build_trie()
        self._table_trie: tuple[dict[int, int], list[int]] | None = None
        self._pair_cache: dict[int, bool] = {}
        self.unreachable = [i for i in range(size) if self.tokens[i] and not self.reachable[i]]
        if self_check:
            self.self_check()

    @staticmethod
    def _check_ranks(ranks: Mapping[bytes, int]) -> None:
        if not ranks:
            raise VocabularyError("ranks is empty: a BPE vocabulary needs at least the single bytes")
        if len(set(ranks.values())) != len(ranks):
            raise VocabularyError("ranks are not unique: two tokens share a rank (token id)")
        for tok, rank in ranks.items():
            if not isinstance(tok, bytes) or not tok or not isinstance(rank, int) or rank < 0:
                raise VocabularyError(f"bad vocabulary entry {tok!r}: {rank!r}; need non-empty bytes "
                                      "mapped to a rank >= 0")
        missing = [b for b in range(256) if bytes([b]) not in ranks]
        if missing:
            raise VocabularyError(f"not a byte-level vocabulary: single bytes {missing[:5]} have no rank; "
                                  "every byte must be a token so that every input can be encoded")

    # -- build -----------------------------------------------------------------------------------

    def _compute_splits(self) -> None:
        """In rank order, find each token's last merge: the unique valid pair (a, b), a, b < id.

        By Corollary I applied to the vocabulary cut at rank ``id``, the bytes of token ``id`` have
        one valid encoding over lower ranks; the token is reachable iff that encoding is a pair
        (which BPE then merges at rank ``id``). Single bytes are reachable base tokens.

        One pass over every cut ``tok[:k] | tok[k:]`` of every token (longest ``k`` first) also
        records what the compiled tables need (one dictionary lookup per cut instead of three passes):
        ``pair_cuts``, the ``(a, b, id)`` of every cut into two tokens (``bpe_tables``' pair table),
        and ``_first_prefix[id]``, the longest proper prefix that is a token (reachable or not).
        """
        get, tokens, reachable = self.ranks.get, self.tokens, self.reachable
        left, right, valid = self.split_left, self.split_right, self._pair_valid
        cut_a: list[int] = []
        cut_b: list[int] = []
        cut_id: list[int] = []
        add_a, add_b, add_id = cut_a.append, cut_b.append, cut_id.append
        first_prefix = [_NONE] * len(tokens)
        for tid, tok in enumerate(tokens):
            n = len(tok)
            if n <= 1:
                reachable[tid] = n == 1
                continue
            found = False
            first = _NONE
            for k in range(n - 1, 0, -1):
                a = get(tok[:k], _NONE)
                if a < 0:
                    continue
                if first < 0:
                    first = a
                b = get(tok[k:], _NONE)
                if b < 0:
                    continue
                add_a(a)
                add_b(b)
                add_id(tid)
                if not found and a < tid and b < tid and reachable[a] and reachable[b] and valid(a, b, tid):
                    left[tid], right[tid] = a, b
                    reachable[tid] = found = True
            first_prefix[tid] = first
            if not found:
                self._check_truly_unreachable(tid, tok)
        self.pair_cuts = (cut_a, cut_b, cut_id)
        self._first_prefix = first_prefix

    def _check_truly_unreachable(self, tid: int, tok: bytes) -> None:
        """Reject a vocabulary where token ``tid`` is built only through a higher-ranked token.

        The corollaries' replay uses rank as merge time, which holds when every token's own merge
        history has increasing ranks (true for trained vocabularies; checked here). A merge loop on
        the token's bytes (O(len^2), run only for tokens without a lower-ranked split) decides it.
        """
        parts = [tok[i:i + 1] for i in range(len(tok))]
        while len(parts) > 1:
            found = [(self.ranks.get(parts[i] + parts[i + 1], _NONE), i) for i in range(len(parts) - 1)]
            best = min(((r, i) for r, i in found if r >= 0), default=None)
            if best is None:
                return
            i = best[1]
            parts[i:i + 2] = [parts[i] + parts[i + 1]]
        raise NonMonotoneVocabularyError(
            f"token id={tid} bytes={tok!r} is reachable by BPE only through a higher-ranked token "
            "(non-monotone merge history); the backtracking encoder assumes rank = merge time", tid)

    def _build_trie(self) -> None:
        """A byte trie over reachable tokens as one flat dict ``(node << 8 | byte) -> child``.

        ``term[node]`` is the id of the reachable token ending at ``node`` (-1 if none). Also fills
        ``next_prefix``: the longest proper prefix token (found by :meth:`_compute_splits`) when it is
        reachable, else the longest reachable one by walking the token's path (rare).
        """
        self._edges, self._term = self._flat_trie(reverse=False)
        reachable, first = self.reachable, self._first_prefix
        self.next_prefix = [p if reachable[t] and p >= 0 and reachable[p] else _NONE for t, p in enumerate(first)]
        for tid, tok in enumerate(self.tokens):  # the longest prefix token is unreachable: walk
            if reachable[tid] and first[tid] >= 0 and not reachable[first[tid]]:
                self.next_prefix[tid] = self._longest_match(tok, 0, len(tok) - 1)

    def self_check(self) -> None:
        """Every reachable token encodes to itself (seed: the dictionary checks itself when built).

        Raises SelfCheckError naming the first token that does not. O(sum of token lengths).
        """
        for tid, tok in enumerate(self.tokens):
            if self.reachable[tid]:
                got = self.encode(tok)
                if got != [tid]:
                    raise SelfCheckError(
                        f"BPE self-check failed: token id={tid} bytes={tok!r} encodes to {got}; the "
                        "vocabulary is not a BPE vocabulary under tiktoken semantics")

    # -- pair validity ---------------------------------------------------------------------------

    def _pair_valid(self, a: int, b: int, limit: int) -> bool:
        """Would BPE on ``bytes(a) + bytes(b)`` (ranks < ``limit`` only) end as exactly ``[a, b]``?

        Replays the merge history backwards at the boundary: the boundary pair at each moment is
        (rightmost token of the left part, leftmost of the right part); BPE crosses the boundary iff
        some such pair concatenates to a token ranked below the next merge actually made (for a
        right-side merge, also at equal rank: the leftmost of equal-rank pairs goes first).
        O(depth of the two merge trees).
        """
        ranks, tokens = self.ranks, self.tokens
        left, right = self.split_left, self.split_right
        while True:
            c = ranks.get(tokens[a] + tokens[b], _NONE)
            if 0 <= c < limit:
                return False
            a_base, b_base = left[a] == a, left[b] == b
            if a_base and b_base:
                return True
            if not a_base and (b_base or a > b):  # a was formed last: undo it
                limit, a = a, right[a]
            else:  # b was formed last (or at the same rank, to the right of a): undo it
                limit, b = b + 1, left[b]

    def is_valid_pair(self, a: int, b: int) -> bool:
        """Can reachable tokens ``a`` then ``b`` stand next to each other in a valid encoding?"""
        key = a << 32 | b  # an int key: tuples would be tracked by the cyclic GC (a 7x slowdown)
        hit = self._pair_cache.get(key)
        if hit is None:
            hit = self._pair_valid(a, b, 1 << 62)
            if len(self._pair_cache) > 2_000_000:
                self._pair_cache.clear()
            self._pair_cache[key] = hit
        return hit

    # -- matching --------------------------------------------------------------------------------

    def _longest_match(self, data: bytes, pos: int, end: int) -> int:
        """Id of the longest reachable token equal to ``data[pos:q]`` for some ``q <= end``; -1 if none."""
        edges, term = self._edges, self._term
        node, best = 0, _NONE
        for q in range(pos, min(end, pos + self.max_len)):
            node = edges.get(node << 8 | data[q], _NONE)
            if node < 0:
                break
            if term[node] >= 0:
                best = term[node]
        return best

    # -- encoders --------------------------------------------------------------------------------

    def encode(self, data: bytes) -> list[int]:
        """The BPE encoding of ``data`` by backtracking (see module docstring for cost)."""
        n = len(data)
        if n == 0:
            return []
        alive = bytearray(b"\x01") * (n + 1)  # alive[p] == 0: p is proven not a token boundary
        tokens, next_prefix, valid = self.tokens, self.next_prefix, self.is_valid_pair
        out: list[int] = []
        pos = 0
        cand = self._longest_match(data, 0, n)
        while True:
            end = pos + len(tokens[cand])
            if alive[end] and (not out or valid(out[-1], cand)):
                out.append(cand)
                pos = end
                if pos == n:
                    return out
                cand = self._longest_match(data, pos, n)
                continue
            cand = next_prefix[cand]
            while cand < 0:  # nothing left at pos: pos cannot be a boundary; back up one token
                alive[pos] = 0
                last = out.pop()
                pos -= len(tokens[last])
                cand = next_prefix[last]

    def _suffix_trie(self) -> tuple[dict[int, int], list[int]]:
        """Trie over reversed reachable tokens, built on first use of :meth:`encode_via_table`."""
        if self._table_trie is None:
            self._table_trie = self._flat_trie(reverse=True)
        return self._table_trie

    def _flat_trie(self, *, reverse: bool) -> tuple[dict[int, int], list[int]]:
        """A byte trie over the reachable tokens (read backwards if ``reverse``) as one flat dict
        ``(node << 8 | byte) -> child``; ``term[node]`` is the id of the token ending there or -1."""
        edges: dict[int, int] = {}
        term = [_NONE]
        for tid, tok in enumerate(self.tokens):
            if not self.reachable[tid]:
                continue
            node = 0
            for byte in (reversed(tok) if reverse else tok):
                key = node << 8 | byte
                child = edges.get(key)
                if child is None:
                    child = len(term)
                    edges[key] = child
                    term.append(_NONE)
                node = child
            term[node] = tid
        return edges, term

    def encode_via_table(self, data: bytes) -> list[int]:
        """The BPE encoding of ``data`` by the prefix-table DP (Corollaries IIa and IIIa).

        ``last[e]`` is the last token of the valid encoding of ``data[:e]``: among the tokens
        ending at ``e``, the one covering the whole prefix, or compatible with ``last[start]``
        (Corollary IIa: exactly one is). Candidates are tried longest first: on cl100k English
        that is ~1.5 compatibility checks per byte, against ~3.8 shortest first (4.3 tokens end
        at a position on average). O(n * L) time and O(n) space.
        """
        n = len(data)
        edges, term = self._suffix_trie()
        tokens, valid = self.tokens, self.is_valid_pair
        last = [_NONE] * (n + 1)
        for e in range(1, n + 1):
            node, found = 0, []
            for q in range(e - 1, max(-1, e - 1 - self.max_len), -1):
                node = edges.get(node << 8 | data[q], _NONE)
                if node < 0:
                    break
                if term[node] >= 0:
                    found.append((q, term[node]))
            for q, t in reversed(found):  # longest first: usually the first one is compatible
                if q == 0 or valid(last[q], t):
                    last[e] = t
                    break
            assert last[e] >= 0, "Corollary I violated: no valid last token for a prefix"
        out: list[int] = []
        e = n
        while e > 0:
            out.append(last[e])
            e -= len(tokens[last[e]])
        out.reverse()
        return out
