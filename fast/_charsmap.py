"""Theorem M5's conditions on a sentencepiece precompiled charsmap, checked on the whole trie.

:func:`charsmap_entries` lists every (key, replacement) of a charsmap (a darts-clone double-array
trie, see ``tokspec.formats.spm_normalize``) by a breadth-first walk, one numpy step per key length: at a
node ``v`` the child for byte ``b`` is ``v ^ b``, valid when its label is ``b``. O(units * 256 /
vectorized) per level; the ~100k units of ``nmt_nfkc`` take well under a second, cached per trie.

:func:`spm_cut_pattern` builds M5's cut pattern from the entries: ``S[c] == " "`` with a letter or
digit on each side, excluding the characters whose rewriting could vanish or create whitespace at
the cut (``tokspec.spec.merge`` M5 lists the conditions and why each is needed).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

import numpy as np
import regex

from tokspec.formats.spm_normalize import CharsMap

__all__ = ["charsmap_entries", "spm_cut_pattern"]


def charsmap_entries(cm: CharsMap, keep: Callable[[bytes], bool] = lambda v: True,
                     ) -> tuple[list[tuple[bytes, bytes]], bool, int]:
    """(rules, spaced, count): (key bytes, replacement bytes) of every rule of ``cm`` whose
    replacement satisfies ``keep`` (all by default), shortest keys first; ``spaced`` is True when
    some key holds byte 0x20 after its first byte; ``count`` the number of rules. Keys are
    rebuilt only for kept rules, so asking for a few is fast whatever the trie's size.

    Walk: unit ``j`` with label ``b < 256`` is the child for byte ``b`` of node ``j ^ b``, so each
    level's children are found among all units at once (O(units) numpy work per key length)."""
    units = np.asarray(cm.units, dtype=np.int64)
    n = len(units)
    offset = (units >> 10) << ((units & (1 << 9)) >> 6)
    label = units & ((1 << 31) | 0xFF)
    cand = np.nonzero(label < 256)[0]
    cand_parent = cand ^ label[cand]
    pool_strings: dict[int, bytes] = {}
    levels: list[tuple[np.ndarray, np.ndarray]] = []  # per key length: (parent index, last byte)
    nodes = np.array([int(offset[0])], dtype=np.int64)
    out: list[tuple[bytes, bytes]] = []
    spaced, count = False, 0
    while len(nodes):
        index_of = np.full(n + 256, -1, dtype=np.int64)
        index_of[nodes[nodes < n + 256]] = np.nonzero(nodes < n + 256)[0]
        inside = cand_parent < n + 256
        parent_i = np.full(len(cand), -1, dtype=np.int64)
        parent_i[inside] = index_of[cand_parent[inside]]
        hit = parent_i >= 0
        unit_i, parent_i = cand[hit], parent_i[hit]
        b = label[unit_i]
        levels.append((parent_i, b))
        spaced = spaced or (len(levels) > 1 and bool((b == 0x20).any()))
        nxt = unit_i ^ offset[unit_i]
        leaf = np.nonzero(((units[unit_i] >> 8) & 1).astype(bool) & (nxt < n))[0]
        count += len(leaf)
        at = units[nxt[leaf]] & 0x7FFFFFFF
        for v in np.unique(at).tolist():
            if v not in pool_strings:
                pool_strings[v] = cm._pool_string(v)
        for i, v in zip(leaf.tolist(), at.tolist()):
            if keep(pool_strings[v]):
                out.append((_key(levels, i), pool_strings[v]))
        nodes = nxt
    return out, spaced, count


def _key(levels: list[tuple[np.ndarray, np.ndarray]], i: int) -> bytes:
    """The key of entry ``i`` of the last level, rebuilt through the parent indices."""
    rev = []
    for parent_i, b in reversed(levels):
        rev.append(int(b[i]))
        i = int(parent_i[i])
    return bytes(reversed(rev))


def _suspect(value: bytes) -> bool:
    """Replacements M5's exclusions come from: those that vanish or end with a space (an output
    that is only spaces ends with one)."""
    return value == b"" or value.endswith(b" ")


@lru_cache(maxsize=16)
def _pattern_for(units: tuple[int, ...], pool: bytes) -> tuple[regex.Pattern[str] | None, str]:
    # every rule: M5 forbids a key starting with a space whatever its replacement (" " -> "_" makes
    # the right piece of a cut "▁_..." where the whole text has "_...")
    entries, spaced, count = charsmap_entries(CharsMap(units, pool))
    if spaced:
        return None, "a charsmap key holds a space after its first character"
    bad_last: set[str] = set()
    bad_first: set[str] = set()
    for key, value in entries:
        if not (_suspect(value) or key.startswith(b" ")):
            continue
        try:
            k, v = key.decode("utf-8"), value.decode("utf-8")
        except UnicodeDecodeError:
            return None, f"charsmap key {key!r} is not UTF-8"
        if k.startswith(" ") and (k, v) != (" ", " "):
            return None, f"charsmap rewrites a space ({k!r} -> {v!r})"
        if v == "" or v.endswith(" "):
            bad_last.add(k[-1])
        if v.strip(" ") == "":
            bad_first.add(k[0])
    return _compile(bad_last, bad_first), f"charsmap of {count} rules checked"


def _compile(bad_last: set[str], bad_first: set[str]) -> regex.Pattern[str]:
    def excluded(chars: set[str]) -> str:  # chars is non-empty
        return "[" + "".join(regex.escape(ch) for ch in sorted(chars)) + "]"

    left = r"(?<=[\p{L}\p{N}])" + (f"(?<!{excluded(bad_last)})" if bad_last else "")
    right = r"(?=[\p{L}\p{N}])" + (f"(?!{excluded(bad_first)})" if bad_first else "")
    return regex.compile(left + " " + right)


def spm_cut_pattern(cm: CharsMap | None) -> tuple[regex.Pattern[str] | None, str]:
    """(M5's cut pattern, note) for charsmap ``cm`` (None = identity); pattern None when the
    charsmap breaks a condition (the note says which)."""
    if cm is None:
        return _compile(set(), set()), "identity normalization"
    return _pattern_for(tuple(cm.units), cm.pool)
