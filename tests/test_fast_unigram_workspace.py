"""``DatrieUnigram``'s reused buffers (``_Workspace``): any order of texts encodes as a fresh engine would.

The engine keeps per-thread buffers across encodes (scratch of the longest pretoken, outputs of the
text's bytes, the compiled normalizer's arrays, which that kernel may regrow and hand back). Here
one engine per model encodes a sequence of texts whose sizes go up and down (including texts that
normalize to nothing, and characters that expand under nmt_nfkc) and every result must equal the
reference's ids and offsets (``tokspec.reference.unigram``); ``encode_ids`` must give the same ids.
A fresh engine's first text is checked too (buffers allocated exactly to size). Models: the small
trained sentencepiece models (nmt_nfkc with and without byte fallback, identity normalization)
and the HF one. Sized for seconds with the kernels interpreted (mutation testing).
"""

from __future__ import annotations

import functools
import io
import tempfile
from pathlib import Path

import numpy as np
import pytest
import sentencepiece

from tokspec import load_engine
from tokspec.fast.unigram_datrie import DatrieUnigram, datrie_encoder
from tokspec.formats.models import trained_model
from tokspec.reference.unigram import UnigramReference

KINDS = ["spm-unigram", "spm-unigram-bytes", "spm-unigram-identity", "hf-unigram"]
#: sizes up and down; "   " normalizes to no character under sentencepiece (extra spaces removed);
#: U+FDFA and U+3300 expand to many characters under nmt_nfkc (more output than input bytes)
SEQUENCE = [
    "a", "   ", "hello world, again and again", "", "x", "\ufdfa\u3300 \ufb01",
    "The quick brown fox jumps over the lazy dog " * 3, " ", "\u00e9\u0301 \u4e2d\U0001f642 q",
    "ab", "  \t  ", "\ufdfa" * 4, "z",
]


@functools.cache
def reference(kind: str) -> UnigramReference:
    ref = load_engine(f"reference:{trained_model(kind)}")
    assert isinstance(ref, UnigramReference)
    return ref


def fresh(kind: str, trie: str = "double-array") -> DatrieUnigram:
    return datrie_encoder(str(trained_model(kind)), trie=trie)  # type: ignore[arg-type]


def assert_same(engine: DatrieUnigram, ref: UnigramReference, text: str) -> None:
    got, want = engine.encode(text), ref.encode(text)
    assert (got.ids, got.offsets) == (want.ids, want.offsets), text
    ids = engine.encode_ids(text)
    assert ids.dtype == np.int64 and ids.tolist() == list(want.ids or ()), text


@pytest.mark.parametrize("kind", KINDS)
def test_one_engine_over_texts_of_changing_sizes(kind: str) -> None:
    engine, ref = fresh(kind), reference(kind)
    for text in SEQUENCE + SEQUENCE[::-1]:
        assert_same(engine, ref, text)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("first", ["a", "   ", "\ufdfa", "hello  world"])
def test_fresh_engine_first_text(kind: str, first: str) -> None:
    """The first encode of a new engine (every buffer allocated for this text), then ids only."""
    ref = reference(kind)
    engine = fresh(kind)
    assert_same(engine, ref, first)
    assert_same(engine, ref, "b")  # buffers sized for the first text (maybe empty) now grow
    engine = fresh(kind, "hash")
    ids = engine.encode_ids(first)
    assert ids.tolist() == list(ref.encode(first).ids or ()), first
    assert_same(engine, ref, first + " b")


@pytest.mark.parametrize("kind", ["spm-unigram", "spm-unigram-identity"])
def test_normalized_arrays_of_a_fresh_engine(kind: str) -> None:
    """``normalized`` (the compiled sentencepiece normalizer): bytes, one pretoken's bounds, and
    per-character alignment arrays of exactly the normalized length, on a fresh engine each time."""
    for text in ["a", "ab cd", "\ufdfa", "   ", "  x  "]:
        engine = fresh(kind)
        data, bounds, arrays = engine.normalized(text)
        pres = engine.model.pretokenize(text)
        normalized = "".join(p.text for p in pres)
        assert bytes(data).decode("utf-8") == normalized, text
        assert bounds.tolist() == [0, len(data)], text
        assert all(a.dtype == np.int64 and len(a) == len(normalized) for a in arrays), text
        ids_only = fresh(kind).normalized(text, alignment=False)
        assert bytes(ids_only[0]) == bytes(data) and ids_only[1].tolist() == [0, len(data)], text
        assert all(len(a) == 0 for a in ids_only[2]), text


@functools.cache
def long_rule_model() -> str:
    """A sentencepiece Unigram model whose charsmap rewrites ``q`` into 300 bytes (longer than the
    256-entry byte table, and than most of the pool) and ``\\u00e9`` into ``e``."""
    folder = Path(tempfile.mkdtemp(prefix="tokspec-long-rule-"))
    rules = {"q": "xy" * 150, "\u00e9": "e"}
    tsv = folder / "rules.tsv"
    tsv.write_text("".join(" ".join(f"{ord(c):X}" for c in k) + "\t" + " ".join(f"{ord(c):X}" for c in v) + "\n"
                           for k, v in rules.items()), encoding="utf-8")
    buf = io.BytesIO()
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=iter(["hello world, the quick brown fox jumps over the lazy dog"] * 50),
        model_writer=buf, vocab_size=300, model_type="unigram", byte_fallback=True,
        normalization_rule_tsv=str(tsv), hard_vocab_limit=False, minloglevel=3, num_threads=1)
    path = folder / "long-rule.model"
    path.write_bytes(buf.getvalue())
    return str(path)


def test_replacement_longer_than_the_byte_table() -> None:
    """The normalizer's replacement scratch is sized from the charsmap's pool: a 300-byte
    replacement normalizes and encodes as sentencepiece and the reference do (ids and offsets)."""
    path = long_rule_model()
    spm, ref = load_engine(f"spm:{path}"), load_engine(f"reference:{path}")
    for text in ["q", "a q \u00e9", "qq x"]:
        engine = datrie_encoder(path)  # fresh: its scratch is allocated for this model's pool
        got = engine.encode(text)
        assert got == ref.encode(text) == spm.encode(text), text
        normalized = bytes(engine.normalized(text)[0]).decode("utf-8")
        assert "xy" * 150 in normalized


def test_datrie_encoder_passes_its_options() -> None:
    """``datrie_encoder``: the engine is named ``fast:ARG`` and gets the tie rule, trie and offset
    mode asked for (and encodes like the reference configured the same way)."""
    path = str(trained_model("spm-unigram-bytes"))
    engine = datrie_encoder(path, tie_break="last", trie="hash", offsets="library")
    assert (engine.info.name, engine.tie_break, engine.trie_kind, engine.offsets) == (f"fast:{path}", "last", "hash", "library")
    ref = UnigramReference(reference("spm-unigram-bytes").model, "ref", tie_break="last", offsets="library")
    for text in ["\u4e2d\U0001f642 a", "hello"]:
        got, want = engine.encode(text), ref.encode(text)
        assert (got.ids, got.offsets) == (want.ids, want.offsets), text
