"""``tokspec.fast._prefetch.prefetch`` and the merge kernel's look-ahead that uses it.

Contract: a prefetch never changes a result. Interpreted, it refuses an index outside its array
(a look-ahead slot computed wrongly would be a silent slowdown compiled). Compiled, it runs for
any slot of the array and the kernel's values are those of the same kernel without it.
``bpe_kernel._encode`` prefetches, in order, exactly the lines its probes may read over the first
``_AHEAD_SPAN`` pretokens of a call (none after them): for each
pretoken of 1..12 bytes the piece-table home slot of its bytes (``_piece_table._pack`` and
``_home``, as ``piece_id`` probes), then for each of 1..24 bytes the store set of its bytes
(``_piece_store.store_op``'s), wherever the pretoken's bytes are known ahead (always with a
per-character byte array; in counted mode within the ASCII run ahead) and 16 (24) bytes can be
loaded; and the ids are the compiled kernel's.
"""

from __future__ import annotations

import numpy as np
import pytest
from tokspec import load_engine
from tokspec._interpreted import interpreted_module
from tokspec._jit import JIT_ENABLED, kernel
from tokspec.fast import _bpe_encode, _piece_store, _piece_table
from tokspec.fast import pretok_peek2 as p2
from tokspec.fast._prefetch import prefetch
from tokspec.fast.bpe_kernel import utf8_of_code_points

_NO_ARRAY = np.empty(0, dtype=np.int64)


def test_interpreted_prefetch_checks_the_index() -> None:
    table = np.zeros(8, dtype=np.int64)
    for index in (0, 7):
        assert prefetch(table, index) is None
    for index in (8, -1, 1 << 40):
        with pytest.raises(IndexError, match="outside an array of 8 items"):
            prefetch(table, index)


@kernel
def _sum_with_prefetches(table: np.ndarray, stride: int) -> int:
    total = 0
    for i in range(len(table)):
        prefetch(table, (i * stride) % len(table))
        total += table[i]
    return total


@pytest.mark.skipif(not JIT_ENABLED, reason="the compiled builtin exists only with TOKSPEC_JIT on")
def test_compiled_prefetch_changes_no_value() -> None:
    for dtype in (np.int64, np.int32, np.uint8):
        table = np.arange(1, 1001).astype(dtype)
        want = int(table.astype(np.int64).sum())
        for stride in (1, 7, 64):
            assert _sum_with_prefetches(table, stride) == want  # type: ignore[call-arg]


def _expected_prefetches(data: np.ndarray, b: list[int], tables: tuple[object, ...]) -> list[tuple[str, int]]:
    """The lines the probes of the pretokens with byte bounds ``b[p]..b[p+1]`` read, in order."""
    pieces, store = tables[9], tables[-1]
    assert isinstance(pieces, np.ndarray) and isinstance(store, np.ndarray)
    out = []
    for b0, b1 in zip(b, b[1:]):
        n = b1 - b0
        if 0 < n <= _piece_table.PIECE_MAX and b0 + 16 <= len(data):
            k0, k1 = _piece_table._pack(data, b0, n)
            out.append(("pieces", 2 * int(_piece_table._home(k0, k1, (len(pieces) >> 1) - 1))))
        if 0 < n <= _piece_store.STORE_MAX and b0 + 24 <= len(data):
            words = [int.from_bytes(bytes(data[b0 + 8 * w:min(b0 + 8 * w + 8, b1)]).ljust(8, b"\0"), "little",
                                    signed=True) for w in range(3)]
            out.append(("store", int(_piece_store.store_set(*words, n, (len(store) >> 4) - 1))))
    return out


TEXTS = {
    "ascii": "Don't stop: 12345 ok\r\n    return self.encodings[index] + unbelievably_long_identifier_name\n"
             "The quick brown fox jumps over the lazy dog; internationalization, counterrevolutionaries!\n" * 3,
    "mixed": "caf\u00e9 na\u00efve \u4e2d\u6587\u5b57 ok " + "the internationalization of everything " * 4
             + "\U0001f642 end of the text, with some more words after it.",
}


@pytest.mark.parametrize("name", sorted(TEXTS))
@pytest.mark.parametrize("with_offsets", [False, True], ids=["counted", "cbs"])
@pytest.mark.parametrize("span", [None, 12], ids=["all", "first12"])
def test_encode_prefetches_exactly_the_lines_its_probes_read(name: str, with_offsets: bool, span: int | None,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    text = TEXTS[name]
    bpe = load_engine("fast:cl100k_base").bpe  # type: ignore[attr-defined]
    tables = bpe._tables
    cps = p2.code_points(text)
    starts, ends = p2.spans_of_code_points(cps, "cl100k_base")
    data, cbs = utf8_of_code_points(cps, text.encode())
    plain = interpreted_module(_bpe_encode)
    seen: list[tuple[str, int]] = []

    def record(array: np.ndarray, index: int) -> None:
        prefetch(array, index)  # the interpreted check: inside the array
        seen.append(("pieces" if array is tables[9] else "store" if array is tables[-1] else "?", int(index)))

    monkeypatch.setattr(plain, "prefetch", record)
    if span is not None:
        monkeypatch.setattr(plain, "_AHEAD_SPAN", span)
    args = (data, cbs if with_offsets else _NO_ARRAY, cps, starts, ends, with_offsets, *tables)
    with np.errstate(over="ignore"):  # the copy's hashes wrap in numpy int64
        got = plain._encode(*args)
    assert got.tolist() == _bpe_encode._encode(*args).tolist()
    bounds = [int(cbs[starts[0]])] + [int(cbs[e]) for e in ends]
    assert len(bounds) - 1 > 20
    want = _expected_prefetches(data, bounds if span is None else bounds[:span + 1], tables)
    assert len(want) >= 12 and {kind for kind, _ in want} == {"pieces", "store"}
    if span is not None and not (with_offsets or name == "ascii"):  # the first ``span`` only
        rest = iter(want)
        assert all(any(line == w for w in rest) for line in seen)
    elif with_offsets or name == "ascii":
        assert seen == want
    else:  # counted mode knows bytes ahead only within an ASCII run the kernel has scanned (not
        # while it pauses its scans where non-ASCII is dense): a subsequence, and all of them
        # after the last non-ASCII pretoken (the run to the end, scanned once)
        rest = iter(want)
        assert all(any(line == w for w in rest) for line in seen)
        last = max(p for p in range(len(starts)) if any(c >= 0x80 for c in cps[starts[p]:ends[p]]))
        tail = _expected_prefetches(data, bounds[last + 1:], tables)
        assert len(tail) > 5 and seen[-len(tail):] == tail
