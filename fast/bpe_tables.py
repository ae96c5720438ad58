"""The arrays of the compiled backtracking BPE (``tokspec.fast.bpe_kernel``), from a built
:class:`~tokspec.fast.bpe_backtrack.BacktrackBPE`, and where they are cached.

Layout (see ``bpe_kernel``'s docstring for how the kernel reads them): per-id arrays in int32 (half
the cache footprint of int64), the trie renumbered so that a node where a token ends has that
token's id, levels 1 and 2 of the trie dense, deeper edges and the pair table as (key, value)
lists that ``bpe_kernel`` hashes at load. Build: O(sum of token lengths) dictionary operations.
Cache: ``<cache root>/bpe/<vocabulary sha256>-<hash of this code>.npz``, digest-verified on load
(``tokspec.fast._cache``); no eviction.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from tokspec.errors import UnsupportedComponentError
from tokspec.fast._cache import cache_dir
from tokspec.fast.bpe_backtrack import BacktrackBPE

__all__ = ["PAIR_SHIFT", "NODE_BITS", "arrays_of", "cache_path"]

PAIR_SHIFT = 20  # token ids < 2**20: pair key = a << 20 | b
NODE_BITS = 24   # trie node ids < 2**24
_FORMAT = "bpe-kernel-v1"


def arrays_of(bpe: BacktrackBPE) -> dict[str, np.ndarray]:
    """The kernel's arrays from a built :class:`BacktrackBPE` (see module docstring)."""
    size = len(bpe.tokens)
    if size >= 1 << PAIR_SHIFT:
        raise UnsupportedComponentError(f"vocabulary of {size} ids: the compiled BPE takes ids < 2**20")
    if size + len(bpe._term) >= 1 << NODE_BITS:
        raise UnsupportedComponentError(f"trie of {len(bpe._term)} nodes: the compiled BPE takes < 2**24 ids")
    i64, i32 = np.int64, np.int32  # per-id arrays in int32: half the cache footprint
    term = np.array(bpe._term, dtype=i64)
    renum = np.where(term >= 0, term, size + np.cumsum(term < 0) - 1)  # token ends take their id
    keys = np.fromiter(bpe._edges.keys(), dtype=i64, count=len(bpe._edges))  # parent << 8 | byte
    nodes = np.fromiter(bpe._edges.values(), dtype=i64, count=len(bpe._edges))  # -> child node
    parent, byte, child = keys >> 8, keys & 0xFF, renum[nodes]
    root = np.full(256 + 65536, -1, dtype=i64)  # levels 1 and 2 of the trie, dense
    top = parent == 0
    root[byte[top]] = child[top]
    first = np.full(len(term), -1, dtype=i64)  # the byte leading to each level-1 node
    first[nodes[top]] = byte[top]
    second = ~top & (first[parent] >= 0)  # edges out of level-1 nodes: level 2, the rest deep
    root[256 + (first[parent[second]] << 8 | byte[second])] = child[second]
    deep = ~top & ~second
    cut_a, cut_b, cut_id = (np.array(c, dtype=i64) for c in bpe.pair_cuts)
    lens = np.array([len(t) for t in bpe.tokens], dtype=i64)
    return {
        "max_len": np.array([bpe.max_len], dtype=i64),
        "tok_len": lens.astype(i32),
        "next_prefix": np.array(bpe.next_prefix, dtype=i32),
        "split_left": np.array(bpe.split_left, dtype=i32),
        "split_right": np.array(bpe.split_right, dtype=i32),
        "root": root.astype(i32),
        "edge_keys": renum[parent[deep]] << 8 | byte[deep],
        "edge_vals": child[deep],
        "pair_keys": cut_a << PAIR_SHIFT | cut_b,
        "pair_vals": cut_id,
        "tok_bytes": np.frombuffer(b"".join(bpe.tokens), dtype=np.uint8).copy(),
        "tok_offsets": np.concatenate([[0], np.cumsum(lens)]).astype(i64),
    }


def cache_path(sha256: str) -> Path | None:
    """The table file of the vocabulary with hash ``sha256`` for this code; None if uncached.

    Its stem (vocabulary hash, hash of the code building and reading the tables, including the
    hash-table and piece-table fills whose output the file also holds) is the key the file's digest is bound to (``tokspec.fast._cache.load_arrays``)."""
    folder = cache_dir("bpe")
    if folder is None:
        return None
    digest = hashlib.sha256(_FORMAT.encode())
    here = Path(__file__).resolve().parent
    for name in ("bpe_kernel.py", "bpe_tables.py", "bpe_backtrack.py", "_bpe_probe.py", "_piece_table.py"):
        digest.update((here / name).read_bytes())
    return folder / f"{sha256[:32]}-{digest.hexdigest()[:16]}.npz"
