"""Round trips: what ``decode(encode(x))`` gives back, per family, with its exact scope.

An engine with the optional ``decode`` (:mod:`tokspec.decoding`) is checked against these theorems;
each property takes the engine (``encode`` and ``decode``) and the text, plus what the family's
statement needs, and returns a :class:`Verdict` with a witness.

- **D1, byte-level BPE** (tiktoken, bpe-openai, HF ByteLevel): ``decode(encode(x)) == x`` for every
  ``x`` in the text domain. Proof: the tokens' bytes concatenate to ``x.encode("utf-8")`` (invariant
  B1 of ``reference.bpe_naive``), which is valid UTF-8, so the replacing decode is exact.
- **D2, prefixes of byte-level BPE**: for every ``k``, ``decode(ids[:k])`` is the UTF-8 decoding of
  the first ``k`` tokens' bytes with each maximal invalid subpart replaced by one U+FFFD; so it
  equals a prefix of ``x`` followed by at most one U+FFFD (a cut inside the last character).
- **D3, sentencepiece / Unigram with Metaspace**: let ``N`` be the normalized text (dummy prefix
  ``▁`` inserted, spaces as ``▁``). When the encoding holds no unknown token and ``N`` does not
  start with two markers, ``decode(encode(x)) == N.replace("▁", " ")`` without the one leading
  space of the dummy prefix. Out of scope: unknown pieces (decoded as `` ⁇ `` by sentencepiece,
  ``<unk>`` by HF), a text whose normalization starts with two markers (the decoder drops one
  marker per piece while its output is empty).
- **D4, WordPiece (BERT)**: let ``w_1 .. w_n`` be the normalized pretokens (lowercased, accents
  stripped, punctuation split). When no token is the unknown token, ``decode(encode(x))`` is the
  words joined by single spaces, except that no space precedes a word that is one of ``. ? ! ,``
  (the decoder's cleanup). Out of scope: ``[UNK]`` words (decoded as ``[UNK]``), and everything the
  normalizer removed or changed (case, accents, control characters, whitespace runs).

Out of scope: special tokens (text mode never produces them) and streaming decoders.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tokspec.spec._verdict import Verdict, fails, holds

__all__ = ["prop_bytelevel_round_trip", "prop_bytelevel_prefixes", "prop_metaspace_round_trip",
           "prop_wordpiece_round_trip", "expected_wordpiece", "expected_metaspace", "CLEANUP_WORDS"]

#: Words the WordPiece decoder's cleanup joins to the previous word without a space.
CLEANUP_WORDS = frozenset({".", "?", "!", ","})


def prop_bytelevel_round_trip(engine: Any, text: str) -> Verdict:
    """D1: ``decode(encode(text)) == text``."""
    ids = list(engine.encode(text).ids or ())
    back = engine.decode(ids)
    if back != text:
        return fails("D1: byte-level decode(encode(x)) differs from x", text=text, ids=ids, decoded=back)
    return holds(f"D1: {len(ids)} tokens decode back to the text")


def prop_bytelevel_prefixes(engine: Any, text: str, token_bytes: Callable[[int], bytes]) -> Verdict:
    """D2: every prefix of the ids decodes to its bytes, invalid subparts replaced, and that is a
    prefix of ``text`` plus at most one U+FFFD."""
    ids = list(engine.encode(text).ids or ())
    for k in range(len(ids) + 1):
        data = b"".join(token_bytes(i) for i in ids[:k])
        want = data.decode("utf-8", errors="replace")
        got = engine.decode(ids[:k])
        if got != want:
            return fails("D2: a prefix decodes otherwise than its bytes with replacement", text=text,
                         ids=ids[:k], decoded=got, expected=want)
        body = want[:-1] if want.endswith("\ufffd") else want
        if not text.startswith(body):
            return fails("D2: a prefix's decode is not a prefix of the text plus one U+FFFD", text=text,
                         ids=ids[:k], decoded=got)
    return holds(f"D2: all {len(ids) + 1} prefixes decode to a text prefix (+ U+FFFD at a cut)")


def expected_metaspace(normalized: str) -> str:
    """D3's right-hand side from the normalized text ``N``."""
    text = normalized.replace("\u2581", " ")
    return text[1:] if text.startswith(" ") else text


def prop_metaspace_round_trip(engine: Any, text: str, normalized: str, unk_id: int) -> Verdict:
    """D3 (module docstring); holds trivially outside its scope, saying so."""
    ids = list(engine.encode(text).ids or ())
    if unk_id in ids or normalized.startswith("\u2581\u2581"):
        return holds("D3: out of scope (an unknown token, or a normalization starting with two markers)")
    back, want = engine.decode(ids), expected_metaspace(normalized)
    if back != want:
        return fails("D3: decode(encode(x)) is not the normalized text", text=text, ids=ids, decoded=back,
                     expected=want)
    return holds(f"D3: {len(ids)} tokens decode to the normalized text")


def expected_wordpiece(words: list[str]) -> str:
    """D4's right-hand side from the normalized words."""
    out = ""
    for i, word in enumerate(words):
        out += word if i == 0 or word in CLEANUP_WORDS else " " + word
    return out


def prop_wordpiece_round_trip(engine: Any, text: str, words: list[str], unk_id: int) -> Verdict:
    """D4 (module docstring); holds trivially when a token is the unknown token, saying so."""
    ids = list(engine.encode(text).ids or ())
    if unk_id in ids:
        return holds("D4: out of scope (an [UNK] token)")
    back, want = engine.decode(ids), expected_wordpiece(words)
    if back != want:
        return fails("D4: decode(encode(x)) is not the normalized words joined", text=text, ids=ids,
                     decoded=back, expected=want)
    return holds(f"D4: {len(words)} words decode back")
