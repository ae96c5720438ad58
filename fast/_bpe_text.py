"""``encode_ids`` of the ``fast:`` BPE engines with nothing between the two kernel calls.

Why: on a 0.5-2 KB text the fixed cost of ``FastBpeEncoder.encode_ids`` was about 7.5 us before
any pretoken was encoded (issue 29): besides the two kernel calls, Python looked up the category
and fold tables, checked the pattern, sliced and wrapped arrays and entered ``np.errstate`` on every
call. Here the engine fixes the Peek2 kernel and its arguments once (``pretok_peek2.kernel_args``)
and :func:`ids_of_text` makes the two calls directly: Peek2 into two span arrays, then
``bpe_kernel._encode`` over them, counting byte positions from the code points.

Nothing new is computed: the same two kernels run in the same order on the same arrays as
``spans_of_code_points`` then ``CompiledBPE.encode_text_ids(..., contiguous=True)`` (Peek2's spans
are contiguous from character 0). Theorems relied on: those of ``pretok_peek2`` (pretokenizer
exactness) and ``bpe_kernel`` (BPE exactness); ``tests/test_fast_bpe_text.py`` checks this path
against the two-step one, ``encode_arrays`` and tiktoken. The kernels get the argument types
their other callers give them, so each keeps its one compiled version. (A single kernel calling
both was tried: 0.3 us faster per call, but numba optimizes the callees again inside it, which
doubled the compile time of a first use with an empty cache, 5.6 -> 11.6 s CPU.) The engine calls
through :func:`ids_function`: after its first call, the two kernels' machine-code entries directly,
without the dispatcher's typing of 24 arguments (``tokspec._jit.entry_point``; the same compiled
versions, so the same ids).

Thread safety: everything written is allocated by the call (the shared pair-validity memo takes
whole-word writes only, see ``_bpe_probe._valid``). O(n) beyond the merge's own cost.
Out of scope: offsets (``CompiledBPE.encode_text``), spans that are not Peek2's.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from tokspec._jit import JIT_ENABLED, entry_point
from tokspec.fast.bpe_kernel import CompiledBPE, _encode

__all__ = ["ids_of_text", "ids_function", "SPANS_KEPT"]

_NO_CBS = np.empty(0, dtype=np.int64)  # _encode counts byte positions from the code points
_I64 = np.dtype(np.int64)  # a dtype object: numpy converts a type object on every call
#: characters: span arrays up to this size are kept by a thread between calls (``ids_function``)
SPANS_KEPT = 1 << 14
_SPANS_FIRST = 4096  # the size of a thread's first span arrays (texts of a few KB reuse them)


def ids_of_text(data: np.ndarray, cps: np.ndarray, peek2: Callable[..., int], peek2_args: tuple[Any, ...],
                tables: tuple[Any, ...]) -> np.ndarray:
    """Token ids (int64) of the text with read-only UTF-8 bytes ``data`` and code points ``cps``:
    its Peek2 spans (``peek2(cps, *peek2_args, starts, ends)``, from ``kernel_args``), each
    encoded by ``_encode`` with ``tables`` (``CompiledBPE._tables``). Interpreted kernels run
    under ``np.errstate(over="ignore")`` (the hashes wrap in numpy int64 as they do compiled)."""
    n = len(cps)
    starts = np.empty(n, _I64)
    ends = np.empty(n, _I64)
    if JIT_ENABLED:
        count = peek2(cps, *peek2_args, starts, ends)
        ids: np.ndarray = _encode(data, _NO_CBS, cps, starts[:count], ends[:count], False, *tables)
        return ids
    with np.errstate(over="ignore"):
        count = peek2(cps, *peek2_args, starts, ends)
        ids = _encode(data, _NO_CBS, cps, starts[:count], ends[:count], False, *tables)
        return ids


def ids_function(peek2: Callable[..., int], peek2_args: tuple[Any, ...],
                 bpe: CompiledBPE) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """``ids(data, cps)`` = :func:`ids_of_text` with these Peek2 arguments and ``bpe._tables``,
    for the caller's ``data`` (UTF-8 bytes, read-only uint8 array: ``np.frombuffer`` of a
    ``bytes``) and ``cps`` (``code_points``: a read-only uint32 array).

    The first call goes through the kernels' dispatchers (which compile or load them); the later
    ones call the machine code of those same versions directly (``tokspec._jit.entry_point``),
    which skips the typing of 24 arguments per call (about 0.45 us). Safe because every argument's
    type is fixed: ``starts``/``ends`` are made here, the tables and Peek2's arguments are fixed
    per engine (the per-thread store is always ``new_store()``'s), and the caller's two arrays are
    built the same way on every call.

    Peek2 writes its spans into arrays of the calling thread kept between calls (two
    ``np.empty`` less per call, about 0.15 us; :data:`SPANS_KEPT` characters at most, so a thread
    keeps at most 2 x 8 x SPANS_KEPT bytes): nothing read after a call points into them (``_encode``
    returns a new array). A call takes them off the thread's list while it uses them, so a
    re-entrant call on the same thread (a signal handler) finds none and makes its own.
    """
    direct: tuple[Callable[..., int], Callable[..., np.ndarray]] | None = None  # the two entries
    local = threading.local()  # per thread: (bpe._tables, [at most one spare (starts, ends)])

    def ids(data: np.ndarray, cps: np.ndarray) -> np.ndarray:
        nonlocal direct
        try:
            tables, spare = local.state
        except AttributeError:
            tables, spare = local.state = (bpe._tables, [])
        if direct is not None:
            n = len(cps)
            spans = spare.pop() if spare else None
            if spans is None or len(spans[0]) < n:
                size = max(n, _SPANS_FIRST)
                spans = (np.empty(size, _I64), np.empty(size, _I64))
            starts, ends = spans
            try:
                count = direct[0](cps, *peek2_args, starts, ends)
                return direct[1](data, _NO_CBS, cps, starts[:count], ends[:count], False, *tables)
            finally:
                if len(starts) <= SPANS_KEPT and not spare:
                    spare.append(spans)
        out = ids_of_text(data, cps, peek2, peek2_args, tables)
        spans_type = np.empty(0, _I64)  # the type of starts[:count] and ends[:count]
        peek2_entry = entry_point(peek2, (cps, *peek2_args, spans_type, spans_type))
        encode_entry = entry_point(_encode, (data, _NO_CBS, cps, spans_type, spans_type, False, *tables))
        if peek2_entry is not None and encode_entry is not None:
            direct = (peek2_entry, encode_entry)
        return out

    return ids
