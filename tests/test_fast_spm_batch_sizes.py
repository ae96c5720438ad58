"""Buffer sizes and kernel calls of the sentencepiece batch path (``tokspec.fast._spm_ids``:
``spm_ids_batch`` and ``ids_of_texts``), beyond the ids ``tests/test_fast_spm_batch.py`` checks.

A regrow repairs any undersized buffer, so the ids stay right whatever the sizing; what the sizing
promises is the rest. The kernel reports what a text needs (``state``) and fills an ids array to
its last slot. A fresh group of ASCII texts is one kernel call (the first guesses cover an ASCII
text's worst case: a token a byte plus the dummy prefix's for the ids). The batch and
``encode_ids`` size the per-thread work buffers alike, so each reuses what the other allocated. A
work-buffer regrow takes what the text needs or doubles; an ids regrow keeps what is done and grows
for the text that did not fit plus the rest's first guess (the rule a fresh call uses), or doubles,
whichever is larger: the rest of an ASCII batch then fits, calls stay logarithmic, and memory is
one of the two. Kernel calls are counted by a stand-in for the kernel module (``ids_of_texts``
takes the module as an argument) that calls the real kernel.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import pytest

from tokspec.fast import _spm_ids
from tokspec.fast.unigram_datrie import datrie_encoder
from tokspec.formats.models import trained_model

from test_fast_spm_batch import engine

KIND = "spm-unigram-bytes"  # byte fallback: U+FDFA (3 bytes) normalizes to 42 bytes and 34 tokens
EXPANDS = "\ufdfa"
DENSE = ["}{|", "zq", "q", "~"]  # ASCII texts of one token a byte plus the dummy prefix's: the ids' worst case


class Call(NamedTuple):
    first: int  # the text the call started from
    capacity: int  # the work buffers' (len(out))
    ids_size: int  # the ids array's
    stop: int  # state after the call: the text that did not fit (len(texts): all done) ...
    work_need: int  # ... the size the work buffers need, else 0
    ids_need: int  # ... the size the ids array needs, else 0


class Spy:
    """A kernel module for ``ids_of_texts`` recording each ``spm_ids_batch`` call."""

    def __init__(self) -> None:
        self.calls: list[Call] = []

    def spm_ids_batch(self, *args: np.ndarray) -> None:
        first, out, ids, state = int(args[2]), args[8], args[11], args[13]  # type: ignore[call-overload]
        _spm_ids.spm_ids_batch(*args)  # type: ignore[arg-type]
        self.calls.append(Call(first, len(out), len(ids), *map(int, state)))


class _Stop(Exception):
    pass


class Probe:
    """A kernel module that records the ids array's size of the first call, then stops."""

    size = -1

    def spm_ids_batch(self, *args: np.ndarray) -> None:
        self.size = len(args[11])
        raise _Stop


def first_guess(texts: Sequence[str]) -> int:
    """The size of the ids array ``ids_of_texts`` starts with for ``texts`` alone."""
    probe = Probe()
    with pytest.raises(_Stop):
        _spm_ids.ids_of_texts(probe, [t.encode() for t in texts], engine(KIND)._spm_model, None)
    return probe.size


def run(texts: Sequence[str], bufs: _spm_ids.IdsBuffers | None = None) -> tuple[list[Call], _spm_ids.IdsBuffers]:
    """``ids_of_texts`` of ``texts`` through a :class:`Spy`; checks the ids against ``encode_ids``."""
    fast, spy = engine(KIND), Spy()
    with np.errstate(over="ignore"):  # interpreted float32 sums
        got, bufs = _spm_ids.ids_of_texts(spy, [t.encode() for t in texts], fast._spm_model, bufs)
    assert [g.tolist() for g in got] == [fast.encode_ids(t).tolist() for t in texts]
    assert spy.calls and spy.calls[-1].stop == len(texts)
    return spy.calls, bufs


def check_regrows(texts: Sequence[str], calls: list[Call]) -> None:
    """Each call after the first goes on from the text that did not fit, with only the buffer that
    overflowed grown: the work buffers to the need or twice their size, whichever is larger; the ids
    array (what is done kept) to twice its size or to the need through that text plus the first
    guess a fresh call makes for the texts after it with that text counted as empty (its own need
    is already in), whichever is larger."""
    for call, after in zip(calls, calls[1:]):
        assert after.first == call.stop < len(texts)
        if call.work_need:
            assert after.capacity == max(call.work_need, 2 * call.capacity)
            assert after.ids_size == call.ids_size
        else:
            assert call.ids_need > call.ids_size
            rest = ["", *texts[call.stop + 1:]]
            assert after.ids_size == max(2 * call.ids_size, call.ids_need + first_guess(rest))
            assert after.capacity == call.capacity


def kernel_args(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """``spm_ids_batch``'s ``data`` and ``bounds`` for ``texts``."""
    encoded = [t.encode() for t in texts]
    bounds = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(e) for e in encoded], out=bounds[1:])
    return np.frombuffer(bytearray(b"".join(encoded)), dtype=np.uint8), bounds


def test_kernel_reports_what_the_text_needs_and_goes_on_from_it() -> None:
    """A text that outgrows the work buffers stops the kernel with ``state`` = (its index, the size
    ``spm_ids`` asks for, 0). When only the lattice is short (``out`` holds the normalized text),
    that size is the normalized size itself: a lattice of ``3 * (size + 1)`` entries and ``size + 1``
    ids take the text, one entry fewer do not. Called again from that text with buffers that fit,
    the kernel finishes the batch with ``encode_ids``' ids."""
    fast = engine(KIND)
    model = fast._spm_model
    texts = ["ab", EXPANDS * 20, "cd"]
    raw = texts[1].encode()
    size = len(fast.normalized(texts[1], alignment=False)[0])
    data, bounds = kernel_args(texts)
    ids, cuts, state = np.empty(4096, dtype=np.int64), np.zeros(4, dtype=np.int64), np.zeros(3, dtype=np.int64)
    small = _spm_ids.IdsBuffers(3 * len(raw) + 8, model)
    assert small.capacity < size
    _spm_ids.spm_ids_batch(data, bounds, 0, *small.args, ids, cuts, state)  # out too short: the normalizer's ask
    assert state.tolist() == [1, -1 - _spm_ids.spm_ids(raw, *small.args), 0]
    assert state[1] > small.capacity

    def work(lat: int, tmp: int) -> tuple[object, ...]:  # out with room to spare, lattice and ids as asked
        out = np.empty(4 * size, dtype=np.uint8)
        return (*model, out, np.empty(lat, dtype=np.int32), np.empty(tmp, dtype=np.int64))

    _spm_ids.spm_ids_batch(data, bounds, 0, *work(3 * 16, 16), ids, cuts, state)
    assert state.tolist() == [1, size, 0]
    assert _spm_ids.spm_ids(raw, *work(3 * (size + 1), size + 1)) >= 0
    assert _spm_ids.spm_ids(raw, *work(3 * size, size + 1)) < 0
    assert _spm_ids.spm_ids(raw, *work(3 * (size + 1), size)) < 0
    _spm_ids.spm_ids_batch(data, bounds, 1, *work(3 * (size + 1), size + 1), ids, cuts, state)
    assert state[0] == len(texts)
    assert [ids[cuts[t]:cuts[t + 1]].tolist() for t in range(3)] == [fast.encode_ids(t).tolist() for t in texts]


def test_kernel_fills_an_ids_array_of_exactly_the_needed_size() -> None:
    """An ids array as long as all the texts' tokens together is filled in one call; one slot
    shorter, the kernel stops at the last text and reports the exact total it needs."""
    fast = engine(KIND)
    texts = ["hello world", EXPANDS, "", "a b"]
    want = [fast.encode_ids(t).tolist() for t in texts]
    total = sum(map(len, want))
    data, bounds = kernel_args(texts)
    bufs = _spm_ids.IdsBuffers(1024, fast._spm_model)
    for size, stop in ((total, len(texts)), (total - 1, len(texts) - 1)):
        ids, cuts, state = np.empty(size, dtype=np.int64), np.zeros(5, dtype=np.int64), np.zeros(3, dtype=np.int64)
        _spm_ids.spm_ids_batch(data, bounds, 0, *bufs.args, ids, cuts, state)
        assert state.tolist() == [stop, 0, 0 if stop == len(texts) else total]
        assert [ids[cuts[t]:cuts[t + 1]].tolist() for t in range(stop)] == want[:stop]


@pytest.mark.parametrize("texts", [[""], ["q"], ["", "q", ""], [*DENSE, ""] * 40, ["  "] * 3,
                                   [" " * 50, "a"]], ids=["empty", "one", "empties", "dense", "spaces", "long-spaces"])
def test_a_fresh_group_of_ascii_texts_takes_one_kernel_call(texts: list[str]) -> None:
    """Fresh buffers (none passed) sized by the first guesses hold any ASCII group: one kernel call,
    even when every text has as many tokens as bytes plus one (the dummy prefix)."""
    calls, _ = run(texts)
    assert [c.first for c in calls] == [0]


def test_dense_texts_have_a_token_a_byte_plus_the_dummy_prefix() -> None:
    """Precondition of the "dense" cases above and below: these ASCII texts are the ids array's
    worst case (as many tokens as bytes, plus one for the dummy prefix's ``\u2581``)."""
    fast = engine(KIND)
    assert [len(fast.encode_ids(t)) for t in DENSE] == [len(t) + 1 for t in DENSE]


@pytest.mark.parametrize("texts", [["hello world", "", "x y", "Don't stop"], ["", ""], ["a"]])
def test_the_batch_and_encode_ids_reuse_each_others_work_buffers(texts: list[str]) -> None:
    """The per-thread work buffers are shared by ``encode_ids`` and the batch and sized alike (for
    the longest text's ASCII worst case): after ``encode_ids`` of the longest text a batch of
    ASCII texts keeps them, and after such a batch ``encode_ids`` of its longest text does too."""
    longest = max(texts, key=lambda t: len(t.encode()))
    fast = datrie_encoder(str(trained_model(KIND)))
    fast.encode_ids(longest)
    bufs = fast._work.spm_ids
    assert [g.tolist() for g in fast.encode_ids_batch(texts)] == [fast.encode_ids(t).tolist() for t in texts]
    assert fast._work.spm_ids is bufs
    fresh = datrie_encoder(str(trained_model(KIND)))
    fresh.encode_ids_batch(texts)
    bufs = fresh._work.spm_ids
    fresh.encode_ids(longest)
    assert fresh._work.spm_ids is bufs


def test_no_texts_give_no_ids() -> None:
    """``ids_of_texts`` of no texts is an empty list (its contract: one ids array per text)."""
    got, bufs = _spm_ids.ids_of_texts(_spm_ids, [], engine(KIND)._spm_model, None)
    assert got == [] and bufs.capacity >= 0


def test_work_buffers_grow_to_the_need_or_double() -> None:
    """Texts that expand more and more (k copies of U+FDFA): each work-buffer regrow takes the
    text's need or twice the old size, whichever is larger, so there are a few regrows (geometric)
    rather than one a text, and the buffers end within twice the largest need."""
    texts = [EXPANDS * k for k in range(1, 41)]
    calls, bufs = run(texts)
    check_regrows(texts, calls)
    regrows = [c for c in calls if c.work_need]
    largest = len(engine(KIND).normalized(texts[-1], alignment=False)[0])
    assert 2 <= len(regrows) <= 4
    assert largest <= bufs.capacity <= 2 * largest


@pytest.mark.parametrize("where", ["first", "middle", "last"])
def test_ids_array_grows_for_the_text_and_the_rests_first_guess(where: str) -> None:
    """A text whose ids outgrow the array by far (the guess, not doubling, decides the new size),
    first, in the middle or last: the array grows for what is done through that text plus the rest's
    first guess (:func:`check_regrows`), and the dense ASCII rest then fits: two calls."""
    big, rest = EXPANDS * 10, DENSE * 5
    texts = {"first": [big, *rest], "middle": ["ab", big, *rest], "last": [*rest, big]}[where]
    calls, _ = run(texts, _spm_ids.IdsBuffers(4096, engine(KIND)._spm_model))  # no work regrow
    check_regrows(texts, calls)
    assert len(calls) == 2 and calls[0].ids_need
    assert calls[1].ids_size > 2 * calls[0].ids_size  # the guess decided, not doubling


def test_ids_array_doubles_when_the_overflow_is_small() -> None:
    """A text whose ids just overflow the array: it doubles (the guess for this text and the rest
    would be smaller), so a batch of many such texts takes a logarithmic number of calls."""
    texts = [*DENSE * 5, EXPANDS]
    calls, _ = run(texts, _spm_ids.IdsBuffers(4096, engine(KIND)._spm_model))
    check_regrows(texts, calls)
    assert len(calls) == 2 and calls[1].ids_size == 2 * calls[0].ids_size
    many = [*DENSE * 5, *[EXPANDS] * 60]
    calls, _ = run(many, _spm_ids.IdsBuffers(4096, engine(KIND)._spm_model))
    check_regrows(many, calls)
    assert len(calls) <= 1 + 7  # 60 * 34 ids from a first guess of about 100: log2(20) ~ 4.4 doublings
