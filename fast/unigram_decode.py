"""Decoding for the fast Unigram engines: sentencepiece ``DecodeIds`` and HF ``Tokenizer.decode``
(special tokens kept) over arrays built once per vocabulary, no Python object per token.

Relies on theorem D2's premise (:mod:`tokspec.spec.decode`) that a decoded text is a function of
the pieces' bytes joined, and on two facts of UTF-8 checked by tests/test_fast_unigram_decode.py:
(U1) the UTF-8 of a ``str`` never starts with a continuation byte, so a run of byte pieces is
never completed by the piece after it, and bytes joined across an ordinary piece decode as each
part alone; (U2) ``bytes.decode(errors="surrogateescape")`` turns each byte of a maximal
invalid subpart into one surrogate U+DC80..U+DCFF and nothing else into one, so one pass over the
joined bytes finds every invalid byte (sentencepiece: one U+FFFD per invalid byte) and whether a
run was valid. An id with an empty surface (a control piece, an empty token) separates runs, so
the joined bytes are cut there and decoded segment by segment (O(such ids) Python steps).

sentencepiece (:class:`SpmDecoder`, measured against sentencepiece 0.2 and replayed by the tests):
control pieces give nothing; the unknown piece gives `` ⁇ ``; a run of byte pieces gives its bytes
with each byte that starts no valid UTF-8 sequence replaced by one U+FFFD; other pieces give their
text with ``▁`` -> space. With ``add_dummy_prefix``, while nothing visible is decoded yet (only
control pieces and ``▁`` pieces so far), an ordinary piece loses one leading ``▁``: so the ids of
``▁ ▁ ▁a`` decode to ``a`` and ``<unk> ▁a`` to `` ⁇  a``.

HF (:class:`HfChainDecoder`): the id -> token string table (added tokens first), then the
decoder chain, restricted to the steps whose effect on the joined tokens is a string operation:
``ByteFallback`` (first step only; a piece of 6 UTF-8 bytes ``<0xHH>`` with ``HH`` parsed as Rust's
``u8::from_str_radix(HH, 16)``, upper or lower case, a leading ``+`` allowed; a run of them gives its
bytes when valid UTF-8, else one U+FFFD per byte token), ``Fuse``, ``Replace`` with a ``String``
pattern (one character before ``Fuse``), ``Strip`` (after ``Fuse``), ``Metaspace`` (every
replacement character -> space, except in the first token, where each is removed unless
``prepend_scheme`` is ``never``: tokenizers 0.23). The state is (first token, the rest joined).

Out of scope (``decoder_or_none`` gives None: no decode): other HF decoders, a missing decoder,
``Strip`` before ``Fuse``; sentencepiece's ``treat_whitespace_as_suffix``, ``remove_extra_whitespaces``
without ``add_dummy_prefix``, a custom ``unk_surface``. Ids outside ``0 .. n_vocab - 1`` raise
:class:`UnknownIdError` (HF skips them). Cost: O(vocab bytes) to build; per decode O(total bytes)
in numpy plus O(byte runs) Python steps on the HF path when a run is invalid.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from tokspec.errors import UnsupportedComponentError
from tokspec.fast._decode_errors import UnknownIdError

__all__ = ["HfChainDecoder", "SpmDecoder", "UnknownIdError", "decoder_or_none", "hf_byte_of_piece"]

SPACE_MARK = "\u2581"
UNK_SURFACE = " \u2047 "
FFFD = "\ufffd"
#: surrogateescape's U+DC80..U+DCFF (one per invalid byte, U2) -> U+FFFD
_PER_BYTE = {0xDC00 + b: FFFD for b in range(0x80, 0x100)}
_SURROGATE = re.compile("[\udc80-\udcff]")


class _Surfaces:
    """Each id's surface bytes in one flat array: id ``i``'s are ``flat[at[i]:at[i + 1]]``."""

    def __init__(self, surfaces: Sequence[bytes]) -> None:
        self.at = np.zeros(len(surfaces) + 1, dtype=np.int64)
        np.cumsum([len(s) for s in surfaces], out=self.at[1:])
        self.flat = np.frombuffer(b"".join(surfaces), dtype=np.uint8)

    def gather(self, arr: np.ndarray) -> bytes:
        """The surfaces of ``arr`` joined."""
        starts = self.at[arr]
        lengths = self.at[arr + 1] - starts
        before = np.cumsum(lengths) - lengths  # bytes of the surfaces before token k
        index = np.repeat(starts - before, lengths) + np.arange(int(lengths.sum()))
        joined: bytes = self.flat[index].tobytes()
        return joined


def _checked(ids: Sequence[int], n: int) -> np.ndarray:
    arr = np.asarray(ids, dtype=np.int64)
    if len(arr) and (arr.min() < 0 or arr.max() >= n):
        bad = next(int(i) for i in arr if not 0 <= i < n)
        raise UnknownIdError(f"id={bad!r} is outside the vocabulary of {n} ids")
    return arr


def _segments(arr: np.ndarray, cut: np.ndarray) -> list[np.ndarray]:
    """``arr`` split at the ids flagged in ``cut``, those ids dropped."""
    parts = np.split(arr, np.flatnonzero(cut[arr]))
    return [parts[0], *(part[1:] for part in parts[1:])]  # each later part starts with its cut id


class SpmDecoder:
    """sentencepiece's ``DecodeIds`` (module docstring) from a model's pieces and piece types."""

    def __init__(self, pieces: Sequence[str], types: Sequence[str], *, add_dummy_prefix: bool) -> None:
        surfaces = []  # a control piece's is never read: control ids cut (_segments drops them)
        for piece, kind in zip(pieces, types):
            if kind == "unknown":
                surfaces.append(UNK_SURFACE.encode())
            elif kind == "byte":
                surfaces.append(bytes([int(piece[3:5], 16)]))
            else:
                surfaces.append(piece.replace(SPACE_MARK, " ").encode())
        self.surfaces = _Surfaces(surfaces)
        self.n_vocab = len(surfaces)
        kinds = np.array(types)  # a model has pieces: never empty
        self.control = kinds == "control"
        # lead: loses one leading mark at the start (not the unknown piece, whatever its name; a
        # control piece never comes first: it vanishes); vanish: gives nothing at the start
        marked = np.array([p.startswith(SPACE_MARK) for p in pieces])
        self.lead = marked & (kinds != "unknown") & add_dummy_prefix
        self.vanish = self.control | (self.lead & (np.array(pieces) == SPACE_MARK))
        self.specials = {p: i for i, (p, k) in enumerate(zip(pieces, types)) if k == "control"}

    def decode(self, ids: Sequence[int]) -> str:
        arr = _checked(ids, self.n_vocab)
        arr = arr[int(np.argmin(np.append(self.vanish[arr], False))):]  # the first visible id on
        text = "".join(self.surfaces.gather(seg).decode(errors="surrogateescape").translate(_PER_BYTE)
                       for seg in _segments(arr, self.control))
        return text[1:] if len(arr) and self.lead[arr[0]] else text


def hf_byte_of_piece(piece: str) -> int | None:
    """HF ByteFallback's byte of a token (module docstring), else None."""
    if len(piece.encode()) != 6 or not (piece.startswith("<0x") and piece.endswith(">")):
        return None
    digits = piece[3:5].removeprefix("+")
    if all(c in "0123456789abcdefABCDEF" for c in digits):
        return int(digits, 16)
    return None


def _plan(decoder: Any) -> list[dict[str, Any]]:
    """The chain's steps, checked to be in scope (module docstring); raises UnsupportedComponentError."""
    if not isinstance(decoder, dict):
        raise UnsupportedComponentError("no HF decoder: the fast decoder covers a decoder chain only")
    steps = list(decoder.get("decoders") or []) if decoder.get("type") == "Sequence" else [decoder]
    for k, step in enumerate(steps):
        kind = step.get("type")
        fused = any(earlier.get("type") == "Fuse" for earlier in steps[:k])
        pattern = step["pattern"].get("String") if kind == "Replace" else None
        if kind == "ByteFallback" and k == 0 or kind == "Metaspace" or kind == "Fuse" \
                or kind == "Replace" and isinstance(pattern, str) and (fused or len(pattern) == 1) \
                or kind == "Strip" and fused:
            continue
        raise UnsupportedComponentError(f"HF decoder step type={kind!r} at {k} has no fast decoder")
    return steps


class HfChainDecoder:
    """HF ``Tokenizer.decode(ids, skip_special_tokens=False)`` (module docstring)."""

    def __init__(self, vocab: Sequence[str], added: Mapping[int, str], decoder: Any) -> None:
        self.steps = _plan(decoder)
        self.n_vocab = max([len(vocab) - 1, *added]) + 1
        # an id that is neither (a hole) is skipped, as HF does: it does not end a byte run
        tokens = [added[i] if i in added else vocab[i] if i < len(vocab) else None for i in range(self.n_vocab)]
        self.hole = np.array([t is None for t in tokens])
        fallback = bool(self.steps) and self.steps[0].get("type") == "ByteFallback"
        byte = [hf_byte_of_piece(t) if fallback and t else None for t in tokens]
        self.is_byte = np.array([b is not None for b in byte])
        self.tokens = _Surfaces([(t or "").encode() if b is None else bytes([b]) for t, b in zip(tokens, byte)])
        self.cut = ~self.is_byte & (np.diff(self.tokens.at) == 0)  # empty tokens end byte runs
        self.specials: dict[str, int] = {}

    def decode(self, ids: Sequence[int]) -> str:
        arr = _checked(ids, self.n_vocab)
        head, tail = self._fallback(arr[~self.hole[arr]])
        for step in self.steps:
            kind = step.get("type")
            if kind == "Fuse":
                head, tail = head + tail, ""
            elif kind == "Replace":
                head, tail = (t.replace(step["pattern"]["String"], step["content"]) for t in (head, tail))
            elif kind == "Metaspace":
                mark = step["replacement"]
                first = " " if step.get("prepend_scheme") == "never" else ""
                head, tail = head.replace(mark, first), tail.replace(mark, " ")
            elif kind == "Strip":
                head = _strip(head, step["content"], step["start"], step["stop"])
        return head + tail

    def _fallback(self, arr: np.ndarray) -> tuple[str, str]:
        """(first token, the rest joined) after ByteFallback. A segment whose joined bytes decode
        with no surrogate had only valid runs (U1, U2); only other segments are decoded run by run."""
        parts = []
        for seg in _segments(arr, self.cut):
            text = self.tokens.gather(seg).decode(errors="surrogateescape")
            parts.append(self._runs(seg) if _SURROGATE.search(text) else text)
        if not len(arr):
            return "", ""
        # the first token: the first id's string, or the first run's text (one U+FFFD if invalid)
        first = int(np.argmin(np.append(self.is_byte[arr], False))) if self.is_byte[arr[0]] else 1
        run = self.tokens.gather(arr[:first])  # a token's own string is valid UTF-8
        head = run.decode() if _valid(run) else FFFD
        return head, "".join(parts)[len(head):]

    def _runs(self, seg: np.ndarray) -> str:
        """One segment's text, each run of byte tokens alone: its bytes, or U+FFFD per token."""
        edges = np.flatnonzero(np.diff(np.concatenate(([False], self.is_byte[seg], [False]))))
        out, at = [], 0
        for lo, hi in zip(edges[::2], edges[1::2]):
            out.append(self.tokens.gather(seg[at:lo]).decode())
            run = self.tokens.gather(seg[lo:hi])
            try:
                out.append(run.decode())
            except UnicodeDecodeError:
                out.append(FFFD * int(hi - lo))
            at = hi
        out.append(self.tokens.gather(seg[at:]).decode())
        return "".join(out)


def _valid(data: bytes) -> bool:
    try:
        data.decode()
    except UnicodeDecodeError:
        return False
    return True


def _strip(token: str, content: str, start: int, stop: int) -> str:
    lead = len(token) - len(token.lstrip(content))
    token = token[min(lead, start):]
    trail = len(token) - len(token.rstrip(content))
    return token[:len(token) - min(trail, stop)]


def decoder_or_none(source: Any) -> SpmDecoder | HfChainDecoder | None:
    """The decoder of a loaded model: a :class:`tokspec.formats.spm_model.SpmModel` or a tokenizer.json's
    data (dict); None when its configuration is out of scope (module docstring)."""
    if isinstance(source, dict):
        model = source.get("model") or {}
        if model.get("type") != "Unigram":
            return None
        added = {int(t["id"]): str(t["content"]) for t in source.get("added_tokens") or []}
        try:
            hf = HfChainDecoder([str(entry[0]) for entry in model.get("vocab") or []], added, source.get("decoder"))
        except UnsupportedComponentError:
            return None
        hf.specials = {str(t["content"]): int(t["id"]) for t in source.get("added_tokens") or [] if t.get("special")}
        return hf
    if source.treat_whitespace_as_suffix or (source.remove_extra_whitespaces and not source.add_dummy_prefix):
        return None
    return SpmDecoder(source.pieces, source.types, add_dummy_prefix=source.add_dummy_prefix)
