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

__all__ = ["CHUNK_LEN", "lopt_small_cl100k", "lopt_small_bert", "lopt_small_mon", "fast_mon_interpreted"]

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


def fast_mon_interpreted() -> Encoder:
    """``fast:mon-unigram`` with its numba kernels run as plain Python (the same sources), so a
    coverage-guided fuzzer sees the kernels' branches."""
    from tokspec.fast.unigram_datrie import datrie_encoder
    return datrie_encoder("mon-unigram", jit=False)
