"""Bench rows of HF Unigram ``tokenizer.json`` models converted from sentencepiece (``latency`` suite).

The trained nmt_nfkc + byte-fallback sentencepiece model (``spm-unigram-bytes``) written as a
``tokenizer.json`` with three normalizers: ``converted`` (``Precompiled`` then
``Replace(" {2,}", " ")``: what HF writes for converted sentencepiece models), ``nmt-nfkc``
(``Nmt``, ``NFKC``, the run ``Replace``: what HF's own ``SentencePieceUnigramTokenizer`` writes) and
``albert-like`` (``Replace("``", '"')``, ``NFKD``, ``StripAccents``, ``Lowercase``, ``Precompiled``,
the run ``Replace``), all with ``Metaspace``. ``fast:PATH`` ``encode_ids`` (compiled text to ids)
against HF ``tokenizers`` ``encode``, ids checked equal on every text in the same run:

- ``p50`` / ``p99`` per call over 0.5-2 KB texts (English-like prose and Chinese-like text, and
  texts the normalizers change, ``tokspec.app.bench.latency``'s generators);
- one call on about 2 MB (English-like with normalizing texts mixed in), best of ``repeat``.

Out of scope: models that ship such files (none is installed; the rows use the trained model).
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path
from typing import Any

from tokspec import load_engine
from tokspec.app.bench import BenchRow
from tokspec.app.bench.fast import _exact, english
from tokspec.app.bench.normalizing import normalizing_texts

__all__ = ["converted_rows", "converted_json"]

SUITE = "latency"


def _normalizers(precompiled: str) -> dict[str, Any]:
    pc = {"type": "Precompiled", "precompiled_charsmap": precompiled}
    runs = {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "}
    return {"converted": {"type": "Sequence", "normalizers": [pc, runs]},
            "nmt-nfkc": {"type": "Sequence", "normalizers": [{"type": "Nmt"}, {"type": "NFKC"}, runs]},
            "albert-like": {"type": "Sequence", "normalizers": [
                {"type": "Replace", "pattern": {"String": "``"}, "content": "\""}, {"type": "NFKD"},
                {"type": "StripAccents"}, {"type": "Lowercase"}, pc, runs]}}


def converted_json(kind: str, folder: Path) -> Path:
    """Write the converted model with normalizer ``kind`` (module docstring) into ``folder``."""
    import base64

    from tokspec.formats.models import trained_model
    from tokspec.formats.spm_model import load_spm_model
    m = load_spm_model(trained_model("spm-unigram-bytes"))
    tj = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "post_processor": None,
          "decoder": None, "normalizer": _normalizers(base64.b64encode(m.precompiled_charsmap).decode())[kind],
          "pre_tokenizer": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True},
          "model": {"type": "Unigram", "unk_id": m.unk_id, "byte_fallback": m.byte_fallback,
                    "vocab": [[p, s] for p, s in zip(m.pieces, m.scores)]}}
    path = folder / f"{kind}.json"
    path.write_text(json.dumps(tj), encoding="utf-8")
    return path


def converted_rows(texts: list[str], normalizing: list[str], long_size: int, rounds: int,
                   repeat: int) -> list[BenchRow]:
    """The rows (module docstring)."""
    from tokenizers import Tokenizer

    from tokspec.app.bench.latency import _latency_rows
    rows: list[BenchRow] = []
    long_text = english(long_size // 2, seed=31) + "".join(normalizing_texts(31, long_size // 600, 300))
    with tempfile.TemporaryDirectory() as tmp:
        for kind in ("converted", "nmt-nfkc", "albert-like"):
            path = converted_json(kind, Path(tmp))
            fast = load_engine(f"fast:{path}")
            hf = Tokenizer.from_file(str(path))
            fns = {"fast": fast.encode_ids,  # type: ignore[attr-defined]
                   "HF tokenizers encode": lambda t, hf=hf: hf.encode(t, add_special_tokens=False).ids}
            rows += _latency_rows(f"{kind} 0.5-2KB", f"fast:{kind} encode_ids", fns, texts, rounds)
            rows += _latency_rows(f"{kind} 0.5-2KB normalizing", f"fast:{kind} encode_ids", fns, normalizing, rounds)
            same = fast.encode_ids(long_text).tolist() == fns["HF tokenizers encode"](long_text)  # type: ignore[attr-defined]
            best = {name: min(_once(fn, long_text) for _ in range(repeat)) for name, fn in fns.items()}
            rows.append(BenchRow(SUITE, _exact(f"{kind} one call", same), f"fast:{kind} encode_ids",
                                 "HF tokenizers encode", len(long_text.encode()), best["fast"],
                                 best["HF tokenizers encode"]))
    return rows


def _once(fn: Any, text: str) -> float:
    t0 = time.perf_counter()
    fn(text)
    return time.perf_counter() - t0
