"""The Viterbi forward pass's first-character step (``tokspec.fast._unigram_kernels``), and the two
tries against each other on more than a megabyte.

Each start walks its first character's bytes without looking for pieces, relaxes that character's
end once (its one-character piece, else the unknown edge), then walks on only if the whole
character was matched. The cases below pin each way out of that step, for both tries, compiled
and interpreted (``jit=False``), against the reference Viterbi (``tokspec.reference``):

- the walk fails inside a multi-byte character (a piece shares its first bytes only);
- the character's node exists but is no piece, and longer pieces go on from it;
- the character is a piece and longer pieces go on from it;
- ties at the character's end between the piece and an earlier path (both tie rules).

The slow tests (``TOKSPEC_SLOW=1``): the double array and the hash trie give the same
predecessors and ids over every position of > 1 MB (the arrays the benchmark compares), and the
same ids and offsets as HF ``tokenizers`` / sentencepiece there.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

from tokspec import load_engine
from tokspec.app.bench.fast import english
from tokspec.fast.unigram_datrie import DatrieUnigram, datrie_encoder
from tokspec.formats.models import LARGE, SMALL, trained_model
from tokspec.formats.unigram_model import UnigramModel
from tokspec.reference.unigram import UnigramReference
from _unigram_edges import Edge, reference_edges, words

TRIES = ["double-array", "hash"]



def model(vocab: list[tuple[str, float]], unk: float = -20.0) -> UnigramModel:
    """A float64 model over ``vocab``, pretokens split at spaces (HF-like arithmetic, spm ties)."""
    return UnigramModel(
        pieces=("<unk>", *(p for p, _ in vocab)), scores=(0.0, *(s for _, s in vocab)),
        matchable=(False,) + (True,) * len(vocab), unk_id=0, unk_score=unk, byte_fallback=False,
        byte_ids=(), fuse_unk=False, flavour="spm", float32=False, pretokenizer=words,
        score_reset=None, source="<first-char>").check()


def lattice_edges(engine: DatrieUnigram, text: str) -> list[list[Edge]]:
    """``forward_all`` over the pretokens, backtracked from each pretoken's last position."""
    data, bounds, _ = engine.normalized(text)
    starts, ids = engine.forward_all(data, bounds)
    out, at = [], 0
    for p in range(len(bounds) - 1):
        n = int(bounds[p + 1] - bounds[p])
        edges: list[Edge] = []
        e = n
        while e > 0:
            s, pid = int(starts[at + e]), int(ids[at + e])
            edges.append((s, e, engine.model.unk_id if pid < 0 else pid, pid < 0))
            e = s
        out.append(edges[::-1])
        at += n + 1
    return out


# (vocabulary, text, the edges the reference gives, under "spm" ties)
CASES = [
    # U+4E2D (E4 B8 AD) is no piece, U+4E30 (E4 B8 B0) is: the walk leaves the trie at the third
    # byte, inside the character -> one unknown edge over the whole character
    ([("\u4e30", -1.0), ("a", -1.0)], "\u4e2da", [[(0, 3, 0, True), (3, 4, 2, False)]]),
    # "\u00e9" (C3 A9) is no piece but "\u00e9a" is: unknown edge to 2, and the walk goes on to 3
    ([("\u00e9a", -1.0), ("a", -5.0)], "\u00e9a", [[(0, 3, 1, False)]]),
    # the same, where the unknown edge plus "a" wins
    ([("\u00e9a", -30.0), ("a", -1.0)], "\u00e9a", [[(0, 2, 0, True), (2, 3, 2, False)]]),
    # "\u00e9" is a piece and "\u00e9\u00e9" goes on from its node
    ([("\u00e9", -3.0), ("\u00e9\u00e9", -4.0)], "\u00e9\u00e9", [[(0, 4, 2, False)]]),
    # a four-byte character alone, then after a piece that ends where it starts
    ([("\U0001f642", -2.0), ("x\U0001f642", -1.0), ("x", -0.5)], "\U0001f642 x\U0001f642",
     [[(0, 4, 1, False)], [(0, 5, 2, False)]]),
]


@functools.cache
def engines(case: int, tie_break: str) -> list[DatrieUnigram]:
    m = model(CASES[case][0])
    return [DatrieUnigram(m, "first-char", tie_break=tie_break, trie=trie, jit=jit)  # type: ignore[arg-type]
            for trie in TRIES for jit in (True, False)]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_first_character_cases_equal_reference(case: int) -> None:
    vocab, text, want = CASES[case]
    m = model(vocab)
    assert reference_edges(m, text, "spm") == want  # the case is what its comment says
    ref = UnigramReference(m, "ref", tie_break="spm")
    for engine in engines(case, "spm"):
        assert lattice_edges(engine, text) == want, (engine.trie_kind, text)
        got, exp = engine.encode(text), ref.encode(text)
        assert (got.ids, got.offsets) == (exp.ids, exp.offsets)


def test_tie_at_the_first_characters_end_follows_the_rule() -> None:
    """"ab" vs "a" + "b" tie at position 2: "b"'s relaxation is the first-character step of start 1
    (an earlier start reached position 2 first). spm keeps "ab" (first), "last" keeps "a", "b"."""
    m = model([("a", -1.0), ("b", -1.0), ("ab", -2.0)])
    assert reference_edges(m, "ab", "spm") == [[(0, 2, 3, False)]]
    assert reference_edges(m, "ab", "last") == [[(0, 1, 1, False), (1, 2, 2, False)]]
    for tie_break, want in (("spm", [[(0, 2, 3, False)]]), ("last", [[(0, 1, 1, False), (1, 2, 2, False)]])):
        for trie in TRIES:
            for jit in (True, False):
                engine = DatrieUnigram(m, "tie", tie_break=tie_break, trie=trie, jit=jit)  # type: ignore[arg-type]
                assert lattice_edges(engine, "ab") == want, (tie_break, trie, jit)


def test_unknown_first_character_ties_follow_the_rule() -> None:
    """The unknown edge of a first character ties with a piece: "xc" (-4, from start 0) vs "x" (-1)
    then the unknown "c" (-3, start 1's first-character step): spm keeps "xc", "last" the other."""
    m = model([("x", -1.0), ("xc", -4.0)], unk=-3.0)
    want = {"spm": [[(0, 2, 2, False)]], "last": [[(0, 1, 1, False), (1, 2, 0, True)]]}
    for tie_break in ("spm", "last"):
        assert reference_edges(m, "xc", tie_break) == want[tie_break]
        for trie in TRIES:
            for jit in (True, False):
                engine = DatrieUnigram(m, "tie", tie_break=tie_break, trie=trie, jit=jit)  # type: ignore[arg-type]
                assert lattice_edges(engine, "xc") == want[tie_break], (tie_break, trie, jit)



def test_piece_zero_is_a_piece_in_the_first_character_step() -> None:
    """Piece id 0 is an ordinary piece when the unknown piece has another id: "a" (id 0, -1) + "b"
    beats "ab" (-3), which it would not if id 0 were scored as the unknown edge (-20)."""
    m = UnigramModel(
        pieces=("a", "<unk>", "b", "ab"), scores=(-1.0, 0.0, -1.0, -3.0), matchable=(True, False, True, True),
        unk_id=1, unk_score=-20.0, byte_fallback=False, byte_ids=(), fuse_unk=False, flavour="spm",
        float32=False, pretokenizer=words, score_reset=None, source="<piece-zero>").check()
    want = [[(0, 1, 0, False), (1, 2, 2, False)]]
    assert reference_edges(m, "ab", "spm") == want
    for trie in TRIES:
        for jit in (True, False):
            assert lattice_edges(DatrieUnigram(m, "zero", trie=trie, jit=jit), "ab") == want, (trie, jit)  # type: ignore[arg-type]

# -- > 1 MB: the two tries, and the libraries ------------------------------------------------------

MB = 1_050_000


@pytest.mark.slow
@pytest.mark.parametrize("name", ["mon-unigram", "spm-unigram-bytes", "spm-unigram-bytes-large"])
def test_double_array_equals_hash_trie_and_library_on_a_megabyte(name: str) -> None:
    """(The large model: ``models.LARGE``, English-centric, 32,000 pieces, the benchmark's.)"""
    arg = name if name == "mon-unigram" else str(trained_model(name.removesuffix("-large"), vocab_size=(
        LARGE if name.endswith("-large") else SMALL)))
    text = english(MB, seed=12)
    da, ht = datrie_encoder(arg), datrie_encoder(arg, trie="hash")
    data, bounds, _ = da.normalized(text)
    assert len(data) > 1_000_000
    a, b = da.forward_all(data, bounds), ht.forward_all(data, bounds)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
    if name.endswith("-large"):
        assert len(da.model.pieces) == LARGE
    library = load_engine("hf:mon-unigram" if name == "mon-unigram" else f"spm:{arg}").encode_arrays(text)
    assert da.encode_arrays(text).same_as(library)
    assert ht.encode_arrays(text).same_as(library)


def test_a_character_cut_by_the_pretokens_end_is_one_unknown_edge_to_the_end() -> None:
    """``viterbi`` takes raw bytes: a lead byte whose character runs past the end (b"a\\xe4\\xb8",
    two of three bytes) gets the unknown edge to the end, not past it, even when a piece shares
    those bytes (U+4E30 here)."""
    m = model([("a", -1.0), ("\u4e30", -1.0)])
    for trie in TRIES:
        for jit in (True, False):
            engine = DatrieUnigram(m, "cut", trie=trie, jit=jit)  # type: ignore[arg-type]
            assert engine.viterbi(b"a\xe4\xb8") == [(0, 1, 1, False), (1, 3, 0, True)], (trie, jit)
            assert engine.viterbi(b"\xe4\xb8\xb0\xe4") == [(0, 3, 2, False), (3, 4, 0, True)], (trie, jit)
