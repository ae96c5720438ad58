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
import tempfile
from pathlib import Path
from typing import Any

from tokspec import load_engine
from tokspec.app.bench import BenchRow
from tokspec.app.bench.converted_unigram import _once, converted_json
from tokspec.app.bench.fast import _exact, english
from tokspec.app.bench.normalizing import normalizing_texts

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
    from tokenizers import Tokenizer

    from tokspec.app.bench.latency import _latency_rows
    rows: list[BenchRow] = []
    long_text = english(long_size // 2, seed=37) + "".join(normalizing_texts(37, long_size // 600, 300))
    with tempfile.TemporaryDirectory() as tmp:
        for kind in PRETOKENIZERS:
            path = split_json(kind, Path(tmp))
            fast = load_engine(f"fast:{path}")
            if getattr(fast, "_compiled", None) is None:
                raise RuntimeError(f"bench model kind={kind!r} has no compiled plan")
            general = copy.copy(fast)
            general._identity = general._compiled = None  # type: ignore[attr-defined]
            hf = Tokenizer.from_file(str(path))
            fns = {"fast": fast.encode_ids,  # type: ignore[attr-defined]
                   "fast general path": general.encode_ids,  # type: ignore[attr-defined]
                   "HF tokenizers encode": lambda t, hf=hf: hf.encode(t, add_special_tokens=False).ids}
            subject = f"fast:split-{kind} encode_ids"
            rows += _latency_rows(f"split-{kind} 0.5-2KB", subject, fns, texts, rounds)
            rows += _latency_rows(f"split-{kind} 0.5-2KB normalizing", subject, fns, normalizing, rounds)
            want = fns["HF tokenizers encode"](long_text)
            same = all(list(fn(long_text)) == want for fn in (fns["fast"], fns["fast general path"]))
            best = {name: min(_once(fn, long_text) for _ in range(1 if name == "fast general path" else repeat))
                    for name, fn in fns.items()}
            for peer in ("HF tokenizers encode", "fast general path"):
                rows.append(BenchRow(SUITE, _exact(f"split-{kind} one call", same), subject, peer,
                                     len(long_text.encode()), best["fast"], best[peer]))
    return rows
