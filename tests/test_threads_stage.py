"""The concurrency stage of ``tokspec diff`` and ``check_against`` (issue 24, ``tokspec.app.threads_stage``).

Yardstick: ``shared_scratch`` (exact alone, a list on ``self`` shared by every call) must be found,
minimized to two threads and a short pair, and replayed from its record; its twin
``local_scratch`` must pass; declared-unsafe and ``cmd:`` engines are skipped and said so.
"""

from __future__ import annotations

import argparse
import io
import json
import time
from pathlib import Path

import pytest

from tokspec import Encoder, Encoding, EngineInfo, load_engine
from tokspec.app import cli_diff
from tokspec.app.pytest_plugin import check_against
from tokspec.app.threads_stage import (CLASSIFICATION, THREADS_ENV, default_threads, read_thread_record,
                                       run_stage, sample_texts, stage_threads)
from tokspec.concurrency import PROBE_TEXTS, concurrency_fault
from tokspec.errors import TokspecError

HAZ = "tokspec.fuzz.authored_hazards:"


class Unsafe(Encoder):
    info = EngineInfo("toy:unsafe", "tokenizer", "toy", "0", None, thread_safe=False)

    def _encode(self, text: str) -> Encoding:
        raise AssertionError("a declared-unsafe engine is never called by the stage")


def test_sample_takes_the_longest_and_a_spread_within_the_cap() -> None:
    texts = [f"t{i}" * (i + 1) for i in range(100)] + ["", "t0"]
    got = sample_texts(texts, long=2, spread=5, max_chars=10**6)
    assert got[:2] == [texts[99], texts[98]]
    assert len(got) == 7 and len(set(got)) == 7 and "" not in got
    capped = sample_texts(["x" * 500, "y" * 300, "z"], long=1, spread=5, max_chars=600)
    assert capped == ["x" * 500, "y" * 100] and sum(map(len, capped)) == 600
    assert default_threads() >= 3


def test_stage_finds_minimizes_and_records_the_shared_scratch(tmp_path: Path) -> None:
    unsafe, twin = load_engine(HAZ + "shared_scratch"), load_engine(HAZ + "local_scratch")
    for _ in range(3):  # a race: seen 20 times in 20 here, missed once under heavy load; retry
        stage = run_stage((unsafe, twin, twin, Unsafe()), list(PROBE_TEXTS), threads=4, report=tmp_path)
        if stage.faults:
            break
    assert list(stage.faults) == [unsafe.info.name] and len(stage.records) == 1
    fault = stage.faults[unsafe.info.name]
    assert fault.threads == 2 and len(fault.texts) == 2
    assert any("toy:unsafe: skipped: declared thread_safe=False" in n for n in stage.notes)
    assert sum(twin.info.name in n for n in stage.notes) == 1  # an engine given twice runs once
    meta, texts = read_thread_record(stage.records[0])
    assert meta["classification"] == CLASSIFICATION and meta["threads"] == 2 and texts == fault.texts
    assert meta["reproduce"].endswith("--threads 2") and meta["engine"]["name"] == unsafe.info.name
    assert any(concurrency_fault(unsafe, texts, threads=2, rounds=20) for _ in range(3))  # replays


def test_a_stage_out_of_time_still_records_the_fault_unminimized(tmp_path: Path) -> None:
    unsafe = load_engine(HAZ + "shared_scratch")
    for _ in range(3):  # a race (above)
        stage = run_stage((unsafe,), list(PROBE_TEXTS), threads=4, report=tmp_path, minimize_by=time.monotonic())
        if stage.faults:
            break
    fault = stage.faults[unsafe.info.name]
    assert fault.threads == 4 and len(stage.records) == 1  # as found: no time to shrink it
    assert any("NOT THREAD-SAFE" in n and "minimization cut short by a time bound" in n for n in stage.notes)
    assert read_thread_record(stage.records[0])[1] == fault.texts


def test_stage_skips_cmd_engines_and_threads_below_two(tmp_path: Path) -> None:
    class Cmd(Unsafe):
        info = EngineInfo("cmd:python3 x.py", "tokenizer", "toy", "0", None)

    stage = run_stage((Cmd(),), ["abc"], threads=4, report=tmp_path)
    assert stage.faults == {} and "exempt" in stage.notes[0]
    assert run_stage((Cmd(),), ["abc"], threads=0, report=None).notes == ["concurrency stage skipped (--threads 0)"]


def _diff(argv: list[str]) -> tuple[int, str, str]:
    parser = argparse.ArgumentParser()
    cli_diff.add_arguments(parser)
    out, err = io.StringIO(), io.StringIO()
    return cli_diff.run(parser.parse_args(argv), out=out, err=err), out.getvalue(), err.getvalue()


def test_diff_fuzz_finds_the_shared_scratch_and_replays_it(tmp_path: Path) -> None:
    report = tmp_path / "rep"
    code, out, err = _diff([HAZ + "shared_scratch", "tiktoken:cl100k_base", "--fuzz", "--time", "2",
                            "--workers", "1", "--report", str(report), "--json", "--threads", "4"])
    summary = json.loads(out)
    assert code == 1 and summary["classifications"] == {CLASSIFICATION: 1}
    record = next(p for p in summary["counterexamples"] if p.endswith(".jsonl"))
    meta, _ = read_thread_record(record)
    # the record is an inputs file: the diff of the engine with itself replays the stage on it
    for attempt in range(10):  # a race (above): one replay is one concurrency check, which can miss it (3 missed on a loaded CI run)
        code, out, _ = _diff([HAZ + "shared_scratch", HAZ + "shared_scratch", "--inputs", record,
                              "--threads", str(meta["threads"]), "--report", str(tmp_path / f"again{attempt}")])
        if code == 1:
            break
    assert code == 1 and CLASSIFICATION in out
    code, out, err = _diff([HAZ + "shared_scratch", "tiktoken:cl100k_base", "--inputs", record, "--threads", "0",
                            "--report", str(tmp_path / "none")])
    assert code == 0 and "threads:" not in err


def test_diff_threads_option_is_checked() -> None:
    code, _, err = _diff(["tiktoken:cl100k_base", "tiktoken:cl100k_base", "--fuzz", "--threads", "-1"])
    assert code == 2 and "--threads must be >= 0" in err


def test_diff_passes_the_clean_twin(tmp_path: Path) -> None:
    code, out, err = _diff([HAZ + "local_scratch", "tiktoken:cl100k_base", "--fuzz", "--time", "2",
                            "--workers", "1", "--report", str(tmp_path), "--json", "--threads", "4"])
    notes = json.loads(out)["concurrency"]
    assert code == 0 and "threads:" not in err  # notes only in the summary
    assert len(notes) == 2 and notes[0].startswith(HAZ + "local_scratch: ") and notes[1].startswith("tiktoken:")
    assert all("threads x 12 texts x 3 rounds agree with serial encoding" in n for n in notes), notes


class ExitsInThreads(Encoder):
    """Alone fine; under threads the second concurrent call raises SystemExit (a hostile engine)."""

    info = EngineInfo("toy:exits", "tokenizer", "toy", "0", None)

    def __init__(self) -> None:
        import threading

        self.busy = threading.Lock()

    def _encode(self, text: str) -> Encoding:
        if not self.busy.acquire(blocking=False):
            raise SystemExit(7)
        try:
            return Encoding.of([ord(c) for c in text], [(i, i + 1) for i in range(len(text))])
        finally:
            self.busy.release()


def test_a_system_exit_under_threads_is_a_finding_not_an_exit(tmp_path: Path) -> None:
    stage = run_stage((ExitsInThreads(),), ["abc" * 2000, "de" * 3000], threads=4, report=tmp_path,
                      minimize_by=time.monotonic() + 5)  # the finding, not its minimization (minutes here)
    fault = stage.faults["toy:exits"]
    assert fault.kind == "raised" and fault.detail.startswith("SystemExit: 7")


def test_check_against_fails_on_the_shared_scratch(tmp_path: Path) -> None:
    # the witness's size depends on the time the bounded minimization gets (a loaded CI machine gave
    # it none); that minimization reaches 2 threads over 2 texts is test_concurrency's to check
    with pytest.raises(AssertionError, match=r"is not thread-safe: \d+ threads over \d+ texts"):
        check_against(HAZ + "shared_scratch", "tiktoken:cl100k_base", max_examples=0, reports=tmp_path, threads=4)
    check_against(HAZ + "local_scratch", "tiktoken:cl100k_base", max_examples=0, reports=tmp_path, threads=4)


def test_thread_count_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(THREADS_ENV, "3")
    assert stage_threads(None) == 3 and stage_threads(5) == 5 and stage_threads(0) == 0
    monkeypatch.setenv(THREADS_ENV, " ")
    assert stage_threads(None) == default_threads()
    for bad in ("-1", "x", "2.5"):
        monkeypatch.setenv(THREADS_ENV, bad)
        with pytest.raises(TokspecError, match=rf"TOKSPEC_THREADS={bad!r} is not a thread count"):
            stage_threads(None)
    code, _, err = _diff(["tiktoken:cl100k_base", "tiktoken:cl100k_base", "--fuzz", "--time", "1"])
    assert code == 2 and "TOKSPEC_THREADS='2.5'" in err  # before any engine loads
