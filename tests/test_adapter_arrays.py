"""The production adapters' array path (``encode_arrays``, ``encode_batch_arrays``) against their
definitions: the tuple path, the per-token HF corrections (``HfEngine._encode_lists``), the list
tiling of the spm adapter, and the interpreted form of every compiled kernel. On the test corpus,
random Unicode, and texts of 1 MB and more."""

from __future__ import annotations

import functools
import random

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tokspec import Encoder, EncodingArrays, InvalidTextError, load_engine, models
from tokspec._jit import interpreted
from tokspec.corpus import build_corpus
from tokspec.engines._hf import HfEngine
from tokspec.engines._hf_kernels import char_byte_starts, code_points, coverage, split_byte_runs
from tokspec.engines._spm import SpmEngine, aligned_spans, tile_kernel
from tokspec._offsets import utf8_array

BYTE_LEVEL = ["tiktoken:cl100k_base", "tiktoken:o200k_base", "bpe-openai:cl100k_base", "bpe-openai:o200k_base"]
HF = ["hf:bert-base-uncased", "hf:mon-unigram", "hf-bpe", "hf-wordpiece", "hf-unigram"]
SPM = ["spm-unigram", "spm-unigram-bytes", "spm-unigram-identity", "spm-bpe"]

EXTRA = ["e\u0301\u0302 a\u0308 Z\u0335\u0334a", "日本語のテキスト", "ﬁ ① Ｆｕｌｌ ㍻ ¨", "  a  b ", "\u2581x \u2581",
         "i\ua8e8\u0329", "\u05ba\U00011134", "\U0001e024\U00011236", "x\u00ad\u200dy", "   ", "\x00\U0010ffff"]


def engine(key: str) -> Encoder:
    return load_engine(models.engine_name(key) if key in models.KINDS else key)


@functools.lru_cache(maxsize=1)
def corpus() -> list[str]:
    rng = random.Random(7)
    pools = [(0x20, 0x7E), (0xA0, 0x2FF), (0x300, 0x36F), (0x3040, 0x30FF), (0x4E00, 0x4E80),
             (0xAC00, 0xAC40), (0x1F600, 0x1F640), (0x10000, 0x10FFFF)]
    randoms = ["".join(chr(rng.randint(*rng.choice(pools))) for _ in range(rng.randint(1, 40)))
               for _ in range(150)]
    return build_corpus(seed=0, size="small") + EXTRA + randoms


def english_like(n_bytes: int) -> str:
    from tokspec.app.bench.fast import english
    return english(n_bytes)


def chinese_like(n_bytes: int) -> str:
    from tokspec.app.bench.fast import chinese_like as cl
    return cl(n_bytes)


@pytest.mark.parametrize("key", BYTE_LEVEL + HF + SPM)
def test_arrays_equal_tuple_path(key: str) -> None:
    eng = engine(key)
    for text in corpus():
        arrays = eng.encode_arrays(text)
        assert arrays.same_as(EncodingArrays.from_encoding(eng.encode(text))), repr(text)
        assert arrays.ids is not None and arrays.ids.dtype == np.int64


@pytest.mark.parametrize("key", HF)
def test_hf_bulk_corrections_equal_per_token_definition(key: str) -> None:
    eng = engine(key)
    assert isinstance(eng, HfEngine)
    for text in corpus():
        assert eng.encode(text) == eng._encode_lists(text), repr(text)
        enc = eng.library_encode(text)  # the id tables agree with HF's tokens (but for unknowns)
        assert [t for i, t in zip(enc.ids, enc.tokens) if i != eng._unk_id] == [
            eng.library_tokenizer.id_to_token(i) for i in enc.ids if i != eng._unk_id]


@pytest.mark.parametrize("key", ["hf:mon-unigram", "hf:bert-base-uncased"])
def test_hf_bulk_equals_definition_on_long_text(key: str) -> None:
    """~150 KB mixing English, CJK (byte fallback for mon-unigram) and marks; the per-token
    definition is too slow for 1 MB in the default suite (the slow test below does 1 MB)."""
    eng = engine(key)
    assert isinstance(eng, HfEngine)
    text = english_like(60_000) + chinese_like(60_000) + " e\u0301 \u00e9 " + english_like(30_000)
    assert eng.encode(text) == eng._encode_lists(text)


@pytest.mark.slow
@pytest.mark.parametrize("key", HF)
def test_hf_bulk_equals_definition_on_1mb(key: str) -> None:
    eng = engine(key)
    assert isinstance(eng, HfEngine)
    for text in (english_like(1_000_000), chinese_like(1_000_000)):
        assert eng.encode(text) == eng._encode_lists(text)


@pytest.mark.parametrize("key", BYTE_LEVEL)
def test_byte_level_long_texts_offsets_from_library_bytes(key: str) -> None:
    """>= 1 MB English-like and Chinese-like: spans equal the convention computed from the library's
    own token bytes with an independent numpy table."""
    eng = engine(key)
    lib = load_engine("tiktoken:" + key.split(":")[1]).library_encoding  # type: ignore[attr-defined]
    for text in (english_like(1_000_000), chinese_like(1_200_000)):
        arrays = eng.encode_arrays(text)
        assert arrays.ids is not None
        lengths = np.array([len(lib.decode_single_token_bytes(i)) for i in arrays.ids.tolist()])
        widths = np.array([len(c.encode("utf-8")) for c in text])
        table = np.append(np.repeat(np.arange(len(text)), widths), len(text))
        ends_b = np.cumsum(lengths)
        assert ends_b[-1] == len(text.encode("utf-8"))
        assert np.array_equal(arrays.starts, table[ends_b - lengths])
        assert np.array_equal(arrays.ends, table[ends_b - 1] + 1)
        assert arrays.ids.tolist() == lib.encode_ordinary(text)


@pytest.mark.parametrize("key", SPM)
def test_spm_kernel_tiles_like_the_list_definition(key: str) -> None:
    """tile_kernel (compiled and interpreted) == aligned_spans on every corpus text and on ~1 MB."""
    eng = engine(key)
    assert isinstance(eng, SpmEngine)
    texts = corpus() + [english_like(500_000) + chinese_like(500_000)]
    for n, text in enumerate(texts):
        out = eng.library_encode(text)
        norm, offs = eng.library_normalizer.normalize(text, with_offsets=True)
        pieces = [p.decode("utf-8", "replace") for p in out["pieces"]]
        dummy = eng._dummy_index(np.frombuffer(norm.encode("utf-32-le"), dtype=np.uint32))
        want = aligned_spans(norm, list(offs), pieces, [eng.model.types[i] for i in out["ids"]], dummy)
        assert want is not None
        args = (np.array([ord(c) for c in norm], dtype=np.int64), np.array(offs, dtype=np.int64),
                np.array(out["ids"], dtype=np.int64), eng._kind_of_id, eng._piece_flat, eng._piece_at,
                -1 if dummy is None else dummy, eng._byte_of_id)
        kernels = [tile_kernel] if n == len(texts) - 1 else [tile_kernel, interpreted(tile_kernel)]
        for fn in kernels:
            starts, ends, tiled = fn(*args)
            assert tiled and list(zip(starts.tolist(), ends.tolist())) == want, repr(text[:60])


@pytest.mark.parametrize("key", HF)
def test_hf_kernels_compiled_equal_interpreted(key: str) -> None:
    eng = engine(key)
    assert isinstance(eng, HfEngine)
    for text in corpus()[::3] + [chinese_like(3000)]:
        enc = eng.library_encode(text)
        ids = np.array(enc.ids, dtype=np.int64)
        starts = np.array([s for s, _ in enc.offsets], dtype=np.int64)
        ends = np.array([e for _, e in enc.offsets], dtype=np.int64)
        cov = coverage(starts, ends, len(text))
        cov_py = interpreted(coverage)(starts, ends, len(text))
        assert all(np.array_equal(x, y) for x, y in zip(cov, cov_py))
        cps = code_points(text)
        args = (eng._byte_of_id[ids], starts, ends, utf8_array(text), char_byte_starts(cps),
                eng._identity.lookup(cps), eng._metaspace)
        assert all(np.array_equal(x, y) for x, y in zip(split_byte_runs(*args), interpreted(split_byte_runs)(*args)))


@pytest.mark.parametrize("key", HF + ["tiktoken:cl100k_base", "spm-unigram-bytes"])
def test_encode_batch_arrays_equals_one_by_one(key: str) -> None:
    eng = engine(key)
    texts = corpus()[:40] + ["", "x"]
    batch = eng.encode_batch_arrays(texts)
    assert len(batch) == len(texts)
    for text, arrays in zip(texts, batch):
        assert arrays.same_as(eng.encode_arrays(text)), repr(text)
    assert eng.encode_batch_arrays([]) == []


def test_encode_batch_checks_every_text_first() -> None:
    eng = engine("hf:bert-base-uncased")
    with pytest.raises(InvalidTextError, match="index 1"):
        eng.encode_batch_arrays(["fine", "a\ud800"])


@pytest.mark.parametrize("key", ["hf:mon-unigram", "hf-unigram"])
@given(text=st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=40))
def test_hyp_hf_unigram_bulk_equals_definition(key: str, text: str) -> None:
    eng = engine(key)
    assert isinstance(eng, HfEngine)
    assert eng.encode(text) == eng._encode_lists(text)
