"""The sentencepiece ids fast path: ``ascii_copies`` and the fused ``spm_ids`` kernel.

- ``tokspec.fast._spm_kernels.ascii_copies`` (the normalizer's two-byte ASCII test) against the
  rule list of each charsmap (``charsmap_entries``: a byte is copied alone iff it is no key and no
  key begins with it and the next byte) and against the readable longest match
  (``CharsMap.longest_match``) for every ASCII byte and every next byte;
- ``DatrieUnigram.encode_ids`` of a sentencepiece model (one call of
  ``tokspec.fast._spm_ids.spm_ids``) against sentencepiece's ``encode`` and the engine's own
  ``encode_arrays``, compiled and interpreted, on texts whose normalized form outgrows the buffers
  (the fallback that regrows them), shrinks to nothing, or carries bytes the model must fall back
  to; and its text domain (lone surrogates, non-str) as ``encode``'s.

Sized for seconds with the kernels interpreted (mutation testing).
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
import sentencepiece

from tokspec.errors import InvalidTextError
from tokspec.fast import _spm_kernels as sk
from tokspec.fast._charsmap import charsmap_entries
from tokspec.fast.unigram_datrie import DatrieUnigram, datrie_encoder
from tokspec.formats.models import trained_model
from tokspec.formats.spm_model import load_spm_model
from tokspec.formats.spm_normalize import CharsMap

KINDS = ["spm-unigram-bytes", "spm-unigram", "spm-unigram-identity"]
TEXTS = [
    "hello world", "Hello,  World!\tagain  ", "a", "   ", " x ", "x\u0301y a\u0300b",  # letter + combining
    "\ufdfa", "\ufdfa" * 40 + " q", "\u3300\ufb01 ok", "\u4e2d\u6587 \U0001f642 mixed",
    "\u00e9\u0301 caf\u00e9", "<\u0338 =\u0338 >\u0338", "tail a", "x", "\x01\x7f~`",
    "The quick brown fox jumps over the lazy dog. " * 30,
]


@functools.cache
def nmt_nfkc() -> CharsMap:
    cm = CharsMap.parse(load_spm_model(trained_model("spm-unigram")).precompiled_charsmap, "nmt_nfkc")
    assert cm is not None
    return cm


@functools.cache
def engine(kind: str, jit: bool = True) -> DatrieUnigram:
    return datrie_encoder(str(trained_model(kind)), jit=jit)


def test_ascii_copies_is_the_rule_list_on_nmt_nfkc() -> None:
    cm = nmt_nfkc()
    keys = {key for key, _ in charsmap_entries(cm)[0]}
    copies = sk.ascii_copies(np.asarray(cm.units, dtype=np.int64)).reshape(128, 257)
    for c in range(128):
        alone = bytes([c]) not in keys
        assert copies[c, 256] == alone, c
        begins = {key[1] for key in keys if len(key) > 1 and key[0] == c}
        want = [alone and d not in begins for d in range(256)]
        assert copies[c, :256].tolist() == want, c
    # the point of the table: nmt_nfkc has keys for ASCII letters (letter + combining mark), yet a
    # letter followed by an ASCII letter or space is copied without a walk
    assert sk.starters(np.asarray(cm.units, dtype=np.int64))[ord("a")]
    assert all(copies[c, d] for c in b"az" for d in b"az ")
    assert not copies[ord("a"), 0xCC]  # "a" + U+0300..U+033F: composes


@pytest.mark.parametrize("c", range(128))
def test_ascii_copies_agrees_with_the_longest_match(c: int) -> None:
    """True means the readable walk finds no key at ``c d``; False that it finds one or walks on."""
    cm = nmt_nfkc()
    copies = sk.ascii_copies(np.asarray(cm.units, dtype=np.int64))
    assert copies.shape == (128 * 257,) and copies.dtype == np.bool_
    for d in range(257):
        data = bytes([c]) if d == 256 else bytes([c, d])
        if copies[257 * c + d]:
            assert cm.longest_match(data, 0) is None, (c, d)


def test_ascii_copies_without_a_charsmap_copies_everything() -> None:
    assert sk.ascii_copies(np.zeros(0, dtype=np.int64)).all()


@pytest.mark.parametrize("kind", KINDS)
def test_encode_ids_equals_sentencepiece_and_encode_arrays(kind: str) -> None:
    sp = sentencepiece.SentencePieceProcessor(model_file=str(trained_model(kind)))
    fast = engine(kind)
    for text in TEXTS + TEXTS[::-1]:
        ids = fast.encode_ids(text)
        assert ids.dtype == np.int64 and ids.tolist() == sp.encode(text), text
        assert ids.tolist() == fast.encode_arrays(text).ids.tolist(), text


@pytest.mark.parametrize("first", ["\ufdfa", "\ufdfa" * 40 + " q", "x"])
def test_a_fresh_engine_regrows_for_expanding_text(first: str) -> None:
    """A fresh engine's buffers are sized from the first input: nmt_nfkc's U+FDFA (3 bytes ->
    18 characters) overflows them, so the kernel hands back and the engine regrows."""
    kind = "spm-unigram-bytes"
    sp = sentencepiece.SentencePieceProcessor(model_file=str(trained_model(kind)))
    fresh = datrie_encoder(str(trained_model(kind)))
    for text in (first, "\ufdfa" * 200, first, "ab " * 500, "\ufdfa" * 300):
        assert fresh.encode_ids(text).tolist() == sp.encode(text), text


@pytest.mark.parametrize("kind", ["spm-unigram-bytes", "spm-unigram-identity"])
def test_interpreted_equals_compiled(kind: str) -> None:
    compiled, plain = engine(kind), engine(kind, jit=False)
    for text in TEXTS[:12] + ["\ufdfa" * 12]:
        assert plain.encode_ids(text).tolist() == compiled.encode_ids(text).tolist(), text


@pytest.mark.parametrize("bad", ["ab\ud800c", "\udfff", "x \ud83d\ude00"])
def test_lone_surrogates_are_refused_as_by_encode(bad: str) -> None:
    fast = engine("spm-unigram-bytes")
    with pytest.raises(InvalidTextError, match="surrogate"):
        fast.encode_ids(bad)
    with pytest.raises(InvalidTextError, match="surrogate"):
        fast.encode(bad)


def test_non_str_is_refused() -> None:
    with pytest.raises(InvalidTextError, match="must be str"):
        engine("spm-unigram-bytes").encode_ids(b"abc")  # type: ignore[arg-type]


def test_a_str_subclass_and_the_empty_text() -> None:
    class Text(str):
        pass

    fast = engine("spm-unigram-bytes")
    assert fast.encode_ids(Text("hello world")).tolist() == fast.encode_ids("hello world").tolist()
    empty = fast.encode_ids("")
    assert empty.dtype == np.int64 and empty.size == 0


def brute_copies(units: list[int]) -> list[bool]:
    """:func:`ascii_copies` spelled out with explicit bounds (the darts-clone rules of
    ``tokspec.formats.spm_normalize``): c is copied alone before d unless c is a key or the node of
    c has a child labelled d."""
    size = len(units)

    def child(node: int, byte: int) -> int | None:
        nxt = node ^ byte
        return nxt if nxt < size and (units[nxt] & 0x800000FF) == byte else None

    def offset(unit: int) -> int:
        return (unit >> 10) << ((unit & 512) >> 6)

    out = []
    for c in range(128):
        node = child(offset(units[0]), c) if size else None
        if node is None:
            out += [True] * 257
            continue
        inner = node ^ offset(units[node])
        if (units[node] >> 8) & 1 and inner < size:  # c alone is a key
            out += [False] * 257
            continue
        out += [child(inner, d) is None for d in range(256)] + [True]
    return out


def random_table(seed: int) -> np.ndarray:
    """ascii_copies of an arbitrary unit array, checked against the brute force (128 x 257)."""
    rng = np.random.default_rng(seed)
    size = int(rng.integers(1, 300))
    offsets = rng.integers(0, 8, size) << 10  # small offsets: a child of j is near j, often labelled right
    flags = rng.choice([0, 1 << 8, 1 << 9, 1 << 31], size, p=[0.6, 0.2, 0.1, 0.1])
    labels = (np.arange(size) ^ rng.integers(0, 8, size)) & 0x7F
    units = (offsets | flags | labels).astype(np.int64)
    got = sk.ascii_copies(units)
    assert got.tolist() == brute_copies(units.tolist())
    return got.reshape(128, 257)


def test_ascii_copies_on_arbitrary_unit_arrays() -> None:
    """Any array is a trie to the walk: tiny ones put children exactly at, and past, the end; the
    tables cover the three outcomes of a byte."""
    tables = np.stack([random_table(seed) for seed in range(12)])
    assert tables.all(axis=2).any() and (~tables).all(axis=2).any()      # copied always / never (a key)
    assert (tables.any(axis=2) & ~tables.all(axis=2)).any()               # depends on the next byte


def test_ascii_copies_of_a_one_unit_trie() -> None:
    """The root alone, flagging the key b"\\x00" (test_fast_spm_normalize_flags' one-unit trie)."""
    copies = sk.ascii_copies(np.array([1 << 8], dtype=np.int64)).reshape(128, 257)
    assert not copies[0].any() and copies[1:].all()
