"""Token counting for chunking: definitions, theorems and their scope, and two refuted beliefs.

Source: ``/work/shared/seeds/bpe-backtracking-linear-encoder.txt`` (its opening: "split text after
exactly n tokens at a character boundary", "count tokens for sub-ranges", "incrementally count
tokens while appending"; the appending and interval encoders of its benchmarks).

Definitions (``enc`` is BPE on bytes as in ``tokspec.spec.bpe``; with a regex pretokenizer ``S``,
``enc_S(t)`` encodes each pretoken of ``S(t)`` alone and concatenates):

- D1 (count): ``count(x) = len(enc(x))``; the count of the slice ``data[i:j]`` is ``count(data[i:j])``,
  the slice encoded on its own.
- D2 (split point after n tokens): for a ``str`` text, the largest ``k`` such that the prefix of
  ``k`` characters has ``count <= n``. Every prefix is a candidate: counting is not monotonic.
- D3 (incremental count): after appending (prepending) each byte, the count of the whole text.

Theorems (BPE without pretokenization, any vocabulary whose tokens all reach themselves, i.e. the
setting of the seed's corollaries):

- C1 (appending): let ``last[e]`` be the last token of ``enc(data[:e])``. It is the one token
  ``t = data[s:e]`` with ``s == 0`` or the pair ``(last[s], t)`` valid, and
  ``count(data[:e]) = count(data[:s]) + 1``. Proof: Corollary II makes the last pair of a valid
  encoding valid; Corollary IIIa makes any such ``t`` extend ``enc(data[:s])`` validly; Corollary I
  makes the result unique. So appending a byte costs one look at the tokens ending there.
- C2 (prepending): the mirror image, with the first token of each suffix.
- C3 (interval): if ``x`` is a valid encoding of ``data[i:p]`` whose last token is ``last[p]``
  and ``p`` is a token boundary of ``enc(data[:j])``, then ``enc(data[i:j])`` is ``x`` followed by
  the tokens of ``enc(data[:j])`` after ``p`` (Corollary II makes that tail, with ``last[p]``,
  valid; Corollary III joins the two at the shared token; Corollary I). The interval encoder
  encodes from ``i`` until this happens, then reads the rest off the prefix table.

With a regex pretokenizer (C4, scope): ``count_S(t[i:j])`` is the sum over the pretokens of
``S(t[i:j])`` of their BPE counts, and C1-C3 apply to each pretoken as a byte range of the whole
text. They do NOT apply to the text's own pretokens cut at ``i`` and ``j``: the pretokens of a
prefix are not the text's pretokens cut there (regex look-ahead, ``\\s+(?!\\S)``), so a prefix
table over the whole pretokenized text is wrong (claim ``counting.prefix_pretokens``, refuted).

Refuted beliefs (witnesses in ``corpora/counting/``): counting is monotonic (``counting.monotone``:
appending a character can lower the count, with and without pretokenization); dropping tokens to a
character boundary keeps about n tokens (``counting.drop_to_boundary``: on cl100k_base and
o200k_base a repeated character encodes as a loop of tokens that neither start nor end at a
character boundary, and the chunk collapses to empty).

Out of scope: special tokens, normalizing tokenizers, what a chunker does with whitespace.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence

import regex

from tokspec.spec._verdict import Claim, Verdict, all_of, fails, holds, register
from tokspec.spec.bpe import SEED_EXAMPLE_DICT, bpe_encode

__all__ = ["count", "split_point", "naive_split", "appending_counts", "prepending_counts",
           "interval_count", "prop_appending", "prop_prepending", "prop_interval", "prop_pretokenized", "prop_prefix_pretokens",
           "prop_monotone", "prop_drop_to_boundary", "MONOTONE_WITNESS", "DROP_WITNESS",
           "PRETOKENS_WITNESS"]

Ranks = Mapping[bytes, int]


def count(ranks: Ranks, data: bytes) -> int:
    """D1: the number of tokens of ``data`` encoded on its own."""
    return len(bpe_encode(ranks, data))


def split_point(count_text: Callable[[str], int], text: str, n: int) -> int:
    """D2: characters in the longest prefix of ``text`` with ``count_text(prefix) <= n``."""
    return max(k for k in range(len(text) + 1) if count_text(text[:k]) <= n)


def naive_split(tokens: Sequence[bytes], text: str, n: int) -> int:
    """The naive split the seed warns about: keep the first ``n`` tokens of the whole text's
    encoding, drop tokens until they end at a character boundary; characters kept."""
    ends = {len(text[:k].encode("utf-8")): k for k in range(len(text) + 1)}
    kept = list(tokens[:n])
    while len(b"".join(kept)) not in ends:
        kept.pop()
    return ends[len(b"".join(kept))]


def appending_counts(ranks: Ranks, data: bytes) -> list[int]:
    """Theorem C1 as an algorithm: the last-token table, each entry chosen by pair validity
    (decided by re-encoding the pair); returns the count of every prefix ``data[:1..n]``."""
    last: list[bytes] = [b""]
    depth = [0]
    for e in range(1, len(data) + 1):
        chosen = [data[s:e] for s in range(e) if data[s:e] in ranks or e - s == 1
                  if s == 0 or bpe_encode(ranks, last[s] + data[s:e]) == [last[s], data[s:e]]]
        last.append(chosen[0])
        depth.append(depth[e - len(chosen[0])] + 1)
    return depth[1:]


def prepending_counts(ranks: Ranks, data: bytes) -> list[int]:
    """Theorem C2 as an algorithm: the first-token table of every suffix, each entry chosen by
    pair validity; returns the count after each prepended byte (``data[n-1:]`` first)."""
    n = len(data)
    first: list[bytes] = [b""] * (n + 1)
    depth = [0] * (n + 1)
    for s in range(n - 1, -1, -1):
        chosen = [data[s:e] for e in range(n, s, -1) if data[s:e] in ranks or e - s == 1
                  if e == n or bpe_encode(ranks, data[s:e] + first[e]) == [data[s:e], first[e]]]
        first[s] = chosen[0]
        depth[s] = depth[s + len(chosen[0])] + 1
    return depth[n - 1::-1] if n else []


def interval_count(ranks: Ranks, data: bytes, i: int, j: int) -> int:
    """Theorem C3 as an algorithm: the first boundary ``p > i`` of ``enc(data[:j])`` where
    ``enc(data[i:p])`` ends with the last token of ``enc(data[:p])``; count from there."""
    whole = bpe_encode(ranks, data[:j])
    p, rest = 0, len(whole)
    for tok in whole:
        p, rest = p + len(tok), rest - 1
        head = bpe_encode(ranks, data[i:p]) if p > i else []
        if p == j or (head and head[-1] == tok):  # at p == j the theorem is trivial
            return len(head) + rest
    return 0  # only reached for an empty slice


def prop_appending(ranks: Ranks, data: bytes) -> Verdict:
    """Theorem C1: the last-token table's counts equal re-encoding every prefix (D3)."""
    got = appending_counts(ranks, data)
    want = [count(ranks, data[:e]) for e in range(1, len(data) + 1)]
    if got == want:
        return holds(f"Theorem C1 on {len(data)} prefixes")
    return fails("Theorem C1: appending counts differ from re-encoding", data=data.hex(),
                 expected=want, got=got)


def prop_prepending(ranks: Ranks, data: bytes) -> Verdict:
    """Theorem C2: the first-token table's counts equal re-encoding every suffix (D3, mirrored)."""
    got = prepending_counts(ranks, data)
    want = [count(ranks, data[s:]) for s in range(len(data) - 1, -1, -1)]
    if got == want:
        return holds(f"Theorem C2 on {len(data)} suffixes")
    return fails("Theorem C2: prepending counts differ from re-encoding", data=data.hex(),
                 expected=want, got=got)


def prop_interval(ranks: Ranks, data: bytes) -> Verdict:
    """Theorem C3: the interval count of every slice equals re-encoding it (D1)."""
    checks = []
    for i in range(len(data) + 1):
        for j in range(i, len(data) + 1):
            got, want = interval_count(ranks, data, i, j), count(ranks, data[i:j])
            checks.append(holds("ok") if got == want else fails(
                "Theorem C3: interval count differs from re-encoding", data=data.hex(), i=i, j=j,
                expected=want, got=got))
    return all_of(checks, "Theorem C3")


def prop_pretokenized(ranks: Ranks, pattern: str, text: str, i: int, j: int) -> Verdict:
    """Theorem C4: the pretokenized count of ``text[i:j]`` is the sum of Theorem C3's interval
    counts over the pretokens of the slice, as byte ranges of the whole text."""
    data = text.encode("utf-8")
    base = len(text[:i].encode("utf-8"))
    got = 0
    for m in regex.finditer(pattern, text[i:j]):
        a = base + len(text[i:i + m.start()].encode("utf-8"))
        got += interval_count(ranks, data, a, a + len(m.group().encode("utf-8")))
    want = sum(count(ranks, m.group().encode("utf-8")) for m in regex.finditer(pattern, text[i:j]))
    if got == want:
        return holds("Theorem C4: per-pretoken interval counts sum to the slice's count")
    return fails("Theorem C4 fails", text=text, i=i, j=j, expected=want, got=got)


def prop_prefix_pretokens(pattern: str, text: str, k: int) -> Verdict:
    """Belief refuted: "the pretokens of a prefix are the pretokens of the text cut at ``k``"."""
    own = [m.group() for m in regex.finditer(pattern, text[:k])]
    cut = [m.group()[:max(0, k - m.start())] for m in regex.finditer(pattern, text) if m.start() < k]
    if own == cut:
        return holds("the prefix's pretokens are the text's pretokens cut at k")
    return fails("the prefix's pretokens differ from the text's cut at k", text=text, k=k,
                 prefix_pretokens=own, cut_pretokens=cut)


@functools.cache
def _vocabulary(vocab: str) -> tuple[Ranks, regex.Pattern[str]]:
    """Ranks (sha256-checked) and pretokenizer of a named tiktoken vocabulary, loaded once."""
    from tokspec.reference.pretok_regex import compiled
    from tokspec.formats.vocab import load_named_tiktoken
    return load_named_tiktoken(vocab).ranks, compiled(vocab)


def _pretokenized_tokens(vocab: str, text: str) -> list[bytes]:
    """The tokens of ``text`` under tiktoken semantics by the references (regex pretokens of
    ``tokspec.reference.pretok_regex``, the merge loop of ``tokspec.reference.bpe_naive``)."""
    from tokspec.reference.bpe_naive import bpe_pieces
    ranks, pattern = _vocabulary(vocab)
    return [p for m in pattern.finditer(text) for p in bpe_pieces(m.group().encode("utf-8"), ranks)]


def prop_monotone(vocab: str, text: str, appended: str) -> Verdict:
    """Belief refuted: "appending a character never lowers the count" (``vocab``: a named
    tiktoken vocabulary, with its pretokenizer)."""
    before = len(_pretokenized_tokens(vocab, text))
    after = len(_pretokenized_tokens(vocab, text + appended))
    if after >= before:
        return holds(f"appending {appended!r} keeps the count at least {before}")
    return fails("appending a character lowered the count", vocab=vocab, text=text,
                 appended=appended, before=before, after=after)


def prop_drop_to_boundary(vocab: str, text: str, n: int) -> Verdict:
    """Belief refuted: "the naive split (:func:`naive_split`) keeps a non-empty chunk when a
    prefix with at least one character fits in ``n`` tokens"."""
    tokens = _pretokenized_tokens(vocab, text)
    best = split_point(lambda s: len(_pretokenized_tokens(vocab, s)), text, n)
    naive = naive_split(tokens, text, n)
    if best == 0 or naive > 0:
        return holds(f"naive split keeps {naive} characters, the split point is {best}")
    return fails("the naive split collapses the chunk to empty", vocab=vocab, text=text, n=n,
                 split_point=best, naive=naive, tokens=[t.hex() for t in tokens])


#: The seed's own example shows non-monotonic counting without pretokenization: abacb (3 tokens)
#: then abacbb (2 tokens). Real-vocabulary witnesses: ``corpora/counting/``.
MONOTONE_WITNESS = {"vocab": "cl100k_base", "text": "xh", "appended": "r"}
DROP_WITNESS = {"vocab": "o200k_base", "text": "\uff41" * 6, "n": 5}
PRETOKENS_WITNESS = {"pattern": r"\s+(?!\S)|\s+|\S+", "text": "x  y", "k": 3}


def seed_example_counts() -> tuple[int, int]:
    """Counts of the seed's ``abacb`` and ``abacbb`` under its dictionary: (3, 2)."""
    ranks = {tok: rank for rank, tok in enumerate(SEED_EXAMPLE_DICT)}
    return count(ranks, b"abacb"), count(ranks, b"abacbb")


def _register() -> None:
    src = "seeds/bpe-backtracking-linear-encoder.txt"
    register(Claim("counting.C1", f"{src}, Incremental encoding",
                   "Appending text to a chunk and counting its tokens incrementally gives the "
                   "same count as encoding the chunk.", "proved", prop_appending))
    register(Claim("counting.C2", f"{src}, Incremental encoding",
                   "Prepending text to a chunk and counting its tokens incrementally gives the "
                   "same count as encoding the chunk.", "proved", prop_prepending))
    register(Claim("counting.C3", f"{src}, Interval counting",
                   "The interval encoder counts the tokens of a slice of the original text "
                   "exactly as the encoding of the slice from scratch.", "proved", prop_interval))
    register(Claim("counting.C4", f"{src}, Interval counting",
                   "With pre-tokenization the count of a slice is the sum of the interval counts "
                   "of the pretokens of the slice.", "proved", prop_pretokenized))
    register(Claim("counting.prefix_pretokens", f"{src}, Incremental encoding",
                   "The pretokens of a prefix are the pretokens of the text cut there.",
                   "falsified", prop_prefix_pretokens, PRETOKENS_WITNESS))
    register(Claim("counting.monotone", f"{src}, Incremental encoding",
                   "Appending more text never results in less tokens.", "falsified",
                   prop_monotone, MONOTONE_WITNESS))
    register(Claim("counting.drop_to_boundary", f"{src}, Split text after exactly n tokens",
                   "Dropping tokens until the split point is at a character boundary keeps a "
                   "chunk that is not empty.", "falsified", prop_drop_to_boundary, DROP_WITNESS))


_register()
