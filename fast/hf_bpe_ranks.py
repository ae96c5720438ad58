"""Rank tables from an HF byte-level BPE ``model`` (vocab + merges), only where provably equivalent.

HF BPE (merge-list semantics) repeatedly merges the adjacent pair that comes *first in the merge
list* (leftmost on ties). The backtracking encoder (``tokspec.fast.bpe_backtrack``) implements
*rank semantics*: merge any adjacent pair whose concatenation is a token, the token of lowest rank
first (leftmost on ties), rank = token id. :func:`ranks_from_model` builds the rank table and checks,
at build, the conditions under which the two agree, refusing the file otherwise:

- R1 (byte level): every one of the 256 ByteLevel characters is a token, and the model has no
  ``byte_fallback``, ``continuing_subword_prefix``, ``end_of_word_suffix`` or ``dropout``.
- R2 (merges are well formed): each merge ``(a, b)`` names tokens, produces the token ``a + b``,
  and is listed once.
- R3 (rank-consistent order, :class:`MergeOrderError`): the merge list is ordered by the id of the
  token each merge produces: merge ``i`` before merge ``j`` implies ``id(a_i+b_i) <= id(a_j+b_j)``.
- R4 (complete, :class:`IncompleteMergesError`): every split of a token into two tokens is a merge.
  Without it, rank semantics merges a pair HF never merges (finding ``merges-unreachable-abc``).

Under R1-R4 the pairs either semantics may merge are the same (R4), and their priorities agree
(R3) except between two *different* pairs that produce the *same* token: HF takes the one listed
first, rank semantics the leftmost. That tie is the one case this module does not prove harmless
(files converted from tiktoken ranks list every split of a token next to each other, so the tie is
real; the differential tests against ``hf:``, ``tests/test_fast_hf_bpe.py``, are the evidence).

Tokens whose strings are not ByteLevel text (added tokens kept in ``vocab``) are left out of the
table: no pretoken after ByteLevel can spell them. Cost: O(sum of token lengths) dictionary work.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tokspec.errors import UnsupportedComponentError, VocabularyError

__all__ = ["ByteLevelRanks", "IncompleteMergesError", "MergeOrderError", "NotRankConsistentError",
           "byte_alphabet", "ranks_from_model"]


class NotRankConsistentError(UnsupportedComponentError):
    """The merge list of a BPE tokenizer.json cannot be replaced by ranks (module docstring)."""


class MergeOrderError(NotRankConsistentError):
    """R3 fails: a merge is listed before one producing a token of lower id."""


class IncompleteMergesError(NotRankConsistentError):
    """R4 fails: a token splits into two tokens that the merge list does not merge."""


def byte_alphabet() -> dict[str, int]:
    """The GPT-2 ByteLevel alphabet, character -> byte: printable Latin-1 bytes stand for
    themselves, the other 68 bytes (controls, space, NBSP, soft hyphen) for U+0100 onwards in byte
    order. Example: ``"a" -> 0x61``, ``"Ġ" -> 0x20`` (U+0120)."""
    printable = [*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    table = {chr(b): b for b in printable}
    others = [b for b in range(256) if b not in set(printable)]
    table.update({chr(0x100 + k): b for k, b in enumerate(others)})
    return table


@dataclass(frozen=True)
class ByteLevelRanks:
    """``ranks``: token bytes -> id (= rank) of every ByteLevel token; ``ignore_merges``: the file's
    flag; ``n_merges``: merges checked."""

    ranks: dict[bytes, int]
    ignore_merges: bool
    n_merges: int


def _bytes_of(token: str, alphabet: Mapping[str, int]) -> bytes | None:
    """A token's bytes, or None if it is not ByteLevel text."""
    try:
        return bytes(alphabet[c] for c in token)
    except KeyError:
        return None


def _check_model_flags(model: Mapping[str, Any], where: str) -> None:
    if model.get("type") != "BPE":
        raise UnsupportedComponentError(f"{where}: model.type={model.get('type')!r}, expected 'BPE'")
    for key in ("byte_fallback", "continuing_subword_prefix", "end_of_word_suffix", "dropout"):
        if model.get(key) not in (None, False, "", 0, 0.0):
            raise UnsupportedComponentError(
                f"{where}: model.{key}={model[key]!r} is not byte-level BPE; fast: needs it unset "
                "(use reference:PATH)")


def _merge_pairs(raw: Any, where: str) -> list[tuple[str, str]]:
    pairs = []
    for i, m in enumerate(raw or []):
        parts = m.split(" ") if isinstance(m, str) else m
        if not isinstance(parts, list) or len(parts) != 2 or not all(isinstance(p, str) for p in parts):
            raise VocabularyError(f"{where}: merge #{i} must be 'LEFT RIGHT' or [LEFT, RIGHT], got {m!r}")
        pairs.append((parts[0], parts[1]))
    return pairs


def ranks_from_model(model: Mapping[str, Any], where: str) -> ByteLevelRanks:
    """Check R1-R4 (module docstring) on a tokenizer.json ``model`` object; return its ranks.

    Raises UnsupportedComponentError (R1), VocabularyError (R2), MergeOrderError (R3),
    IncompleteMergesError (R4), each naming the first offending token or merge.
    """
    _check_model_flags(model, where)
    alphabet = byte_alphabet()
    vocab: dict[str, int] = dict(model.get("vocab") or {})
    missing = [c for c in alphabet if c not in vocab]
    if missing:
        raise UnsupportedComponentError(
            f"{where}: not byte-level BPE: ByteLevel character {missing[0]!r} (byte "
            f"{alphabet[missing[0]]:#04x}) is not in the vocab ({len(missing)} missing)")
    ranks = {b: i for t, i in vocab.items() if (b := _bytes_of(t, alphabet)) is not None}
    merged = _check_merges(_merge_pairs(model.get("merges"), where), vocab, where)
    _check_complete(ranks, merged, where)
    return ByteLevelRanks(ranks, bool(model.get("ignore_merges", False)), len(merged))


def _check_merges(pairs: list[tuple[str, str]], vocab: Mapping[str, int], where: str) -> set[tuple[str, str]]:
    """R2 and R3; returns the merges as a set."""
    seen: set[tuple[str, str]] = set()
    last = -1  # id of the token the previous merge produces
    for i, (a, b) in enumerate(pairs):
        for tok in (a, b, a + b):
            if tok not in vocab:
                raise VocabularyError(f"{where}: merge #{i} {a!r} {b!r}: token {tok!r} is not in the vocab")
        if (a, b) in seen:
            raise VocabularyError(f"{where}: merge #{i} {a!r} {b!r} is listed twice")
        seen.add((a, b))
        produced = vocab[a + b]
        if produced < last:
            raise MergeOrderError(
                f"{where}: merge #{i} {a!r} {b!r} produces id={produced}, but an earlier merge produces "
                f"id={last}: merge order is not token-id order, so ranks cannot stand for the merge "
                "list (use reference:PATH or hf:PATH)")
        last = produced
    return seen


def _check_complete(ranks: Mapping[bytes, int], merged: set[tuple[str, str]], where: str) -> None:
    """R4: for every token and every cut into two tokens, the pair is a merge."""
    to_char = {b: c for c, b in byte_alphabet().items()}
    for tok in ranks:
        for k in range(1, len(tok)):
            if tok[:k] in ranks and tok[k:] in ranks:
                a = "".join(to_char[x] for x in tok[:k])
                b = "".join(to_char[x] for x in tok[k:])
                if (a, b) not in merged:
                    raise IncompleteMergesError(
                        f"{where}: token {a + b!r} splits into tokens {a!r} + {b!r} but the merge list "
                        "has no such merge: rank semantics would merge that pair, HF never does (use "
                        "reference:PATH or hf:PATH)")
