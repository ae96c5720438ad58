"""Replay every merge counterexample stored in ``corpora/merge/``: each test id is the report id.

For each report: the engine still has the recorded vocabulary, serial encoding still gives the
recorded output, the strategy (deterministic) still gives the recorded merged output, the two still
differ with the recorded classification, and tokspec's ``lopt`` on the same text and chunk length
equals serial encoding.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tokspec import Encoding, load_engine
from tokspec.fast.merge_engines import merge_text
from tokspec.app.merge_report import classify

CORPUS = Path(__file__).resolve().parents[1] / "corpora" / "merge"


def _reports() -> list[dict[str, Any]]:
    out = []
    for path in sorted(CORPUS.glob("*.json")):
        rep = json.loads(path.read_text(encoding="utf-8"))
        if rep.get("kind") == "merge-counterexample":
            rep["_path"] = path
            out.append(rep)
    return out


def _enc(d: dict[str, Any]) -> Encoding:
    return Encoding.of(d["ids"], [tuple(o) for o in d["offsets"]])


def test_corpus_covers_every_published_strategy_and_family() -> None:
    seen = {(r["strategy"], r["engine"]["name"]) for r in _reports()}
    for strategy in ("lopt-paper", "overlap-filter", "id-lcs", "delimiter"):
        for engine in ("tiktoken:cl100k_base", "hf:bert-base-uncased", "hf:mon-unigram"):
            assert (strategy, engine) in seen, (strategy, engine)


@pytest.mark.parametrize("rep", _reports(), ids=lambda r: r["id"])
def test_replay(rep: dict[str, Any]) -> None:
    engine = load_engine(rep["engine"]["name"])
    assert engine.info.vocab_sha256 == rep["engine"]["vocab_sha256"]
    text = rep["text"]
    assert bytes.fromhex(rep["text_hex"]).decode("utf-8") == text
    serial = engine.encode(text)
    assert serial == _enc(rep["serial"])
    params = rep["params"]
    merged = merge_text(engine, text, strategy=rep["strategy"], chunk_len=params["chunk_len"],
                        overlap=params["overlap"]).encoding
    assert merged == _enc(rep["merged"]) and merged != serial
    assert classify(serial, merged, len(text)) == rep["classification"]
    assert rep["_path"].with_suffix(".html").is_file()
    assert merge_text(engine, text, strategy="lopt", chunk_len=params["chunk_len"]).encoding == serial
