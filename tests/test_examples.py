"""Following docs/tutorial.md catches the bugs of the example engines, with minimized counterexamples.

Each test runs the tutorial's command (in-process, same arguments) and then checks the records it
wrote against the real engines: the stored outputs are what the engines produce, the engines do
disagree on the stored text, and the text is 1-minimal for its kind of disagreement.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from tokspec import Encoder, load_engine
from tokspec.app.cli import main as tokspec_main
from tokspec.corpus import write_inputs
from tokspec.diff import compare

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
PY = shlex.quote(sys.executable)


def _diff(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any], list[dict[str, Any]]]:
    code = tokspec_main(["diff", *argv, "--json", "--quiet"])
    summary = json.loads(capsys.readouterr().out)
    records = [json.loads(Path(p).read_text(encoding="utf-8")) for p in summary["counterexamples"]]
    return code, summary, records


def _assert_minimal(a: Encoder, b: Encoder, record: dict[str, Any]) -> None:
    text, kind = record["text"], record["classification"]
    c = compare(a, b, text)
    assert c.classification == kind
    if c.a.encoding is not None:
        assert record["outputs"]["a"]["ids"] == list(c.a.encoding.ids or ())
        assert record["outputs"]["a"]["offsets"] == [list(o) for o in c.a.encoding.offsets]
    for i in range(len(text)):
        assert compare(a, b, text[:i] + text[i + 1:]).classification != kind, (text, i)


def test_tutorial_python_engine_bug_is_caught(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.syspath_prepend(str(EXAMPLES))
    code, summary, records = _diff(capsys, "tiktoken:cl100k_base", "buggy_python_engine:engine",
                                   "--fuzz", "--time", "20", "--max-findings", "2",
                                   "--report", str(tmp_path / "rep"))
    # one line-break bug: one cause (issue 26), however many texts showed it
    assert code == 1 and summary["disagreed"] >= 1 and len(records) == len(summary["causes"]) >= 1
    a, b = load_engine("tiktoken:cl100k_base"), load_engine("buggy_python_engine:engine")
    for record in records:
        assert record["classification"] == "different segmentation"
        assert len(record["text"]) <= 4 and any(c in record["text"] for c in "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")
        _assert_minimal(a, b, record)


def test_tutorial_cmd_engine_bug_is_caught(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    name = f"cmd:{PY} {shlex.quote(str(EXAMPLES / 'buggy_cmd_engine.py'))}"
    code, summary, records = _diff(capsys, "tiktoken:cl100k_base", name, "--fuzz", "--time", "20",
                                   "--max-findings", "1", "--report", str(tmp_path / "rep"))
    assert code == 1 and len(records) == 1
    record = records[0]
    assert record["classification"] == "decoded text differs"
    assert record["text"].isspace() and len(record["text"]) == 1
    assert record["outputs"]["b"]["ids"] == []  # the stripped text has no tokens
    a, b = load_engine("tiktoken:cl100k_base"), load_engine(name)
    try:
        _assert_minimal(a, b, record)
    finally:
        b.close()


def test_crashing_and_hanging_cmd_engine_is_reported_and_run_finishes(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    inputs = tmp_path / "inputs.jsonl"
    write_inputs(inputs, ["hello", "smile \U0001F642 please", "one\ttab", "bye", "still alive"])
    name = f"cmd:[timeout=1] {PY} {shlex.quote(str(EXAMPLES / 'crashy_cmd_engine.py'))}"
    code, summary, records = _diff(capsys, "tiktoken:cl100k_base", name, "--inputs", str(inputs),
                                   "--report", str(tmp_path / "rep"))
    assert code == 1
    assert (summary["inputs"], summary["agreed"], summary["faults"]) == (5, 3, 2)
    faults = {r["text"]: r["outputs"]["b"]["fault"] for r in records}
    assert "crashed" in faults["smile \U0001F642 please"] and "exit status 3" in faults["smile \U0001F642 please"]
    assert "hung (no reply within 1s)" in faults["one\ttab"]
