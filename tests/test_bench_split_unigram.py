"""Smoke test of the ``latency`` suite's Split-family HF Unigram rows (``tokspec.app.bench.split_unigram``;
speed itself is reported by ``tokspec bench --suite latency``, never asserted): every bench model
runs compiled, and its rows compare the compiled path, the general path and HF on the same ids."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tokspec.app.bench.split_unigram import PRETOKENIZERS, split_json, split_rows


def test_bench_models_have_their_pretokenizer(tmp_path: Path) -> None:
    for kind, pre in PRETOKENIZERS.items():
        data = json.loads(split_json(kind, tmp_path).read_text(encoding="utf-8"))
        assert data["pre_tokenizer"] == pre and data["model"]["type"] == "Unigram"


def test_split_rows_are_exact_and_complete() -> None:
    pytest.importorskip("tokenizers")
    texts = ["Hello, world!  a-b  c.", "x \u00a0y\u3000z 12,5"]
    rows = split_rows(texts, texts[::-1], 2000, rounds=1, repeat=1)
    assert len(rows) == len(PRETOKENIZERS) * (2 * 2 * 2 + 2)  # 2 text sets x 2 peers x p50/p99, 2 one-call rows
    assert not any("INEXACT" in r.case for r in rows) and {r.baseline for r in rows} == {
        "HF tokenizers encode", "fast general path"}
    assert all(r.subject_s > 0 and r.baseline_s > 0 and r.suite == "latency" for r in rows)
