"""Golden files: `tokspec encode` records an engine's outputs once; golden:FILE answers from them, so
another engine is checked with no production library at test time, and a text not recorded is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tokspec import load_engine
from tokspec.app import cli
from tokspec.engines.golden import FORMAT, GoldenFileError, GoldenMissError

TEXTS = ["Hello world", "a\r\n\r\nb", "  spaces   and\ttabs", "naïve café 日本語 🙂", "1234567 it's 'S"]


def _record(tmp_path: Path, engine: str = "tiktoken:cl100k_base") -> tuple[Path, Path]:
    inputs = tmp_path / "inputs.jsonl"
    inputs.write_text("".join(json.dumps({"text": t}) + "\n" for t in TEXTS), encoding="utf-8")
    golden = tmp_path / "golden.jsonl"
    assert cli.main(["encode", engine, "--inputs", str(inputs), "--out", str(golden)]) == 0
    return inputs, golden


def test_golden_file_carries_provenance_and_outputs(tmp_path: Path) -> None:
    _, golden = _record(tmp_path)
    header, *entries = [json.loads(line) for line in golden.read_text(encoding="utf-8").splitlines()]
    real = load_engine("tiktoken:cl100k_base")
    assert header["format"] == FORMAT and header["engine"] == "tiktoken:cl100k_base"
    assert header["library"] == "tiktoken" and header["library_version"] == real.info.library_version
    assert header["vocab_sha256"] == real.info.vocab_sha256
    assert [e["text"] for e in entries] == TEXTS
    for entry in entries:
        enc = real.encode(entry["text"])
        assert entry["ids"] == list(enc.ids or ()) and entry["offsets"] == [list(s) for s in enc.offsets]


def test_golden_engine_agrees_with_the_recorded_engine_and_catches_a_changed_one(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    inputs, golden = _record(tmp_path)
    reports = str(tmp_path / "reports")
    # a second, independent implementation checked against the recording alone
    assert cli.main(["diff", f"golden:{golden}", "reference:cl100k_base", "--inputs", str(inputs),
                     "--workers", "1", "--reports", reports, "--quiet"]) == 0
    lines = golden.read_text(encoding="utf-8").splitlines()
    entry = json.loads(lines[2])
    entry["ids"][0] += 1  # a recording that no longer matches the engine
    lines[2] = json.dumps(entry)
    (tmp_path / "bad.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert cli.main(["diff", f"golden:{tmp_path / 'bad.jsonl'}", "tiktoken:cl100k_base", "--inputs",
                     str(inputs), "--workers", "1", "--reports", reports, "--quiet"]) == 1
    capsys.readouterr()


def test_text_not_in_the_golden_file_is_refused(tmp_path: Path) -> None:
    _, golden = _record(tmp_path)
    engine = load_engine(f"golden:{golden}")
    assert engine.encode("Hello world").ids == load_engine("tiktoken:cl100k_base").encode("Hello world").ids
    with pytest.raises(GoldenMissError, match="'never recorded' is not in the golden file"):
        engine.encode("never recorded")


def test_bad_golden_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "plain.jsonl"
    bad.write_text('{"text": "a"}\n', encoding="utf-8")
    with pytest.raises(GoldenFileError, match="header"):
        load_engine(f"golden:{bad}")
    assert cli.main(["diff", f"golden:{tmp_path / 'missing'}", "tiktoken:cl100k_base", "--inputs", str(bad)]) == 2
    assert "is not an existing golden file" in capsys.readouterr().err


def test_encode_to_stdout(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    inputs, golden = _record(tmp_path)
    capsys.readouterr()
    assert cli.main(["encode", "tiktoken:cl100k_base", "--inputs", str(inputs), "--out", "-"]) == 0
    assert capsys.readouterr().out == golden.read_text(encoding="utf-8")
