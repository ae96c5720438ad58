"""``FastBpeEncoder``: the engine behind ``fast:cl100k_base``, ``fast:o200k_base``, ``fast:qwen`` and
``fast:PATH.tiktoken`` (registered by ``tokspec.fast.engines``, which re-exports it).

Peek2 pretokens (``tokspec.fast.pretok_peek2``), each encoded by the compiled backtracking BPE
(``tokspec.fast.bpe_kernel``; theorem and spec property named there); ``encode_ids`` calls the two
kernels directly (``tokspec.fast._bpe_text``), a batch in two calls per group
(``tokspec.fast._bpe_batch``), a long text a block at a time between sound cuts
(``tokspec.fast._blocks``, theorem M2 of ``tokspec.spec.merge``), an ASCII block in one fused pass
(``tokspec.fast._bpe_ascii``). Uses the tokspec core only (never tokspec.reference or tokspec.spec).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import numpy as np

from tokspec import Encoder, EngineInfo
from tokspec import __version__ as _VERSION
from tokspec._types import EncodingArrays, check_text
from tokspec.fast.bpe_decode import FlatBytes
from tokspec.fast._cold_start import compiled_bpe
from tokspec.fast.peek2_unicode import _U32, _UTF32_LE, code_points
from tokspec.fast._bpe_batch import ids_of_texts, spans_of_texts_for
from tokspec.fast._bpe_text import ids_function
from tokspec.fast._text_arrays import fill_text_arrays
from tokspec.fast.pretok_peek2 import kernel_args, spans_of_code_points
from tokspec.formats.vocab import NamedTiktoken, TiktokenVocab

__all__ = ["FastBpeEncoder", "FILL_MIN", "BLOCK", "ASCII_BLOCK", "BATCH_GROUP"]

_UTF8_MAX = 4  # UTF-8 bytes per character, at most
#: characters from which ``encode_ids`` makes its arrays with the fill kernel (``_text_arrays``)
#: instead of ``str.encode`` and a UTF-32 encode: below it the kernel call costs more than it saves
FILL_MIN = 1 << 16
#: characters per block of a long text (``FastBpeEncoder._ids_of_span``): 32K-256K measured alike
#: serially; under ``lopt:`` x2 on new 2 MB texts (15 rounds) 128K gave x1.02-1.04, 64K x1.01-1.03
BLOCK = 1 << 17
#: characters per block of ``encode_ids`` on a long text that is all ASCII: each block one fused
#: pass (``_bpe_ascii``), whose arrays (~7 bytes a character touched) stay small, and whose one
#: merge call over the block's missed pretokens merges a repeated one once (its per-call cache).
#: Measured (issue 29, stop 55; new copies of one 2 MB text, best of 5, one process, vs toktok-rs
#: ``encode_to_numpy``): cl100k_base English 7.5 -> 5.3 ms (0.76x -> 1.08x), English from many
#: corpora 0.73x -> 0.91x, code 0.75x -> 0.97x; o200k_base 0.76x -> 1.10x, 0.69x -> 0.86x,
#: 0.73x -> 0.94x; 1M and 2M characters alike, 8M slower on a 20 MB text (memory)
ASCII_BLOCK = 1 << 20
#: characters: ``encode_ids_batch`` encodes at most this many in one pair of kernel calls
BATCH_GROUP = 1 << 20
_U8 = np.dtype(np.uint8)  # a dtype object: numpy converts a type object on every call (~0.2 us)


class FastBpeEncoder(Encoder):
    """Peek2 pretokens, all encoded by ONE call of the compiled backtracking BPE kernel, which also
    converts byte spans to character offsets (``tokspec.fast.bpe_kernel``). O(n) per text beyond
    the backtracking's per-pretoken cost; no Python object per token or pretoken. ``encode_ids``
    of a text of ``2 * BLOCK`` characters or more (``2 * ASCII_BLOCK`` if all ASCII): one such
    call per block between sound cuts (theorem M2 of ``tokspec.spec.merge``; :meth:`_ids_of_span`);
    of :data:`FILL_MIN` or more, an ASCII block in one fused pass of Peek2 and the lookups
    (``tokspec.fast._bpe_ascii``)."""

    def __init__(self, vocab: TiktokenVocab | NamedTiktoken, pattern: str, name: str) -> None:
        self.bpe = compiled_bpe(vocab.ranks, vocab.sha256, pattern)  # = CompiledBPE.from_ranks, faster cold
        self.pattern = pattern
        self._ranks = vocab.ranks
        n_ranks = int(np.count_nonzero(self.bpe.arrays["tok_len"]))  # = len(ranks), unparsed
        self.specials: dict[str, int] = {}
        self._flat_bytes: FlatBytes | None = None
        self._cut_rule: Any = None  # M2's CutRule for long texts, False if none (``_block_cuts``)
        #: characters per block of a long text; None: :data:`BLOCK` (a fuzzing configuration sets
        #: a few characters, so that every text takes the long-text path: ``tokspec.fuzz.wrapped``)
        self.block: int | None = None
        #: every non-ASCII block through the fused pass with foreign segments, however dense its
        #: non-ASCII characters (``_mostly_ascii`` not asked): a fuzzing configuration
        #: (``tokspec.fuzz.wrapped``), so that short texts of every kind exercise that path
        self.fused_any_text = False
        self._ids_of_text = ids_function(*kernel_args(pattern), self.bpe)  # encode_ids' two kernel calls
        self._ascii_args = _ascii_args(pattern)  # a long ASCII block's fused pass (_bpe_ascii)
        self.info = EngineInfo(
            name=name, kind="tokenizer", library="tokspec.fast", library_version=_VERSION,
            vocab_sha256=vocab.sha256,
            description=f"Peek2 {pattern} pretokenizer + compiled backtracking BPE ({n_ranks} ranks)",
            thread_safe=True)  # kernels allocate per call (tests/test_concurrency.py checks)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)  # the kernels' entries are this process's: a copy resolves its own
        del state["_ids_of_text"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._ids_of_text = ids_function(*kernel_args(self.pattern), self.bpe)

    def sharing_tables(self) -> FastBpeEncoder:
        """A copy of this engine on the same read-only tables, with state of its own: its own
        pair-validity memo and stores of merged pieces (``CompiledBPE.sharing_tables``). Two
        engines whose warm state must stay apart (a benchmark's two subjects) without a second
        copy of the tables (33 MB for o200k_base) competing for the caches."""
        other = copy.copy(self)
        other.bpe = self.bpe.sharing_tables()
        other._ids_of_text = ids_function(*kernel_args(self.pattern), other.bpe)
        return other

    def token_piece(self, token_id: int) -> str:
        return self.bpe.token_bytes(token_id).decode("utf-8", errors="backslashreplace")

    def decode(self, ids: list[int]) -> str:
        """Bytes joined, invalid UTF-8 replaced (``tokspec.fast.bpe_decode``, theorem D2)."""
        return self._flat().decode(ids)

    def special_tokens(self) -> dict[str, int]:
        return dict(self.specials)

    @property
    def n_vocab(self) -> int:
        return self._flat().n_vocab

    def _flat(self) -> FlatBytes:
        if self._flat_bytes is None:
            self._flat_bytes = FlatBytes(self._ranks, self.specials)
        return self._flat_bytes

    def _encode_arrays(self, text: str) -> EncodingArrays:
        """Ids and offsets; a text of ``2 * BLOCK`` characters or more a block at a time, as
        :meth:`_ids_of_span`, each block's offsets shifted by its start. New 2 MB texts: library
        code (o200k_base) 47 -> 53 MB/s, English from many corpora (cl100k_base) 48 -> 70 MB/s."""
        n = str.__len__(text)
        cuts = self._block_cuts(text, 0, n) if n >= 2 * (self.block or BLOCK) else []
        if not cuts:
            return self._arrays_of_block(text)
        from tokspec.fast.merge_lopt import stitch  # lopt's concatenation of pieces (loaded by cuts)
        bounds = [0, *cuts, n]
        parts = [self._arrays_of_block(str.__getitem__(text, slice(a, b))) for a, b in zip(bounds, bounds[1:])]
        return stitch(parts, bounds[:-1], False)

    def _arrays_of_block(self, text: str) -> EncodingArrays:
        cps = code_points(text)  # InvalidTextError for a lone surrogate: the text encodes below
        starts, ends = spans_of_code_points(cps, self.pattern)
        return self.bpe.encode_text(cps, starts, ends, str.encode(text))  # str.encode: as encode_ids

    def encode_ids(self, text: str) -> np.ndarray:
        """Token ids of ``text`` only (int64 array; the offsets pass is skipped), like tiktoken's
        ``encode_ordinary``. Same text domain as :meth:`encode` (InvalidTextError outside it).
        A text of :data:`FILL_MIN` characters or more becomes the kernels' arrays in the fill
        kernel (``tokspec.fast._text_arrays``: faster there, and without the GIL)."""
        if not isinstance(text, str):
            check_text(text)
        n = str.__len__(text)  # the stored length: a subclass's __len__ must not steer the kernel
        if n >= FILL_MIN:  # long: the fill kernel makes the arrays (faster, GIL released)
            ids = self._ids_of_span(text, 0, n)
            if ids is not None:
                return ids
            check_text(text)  # a lone surrogate: named here
        try:  # strict UTF-8 refuses exactly the lone surrogates: check_text names them
            utf8 = str.encode(text)  # not text.encode: a str subclass cannot hand the kernels other bytes
        except UnicodeEncodeError:
            check_text(text)
            raise
        # Peek2 and the merge, nothing in between (tokspec.fast._bpe_text); the bytes read-only, not
        # copied, as every caller passes them (one compiled version of the merge kernel); the code
        # points as ``code_points`` makes them (written out: a Python call less)
        data = np.frombuffer(utf8, _U8)
        return self._ids_of_text(data, np.frombuffer(_UTF32_LE(text)[0], _U32))

    def encode_ids_batch(self, texts: Sequence[str]) -> list[np.ndarray]:
        """``[encode_ids(t) for t in texts]`` in two kernel calls for all of them
        (``tokspec.fast._bpe_batch``): no Python step per pretoken and one GIL hand-off per batch,
        not per text, which is what lets threads scale on short texts. Texts are taken in groups
        of at most :data:`BATCH_GROUP` characters (the kernels' arrays are ~40 bytes a character:
        memory by the group, not the batch); a text that long or longer alone, by ``encode_ids``.
        A group's arrays are views of one array. A text that is not a ``str``, or holds a lone
        surrogate: the error ``encode_ids`` raises for it."""
        if any(type(t) is not str for t in texts):
            return [self.encode_ids(t) for t in texts]
        peek2, peek2_args = kernel_args(self.pattern)
        spans_loop = spans_of_texts_for(peek2)
        out: list[np.ndarray] = []
        group: list[str] = []
        size = 0

        def flush() -> None:
            nonlocal size
            if group:
                try:
                    out.extend(ids_of_texts(group, spans_loop, peek2_args, self.bpe._tables))
                except UnicodeEncodeError:
                    out.extend(self.encode_ids(t) for t in group)  # names the text with the lone surrogate
                group.clear()
            size = 0

        for text in texts:  # groups of at most BATCH_GROUP characters: memory by the group, not the batch
            n = str.__len__(text)
            if n >= BATCH_GROUP:  # a long text alone: encode_ids' own long-text path
                flush()
                out.append(self.encode_ids(text))
                continue
            if size + n > BATCH_GROUP:
                flush()
            group.append(text)
            size += n
        flush()
        return out

    def encode_ids_range(self, text: str, start: int, end: int) -> np.ndarray:
        """``encode_ids(text[start:end])`` without the slice, and without the GIL while the text
        becomes the kernels' arrays (``tokspec.fast._text_arrays``): what ``lopt:`` calls for each
        chunk, on its own thread. ``0 <= start <= end <= len(text)``, else ValueError; a lone
        surrogate in the range: the InvalidTextError ``encode_ids`` raises for the slice."""
        if not isinstance(text, str):
            check_text(text)
        n = str.__len__(text)  # the stored length: the kernel reads up to end, unchecked
        if not 0 <= start <= end <= n:
            raise ValueError(f"encode_ids_range: need 0 <= start <= end <= len(text), got start={start!r}, "
                             f"end={end!r}, len(text)={n}")
        ids = self._ids_of_span(text, start, end)
        if ids is None:  # a lone surrogate: the slice's own error, which names it
            return self.encode_ids(str.__getitem__(text, slice(start, end)))
        return ids

    def _ids_of_span(self, text: str, start: int, end: int) -> np.ndarray | None:
        """The ids of ``text[start:end]``, or None if the span holds a lone surrogate: a block at a
        time (:data:`BLOCK`, or :data:`ASCII_BLOCK` when the whole text is ASCII, ``str.isascii``
        being a flag CPython keeps, or the span mostly ASCII, :func:`_mostly_ascii`) between sound
        cuts when the span is long and the pattern has M2's rule, else in one piece
        (:meth:`_ids_of_block`).

        Why blocks, and the theorem they rely on: ``tokspec.fast._blocks``."""
        block = self.block or (ASCII_BLOCK if str.isascii(text) or _mostly_ascii(text, start, end) else BLOCK)
        cuts = self._block_cuts(text, start, end, block) if end - start >= 2 * block else []
        if not cuts:
            return self._ids_of_block(text, start, end)
        parts: list[np.ndarray] = []
        for a, b in zip([start, *cuts], [*cuts, end]):
            ids = self._ids_of_block(text, a, b)
            if ids is None:
                return None
            parts.append(ids)
        joined: np.ndarray = np.concatenate(parts)
        return joined

    def _foreign_ids(self, utf8: bytes) -> np.ndarray:
        """The ids of the text with UTF-8 ``utf8`` by Peek2 and the merge (``_bpe_text``): the
        fused pass's foreign segments (``_bpe_ascii``, "Mixed text"), cut at ASCII spaces, so
        ``utf8`` is valid UTF-8."""
        text = utf8.decode()
        ids: np.ndarray = self._ids_of_text(np.frombuffer(utf8, _U8), np.frombuffer(_UTF32_LE(text)[0], _U32))
        return ids

    def _block_cuts(self, text: str, start: int, end: int, block: int | None = None) -> list[int]:
        """Where a long span is cut into blocks (``tokspec.fast._blocks``); none without a rule."""
        from tokspec.fast._blocks import block_cuts, cut_rule  # (merge_rules: 3 ms, when needed)
        if self._cut_rule is None:
            self._cut_rule = cut_rule(self.pattern) or False
        if self._cut_rule is False:
            return []
        return block_cuts(self._cut_rule, text, start, end, block or self.block or BLOCK)

    def _ids_of_block(self, text: str, start: int, end: int) -> np.ndarray | None:
        """The ids of ``text[start:end]`` from arrays the fill kernel makes, or None if the span
        holds a lone surrogate. A ``str`` subclass: its stored characters, as ``str.encode``
        reads them (the kernel reads the storage, never the subclass's methods). An ASCII block:
        Peek2 and the lookups fused in one pass over its bytes (``tokspec.fast._bpe_ascii``), the
        same ids, with no code points made. Its bytes come from a slice of the block: two copies
        at memory speed, and ``str.isascii`` of the slice is a flag CPython keeps; taking them from
        the fill kernel's arrays instead (which also writes 4 bytes of code point per character)
        made the fused pass slower than the three kernels (issue 29's note, stop 48: new 1 MB
        English, cl100k_base, 13.5 against 13.3 ns/B, the slice 11.6). A mostly-ASCII block
        (:func:`_mostly_ascii`): the same pass over its UTF-8, its non-ASCII parts as foreign
        segments through :meth:`_foreign_ids`."""
        block = str.__getitem__(text, slice(start, end))  # an exact str of the stored characters
        ascii = str.isascii(block)
        if ascii or self.fused_any_text or _mostly_ascii(block, 0, len(block)):  # the fused pass; a
            # mostly-ASCII block's non-ASCII parts through _foreign_ids (``_bpe_ascii``, "Mixed text")
            from tokspec.fast._bpe_ascii import ascii_ids
            try:
                utf8 = str.encode(block)
            except UnicodeEncodeError:  # a lone surrogate: the caller names it
                return None
            data = np.frombuffer(utf8, _U8)  # read-only, as encode_ids' bytes
            return ascii_ids(data, self._ascii_args, self.bpe._tables, None if ascii else self._foreign_ids)
        cps = np.empty(end - start, _U32)
        buffer = np.empty(_UTF8_MAX * (end - start), _U8)
        n_bytes = fill_text_arrays(text, start, end, cps, buffer)
        if n_bytes < 0:
            return None
        # read-only views: the arrays' types as encode_ids makes them, so the same compiled versions
        return self._ids_of_text(_read_only(buffer[:n_bytes]), _read_only(cps))


def _mostly_ascii(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` (not all ASCII) is worth the fused pass, whose non-ASCII parts
    go through Peek2 and the merge as foreign segments (``_bpe_ascii``, "Mixed text"): at most one
    character in :data:`_MIXED_PER` is non-ASCII in :data:`_SAMPLES` windows of
    :data:`_SAMPLE_CHARS` characters spread over it (an estimate, deciding speed only, never the ids). Measured (issue
    29, stop 55; 2 MB of English with a non-ASCII character after some words, cl100k_base, vs the
    three kernels in 128K blocks): 0.06% of characters 11.2 -> 8.8 ms, 0.13% 11.8 -> 9.5 ms,
    0.26% 12.8 -> 10.8 ms, 0.52% 13.7 -> 12.8 ms (U+2019 instead: 13.8 -> 14.0), 1.3% 14.5 ->
    16.4 ms; toktok-rs 7.2-8.3 ms. So the break-even lies near 0.5%; one in 256 is 0.39%."""
    step = max(_SAMPLE_CHARS, (end - start) // _SAMPLES)
    chars = 0
    foreign = 0
    for at in range(start, end, step):
        window = str.__getitem__(text, slice(at, min(at + _SAMPLE_CHARS, end)))
        chars += len(window)
        foreign += len(window) - len(str.encode(window, "ascii", "ignore"))
    return foreign * _MIXED_PER <= chars


_SAMPLES = 8
_SAMPLE_CHARS = 256
_MIXED_PER = 256


def _ascii_args(pattern: str) -> tuple[Any, ...]:
    """``_bpe_ascii.ascii_ids``' pattern arguments for a Peek2 pattern: ``(o200k, table, branch,
    max_digits, to_end_first, fold_cps, fold_to)`` from its ``kernel_args`` (o200k_base has no
    branch table, digit limit or end-of-text rule: unused placeholders)."""
    args = kernel_args(pattern)[1]
    if pattern == "o200k_base":
        table, fold_cps, fold_to = args
        return (True, table, _NO_BRANCH, 3, False, fold_cps, fold_to)
    table, branch, max_digits, to_end_first, fold_cps, fold_to = args
    return (False, table, branch, max_digits, to_end_first, fold_cps, fold_to)


_NO_BRANCH = np.zeros(1, dtype=np.int64)  # o200k_base's unused branch table (the kernel's one type)


def _read_only(array: np.ndarray) -> np.ndarray:
    """A read-only view of ``array`` (what ``np.frombuffer`` of a ``bytes`` gives)."""
    return np.frombuffer(memoryview(array).toreadonly(), array.dtype)  # type: ignore[arg-type]  # an ndarray is a buffer
