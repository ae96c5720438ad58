"""Planted long-input bugs: engines that are exact on short texts and wrong only past a size.

Each is tiktoken's cl100k_base (ids from the ``tiktoken`` library, offsets from token byte lengths,
as arrays) with one flaw that only a long text reaches. ``tokspec diff --fuzz`` must tell each apart
from ``tiktoken:cl100k_base``; :data:`LONG_MUTANTS` lists them with the size that triggers them.

==================  ==========================================================================
family              the flaw
==================  ==========================================================================
``chunk_N``         encodes chunks of N characters separately and concatenates (a seam every N)
``outbuf_B``        a fixed output buffer of B bytes (B/4 int32 ids): the id that overflows it is
                    dropped at each flush
``inbuf_B``         reads the UTF-8 input in blocks of B bytes and decodes each block alone:
                    a character split by a block edge is lost
``digitseam_N``     a careful chunker (exact at every seam) except when a seam at a multiple of
                    N falls inside a run of ASCII digits: then the run is encoded in two parts
``crlfseam_N``      the same, when a seam falls between the ``\\r`` and ``\\n`` of a CRLF: the
                    whitespace run around it is encoded in two parts
==================  ==========================================================================

The careful chunkers change the output only where the planted condition holds and splitting the
run really changes its tokens (checked against the run encoded whole), so they are exact on every
other text, long ones included. Registry names: ``tokspec.fuzz.long_mutants:chunk_1000`` etc.
Out of scope: planted bugs in WordPiece/Unigram engines (the seams are engine-independent here).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from tokspec._types import Encoder, EncodingArrays, EngineInfo

__all__ = ["LongMutant", "LONG_MUTANTS", "long_mutant", "exact_arrays"]


@dataclass(frozen=True)
class LongMutant:
    """``name`` (registry attribute), its family, and the size N or B (characters or bytes)."""

    name: str
    family: str
    size: int


_SIZES = {"chunk": (1000, 16384, 262144, 1_000_000), "outbuf": (4096, 65536, 1 << 20),
          "inbuf": (4096, 65536, 1 << 20), "digitseam": (1000, 65536), "crlfseam": (4096, 1 << 20)}
LONG_MUTANTS: tuple[LongMutant, ...] = tuple(
    LongMutant(f"{family}_{size}", family, size) for family, sizes in _SIZES.items() for size in sizes)

_TIKTOKEN: dict[str, Any] = {}


def _library() -> tuple[Any, np.ndarray]:
    """tiktoken's cl100k_base built from tokspec's verified ranks, and each id's byte length."""
    if not _TIKTOKEN:
        from tokspec import load_engine
        engine = load_engine("tiktoken:cl100k_base")
        ranks = engine._token_bytes  # type: ignore[attr-defined]
        lengths = np.zeros(max(ranks) + 1, dtype=np.int64)
        for token_id, token in ranks.items():
            lengths[token_id] = len(token)
        _TIKTOKEN.update(encoding=engine.library_encoding, lengths=lengths)  # type: ignore[attr-defined]
    return _TIKTOKEN["encoding"], _TIKTOKEN["lengths"]


def exact_arrays(text: str) -> EncodingArrays:
    """cl100k_base of ``text`` as arrays, offsets by the tokspec convention. O(n) numpy."""
    if not text:
        return EncodingArrays.empty()
    encoding, lengths = _library()
    ids = np.array(encoding.encode_ordinary(text), dtype=np.int64)
    data = np.frombuffer(text.encode("utf-8"), dtype=np.uint8)
    char_of_byte = np.cumsum((data & 0xC0) != 0x80) - 1  # index of the character holding each byte
    byte_ends = np.cumsum(lengths[ids])
    byte_starts = byte_ends - lengths[ids]
    return EncodingArrays(ids, char_of_byte[byte_starts], char_of_byte[byte_ends - 1] + 1)


def _shift(arrays: EncodingArrays, by: int) -> EncodingArrays:
    assert arrays.ids is not None
    return EncodingArrays(arrays.ids, arrays.starts + by, arrays.ends + by)


def _concat(parts: list[EncodingArrays]) -> EncodingArrays:
    if not parts:
        return EncodingArrays.empty()
    return EncodingArrays(np.concatenate([p.ids for p in parts if p.ids is not None]),
                          np.concatenate([p.starts for p in parts]), np.concatenate([p.ends for p in parts]))


def _chunked(text: str, n: int) -> EncodingArrays:
    return _concat([_shift(exact_arrays(text[i:i + n]), i) for i in range(0, len(text), n)])


def _outbuf(text: str, size: int) -> EncodingArrays:
    exact = exact_arrays(text)
    per_flush = size // 4
    keep = np.ones(len(exact), dtype=bool)
    keep[per_flush::per_flush + 1] = False  # the id arriving at a full buffer is lost at the flush
    assert exact.ids is not None
    return EncodingArrays(exact.ids[keep], exact.starts[keep], exact.ends[keep])


def _inbuf(text: str, size: int) -> EncodingArrays:
    data = text.encode("utf-8")
    read = "".join(data[i:i + size].decode("utf-8", errors="ignore") for i in range(0, len(data), size))
    return exact_arrays(read)  # offsets into the shorter text: still inside the input


def _seam_in_run(text: str, n: int, planted: Callable[[str, int], bool], in_run: Callable[[str], bool]
                 ) -> EncodingArrays:
    """Exact, except where ``planted(text, seam)`` holds at a seam (a multiple of ``n``): the run of
    ``in_run`` characters around it, widened to token boundaries, is encoded as two parts."""
    exact = exact_arrays(text)
    seams = [p for p in range(n, len(text), n) if planted(text, p)]
    if not seams:
        return exact
    parts, done_tok, done_char = [], 0, 0
    for p in seams:
        if p < done_char:
            continue  # one split per run: its scan below already went past this seam
        r0, r1 = p, p
        while r0 > 0 and in_run(text[r0 - 1]):
            r0 -= 1
        while r1 < len(text) and in_run(text[r1]):
            r1 += 1
        done_char = r1
        t0 = int(np.searchsorted(exact.ends, r0, side="right"))  # first token ending after r0
        t1 = int(np.searchsorted(exact.starts, r1, side="left"))  # first token starting at/after r1
        if t0 < done_tok or t1 <= t0:
            continue
        s, e = int(exact.starts[t0]), int(exact.ends[t1 - 1])
        whole = exact_arrays(text[s:e])
        assert exact.ids is not None and whole.ids is not None
        if not np.array_equal(whole.ids, exact.ids[t0:t1]):
            continue  # the span is not self-contained: splitting it would break more than the seam
        parts += [_slice(exact, done_tok, t0), _shift(exact_arrays(text[s:p]), s), _shift(exact_arrays(text[p:e]), p)]
        done_tok = t1
    parts.append(_slice(exact, done_tok, len(exact)))
    return _concat(parts)


def _slice(arrays: EncodingArrays, lo: int, hi: int) -> EncodingArrays:
    assert arrays.ids is not None
    return EncodingArrays(arrays.ids[lo:hi], arrays.starts[lo:hi], arrays.ends[lo:hi])


def _digit_seam(text: str, p: int) -> bool:
    return text[p - 1] in "0123456789" and text[p] in "0123456789"


def _crlf_seam(text: str, p: int) -> bool:
    return text[p - 1] == "\r" and text[p] == "\n"


_FAMILIES: dict[str, Callable[[str, int], EncodingArrays]] = {
    "chunk": _chunked, "outbuf": _outbuf, "inbuf": _inbuf,
    "digitseam": lambda text, n: _seam_in_run(text, n, _digit_seam, lambda ch: ch in "0123456789"),
    "crlfseam": lambda text, n: _seam_in_run(text, n, _crlf_seam, str.isspace),
}


class _LongMutantEngine(Encoder):
    def __init__(self, mutant: LongMutant) -> None:
        self.info = EngineInfo(f"long-mutant:{mutant.name}", "tokenizer", "tokspec.fuzz.long_mutants", "0",
                               None, f"deliberately broken past {mutant.size}: {mutant.family}")
        self._run = _FAMILIES[mutant.family]
        self._size = mutant.size

    def _encode_arrays(self, text: str) -> EncodingArrays:
        return self._run(text, self._size)


def long_mutant(name: str) -> Encoder:
    """The engine of planted bug ``name`` (see :data:`LONG_MUTANTS`)."""
    for mutant in LONG_MUTANTS:
        if mutant.name == name:
            return _LongMutantEngine(mutant)
    raise ValueError(f"unknown long mutant name={name!r}; known: {', '.join(m.name for m in LONG_MUTANTS)}")


def __getattr__(name: str) -> Callable[[], Encoder]:
    """``tokspec.fuzz.long_mutants:chunk_1000`` etc. resolve through the registry's module:attr form."""
    if any(m.name == name for m in LONG_MUTANTS):
        return lambda: long_mutant(name)
    raise AttributeError(name)
