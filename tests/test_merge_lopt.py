"""tokspec's lossless merge (``lopt``): equal to serial encoding, ids AND offsets, on every family.

The oracle is the engine itself, called once on the whole text. Chunk lengths are tiny so that
every text is cut in many places (the hardest setting for a merge).
"""

from __future__ import annotations

import random

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from tokspec import Encoder, Encoding, EngineInfo, load_engine
from tokspec.corpus import build_corpus
from tokspec.fast import merge_lopt
from tokspec.fast._chunking import MergeError
from tokspec.fast.merge_engines import LoptEncoder, merge_text
from tokspec.fast.parallel import Runner
from tokspec.spec import merge as spec_merge

ENGINES = ["tiktoken:cl100k_base", "hf:bert-base-uncased", "hf:mon-unigram"]
ALPHABET = st.sampled_from(list("ab zA1.,'\n\t") + ["  ", "é", "e\u0301", "中", "😀", "\u200b", "\u00a0",
                                                    "##", "▁", "ß", "İ", "Σσς", "!?", "don't", "x" * 40])


@pytest.fixture(scope="module", params=ENGINES)
def engine(request: pytest.FixtureRequest) -> Encoder:
    return load_engine(request.param)


@pytest.fixture(scope="module")
def corpus() -> list[str]:
    return build_corpus(seed=0, size="small")


def test_lopt_equals_serial_on_corpus(engine: Encoder, corpus: list[str]) -> None:
    cut_total = 0
    for text in corpus:
        result = merge_text(engine, text, strategy="lopt", chunk_len=5)
        assert result.encoding == engine.encode(text), repr(text[:80])
        cut_total += len(result.trace.anchors)
    assert cut_total > 100  # the corpus really was cut, so the equality above is not vacuous


@given(parts=st.lists(ALPHABET, max_size=60), chunk_len=st.integers(1, 12))
@example(parts=["a"] * 101 + [" ", "b"], chunk_len=3)  # WordPiece's 100-character [UNK] word
@example(parts=["a", " ", " ", "b", "\u200b", " ", "c"], chunk_len=1)  # Metaspace + removed chars
def test_hyp_lopt_equals_serial(engine: Encoder, parts: list[str], chunk_len: int) -> None:
    text = "".join(parts)
    assert merge_text(engine, text, strategy="lopt", chunk_len=chunk_len).encoding == engine.encode(text)


def test_lopt_through_threads_and_registry() -> None:
    text = " ".join(f"word{i} and more text" for i in range(3000))
    inner = load_engine("tiktoken:cl100k_base")
    wrapped = LoptEncoder(inner, runner=Runner("threads", 2), chunk_len=997)
    assert wrapped.encode(text) == inner.encode(text)
    assert load_engine("lopt:tiktoken:cl100k_base").info.name == "lopt:tiktoken:cl100k_base"


def test_fast_rules_agree_with_spec_rules() -> None:
    rng = random.Random(7)
    chars = "a é中 \n1.ʰß\u0301Σ"
    for _ in range(300):
        text = "".join(rng.choice(chars) for _ in range(12))
        for c in range(len(text) + 1):
            assert merge_lopt.RULES["space"].is_cut(text, c) == spec_merge.rule_space(text, c)
            assert (merge_lopt.RULES["space-after-letter"].is_cut(text, c)
                    == spec_merge.rule_space_after_letter(text, c)), (text, c)


class _UnknownFamily(Encoder):
    """One token per character; no vocabulary tokspec knows, so lopt must not cut."""

    info = EngineInfo("toy:unknown", "tokenizer", "toy", "0", None)

    def _encode(self, text: str) -> Encoding:
        return Encoding.of([ord(c) for c in text], [(i, i + 1) for i in range(len(text))])


def test_unsupported_family_falls_back_to_serial() -> None:
    result = merge_text(_UnknownFamily(), "some words here " * 20, strategy="lopt", chunk_len=4)
    assert len(result.trace.chunks) == 1 and result.trace.anchors == []
    assert "serial" in result.trace.notes[0]


def test_text_without_sound_cut_is_one_chunk() -> None:
    eng = load_engine("tiktoken:cl100k_base")
    text = "中文没有空格" * 50
    result = merge_text(eng, text, strategy="lopt", chunk_len=8)
    assert len(result.trace.chunks) == 1 and result.encoding == eng.encode(text)


@pytest.mark.parametrize("bad", [0, -3, 2.5, True, None])
def test_bad_chunk_len_is_a_named_error(bad: object) -> None:
    eng = load_engine("tiktoken:cl100k_base")
    with pytest.raises(MergeError, match="chunk_len"):
        merge_lopt.merge(eng, "a b", chunk_len=bad)  # type: ignore[arg-type]


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["threads", "processes"])
def test_lopt_equals_serial_on_a_megabyte(engine: Encoder, backend: str) -> None:
    from tokspec.app.bench.parallel import generate_text

    text = generate_text(1_000_000, seed=5)
    runner = Runner(backend, 2)
    assert merge_text(engine, text, strategy="lopt", runner=runner).encoding == engine.encode(text)
