"""Double-array trie and the Unigram Viterbi over it (tokspec.fast._double_array / unigram_datrie).

Oracle: engineer C's reference Unigram (``tokspec.reference.unigram``), itself checked against HF
tokenizers and sentencepiece. Exactness = identical ids AND offsets, for every tie-break rule and
both offset modes, on small trained models of every Unigram kind and on the real mon-unigram model.
"""

from __future__ import annotations

import functools
import random
import signal
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tokspec import load_engine
from tokspec.corpus import build_corpus
from tokspec.fast._double_array import DoubleArray
from tokspec.fast.unigram_datrie import DatrieUnigram, datrie_encoder
from tokspec.formats.models import trained_model
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


def assert_maps(da: DoubleArray, keys: list[bytes]) -> None:
    """``da`` maps exactly ``keys[i] -> i``: every key, every proper prefix of one, and one byte past."""
    index = {k: i for i, k in enumerate(keys)}
    probes = {k[:e] for k in keys for e in range(len(k) + 1)} | {k + b"\x01" for k in keys}
    for p in probes:
        assert da.get(p) == index.get(p, -1), p
        assert list(da.prefixes(p)) == [(e, index[p[:e]]) for e in range(1, len(p) + 1) if p[:e] in index]


def test_double_array_root_with_the_single_child_byte_zero() -> None:
    # The root's only child is byte 0: its slot is the first free one, 1, which lies just past the
    # one-slot initial array, so the single-child placement has to grow the array to hold it.
    for keys in ([b"\x00"], [b"\x00", b"\x00a", b"\x00\x00\xff"], [bytes(5)]):
        assert_maps(DoubleArray(keys, list(range(len(keys)))), keys)


def test_double_array_two_child_nodes_packed_up_to_the_array_end() -> None:
    # Nodes with children {0, d} take bases one after another from the first free slot, so the
    # multi-child search starts at every offset from the array's end in turn, including the one
    # where the window for the child d reaches exactly the last slot.
    for d in (1, 2, 4, 8, 16, 32, 64, 128):
        keys = [bytes([a, b, x]) for a in range(8) for b in range(64) for x in (0, d)]
        assert_maps(DoubleArray(keys, list(range(len(keys)))), keys)


_COMB = list(range(0, 256, 2)) + [255]


def comb_keys(blocks: int, chain: int) -> list[bytes]:
    """``blocks`` nodes with children on every even byte and 255: no two fit in one 256-slot block
    (shifted by an even o < 256 child 0 hits an even child; by an odd o, child 255 - o hits the
    255), so they stack block after block, each leaving its 127 odd slots free. Then a chain of ``chain`` single children on byte 0, and one node with the
    children {0, 1}, which no base inside the comb can hold."""
    keys = [bytes([i, x]) for i in range(1, blocks + 1) for x in _COMB]
    keys.append(bytes([blocks + 1]) + bytes(chain))
    keys += [bytes([blocks + 2, 0]), bytes([blocks + 2, 1])]
    return keys


def test_double_array_single_child_takes_the_first_free_slot() -> None:
    # The documented placement of a node with one child: the lowest free slot. So the chain fills
    # the holes the comb left, bottom up, even those far below where the comb ended (here a comb
    # longer than a search window), and at the end every slot below each chain link is used.
    keys = comb_keys(20, 500)
    da = DoubleArray(keys, list(range(len(keys))))
    assert_maps(da, keys)
    s, links = da.base[0] + 21, []
    for _ in range(500):
        s = da.base[s] + 0
        assert da.check[s] != -1
        links.append(s)
    first_free = da.check.index(-1, 1)
    assert max(links) < first_free, (max(links), first_free)


def test_double_array_build_ends_after_a_comb_two_windows_long() -> None:
    # 40 comb blocks: more than two 4096-slot search windows with free slots but no room for two
    # adjacent children. The search must move on window by window and end past the comb.
    def timeout(signum: int, frame: object) -> None:
        raise TimeoutError("DoubleArray build did not end within 10 s")

    keys = comb_keys(40, 50)
    previous = signal.signal(signal.SIGALRM, timeout)
    signal.setitimer(signal.ITIMER_REAL, 10.0)
    try:
        da = DoubleArray(keys, list(range(len(keys))))
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert_maps(da, keys)


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


def test_named_model_is_verified_against_its_sha256(monkeypatch: pytest.MonkeyPatch) -> None:
    # ``fast:mon-unigram`` reads the packaged file only after checking its pinned sha256: another
    # (valid) Unigram tokenizer.json in its place is refused, not silently encoded with.
    import tokspec.fast.unigram_datrie as ud
    from tokspec.formats.vocab import VocabularyError

    monkeypatch.setattr(ud, "named_path", lambda name: trained_model("hf-unigram"))
    with pytest.raises(VocabularyError, match="sha256"):
        datrie_encoder("mon-unigram")


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
