"""Merge counterexample reports: classification, contents, HTML escaping, atomic files."""

from __future__ import annotations

import json
from pathlib import Path

from tokspec import Encoding, load_engine
from tokspec.fast.merge_engines import merge_text
from tokspec.app.merge_report import build_report, classify, first_divergence, render_html, write_report


def test_classify() -> None:
    serial = Encoding.of([1, 2], [(0, 2), (2, 4)])
    assert classify(serial, Encoding.of([1, 2], [(0, 1), (1, 4)]), 4) == "same ids, different offsets"
    assert classify(serial, Encoding.of([1], [(0, 2)]), 4) == "tokens missing"
    assert classify(serial, Encoding.of([1, 5, 2], [(0, 2), (1, 3), (2, 4)]), 4) == "tokens duplicated"
    assert classify(serial, Encoding.of([7, 8], [(0, 3), (3, 4)]), 4) == "tokens different"
    assert first_divergence(serial, serial) is None
    assert first_divergence(serial, Encoding.of([1], [(0, 2)])) == 1


def _failing_report(tmp_path: Path) -> dict:
    eng = load_engine("hf:bert-base-uncased")
    text = "<b>&" + "a" * 101 + "</b>"  # a 101-letter word is one [UNK]; chunks see shorter words
    params = {"chunk_len": 40, "overlap": 30}
    result = merge_text(eng, text, strategy="overlap-filter", **params)
    serial = eng.encode(text)
    assert result.encoding != serial
    return build_report(eng, text, result, serial, params=params,
                        reproduce_path=str(tmp_path / "r.json"))


def test_report_contents(tmp_path: Path) -> None:
    rep = _failing_report(tmp_path)
    assert bytes.fromhex(rep["text_hex"]).decode("utf-8") == rep["text"]
    assert rep["engine"]["vocab_sha256"] and rep["strategy"] == "overlap-filter"
    assert rep["chunks"] and all("tokens" in c for c in rep["chunks"]) and rep["anchors"]
    k = rep["first_divergence"]
    assert rep["side_by_side"]["serial"][0][0] == k
    assert rep["serial"]["ids"][k:k + 1] != rep["merged"]["ids"][k:k + 1] or \
        rep["serial"]["offsets"][k:k + 1] != rep["merged"]["offsets"][k:k + 1]
    assert rep["reproduce"].startswith("tokspec merge-check hf:bert-base-uncased --strategy overlap-filter")


def test_html_escapes_the_input_and_files_are_atomic(tmp_path: Path) -> None:
    rep = _failing_report(tmp_path)
    j, h = write_report(rep, tmp_path / "out")
    page = h.read_text(encoding="utf-8")
    assert "<b>&" not in page and "&lt;b&gt;&amp;" in page
    assert json.loads(j.read_text(encoding="utf-8"))["id"] == rep["id"]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == sorted([j.name, h.name])
    assert render_html(rep) == page
