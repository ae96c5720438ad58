"""Decoding, the optional half of the contract: ``decode(ids) -> str``, and comparing two decoders.

An engine *may* have a method ``decode(ids: list[int]) -> str`` (see :class:`tokspec.Encoder`): the
text its library gives back for a token id sequence, special tokens kept. Engines without one are
simply not compared on decoding. An engine may also tell:

- ``special_tokens() -> dict[str, int]``: its special (control) tokens, string -> id; an id from
  this table in the encoding of *text* is a special token promoted from text (class
  ``"special token from text"``, a security finding: special-token injection);
- ``n_vocab``: the number of ids ``decode`` accepts (``0 .. n_vocab - 1``), for random id sequences.

Decode comparison (:func:`decode_difference`), on the ids of a text both engines encoded alike:
the whole list, every prefix up to :data:`ALL_PREFIXES` tokens and a seeded sample of longer
prefixes and of slices (a stream cut at any token), and :data:`RANDOM_SEQUENCES` seeded random id
sequences over the vocabulary mixed with the special ids (special ids, byte-fallback ids, pieces that
are not valid UTF-8 alone). The seed is the text's sha256, so a comparison is reproducible. Two
decodes agree when both return the same ``str``, or both raise (messages are not compared: there is
no common error vocabulary). The first differing sequence is minimized (:func:`minimize_ids`: ddmin
over the id list, then single-id removal) to a :class:`DecodeDifference`.

Cost: O(ALL_PREFIXES + samples) decode calls per text, each O(tokens); minimizing O(k^2) calls on a
k-id sequence (k is small: a prefix or random sequence).

Out of scope: streaming decoders (:mod:`tokspec.streaming`) and ids outside ``0 .. n_vocab - 1``.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from tokspec._escape import escape

__all__ = ["DecodeOutcome", "DecodeDifference", "has_decode", "decode_of", "special_ids", "vocab_size",
           "id_sequences", "decode_difference", "minimize_ids", "promoted_special", "format_decode",
           "ALL_PREFIXES", "SAMPLED", "RANDOM_SEQUENCES"]

#: Every prefix of an id list up to this length is decoded; longer lists get sampled prefixes.
ALL_PREFIXES = 16
#: Sampled prefixes and slices of longer lists, and random id sequences, per text.
SAMPLED = 4
RANDOM_SEQUENCES = 3


@dataclass(frozen=True)
class DecodeOutcome:
    """What one engine's ``decode`` did: a text, or an error message (never both)."""

    text: str | None
    error: str | None = None

    def same_as(self, other: DecodeOutcome) -> bool:
        """Both gave the same text, or both raised (any message)."""
        return self.text == other.text if self.error is None and other.error is None else (
            self.error is not None and other.error is not None)

    def shown(self) -> str:
        """Escaped, for reports."""
        return f"ERROR {self.error}" if self.error is not None else escape(repr(self.text))

    def as_json(self) -> dict[str, Any]:
        return {"error": self.error} if self.error is not None else {"text": self.text}


@dataclass(frozen=True)
class DecodeDifference:
    """A minimized id sequence the two decoders disagree on, what each gave, and where it came from
    (``"ids"``, ``"prefix"``, ``"slice"`` or ``"random"``)."""

    ids: tuple[int, ...]
    a: DecodeOutcome
    b: DecodeOutcome
    origin: str

    def as_json(self) -> dict[str, Any]:
        return {"ids": list(self.ids), "origin": self.origin, "a": self.a.as_json(), "b": self.b.as_json()}


def has_decode(engine: Any) -> bool:
    """Does ``engine`` offer ``decode(ids)`` (a callable attribute)?"""
    return callable(getattr(engine, "decode", None))


def decode_of(engine: Any, ids: Sequence[int]) -> DecodeOutcome:
    """``engine.decode(list(ids))`` as an outcome: anything raised (``KeyboardInterrupt`` excepted)
    or a result that is not a ``str`` is an error, with an escaped one-line message."""
    try:
        out = engine.decode([int(i) for i in ids])
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # noqa: BLE001 - an engine under test may raise anything
        try:
            message = str(exc)
        except Exception:  # noqa: BLE001 - hostile __str__
            message = "(message unavailable)"
        return DecodeOutcome(None, escape(f"{type(exc).__name__}: {message}".replace("\n", " "))[:300])
    if not isinstance(out, str):
        return DecodeOutcome(None, f"decode returned {type(out).__name__}, not str")
    return DecodeOutcome(out)


def _plain_decode(engine: Any, ids: Sequence[int]) -> str | None:
    """``engine.decode`` of ``ids`` (ints already: :func:`id_sequences` made them) when it returns a
    plain ``str``; None when it raises or returns anything else (then :func:`decode_of` says what).
    A fresh list per call: an engine may mutate its argument."""
    try:
        out = engine.decode(list(ids))
    except KeyboardInterrupt:
        raise
    except BaseException:  # noqa: BLE001 - an engine under test may raise anything
        return None
    return out if type(out) is str else None


def special_ids(engine: Any) -> dict[int, str]:
    """``engine.special_tokens()`` inverted (id -> string); empty when it has none or it fails."""
    table = getattr(engine, "special_tokens", None)
    if not callable(table):
        return {}
    try:
        return {int(i): str(s) for s, i in dict(table()).items()}
    except Exception:  # noqa: BLE001 - optional and untrusted
        return {}


def vocab_size(engine: Any) -> int | None:
    """``engine.n_vocab`` when it is a positive int, else None."""
    n = getattr(engine, "n_vocab", None)
    return n if isinstance(n, int) and not isinstance(n, bool) and n > 0 else None


def _seed(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "little")


def id_sequences(ids: Sequence[int], seed: int, *, n_vocab: int | None = None,
                 specials: Sequence[int] = ()) -> Iterator[tuple[str, tuple[int, ...]]]:
    """The ``(origin, ids)`` sequences decoded for one text (module docstring), in a fixed order:
    the whole list, prefixes, slices, random sequences. Deterministic in ``seed``."""
    rng = random.Random(seed)
    ids = tuple(int(i) for i in ids)
    n = len(ids)
    yield "ids", ids
    ends = list(range(1, min(n, ALL_PREFIXES + 1))) + sorted(rng.sample(range(ALL_PREFIXES + 1, n), min(
        SAMPLED, max(0, n - ALL_PREFIXES - 1)))) if n > 1 else []
    for end in ends:
        yield "prefix", ids[:end]
    for _ in range(SAMPLED if n > 2 else 0):
        lo = rng.randrange(1, n)
        yield "slice", ids[lo:rng.randint(lo + 1, min(n, lo + 16))]
    pool = list(specials) + list(ids)
    for _ in range(RANDOM_SEQUENCES if (n_vocab or pool) else 0):
        k = rng.randint(1, 6)
        yield "random", tuple(rng.randrange(n_vocab) if n_vocab and (not pool or rng.random() < 0.7)
                              else rng.choice(pool) for _ in range(k))


def minimize_ids(ids: Sequence[int], differs: Callable[[Sequence[int]], bool]) -> tuple[int, ...]:
    """A short sub-sequence of ``ids`` on which ``differs`` still holds (``differs(ids)`` must hold).

    ddmin over the list: try dropping chunks of halving size; then every single id once more.
    1-minimal: dropping any single id makes ``differs`` false. O(k^2) calls on k ids."""
    current = list(ids)
    chunk = max(1, len(current) // 2)
    while chunk >= 1:
        i, changed = 0, False
        while i < len(current):
            trial = current[:i] + current[i + chunk:]
            if trial and differs(trial):
                current, changed = trial, True
            else:
                i += chunk
        if not changed:
            chunk //= 2
    return tuple(current)


def decode_difference(a: Any, b: Any, text: str, ids: Sequence[int]) -> DecodeDifference | None:
    """The first id sequence of :func:`id_sequences` (for ``text``'s ``ids``) whose decodes differ,
    minimized; None when they all agree or either engine has no ``decode``. Module docstring."""
    if not (has_decode(a) and has_decode(b)):
        return None
    na, nb = vocab_size(a), vocab_size(b)
    n_vocab = min(na, nb) if na and nb else None
    specials = sorted(set(special_ids(a)) & set(special_ids(b)))

    def differs(seq: Sequence[int]) -> bool:
        text_a, text_b = _plain_decode(a, seq), _plain_decode(b, seq)
        if text_a is not None and text_b is not None:  # the common case, without outcome objects
            return text_a != text_b
        return not decode_of(a, seq).same_as(decode_of(b, seq))

    for origin, seq in id_sequences(ids, _seed(text), n_vocab=n_vocab, specials=specials):
        if seq and differs(seq):
            small = minimize_ids(seq, differs)
            return DecodeDifference(small, decode_of(a, small), decode_of(b, small), origin)
    return None


def promoted_special(a: Any, b: Any, ids_a: Any, ids_b: Any) -> bool:
    """Does one side's id list hold a special token id (by either engine's table) that the other's
    does not? (Class ``"special token from text"``; both lists are of the same text.) O(tokens)."""
    specials = set(special_ids(a)) | set(special_ids(b))
    if not specials or ids_a is None or ids_b is None:
        return False
    return {int(i) for i in ids_a if int(i) in specials} != {int(i) for i in ids_b if int(i) in specials}


def _pieces(engine: Any, ids: Sequence[int]) -> str:
    out = []
    for i in ids:
        try:
            out.append(str(engine.token_piece(i)))
        except Exception:  # noqa: BLE001 - display only
            out.append("?")
    return escape(" ".join(repr(p) for p in out))


def format_decode(a: Any, b: Any, diff: DecodeDifference) -> list[str]:
    """Report lines of a decode difference: the id sequence, its pieces, and both decodes side by
    side (escaped)."""
    return [f"  decode differs on ids {list(diff.ids)} ({diff.origin})",
            f"    pieces (A): {_pieces(a, diff.ids)}",
            f"    A {escape(a.info.name)} decode: {diff.a.shown()}",
            f"    B {escape(b.info.name)} decode: {diff.b.shown()}"]
