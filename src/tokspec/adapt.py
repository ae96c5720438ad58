"""Turn a library that returns ids (or pieces, or byte spans) into a tokspec engine, in about three lines.

Most tokenizer libraries return token ids only. tokspec compares ids *and* character offsets, so an
adapter needs the offsets; for a byte-level vocabulary they follow from the ids alone: token ``i``
covers the UTF-8 bytes ``token_bytes(ids[i])``, laid end to end over the text, and bytes map to
characters by the contract's rule (:mod:`tokspec._types`: a token whose bytes split a character
covers that whole character). So::

    import tiktoken, tokspec
    enc = tiktoken.get_encoding("cl100k_base")
    engine = tokspec.engine_from_ids(enc.encode_ordinary, enc.decode_single_token_bytes, name="mine")

is a complete engine (the same derivation tokspec's own adapters use, :mod:`tokspec._offsets`).

Helpers, one per shape of library output:

- :func:`engine_from_ids` ``(encode, token_bytes)``: byte-level vocabularies (GPT-2/tiktoken/
  Llama-3 style). ``normalize="NFC"`` (or NFD, NFKC, NFKD) for a library that normalizes before
  byte-level BPE: the token bytes then spell the *normalized* text, and each normalized character
  is mapped back to the original characters it came from (see :func:`normalized_origins`).
- :func:`engine_from_byte_spans` ``(encode -> (ids, byte spans))``: libraries that report UTF-8
  byte offsets into the original text. SentencePiece: ``sp.encode(text,
  out_type="immutable_proto")`` gives each piece's ``begin``/``end`` bytes; pieces of a normalizing
  model (dummy prefix ``▁``, NFKC) are then mapped right, which concatenated piece strings cannot do.
- :func:`engine_from_offsets` ``(encode -> (ids, char spans))``: libraries that already report
  character offsets into the original text (HF ``tokenizers``' WordPiece: ``enc.ids``, ``enc.offsets``).
- :func:`ids_only` (or ``EngineInfo(offsets=False)``, ``tokspec diff --compare ids``, the plugin's
  ``compare="ids"``): compare on ids alone, when no offsets can be had (a WordPiece library returning
  ``##`` pieces of lowercased, accent-stripped text). tokspec says so in its summary.

Every helper returns an :class:`~tokspec.Encoder`; ``decode`` (ids -> str), when given, is offered
for the "decoded text differs" classification. Errors: a ``token_bytes`` that does not spell the
text is an :class:`~tokspec.EngineFault` naming both byte counts (the vocabulary is not byte-level,
or the library normalizes: pass ``normalize=``). Out of scope: normalizers other than the four
Unicode forms (use :func:`engine_from_byte_spans` or :func:`ids_only`).
"""

from __future__ import annotations

import dataclasses
import functools
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

import numpy as np

from tokspec._offsets import char_spans_from_byte_lengths, char_spans_from_byte_spans
from tokspec._types import Encoder, Encoding, EncodingArrays, EngineInfo, Span
from tokspec.errors import EngineFault

__all__ = ["engine_from_ids", "engine_from_byte_spans", "engine_from_offsets", "ids_only",
           "normalized_origins", "NormalForm"]

NormalForm = Literal["NFC", "NFD", "NFKC", "NFKD"]


def _info(name: str, library: str, library_version: str, vocab_sha256: str | None, description: str,
          offsets: bool = True) -> EngineInfo:
    if not isinstance(name, str) or not name:
        raise ValueError(f"name must be a non-empty string, got name={name!r}")
    return EngineInfo(name, "tokenizer", library or name, library_version, vocab_sha256, description,
                      offsets=offsets)


class _Adapter(Encoder):
    """Shared parts: the info, an optional ``decode``, ``token_piece`` from the token bytes."""

    def __init__(self, info: EngineInfo, decode: Callable[[list[int]], str] | None,
                 piece: Callable[[int], str] | None = None) -> None:
        self.info = info
        self._decode, self._piece = decode, piece

    def __getattr__(self, attr: str) -> Any:
        # ``decode`` exists exactly when one was given (tokspec.diff looks for it with getattr)
        if attr == "decode" and self.__dict__.get("_decode") is not None:
            return self.__dict__["_decode"]
        raise AttributeError(attr)

    def token_piece(self, token_id: int) -> str:
        if self._piece is None:
            return str(token_id)
        return self._piece(token_id)


def _segments(text: str, form: NormalForm) -> list[tuple[int, int]]:
    """Spans of ``text`` that a Unicode normal form treats independently: a new segment starts at a
    character of combining class 0 that no canonical composition takes as its second character
    (``_second_of_pair``). Normalizing each segment alone gives the normalization of the whole
    (checked by the caller). O(n)."""
    seconds = _second_of_pair()
    starts = [0] + [i for i in range(1, len(text))
                    if unicodedata.combining(text[i]) == 0 and text[i] not in seconds]
    return list(zip(starts, starts[1:] + [len(text)]))


@functools.lru_cache(maxsize=1)
def _second_of_pair() -> frozenset[str]:
    """Characters that a canonical composition takes as its second character (Hangul V and T
    jamo included), from this Python's ``unicodedata``. Built once: O(code points)."""
    out = {chr(cp) for cp in range(0x1161, 0x1176)} | {chr(cp) for cp in range(0x11A8, 0x11C3)}
    for cp in range(0x110000):
        d = unicodedata.decomposition(chr(cp))
        if d and not d.startswith("<"):
            parts = d.split()
            if len(parts) == 2:
                out.add(chr(int(parts[1], 16)))
    return frozenset(out)


def normalized_origins(text: str, form: NormalForm) -> tuple[str, list[Span]]:
    """``(unicodedata.normalize(form, text), origins)``: ``origins[j]`` is the span of original
    characters normalized character ``j`` comes from.

    How: ``text`` is cut into segments that normalize independently (:func:`_segments`); every
    character a segment normalizes to comes from the whole segment. So a composed ``é`` from
    ``e`` + U+0301 covers both, ``ﬁ`` -> ``fi`` gives both ``f`` and ``i`` the one ligature; a
    segment is a starter with its combining marks, so spans stay as tight as the normal form allows
    (coarser than exact only inside a reordered mark stack). O(n) after a one-time table.
    """
    if form not in ("NFC", "NFD", "NFKC", "NFKD"):
        raise ValueError(f"normalize must be one of 'NFC', 'NFD', 'NFKC', 'NFKD', got normalize={form!r}")
    whole = unicodedata.normalize(form, text)
    pieces: list[str] = []
    origins: list[Span] = []
    for s, e in _segments(text, form):
        piece = unicodedata.normalize(form, text[s:e])
        pieces.append(piece)
        origins.extend([(s, e)] * len(piece))
    if "".join(pieces) != whole:  # a composition across segments: one segment for all (still exact)
        return whole, [(0, len(text))] * len(whole)
    return whole, origins


class _FromIds(_Adapter):
    def __init__(self, encode: Callable[[str], Sequence[int]], token_bytes: Callable[[int], bytes],
                 info: EngineInfo, decode: Callable[[list[int]], str] | None, normalize: NormalForm | None):
        super().__init__(info, decode, lambda i: self._bytes(i).decode("utf-8", errors="backslashreplace"))
        self._encode_ids, self._token_bytes, self._normalize = encode, token_bytes, normalize
        self._lengths: dict[int, int] = {}

    def _bytes(self, token_id: int) -> bytes:
        return bytes(self._token_bytes(token_id))

    def _length(self, token_id: int) -> int:
        n = self._lengths.get(token_id)
        if n is None:
            n = self._lengths[token_id] = len(self._bytes(token_id))
        return n

    def _encode_arrays(self, text: str) -> EncodingArrays:
        ids = np.fromiter((int(i) for i in self._encode_ids(text)), dtype=np.int64)
        lengths = np.fromiter((self._length(int(i)) for i in ids), dtype=np.int64, count=len(ids))
        target = text if self._normalize is None else normalized_origins(text, self._normalize)[0]
        size = len(target.encode("utf-8"))
        if int(lengths.sum()) != size:
            hint = "" if self._normalize else " (pass normalize='NFC' etc. if the library normalizes first)"
            raise EngineFault(f"{self.info.name}: token bytes add up to {int(lengths.sum())} bytes, the text "
                              f"has {size}: token_bytes does not spell the text{hint}")
        starts, ends = char_spans_from_byte_lengths(target, lengths)
        if self._normalize is not None:
            origins = np.array(normalized_origins(text, self._normalize)[1], dtype=np.int64).reshape(-1, 2)
            starts, ends = _map_back(starts, ends, origins)
        return EncodingArrays(ids, starts, ends)


def _map_back(starts: np.ndarray, ends: np.ndarray, origins: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Spans over normalized characters -> spans over the original: the hull of the origins of the
    characters covered (an empty span stays empty, at its character's origin start). O(tokens * span)."""
    out_s, out_e = np.empty_like(starts), np.empty_like(ends)
    n = len(origins)
    for k, (s, e) in enumerate(zip(starts.tolist(), ends.tolist())):
        if e <= s:
            p = int(origins[s, 0]) if s < n else (int(origins[-1, 1]) if n else 0)
            out_s[k] = out_e[k] = p
        else:
            out_s[k], out_e[k] = int(origins[s:e, 0].min()), int(origins[s:e, 1].max())
    return out_s, out_e


def engine_from_ids(encode: Callable[[str], Sequence[int]],
                    token_bytes: Mapping[int, bytes] | Callable[[int], bytes], *, name: str,
                    decode: Callable[[list[int]], str] | None = None, normalize: NormalForm | None = None,
                    library: str = "", library_version: str = "", vocab_sha256: str | None = None) -> Encoder:
    """An engine from an ids function over a byte-level vocabulary (module docstring).

    ``encode(text) -> ids``; ``token_bytes`` maps an id to its UTF-8 bytes (a dict, or a function such
    as tiktoken's ``decode_single_token_bytes``). Offsets: byte lengths laid end to end, bytes to
    characters by the contract; with ``normalize``, over the normalized text and mapped back by
    :func:`normalized_origins`. Cost per text: the library's encode plus O(bytes) compiled (one
    ``token_bytes`` call per distinct id, cached).
    """
    lookup = token_bytes.__getitem__ if isinstance(token_bytes, Mapping) else token_bytes
    if normalize is not None and normalize not in ("NFC", "NFD", "NFKC", "NFKD"):
        raise ValueError(f"normalize must be None or one of 'NFC', 'NFD', 'NFKC', 'NFKD', got normalize={normalize!r}")
    described = "ids with offsets from token bytes" + (f" over {normalize} text" if normalize else "")
    return _FromIds(encode, lookup, _info(name, library, library_version, vocab_sha256, described), decode, normalize)


class _FromSpans(_Adapter):
    def __init__(self, encode: Callable[[str], tuple[Sequence[int], Sequence[tuple[int, int]]]], info: EngineInfo,
                 decode: Callable[[list[int]], str] | None, in_bytes: bool):
        super().__init__(info, decode)
        self._encode_spans, self._in_bytes = encode, in_bytes

    def _encode_arrays(self, text: str) -> EncodingArrays:
        ids, spans = self._encode_spans(text)
        ids_a = np.fromiter((int(i) for i in ids), dtype=np.int64)
        pairs = np.array([(int(s), int(e)) for s, e in spans], dtype=np.int64).reshape(-1, 2)
        if len(pairs) != len(ids_a):
            raise EngineFault(f"{self.info.name}: {len(ids_a)} ids but {len(pairs)} spans")
        if not self._in_bytes:
            return EncodingArrays(ids_a, np.ascontiguousarray(pairs[:, 0]), np.ascontiguousarray(pairs[:, 1]))
        starts, ends = char_spans_from_byte_spans(text, pairs[:, 0], pairs[:, 1])
        return EncodingArrays(ids_a, starts, ends)


def engine_from_byte_spans(encode: Callable[[str], tuple[Sequence[int], Sequence[tuple[int, int]]]], *,
                           name: str, decode: Callable[[list[int]], str] | None = None, library: str = "",
                           library_version: str = "", vocab_sha256: str | None = None) -> Encoder:
    """An engine from ``encode(text) -> (ids, [(begin, end), ...])`` with UTF-8 *byte* spans into the
    original text (SentencePiece's ``immutable_proto`` pieces). Bytes to characters by the contract."""
    return _FromSpans(encode, _info(name, library, library_version, vocab_sha256, "ids with byte spans"),
                      decode, True)


def engine_from_offsets(encode: Callable[[str], tuple[Sequence[int], Sequence[tuple[int, int]]]], *,
                        name: str, decode: Callable[[list[int]], str] | None = None, library: str = "",
                        library_version: str = "", vocab_sha256: str | None = None) -> Encoder:
    """An engine from ``encode(text) -> (ids, [(start, end), ...])`` with *character* spans into
    the original text (HF ``tokenizers``: ``e = tok.encode(text); return e.ids, e.offsets``)."""
    return _FromSpans(encode, _info(name, library, library_version, vocab_sha256, "ids with offsets"),
                      decode, False)


class _IdsOnly(Encoder):
    """``inner`` seen as an engine without offsets (``info.offsets`` False); everything else delegated."""

    def __init__(self, inner: Encoder) -> None:
        self.inner = inner
        self.info = dataclasses.replace(inner.info, offsets=False)

    def __getattr__(self, attr: str) -> Any:
        if attr == "inner":
            raise AttributeError(attr)
        return getattr(self.inner, attr)  # decode, when the inner engine has one

    def _encode(self, text: str) -> Encoding:
        """The inner engine's encoding; offsets outside the text (another convention: bytes, ...)
        become placeholders ``(0, 0)``: they are not compared, and must not make a fault."""
        out = self.inner.encode(text)
        if isinstance(out, Encoding) and out.ids is not None and len(out.ids) == len(out.offsets) and \
                any(not 0 <= s <= e <= len(text) for s, e in out.offsets):
            return Encoding(out.ids, ((0, 0),) * len(out.ids), out.pieces)
        return out

    def token_piece(self, token_id: int) -> str:
        return self.inner.token_piece(token_id)

    def close(self) -> None:
        self.inner.close()


def ids_only(engine: Encoder | Callable[[str], Sequence[int]], *, name: str | None = None,
             decode: Callable[[list[int]], str] | None = None) -> Encoder:
    """An engine compared on ids alone: ``engine`` (an Encoder) with ``info.offsets=False``, or an
    ids function wrapped as such an engine (its offsets are placeholders ``(0, 0)``, never compared).

    tokspec compares a pair on ids only when either engine declares ``offsets=False`` and says so
    in its report; the "decoded text differs" class then needs ``decode``."""
    if isinstance(engine, Encoder):
        return _IdsOnly(engine)
    if name is None:
        raise ValueError("ids_only(function) needs name=")
    encode = engine

    class _Ids(_Adapter):
        def _encode_arrays(self, text: str) -> EncodingArrays:
            ids = np.fromiter((int(i) for i in encode(text)), dtype=np.int64)
            zeros = np.zeros(len(ids), dtype=np.int64)
            return EncodingArrays(ids, zeros, zeros.copy())

    return _Ids(_info(name, "", "", None, "ids only (no offsets)", offsets=False), decode)
