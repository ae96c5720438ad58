"""Shared plumbing of the merge strategies: chunk encodings, offset shifting, traces, results.

A *chunk* is a character span ``[start, end)`` of the input encoded on its own; its Encoding has
chunk-local offsets. A strategy chooses chunk spans, has a runner encode them (possibly in
parallel), then keeps a slice of each chunk's tokens: the concatenation of the kept slices, with
offsets shifted to the input, is the merged Encoding. The :class:`MergeTrace` records every chunk,
every merge anchor and every retry so a failure can be reported and replayed exactly.

Out of scope: choosing cut points (each strategy module does that) and running work in parallel
(``tokspec.fast.parallel``). Nothing here knows any tokenizer family.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from tokspec import Encoder, Encoding
from tokspec.errors import TokspecError

__all__ = [
    "Anchor",
    "Chunk",
    "MergeError",
    "MergeResult",
    "MergeTrace",
    "EncodeMany",
    "check_positive",
    "encode_spans",
    "fixed_spans",
    "keep_slices",
    "max_token_chars",
    "serial_encode_many",
    "shift",
]

#: ``encode_many(engine, texts) -> encodings``: how a strategy gets its chunks encoded.
EncodeMany = Callable[[Encoder, Sequence[str]], list[Encoding]]


class MergeError(TokspecError):
    """A merge strategy was given a bad parameter (the message names it)."""


def check_positive(name: str, value: int | None, *, allow_zero: bool = False,
                   optional: bool = False) -> None:
    """Raise MergeError unless ``value`` is an int >= 1 (>= 0 with ``allow_zero``; None too with
    ``optional``)."""
    if value is None and optional:
        return
    low = 0 if allow_zero else 1
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise MergeError(f"{name} must be an int >= {low}, got {name}={value!r}")


@dataclass(frozen=True)
class Chunk:
    """Characters ``[start, end)`` of the input and their encoding (chunk-local offsets)."""

    start: int
    end: int
    encoding: Encoding


@dataclass(frozen=True)
class Anchor:
    """Where chunk ``left`` hands over to chunk ``left + 1``.

    Tokens ``[.. keep_left)`` of the left chunk and ``[keep_right ..)`` of the right chunk are kept
    (the right chunk's own next anchor may cut it again). ``position`` is the global character
    position of the hand-over when the strategy has one (else -1); ``detail`` says why it was chosen.
    """

    left: int
    keep_left: int
    keep_right: int
    position: int
    detail: str


@dataclass
class MergeTrace:
    """Everything a strategy decided for one input: enough to redraw and replay the merge."""

    strategy: str
    params: dict[str, Any]
    chunks: list[Chunk] = field(default_factory=list)
    anchors: list[Anchor] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class MergeResult:
    encoding: Encoding
    trace: MergeTrace


def serial_encode_many(engine: Encoder, texts: Sequence[str]) -> list[Encoding]:
    """Encode texts one after the other in this thread (the default, and the oracle's way)."""
    return [engine.encode(t) for t in texts]


def fixed_spans(n: int, chunk_len: int, overlap: int) -> list[tuple[int, int]]:
    """Chunks ``[k*chunk_len, k*chunk_len + chunk_len + overlap)`` clipped to ``n``, for k = 0, 1, ...
    while the start is below ``n`` (LoPT eq. 1 and ParallelTokenizer's ``chunks``). O(n / chunk_len).

    >>> fixed_spans(10, 4, 2)
    [(0, 6), (4, 10), (8, 10)]
    """
    spans = [(s, min(n, s + chunk_len + overlap)) for s in range(0, n, chunk_len)]
    return spans or [(0, 0)]


def encode_spans(engine: Encoder, text: str, spans: Sequence[tuple[int, int]],
                 encode_many: EncodeMany | None = None) -> list[Chunk]:
    """Encode ``text[s:e]`` for every span (through ``encode_many``), as Chunks."""
    run = encode_many or serial_encode_many
    encodings = run(engine, [text[s:e] for s, e in spans])
    return [Chunk(s, e, enc) for (s, e), enc in zip(spans, encodings, strict=True)]


def shift(enc: Encoding, delta: int, lo: int = 0, hi: int | None = None) -> Encoding:
    """Tokens ``[lo, hi)`` of ``enc`` with every offset moved by ``delta``. O(tokens)."""
    ids = None if enc.ids is None else enc.ids[lo:hi]
    offs = tuple((s + delta, e + delta) for s, e in enc.offsets[lo:hi])
    pieces = None if enc.pieces is None else enc.pieces[lo:hi]
    return Encoding(ids, offs, pieces)


def keep_slices(chunks: Sequence[Chunk], slices: Sequence[tuple[int, int | None]]) -> Encoding:
    """Concatenate tokens ``[lo, hi)`` of each chunk, offsets made global. O(total tokens).

    A slice whose ``lo`` exceeds its ``hi`` keeps nothing (as Python slicing does): strategies that
    publish index arithmetic get exactly that arithmetic's result.
    """
    ids: list[int] = []
    offs: list[tuple[int, int]] = []
    pieces: list[str] = []
    with_ids = with_pieces = True
    for chunk, (lo, hi) in zip(chunks, slices, strict=True):
        part = shift(chunk.encoding, chunk.start, lo, hi)
        with_ids = with_ids and part.ids is not None
        with_pieces = with_pieces and part.pieces is not None
        ids.extend(part.ids or ())
        offs.extend(part.offsets)
        pieces.extend(part.pieces or ())
    return Encoding(tuple(ids) if with_ids else None, tuple(offs),
                    tuple(pieces) if with_pieces else None)


_MAX_TOKEN_CACHE: dict[str, int] = {}
DEFAULT_MAX_TOKEN_CHARS = 128


def _named_max_token_chars(sha256: str) -> int | None:
    """Longest token (in UTF-8 bytes, an upper bound on characters) of a named vocabulary."""
    from tokspec.formats import vocab  # core; imported lazily because reading a vocabulary is slow

    for name, entry in vocab.NAMED_FILES.items():
        if entry.sha256 != sha256:
            continue
        if name.endswith(".vocab"):
            continue
        path = vocab.named_path(name)
        if path.name.endswith((".tiktoken", ".tiktoken.gz")):
            return max(len(t) for t in vocab.load_tiktoken(path, entry.sha256).ranks)
        model = vocab.load_tokenizer_json(path, entry.sha256).data["model"]
        table = model["vocab"]
        pieces = [p[0] for p in table] if isinstance(table, list) else list(table)
        return max(len(p.removeprefix("##").encode("utf-8")) for p in pieces)
    return None


def max_token_chars(engine: Encoder) -> tuple[int, str]:
    """(bound, source): an upper bound on the characters one token of ``engine`` covers.

    Taken from the engine's named vocabulary when its sha256 is known (the longest token's UTF-8
    length, a bound on its characters), else ``DEFAULT_MAX_TOKEN_CHARS`` (source says which).
    """
    sha = engine.info.vocab_sha256
    if sha is not None and sha not in _MAX_TOKEN_CACHE:
        found = _named_max_token_chars(sha)
        if found is not None:
            _MAX_TOKEN_CACHE[sha] = found
    if sha is not None and sha in _MAX_TOKEN_CACHE:
        return _MAX_TOKEN_CACHE[sha], f"vocabulary sha256 {sha[:12]}"
    return DEFAULT_MAX_TOKEN_CHARS, "default (vocabulary unknown)"
