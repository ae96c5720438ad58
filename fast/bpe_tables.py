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
    edges, term = bpe._edges, bpe._term
    renum = np.empty(len(term), dtype=i64)  # token-end nodes take their token's id
    extra = size
    for node, tid in enumerate(term):
        if tid >= 0:
            renum[node] = tid
        else:
            renum[node], extra = extra, extra + 1
    root = np.full(256 + 65536, -1, dtype=i64)  # levels 1 and 2 of the trie, dense
    level1 = {}
    for key, child in edges.items():
        if key < 256:
            root[key] = renum[child]
            level1[child] = key
    deep_keys, deep_vals = [], []
    for key, child in edges.items():
        parent = key >> 8
        first = level1.get(parent)
        if first is not None:
            root[256 + (first << 8 | (key & 0xFF))] = renum[child]
        elif parent != 0:
            deep_keys.append(int(renum[parent]) << 8 | (key & 0xFF))
            deep_vals.append(int(renum[child]))
    pair_keys, pair_vals = [], []
    ranks = bpe.ranks
    for tid, tok in enumerate(bpe.tokens):
        for k in range(1, len(tok)):
            a, b = ranks.get(tok[:k], -1), ranks.get(tok[k:], -1)
            if a >= 0 and b >= 0:
                pair_keys.append(a << PAIR_SHIFT | b)
                pair_vals.append(tid)
    lens = np.array([len(t) for t in bpe.tokens], dtype=i64)
    return {
        "max_len": np.array([bpe.max_len], dtype=i64),
        "tok_len": lens.astype(i32),
        "next_prefix": np.array(bpe.next_prefix, dtype=i32),
        "split_left": np.array(bpe.split_left, dtype=i32),
        "split_right": np.array(bpe.split_right, dtype=i32),
        "root": root.astype(i32),
        "edge_keys": np.array(deep_keys, dtype=i64),
        "edge_vals": np.array(deep_vals, dtype=i64),
        "pair_keys": np.array(pair_keys, dtype=i64),
        "pair_vals": np.array(pair_vals, dtype=i64),
        "tok_bytes": np.frombuffer(b"".join(bpe.tokens), dtype=np.uint8).copy(),
        "tok_offsets": np.concatenate([[0], np.cumsum(lens)]).astype(i64),
    }


def cache_path(sha256: str) -> Path | None:
    """The table file of the vocabulary with hash ``sha256`` for this code; None if uncached.

    Its stem (vocabulary hash, hash of the code building and reading the tables) is the key the
    file's digest is bound to (``tokspec.fast._cache.load_arrays``)."""
    folder = cache_dir("bpe")
    if folder is None:
        return None
    digest = hashlib.sha256(_FORMAT.encode())
    here = Path(__file__).resolve().parent
    for name in ("bpe_kernel.py", "bpe_tables.py", "bpe_backtrack.py"):
        digest.update((here / name).read_bytes())
    return folder / f"{sha256[:32]}-{digest.hexdigest()[:16]}.npz"
