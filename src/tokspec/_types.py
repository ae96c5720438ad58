"""The contract every engine satisfies: ``Encoder.encode(text) -> Encoding``.

Text domain (the same for every engine, checked once in :meth:`Encoder.encode`):

- Input is a Python ``str`` of Unicode scalar values. A lone surrogate (U+D800..U+DFFF) cannot be
  encoded as UTF-8, and production libraries disagree on what to do with one (tiktoken replaces it
  with U+FFFD, HF raises, sentencepiece drops it), so tokspec rejects it with
  :class:`~tokspec.errors.InvalidTextError` naming its index, for every engine alike.
- NUL and every other control character are ordinary characters.
- The empty string encodes to the empty Encoding.
- There is no length limit in the contract; engines that run out of process enforce a time limit.

Offsets are *character* offsets into the ``str`` given to ``encode``: ``text[start:end]`` is the
text a token covers. When a token's bytes split a multi-byte character (byte-level BPE), the token
covers the whole character, so neighbouring tokens may share that character: the convention of HF
``tokenizers``. Formally, for a token whose UTF-8 byte span is ``[b0, b1)``, ``start`` is the index of
the character containing byte ``b0`` and ``end`` is one past the character containing byte ``b1 - 1``.

Engines that normalize (WordPiece, Unigram, anything with a normalizer) map each normalized
character to its *origins*, the original characters it came from (a composed character has all of
its sources; an inserted character such as the ``▁`` of a dummy prefix has none). A token's span is
``[min origin, max origin + 1)`` over its characters' origins; a token with no origin at all gets the
empty span ``(p, p)`` where ``p`` is the original position at which it was inserted. Spans are listed
in token order and their starts never decrease, *except* where the normalizer itself reorders
characters (Unicode canonical reordering of combining marks): there the true origin wins over text
order. Text a normalizer deletes belongs to no token. ``tokspec.spec`` states these as properties
per family; production libraries whose raw offsets differ are converted by their adapters, and the
raw form stays available where an engine offers ``offsets="library"``.
"""

from __future__ import annotations

import regex
from abc import ABC
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from tokspec.errors import EngineFault, InvalidTextError

__all__ = ["Encoding", "EncodingArrays", "EngineInfo", "Encoder", "check_text", "Span"]

Span = tuple[int, int]
EngineKind = Literal["tokenizer", "pretokenizer"]

#: lone surrogates: searched with the ``regex`` module, about six times the speed of ``re`` on a
#: character class (0.2-0.5 ns per character, measured for issue 29), as every encode checks the text.
_SURROGATE = regex.compile("[\ud800-\udfff]")


def check_text(text: object) -> str:
    """Return ``text`` if it is in tokspec's text domain, else raise InvalidTextError."""
    if not isinstance(text, str):
        raise InvalidTextError(f"text must be str, got {type(text).__name__}: text={text!r:.80}")
    if text.isascii():  # O(1) in CPython: an ASCII string holds no surrogate
        return text
    bad = _SURROGATE.search(text)
    if bad is not None:
        i = bad.start()
        raise InvalidTextError(
            f"text contains a lone surrogate {text[i]!r} at index {i}; tokspec's text domain is "
            "Unicode scalar values (decode bytes with errors='replace' or 'strict' first)"
        )
    return text


@dataclass(frozen=True)
class Encoding:
    """What an engine returns for one text.

    ``ids[i]`` is the id of token ``i`` and ``offsets[i] == (start, end)`` the characters it covers.
    A pretokenizer returns ``ids=None`` and one span per pretoken. Invariant (checked by
    :meth:`validate`): ``ids`` is None or as long as ``offsets``; ``0 <= start <= end <= len(text)``.
    ``pieces`` optionally gives each token's surface (for display only; never compared).
    """

    ids: tuple[int, ...] | None
    offsets: tuple[Span, ...]
    pieces: tuple[str, ...] | None = field(default=None, compare=False)

    @classmethod
    def of(cls, ids: list[int] | tuple[int, ...] | None, offsets: list[Span] | tuple[Span, ...],
           pieces: list[str] | tuple[str, ...] | None = None) -> Encoding:
        """Build an Encoding from lists (converting to tuples)."""
        return cls(None if ids is None else tuple(int(i) for i in ids),
                   tuple((int(s), int(e)) for s, e in offsets),
                   None if pieces is None else tuple(pieces))

    @classmethod
    def from_arrays(cls, arrays: EncodingArrays) -> Encoding:
        """The Encoding of ``arrays``, built in O(1): ``ids`` and ``offsets`` are materialized
        (one Python object per token, exactly what :meth:`EncodingArrays.to_encoding` gives) on
        their first read, then kept. Invariant: indistinguishable from ``arrays.to_encoding()``
        (type, fields, equality, hash, repr, pickle); ``len`` reads the arrays. ``arrays`` must be
        owned by the caller (no one writes to them afterwards)."""
        encoding = object.__new__(cls)
        state = encoding.__dict__
        if arrays.ids is None:
            state["ids"] = None
        state["pieces"] = None
        state["_arrays"] = arrays
        return encoding

    def __getattr__(self, name: str) -> object:
        # only reached when ``name`` is not yet in the instance dict: a lazy field (from_arrays)
        state = self.__dict__
        if name in ("ids", "offsets"):
            arrays = state.get("_arrays")
            if arrays is not None:
                ids = arrays.ids
                value = (tuple(zip(arrays.starts.tolist(), arrays.ends.tolist())) if name == "offsets"
                         else None if ids is None else tuple(ids.tolist()))
                state.setdefault(name, value)  # a racing thread computed the same value
                if "ids" in state and "offsets" in state:
                    state.pop("_arrays", None)
            if name in state:
                return state[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __getstate__(self) -> dict[str, object]:
        # the eager fields only, in field order: a pickle is the same as before from_arrays existed
        return {"ids": self.ids, "offsets": self.offsets, "pieces": self.pieces}

    def validate(self, text: str, engine: str = "engine") -> Encoding:
        """Return self if it is a well-formed Encoding of ``text``; raise EngineFault otherwise."""
        if self.ids is not None and len(self.ids) != len(self.offsets):
            raise EngineFault(f"{engine} returned {len(self.ids)} ids but {len(self.offsets)} offsets")
        n = len(text)
        for i, (s, e) in enumerate(self.offsets):
            if not 0 <= s <= e <= n:
                raise EngineFault(f"{engine} returned offset {i}={(s, e)} outside text of length {n}")
        return self

    def __len__(self) -> int:
        arrays = self.__dict__.get("_arrays")
        return len(self.offsets) if arrays is None else len(arrays)


@dataclass(frozen=True, eq=False)
class EncodingArrays:
    """An :class:`Encoding` as numpy arrays: no Python object per token.

    ``ids`` is an int64 array (None for a pretokenizer), ``starts`` and ``ends`` int64 arrays of
    the same length: token ``i`` covers ``text[starts[i]:ends[i]]``. Same invariants and meaning as
    :class:`Encoding` (``pieces`` are not carried: they are for display only). Two of them are
    equal (:meth:`same_as`) iff their ids and both offset arrays are equal element by element.
    """

    ids: np.ndarray | None
    starts: np.ndarray
    ends: np.ndarray

    @classmethod
    def empty(cls, *, tokenizer: bool = True) -> EncodingArrays:
        """The encoding of the empty text."""
        none = np.zeros(0, dtype=np.int64)
        return cls(none.copy() if tokenizer else None, none, none.copy())

    @classmethod
    def from_encoding(cls, encoding: Encoding) -> EncodingArrays:
        """Convert (one Python-level pass over the tokens)."""
        spans = np.array(encoding.offsets, dtype=np.int64).reshape(-1, 2)
        ids = None if encoding.ids is None else np.array(encoding.ids, dtype=np.int64)
        return cls(ids, np.ascontiguousarray(spans[:, 0]), np.ascontiguousarray(spans[:, 1]))

    def to_encoding(self) -> Encoding:
        """The tuple form (one Python object per token)."""
        ids = None if self.ids is None else tuple(self.ids.tolist())
        return Encoding(ids, tuple(zip(self.starts.tolist(), self.ends.tolist())))

    def same_as(self, other: EncodingArrays) -> bool:
        """True iff ids (or both None) and offsets agree exactly."""
        return self.first_difference(other) is None

    def first_difference(self, other: EncodingArrays) -> int | None:
        """Index of the first token where ``self`` and ``other`` differ (id, start or end; ids
        compared only when both have them), ``min(len)`` when one is a proper prefix of the other,
        None when equal. O(tokens) in numpy."""
        n = min(len(self), len(other))
        differs = (self.starts[:n] != other.starts[:n]) | (self.ends[:n] != other.ends[:n])
        if self.ids is not None and other.ids is not None:
            differs |= self.ids[:n] != other.ids[:n]
        elif (self.ids is None) != (other.ids is None):
            return 0
        hit = np.flatnonzero(differs)
        if len(hit):
            return int(hit[0])
        return None if len(self) == len(other) else n

    def validate(self, text: str, engine: str = "engine") -> EncodingArrays:
        """Return self if well formed (int64 1-d arrays of one length, ``0 <= start <= end <=
        len(text)``); raise EngineFault otherwise. O(tokens) in numpy."""
        arrays = [a for a in (self.ids, self.starts, self.ends) if a is not None]
        if any(not isinstance(a, np.ndarray) or a.ndim != 1 or a.dtype != np.int64 for a in arrays):
            raise EngineFault(f"{engine} returned arrays that are not 1-d int64 numpy arrays")
        if len({len(a) for a in arrays}) > 1:
            raise EngineFault(f"{engine} returned arrays of lengths {[len(a) for a in arrays]}")
        # reductions first, the index only on failure; a compare, not ends - starts, which a
        # hostile engine's extreme values would overflow
        if len(self.starts) and (self.starts.min() < 0 or self.ends.max() > len(text)
                                 or bool((self.starts > self.ends).any())):
            bad = np.flatnonzero((self.starts < 0) | (self.starts > self.ends) | (self.ends > len(text)))
            i = int(bad[0])
            raise EngineFault(f"{engine} returned offset {i}={(int(self.starts[i]), int(self.ends[i]))} "
                              f"outside text of length {len(text)}")
        return self

    def __len__(self) -> int:
        return len(self.starts)


@dataclass(frozen=True)
class EngineInfo:
    """What an engine is: its registry name, the library and version doing the work, the vocabulary.

    ``vocab_sha256`` is the sha256 of the vocabulary file the engine was built from (None for
    pretokenizers and engines without a file). ``offsets`` False declares that the engine's
    offsets mean nothing (a library that returns ids only): a pair with such an engine is compared
    on ids alone, and tokspec says so (:mod:`tokspec.adapt`).

    ``thread_safe``: may several threads call ``encode`` on this one instance at once, each call
    returning what it returns alone? True or False as declared by the engine; None (the default)
    means unknown, and then tokspec checks before using threads (``lopt:``; see
    :mod:`tokspec.concurrency`). ``tokspec diff`` tests engines that are not declared unsafe.
    """

    name: str
    kind: EngineKind
    library: str
    library_version: str
    vocab_sha256: str | None
    description: str = ""
    offsets: bool = True
    thread_safe: bool | None = None


class Encoder(ABC):
    """An engine. Subclasses implement :meth:`_encode` or :meth:`_encode_arrays` (or both);
    :meth:`encode` and :meth:`encode_arrays` enforce the text domain and give either form.

    An engine whose work produces arrays (compiled kernels, numpy offsets) implements
    ``_encode_arrays`` and gets ``encode`` from it (an :meth:`Encoding.from_arrays`, which keeps
    the arrays: ``_encode_arrays`` returns arrays no one writes to afterwards, fresh per call, never
    a reused buffer); an engine that builds tuples implements
    ``_encode`` and gets ``encode_arrays`` by conversion.

    ``encode_batch_arrays(texts)`` encodes several texts (default: a loop; engines with a batch
    API, e.g. HF's ``encode_batch``, override ``_encode_batch_arrays``).

    ``token_piece(id)`` gives a readable surface for reports (default: the id); engines with a
    vocabulary override it.
    """

    info: EngineInfo

    def encode(self, text: str) -> Encoding:
        """Encode ``text``; raise InvalidTextError outside the text domain (see module docstring)."""
        check_text(text)
        if not text:
            return Encoding((), ()) if self.info.kind == "tokenizer" else Encoding(None, ())
        return self._encode(text)

    def encode_arrays(self, text: str) -> EncodingArrays:
        """Like :meth:`encode`, as arrays (see :class:`EncodingArrays`)."""
        check_text(text)
        if not text:
            return EncodingArrays.empty(tokenizer=self.info.kind == "tokenizer")
        return self._encode_arrays(text)

    def encode_batch_arrays(self, texts: list[str]) -> list[EncodingArrays]:
        """:meth:`encode_arrays` of each text, in order. Every text is checked first (so nothing
        is encoded when one is outside the text domain). Engines with a batch API (HF's
        ``encode_batch``, which encodes on the library's threads) override :meth:`_encode_batch_arrays`;
        the default is a loop."""
        for text in texts:
            check_text(text)
        kind = self.info.kind == "tokenizer"
        todo = [t for t in texts if t]
        done = iter(self._encode_batch_arrays(todo) if todo else [])
        return [next(done) if t else EncodingArrays.empty(tokenizer=kind) for t in texts]

    def _encode_batch_arrays(self, texts: list[str]) -> list[EncodingArrays]:
        """Encode non-empty texts in the text domain (default: one by one)."""
        return [self._encode_arrays(t) for t in texts]

    def _encode(self, text: str) -> Encoding:
        """Encode a non-empty text in the text domain (default: from :meth:`_encode_arrays`, as an
        :meth:`Encoding.from_arrays`: ids and offsets become Python objects only when read)."""
        if type(self)._encode_arrays is Encoder._encode_arrays:
            raise NotImplementedError(f"{type(self).__name__} implements neither _encode nor _encode_arrays")
        return Encoding.from_arrays(self._encode_arrays(text))

    def _encode_arrays(self, text: str) -> EncodingArrays:
        """Encode a non-empty text as arrays (default: convert :meth:`_encode`)."""
        if type(self)._encode is Encoder._encode:
            raise NotImplementedError(f"{type(self).__name__} implements neither _encode nor _encode_arrays")
        return EncodingArrays.from_encoding(self._encode(text))

    def token_piece(self, token_id: int) -> str:
        """A readable form of token ``token_id`` for reports (never used for comparison)."""
        return str(token_id)

    def close(self) -> None:
        """Release resources (subprocesses, pools). Idempotent."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.info.name!r}>"
