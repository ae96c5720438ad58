"""Engines configured for fuzzing, by ``module:attr`` name (``tokspec.fuzz.wrapped:NAME``).

The merge engines (``lopt:ENGINE``) pick chunk lengths from the input size, so the short texts a
fuzzer produces would never be split and the merge would never be exercised. These factories build
the same merge with a tiny chunk length (8 characters) and the serial backend, so every fuzz input
of a few dozen characters crosses several merge points. Compiled fast engines are also offered
with their kernels interpreted (``fast_mon_interpreted``), for coverage guidance.

Out of scope: measuring parallel speed (``tokspec bench``).
"""

from __future__ import annotations

from tokspec import Encoder, load_engine

__all__ = ["CHUNK_LEN", "BLOCK_CHARS", "lopt_small_cl100k", "lopt_small_bert", "lopt_small_mon", "fast_mon_interpreted",
           "fast_blocks_o200k", "fast_ids_blocks_cl100k", "fast_ids_blocks_o200k", "fast_ids_fused_cl100k"]

CHUNK_LEN = 8


def _lopt_small(inner: str) -> Encoder:
    from tokspec.fast.merge_engines import LoptEncoder
    from tokspec.fast.parallel import Runner
    return LoptEncoder(load_engine(inner), runner=Runner("serial", 1), chunk_len=CHUNK_LEN)


def lopt_small_cl100k() -> Encoder:
    """``lopt`` over ``tiktoken:cl100k_base`` with 8-character chunks."""
    return _lopt_small("tiktoken:cl100k_base")


def lopt_small_bert() -> Encoder:
    """``lopt`` over ``hf:bert-base-uncased`` with 8-character chunks."""
    return _lopt_small("hf:bert-base-uncased")


def lopt_small_mon() -> Encoder:
    """``lopt`` over ``hf:mon-unigram`` with 8-character chunks."""
    return _lopt_small("hf:mon-unigram")


#: characters per block of :func:`fast_blocks_o200k` (8 made a 2 MiB generated text 262K blocks:
#: seconds per input, 46 inputs/s over a run)
BLOCK_CHARS = 32


def fast_blocks_o200k() -> Encoder:
    """``fast:o200k_base`` with 32-character blocks: every text of 64 characters or more takes the
    path of long texts (``FastBpeEncoder._ids_of_span``: a block at a time between sound cuts),
    which the default block (128K characters) keeps from the fuzzer's short texts (tiny blocks on
    short texts: ``tests/test_fast_blocks.py``'s hypothesis property)."""
    import dataclasses

    from tokspec.fast.bpe_encoder import FastBpeEncoder
    engine = load_engine("fast:o200k_base")
    assert isinstance(engine, FastBpeEncoder)
    blocks = engine.sharing_tables()
    blocks.block = BLOCK_CHARS
    blocks.info = dataclasses.replace(engine.info, name=f"fast:o200k_base ({BLOCK_CHARS}-character blocks)")
    return blocks


def fast_mon_interpreted() -> Encoder:
    """``fast:mon-unigram`` with its numba kernels run as plain Python (the same sources), so a
    coverage-guided fuzzer sees the kernels' branches."""
    from tokspec.fast.unigram_datrie import datrie_encoder
    return datrie_encoder("mon-unigram", jit=False)


def fast_ids_blocks_cl100k() -> Encoder:
    """``fast:cl100k_base``'s ``encode_ids`` path of long texts on 32-character blocks (see
    :func:`_ids_blocks`): each block's arrays made by the fill kernel (``_text_arrays``), then
    Peek2 and the merge, as on a text of 64K characters or more."""
    return _ids_blocks("cl100k_base")


def fast_ids_blocks_o200k() -> Encoder:
    """As :func:`fast_ids_blocks_cl100k`, o200k_base."""
    return _ids_blocks("o200k_base")


def fast_ids_fused_cl100k() -> Encoder:
    """``fast:cl100k_base``'s ``encode_ids`` with every text one block through the fused pass
    (``tokspec.fast._bpe_ascii``), non-ASCII parts as foreign segments whatever their density
    (``FastBpeEncoder.fused_any_text``): the path of long mostly-ASCII texts, on short ones."""
    return _ids_blocks("cl100k_base", fused=True)


def _ids_blocks(encoding: str, fused: bool = False) -> Encoder:
    """``encode_ids``' long-text path (``FastBpeEncoder._ids_of_span``) on blocks of
    :data:`BLOCK_CHARS` characters, as an engine: ``encode_ids`` reaches that path only from
    ``FILL_MIN`` (64K) characters, which a fuzzer's short inputs never have. Offsets are derived
    from the ids (each token's bytes, ``CompiledBPE.arrays["tok_len"]``, mapped to characters by
    ``tokspec._offsets.char_spans_from_byte_lengths``), so a diff compares the ids and nothing else new."""
    import dataclasses

    import numpy as np

    from tokspec._offsets import char_spans_from_byte_lengths
    from tokspec._types import EncodingArrays, check_text
    from tokspec.fast.bpe_encoder import FastBpeEncoder

    engine = load_engine(f"fast:{encoding}")
    assert isinstance(engine, FastBpeEncoder)
    blocks = engine.sharing_tables()
    blocks.block = 1 << 40 if fused else BLOCK_CHARS  # fused: one block, its non-ASCII parts foreign
    blocks.fused_any_text = fused
    tok_len = blocks.bpe.arrays["tok_len"]
    how = "one block, fused pass" if fused else f"{BLOCK_CHARS}-character blocks"

    class IdsOfBlocks(Encoder):
        info = dataclasses.replace(engine.info, name=f"fast:{encoding} encode_ids ({how})")

        def _encode_arrays(self, text: str) -> EncodingArrays:
            ids = blocks._ids_of_span(text, 0, len(text))
            if ids is None:  # a lone surrogate: named as encode_ids names it
                check_text(text)
                raise AssertionError("_ids_of_span refused a text check_text accepts")  # a finding
            return EncodingArrays(ids, *char_spans_from_byte_lengths(text, tok_len[ids].astype(np.int64)))

    return IdsOfBlocks()
