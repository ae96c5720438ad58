"""The floor of a fused ASCII path: cl100k's Peek2 scan and the two lookups in ONE loop over bytes.

Issue 29's measurement, kept for its next step. ``fast:``'s ``encode_ids`` runs three passes with
arrays between them: the text to code points and UTF-8 (``_text_arrays``), Peek2 writing every
pretoken's span (``pretok_peek2``), and the merge kernel reading the spans back and probing the
whole-piece table and the per-thread store (``_bpe_encode``). toktok-rs runs one loop over the
UTF-8 bytes for ASCII text that finds a pretoken's end and looks it up at once (its
``docs/DEVELOPMENT.md``: "single-pass product machines"). This script measures what that shape
costs in numba: a kernel that scans ASCII bytes with cl100k's Peek2 rules (the branches of
``pretok_peek2._cl100k_kernel`` on a 128-entry category table) and, for each pretoken, probes the
engine's own whole-piece table and then its store, as ``_encode`` does. A pretoken found in
neither is counted, not merged: the figure is the floor of the hit path (on repeated text, where
the store is warm, well under 1% of pretokens), not an encoder.

Printed per text (1 MB of ASCII English and of code, each encoded once by ``fast:`` first to warm
the store): the misses, whether the ids of every pretoken that hit equal ``encode_ids``' (checked
by skipping the misses' ids there), and ns/B, best of 7, interleaved, each call on a new copy of
the text, for the fused loop (with ``str.encode`` and its output array), ``fast:``'s
``encode_ids``, and toktok-rs ``encode_to_numpy`` when installed. Measured on the 2-core VM
(2026-11-28): English 2.6 / 5.3 / 3.3 ns/B, code 3.5 / 6.4 / 3.6. A developer's tool, not run by
the tests or CI; nothing in the package imports it.

usage: python scripts/fused_floor.py
"""

from __future__ import annotations

import time

import numpy as np

from tokspec import load_engine
from tokspec._jit import kernel
from tokspec.app.bench import fresh_copy
from tokspec.app.bench.fast import code, english
from tokspec.fast._bits import trailing_zeros64
from tokspec.fast._le_load import load_le64
from tokspec.fast._piece_store import store_set, store_words
from tokspec.fast._piece_table import _KEY_BITS, _KEY_MASK, _home, _key_of_words
from tokspec.fast.pretok_peek2 import CL100K_TABLE, _branch_array, cl100k_category_table

_LETTER = 4 * 0x0101010101010101  # the letter category in every byte (pretok_peek2's letters run)
_SEVEN_BYTES = 0x00FFFFFFFFFFFFFF
_SEVEN_LOW7 = 0x007F7F7F7F7F7F7F
_SEVEN_TOPS = 0x0080808080808080
_KB = _KEY_BITS
_KM = _KEY_MASK


@kernel
def fused_hits(data: np.ndarray, table128: np.ndarray, branch: np.ndarray, pieces: np.ndarray,
               store: np.ndarray, out: np.ndarray, missed: np.ndarray) -> int:
    """Ids of the pretokens of the ASCII bytes ``data`` found whole or in the store, into ``out``;
    ``missed[p]`` = 1 for each pretoken ``p`` found in neither (its ids left out). Returns the count."""
    n = len(data)
    cat = np.empty(n + 8, dtype=np.uint8)
    for k in range(n):
        cat[k] = table128[data[k]]
    for k in range(n, n + 8):
        cat[k] = 3  # end of text: CR/LF's category, as in pretok_peek2
    piece_mask = (len(pieces) >> 1) - 1
    store_mask = (len(store) >> 4) - 1
    count = 0
    p = 0
    i = 0
    while i < n:
        b = branch[cat[i] * 7 + cat[i + 1]]
        j = -1
        if b == 0:  # contraction: an ASCII letter folds by | 0x20, nothing else reaches s d m t l v r e
            f1 = data[i + 1] | 0x20
            if f1 == 115 or f1 == 100 or f1 == 109 or f1 == 116:
                j = i + 2
            elif i + 2 < n:
                f2 = data[i + 2] | 0x20
                if (f1 == 108 and f2 == 108) or ((f1 == 118 or f1 == 114) and f2 == 101):
                    j = i + 3
            if j < 0:
                b = 1
        if b == 1:  # letters, seven categories per load
            j = i + 1
            while True:
                x = (load_le64(cat, j) ^ _LETTER) & _SEVEN_BYTES
                marks = (x + _SEVEN_LOW7) & _SEVEN_TOPS
                if marks != 0:
                    j += trailing_zeros64(marks) >> 3
                    break
                j += 7
        elif b == 2:  # digits, at most three
            j = i + 1
            while j < i + 3 and cat[j] == 6:
                j += 1
        elif b == 3:  # punctuation, then newlines
            j = i + 1
            while cat[j] == 0 or cat[j] == 2:
                j += 1
            while j < n and cat[j] == 3:
                j += 1
        elif b != 0:  # whitespace (cl100k: \s++$ first)
            j = i
            while j < n and (cat[j] == 1 or cat[j] == 3 or cat[j] == 5):
                j += 1
            if j < n:
                k = j - 1
                while k >= i and cat[k] != 3:
                    k -= 1
                if k >= i:
                    j = k + 1
                elif j - i > 1:
                    j -= 1
        m = j - i
        whole = -1
        if m <= 12 and i + 16 <= n:
            k0, k1 = _key_of_words(load_le64(data, i), load_le64(data, i + 8), m)
            h = _home(k0, k1, piece_mask)
            while pieces[2 * h + 1] != 0:
                if pieces[2 * h] == k0 and (pieces[2 * h + 1] & _KM) == k1:
                    whole = pieces[2 * h + 1] >> _KB
                    break
                h = (h + 1) & piece_mask
        if whole >= 0:
            out[count] = whole
            count += 1
        else:
            hit = False
            if m <= 24 and i + 24 <= n:
                s0, s1, s2 = store_words(load_le64(data, i), load_le64(data, i + 8), load_le64(data, i + 16), m)
                at = store_set(s0, s1, s2, m, store_mask)
                for _ in range(2):
                    if (store[at + 3] & 0xFF) == m and store[at] == s0 and store[at + 1] == s1 and store[at + 2] == s2:
                        for q in range(store[at + 3] >> 8):
                            out[count] = (store[at + 4 + (q >> 1)] >> (32 * (q & 1))) & 0xFFFFFFFF
                            count += 1
                        hit = True
                        break
                    at += 8
            if not hit:
                missed[p] = 1
        p += 1
        i = j
    return count


def _hit_ids(engine: object, text: str, missed: np.ndarray) -> list[int]:
    """``encode_ids`` of ``text`` without the ids of the pretokens ``missed`` marks."""
    from tokspec.fast.pretok_peek2 import spans
    starts, ends = spans(text, "cl100k_base")
    kept: list[int] = []
    for p, (a, b) in enumerate(zip(starts.tolist(), ends.tolist())):
        if not missed[p]:
            kept += engine.encode_ids(text[a:b]).tolist()  # type: ignore[attr-defined]
    return kept


def main() -> None:
    fast = load_engine("fast:cl100k_base")
    tables = fast.bpe._tables  # type: ignore[attr-defined]  # this thread's: the store encode_ids warms
    pieces, store = tables[9], tables[12]
    table128 = np.ascontiguousarray(cl100k_category_table()[:128])
    branch = _branch_array(CL100K_TABLE)
    try:
        import toktok
        peer = toktok._encoding("cl100k_base").encode_to_numpy
    except ImportError:
        peer = None
    for lang, text in (("english", english(1_000_000)), ("code", code(1_000_000))):
        text = text.encode("ascii", "ignore").decode()
        fast.encode_ids(text)  # type: ignore[attr-defined]  # warms the store, as a second call finds it
        data = np.frombuffer(text.encode(), np.uint8)
        out, missed = np.empty(len(data), np.int64), np.zeros(len(data) + 1, np.uint8)
        count = fused_hits(data, table128, branch, pieces, store, out, missed)
        same = out[:count].tolist() == _hit_ids(fast, text, missed)

        def fused(doc: str) -> None:
            raw = np.frombuffer(str.encode(doc), np.uint8)
            fused_hits(raw, table128, branch, pieces, store, np.empty(len(raw), np.int64),
                       np.zeros(len(raw) + 1, np.uint8))

        fns = {"fused scan+lookups": fused, "fast encode_ids": fast.encode_ids}  # type: ignore[attr-defined]
        if peer is not None:
            fns["toktok-rs encode_to_numpy"] = peer
        best = {name: float("inf") for name in fns}
        for _ in range(7):
            for name, fn in fns.items():
                doc = fresh_copy(text)
                t0 = time.perf_counter()
                fn(doc)
                best[name] = min(best[name], time.perf_counter() - t0)
        rates = ", ".join(f"{name} {seconds / len(data) * 1e9:.2f}" for name, seconds in best.items())
        print(f"{lang}: {len(data)} bytes, {int(missed.sum())} pretokens missed both lookups, hit ids "
              f"{'equal to encode_ids' if same else 'DIFFER from encode_ids'}; ns/B: {rates}")


if __name__ == "__main__":
    main()
