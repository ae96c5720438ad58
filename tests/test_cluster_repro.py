"""Findings clustered by cause, the window-first shrinker, replayable records, raw crash files (issue 26)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tokspec import Encoder, Encoding, load_engine
from tokspec.app.finder import Finder, minimized
from tokspec.cluster import cause_of
from tokspec.diff import compare

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
DIGITS = "tokspec.fuzz.authored_bugs:digits_by_two"
LETTERS = "tokspec.fuzz.authored_bugs:ascii_letters"


@pytest.fixture(scope="module")
def tk() -> Encoder:
    return load_engine("tiktoken:cl100k_base")


def _two_bugs() -> Encoder:
    """cl100k with both pattern slips of digits_by_two and ascii_letters: two bugs in one engine."""
    from tokspec.fuzz.authored_bugs import _CL100K, _Cl100k

    pattern = _CL100K.replace(r"\p{N}{1,3}+", r"\p{N}{1,2}+", 1).replace(r"\p{L}++", r"[A-Za-z]++", 1)
    return _Cl100k("two_bugs", "digits by two and ASCII letters", pattern)


def test_findings_of_one_bug_are_one_cause_and_two_bugs_two(tk: Encoder) -> None:
    finder = Finder(_two_bugs(), tk, max_findings=10, shrink_tests=300)
    for text in ("x 12345 y", "999", "a1234b", "price 100000", "0.12345"):
        finder.on_text(text)
    assert len(finder.clusters) == 1 and finder.clusters.findings == 5 and len(finder.findings) == 1
    for text in ("naïve", "Straße und Öl", "café"):
        finder.on_text(text)
    assert len(finder.clusters) == 2 and len(finder.findings) == 2
    assert sorted(finder.clusters.members.values()) == [3, 5]
    assert finder.clusters.summary() == "8 findings in 2 causes"
    names = list(finder.clusters.names.values())
    assert "non-ASCII letter" in names[1] and names[0] != names[1]


def test_cause_names_speak_a_maintainers_words(tk: Encoder) -> None:
    spaced = load_engine("tokspec.fuzz.authored_bugs:whitespace_no_lookahead")
    c = compare(spaced, tk, "a\u00a0 b")
    assert not c.agree
    nbsp = cause_of(spaced, tk, c)
    assert "is whitespace to one engine only" in nbsp.name or "pretoken" in nbsp.name
    long_path = _long_path()
    causes = set()
    for n in (60, 75, 130):  # one bug ("long pieces take another path"), three texts: one cause
        c = compare(long_path, tk, "a " + "x" * n + " b")
        assert not c.agree
        causes.add(cause_of(long_path, tk, c))
    assert len({cause.key for cause in causes}) == 1 and "long pieces" in causes.pop().name
    c = compare(load_engine(DIGITS), tk, "٣٤٥٦")
    assert "non-ASCII digit" in cause_of(load_engine(DIGITS), tk, c).name or "numbers" in cause_of(
        load_engine(DIGITS), tk, c).name


def _long_path() -> Encoder:
    """A planted bug: pretokens of 50 characters or more are encoded as two halves."""
    from tokspec.fuzz.authored_bugs import _Cl100k

    class _LongPath(_Cl100k):
        def ids(self, text: str) -> list[int]:
            out: list[int] = []
            for m in self.pattern.finditer(text):
                piece = m.group()
                halves = [piece[:len(piece) // 2], piece[len(piece) // 2:]] if len(piece) >= 50 else [piece]
                for h in halves:
                    out += self.enc.encode_ordinary(h)
            return out

    return _LongPath("long_path", "long pieces take another path")


class _Counting(Encoder):
    def __init__(self, inner: Encoder) -> None:
        self.inner, self.info, self.calls = inner, inner.info, 0

    def _encode(self, text: str) -> Encoding:
        self.calls += 1
        return self.inner.encode(text)


def test_window_first_shrinks_600k_chars_to_a_tiny_witness(tk: Encoder) -> None:
    text = "a " * 150_000 + "x 12345 y" + " b" * 150_000
    assert len(text) > 600_000
    counting = _Counting(tk)
    c = compare(load_engine(DIGITS), counting, text)
    assert not c.agree
    small = minimized(load_engine(DIGITS), counting, c, seconds=120)
    assert len(small.text) <= 4 and compare(load_engine(DIGITS), tk, small.text).classification == c.classification
    assert counting.calls < 60  # a window of a few characters, then ddmin on it: no half-megabyte texts


def _diff(*argv: str) -> tuple[int, dict[str, Any]]:
    import argparse

    from tokspec.app.cli_diff import add_arguments, run

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    out, err = io.StringIO(), io.StringIO()
    code = run(parser.parse_args([*argv, "--workers", "1", "--quiet", "--json"]), out=out, err=err)
    return code, json.loads(out.getvalue()) if out.getvalue() else {"error": err.getvalue()}


def test_file_mode_writes_one_record_per_cause(tmp_path: Path) -> None:
    inputs = tmp_path / "in.jsonl"
    inputs.write_text("".join(json.dumps({"text": t}) + "\n" for t in
                              ("x 12345 y", "999", "plain", "a1234b", "price 100000")), encoding="utf-8")
    code, s = _diff("tiktoken:cl100k_base", DIGITS, "--inputs", str(inputs), "--report", str(tmp_path / "r"))
    assert code == 1 and s["disagreed"] == 4 and len(s["counterexamples"]) == 1
    assert [c["findings"] for c in s["causes"]] == [4]
    assert len(list((tmp_path / "r").iterdir())) == 1


def test_fuzz_runs_to_its_budget_and_counts_causes(tmp_path: Path) -> None:
    code, s = _diff("tiktoken:cl100k_base", DIGITS, "--fuzz", "--time", "2", "--max-findings", "3",
                    "--report", str(tmp_path / "r"), "--shrink-time", "5")
    assert code == 1
    findings = sum(c["findings"] for c in s["causes"])
    assert len(s["causes"]) <= 3 and findings > len(s["causes"])  # many findings, few causes
    assert s["seconds"] >= 2.0  # the run was not cut after a few findings
    record = json.loads(Path(s["counterexamples"][0]).read_text(encoding="utf-8"))
    prov = record["provenance"]
    assert prov["engines_typed"] == ["tiktoken:cl100k_base", DIGITS] and prov["seed"] == 0
    assert prov["generator"] and prov["tokspec_version"] and record["cause"]["name"]


def test_replay_command_works_as_printed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", str(EXAMPLES))
    monkeypatch.syspath_prepend(str(EXAMPLES))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "in.txt").write_text("a\n\nb\n", encoding="utf-8")
    Path("in.txt").write_text("one\n\ntwo\n", encoding="utf-8")
    inputs = tmp_path / "in.jsonl"
    inputs.write_text(json.dumps({"text": "one\n\ntwo"}) + "\n", encoding="utf-8")
    code, s = _diff("tiktoken:cl100k_base", "buggy_python_engine:engine", "--inputs", "in.jsonl")
    assert code == 1
    record = json.loads(Path(s["counterexamples"][0]).read_text(encoding="utf-8"))
    command = record["reproduce"]
    assert command.startswith(f"PYTHONPATH={EXAMPLES} tokspec diff tiktoken:cl100k_base buggy_python_engine:engine")
    assert record["provenance"]["env"] == {"PYTHONPATH": str(EXAMPLES)}
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PATH"] = f"{Path(sys.executable).parent}:{env.get('PATH', '')}"
    done = subprocess.run(["bash", "-c", command], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    assert "1 inputs, 0 agreed, 1 disagreed" in done.stdout


def test_raw_crash_files_replay_as_the_harness_decodes(tmp_path: Path) -> None:
    crash = tmp_path / "crash-0123"
    crash.write_bytes(b"ab\xff 12345")
    code, s = _diff("tiktoken:cl100k_base", DIGITS, "--inputs", str(crash), "--raw", "--report", str(tmp_path / "r"))
    assert code == 1 and s["inputs"] == 1
    assert json.loads(Path(s["counterexamples"][0]).read_text(encoding="utf-8"))["text"] == "ab\ufffd 12345"
    code, s = _diff("tiktoken:cl100k_base", DIGITS, "--inputs", str(crash), "--report", str(tmp_path / "r"))
    assert code == 2 and "not valid UTF-8" in s["error"]


def test_a_crash_message_says_what_differs(tk: Encoder) -> None:
    from tokspec.fuzz._harness_report import _crash_detail
    from tokspec.fuzz.targets import diff_verdict, pair_target

    names = ("tiktoken:cl100k_base", DIGITS)
    verdict = diff_verdict(names, (tk, load_engine(DIGITS)), "x 12345")
    message = _crash_detail(verdict.explanation, verdict.witness, pair_target(*names))
    assert "token #2" in message and "at character 2 U+0031 (Nd)" in message and "text='12'" in message
    assert f"tokspec diff {names[0]} {names[1]} --inputs CRASH_FILE --raw" in message
