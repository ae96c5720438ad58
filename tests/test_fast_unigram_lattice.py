"""The fast Unigram lattice, piece by piece, against the reference Viterbi (``tokspec.reference``).

- ``DatrieUnigram.forward_all`` (the kernel ``forward_pretokens``: the forward pass alone over every
  pretoken, what the trie benchmark times) and ``DatrieUnigram.viterbi``: the best paths they leave,
  backtracked, are the reference's edges (in UTF-8 bytes), for both tries and both tie rules.
- sentencepiece's score re-basing (``UnigramModel.score_reset``) on short inputs: a tiny reset makes
  it happen at almost every position, where the real one (1e5) needs ~100K characters.
- float32 path arithmetic: cases (found by search) where float64 sums pick another segmentation.
- ``DatrieUnigram.encode_ids`` == sentencepiece's ids; ``char_of_byte``; ``DoubleArray.prefixes``
  from an offset.

Exactness = the same edges (start, end, id, unknown) / the same ids and offsets as the oracle.
Sized to run in seconds with ``TOKSPEC_JIT=0`` (mutation testing runs the kernels interpreted).
"""

from __future__ import annotations

import dataclasses
import functools
import random
from pathlib import Path

import numpy as np
import pytest
import sentencepiece
from hypothesis import example, given
from hypothesis import strategies as st

from tokspec import InvalidTextError, load_engine
from tokspec.corpus import build_corpus
from tokspec.fast._double_array import DoubleArray
from tokspec.fast._unigram_kernels import char_of_byte
from tokspec.fast.unigram_datrie import DatrieUnigram, datrie_encoder
from tokspec.formats.models import trained_model
from tokspec.reference.unigram import UnigramReference
from tokspec.formats.unigram_model import UnigramModel
from _unigram_edges import Edge, reference_edges, words

KINDS = ["hf-unigram", "spm-unigram", "spm-unigram-bytes", "spm-unigram-identity"]
TRIES = ["double-array", "hash"]
TEXTS = [t[:60] for t in build_corpus(seed=5)[::23]] + [
    "", " ", "a", "  two  spaces  ", "\u00e9\u0301 \U0001f642\U0001f642 \u4e2d x", "\ufb01\u2163 \u3000 q"]


def f32(x: float) -> float:
    return float(np.float32(x))



def tiny(vocab: list[tuple[str, float]], *, float32: bool = True, reset: float | None = None) -> UnigramModel:
    """A sentencepiece-flavour model over ``vocab`` (piece, score), pretokens split at spaces."""
    pieces = ("<unk>", *(p for p, _ in vocab))
    scores = tuple(f32(s) if float32 else s for _, s in vocab)
    return UnigramModel(
        pieces=pieces, scores=(0.0, *scores), matchable=(False,) + (True,) * len(vocab), unk_id=0,
        unk_score=f32(min(scores) - 10), byte_fallback=False, byte_ids=(), fuse_unk=False,
        flavour="spm", float32=float32, pretokenizer=words, score_reset=reset, source="<tiny>").check()


def backtrack(starts: np.ndarray, ids: np.ndarray, unk_id: int) -> list[Edge]:
    """Edges of the best path to the last position of one pretoken's predecessor arrays."""
    edges: list[Edge] = []
    e = len(starts) - 1
    while e > 0:
        s, pid = int(starts[e]), int(ids[e])
        assert 0 <= s < e, (s, e)
        edges.append((s, e, unk_id if pid < 0 else pid, pid < 0))
        e = s
    return edges[::-1]


def forward_all_edges(engine: DatrieUnigram, text: str) -> list[list[Edge]]:
    """``engine.forward_all`` over ``text``'s normalized pretokens, backtracked per pretoken."""
    data, bounds, _ = engine.normalized(text)
    starts, ids = engine.forward_all(data, bounds)
    count = len(bounds) - 1
    assert starts.dtype == ids.dtype == np.int64
    assert len(starts) == len(ids) == len(data) + count  # n + 1 entries per pretoken, nothing else
    out, at = [], 0
    for p in range(count):
        n = int(bounds[p + 1] - bounds[p])
        chunk_s, chunk_i = starts[at:at + n + 1], ids[at:at + n + 1]
        assert chunk_s[0] == chunk_i[0] == -1  # position 0 of a pretoken has no predecessor
        if n:
            out.append(backtrack(chunk_s, chunk_i, engine.model.unk_id))
        at += n + 1
    return out


def assert_lattice_matches(engine: DatrieUnigram, text: str) -> None:
    want = reference_edges(engine.model, text, engine.tie_break)
    assert forward_all_edges(engine, text) == want, text
    assert [engine.viterbi(p.text.encode("utf-8")) for p in engine.model.pretokenize(text)] == want, text


# -- trained models: every Unigram kind, both tries, both tie rules ------------------------------

@functools.cache
def trained(kind: str, trie: str, tie_break: str | None) -> DatrieUnigram:
    return datrie_encoder(str(trained_model(kind)), trie=trie, tie_break=tie_break)  # type: ignore[arg-type]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("trie", TRIES)
@pytest.mark.parametrize("tie_break", [None, "last"])
def test_forward_all_equals_reference_viterbi(kind: str, trie: str, tie_break: str | None) -> None:
    engine = trained(kind, trie, tie_break)
    for text in TEXTS:
        assert_lattice_matches(engine, text)


def test_hf_texts_have_several_pretokens_of_different_lengths() -> None:
    """The check above sees the per-pretoken bookkeeping of forward_all (not one pretoken only)."""
    _, bounds, _ = trained("hf-unigram", "double-array", None).normalized(TEXTS[0])
    assert len(bounds) > 3 and len(set(np.diff(bounds).tolist())) > 2


# -- tiny models: re-basing, float32 arithmetic, ties ---------------------------------------------

ALPHABET = "ab\u00e9"  # a two-byte character: byte positions differ from character positions

# (vocabulary, text, score_reset, tie_break), found by random search: each is a case where one
# plausible slip in re-basing or in float32 arithmetic changes the best segmentation.
CASES = [
    # no re-basing of the positions after ``start`` (or of the last two reached ones)
    ([("a", -10.007794380187988), ("a\u00e9", -9.399590492248535), ("b", -1.4451487064361572),
      ("ba", -3.2597451210021973), ("\u00e9", -2.29264235496521), ("\u00e9\u00e9", -1.5020802021026611)],
     "aba\u00e9a\u00e9a\u00e9b\u00e9ab", 0.5, "spm"),
    # re-basing reaches the last position of the pretoken (buffers sized exactly n + 1)
    ([("a", -11.709321022033691), ("b", -9.379511833190918), ("ba", -0.31318390369415283),
      ("b\u00e9\u00e9", -9.718888282775879), ("\u00e9", -9.299878120422363), ("\u00e9aa", -7.545855522155762)],
     "\u00e9aa\u00e9aabb\u00e9\u00e9", 1.0, "last"),
    # a position reached from position 0 must be re-based too
    ([("a", -0.7432622909545898), ("aba", -9.576513290405273), ("abb\u00e9", -8.398147583007812),
      ("a\u00e9", -8.248455047607422), ("b", -11.861623764038086), ("ba", -8.575732231140137),
      ("bb\u00e9", -4.731757164001465), ("\u00e9", -3.1383893489837646), ("\u00e9a", -9.69519329071045)],
     "bab", 0.5, "spm"),
    # the re-based scores are rounded to float32
    ([("a", -2.5780532360076904), ("aa\u00e9", -0.5466883778572083), ("b", -10.156780242919922),
      ("baa", -8.916234970092773), ("baa\u00e9", -2.286639928817749), ("bbb\u00e9", -7.670995712280273),
      ("\u00e9", -2.914264440536499), ("\u00e9b\u00e9", -10.653406143188477)],
     "\u00e9ab\u00e9\u00e9b\u00e9b\u00e9bba", 0.5, "spm"),
]
# re-basing (in float32) picks another segmentation than never re-basing
RESET_MATTERS = ([("a", -3.437227964401245), ("ab", -4.146793842315674), ("a\u00e9aa", -3.6251041889190674),
                  ("b", -1.0070574283599854), ("\u00e9", -4.930713653564453), ("\u00e9aba", -6.922851085662842),
                  ("\u00e9ba", -3.335533618927002), ("\u00e9\u00e9", -3.190155506134033)],
                 "b\u00e9\u00e9\u00e9b\u00e9a\u00e9", 1.0, "last")
# float32 sums pick another segmentation than float64 sums
F32_MATTERS = ([("a", -3.025578260421753), ("b", -3.949570417404175), ("ba\u00e9", -6.607898712158203),
                ("bb", -3.6413912773132324), ("\u00e9", -0.09406497329473495), ("\u00e9\u00e9", -10.670205116271973)],
               "bbbbb\u00e9a\u00e9\u00e9a", 7.0, "last")


def engines(model: UnigramModel, tie_break: str) -> list[DatrieUnigram]:
    return [DatrieUnigram(model, "tiny", tie_break=tie_break, trie=trie) for trie in TRIES]  # type: ignore[arg-type]


def assert_tiny_case(vocab: list[tuple[str, float]], text: str, reset: float | None, tie_break: str) -> None:
    model = tiny(vocab, reset=reset)
    ref = UnigramReference(model, "ref", tie_break=tie_break)  # type: ignore[arg-type]
    spaced = f"{text} {text[:3]} {text[::-1]}"  # several pretokens, the first the longest
    for engine in engines(model, tie_break):
        for t in (text, spaced):
            assert_lattice_matches(engine, t)
            got, want = engine.encode(t), ref.encode(t)
            assert (got.ids, got.offsets) == (want.ids, want.offsets), t


@pytest.mark.parametrize("case", [*CASES, RESET_MATTERS, F32_MATTERS])
def test_rebasing_and_float32_cases_equal_reference(case: tuple) -> None:
    assert_tiny_case(*case)


def test_the_arithmetic_cases_discriminate() -> None:
    """RESET_MATTERS and F32_MATTERS really depend on re-basing and on float32: without them the
    reference picks other edges (so an engine ignoring either fails the test above)."""
    vocab, text, reset, tie = RESET_MATTERS
    model = tiny(vocab, reset=reset)
    assert reference_edges(model, text, tie) != reference_edges(dataclasses.replace(model, score_reset=None), text, tie)
    vocab, text, reset, tie = F32_MATTERS
    model = tiny(vocab, reset=reset)
    assert reference_edges(model, text, tie) != reference_edges(dataclasses.replace(model, float32=False), text, tie)


def test_tie_rules_differ_on_an_exact_tie() -> None:
    model = tiny([("a", -1.0), ("b", -1.0), ("ab", -2.0)])
    first, last = engines(model, "spm")[0], engines(model, "last")[0]
    assert forward_all_edges(first, "ab ab") == [[(0, 2, 3, False)]] * 2 == reference_edges(model, "ab ab", "spm")
    assert forward_all_edges(last, "ab") == [[(0, 1, 1, False), (1, 2, 2, False)]] == reference_edges(model, "ab", "last")


@st.composite
def tiny_cases(draw: st.DrawFn) -> tuple[list[tuple[str, float]], str, float | None, str]:
    pieces = draw(st.lists(st.text(ALPHABET, min_size=1, max_size=4), min_size=1, max_size=8, unique=True))
    vocab = [(p, draw(st.floats(-12, -0.01))) for p in sorted(pieces)]
    text = draw(st.text(ALPHABET + "c ", max_size=14))  # 'c': an unknown character
    return vocab, text, draw(st.sampled_from([None, 0.5, 2.0, 9.0])), draw(st.sampled_from(["spm", "last"]))


@given(case=tiny_cases())
@example(case=CASES[0])
def test_hyp_tiny_models_equal_reference(case: tuple) -> None:
    vocab, text, reset, tie_break = case
    model = tiny(vocab, reset=reset)
    for engine in engines(model, tie_break):
        assert_lattice_matches(engine, text)


# -- ids only, char_of_byte, prefixes ---------------------------------------------------------------

@pytest.mark.parametrize("kind", ["spm-unigram", "spm-unigram-bytes"])
def test_encode_ids_equals_sentencepiece(kind: str) -> None:
    path = str(trained_model(kind))
    sp = sentencepiece.SentencePieceProcessor(model_file=path)
    engine = trained(kind, "double-array", None)
    for text in TEXTS:
        got = engine.encode_ids(text)
        assert got.dtype == np.int64
        assert got.tolist() == sp.encode(text), text


def test_encode_ids_hf_equals_encode_and_rejects_bad_text() -> None:
    engine = trained("hf-unigram", "hash", None)
    hf = load_engine("hf:" + str(trained_model("hf-unigram")))
    for text in TEXTS:
        assert engine.encode_ids(text).tolist() == list(hf.encode(text).ids or ()), text
    empty = engine.encode_ids("")
    assert empty.dtype == np.int64 and empty.size == 0
    with pytest.raises(InvalidTextError, match="lone surrogate"):
        engine.encode_ids("ab\ud800")


@given(text=st.text(max_size=20))
@example(text="a\u00e9\u4e2d\U0001f642")
def test_char_of_byte_indexes_characters(text: str) -> None:
    data = np.frombuffer(text.encode("utf-8"), dtype=np.uint8)
    table = char_of_byte(data)
    assert len(table) == len(data) + 1 and table[-1] == len(text)
    owner = [i for i, ch in enumerate(text) for _ in ch.encode("utf-8")]
    assert table[:-1].tolist() == owner
    assert "".join(np.array(list(text), dtype=object)[table[:-1]]) == "".join(ch * len(ch.encode("utf-8")) for ch in text)


def test_double_array_prefixes_from_an_offset() -> None:
    rng = random.Random(5)
    keys = sorted({bytes(rng.choice(b"abc") for _ in range(rng.randint(1, 4))) for _ in range(40)})
    da = DoubleArray(keys, list(range(len(keys))))
    for _ in range(300):
        data = bytes(rng.choice(b"abcd") for _ in range(rng.randint(0, 8)))
        pos = rng.randint(0, len(data))
        want = [(e, keys.index(data[pos:e])) for e in range(pos + 1, len(data) + 1) if data[pos:e] in keys]
        assert list(da.prefixes(data, pos)) == want, (data, pos)


def test_double_array_stored_without_its_free_tail(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cached trie whose arrays end at the last used slot (a compact store) loads padded: every
    walk, even on byte 0xff from the node with the largest base, stays in range and finds no key."""
    monkeypatch.setenv("TOKSPEC_CACHE", str(tmp_path))
    keys = [b"\x01", b"\x01\x02", b"a", b"ab\x03", b"b\x00"]  # low bytes: short arrays once trimmed
    vals = list(range(len(keys)))
    DoubleArray.cached(keys, vals)
    (path,) = (tmp_path / "datrie").glob("*.npz")
    with np.load(path) as npz:
        base, check, value = npz["base"], npz["check"], npz["value"]
    used = int(np.nonzero(check != -1)[0].max()) + 1
    assert used < base.max() + 256  # the trimmed arrays need padding
    np.savez(path, base=base[:used], check=check[:used], value=value[:used])
    loaded = DoubleArray.cached(keys, vals)
    assert len(loaded) >= max(loaded.base) + 256
    assert loaded.base[:used] == base[:used].tolist() and loaded.check[:used] == check[:used].tolist()
    assert set(loaded.check[used:]) <= {-1} and set(loaded.value[used:]) <= {-1}
    nodes = {k[:i] for k in keys for i in range(len(k) + 1)}  # every node of the trie
    for probe in [node + bytes([c]) for node in sorted(nodes) for c in range(256)] + [b""]:
        want = keys.index(probe) if probe in keys else -1
        assert loaded.get(probe) == want, probe
        assert list(loaded.prefixes(probe)) == [(e, keys.index(probe[:e])) for e in range(1, len(probe) + 1)
                                                if probe[:e] in keys]


def test_double_array_long_chains() -> None:
    """Keys of thousands of bytes (chains of one-child nodes: the array grows one slot at a time)."""
    rng = random.Random(9)
    keys = sorted({bytes(rng.choice(b"xyz\x80") for _ in range(rng.randint(1500, 3000))) for _ in range(3)})
    keys += [k[:100] for k in keys]
    da = DoubleArray(keys, list(range(len(keys))))
    for i, key in enumerate(keys):
        assert da.get(key) == i and da.get(key + b"x") == -1 and da.get(key[:-1]) == (keys.index(key[:-1]) if key[:-1] in keys else -1)
        assert list(da.prefixes(key)) == [(e, keys.index(key[:e])) for e in range(1, len(key) + 1) if key[:e] in keys]


def test_double_array_cache_is_used_when_valid_and_rebuilt_when_not(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A cached file is loaded only as written (its digest, bound to the keys and values, checks
    out: fast/_cache.py): a file edited by hand is rebuilt, even one that still maps every key to
    its value (here: with 1000 extra free slots), as are files with arrays of different lengths or
    that map a key wrongly; negative values are refused before any cache lookup."""
    monkeypatch.setenv("TOKSPEC_CACHE", str(tmp_path))
    keys, vals = [b"a", b"ab", b"b\xff"], [4, 5, 6]
    built = DoubleArray.cached(keys, vals)
    (path,) = (tmp_path / "datrie").glob("*.npz")
    free = np.full(1000, -1, dtype=np.int64)
    roomy = [np.concatenate([np.asarray(a, dtype=np.int64), free]) for a in (built.base, built.check, built.value)]
    roomy[0][-1000:] = 0
    np.savez(path, base=roomy[0], check=roomy[1], value=roomy[2])
    loaded = DoubleArray.cached(keys, vals)
    assert len(loaded) == len(built) and [loaded.get(k) for k in keys] == vals
    assert len(DoubleArray.cached(keys, vals)) == len(built)  # the rebuilt file is used as written
    np.savez(path, base=roomy[0], check=roomy[1], value=roomy[2][:len(built)])  # lengths differ
    assert len(DoubleArray.cached(keys, vals)) == len(built)
    wrong = roomy[2].copy()
    wrong[wrong == 5] = 7
    np.savez(path, base=roomy[0], check=roomy[1], value=wrong)  # "ab" -> 7
    again = DoubleArray.cached(keys, vals)
    assert len(again) == len(built) and [again.get(k) for k in keys] == vals
    with pytest.raises(ValueError, match="values must be >= 0"):
        DoubleArray.cached([b"a"], [-1])


def test_double_array_dense_many_child_nodes() -> None:
    """Thousands of nodes with dozens of children each: the multi-child search has to move past
    windows of candidate bases with no fit."""
    rng = random.Random(4)
    alpha = bytes(range(0x41, 0x41 + 40))
    keys = sorted({bytes(rng.choice(alpha) for _ in range(rng.randint(1, 3))) for _ in range(12000)})
    da = DoubleArray(keys, list(range(len(keys))))
    table = dict(zip(keys, range(len(keys))))
    for _ in range(3000):
        probe = bytes(rng.choice(alpha) for _ in range(rng.randint(0, 4)))
        assert da.get(probe) == table.get(probe, -1), probe
    assert all(da.get(k) == i for i, k in enumerate(keys))
