"""A tokenizer.json written from tiktoken-style ranks the way converters write one (for the tests of
``fast:``/``hf:``/``reference:`` on converted byte-level BPE files). Written here, independently of
``tokspec.reference.bpe_merges_from_ranks``, so the engines under test are not checked against the
reference's own converter.

Merges: every two-token split of a token, grouped by the produced token's id, inside a group ordered
by the parts' ids. Pre-tokenizer: ``Split(pattern, Isolated)`` then ``ByteLevel`` without regex."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from tokspec.fast.hf_bpe_ranks import byte_alphabet


@functools.lru_cache(maxsize=1)
def _to_char() -> dict[int, str]:
    return {b: c for c, b in byte_alphabet().items()}


def visible(token: bytes) -> str:
    """``token`` in the byte-level alphabet of tokenizer.json vocabularies."""
    to_char = _to_char()
    return "".join(to_char[b] for b in token)


def converted_merges(ranks: Mapping[bytes, int]) -> list[list[str]]:
    """The merges a converter writes for ``ranks`` (module docstring). O(sum of token lengths)."""
    merges: list[list[str]] = []
    for tok in sorted(ranks, key=ranks.__getitem__):
        local = [(tok[:k], tok[k:]) for k in range(1, len(tok)) if tok[:k] in ranks and tok[k:] in ranks]
        merges += [[visible(a), visible(b)] for a, b in sorted(local, key=lambda p: (ranks[p[0]], ranks[p[1]]))]
    return merges


def converted_json(ranks: Mapping[bytes, int], pattern: str, *, ignore_merges: bool = True,
                   added: list[dict[str, Any]] | None = None, merges: list[list[str]] | None = None,
                   normalizer: Any = None, decoder: bool = True) -> dict[str, Any]:
    """The whole tokenizer.json (module docstring); ``merges`` replaces the converter's merges."""
    model = {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
             "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": ignore_merges,
             "vocab": {visible(t): r for t, r in sorted(ranks.items(), key=lambda kv: kv[1])},
             "merges": converted_merges(ranks) if merges is None else merges}
    pre = {"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": pattern}, "behavior": "Isolated", "invert": False},
        {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]}
    return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": added or [],
            "normalizer": normalizer, "pre_tokenizer": pre, "post_processor": None,
            "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True}
            if decoder else None, "model": model}
