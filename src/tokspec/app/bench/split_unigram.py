"""Bench rows of HF Unigram ``tokenizer.json`` models whose pretokenizer is made of ``Whitespace``,
``WhitespaceSplit`` or ``Split`` steps (``latency`` suite), compiled since ``tokspec.fast._hf_split_plan``.

The ``nmt-nfkc`` file of ``tokspec.app.bench.converted_unigram`` (the trained nmt_nfkc + byte-fallback
model, HF's ``SentencePieceUnigramTokenizer`` normalizer) with its pre_tokenizer replaced by
(:data:`PRETOKENIZERS`) ``whitespace`` (``Whitespace`` then ``Metaspace``), ``whitespacesplit``
(``WhitespaceSplit`` then ``Metaspace`` with ``prepend_scheme`` ``first``) or ``split``
(punctuation runs isolated, a space merged with the next piece, then ``Metaspace``). Three
contestants, ids checked equal on every text in the same run: ``fast:PATH`` ``encode_ids``
(compiled text to ids), the same engine on its general path (the Python pipeline of
``tokspec.formats.hf_pipeline``, what ran before these pretokenizers were compiled), and HF
``tokenizers`` ``encode``:

- ``p50`` / ``p99`` per call over 0.5-2 KB texts (``tokspec.app.bench.latency``'s prose and
  normalizing texts);
- one call on about 2 MB (English-like with normalizing texts mixed in), best of ``repeat``
  (the general path: one call).

Out of scope: models that ship such files (none is installed; the rows use the trained model).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from tokspec.app.bench import BenchRow
from tokspec.app.bench.converted_unigram import converted_json, mixed_long_text, models_rows

__all__ = ["PRETOKENIZERS", "split_json", "split_rows"]

SUITE = "latency"
_MS = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True}
#: kind -> the pre_tokenizer of the bench model (module docstring).
PRETOKENIZERS: dict[str, Any] = {
    "whitespace": {"type": "Sequence", "pretokenizers": [{"type": "Whitespace"}, _MS]},
    "whitespacesplit": {"type": "Sequence", "pretokenizers": [{"type": "WhitespaceSplit"},
                                                              {**_MS, "prepend_scheme": "first"}]},
    "split": {"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": "\\p{P}+"}, "behavior": "Isolated", "invert": False},
        {"type": "Split", "pattern": {"String": " "}, "behavior": "MergedWithNext", "invert": False}, _MS]},
}


def split_json(kind: str, folder: Path) -> Path:
    """Write the bench model with pre_tokenizer ``kind`` (a key of :data:`PRETOKENIZERS`) into ``folder``."""
    path = converted_json("nmt-nfkc", folder)
    data = json.loads(path.read_text(encoding="utf-8"))
    data["pre_tokenizer"] = PRETOKENIZERS[kind]
    out = folder / f"split-{kind}.json"
    out.write_text(json.dumps(data), encoding="utf-8")
    return out


def split_rows(texts: list[str], normalizing: list[str], long_size: int, rounds: int,
               repeat: int) -> list[BenchRow]:
    """The rows (module docstring)."""
    return models_rows(PRETOKENIZERS, split_json, "split-{kind}", texts, normalizing, mixed_long_text(long_size, 37),
                       rounds, repeat, extra=_general_path, long_peers=("HF tokenizers encode", "fast general path"),
                       once=frozenset({"fast general path"}))


def _general_path(kind: str, fast: Any) -> dict[str, Any]:
    """The same engine on its general path (the Python pipeline), after checking it has a compiled plan."""
    if getattr(fast, "_compiled", None) is None:
        raise RuntimeError(f"bench model kind={kind!r} has no compiled plan")
    general = copy.copy(fast)
    general._identity = general._compiled = None
    return {"fast general path": general.encode_ids}
