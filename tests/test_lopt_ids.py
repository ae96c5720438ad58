"""``lopt:`` ids only: ``LoptEncoder.encode_ids`` and ``Runner.ids`` (issue 29, lopt on 2 threads).

The oracle is the inner engine's own ``encode_ids`` on the whole text. Chunk lengths are small so
each text is cut in many places; one text is past 1 MB with the default split (the seams of a real
run). Each test also checks that cuts were made, so an equality is never over a single chunk.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokspec import Encoder, load_engine
from tokspec._jit import JIT_ENABLED
from tokspec.app.bench.fast import chinese_like, code, english
from tokspec.corpus import build_corpus
from tokspec.errors import InvalidTextError
from tokspec.formats.models import trained_model
from tokspec.fast import merge_lopt
from tokspec.fast.merge_engines import LoptEncoder
from tokspec.fast.parallel import MIN_IDS_CHUNK, Runner, ids_chunk_len

FAST = ["fast:cl100k_base", "fast:o200k_base", "fast:mon-unigram"]


@pytest.fixture(scope="module", params=FAST)
def inner(request: pytest.FixtureRequest) -> Encoder:
    return load_engine(request.param)


def _cuts(engine: Encoder, text: str, chunk_len: int) -> list[int]:
    rule = merge_lopt.decision(engine).rule
    assert rule is not None, merge_lopt.decision(engine).why  # every fast family has a proved rule
    return merge_lopt.find_cuts(text, rule, chunk_len)


def test_lopt_ids_equal_serial_ids_on_corpus(inner: Encoder) -> None:
    lopt = LoptEncoder(inner, runner=Runner("threads", 2), chunk_len=7)
    n_cuts = 0
    for text in build_corpus(seed=3, size="small"):
        got = lopt.encode_ids(text)  # type: ignore[attr-defined]
        want = inner.encode_ids(text)  # type: ignore[attr-defined]
        assert got.dtype == want.dtype and got.tolist() == want.tolist(), repr(text[:80])
        n_cuts += len(_cuts(inner, text, 7))
    assert n_cuts > 100


@pytest.mark.skipif(not JIT_ENABLED, reason="interpreted kernels (mutation testing) take minutes on 1.2 MB; "
                    "tox -e py runs this compiled, and the tests above cut texts in many places")
def test_lopt_ids_equal_serial_past_a_megabyte(inner: Encoder) -> None:
    text = english(600_000, seed=1) + chinese_like(300_000, seed=2) + code(300_000)
    lopt = LoptEncoder(inner, runner=Runner("threads", 2))  # the default split: 2 chunks per worker
    assert len(_cuts(inner, text, ids_chunk_len(len(text), 2))) >= 2
    assert np.array_equal(lopt.encode_ids(text), inner.encode_ids(text))  # type: ignore[attr-defined]


@settings(max_examples=60, deadline=None)
@given(parts=st.lists(st.sampled_from(["a", "b ", " ", "  ", "\n", "\n\n", "1", "234", "é", "中文",
                                       "😀", "'s", "\u00a0", "▁", "x" * 30, "!?", "\t"]), max_size=50),
       chunk_len=st.integers(1, 9))
def test_hyp_lopt_ids_equal_serial(parts: list[str], chunk_len: int) -> None:
    inner = load_engine("fast:cl100k_base")
    text = "".join(parts)
    got = LoptEncoder(inner, runner=Runner("threads", 2), chunk_len=chunk_len).encode_ids(text)  # type: ignore[attr-defined]
    assert got.tolist() == inner.encode_ids(text).tolist()  # type: ignore[attr-defined]


def test_lone_surrogate_is_named_at_its_index_in_the_whole_text() -> None:
    lopt = LoptEncoder(load_engine("fast:cl100k_base"), runner=Runner("threads", 2), chunk_len=1000)
    text = "word " * 4_000 + "\ud800" + " tail"
    with pytest.raises(InvalidTextError, match="at index 20000;"):
        lopt.encode_ids(text)  # type: ignore[attr-defined]
    with pytest.raises(InvalidTextError, match="must be str"):
        lopt.encode_ids(b"bytes")  # type: ignore[attr-defined]


def test_engine_without_a_sound_cut_rule_is_encoded_whole() -> None:
    # sentencepiece Unigram: no cut is sound (M6, float32 path scores over the whole text)
    inner = load_engine(f"fast:{trained_model('spm-unigram')}")
    assert merge_lopt.decision(inner).rule is None
    text = english(3000, seed=4)
    seen: list[str] = []

    def spy(engine: Encoder, texts: list[str]) -> list[np.ndarray]:
        seen.extend(texts)
        return Runner("serial").ids(engine, texts)

    got = merge_lopt.encode_ids(inner, text, chunk_len=5, encode_many=spy)
    assert got.tolist() == inner.encode_ids(text).tolist() and seen == []  # type: ignore[attr-defined]


def test_only_engines_with_encode_ids_get_it() -> None:
    assert not hasattr(LoptEncoder(load_engine("tiktoken:cl100k_base")), "encode_ids")
    assert callable(getattr(load_engine("lopt:fast:cl100k_base"), "encode_ids", None))


def test_ids_chunk_len_is_two_chunks_per_worker_and_never_tiny() -> None:
    assert ids_chunk_len(1_000_000, 2) == 250_000
    assert ids_chunk_len(1_000_001, 2) == 250_001
    assert ids_chunk_len(1_000_000, 1) == 500_000
    assert ids_chunk_len(10, 2) == MIN_IDS_CHUNK == 65_536
    assert ids_chunk_len(300_000, 0) == 150_000


def test_runner_ids_keeps_order_on_every_backend() -> None:
    inner = load_engine("fast:cl100k_base")
    texts = [f"piece {i} " * (i + 1) for i in range(9)]
    want = [inner.encode_ids(t).tolist() for t in texts]  # type: ignore[attr-defined]
    for runner in (Runner("threads", 2), Runner("serial", 2), Runner("threads", 1)):
        assert [a.tolist() for a in runner.ids(inner, texts)] == want


@pytest.mark.slow
def test_runner_ids_in_processes() -> None:
    inner = load_engine("fast:cl100k_base")
    texts = [f"piece {i} " * (i + 1) for i in range(5)]
    want = [inner.encode_ids(t).tolist() for t in texts]  # type: ignore[attr-defined]
    assert [a.tolist() for a in Runner("processes", 2).ids(inner, texts)] == want
