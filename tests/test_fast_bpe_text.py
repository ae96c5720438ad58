"""``fast:`` BPE ``encode_ids`` with nothing between its two kernel calls (``tokspec.fast._bpe_text``).

Contracts: ``ids_of_text`` equals the two-step path (``spans_of_code_points``, then
``CompiledBPE.encode_text_ids``) for every Peek2 pattern, compiled and interpreted alike;
``kernel_args`` hands it each pattern's own kernel and tables; ``encode_ids`` equals tiktoken and
``encode_arrays``, repeatedly and from several threads at once.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from tokspec import load_engine
from tokspec.fast import pretok_peek2 as p2
from tokspec.fast._bpe_text import ids_of_text
from tokspec.fast.bpe_kernel import CompiledBPE
from tokspec.fuzz.strategies import trained_bpe_ranks

from _threads import run_in_threads


def _pieces_text(seed: int) -> str:
    """Words from a small alphabet that repeat within and across texts, with spaces and digits."""
    rng = random.Random(seed)
    words = ["".join(rng.choice("abc") for _ in range(rng.randint(1, 14))) for _ in range(40)]
    return " ".join(rng.choice(words) + rng.choice(["", "", "1", "22", ".", "  "]) for _ in range(200))


@pytest.mark.parametrize("pattern", p2.PATTERN_NAMES)
def test_ids_of_text_equals_spans_then_merge(pattern: str) -> None:
    ranks = trained_bpe_ranks(3, alphabet=b"abc 12.", merges=80, segments=20, segment_len=(10, 40))
    compiled = CompiledBPE.from_ranks(ranks)
    for seed in range(4):
        text = _pieces_text(seed)
        cps = p2.code_points(text)
        starts, ends = p2.spans_of_code_points(cps, pattern)
        want = compiled.encode_text_ids(cps, starts, ends).tolist()
        data = np.frombuffer(text.encode(), dtype=np.uint8)
        assert ids_of_text(data, cps, *p2.kernel_args(pattern), compiled._tables).tolist() == want
    empty = np.frombuffer(b"", dtype=np.uint8)
    assert ids_of_text(empty, p2.code_points(""), *p2.kernel_args(pattern), compiled._tables).tolist() == []


def test_kernel_args_are_the_patterns_own() -> None:
    """Each pattern's own spans come out of ``ids_of_text``: on a vocabulary whose tokens span digit
    runs and whitespace runs, the four patterns give four different encodings of one text (qwen2
    splits every digit, llama3 keeps trailing whitespace apart from cl100k_base, o200k_base
    differs on the case run), each equal to its spans' two-step encoding."""
    ranks = {bytes([b]): b for b in range(256)}
    for extra in (b"xA", b"12", b"123", b"\n ", b"  ", b"   ", b"Ab"):
        ranks[extra] = len(ranks)
    compiled = CompiledBPE.from_ranks(ranks)
    text = "xAbC 12345 x  \n  "
    data = np.frombuffer(text.encode(), dtype=np.uint8)
    cps = p2.code_points(text)
    got = {}
    for pattern in p2.PATTERN_NAMES:
        peek2, _ = p2.kernel_args(pattern)
        assert peek2 is (p2._o200k_kernel if pattern == "o200k_base" else p2._cl100k_kernel)
        starts, ends = p2.spans_of_code_points(cps, pattern)
        got[pattern] = ids_of_text(data, cps, *p2.kernel_args(pattern), compiled._tables).tolist()
        assert got[pattern] == compiled.encode_text_ids(cps, starts, ends).tolist(), pattern
    assert len({tuple(v) for v in got.values()}) == 4, got
    with pytest.raises(Exception, match="no pattern="):
        p2.kernel_args("r50k_base")


def test_ids_of_text_interpreted_equals_compiled() -> None:
    from tokspec._interpreted import interpreted_module
    from tokspec.fast import _bpe_text

    plain, plain_p2 = interpreted_module(_bpe_text).ids_of_text, interpreted_module(p2)
    compiled = load_engine("fast:o200k_base").bpe  # type: ignore[attr-defined]
    for pattern in ("o200k_base", "cl100k_base"):
        for text in ("Don't stop: 12345 ok\r\n  x", "\u4e2d\u6587 caf\u00e9 " * 3, ""):
            data = np.frombuffer(text.encode(), dtype=np.uint8)
            cps = p2.code_points(text)
            want = ids_of_text(data, cps, *p2.kernel_args(pattern), compiled._tables).tolist()
            with np.errstate(over="ignore"):  # the copy's kernels are plain numpy (JIT_ENABLED is global)
                got = plain(data, cps, *plain_p2.kernel_args(pattern), compiled._tables).tolist()
            assert got == want


@pytest.mark.parametrize("vocab", ["cl100k_base", "o200k_base"])
def test_encode_ids_equals_tiktoken_repeatedly_and_from_threads(vocab: str) -> None:
    fast = load_engine(f"fast:{vocab}")
    lib = load_engine(f"tiktoken:{vocab}").library_encoding  # type: ignore[attr-defined]
    texts = [_pieces_text(s) + " \u4e2d\u6587\u5b57 caf\u00e9 don't \U0001f642" for s in range(6)]
    want = [lib.encode_ordinary(t) for t in texts]
    for _ in range(2):
        assert [fast.encode_ids(t).tolist() for t in texts] == want  # type: ignore[attr-defined]
        assert [fast.encode_arrays(t).ids.tolist() for t in texts] == want

    errors: list[str] = []

    def work(k: int) -> None:
        for i in range(30):
            j = (i + k) % len(texts)
            if fast.encode_ids(texts[j]).tolist() != want[j]:  # type: ignore[attr-defined]
                errors.append(f"thread {k} text {j}")

    run_in_threads(work, 4)
    assert not errors


def _direct_entries(ids: object) -> object:
    """The ``direct`` cell of an ``ids_function`` closure: None until both entries are resolved."""
    cells = dict(zip(ids.__code__.co_freevars, ids.__closure__))  # type: ignore[attr-defined]
    return cells["direct"].cell_contents


def test_ids_function_switches_to_the_entries_and_stays_equal() -> None:
    """``ids_function``: the first call goes through the dispatchers, the later ones through the
    kernels' machine-code entries (compiled mode), with the ids of ``ids_of_text`` on every call,
    for texts of every length class (empty, ASCII, multi-byte) and both Peek2 kernels."""
    from tokspec._jit import JIT_ENABLED
    from tokspec.fast._bpe_text import ids_function

    compiled = load_engine("fast:o200k_base").bpe  # type: ignore[attr-defined]
    for pattern in ("o200k_base", "cl100k_base"):
        ids = ids_function(*p2.kernel_args(pattern), compiled)
        assert _direct_entries(ids) is None
        for round_ in range(2):
            for text in ("", "x", "Don't stop: 12345 ok\r\n  x", "\u4e2d\u6587 caf\u00e9 \U0001f642 " * 5,
                         _pieces_text(round_)):
                data = np.frombuffer(text.encode(), dtype=np.uint8)
                cps = p2.code_points(text)
                want = ids_of_text(data, cps, *p2.kernel_args(pattern), compiled._tables).tolist()
                assert ids(data, cps).tolist() == want, (pattern, text)
                assert (_direct_entries(ids) is not None) == JIT_ENABLED


def test_ids_function_without_compiled_kernels_keeps_the_dispatch() -> None:
    """A Peek2 kernel with no compiled version (here its plain function) gives no entry: every
    call goes through ``ids_of_text``, with the same ids."""
    from tokspec._jit import interpreted
    from tokspec.fast._bpe_text import ids_function

    compiled = load_engine("fast:cl100k_base").bpe  # type: ignore[attr-defined]
    peek2, args = p2.kernel_args("cl100k_base")
    ids = ids_function(interpreted(peek2), args, compiled)
    text = "plain Peek2: 123 don't"
    data = np.frombuffer(text.encode(), dtype=np.uint8)
    want = ids_of_text(data, p2.code_points(text), peek2, args, compiled._tables).tolist()
    for _ in range(2):
        with np.errstate(over="ignore"):
            assert ids(data, p2.code_points(text)).tolist() == want
        assert _direct_entries(ids) is None


def test_every_path_calls_the_one_compiled_merge() -> None:
    """``encode_ids``, ``encode`` (offsets), ``encode_pieces`` and ``encode_text_ids`` (contiguous
    spans or not) give ``_encode`` arguments of the same types: after the first path, the others
    compile no version of their own (the UTF-8 bytes are read-only everywhere)."""
    from tokspec.fast.bpe_kernel import _encode

    engine = load_engine("fast:cl100k_base")
    bpe = engine.bpe  # type: ignore[attr-defined]
    text = "one version: caf\u00e9 \u4e2d\u6587 12345"
    want = engine.encode_ids(text).tolist()  # type: ignore[attr-defined]
    versions = set(getattr(_encode, "overloads", {}))
    assert engine.encode(text).ids == tuple(want)
    cps = p2.code_points(text)
    starts, ends = p2.spans_of_code_points(cps, "cl100k_base")
    assert bpe.encode_text_ids(cps, starts, ends, text.encode()).tolist() == want
    assert bpe.encode_text_ids(cps[1:], starts[1:] - 1, ends[1:] - 1).tolist() == want[1:]  # not from 0
    assert bpe.encode_pieces("caf\u00e9".encode(), np.array([0, 5])).tolist() == engine.encode_ids("caf\u00e9").tolist()  # type: ignore[attr-defined]
    assert set(getattr(_encode, "overloads", {})) == versions


def test_span_arrays_kept_per_thread_survive_reentry_and_large_texts() -> None:
    """The span arrays ``ids_function`` keeps per thread: a call made on the same thread while
    another is between its two kernel calls (as a signal handler could) gets arrays of its own
    (shared ones would have the inner call's spans overwrite the outer's before its merge), so
    both are right; texts longer than ``SPANS_KEPT`` characters (here > 1 MB, checked against
    tiktoken) and short ones alternate with the same ids as the dispatchers' path."""
    from tokspec._jit import JIT_ENABLED
    from tokspec.app.bench.fast import chinese_like, english
    from tokspec.fast._bpe_text import SPANS_KEPT, ids_function

    fast = load_engine("fast:cl100k_base")
    compiled = fast.bpe  # type: ignore[attr-defined]
    lib = load_engine("tiktoken:cl100k_base").library_encoding  # type: ignore[attr-defined]
    ids = ids_function(*p2.kernel_args("cl100k_base"), compiled)

    def args(text: str) -> tuple[np.ndarray, np.ndarray]:
        return np.frombuffer(text.encode(), dtype=np.uint8), p2.code_points(text)

    def want(text: str) -> list[int]:
        return ids_of_text(*args(text), *p2.kernel_args("cl100k_base"), compiled._tables).tolist()

    outer, inner = "outer text: don't 12345 " * 40, "inner \u4e2d\u6587 words " * 10
    for _ in range(2):  # the first resolves the entries (compiled mode), the second keeps its spans
        assert ids(*args(outer)).tolist() == want(outer)
    cells = dict(zip(ids.__code__.co_freevars, ids.__closure__))  # type: ignore[attr-defined]
    if JIT_ENABLED:
        peek2_entry, encode_entry = cells["direct"].cell_contents
        inner_got: list[list[int]] = []
        entered = []

        def reentrant_encode(*a: object) -> np.ndarray:
            """Between the outer call's Peek2 (its spans written) and its merge: the inner call."""
            if not entered:  # once: the inner call's own merge goes straight through
                entered.append(True)
                inner_got.append(ids(*args(inner)).tolist())
            out: np.ndarray = encode_entry(*a)
            return out

        cells["direct"].cell_contents = (peek2_entry, reentrant_encode)
        try:
            assert ids(*args(outer)).tolist() == want(outer)
        finally:
            cells["direct"].cell_contents = (peek2_entry, encode_entry)
        assert inner_got == [want(inner)]
    big = english(600_000, seed=5) + chinese_like(600_000, seed=5)
    assert len(big) > SPANS_KEPT and len(big.encode()) > 1_000_000
    for text in (big, inner, big[:SPANS_KEPT + 1], outer, big):
        assert ids(*args(text)).tolist() == want(text)
    assert fast.encode_ids(big).tolist() == lib.encode_ordinary(big)  # type: ignore[attr-defined]


def test_encode_ids_of_a_str_subclass_uses_its_characters() -> None:
    """A ``str`` subclass whose ``encode`` lies gets the ids (and offsets) of its characters: the kernels get
    bytes and code points that agree (bytes from another text would send the merge's byte
    positions, counted from the code points, past the end of the bytes)."""

    class Liar(str):
        def encode(self, encoding: str = "utf-8", errors: str = "strict") -> bytes:
            return b"x"

    fast = load_engine("fast:cl100k_base")
    text = "a longer text than x: caf\u00e9 \u4e2d\u6587 " * 20
    want = fast.encode_ids(text).tolist()  # type: ignore[attr-defined]
    for _ in range(2):  # through the dispatchers, then the kernels' entries
        assert fast.encode_ids(Liar(text)).tolist() == want  # type: ignore[attr-defined]
    assert fast.encode(Liar(text)) == fast.encode(text)  # the offsets path (encode_text) too


def test_a_str_subclass_cannot_hand_the_other_kernels_other_bytes() -> None:
    """The Unigram engine (compiled normalizer and pretokenizer, ids and offsets) and BPE token
    counting take a text's bytes and code points from ``str.encode``, never from the text's own
    ``encode``: a subclass whose ``encode`` lies gets the plain text's results."""
    from tokspec.fast.bpe_counting import CountingTables, split_after

    class Liar(str):
        def encode(self, encoding: str = "utf-8", errors: str = "strict") -> bytes:
            return b"\xf0" if encoding == "utf-8" else b"\x00\x00\x11\x00"

    text = "A longer text, caf\u00e9 \u4e2d\u6587 and \u0928\u092e\u0938\u094d\u0924\u0947 " * 10
    unigram = load_engine("fast:mon-unigram")
    assert unigram.encode_ids(Liar(text)).tolist() == unigram.encode_ids(text).tolist()  # type: ignore[attr-defined]
    assert unigram.encode(Liar(text)) == unigram.encode(text)
    tables = CountingTables(load_engine("fast:cl100k_base").bpe)  # type: ignore[attr-defined]
    assert split_after(tables, Liar(text), 7) == split_after(tables, text, 7)
