"""Kernel calls and buffer sizes of the HF Unigram batch path (``tokspec.fast._unigram_batch``:
``ids_of_texts`` and ``metaspace_ids_batch``), beyond the ids ``tests/test_fast_unigram_batch.py``
checks through ``encode_ids_batch``.

``encode_ids_batch`` hands ``ids_of_texts`` only non-empty texts its normalizer leaves alone, so
what the module promises for other groups is checked here by calling ``ids_of_texts`` itself, as
``DatrieUnigram._identity_group`` does: an empty text has no ids (module docstring), no texts give
no ids arrays. One kernel call a group. The kernel writes every ``id_cuts`` entry itself (text
``t``'s ids are ``ids_out[id_cuts[t]:id_cuts[t + 1]]``, whatever the arrays held before). The
arrays are fresh per group and sized by the callees' documented needs for the group's worst case,
no more (memory goes by the group): ``metaspace_bytes`` needs ``len(marker) * (n + 1)`` bytes of
``out`` and ``n + 2`` cuts for a text of ``n`` bytes; ``encode_pretokens`` needs ``best`` ..
``eid`` of the longest pretoken + 1 (at most the normalized size + 1) and ``ids``/``ts``/``te`` of
the normalized size; the ids of the group, one a normalized byte at most, fit
``len(marker) * (total bytes + texts)``. Kernel calls are seen through a stand-in for the kernel
module (``ids_of_texts`` takes the module as an argument) that calls the real kernel.
"""

from __future__ import annotations

import ast
import functools
import inspect
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from tokspec.fast import _unigram_batch
from tokspec.fast.unigram_datrie import DatrieUnigram, datrie_encoder

#: ``metaspace_ids_batch``'s parameters, in order (the stand-in reads its arguments by these names)
PARAMS = ("data", "text_bounds", "marker", "prepend", "split", "use_hash", "units", "hkeys", "hchild", "hmask",
          "hvalue", "scores", "unk_score", "unk_id", "f32", "last", "reset", "hf", "fuse_unk", "byte_ids",
          "contract", "none", "out", "cuts", "best", "bstart", "bid", "es", "eid", "ids", "ts", "te", "ids_out",
          "id_cuts")
WORK = ("bstart", "bid", "es", "eid", "ids", "ts", "te")

# ASCII, spaces (each one a 3-byte marker), Burmese, characters the vocabulary lacks (byte fallback)
TEXTS = ["hello world", " x ", "a", "  lead and trail  ", "\u1000\u102c\u1004\u103a \u1019\u102c", "\u4e2d\U0001f642",
         "Don't  stop", "q"]


@functools.cache
def engine() -> DatrieUnigram:
    return datrie_encoder("mon-unigram")


class Spy:
    """A kernel module for ``ids_of_texts`` recording each ``metaspace_ids_batch`` call's arrays
    (their sizes and dtypes), after filling the output arrays with junk: the kernel must write
    every entry it hands back."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def metaspace_ids_batch(self, *args: Any) -> None:
        assert len(args) == len(PARAMS)
        named = dict(zip(PARAMS, args))
        self.calls.append({k: (len(v), v.dtype) if isinstance(v, np.ndarray) else v for k, v in named.items()})
        named["ids_out"][:] = -7
        named["id_cuts"][:] = 1 << 40
        _unigram_batch.metaspace_ids_batch(*args)


def group_ids(fast: DatrieUnigram, texts: Sequence[str], bk: Any) -> list[np.ndarray]:
    """``ids_of_texts`` of ``texts`` with kernel module ``bk``, as ``_identity_group`` calls it."""
    plan = fast._identity
    assert plan is not None
    return _unigram_batch.ids_of_texts(bk, [t.encode() for t in texts], plan.marker_bytes, plan.prepend,
                                       plan.split, fast._pretoken_args())


def spied(texts: Sequence[str]) -> dict[str, Any]:
    """The one kernel call of ``ids_of_texts(texts)``; checks the ids against ``encode_ids``."""
    fast, spy = engine(), Spy()
    got = group_ids(fast, texts, spy)
    assert len(spy.calls) == 1  # the whole group in one kernel call
    assert [g.dtype for g in got] == [np.dtype(np.int64)] * len(texts)
    assert [g.tolist() for g in got] == [fast.encode_ids(t).tolist() for t in texts]
    return spy.calls[0]


def test_texts_are_ones_the_identity_plan_applies_to() -> None:
    """Preconditions of the tests below: ``ids_of_texts`` takes texts the normalizer leaves alone;
    :data:`PARAMS` are the kernel's parameters (read from the module's source: the compiled kernel
    and a mutation stage's stand-in do not show them)."""
    tree = ast.parse(inspect.getsource(_unigram_batch))
    defs = {node.name: [a.arg for a in node.args.args] for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)}
    assert tuple(defs.get("metaspace_ids_batch") or defs["x_metaspace_ids_batch__mutmut_orig"]) == PARAMS
    plan = engine()._identity
    assert plan is not None and all(plan.applies(t) for t in TEXTS)
    assert len(plan.marker_bytes) == 3 and plan.prepend and plan.split


@pytest.mark.parametrize("texts", [TEXTS, TEXTS[::-1], ["a"], ["  "], [" " * 40, "b"]],
                         ids=["mixed", "reversed", "one-byte", "spaces", "long-spaces"])
def test_the_kernel_writes_every_id_cut_and_the_ids(texts: list[str]) -> None:
    """Output arrays full of junk before the call: the ids are still each text's ``encode_ids``
    (``id_cuts[0]`` included: the kernel's contract, not ``ids_of_texts``' zeroed array)."""
    spied(texts)


@pytest.mark.parametrize("texts", [["", "ab", ""], [""], ["", ""], ["a b", "", "", " c"]])
def test_an_empty_text_has_no_ids(texts: list[str]) -> None:
    """Module docstring: an empty text has none (an empty input is not run through the normalizer,
    whose prepended marker would be a token)."""
    call = spied(texts)
    assert call["id_cuts"][0] == len(texts) + 1
    got = group_ids(engine(), texts, engine()._bk)
    assert [g.tolist() for g in got] == [engine().encode_ids(t).tolist() for t in texts]
    assert all(len(g) == 0 for g, t in zip(got, texts) if not t)


def test_no_texts_give_no_ids() -> None:
    """``ids_of_texts`` of no texts: an empty list (one ids array per text), the kernel called once."""
    spy = Spy()
    assert group_ids(engine(), [], spy) == []
    assert len(spy.calls) == 1 and spy.calls[0]["id_cuts"][0] == 1
    assert group_ids(engine(), [], engine()._bk) == []


@pytest.mark.parametrize("texts", [TEXTS, ["a"], [" " * 40, "b", ""], [""], ["", ""], []],
                         ids=["mixed", "one-byte", "long-spaces", "empty", "empties", "none"])
def test_arrays_are_sized_by_the_longest_text_and_the_total(texts: list[str]) -> None:
    """The sizes the callees' contracts need for the group's worst case (module docstring, Sizes):
    ``out`` ``len(marker) * (n + 1)`` and ``cuts`` ``n + 2`` for the longest text's ``n`` bytes;
    ``best`` and the seven int64 work arrays one more than ``out`` (the longest pretoken is at most
    the normalized text); ``ids_out`` ``len(marker) * (total + texts)`` (+1 at most);
    ``text_bounds`` and ``id_cuts`` one entry a text plus one; the ids-only ``none`` array empty."""
    call = spied(texts)
    encoded = [t.encode() for t in texts]
    n, ml = max(map(len, encoded), default=0), 3
    assert call["out"] == (ml * (n + 1), np.dtype(np.uint8))
    assert call["cuts"] == (n + 2, np.dtype(np.int64))
    assert call["best"] == (ml * (n + 1) + 1, np.dtype(np.float64))
    assert [call[w] for w in WORK] == [(ml * (n + 1) + 1, np.dtype(np.int64))] * len(WORK)
    need = ml * (sum(map(len, encoded)) + len(texts))
    assert need <= call["ids_out"][0] <= need + 1 and call["ids_out"][1] == np.dtype(np.int64)
    assert call["text_bounds"] == call["id_cuts"] == (len(texts) + 1, np.dtype(np.int64))
    assert call["data"] == (sum(map(len, encoded)), np.dtype(np.uint8))
    assert call["none"] == (0, np.dtype(np.int64))


def test_the_worst_case_fits() -> None:
    """Texts that come nearest the bounds (spaces become 3-byte markers, one token each after a
    first character) in groups of one: the ids still equal ``encode_ids`` (an interpreted kernel
    would raise on a write past an array; the compiled one is checked by the sizes above)."""
    for text in ["a", " ", "a" + " " * 30, " " * 31, "\u4e2d" + " " * 10]:
        spied([text])

