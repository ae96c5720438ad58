"""Cost theorems: how an encoder's work grows with the length of its input (issue 24).

Definitions. A *cost table* is a list of (size in characters, seconds) for texts of one family at
doubling sizes. Its *exponent* is the least-squares slope of log(seconds) against log(size) over
its last points (:func:`fit_exponent`): 1 for linear work, about 1.1 for n log n at the sizes
measured (the local slope of n log n at n is 1 + 1/ln n: 1.09 at 64K characters), 2 for quadratic.
A cost is *superlinear* when the exponent exceeds :data:`SUPERLINEAR` (1.3, chosen in
``tokspec.app.complexity``'s docstring) on some family.

**Theorem C1 (backtracking BPE is linear).** Setting: BPE by the backtracking encoder of the
seed (``seeds/bpe-backtracking-linear-encoder.txt``: "a bit field keeps track of all the valid
tokenization positions and making the runtime linear in the input length"), behind a pretokenizer
of linear cost. Then the cost of any text is O(n) in its length n, whatever its pieces: so no
family of ``tokspec complexity`` is superlinear on ``fast:`` BPE and ``bpe-openai:``.

**Theorem C2 (byte-pair merging over one piece is quadratic in the worst case).** Setting: the
textbook merge loop (scan every neighbouring pair, merge the lowest rank, repeat; the seed's
"O(n^2)" strategy) run on one piece of n bytes. It makes up to n - 1 merges and each scans every
remaining pair, so its cost is O(n^2); on a piece where each round merges one pair (one repeated
byte whose doubled pair is a token), the scans add up to about n^2 / 2: Theta(n^2).
:func:`pair_scans` counts them, :func:`prop_merge_quadratic` checks the lower bound. A pretokenizer
that never makes a piece longer than a constant keeps the whole encoder linear; one that makes a
long run of one character class a single piece (cl100k's letters, punctuation) does not.

**Theorem C3 (WordPiece is bounded by max_input_chars_per_word).** Setting: greedy longest-match
WordPiece over whitespace/punctuation-split words, a word longer than ``max_chars`` characters
becoming the unknown token without matching (BERT: 100). A word of m <= max_chars characters costs
at most m (m + 1) / 2 vocabulary lookups (each of at most m tokens tries every shorter prefix),
so a text of n characters costs at most n (max_chars + 1) / 2: linear in n with a constant set by
max_chars. :func:`wordpiece_lookups` counts, :func:`prop_wordpiece_bounded` checks.

Out of scope: timing itself (``tokspec.app.complexity`` measures; this module fits and judges
tables and counts work exactly), memory, cache effects.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from tokspec.spec._verdict import Verdict, fails, holds

__all__ = ["SUPERLINEAR", "THEOREMS", "fit_exponent", "prop_not_superlinear", "pair_scans",
           "prop_merge_quadratic", "wordpiece_lookups", "prop_wordpiece_bounded"]

SUPERLINEAR = 1.3

#: theorem -> (statement, engines ``tokspec complexity`` must pass (C1, C3) or may flag (C2)).
THEOREMS: dict[str, tuple[str, tuple[str, ...]]] = {
    "C1": ("backtracking BPE is linear in the text's length",
           ("fast:cl100k_base", "bpe-openai:cl100k_base")),
    "C2": ("byte-pair merging over one piece is quadratic in the worst case",
           ("tiktoken:cl100k_base",)),
    "C3": ("WordPiece is linear, bounded by max_input_chars_per_word", ("hf:bert-base-uncased",)),
}


def fit_exponent(table: Sequence[tuple[int, float]], last: int = 4) -> float:
    """The least-squares slope of log(seconds) on log(size) over the ``last`` points of ``table``
    (all if fewer). Needs two points of distinct sizes and positive seconds; ValueError otherwise.
    O(last).

    >>> round(fit_exponent([(1000, 1.0), (2000, 4.0), (4000, 16.0)]), 6)
    2.0
    """
    points = [(math.log(n), math.log(t)) for n, t in table[-last:] if n > 0 and t > 0]
    if len({x for x, _ in points}) < 2:
        raise ValueError(f"fit_exponent needs two sizes with positive seconds, got table={list(table)!r}")
    mx = sum(x for x, _ in points) / len(points)
    my = sum(y for _, y in points) / len(points)
    sxx = sum((x - mx) ** 2 for x, _ in points)
    sxy = sum((x - mx) * (y - my) for x, y in points)
    return sxy / sxx


def prop_not_superlinear(table: Sequence[tuple[int, float]], bound: float = SUPERLINEAR) -> Verdict:
    """C1/C3 on one measured family: the fitted exponent is at most ``bound``."""
    e = fit_exponent(table)
    if e <= bound:
        return holds(f"exponent {e:.2f} <= {bound}")
    return fails(f"exponent {e:.2f} > {bound}: cost grows faster than linearly",
                 exponent=e, table=[list(p) for p in table])


def pair_scans(ranks: dict[bytes, int], data: bytes) -> int:
    """Neighbouring pairs looked at by the textbook merge loop on ``data`` (C2): each round scans
    every pair of the current parts, then merges the leftmost lowest-ranked one; stops when no
    pair is a token. O(n^2) time for n bytes (what it counts)."""
    parts = [bytes([b]) for b in data]
    scans = 0
    while len(parts) > 1:
        best, at = None, -1
        for i in range(len(parts) - 1):  # one scan over every neighbouring pair
            scans += 1
            rank = ranks.get(parts[i] + parts[i + 1])
            if rank is not None and (best is None or rank < best):
                best, at = rank, i
        if best is None:
            break
        parts[at:at + 2] = [parts[at] + parts[at + 1]]
    return scans


def prop_merge_quadratic(ranks: dict[bytes, int], unit: bytes, n: int) -> Verdict:
    """C2's lower bound: doubling a run of ``unit`` bytes from ``n`` to ``2n`` at least triples the
    pairs scanned (quadratic work gives 4x, linear 2x)."""
    small, large = pair_scans(ranks, unit * n), pair_scans(ranks, unit * (2 * n))
    if large >= 3 * small:
        return holds(f"{small} -> {large} pair scans when the piece doubles ({large / small:.2f}x)")
    return fails(f"only {small} -> {large} pair scans when the piece doubles", small=small, large=large)


def wordpiece_lookups(vocab: set[str], word: str, *, max_chars: int, prefix: str = "##") -> int:
    """Vocabulary lookups of greedy longest-match WordPiece on one ``word`` (C3): 0 when the word is
    longer than ``max_chars`` (it becomes the unknown token unmatched); else, from each token start,
    one lookup per candidate end from the longest down to the first match (the word is unknown when
    some start has no match). O(m^2) for m characters."""
    if len(word) > max_chars:
        return 0
    lookups, start = 0, 0
    while start < len(word):
        end = len(word)
        while end > start:
            lookups += 1
            piece = word[start:end] if start == 0 else prefix + word[start:end]
            if piece in vocab:
                break
            end -= 1
        if end == start:  # no match from this start: the whole word is unknown
            return lookups
        start = end
    return lookups


def prop_wordpiece_bounded(vocab: set[str], words: Sequence[str], *, max_chars: int,
                           prefix: str = "##") -> Verdict:
    """C3: the lookups for ``words`` are at most ``total chars * (max_chars + 1) / 2``."""
    total = sum(len(w) for w in words)
    used = sum(wordpiece_lookups(vocab, w, max_chars=max_chars, prefix=prefix) for w in words)
    bound = total * (max_chars + 1) / 2
    if used <= bound:
        return holds(f"{used} lookups <= {bound:g} for {total} characters")
    return fails(f"{used} lookups > {bound:g} for {total} characters", used=used, bound=bound)
