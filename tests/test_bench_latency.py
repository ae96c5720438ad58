"""Smoke test of the ``latency`` bench suite's machinery (speed itself is reported by ``tokspec
bench --suite latency``, never asserted): text sizes, percentiles per call, the exactness mark."""

from __future__ import annotations

import sys
from collections.abc import Callable

import numpy as np
import pytest

from _str_utf8 import make_utf8

from tokspec.app.bench import SUITES, fresh_copy
from tokspec.app.bench.latency import SUITE, _latency_rows, per_call_seconds, short_texts

IdsFnLike = Callable[[str], list[int]]


def test_fresh_copy_is_equal_new_and_without_the_utf8_an_extension_made() -> None:
    text = "héllo wörld 你好 " * 50
    bare = sys.getsizeof(text)
    make_utf8(text)
    assert sys.getsizeof(text) > bare  # the UTF-8 is kept with the object
    copy = fresh_copy(text)
    assert copy == text and copy is not text and sys.getsizeof(copy) == bare


def test_per_call_seconds_hands_each_timed_call_a_new_copy() -> None:
    texts = ["ünïcode text " * 20, "plain ascii " * 20]
    seen: list[tuple[int, int]] = []  # (object id, size) each call found

    def first(t: str) -> None:  # an extension peer: reads the str as UTF-8
        make_utf8(t)

    def second(t: str) -> None:
        seen.append((id(t), sys.getsizeof(t)))

    per_call_seconds({"first": first, "second": second}, texts, rounds=2)
    timed = seen[len(texts):]  # after the warm-up pass (which may use the texts themselves)
    assert len(timed) == 2 * len(texts)
    assert all(size == sys.getsizeof(fresh_copy(texts[i % 2])) for i, (_, size) in enumerate(timed))
    assert all(i != id(t) for i, _ in timed for t in texts)


def test_short_texts_are_half_to_two_kilobytes_and_reproducible() -> None:
    texts = short_texts(40, seed=3)
    assert len(texts) == 40 and texts == short_texts(40, seed=3) and texts != short_texts(40, seed=4)
    assert all(400 < len(t.encode()) <= 2000 for t in texts)  # a cut multi-byte char may drop <= 3
    assert any(not t.isascii() for t in texts) and any(t.isascii() for t in texts)


def test_per_call_seconds_one_time_per_text_and_function() -> None:
    texts = ["ab", "cde", "f"]
    calls: list[str] = []
    times = per_call_seconds({"x": calls.append, "y": len}, texts, rounds=2)
    assert set(times) == {"x", "y"} and all(len(v) == 3 and (v >= 0).all() and (v < 1).all() for v in times.values())
    assert calls == texts * 3  # 1 warm-up pass + 2 rounds


def test_latency_rows_mark_a_contestant_whose_ids_differ() -> None:
    texts = ["a b", "c d", "e f"]
    fns = {"subject": lambda t: [ord(c) for c in t], "same": lambda t: [ord(c) for c in t],
           "off": lambda t: [ord(c) for c in t] if t != "c d" else [0]}
    rows = _latency_rows("lat", "subj", fns, texts, rounds=1)
    assert [(r.case, r.baseline) for r in rows] == [
        ("lat p50", "same"), ("lat p99", "same"), ("lat p50 INEXACT 1/3", "off"), ("lat p99 INEXACT 1/3", "off")]
    assert all(r.suite == SUITE == "latency" and r.input_bytes == 3 for r in rows)
    assert SUITES["latency"] == "tokspec.app.bench.latency"


def test_peers_time_toktok_by_its_list_and_by_its_array(monkeypatch: pytest.MonkeyPatch) -> None:
    """Both of toktok-rs's ways to return ids are peers (``peers``' docstring: timing only the
    list flattered fast:), each bound to the encoding asked for; a missing library is left out."""
    import types

    from tokspec.app.bench.latency import peers

    asked: list[str] = []

    class _Tokenizer:
        def __init__(self, name: str) -> None:
            self.name = name

        def encode_ordinary(self, text: str) -> list[int]:
            return [len(text), 0]

        def encode_to_numpy(self, text: str) -> np.ndarray:
            return np.array([len(text), 1], dtype=np.uint32)

    def encoding(name: str) -> _Tokenizer:
        asked.append(name)
        return _Tokenizer(name)

    fake = types.ModuleType("toktok")
    fake._encoding = encoding  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "toktok", fake)
    for absent in ("quicktok", "riptoken", "kitoken"):
        monkeypatch.setitem(sys.modules, absent, None)  # import raises ImportError: left out
    got = peers("o200k_base")
    assert list(got) == ["tiktoken encode_ordinary", "toktok-rs", "toktok-rs numpy"]
    assert asked == ["o200k_base", "o200k_base"]
    assert got["toktok-rs"]("abc") == [3, 0]
    array = got["toktok-rs numpy"]("abcd")
    assert isinstance(array, np.ndarray) and array.tolist() == [4, 1]


def test_one_per_library_keeps_the_array_variant_and_every_other_library() -> None:
    from tokspec.app.bench.latency import one_per_library

    def fn(text: str) -> list[int]:
        return []

    fns = {"tiktoken encode_ordinary": fn, "toktok-rs": fn, "toktok-rs numpy": fn, "quicktok-v1": fn}
    assert list(one_per_library(fns)) == ["tiktoken encode_ordinary", "toktok-rs numpy", "quicktok-v1"]
    assert list(one_per_library({"toktok-rs": fn})) == ["toktok-rs"]  # a library's only variant stays


def test_batch_rows_time_both_ways_and_mark_ids_that_differ() -> None:
    """_batch_rows: one row for fast: on one thread and one on every core, against the library's
    batch, each marked INEXACT when its ids differ from the library's on any text."""
    from tokspec import load_engine
    from tokspec.app.bench.latency import _batch_rows

    fast = load_engine("fast:cl100k_base")
    texts = short_texts(6, seed=5)
    exact = _batch_rows("b", fast, lambda batch: [fast.encode_ids(t) for t in batch], "lib", texts, 1)  # type: ignore[attr-defined]
    assert [(r.case, r.subject.split()[-2:]) for r in exact] == [("b batch of 6", ["1", "thread"]),
                                                                 ("b batch of 6", ["every", "core"])]
    assert all(r.baseline == "lib" and r.input_bytes == sum(len(t.encode()) for t in texts) for r in exact)
    off = _batch_rows("b", fast, lambda batch: [[0] for _ in batch], "lib", texts, 1)
    assert [r.case for r in off] == ["b batch of 6 INEXACT", "b batch of 6 INEXACT"]


@pytest.mark.parametrize("with_end", [True, False])
def test_toktok_batch_is_split_per_text(monkeypatch: pytest.MonkeyPatch, with_end: bool) -> None:
    """toktok-rs's batch returns one flat array and where each text's ids start (0.3.0: then the
    end too); both forms are cut into one array per text, empty texts included. Without toktok-rs
    there is no such row."""
    import types

    from tokspec.app.bench.latency import _toktok_batch

    class _Tokenizer:
        def encode_batch_to_numpy(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
            per = [[ord(c) for c in t] for t in texts]
            starts = np.cumsum([0] + [len(p) for p in per])
            return np.array([i for p in per for i in p], dtype=np.uint32), starts if with_end else starts[:-1]

    fake = types.ModuleType("toktok")
    fake._encoding = lambda name: _Tokenizer()  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "toktok", fake)
    batch = _toktok_batch("cl100k_base")
    assert batch is not None
    assert [a.tolist() for a in batch(["ab", "", "c", ""])] == [[97, 98], [], [99], []]  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "toktok", None)
    assert _toktok_batch("cl100k_base") is None


def test_latency_rows_time_a_librarys_variants_in_separate_passes() -> None:
    """No two functions of one library are timed on the same text in the same pass (the second
    would find the first's caches warm: ``library_passes``); each row pairs the subject with one
    contestant timed in the same pass, so every contestant still gets its row."""
    from tokspec.app.bench.latency import library_passes

    assert library_passes(["tiktoken encode_ordinary", "toktok-rs", "toktok-rs numpy", "quicktok-v1"]) == [
        ["tiktoken encode_ordinary", "toktok-rs", "quicktok-v1"], ["toktok-rs numpy"]]
    assert library_passes(["a x", "a y", "a z", "b"]) == [["a x", "b"], ["a y"], ["a z"]]
    texts = ["one text", "another text", "a third"]
    log: list[tuple[str, str]] = []  # (function, text) in call order

    def logging(name: str) -> IdsFnLike:
        def fn(text: str) -> list[int]:
            log.append((name, text))
            return [len(text)]
        return fn

    fns = {"subject": logging("subject"), "lib list": logging("lib list"), "lib numpy": logging("lib numpy"),
           "other": logging("other")}
    rows = _latency_rows("lat", "subj", fns, texts, rounds=2)
    assert [r.baseline for r in rows] == ["lib list", "lib list", "lib numpy", "lib numpy", "other", "other"]
    called = {(name, text) for name, text in log}
    assert all((name, t) in called for name in fns for t in texts)
    for i in range(1, len(log)):  # a variant of lib never follows the other on the same text
        (a, text_a), (b, text_b) = log[i - 1], log[i]
        assert not (text_a == text_b and {a, b} == {"lib list", "lib numpy"}), log[i - 1:i + 1]
