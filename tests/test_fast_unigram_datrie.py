"""Double-array trie and the Unigram Viterbi over it (tokspec.fast._double_array / unigram_datrie).

Oracle: engineer C's reference Unigram (``tokspec.reference.unigram``), itself checked against HF
tokenizers and sentencepiece. Exactness = identical ids AND offsets, for every tie-break rule and
both offset modes, on small trained models of every Unigram kind and on the real mon-unigram model.
"""

from __future__ import annotations

import functools
import random
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tokspec import load_engine
from tokspec.corpus import build_corpus
from tokspec.fast._double_array import DoubleArray
from tokspec.fast.unigram_datrie import DatrieUnigram, datrie_encoder
from tokspec.models import trained_model
from tokspec.reference.unigram import UnigramReference

KINDS = ["hf-unigram", "spm-unigram", "spm-unigram-bytes", "spm-unigram-identity"]


def test_double_array_matches_a_set() -> None:
    rng = random.Random(3)
    keys = sorted({bytes(rng.choice(b"ab\x00\xff") for _ in range(rng.randint(1, 6))) for _ in range(300)})
    da = DoubleArray(keys, list(range(len(keys))))
    for i, k in enumerate(keys):
        assert da.get(k) == i
    for _ in range(500):
        probe = bytes(rng.choice(b"ab\x00\xffc") for _ in range(rng.randint(0, 7)))
        want = keys.index(probe) if probe in keys else -1
        assert da.get(probe) == want
        assert list(da.prefixes(probe)) == [(e, keys.index(probe[:e])) for e in range(1, len(probe) + 1)
                                            if probe[:e] in keys]


def test_double_array_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="values must be >= 0"):
        DoubleArray([b"a"], [-1])
    with pytest.raises(ValueError, match="differ in length"):
        DoubleArray([b"a"], [])


def test_double_array_cache_roundtrip_and_corruption(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOKSPEC_CACHE", str(tmp_path))
    keys, vals = [b"ab", b"abc", b"b", b"\xe1\x80\x80"], [5, 6, 7, 8]
    first = DoubleArray.cached(keys, vals)
    files = list((tmp_path / "datrie").glob("*.npz"))
    assert len(files) == 1
    again = DoubleArray.cached(keys, vals)
    assert again.base == first.base and again.check == first.check
    files[0].write_bytes(b"not an npz")  # a corrupt cache is rebuilt, never trusted
    assert DoubleArray.cached(keys, vals).get(b"abc") == 6


@functools.lru_cache(maxsize=None)
def pair(kind: str) -> tuple[DatrieUnigram, UnigramReference, DatrieUnigram]:
    path = str(trained_model(kind))
    ref = load_engine(f"reference:{path}")
    assert isinstance(ref, UnigramReference)
    return datrie_encoder(path), ref, datrie_encoder(path, trie="hash")


def assert_same(fast: DatrieUnigram, ref: UnigramReference, text: str) -> None:
    got, want = fast.encode(text), ref.encode(text)
    assert (got.ids, got.offsets) == (want.ids, want.offsets), text[:80]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("tie_break", [None, "last"])
@pytest.mark.parametrize("offsets", ["contract", "library"])
def test_trained_models_on_corpus(kind: str, tie_break: str | None, offsets: str) -> None:
    fast, ref, dict_trie = pair(kind)
    rule = tie_break or ref.model.flavour
    fast.tie_break = ref.tie_break = dict_trie.tie_break = rule  # type: ignore[assignment]
    fast.offsets = ref.offsets = dict_trie.offsets = offsets  # type: ignore[assignment]
    try:
        for text in build_corpus(seed=6)[::2]:
            assert_same(fast, ref, text)
            assert_same(dict_trie, ref, text)
    finally:
        fast.tie_break = ref.tie_break = dict_trie.tie_break = ref.model.flavour
        fast.offsets = ref.offsets = dict_trie.offsets = "contract"


@pytest.mark.parametrize("kind", KINDS)
@given(text=st.text(alphabet=st.sampled_from("ab abcde\u00e9\u00c9\u0301\U0001f642\u4e2d\u3000\n\t'.,0\ufb01\u2163"),
                    max_size=30) | st.text(max_size=12))
def test_hyp_trained_models(kind: str, text: str) -> None:
    fast, ref, _ = pair(kind)
    assert_same(fast, ref, text)


def test_mon_unigram_real_model() -> None:
    fast = load_engine("fast:mon-unigram")
    ref = load_engine("reference:mon-unigram")
    assert fast.info.vocab_sha256 == ref.info.vocab_sha256
    for text in build_corpus(seed=7)[::4] + ["\u1019\u103c\u1014\u103a\u1019\u102c" * 50, "x" * 300]:
        got, want = fast.encode(text), ref.encode(text)
        assert (got.ids, got.offsets) == (want.ids, want.offsets), text[:80]
