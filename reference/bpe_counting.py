"""Reference token counting: the obvious definitions, by re-encoding every prefix or slice.

Definitions (``tokspec.spec.counting`` D1-D3), on byte-level BPE without pretokenization, with
:func:`tokspec.reference.bpe_naive.bpe_pieces` (the minimum-rank merge loop, no shortcut) as the
encoder:

- :func:`count_slice`: the number of tokens of ``data[i:j]`` encoded on its own.
- :func:`prefix_counts` / :func:`suffix_counts`: the count after each appended / prepended byte.
- :func:`split_after`: the number of characters of the longest prefix of a ``str`` whose encoding
  has at most ``n`` tokens (every prefix is tried: counting is not monotonic).
- :func:`count_pretokenized`: with a regex pretokenizer, the sum over the pretokens.

Complexity: quadratic or worse by design (every prefix re-encoded with an O(m^2) loop); meant for
short inputs. Out of scope: special tokens; speed (see ``tokspec.fast.bpe_counting``).
"""

from __future__ import annotations

from collections.abc import Mapping

import regex

from tokspec.reference.bpe_naive import bpe_pieces

__all__ = ["count_bytes", "count_slice", "prefix_counts", "suffix_counts", "split_after",
           "count_pretokenized"]


def count_bytes(ranks: Mapping[bytes, int], data: bytes) -> int:
    """Tokens of ``data`` as one piece: BPE's merge loop, counted. O(m^2)."""
    return len(bpe_pieces(data, ranks, shortcut=False)) if data else 0


def count_slice(ranks: Mapping[bytes, int], data: bytes, i: int, j: int) -> int:
    """Tokens of the slice ``data[i:j]`` encoded on its own (D1)."""
    return count_bytes(ranks, data[i:j])


def prefix_counts(ranks: Mapping[bytes, int], data: bytes) -> list[int]:
    """``[count(data[:1]), ..., count(data[:n])]``: the count after each appended byte (D3)."""
    return [count_bytes(ranks, data[:e]) for e in range(1, len(data) + 1)]


def suffix_counts(ranks: Mapping[bytes, int], data: bytes) -> list[int]:
    """``[count(data[n-1:]), ..., count(data[0:])]``: the count after each prepended byte, the
    last byte of ``data`` first (D3, mirrored)."""
    return [count_bytes(ranks, data[s:]) for s in range(len(data) - 1, -1, -1)]


def split_after(ranks: Mapping[bytes, int], text: str, n: int) -> int:
    """Characters of the longest prefix of ``text`` whose encoding has at most ``n`` tokens (D2)."""
    best = 0
    for k in range(len(text) + 1):
        # every character boundary is tried: a longer prefix may have fewer tokens than a shorter
        if count_bytes(ranks, text[:k].encode("utf-8")) <= n:
            best = k
    return best


def count_pretokenized(ranks: Mapping[bytes, int], pattern: regex.Pattern[str], text: str) -> int:
    """Tokens of ``text`` under tiktoken semantics: regex pretokens, each encoded alone (D1 with
    a pretokenizer)."""
    return sum(count_bytes(ranks, m.group().encode("utf-8")) for m in pattern.finditer(text))
