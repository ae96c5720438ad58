"""Long texts a block at a time: where ``fast:`` BPE engines cut a text into blocks encoded alone.

Why: one call of the kernels over a long text allocates about 24 bytes per character of arrays
(code points, UTF-8, two span arrays, the merge kernel's own): freshly mapped memory, faulted in a
page at a time (a 2 MB text: about 930 page faults per MB), streamed through the caches the tables
live in. Measured on new 2 MB texts (one process, interleaved), 128K-character blocks against one
call: library code, o200k_base 76 -> 94 MB/s and cl100k_base 83 -> 96 MB/s (``encode_ids``); the
one call with its arrays reused instead of allocated: about the same as blocks; 64K- and
256K-character blocks alike. A 20M-character text: ``encode_ids`` 363 -> 180 ms, peak memory
+224 -> +71 MB.

An ASCII text's ``encode_ids`` takes blocks of ``bpe_encoder.ASCII_BLOCK`` (1M characters) instead:
each is one fused pass (``_bpe_ascii``: about 7 bytes a character of arrays, no code points or span
arrays), and there the per-call work (a merge call over the block's missed pretokens, whose cache
merges a repeated piece once per call; the concatenation of the blocks' ids) outweighed locality:
2 MB of English, 7.5 -> 5.3 ms (issue 29, stop 55; ``bpe_encoder.ASCII_BLOCK`` has the figures).

Theorem relied on: M2 of ``tokspec.spec.merge`` (the rule ``lopt:`` cuts by): at a space after a
letter the ids and offsets of a text are those of its two sides concatenated (the right side's
offsets shifted), so blocks between such cuts give the text's. Checked by
``tests/test_fast_blocks.py`` (the cuts taken, blocks of 1 to 40 characters against one piece under
hypothesis, a 1.3 MB text against tiktoken) and the fuzz target
``diff--fast_blocks_o200k--tiktoken_o200k_base`` (32-character blocks against production).
"""

from __future__ import annotations

from tokspec.fast.merge_lopt import cuts_after
from tokspec.fast.merge_rules import CutRule, decide

__all__ = ["cut_rule", "block_cuts"]


def cut_rule(pattern: str) -> CutRule | None:
    """M2's rule for a Peek2 pattern (every pattern ``fast:`` BPE engines have), None if none."""
    return decide({"format": "regex-bpe", "pattern": pattern}).rule


def block_cuts(rule: CutRule, text: str, start: int, end: int, block: int) -> list[int]:
    """Sound cuts of ``text[start:end]`` about ``block`` characters apart: the first cut of the
    rule at or after each multiple of ``block`` past ``start``, searched no further than ``block``
    past it (none found: that block grows) and never within ``block`` of ``end``: ``lopt``'s
    :func:`~tokspec.fast.merge_lopt.cuts_after` over those targets, stopped ``block`` before
    ``end``. O(end - start): one search of the rule's regex per block, on the stored characters (a
    ``str`` subclass's methods are not called)."""
    return cuts_after(text, rule, range(start + block, end - block, block), block, stop=end - block)
