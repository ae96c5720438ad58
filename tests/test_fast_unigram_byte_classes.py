"""The fast Unigram engine against the reference on generated tiny models, over every UTF-8 byte class.

``tokspec.fast.unigram_datrie`` (both tries, the kernels of ``_unigram_kernels`` and
``_unigram_emit`` run as they are configured: interpreted under ``TOKSPEC_JIT=0``) must give the
reference's ids AND offsets (``tokspec.reference.unigram``) and its Viterbi edges
(``tokspec.reference.unigram_viterbi``), for every combination the kernels branch on:

- characters of 1, 2, 3 and 4 UTF-8 bytes, with continuation bytes at the edges of their class
  (0x80 as in ``\\u00c0`` and ``\\U00010000``, 0xBF as in ``\\u00ff``), known and unknown ones;
- both flavours: ``hf`` (float64, unknown runs fused and looked up as a piece, byte tokens over the
  whole run) and ``spm`` (float32, re-basing, byte tokens per character, unknowns merged);
- byte fallback complete, partial (some ``<0xNN>`` pieces missing) and absent;
- both tie rules, both offset modes, and pretokenizer alignments that are not the identity
  (characters with empty origins, origins wider than one character, shifted library spans).

The models and texts come from a seeded generator (the same cases on every run) and are tiny, so
the whole file runs in seconds with the kernels interpreted (mutation testing). Exactness = the
same edges / ids / offsets as the oracle on every case.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from tokspec.fast._unigram_kernels import lookup_da, lookup_hash
from tokspec.fast.unigram_datrie import DatrieUnigram
from tokspec.normalize import Aligned
from tokspec.reference.unigram import UnigramReference
from tokspec.reference.unigram_viterbi import viterbi
from tokspec.unigram_model import UnigramModel, byte_piece

Edge = tuple[int, int, int, bool]
#: one character of each UTF-8 length, continuation bytes at both ends of 0x80..0xBF
KNOWN = ["a", "b", "\u00c0", "\u00ff", "\u20ac", "\u0800", "\U0001f642", "\U00010000"]
#: characters no piece starts with (unknown edges), again of every length
UNKNOWN = ["z", "\u00c1", "\u4e2d", "\U00010080"]
TIES = ["first", "last"]


def f32(x: float) -> float:
    return float(np.float32(x))


def scrambled(text: str) -> list[Aligned]:
    """Pretokens split at spaces, with an alignment that is not the identity: ``b`` has an empty
    origin (an inserted character), ``\\u00c0`` an origin over itself and the next character,
    and every library span starts one character early (clipped at 0)."""
    out, pos = [], 0
    for word in text.split(" "):
        spans, origins = [], []
        for i, ch in enumerate(word):
            p = pos + i
            spans.append((max(p - 1, 0), p + 1))
            if ch == "b":
                origins.append((p, p))
            elif ch == "\u00c0":
                origins.append((p, min(p + 2, len(text))))
            else:
                origins.append((p, p + 1))
        if word:
            out.append(Aligned(word, tuple(spans), tuple(origins)))
        pos += len(word) + 1
    return out


def make_model(vocab: list[tuple[str, float]], *, flavour: str, fallback: str, reset: float | None,
               unk_at: int = 0, unk_score: float | None = None) -> UnigramModel:
    """A tiny model: ``<unk>`` at index ``unk_at`` among ``vocab``'s pieces, then byte pieces
    (``fallback``: "all" 256, "part" those of bytes below 0xF0, "none")."""
    pieces = [p for p, _ in vocab]
    scores = [s for _, s in vocab]
    pieces.insert(unk_at, "<unk>")
    scores.insert(unk_at, 0.0)
    matchable = [True] * len(pieces)
    if flavour == "spm":
        matchable[unk_at] = False
        scores = [f32(s) for s in scores]
    byte_ids: tuple[int, ...] = ()
    if fallback != "none":
        ids = []
        for b in range(256):
            if fallback == "all" or b < 0xF0:
                ids.append(len(pieces))
                pieces.append(byte_piece(b))
                scores.append(0.0)
                matchable.append(flavour == "hf")
            else:
                ids.append(-1)
        byte_ids = tuple(ids)
    real = [s for p, s in vocab]
    unk = (min(real) - 10) if unk_score is None else unk_score
    return UnigramModel(
        pieces=tuple(pieces), scores=tuple(scores), matchable=tuple(matchable), unk_id=unk_at,
        unk_score=f32(unk) if flavour == "spm" else unk, byte_fallback=fallback != "none",
        byte_ids=byte_ids, fuse_unk=flavour == "hf", flavour=flavour,  # type: ignore[arg-type]
        float32=flavour == "spm", pretokenizer=scrambled, score_reset=reset, source="<generated>").check()


def generated_cases(seed: int, count: int) -> list[tuple[dict, str]]:
    """(make_model keyword arguments, text) pairs over KNOWN (pieces) and UNKNOWN characters."""
    rng = random.Random(seed)
    cases = []
    for i in range(count):
        pieces = {rng.choice(KNOWN) for _ in range(3)}  # some single characters have pieces...
        while len(pieces) < 7:  # ...and longer pieces mix every byte class
            pieces.add("".join(rng.choice(KNOWN) for _ in range(rng.randint(2, 4))))
        vocab = [(p, rng.uniform(-12.0, -0.05)) for p in sorted(pieces)]
        rng.shuffle(vocab)
        flavour = "hf" if i % 2 else "spm"
        kwargs = dict(vocab=vocab, flavour=flavour, fallback=("all", "part", "none")[i % 3],
                      reset=rng.choice([None, 0.5, 3.0]) if flavour == "spm" else None,
                      unk_at=rng.randint(0, len(vocab)))
        alphabet = KNOWN * 3 + UNKNOWN + [" "]
        words = [p for p, _ in vocab]
        text = "".join(rng.choice(words) if rng.random() < 0.3 else rng.choice(alphabet)
                       for _ in range(rng.randint(1, 14)))
        cases.append((kwargs, text))
    return cases


CASES = generated_cases(seed=2026, count=36)


def reference_edges(model: UnigramModel, text: str, tie: str) -> list[list[Edge]]:
    """The reference Viterbi's edges per pretoken, in UTF-8 bytes (the kernels' positions)."""
    index = {p: i for i, p in enumerate(model.pieces)}
    max_len = max(len(p) for p, ok in zip(model.pieces, model.matchable) if ok)
    out = []
    for pre in model.pretokenize(text):
        at = [len(pre.text[:i].encode("utf-8")) for i in range(len(pre.text) + 1)]
        out.append([(at[s], at[e], i, unk) for s, e, i, unk
                    in viterbi(model, index, max_len, pre.text, tie)])  # type: ignore[arg-type]
    return out


def fast_edges(engine: DatrieUnigram, text: str) -> tuple[list[list[Edge]], list[list[Edge]]]:
    """Edges from ``forward_all`` (all pretokens in one kernel call) and from ``viterbi`` (one each)."""
    data, bounds, _ = engine.normalized(text)
    starts, ids = engine.forward_all(data, bounds)
    assert len(starts) == len(ids) == len(data) + len(bounds) - 1
    unk = engine.model.unk_id
    whole, at = [], 0
    for p in range(len(bounds) - 1):
        n = int(bounds[p + 1] - bounds[p])
        edges, e = [], n
        while e > 0:
            s, pid = int(starts[at + e]), int(ids[at + e])
            assert 0 <= s < e
            edges.append((s, e, unk if pid < 0 else pid, pid < 0))
            e = s
        whole.append(edges[::-1])
        at += n + 1
    single = [engine.viterbi(p.text.encode("utf-8")) for p in engine.model.pretokenize(text)]
    return whole, single


def check_case(model: UnigramModel, text: str) -> None:
    for tie in TIES:
        rule = model.flavour if tie == "first" else "last"
        want_edges = reference_edges(model, text, rule)
        for trie in ("double-array", "hash"):
            engine = DatrieUnigram(model, "gen", tie_break=rule, trie=trie)  # type: ignore[arg-type]
            assert fast_edges(engine, text) == (want_edges, want_edges), (trie, rule, text)
            for offsets in ("contract", "library"):
                engine.offsets = offsets  # type: ignore[assignment]
                ref = UnigramReference(model, "ref", tie_break=rule, offsets=offsets)  # type: ignore[arg-type]
                got, want = engine.encode(text), ref.encode(text)
                assert (got.ids, got.offsets) == (want.ids, want.offsets), (trie, rule, offsets, text)
            assert engine.encode_ids(text).tolist() == list(want.ids or ()), (trie, rule, text)


@pytest.mark.parametrize("index", range(len(CASES)))
def test_generated_model_equals_reference(index: int) -> None:
    kwargs, text = CASES[index]
    check_case(make_model(**kwargs), text)


def test_generated_cases_cover_every_branch() -> None:
    """The cases above reach what they are meant to: every flavour x fallback, re-basing, unknown
    characters of every length next to known ones, byte tokens, <unk> tokens."""
    seen = set()
    for kwargs, text in CASES:
        model = make_model(**kwargs)
        ids = UnigramReference(model, "ref").encode(text).ids or ()
        seen.add((kwargs["flavour"], kwargs["fallback"]))
        if any(i in model.byte_ids for i in ids):
            seen.add(("byte tokens", kwargs["flavour"]))
        if model.unk_id in ids:
            seen.add(("unk", kwargs["flavour"]))
        seen.update(("unknown", len(ch.encode("utf-8"))) for ch in UNKNOWN if ch in text)
    assert {(f, b) for f in ("hf", "spm") for b in ("all", "part", "none")} <= seen
    assert {("byte tokens", "hf"), ("byte tokens", "spm"), ("unk", "hf"), ("unk", "spm")} <= seen
    assert {("unknown", k) for k in (1, 2, 3, 4)} <= seen


def test_fused_unknown_run_that_is_a_piece() -> None:
    """HF looks a fused run of unknown characters up as a piece: with positive scores the run
    ``z\\u00c1`` (no piece for ``z`` or ``\\u00c1`` alone) scores less than two unknown edges, so
    the Viterbi takes the unknowns and the run becomes the piece, here id 0 (a valid id)."""
    for unk_at in (1, 3):
        vocab = [("z\u00c1", 25.0), ("a", 30.0), ("\u4e2dz\u00c1", 26.0)]
        model = make_model(vocab, flavour="hf", fallback="all", reset=None, unk_at=unk_at, unk_score=15.0)
        assert model.pieces[0] == "z\u00c1"
        for text in ("z\u00c1", "az\u00c1", "a z\u00c1a", "\u4e2dz\u00c1"):
            edges = [e for p in reference_edges(model, text, "hf") for e in p]
            assert all(e[3] for e in edges if model.pieces[e[2]] != "a")  # only "a" is matched
            runs = {0, model.pieces.index("\u4e2dz\u00c1")}  # the runs' pieces
            assert runs & set(UnigramReference(model, "ref").encode(text).ids or ())
            check_case(model, text)


def lookup_cases() -> tuple[list[bytes], list[tuple[bytes, int, int]]]:
    rng = random.Random(11)
    alphabet = [ch.encode("utf-8") for ch in KNOWN + UNKNOWN]
    keys = sorted({b"".join(rng.choice(alphabet) for _ in range(rng.randint(1, 3))) for _ in range(40)})
    probes = []
    for _ in range(300):
        head, tail = (b"".join(rng.choice(alphabet) for _ in range(rng.randint(0, 3))) for _ in "ht")
        key = rng.choice(keys)
        data = head + key + tail
        if rng.random() < 0.5:  # exactly a key, after a prefix
            probes.append((data, len(head), len(head) + len(key)))
        else:
            lo = rng.randint(0, len(data))
            probes.append((data, lo, rng.randint(lo, len(data))))
    return keys, probes


@pytest.mark.parametrize("trie", ["double-array", "hash"])
def test_lookup_kernels_find_exactly_the_slice(trie: str) -> None:
    """``lookup_da`` / ``lookup_hash``: the id of the piece equal to ``data[lo:hi]`` (from any
    ``lo``), else -1 (also for the empty slice: no key is empty)."""
    keys, probes = lookup_cases()
    model = make_model([(k.decode("utf-8"), -1.0) for k in keys], flavour="hf", fallback="none", reset=None)
    engine = DatrieUnigram(model, "lookup", trie=trie)  # type: ignore[arg-type]
    index = {p.encode("utf-8"): i for i, p in enumerate(model.pieces)}
    found = 0
    for data, lo, hi in probes:
        arr = np.frombuffer(data, dtype=np.uint8)
        if trie == "double-array":
            got = lookup_da(arr, lo, hi, *engine._da)
        else:
            got = lookup_hash(arr, lo, hi, *engine._ht)
        want = index.get(data[lo:hi], -1) if hi > lo else -1
        assert got == want, (data, lo, hi)
        found += want >= 0 and lo > 0
    assert found > 20
