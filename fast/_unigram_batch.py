"""``encode_ids`` of many texts in one kernel call: HF Unigram pipelines whose normalizer leaves
the texts alone (``tokspec.fast._hf_identity``: ``fast:mon-unigram`` on most text).

Why: text by text, such a text costs two kernel calls (``_metaspace.metaspace_bytes``, then
``_unigram_emit.encode_pretokens``) and the Python around them, and each call hands the GIL back;
on texts of 0.5-2 KB two threads ran slower than one (bench latency, stop 50: 38.8 vs 35.7 ms for
1000 texts). :func:`metaspace_ids_batch` runs both kernels for every text of a group in one
compiled loop, so a thread holds the GIL once per group.

What: for each text, exactly the ids-only path of ``DatrieUnigram.encode_ids`` on that text alone
(the same two kernels, the same arguments, the text's own buffers' contents), its ids copied out
one after another; an empty text has none. Nothing is computed across texts, so no theorem beyond
the per-text path's own is relied on. Checked by ``tests/test_fast_unigram_batch.py`` against
``encode_ids`` text by text and HF ``tokenizers``.

Sizes: the work arrays are sized by the longest text of the group (its normalized form is at most
``len(marker) * (bytes + 1)`` bytes, a token at least one byte), so nothing overflows; the ids
array by the group's total. Only texts shorter than :data:`BATCH_TEXT_MAX` characters are taken
(the engine encodes longer ones alone): batching pays on short texts, and the work arrays stay
small. Out of scope: texts the normalizer changes (the engine encodes those one by one), offsets.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from tokspec._jit import kernel
from tokspec._types import check_text
from tokspec.fast._metaspace import metaspace_bytes
from tokspec.fast._unigram_emit import encode_pretokens

__all__ = ["BATCH_BYTES", "BATCH_TEXT_MAX", "in_groups", "metaspace_ids_batch", "ids_of_texts"]

#: texts go to a group kernel call in groups of at most this many UTF-8 bytes (one longer text: a
#: group of its own): the arrays of a group take about 25 bytes a byte (the joined text, ids as
#: int64 for up to ``len(marker)`` tokens a byte), so memory goes by the group, not the batch
BATCH_BYTES = 1 << 20

#: characters: a longer text goes through ``encode_ids`` alone, whose per-thread buffers are reused
#: and sized by its normalized form; the group's fresh work arrays are sized by the worst case of
#: the longest text (8 arrays of ``len(marker) * (bytes + 1) + 1`` entries: 190 MB for a 1 MiB text)
BATCH_TEXT_MAX = 1 << 15


@kernel
def metaspace_ids_batch(data: np.ndarray, text_bounds: np.ndarray, marker: np.ndarray, prepend: bool,
                        split: bool, use_hash: bool, units: np.ndarray, hkeys: np.ndarray, hchild: np.ndarray,
                        hmask: int, hvalue: np.ndarray, scores: np.ndarray, unk_score: float, unk_id: int,
                        f32: bool, last: bool, reset: float, hf: bool, fuse_unk: bool, byte_ids: np.ndarray,
                        contract: bool, none: np.ndarray, out: np.ndarray, cuts: np.ndarray, best: np.ndarray,
                        bstart: np.ndarray, bid: np.ndarray, es: np.ndarray, eid: np.ndarray, ids: np.ndarray,
                        ts: np.ndarray, te: np.ndarray, ids_out: np.ndarray, id_cuts: np.ndarray) -> None:
    """Text ``t`` is ``data[text_bounds[t]:text_bounds[t + 1]]`` (UTF-8); its ids become
    ``ids_out[id_cuts[t]:id_cuts[t + 1]]``. Per text: ``metaspace_bytes`` into ``out``/``cuts``,
    then ``encode_pretokens`` (ids only: ``none`` for the alignment and ``cob`` arrays) with the
    work arrays ``best`` .. ``te``; the model's arguments as ``encode_pretokens`` takes them."""
    pos = 0
    id_cuts[0] = 0
    for t in range(len(text_bounds) - 1):
        lo = text_bounds[t]
        hi = text_bounds[t + 1]
        if hi > lo:
            k, b = metaspace_bytes(data[lo:hi], marker, prepend, split, out, cuts)
            m = encode_pretokens(out[:k], cuts[:b], use_hash, units, hkeys, hchild, hmask, hvalue, scores,
                                 unk_score, unk_id, f32, last, reset, hf, fuse_unk, byte_ids, contract,
                                 none, none, none, none, best, bstart, bid, es, eid, ids, ts, te, none, False)
            ids_out[pos:pos + m] = ids[:m]
            pos += m
        id_cuts[t + 1] = pos


def in_groups(texts: Sequence[str], fused: Callable[[str], bool], run_group: Callable[[list[bytes]], list[np.ndarray]],
              one: Callable[[str], np.ndarray], limit: int) -> list[np.ndarray]:
    """``[one(t) for t in texts]`` where the texts ``fused`` accepts go, UTF-8 encoded, to
    ``run_group`` in groups of at most ``limit`` bytes (a longer text alone), in order; the others
    to ``one``. A text with a lone surrogate raises what ``one`` raises for it (``check_text``)."""
    out: list[np.ndarray | None] = [None] * len(texts)
    where: list[int] = []
    group: list[bytes] = []
    size = 0

    def flush() -> None:
        for i, ids in zip(where, run_group(group)):
            out[i] = ids
        where.clear()
        group.clear()

    for i, text in enumerate(texts):
        if not fused(text):
            out[i] = one(text)
            continue
        try:
            data = str.encode(text)  # not text.encode: a str subclass cannot hand the kernel other bytes
        except UnicodeEncodeError:
            check_text(text)  # raises InvalidTextError
            raise
        if group and size + len(data) > limit:
            flush()
            size = 0
        where.append(i)
        group.append(data)
        size += len(data)
    if group:
        flush()
    return out  # type: ignore[return-value]  # every entry set above


def ids_of_texts(bk: Any, encoded: Sequence[bytes], marker: np.ndarray, prepend: bool, split: bool,
                 model: tuple[Any, ...]) -> list[np.ndarray]:
    """The ids of each UTF-8 text of ``encoded`` (each one the identity plan applies to) by
    :func:`metaspace_ids_batch` of module ``bk`` (this module or its interpreted copy); ``model``:
    ``encode_pretokens``' arguments from ``use_hash`` to ``contract``. Views of one array."""
    lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
    text_bounds = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum(lengths, out=text_bounds[1:])
    data = np.frombuffer(bytearray(b"".join(encoded)), dtype=np.uint8)
    ml = len(marker)
    longest_raw = int(lengths.max(initial=0))
    longest = ml * (longest_raw + 1)  # normalized bytes of the longest text, at most
    out = np.empty(longest, dtype=np.uint8)
    cuts = np.empty(longest_raw + 2, dtype=np.int64)
    best = np.empty(longest + 1, dtype=np.float64)
    work = [np.empty(longest + 1, dtype=np.int64) for _ in range(7)]  # bstart, bid, es, eid, ids, ts, te
    ids_out = np.empty(ml * (len(data) + len(encoded)) + 1, dtype=np.int64)
    id_cuts = np.zeros(len(encoded) + 1, dtype=np.int64)
    none = np.zeros(0, dtype=np.int64)
    with np.errstate(over="ignore"):  # interpreted: a hash past int64 wraps as compiled (no real trie's does)
        bk.metaspace_ids_batch(data, text_bounds, marker, prepend, split, *model, none, out, cuts, best, *work,
                               ids_out, id_cuts)
    return [ids_out[id_cuts[t]:id_cuts[t + 1]] for t in range(len(encoded))]
