"""Byte-pair encoding: the definition, validity, and the backtracking seed's corollaries.

Source: ``/work/shared/seeds/bpe-backtracking-linear-encoder.txt`` (sections on the definition of
BPE, "valid encoding sequence", Corollaries I, II, IIa, III, IIIa and the ``abacbb`` example).

Definition used here (tiktoken semantics, the seeds' "Algorithm 1"): start from single bytes; while
some adjacent pair of parts concatenates to a token of ``ranks``, merge the pair whose concatenation
has the smallest rank, the leftmost such pair on ties; repeat. A token sequence is *valid* when
re-encoding its concatenation gives the same sequence.

Every property takes the encoder under test as ``encode`` (bytes -> list of token bytes), so the
same statement checks this definition, a fast engine, or a deliberately broken mutant.

Out of scope: pretokenization (see ``tokspec.spec.pretok``), special tokens, token ids (properties
work on token *bytes*; ids are a bijection given by ``ranks``), and whether token bytes are UTF-8.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from tokspec.spec._verdict import Claim, Verdict, all_of, fails, holds, register

__all__ = [
    "Ranks",
    "BytesEncoder",
    "bpe_encode",
    "is_valid",
    "prop_engine_is_bpe",
    "prop_output_valid",
    "prop_substrings_valid",
    "prop_last_token_determines",
    "prop_shared_token_concat",
    "prop_compatible_extension",
    "prop_seed_example",
    "prop_byte_roundtrip",
    "prop_whole_piece_shortcut",
    "SHORTCUT_COUNTEREXAMPLE",
]

Ranks = Mapping[bytes, int]
BytesEncoder = Callable[[bytes], list[bytes]]


def bpe_encode(ranks: Ranks, data: bytes) -> list[bytes]:
    """The definition of BPE (module docstring) on ``data``; returns the token bytes.

    >>> bpe_encode({b"ab": 0, b"bc": 1}, b"abc")
    [b'ab', b'c']

    Complexity O(n^2) for n bytes (n merges, each scanning all pairs): a definition, not an engine.
    """
    parts = [data[i:i + 1] for i in range(len(data))]
    while len(parts) > 1:
        best_rank, best_i = None, -1
        for i in range(len(parts) - 1):
            rank = ranks.get(parts[i] + parts[i + 1])
            # strict "<" keeps the leftmost pair among equal ranks (same token at two places)
            if rank is not None and (best_rank is None or rank < best_rank):
                best_rank, best_i = rank, i
        if best_rank is None:
            break
        parts[best_i:best_i + 2] = [parts[best_i] + parts[best_i + 1]]
    return parts


def is_valid(ranks: Ranks, tokens: Sequence[bytes], encode: BytesEncoder | None = None) -> bool:
    """Seed definition: ``tokens`` is valid iff encoding their concatenation gives them back."""
    enc = encode if encode is not None else (lambda d: bpe_encode(ranks, d))
    return enc(b"".join(tokens)) == list(tokens)


def _show(tokens: Sequence[bytes]) -> list[str]:
    return [t.hex() for t in tokens]


def prop_engine_is_bpe(ranks: Ranks, data: bytes, encode: BytesEncoder) -> Verdict:
    """Exactness: ``encode(data)`` equals the definition :func:`bpe_encode` (seed: "There exists
    exactly one valid encoding sequence for any input text" makes the answer unique)."""
    want, got = bpe_encode(ranks, data), encode(data)
    if got == want:
        return holds(f"engine equals the BPE definition on {len(data)} bytes")
    return fails("engine output differs from the BPE definition",
                 data=data.hex(), expected=_show(want), got=_show(got))


def prop_output_valid(ranks: Ranks, data: bytes, encode: BytesEncoder) -> Verdict:
    """The output covers ``data`` exactly, uses only vocabulary tokens (or single bytes), and is
    valid by the seed's definition when re-encoded *by the same engine* (a fixpoint check)."""
    tokens = encode(data)
    if b"".join(tokens) != data:
        return fails("tokens do not concatenate to the input", data=data.hex(), got=_show(tokens))
    bad = [t for t in tokens if len(t) > 1 and t not in ranks]
    if bad:
        return fails("a multi-byte token is not in the vocabulary", data=data.hex(), got=_show(bad))
    if not is_valid(ranks, tokens, encode):
        return fails("re-encoding the output changes it", data=data.hex(), got=_show(tokens))
    return holds("output is a valid encoding of the input")


def prop_substrings_valid(ranks: Ranks, data: bytes, encode: BytesEncoder | None = None) -> Verdict:
    """Corollary II: every contiguous run ``e_i..e_j`` of a valid encoding is valid.

    Proved (for the tiktoken definition, any ranks): the merges BPE performs inside the run, in
    the order it performs them, are also the minimum-rank leftmost merges of the run alone, because
    the run's candidate pairs are a subset of the whole text's at every step. O(k^2) encodes for k
    tokens.
    """
    enc = encode if encode is not None else (lambda d: bpe_encode(ranks, d))
    tokens = enc(data)
    checks = []
    for i in range(len(tokens)):
        for j in range(i + 1, len(tokens) + 1):
            run = tokens[i:j]
            got = enc(b"".join(run))
            checks.append(holds("run valid") if got == run else fails(
                f"Corollary II: run {i}..{j} of a valid encoding is not valid",
                data=data.hex(), encoding=_show(tokens), run=_show(run), run_encoding=_show(got)))
    return all_of(checks, "Corollary II")


def prop_last_token_determines(ranks: Ranks, data: bytes,
                               encode: BytesEncoder | None = None) -> Verdict:
    """Corollary IIa: the last token of a valid encoding determines it: for every prefix ``p``,
    ``enc(p) == enc(p minus its last token's bytes) + [last token]``. O(n) encodes."""
    enc = encode if encode is not None else (lambda d: bpe_encode(ranks, d))
    checks = []
    for k in range(1, len(data) + 1):
        full = enc(data[:k])
        last = full[-1] if full else b""
        rest = enc(data[:k - len(last)]) if last else None
        if not last or rest != full[:-1]:
            checks.append(fails("Corollary IIa: prefix encoding is not (shorter prefix) + last token",
                                data=data.hex(), prefix_len=k, encoding=_show(full),
                                shorter=_show(rest or [])))
    return all_of(checks, "Corollary IIa") if checks else holds(
        f"Corollary IIa holds for all {len(data)} prefixes")


def prop_shared_token_concat(ranks: Ranks, left: bytes, token: bytes, right: bytes,
                             encode: BytesEncoder | None = None) -> Verdict:
    """Corollary III: if ``e_0..e_i`` (ending in token t) and ``e_i..e_n`` (starting with the same
    t) are valid, then ``e_0..e_i..e_n`` is valid. Vacuous (holds) when the premise fails.

    Proved (tiktoken definition): no merge of the whole text can cross t's edges, by induction on
    merges: each global minimum is the minimum of the side (left+t or t+right) containing it.
    """
    enc = encode if encode is not None else (lambda d: bpe_encode(ranks, d))
    a, b = enc(left + token), enc(token + right)
    if not a or not b or a[-1] != token or b[0] != token:
        return holds("premise not met (the shared token is not at the seam of both encodings)")
    want, got = a + b[1:], enc(left + token + right)
    if got == want:
        return holds("Corollary III: concatenation at the shared token is valid")
    return fails("Corollary III: joining two valid encodings at a shared token is not valid",
                 left=left.hex(), token=token.hex(), right=right.hex(),
                 joined=_show(want), encoding=_show(got))


def prop_compatible_extension(ranks: Ranks, data: bytes, token: bytes,
                              encode: BytesEncoder | None = None) -> Verdict:
    """Corollary IIIa: if ``e_0..e_i`` is valid and the pair ``e_i token`` is valid, then
    ``e_0..e_i token`` is valid. The backtracking encoder's correctness rests on it. Vacuous when
    the premise fails."""
    enc = encode if encode is not None else (lambda d: bpe_encode(ranks, d))
    tokens = enc(data)
    if not tokens or enc(tokens[-1] + token) != [tokens[-1], token]:
        return holds("premise not met (last token and the new token are not a valid pair)")
    got = enc(data + token)
    if got == tokens + [token]:
        return holds("Corollary IIIa: extension by a compatible token is valid")
    return fails("Corollary IIIa: extension by a compatible token is not valid",
                 data=data.hex(), token=token.hex(), expected=_show(tokens + [token]),
                 encoding=_show(got))


#: The seed's worked example: dictionary (in rank order) and the encodings of every prefix.
SEED_EXAMPLE_DICT = (b"a", b"b", b"c", b"ab", b"cb", b"ac", b"bb", b"cbb", b"acbb")
SEED_EXAMPLE_PREFIXES = {
    b"a": [b"a"], b"ab": [b"ab"], b"aba": [b"ab", b"a"], b"abac": [b"ab", b"ac"],
    b"abacb": [b"ab", b"a", b"cb"], b"abacbb": [b"ab", b"acbb"],
}


def prop_seed_example(encode_with: Callable[[Ranks, bytes], list[bytes]] = bpe_encode) -> Verdict:
    """The seed's ``abacbb`` example: prefix encodings as printed in the seed."""
    ranks = {tok: rank for rank, tok in enumerate(SEED_EXAMPLE_DICT)}
    checks = []
    for prefix, want in SEED_EXAMPLE_PREFIXES.items():
        got = encode_with(ranks, prefix)
        checks.append(holds("ok") if got == want else fails(
            "seed example prefix encodes differently", prefix=prefix.hex(),
            expected=_show(want), got=_show(got)))
    return all_of(checks, "seed abacbb example")


def prop_byte_roundtrip(text: str, ids: Sequence[int], token_bytes: Callable[[int], bytes]) -> Verdict:
    """Byte round trip for byte-level engines: the tokens' bytes concatenate to ``text`` in UTF-8.

    (For normalizing engines the right statement is in ``tokspec.spec.offsets`` and
    ``tokspec.spec.wordpiece``: each token is the normalized form of the text it covers.)
    """
    got = b"".join(token_bytes(i) for i in ids)
    want = text.encode("utf-8")
    if got == want:
        return holds(f"{len(ids)} tokens decode to the {len(want)} input bytes")
    k = next((i for i, (x, y) in enumerate(zip(got, want)) if x != y), min(len(got), len(want)))
    return fails("decoded bytes differ from the input", text=text, first_diff_byte=k,
                 decoded=got.hex(), expected=want.hex())


def prop_whole_piece_shortcut(ranks: Ranks, data: bytes) -> Verdict:
    """tiktoken's short-circuit (reference Invariant B4): "a pretoken that is itself a token
    encodes to that one token". Equivalent to: the token is *reachable* (BPE of its own bytes is
    itself). FALSIFIED in general, even for proper merge tables (every token the merge of two
    earlier ones): with merges b+c, a+b, c+d, ab+cd, BPE on ``abcd`` merges ``bc`` first and gets
    stuck at ``a bc d``, while tiktoken returns ``abcd``. Holds for cl100k_base and o200k_base,
    whose tokens are all reachable (checked by the backtracking encoder's build in tests)."""
    if data not in ranks:
        return holds("premise not met (the input is not a token)")
    got = bpe_encode(ranks, data)
    if got == [data]:
        return holds("the token is reachable: BPE encodes it as itself")
    return fails("a token is not reachable: BPE splits it, tiktoken's short-circuit does not",
                 ranks={k.hex(): r for k, r in ranks.items()}, data=data.hex(),
                 bpe=_show(got), shortcut=_show([data]))


#: Minimized counterexample to the short-circuit claim (found by hyp--bpe_reference_tiny).
SHORTCUT_COUNTEREXAMPLE = {
    "ranks": {b"a": 0, b"b": 1, b"c": 2, b"d": 3, b"bc": 4, b"ab": 5, b"cd": 6, b"abcd": 7},
    "data": b"abcd",
}


def _register() -> None:
    src = "seeds/bpe-backtracking-linear-encoder.txt"
    for name, stmt, check in (
        ("bpe.corollary_II", "Any substring e_i..e_j of a valid encoding sequence is valid.",
         prop_substrings_valid),
        ("bpe.corollary_IIa", "Knowing the last token of a valid encoding determines it.",
         prop_last_token_determines),
        ("bpe.corollary_III", "Two valid encodings sharing the token e_i concatenate to a valid one.",
         prop_shared_token_concat),
        ("bpe.corollary_IIIa", "Valid e_0..e_i plus a valid pair e_i e_j gives valid e_0..e_i e_j.",
         prop_compatible_extension),
    ):
        register(Claim(name, f"{src}, {name.split('.')[1]}", stmt, "proved", check))
    register(Claim("bpe.whole_piece_shortcut", "tiktoken byte_pair_encode short-circuit; "
                   "reference/bpe_naive.py Invariant B4",
                   "A pretoken that is itself a token encodes to that single token.", "falsified",
                   prop_whole_piece_shortcut, SHORTCUT_COUNTEREXAMPLE))
    register(Claim("bpe.seed_example", f"{src}, abacbb example",
                   "abacb encodes as ab a cb; abacbb as ab acbb (and the other prefixes shown).",
                   "checked", prop_seed_example))


_register()
