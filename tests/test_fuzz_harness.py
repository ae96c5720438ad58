"""The fuzz machinery: text domain of fuzzer bytes, diff verdicts, stats parsing, budgets, atomic
reports, and one real atheris run of a mutant through the harness subprocess (end to end)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tokspec import Encoder, Encoding, EngineInfo
from tokspec.fuzz import _findings, run, seeds
from tokspec.fuzz.targets import TARGETS, diff_verdict, target_by_name, text_from_bytes


class _Fixed(Encoder):
    def __init__(self, shift: int = 0, crash: bool = False, no_ids: bool = False, id_shift: int = 0) -> None:
        self.info = EngineInfo("fixed", "pretokenizer" if no_ids else "tokenizer", "test", "0", None)
        self.shift, self.crash, self.no_ids, self.id_shift = shift, crash, no_ids, id_shift

    def _encode(self, text: str) -> Encoding:
        if self.crash:
            raise RuntimeError("boom")
        ids = None if self.no_ids else [i + (self.id_shift if i == len(text) - 1 else 0) for i in range(len(text))]
        return Encoding.of(ids, [(i, i + 1 + (self.shift if i == 0 else 0)) for i in range(len(text))])


def test_text_from_bytes_follows_the_text_domain() -> None:
    assert text_from_bytes("añ😀".encode()) == "añ😀"
    assert text_from_bytes(b"\xff\xfea") == "\ufffd\ufffda"
    assert text_from_bytes(b"\xed\xa0\x80") == "\ud800"  # encoded lone surrogate reaches the engine


def test_diff_verdict_cases() -> None:
    names = ("a", "b")
    assert diff_verdict(names, (_Fixed(), _Fixed()), "xy").holds
    v = diff_verdict(names, (_Fixed(), _Fixed(shift=1)), "xy")
    assert not v.holds and v.witness is not None
    assert v.witness["classification"] == "same ids, different offsets" and v.witness["first_divergence"] == 0
    assert diff_verdict(names, (_Fixed(), _Fixed()), "\ud800").holds  # both reject
    v = diff_verdict(names, (_Fixed(), _Fixed(crash=True)), "xy")
    assert not v.holds and "crash" in v.witness["outputs"]["b"]  # type: ignore[index]
    # agreement is decided on arrays (lean on long texts), exactly as the lists did: ids, offsets,
    # and ids present on one side only all count
    assert diff_verdict(names, (_Fixed(), _Fixed()), "xyz" * 1000).holds
    v = diff_verdict(names, (_Fixed(), _Fixed(id_shift=5)), "xyz")
    assert not v.holds and v.witness["classification"] == "different tokens" and v.witness["first_divergence"] == 2  # type: ignore[index]
    v = diff_verdict(names, (_Fixed(), _Fixed(no_ids=True)), "xyz")
    assert not v.holds and v.witness["outputs"]["b"]["ids"] is None  # type: ignore[index]


def test_targets_have_unique_safe_names() -> None:
    names = [t.name for t in TARGETS]
    assert len(set(names)) == len(names) and all("/" not in n and ":" not in n for n in names)
    with pytest.raises(ValueError, match="unknown fuzz target"):
        target_by_name("nope")


def test_parse_stats() -> None:
    err = ("#1024\tNEW    cov: 40 ft: 100 corp: 5/50b exec/s: 512\n#2048\tDONE   cov: 57 ft: 120\n"
           "stat::number_of_executed_units: 2048\nstat::average_exec_per_sec:     512\n"
           "TOKSPEC-FINDING abcd 1.500 /tmp/x.json\n")
    stats, found, note = run.parse_stats(err)
    assert stats["cov"] == 57 and stats["number_of_executed_units"] == 2048
    assert stats["average_exec_per_sec"] == 512 and found == [("abcd", 1.5, "/tmp/x.json")] and note == ""
    assert run.parse_stats("TOKSPEC-UNAVAILABLE ImportError: x\n")[2].startswith("unavailable")


def test_plan_budget() -> None:
    assert run.plan_budget(600, 20, 2) == pytest.approx(600 * 2 / 20 - 15)
    assert run.plan_budget(10, 20, 2) == 5.0 and run.plan_budget(10, 0, 2) == 0.0


def test_atomic_report_and_ids(tmp_path: Path) -> None:
    p = _findings.write_json_atomic(tmp_path / "a" / "r.json", {"x": "\ud800"})
    assert json.loads(p.read_text())["x"] == "\ud800" and not list(p.parent.glob(".tmp-*"))
    assert _findings.finding_id("x") == _findings.finding_id("x") != _findings.finding_id("y")
    assert _findings.finding_id({"a": 1, "b": 2}) == _findings.finding_id({"b": 2, "a": 1})


def test_seeds_are_deterministic() -> None:
    assert seeds.text_seeds() == seeds.text_seeds() and len(seeds.text_seeds()) > 10
    assert seeds.byte_seeds() == seeds.byte_seeds()


def test_usage_errors_exit_2() -> None:
    with pytest.raises(SystemExit) as exc:
        run.main(["--seconds", "-1"])
    assert exc.value.code == 2


def test_harness_catches_a_mutant_end_to_end(tmp_path: Path) -> None:
    """A real atheris run: the off-by-one mutant is found, reported atomically, and replays."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "seed").write_bytes("Grüße aus Köln".encode())
    env = dict(os.environ, TOKSPEC_FUZZ_REPORT_DIR=str(tmp_path / "reports"), TOKSPEC_FUZZ_STOP_ON_FIRST="1",
               TOKSPEC_FUZZ_CORPORA=str(tmp_path / "corpora"), TOKSPEC_CACHE=str(tmp_path / "cache"))
    # -rss_limit_mb=0: Linux carries a process' peak RSS across exec, so a harness started from a
    # pytest worker that has grown past 2 GB "used" that much before its first input (libFuzzer's
    # default limit is 2048 MB); memory is not what this test is about
    out = subprocess.run([sys.executable, "-m", "tokspec.fuzz.harness", "mutant:offset_off_by_one",
                          "-max_total_time=60", "-print_final_stats=1", "-rss_limit_mb=0",
                          f"-artifact_prefix={tmp_path}/", str(corpus)],
                         capture_output=True, text=True, env=env, timeout=180)
    assert out.returncode == 77, out.stderr[-2000:]
    _, found, _ = run.parse_stats(out.stderr)
    assert len(found) == 1
    report = json.loads(Path(found[0][2]).read_text())
    assert report["minimized"] and len(report["text"]) <= len(report["original_text"])
    replay = subprocess.run([sys.executable, "-m", "tokspec.fuzz.harness", "--replay", found[0][2],
                             "mutant:offset_off_by_one"], capture_output=True, text=True, env=env, timeout=120)
    assert json.loads(replay.stdout.splitlines()[0])["reproduces"] is True


def test_finding_class() -> None:
    assert _findings.finding_class("x", {"classification": "different tokens"}) == "different tokens"
    assert _findings.finding_class("token 3 is out of order with token 2", {}) == \
        _findings.finding_class("token 7 is out of order with token 6", None)


def test_already_minimal_failure_is_reported(tmp_path: Path) -> None:
    """Regression: a failing input that minimization cannot shrink (its minimized id equals its
    raw id) was once dropped as "already seen" and never reported."""
    from types import SimpleNamespace

    from tokspec.spec._verdict import fails, holds
    from tokspec.fuzz import harness

    target = SimpleNamespace(name="selftest--minimal-input", kind="diff", engines=())
    rep = harness._Reporter(target, tmp_path)
    one = harness._text_one_input(target, lambda t: fails("x") if "x" in t else holds("ok"), rep)
    one(b"x")
    assert rep.count == 1
    assert [json.loads(p.read_text())["text"] for p in tmp_path.glob("*.json")] == ["x"]


def test_every_kernel_module_is_left_uninstrumented() -> None:
    """numba cannot compile atheris-instrumented bytecode (TypingError on atheris._trace_branch):
    every module that defines kernels must be on the harness's exclusion list. Found by the CI fuzz
    run: the compiled fast:mon-unigram 'crashed' on every input once its kernel modules were added."""
    from pathlib import Path

    from tokspec.fuzz import harness

    root = Path(__file__).resolve().parents[1]
    folders = {"src/tokspec": "tokspec", "src/tokspec/engines": "tokspec.engines", "fast": "tokspec.fast"}
    with_kernels = {f"{pkg}.{path.stem}" for folder, pkg in folders.items()
                    for path in (root / folder).glob("*.py")
                    if "from tokspec._jit import" in path.read_text(encoding="utf-8")}
    assert with_kernels, "no kernel modules found: the scan is broken"
    missing = {m for m in with_kernels if not m.startswith(harness._NOT_INSTRUMENTED)}
    assert not missing, sorted(missing)
