"""Offsets: what ``Encoding.offsets`` must satisfy, per engine family.

Source: the contract in ``src/tokspec/_types.py`` (offsets convention for tokens that split a
character) and the task brief (issue 6: "offsets cover the input in order, defined per family").

- Byte-level BPE: the offsets are a *contiguous partition* of the text: the first starts at 0,
  the last ends at ``len(text)``, every span is non-empty, and each span starts where the previous
  one ends, or one character earlier when the two tokens split that (multi-byte) character. The
  exact offsets follow from the tokens' byte lengths (:func:`prop_offsets_match_bytes`).
- WordPiece and Unigram (normalizing engines): spans are within bounds, in order (starts and
  ends non-decreasing), and every character no span covers is *skippable*: whitespace or a
  character normalization removes. Consecutive spans may overlap: all tokens made from one
  normalized character share the original characters it came from (``a`` + U+0323 composes to one
  character whose three byte-fallback tokens all cover both original characters). And offsets may
  step *backwards* inside a cluster of combining marks, because canonical reordering moves a mark
  of lower combining class first (U+0324 U+094D normalizes to U+094D U+0324): plain monotonicity is
  false (claim ``offsets.normalizing_monotone``, falsified). A span may be empty when the
  token stands for text normalization *inserted* (Metaspace's prepended ``▁``).

Out of scope: pretokenizer spans (``tokspec.spec.pretok``), special tokens.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Sequence

from tokspec._types import Span
from tokspec.spec._verdict import Claim, Verdict, fails, holds, register

__all__ = [
    "prop_contiguous_partition",
    "prop_offsets_match_bytes",
    "prop_monotone_cover",
    "default_skippable",
    "offsets_from_token_bytes",
    "REORDERING_COUNTEREXAMPLE",
]

_DROPPED_CATEGORIES = frozenset({"Cc", "Cf", "Mn", "Me", "Zs", "Zl", "Zp", "Cn"})


def default_skippable(ch: str) -> bool:
    """Whitespace, controls, format characters, combining marks, unassigned, U+FFFD: what BERT and
    Unigram normalizers may drop or fold into a neighbour's span."""
    return ch.isspace() or ch == "\ufffd" or unicodedata.category(ch) in _DROPPED_CATEGORIES


def offsets_from_token_bytes(text: str, token_lengths: Sequence[int]) -> list[Span]:
    """Independent oracle for the contract's convention: walk characters and bytes together.

    O(len(text) + tokens). Written separately from ``tokspec._offsets`` on purpose.
    """
    char_of_byte: list[int] = []
    for ci, ch in enumerate(text):
        char_of_byte += [ci] * len(ch.encode("utf-8"))
    out: list[Span] = []
    pos = 0
    for n in token_lengths:
        if n == 0:
            at = char_of_byte[pos] if pos < len(char_of_byte) else len(text)
            out.append((at, at))
        else:
            out.append((char_of_byte[pos], char_of_byte[pos + n - 1] + 1))
        pos += n
    return out


def prop_contiguous_partition(text: str, offsets: Sequence[Span]) -> Verdict:
    """Byte-level BPE offsets partition ``text`` in order (module docstring). O(tokens)."""
    if not text:
        return holds("empty text") if not offsets else fails("tokens for empty text", got=list(offsets))
    if not offsets or offsets[0][0] != 0 or offsets[-1][1] != len(text):
        return fails("offsets do not start at 0 and end at len(text)", text=text, offsets=list(offsets))
    for i, (s, e) in enumerate(offsets):
        if not s < e:
            return fails(f"token {i} has an empty or reversed span", text=text, index=i, span=[s, e])
        if i == 0:
            continue
        prev_end = offsets[i - 1][1]
        shares = s == prev_end - 1 and len(text[s].encode("utf-8")) > 1
        if s != prev_end and not shares:
            return fails(f"token {i} does not start where token {i - 1} ends (or inside its last "
                         "multi-byte character)", text=text, index=i, span=[s, e], prev_end=prev_end)
    return holds(f"{len(offsets)} spans partition {len(text)} characters")


def prop_offsets_match_bytes(text: str, offsets: Sequence[Span],
                             token_bytes: Sequence[bytes]) -> Verdict:
    """The offsets are exactly those implied by the tokens' bytes under the contract."""
    if b"".join(token_bytes) != text.encode("utf-8"):
        return fails("token bytes do not concatenate to the text", text=text)
    want = offsets_from_token_bytes(text, [len(t) for t in token_bytes])
    if list(offsets) == want:
        return holds("offsets match the token byte lengths")
    k = next(i for i, (a, b) in enumerate(zip(offsets, want)) if a != b) if len(offsets) == len(
        want) else min(len(offsets), len(want))
    return fails("offsets differ from those implied by token bytes", text=text, first_diff=k,
                 got=[list(s) for s in offsets], expected=[list(s) for s in want])


def _reorderable(ch: str) -> bool:
    """Can canonical reordering move marks across ``ch``? Yes if ``ch`` is a non-starter, and also
    if its canonical decomposition is made only of non-starters although ``ch`` itself has class 0:
    U+0F75 (class 0) decomposes to U+0F71 U+0F74 (classes 129, 132), so in U+2DF8 U+0F75 NFC moves
    U+2DF8 (class 230) after both (finding 4766982baa57d88c of prop--hf_mon-unigram). O(1)."""
    return bool(unicodedata.combining(ch)) or all(unicodedata.combining(d) for d in unicodedata.normalize("NFD", ch))


def _one_cluster(text: str, a: int, b: int, dropped: Sequence[bool] = ()) -> bool:
    """``text[a:b]`` is one canonical cluster: everything after its first character is
    :func:`_reorderable` or ``dropped`` (covered by no token: the normalizer removed it), so
    canonical reordering (NFC/NFD) may permute it. A removed character cannot keep marks apart:
    mon-unigram's normalizer deletes U+200B before NFC, so in U+A679 U+200B U+0859 the two marks
    (230, 220) meet and NFC swaps them (HF, the reference and ``fast:`` agree)."""
    return all(_reorderable(text[c]) or (c < len(dropped) and dropped[c]) for c in range(a + 1, b))


def prop_monotone_cover(text: str, offsets: Sequence[Span],
                        skippable: Callable[[str], bool] = default_skippable, *,
                        allow_reordering: bool = True) -> Verdict:
    """WordPiece/Unigram offsets: in bounds, ordered, and covering every character that is not
    skippable (empty spans allowed for inserted text; overlapping spans allowed, see the module
    docstring). With ``allow_reordering`` a step backwards is allowed inside one canonical cluster
    (a base character and its combining marks, with characters no token covers left out: see
    :func:`_one_cluster`), which canonical reordering permutes; without it
    the statement is the task brief's plain "monotone", which is FALSIFIED (claim
    ``offsets.normalizing_monotone``). O(len(text) + tokens)."""
    covered = [False] * len(text)
    for i, (s, e) in enumerate(offsets):
        if not 0 <= s <= e <= len(text):
            return fails(f"token {i} span out of bounds or reversed", text=text, index=i, span=[s, e])
        for c in range(s, e):
            covered[c] = True
    dropped = [not c for c in covered]
    prev: Span | None = None
    for i, (s, e) in enumerate(offsets):
        backwards = prev is not None and (s < prev[0] or e < prev[1])
        if backwards and prev is not None and not (
                allow_reordering and _one_cluster(text, min(s, prev[0]), max(e, prev[1]), dropped)):
            return fails(f"token {i} is out of order with token {i - 1}", text=text, index=i,
                         span=[s, e], prev=list(prev))
        prev = (s, e)
    missed = [c for c, done in enumerate(covered) if not done and not skippable(text[c])]
    if missed:
        c = missed[0]
        return fails(f"character {text[c]!r} at {c} is covered by no token and is not skippable",
                     text=text, index=c, offsets=[list(x) for x in offsets])
    return holds(f"{len(offsets)} ordered spans cover every non-skippable character")


#: Minimized by fuzzing hf:mon-unigram (NFC normalizer, byte fallback); HF and the reference agree.
REORDERING_COUNTEREXAMPLE = {"text": "\u0324\u094d", "offsets": [(0, 0), (1, 2), (0, 1), (0, 1)],
                             "allow_reordering": False}

register(Claim("offsets.normalizing_monotone", "task brief issue 6 (offsets of WordPiece/Unigram: "
               "monotone, within bounds, skipping only whitespace/normalized-away characters)",
               "Offsets of a normalizing engine are monotone (starts and ends non-decreasing).",
               "falsified", prop_monotone_cover, REORDERING_COUNTEREXAMPLE))
