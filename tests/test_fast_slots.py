"""``tokspec.fast._slots``: chunks dealt out in contiguous shares, one per slot (the calling thread
is slot 0), a slot with time to spare taking the last chunks of the slot with most left.

Timing is never relied on: where a test needs the slots to keep pace it makes them (a barrier at
the start of every chunk), where it needs a slot to be slow it keeps that slot's thread busy.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import numpy as np
import pytest

from tokspec import load_engine
from tokspec._jit import JIT_ENABLED
from tokspec.app.bench.fast import chinese_like, english
from tokspec.fast import parallel
from tokspec.fast._slots import Claims, in_slot_thread, slot_executor, slot_map
from tokspec.fast.merge_engines import LoptEncoder
from tokspec.fast.parallel import Runner


def _drain(claims: Claims, slot: int) -> list[int]:
    got = []
    while (k := claims.claim(slot)) is not None:
        got.append(k)
    return got


def test_claims_own_share_front_to_back_then_the_back_of_the_fullest_share() -> None:
    claims = Claims(5, 2)
    assert [list(d) for d in claims.left] == [[0, 1], [2, 3, 4]]
    assert [claims.claim(0), claims.claim(0), claims.claim(0)] == [0, 1, 4]  # 4: slot 1's last
    assert _drain(claims, 1) == [2, 3] and claims.claim(0) is None and claims.claim(1) is None
    claims = Claims(9, 3)
    assert _drain(claims, 2) == [6, 7, 8, 2, 5, 1, 4, 0, 3]  # always the fullest share's last
    assert Claims(1, 1).claim(0) == 0 and Claims(0, 1).claim(0) is None


@pytest.mark.parametrize("n, slots", [(1, 1), (2, 2), (7, 2), (7, 3), (4, 4), (100, 3)])
def test_claims_hand_out_every_chunk_exactly_once(n: int, slots: int) -> None:
    claims = Claims(n, slots)
    got = [k for j in range(slots) for k in _drain(claims, j)]
    assert sorted(got) == list(range(n))


def _paced(parties: int, seen: dict[str, int]) -> Callable[[str], int]:
    """work(text) -> len(text), after all ``parties`` slots have reached the start of a chunk."""
    barrier = threading.Barrier(parties, timeout=20)
    lock = threading.Lock()

    def work(text: str) -> int:
        barrier.wait()
        with lock:
            seen[text] = threading.get_ident()
        return len(text)
    return work


@pytest.mark.parametrize("workers", [2, 3])
def test_slots_keeping_pace_encode_their_own_share_on_every_call(workers: int) -> None:
    texts = ["x" * (k + 1) for k in range(2 * workers)]
    runs = []
    for _ in range(3):
        seen: dict[str, int] = {}
        ran_on: list[int] = []
        assert slot_map(_paced(workers, seen), texts, workers, ran_on) == [k + 1 for k in range(2 * workers)]
        assert ran_on == [k // 2 for k in range(2 * workers)]  # slot j: chunks 2j, 2j + 1
        runs.append(seen)
    assert runs[0] == runs[1] == runs[2]  # the same thread for the same chunk, call after call
    assert runs[0][texts[0]] == runs[0][texts[1]] == threading.get_ident()
    assert len({runs[0][t] for t in texts}) == workers


def test_a_busy_slot_does_not_hold_up_the_call_the_caller_takes_its_share() -> None:
    go = threading.Event()
    busy = slot_executor(1).submit(go.wait, 20)
    try:
        ran_on: list[int] = []
        assert slot_map(len, ["a", "bb", "ccc", "dddd"], 2, ran_on) == [1, 2, 3, 4]
        assert ran_on == [0, 0, 0, 0]
    finally:
        go.set()
        busy.result()


class _Failing:
    def __call__(self, text: str) -> int:
        if text.startswith("bad"):
            raise ValueError(text)
        return len(text)


@pytest.mark.parametrize("texts, first", [(["ok", "bad1", "bad2", "ok"], "bad1"), (["bad0", "bad1", "ok"], "bad0"),
                                          (["ok", "ok", "ok", "bad3"], "bad3"), (["ok", "ok", "bad2", "bad3"], "bad2")])
def test_the_first_exception_in_input_order_is_raised(texts: list[str], first: str) -> None:
    with pytest.raises(ValueError, match=f"^{first}$"):
        slot_map(_Failing(), texts, 2)


def test_a_slot_thread_calling_runner_ids_encodes_serially_on_itself() -> None:
    engine = load_engine("fast:cl100k_base")
    texts = ["one two", "three four", "five"]
    want = [engine.encode_ids(t).tolist() for t in texts]  # type: ignore[attr-defined]

    def nested() -> tuple[bool, list[list[int]]]:
        return in_slot_thread(), [a.tolist() for a in Runner("threads", 2).ids(engine, texts)]

    assert not in_slot_thread()
    assert slot_executor(1).submit(nested).result(timeout=20) == (True, want)  # no wait on itself
    got = slot_map(lambda t: [a.tolist() for a in Runner("threads", 2).ids(engine, [t, t])], texts, 2)
    assert got == [[w, w] for w in want]  # nested from the calling thread and from slot 1


@pytest.mark.skipif(not JIT_ENABLED, reason="interpreted kernels (mutation testing) take minutes on 2.8 MB; "
                    "tox -e py runs this compiled, and the tests above check the slots without an engine")
def test_lopt_ids_from_many_threads_at_once_equal_serial() -> None:
    # the slots are shared by every runner and calling thread: each slot's thread runs one chunk at
    # a time, so a store of merged pieces is only ever used by its own thread
    from concurrent.futures import ThreadPoolExecutor
    inner = load_engine("fast:cl100k_base")
    texts = [english(300_000, seed=s) + chinese_like(150_000, seed=s) for s in range(4)]
    want = [inner.encode_ids(t).tolist() for t in texts]  # type: ignore[attr-defined]
    lopt = LoptEncoder(inner, runner=Runner("threads", 2))
    assert len(parallel.ids_split(texts[0], 2)[1]) >= 3  # 4 chunks or more: both slots, spares
    with ThreadPoolExecutor(4) as callers:
        got = list(callers.map(lambda t: lopt.encode_ids(t).tolist(), texts * 2))  # type: ignore[attr-defined]
    assert got == want * 2


def test_shutdown_stops_the_slots_and_a_later_call_starts_them_again() -> None:
    first = slot_executor(1)
    parallel.shutdown()
    with pytest.raises(RuntimeError):
        first.submit(len, "a")
    assert slot_map(len, ["a", "bb"], 2) == [1, 2] and slot_executor(1) is not first
    assert np.array_equal(np.asarray(slot_map(len, ["abc"], 4)), [3])
