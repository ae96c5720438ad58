"""The merge kernel of the compiled backtracking BPE: :func:`_encode`, over all pretokens of a text.

The algorithm and its theorem are ``tokspec.fast.bpe_kernel``'s (seed
``bpe-backtracking-linear-encoder``: Corollaries I, II, IIa and IIIa, stated in ``bpe_backtrack``);
the tables it reads are built there (:class:`~tokspec.fast.bpe_kernel.CompiledBPE`), which also
re-exports :func:`_encode` and :func:`split_offsets`. The spec property checking it is "BPE
exactness" (against tiktoken and compiled against interpreted in ``tests/test_fast_kernels.py``,
including >= 1 MB texts; against the Python encoder in ``test_fast_bpe_kernel_text`` and
``test_fast_bpe_piece_table``, which also check the written-out lookups and the counted byte
positions).

:func:`_encode` encodes ALL pretokens of a text in one call (the hot loop never returns
to Python) and converts each token's byte span to characters on the way: the character containing
its first byte, to one past the character containing its last byte (``tokspec._types``). Cost: the
backtracking's O(n * P) (see ``bpe_backtrack``), plus O(n) for offsets. Pair validity goes
through a direct-mapped memo (2**18 words, shared by calls): it pays (on 2 MB of Chinese-like text,
1.39M checks, 99K misses; a miss replays the merge history in the pair table, 4 MB for cl100k_base). Before the
merge, a pretoken of at most 12 bytes that is itself a reachable token is looked up whole
(``tokspec.fast._piece_table``, theorem: spec claim ``bpe.whole_piece_shortcut`` restricted to
reachable tokens): one hash probe for ~85% of English and code pretokens; a piece of at most 24
bytes merged earlier by the same thread, in this call or an earlier one, copies its ids from that
thread's store (``tokspec.fast._piece_store``, the last argument: ``CompiledBPE._tables`` gives
each thread its own), a longer one merged earlier in the same call from a per-call cache
(``tokspec.fast._piece_cache``); both compare byte for byte. The trie's third level is dense
for three-byte UTF-8 characters (``level3``, built at load).
Calls per token are avoided: a compiled call with array arguments costs 30-50 ns, and numba
reference-counts an array passed even to an inlined kernel (an atomic increment and decrement per
call, which its pruning pass does not remove in a loop like this one). So the longest-match walk
(``_longest``; CJK text 66 -> 32 ns/B), the memo probe of ``_valid``, the whole-piece probe
(``_piece_table.piece_id``; callgrind, 200 KB of English, 14.9M -> 11.2M instructions) and the
store's lookup (``_piece_store.store_op`` with ``put`` 0; -6% to -11%) are written out here; their
key packing and hashing are scalar kernels (``_key_of_words``, ``_home``, ``store_words``,
``store_set``: no arrays, nothing counted), shared with the look-ahead below; the three new ones
are not inlined by numba (LLVM inlines them: no call in the machine code; numba's inlining of
them cost 0.35 s of a cold start, 4.53 -> 4.18 s wall). Only the pieces the
store misses (about 2% of pretokens of new text) pay such calls: the per-call cache, the store's put.
Longest match by probes: where a merge step starts on an ASCII byte, the next min(12, remaining)
bytes are ASCII and 16 bytes of data are left, the longest reachable token starting there is found
by independent hash probes instead of the trie walk, whose every step waits for the last (on new
text the trie's lines are not cached: the walk was about 45% of a merge's ~3,500 cycles). First,
if more than 12 bytes of the piece remain, one probe for the first 12 bytes as a long-prefix entry
of the piece table (``_piece_table``: such an entry exists iff a reachable token of more than 12
bytes starts with them) and, on a hit, the trie from the node it holds; else one probe per length
from min(12, remaining) down to 3 (the table holds every reachable token of at most 12 bytes, so
the first hit is the longest), then the dense levels for 2 and 1 bytes. Each of these probes
first reads the key's bit in the table's filter (``_piece_table.piece_filter``, an argument
beside the table) and skips the table when it is clear: on new English, per merged piece, 8.2
probes found 3.1 tokens, and every miss read a line of the 4 MB table that new text had not
cached. A clear bit proves the key absent, so the same token is found. Measured (the kernel
alone, one process, old and new each on its own copy of the tables, 12 new 1 MB texts each in
rotated order, total time): cl100k_base code x0.93, English from many corpora x0.96; o200k_base
code x0.96; repeated English and code within noise (x0.91-1.02 over runs). The same token the walk
finds, so the backtracking and its theorem are unchanged. Elsewhere (and with the self-check's
empty piece table) the walk: CJK tokens are short and their walk dense (``level3``); probes there
made Chinese-like text 3-5x slower. Measured (thread time, the kernel alone on the same new 1 MB
texts, old and new each in its own process, alternating, medians of 3 x 7 calls): cl100k_base
English from many corpora x0.87, code x0.84; o200k_base x0.94, x0.89; Chinese-like x0.97-1.00.
Checked by ``tests/test_fast_bpe_piece_table.py`` (tokens up to about 40 bytes, against the walk
alone and the Python encoder) and the tiktoken tests.
``_longest``, ``_valid``, ``piece_id`` and ``_pack`` stay as kernels (``_bpe_probe``,
``_piece_table``) for ``_counting_kernels`` and the tests, which check the written-out code
against the Python encoder (``test_fast_bpe_piece_table``, ``test_fast_bpe_kernel_text``).
Look-ahead: over the first :data:`_AHEAD_SPAN` pretokens of a call, the loop prefetches
(``_prefetch``) the piece-table line of the pretoken :data:`_AHEAD` places ahead if it has at most
12 bytes and its store set if at most 24, wherever its bytes are known (in counted mode within the
ASCII run found ahead). Only the first: on a long text the lines are soon cached by the text
itself, and the look-ahead's ~12 cycles per pretoken then cost more than they save (1 MB of
repeated English, the kernel alone: 1.40 -> 2.33 ms over all pretokens). A short text whose
table lines were evicted since it was last seen spent more on waiting than on work (1.2 KB of
English: 13.2 us against 4.6 us cached, about a line per pretoken). Measured in issue 29's
latency bench, one process, old and new kernel each on its own copy of the tables: p50 17.6 ->
14.9 us (cl100k_base) and 19.3 -> 15.6 us (o200k_base) with the piece-table line only; the store
set of every piece too (not only of those of 13..24 bytes) gave a further x0.90-0.97. On 1 MB,
with the first 4,096 pretokens only: repeated English 1.46 -> 1.56 ms, the kernel alone, and the
same with the look-ahead switched off (a cost elsewhere in the change, not yet found); new code
within noise. Exactness is untouched (a prefetch changes no value); ``tests/test_fast_prefetch.py``
checks that the lines prefetched are exactly those the probes read.
"""

from __future__ import annotations

import numpy as np

from tokspec._jit import kernel
from tokspec.fast._bpe_probe import _get, _pair_valid, _slot
from tokspec.fast._le_load import load_le64
from tokspec.fast._piece_cache import cache_for, cache_get, cache_put
from tokspec.fast._piece_store import IDS_MAX, STORE_MAX, store_op, store_set, store_words
from tokspec.fast._piece_store import _LOW32 as _STORE_LOW32
from tokspec.fast._piece_table import EMPTY_WORDS, LONG_PREFIX, PIECE_MAX
from tokspec.fast._piece_table import _KEY_BITS as _PIECE_KEY_BITS, _KEY_MASK as _PIECE_KEY_MASK, _home, _key_of_words
from tokspec.fast._piece_table import filter_bit
from tokspec.fast._prefetch import prefetch
from tokspec.fast.bpe_tables import NODE_BITS, PAIR_SHIFT

__all__ = ["split_offsets"]

_PAIR_SHIFT = PAIR_SHIFT  # as plain module ints: the kernels' (frozen) globals
_NODE_BITS = NODE_BITS
_PIECE_MAX = PIECE_MAX
_LONG_PREFIX = LONG_PREFIX
_EMPTY_WORDS = EMPTY_WORDS
_STORE_MAX = STORE_MAX
_AHEAD = 32  # pretokens: how far ahead lines are prefetched (16, 32, 64 and 128 tried: 32-64 best)
_AHEAD_SPAN = 4096  # pretokens: only the first ones of a call are prefetched (module docstring)
_HIGH_BITS = -0x7F7F7F7F7F7F7F80  # 0x8080808080808080 as an int64: the top bit of each of 8 bytes


@kernel(lean=True)
def _encode(data: np.ndarray, cbs: np.ndarray, cps: np.ndarray, starts: np.ndarray, ends: np.ndarray,
            want_offsets: bool, tok_len: np.ndarray, next_prefix: np.ndarray, left: np.ndarray,
            right: np.ndarray, root: np.ndarray, trie: np.ndarray, pairs: np.ndarray, memo: np.ndarray,
            max_len: int, pieces: np.ndarray, pieces_filter: np.ndarray, level3: np.ndarray,
            store: np.ndarray) -> np.ndarray:
    """Encode pieces ``[cbs[starts[p]], cbs[ends[p]])`` of ``data`` (pieces in order, contiguous
    when offsets are wanted); ``cbs[c]`` is the first byte of character ``c``. With ``cbs`` empty,
    ``data`` is the UTF-8 of the code points ``cps`` and the pieces are in order and contiguous
    from character 0: byte positions are counted from ``cps`` on the way (none when ``data`` is
    ASCII, one byte per character), so no ``cbs`` array is built. Within a run of ASCII bytes
    (found eight bytes per load, top bits ``_HIGH_BITS``) a piece's end is its end character plus
    the bytes beyond one per character so far, without a per-character loop: 1 MB of library code
    with some non-ASCII text, 1.60 -> 0.15 ms for its positions; where non-ASCII is dense (gaps
    under 16 bytes) the next 8 pieces are counted without a rescan (Chinese-like text and French
    +0.08 and +0.17 ms per MB). Returns ONE int64 array: the
    ids, then, if wanted (``cbs`` given), the tokens' character starts, then their ends (3 x the
    token count; :func:`split_offsets`). One array, not three: each array a compiled call returns
    costs about 0.3 us to box (a 5-byte text's whole call: 2.0 -> 1.5 us)."""
    alive = np.empty(len(data) + 1, dtype=np.uint8)  # alive[p] == 0: p proven not a boundary
    for at in range(len(alive)):  # a loop, not np.ones: numba compiles np.ones for 0.2-0.4 s on a cold start
        alive[at] = 1
    out_ids = np.empty(len(data), dtype=np.int32)   # at most one token per byte
    cache = cache_for(len(data))  # merged pieces of this call (``_piece_cache``)
    memo_mask = len(memo) - 1
    piece_mask = (len(pieces) >> 1) - 1
    filter_mask = 64 * len(pieces_filter) - 1  # ``_piece_table.piece_filter``: a key's bit is clear
    # there only if the key is in no slot, so a clear bit skips the probe (module docstring)
    probe = len(pieces) > _EMPTY_WORDS  # a built piece table: longest matches by probes
    count: int = np.int64(0)  # type: ignore[assignment]  # not a literal 0: callees taking it compile once
    short_put = np.int64(1)  # store_op's mode as a value, not a literal (one compiled store_op)
    store_mask = (len(store) >> 4) - 1  # a set of the store: two slots of 8 words
    counted = len(cbs) == 0
    b1 = 0
    shift = 0  # counted mode: character ``b1 - shift`` starts at byte ``b1`` (shift: the UTF-8
    # bytes beyond one per character so far)
    ascii_end = len(data) if len(cps) == len(data) else 0  # counted mode: every byte of
    # data[b1:ascii_end] is ASCII (none when <= b1); all of them when the text is ASCII
    scan_pause = 0  # counted mode: pieces to count without rescanning (non-ASCII is dense here)
    ahead = 0  # the next pretoken whose lines are to be prefetched
    ahead_end = min(len(starts), _AHEAD_SPAN)
    for p in range(len(starts)):
        while ahead < ahead_end and ahead <= p + _AHEAD:  # prefetch the lines its probes will read
            if not counted:  # (``_prefetch``; module docstring), from the pretoken's bytes
                a0 = cbs[starts[ahead]]
                a1 = cbs[ends[ahead]]
            elif ends[ahead] + shift <= ascii_end:  # counted: known within the ASCII run ahead
                a0 = starts[ahead] + shift  # (one byte per character there)
                a1 = ends[ahead] + shift
            elif ahead > p:  # not known yet: again at the next pretoken (the run may be found)
                break
            else:
                a0 = a1 = 0
            ahead += 1
            n = a1 - a0
            if 0 < n <= _PIECE_MAX and a0 + 16 <= len(data):
                k0, k1 = _key_of_words(load_le64(data, a0), load_le64(data, a0 + 8), n)
                prefetch(pieces, 2 * _home(k0, k1, piece_mask))
            if 0 < n <= _STORE_MAX and a0 + 24 <= len(data) and len(store) > 0:  # and its store set
                s0, s1, s2 = store_words(load_le64(data, a0), load_le64(data, a0 + 8), load_le64(data, a0 + 16), n)
                prefetch(store, store_set(s0, s1, s2, n, store_mask))  # (a token of <= 12 bytes: unused)
        if not counted:
            b0 = cbs[starts[p]]
            b1 = cbs[ends[p]]
        else:
            b0 = b1
            end = ends[p]
            if end + shift <= ascii_end:  # the piece's bytes are ASCII: one per character
                b1 = end + shift
            else:
                for c in range(b1 - shift, end):
                    cp = cps[c]
                    b1 += 1 if cp < 0x80 else 2 if cp < 0x800 else 3 if cp < 0x10000 else 4
                shift = b1 - end
                if scan_pause > 0:
                    scan_pause -= 1
                elif ascii_end <= b1:  # find the next non-ASCII byte, eight bytes per load
                    ascii_end = b1
                    while ascii_end + 8 <= len(data) and (load_le64(data, ascii_end) & _HIGH_BITS) == 0:
                        ascii_end += 8
                    while ascii_end < len(data) and data[ascii_end] < 0x80:
                        ascii_end += 1
                    if ascii_end - b1 < 16:
                        scan_pause = 8
        if b1 <= b0:
            continue
        whole = -1  # the piece is one reachable token: ``_piece_table.piece_id``, written out
        if b1 - b0 <= _PIECE_MAX:  # ``_pack`` written out too
            n = b1 - b0
            if b0 + 16 <= len(data):
                k0, k1 = _key_of_words(load_le64(data, b0), load_le64(data, b0 + 8), n)
            else:  # the text's last 15 bytes
                k0 = np.int64(0)
                k1 = np.int64(n) << 32
                for i in range(n):
                    if i < 8:
                        k0 |= np.int64(data[b0 + i]) << (8 * i)
                    else:
                        k1 |= np.int64(data[b0 + i]) << (8 * (i - 8))
            h = _home(k0, k1, piece_mask)  # (not filtered: most pretokens are in the table)
            while pieces[2 * h + 1] != 0:
                if pieces[2 * h] == k0 and (pieces[2 * h + 1] & _PIECE_KEY_MASK) == k1:
                    whole = pieces[2 * h + 1] >> _PIECE_KEY_BITS
                    break
                h = (h + 1) & piece_mask
        if whole >= 0:
            out_ids[count] = whole
            count += 1
            continue
        short = b1 - b0 <= STORE_MAX and len(store) > 0
        cached = -1
        if short:  # merged earlier by this thread, in this call or an earlier one: the lookup of
            # ``_piece_store.store_op`` written out (its call paid reference-count atomics)
            n = b1 - b0
            if b0 + 24 <= len(data):  # bytes 8w..8w+7 in word w, zero padded
                s0, s1, s2 = store_words(load_le64(data, b0), load_le64(data, b0 + 8), load_le64(data, b0 + 16), n)
            else:  # the text's last 23 bytes
                s0 = np.int64(0)
                s1 = np.int64(0)
                s2 = np.int64(0)
                for i in range(n):
                    byte = np.int64(data[b0 + i]) << (8 * (i & 7))
                    if i < 8:
                        s0 |= byte
                    elif i < 16:
                        s1 |= byte
                    else:
                        s2 |= byte
            at = int(store_set(s0, s1, s2, n, store_mask))
            for way in range(2):
                if (store[at + 3] & 0xFF) == n and store[at] == s0 and store[at + 1] == s1 and store[at + 2] == s2:
                    k = store[at + 3] >> 8
                    for j in range(k):
                        out_ids[count + j] = (store[at + 4 + (j >> 1)] >> (32 * (j & 1))) & _STORE_LOW32
                    cached = count + k
                    break
                at += 8
        if cached < 0:  # merged earlier in this call (``_piece_cache``: long pieces, and short
            # ones of more than IDS_MAX ids, which the store does not keep)
            cached = cache_get(cache, data, b0, b1 - b0, out_ids, count)
        if cached >= 0:
            count = cached
            continue
        base = count
        pos = b0
        fresh = True  # cand is to be the longest reachable token at pos
        n_ids = len(tok_len)
        while True:
            ascii_window = False  # the next min(12, b1 - pos) bytes are ASCII, 16 bytes readable
            if fresh and probe and data[pos] < 0x80 and pos + 16 <= len(data):
                w0 = load_le64(data, pos)
                w1 = load_le64(data, pos + 8)
                n = min(b1 - pos, _PIECE_MAX)
                k0 = w0 if n >= 8 else w0 & ((np.int64(1) << (8 * n)) - 1)
                k1 = w1 & ((np.int64(1) << (8 * max(n - 8, 0))) - 1)
                ascii_window = ((k0 | k1) & _HIGH_BITS) == 0
            if ascii_window:  # the longest match by independent probes (``_piece_table``'s
                fresh = False  # long-prefix entries; module docstring)
                cand = -1
                if b1 - pos > _PIECE_MAX:  # a reachable token of more than 12 bytes starts here iff
                    # the first 12 bytes are a long-prefix entry; its value is their trie node
                    k1 = (np.int64(_LONG_PREFIX) << 32) | (w1 & 0xFFFFFFFF)
                    h = _home(w0, k1, piece_mask)
                    bit = filter_bit(w0, k1, filter_mask)  # (one hash for both: LLVM inlines them)
                    if ((pieces_filter[bit >> 6] >> (bit & 63)) & 1) == 0:
                        h = -1  # no such key: its filter bit is clear
                    node = -1
                    while h >= 0 and pieces[2 * h + 1] != 0:
                        if pieces[2 * h] == w0 and (pieces[2 * h + 1] & _PIECE_KEY_MASK) == k1:
                            node = pieces[2 * h + 1] >> _PIECE_KEY_BITS
                            break
                        h = (h + 1) & piece_mask
                    q = pos + _PIECE_MAX
                    stop = min(b1, pos + max_len)
                    while node >= 0 and q < stop:
                        node = _get(trie, (np.int64(node) << 8) | data[q], np.int64(_NODE_BITS))
                        if 0 <= node < n_ids:
                            cand = node
                        q += 1
                n = min(b1 - pos, _PIECE_MAX)
                while cand < 0 and n > 2:  # else the longest of 12..3 bytes: one probe per length
                    k0, k1 = _key_of_words(w0, w1, n)
                    h = _home(k0, k1, piece_mask)
                    bit = filter_bit(k0, k1, filter_mask)
                    if ((pieces_filter[bit >> 6] >> (bit & 63)) & 1) == 0:
                        h = -1  # no such key: its filter bit is clear
                    while h >= 0 and pieces[2 * h + 1] != 0:
                        if pieces[2 * h] == k0 and (pieces[2 * h + 1] & _PIECE_KEY_MASK) == k1:
                            cand = pieces[2 * h + 1] >> _PIECE_KEY_BITS
                            break
                        h = (h + 1) & piece_mask
                    n -= 1
                if cand < 0:  # else 2 bytes or 1: the trie's dense levels
                    first = data[pos]
                    cand = root[first]
                    if b1 - pos >= 2:
                        node = root[256 + ((np.int64(first) << 8) | data[pos + 1])]
                        if 0 <= node < n_ids:
                            cand = node
            if fresh:  # _longest, written out: a compiled call per token costs more than the walk
                fresh = False
                first = data[pos]
                cand = root[first]
                stop = min(b1, pos + max_len)
                q = pos + 1
                node = -1
                if q < stop:
                    node = root[256 + ((np.int64(first) << 8) | data[q])]
                    q += 1
                if node >= 0 and node < n_ids:
                    cand = node
                if node >= 0 and q < stop and (first & 0xF0) == 0xE0 and (data[q - 1] & 0xC0) == 0x80 \
                        and (data[q] & 0xC0) == 0x80:
                    node = level3[((np.int64(first) & 0x0F) << 12) | ((np.int64(data[q - 1]) & 0x3F) << 6)
                                  | (data[q] & 0x3F)]
                    q += 1
                    if 0 <= node < n_ids:
                        cand = node
                while node >= 0 and q < stop:
                    node = _get(trie, (np.int64(node) << 8) | data[q], np.int64(_NODE_BITS))
                    if 0 <= node < n_ids:
                        cand = node
                    q += 1
            stop = pos + tok_len[cand]
            ok = alive[stop] == 1
            if ok and count > base:  # _valid, written out: the memo probe inline, replay on a miss
                key = (np.int64(out_ids[count - 1]) << _PAIR_SHIFT) | cand
                slot = _slot(key, memo_mask)
                e = memo[slot]
                if (e >> 1) == key:
                    ok = (e & 1) == 1
                else:
                    ok = _pair_valid(out_ids[count - 1], cand, left, right, pairs)
                    memo[slot] = (key << 1) | (1 if ok else 0)
            if ok:
                out_ids[count] = cand
                count += 1
                pos = stop
                if pos == b1:
                    break
                fresh = True
                continue
            cand = next_prefix[cand]
            while cand < 0:  # nothing left at pos: pos is no boundary; back up one token
                alive[pos] = 0
                count -= 1
                last = out_ids[count]
                pos -= tok_len[last]
                cand = next_prefix[last]
        if short and count - base <= IDS_MAX:
            store_op(store, data, b0, b1 - b0, out_ids, base, count, short_put)
        else:
            cache_put(cache, data, b0, b1 - b0, base, count)
    if not want_offsets or count == 0:
        return out_ids[:count].astype(np.int64)
    out = np.empty(3 * count, dtype=np.int64)  # ids, starts, ends
    char = 0  # the character containing the current token's first byte
    pos = cbs[starts[0]]
    for t in range(count):
        out[t] = out_ids[t]
        while cbs[char + 1] <= pos:
            char += 1
        out[count + t] = char
        pos += tok_len[out_ids[t]]
        while cbs[char + 1] <= pos - 1:
            char += 1
        out[2 * count + t] = char + 1
    return out


def split_offsets(out: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``_encode``'s array with offsets (ids, starts, ends, each a third) as three views."""
    count = len(out) // 3
    return out[:count], out[count:2 * count], out[2 * count:]
