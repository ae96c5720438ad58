"""``tokspec merge-check``: exit codes 0 / 1 / 2, reports on disk, the JSON summary."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tokspec.app.cli import main


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_lopt_agrees_exit_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    inputs = tmp_path / "in.jsonl"
    inputs.write_text("\n".join(json.dumps({"text": t}) for t in
                                ["hello world, this is text", "a" * 150 + " b", "x  y\n\nz"]) + "\n")
    code, out, _ = _run(capsys, "merge-check", "hf:bert-base-uncased", "--strategy", "lopt",
                        "--inputs", str(inputs), "--chunk-len", "3", "--json",
                        "--report", str(tmp_path / "rep"))
    summary = json.loads(out)
    assert code == 0 and summary["inputs"] == 3 and summary["agreed"] == 3
    assert summary["engines"] == ["hf:bert-base-uncased"] and summary["counterexamples"] == []
    assert not (tmp_path / "rep").exists()


def test_lossy_strategy_exit_1_with_reports(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    inputs = tmp_path / "in.txt"
    inputs.write_text("a" * 130 + "\n")  # plain lines; one 130-letter word is [UNK] serially
    code, out, _ = _run(capsys, "merge-check", "hf:bert-base-uncased", "--strategy", "delimiter",
                        "--inputs", str(inputs), "--chunk-len", "50", "--json",
                        "--report", str(tmp_path / "rep"), "--minimize-seconds", "3")
    assert code == 0  # no whitespace, so delimiter does not cut: exact
    code, out, _ = _run(capsys, "merge-check", "hf:bert-base-uncased", "--strategy", "lopt-paper",
                        "--inputs", str(inputs), "--chunk-len", "50", "--overlap", "30", "--json",
                        "--report", str(tmp_path / "rep"), "--minimize-seconds", "3")
    summary = json.loads(out)
    assert code == 1 and summary["disagreed"] == 1
    found = summary["counterexamples"][0]
    assert Path(found["json"]).is_file() and Path(found["html"]).is_file()
    code, out, _ = _run(capsys, "merge-check", "hf:bert-base-uncased", "--strategy", "lopt-paper",
                        "--inputs", found["json"], "--chunk-len", "50", "--overlap", "30", "--json",
                        "--report", str(tmp_path / "rep2"), "--minimize-seconds", "1")
    assert code == 1  # the report file itself is a valid inputs file and still fails


@pytest.mark.parametrize("argv", [
    ["merge-check", "hf:bert-base-uncased", "--strategy", "nope"],
    ["merge-check", "hf:bert-base-uncased", "--chunk-len", "0"],
    ["merge-check", "hf:bert-base-uncased", "--overlap", "-1"],
    ["merge-check", "hf:bert-base-uncased", "--inputs", "/nonexistent/file.jsonl"],
    ["merge-check", "no-such-engine"],
])
def test_usage_errors_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, *argv)
    assert code == 2 and err.startswith("tokspec: error:")


def test_fuzz_mode_runs_for_the_time_given(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "merge-check", "tiktoken:cl100k_base", "--strategy", "lopt", "--fuzz",
                        "--time", "2", "--json", "--report", str(tmp_path / "rep"))
    summary = json.loads(out)
    assert code == 0 and summary["inputs"] > 10 and summary["agreed"] == summary["inputs"]
