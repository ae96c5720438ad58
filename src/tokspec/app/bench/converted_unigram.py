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
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tokspec import load_engine
from tokspec.app.bench import BenchRow
from tokspec.app.bench.fast import _exact, english
from tokspec.app.bench.normalizing import normalizing_texts

if TYPE_CHECKING:
    from tokspec.app.bench.latency import IdsFn

__all__ = ["converted_rows", "converted_json", "models_rows", "mixed_long_text"]

SUITE = "latency"
_HF = "HF tokenizers encode"


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
    return models_rows(("converted", "nmt-nfkc", "albert-like"), converted_json, "{kind}", texts, normalizing,
                       mixed_long_text(long_size, 31), rounds, repeat)


def mixed_long_text(size: int, seed: int) -> str:
    """About ``size`` bytes: English-like text, then normalizing texts (the one-call rows' input)."""
    return english(size // 2, seed=seed) + "".join(normalizing_texts(seed, size // 600, 300))


def models_rows(kinds: Iterable[str], write_json: Callable[[str, Path], Path], label: str, texts: list[str],
                normalizing: list[str], long_text: str, rounds: int, repeat: int, *,
                extra: Callable[[str, Any], dict[str, IdsFn]] | None = None,
                long_peers: tuple[str, ...] = (_HF,), once: frozenset[str] = frozenset()) -> list[BenchRow]:
    """The rows of each bench model ``write_json(kind, folder)`` writes, for each of ``kinds`` (also
    ``tokspec.app.bench.split_unigram``'s). The contestants: ``fast`` (``fast:PATH`` ``encode_ids``, the
    subject, named ``fast:LABEL encode_ids`` with ``LABEL = label.format(kind=kind)``), then those
    ``extra(kind, engine)`` adds, then HF ``tokenizers`` ``encode``. Rows: ``p50``/``p99`` of the subject
    against each other contestant on ``texts`` (case ``LABEL 0.5-2KB``) and on ``normalizing``
    (``LABEL 0.5-2KB normalizing``), then one call on ``long_text`` against each of ``long_peers`` in
    that order (``LABEL one call``): best of ``repeat`` calls (one for the names in ``once``),
    INEXACT unless every contestant gave the subject's ids on it."""
    from tokenizers import Tokenizer

    from tokspec.app.bench.latency import _as_list, _latency_rows
    rows: list[BenchRow] = []
    with tempfile.TemporaryDirectory() as tmp:
        for kind in kinds:
            path = write_json(kind, Path(tmp))
            fast = load_engine(f"fast:{path}")
            hf = Tokenizer.from_file(str(path))
            fns: dict[str, IdsFn] = {"fast": fast.encode_ids,  # type: ignore[attr-defined]
                                     **(extra(kind, fast) if extra else {}),
                                     _HF: _hf_ids(hf)}
            case, subject = label.format(kind=kind), f"fast:{label.format(kind=kind)} encode_ids"
            rows += _latency_rows(f"{case} 0.5-2KB", subject, fns, texts, rounds)
            rows += _latency_rows(f"{case} 0.5-2KB normalizing", subject, fns, normalizing, rounds)
            want = _as_list(fns["fast"](long_text))
            same = all(_as_list(fn(long_text)) == want for name, fn in fns.items() if name != "fast")
            best = {name: min(_once(fn, long_text) for _ in range(1 if name in once else repeat))
                    for name, fn in fns.items()}
            rows += [BenchRow(SUITE, _exact(f"{case} one call", same), subject, peer, len(long_text.encode()),
                              best["fast"], best[peer]) for peer in long_peers]
    return rows


def _hf_ids(hf: Any) -> IdsFn:
    """HF ``tokenizers`` ``encode`` ids of a text, without special tokens."""
    def ids(text: str) -> object:
        return hf.encode(text, add_special_tokens=False).ids
    return ids


def _once(fn: Any, text: str) -> float:
    t0 = time.perf_counter()
    fn(text)
    return time.perf_counter() - t0
