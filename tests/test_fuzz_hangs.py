"""Issue 26, friction 6: a hanging engine is recorded once, its input minimized by time, and its
target not run again; the run's last line does not count it as covered. The engine is a toy
(``tests/toy_engines/toy_count_engine.py``) that sleeps on U+0007; the per-call timeout is 1 s."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tokspec.fuzz._hangs import hang_artifact, minimize_hang
from tokspec.fuzz.targets import target_by_name

TOYS = Path(__file__).resolve().parent / "toy_engines"
PAIR = 'pair:["toy_count_engine:good", "toy_count_engine:bad"]'


def _env(tmp_path: Path) -> dict[str, str]:
    return dict(os.environ, TOY_LOADS=str(tmp_path / "loads"), TOY_HANG="4", TOKSPEC_FUZZ_CALL_TIMEOUT="1",
                TOKSPEC_FUZZ_HANG_SECONDS="12", TOKSPEC_CACHE=str(tmp_path / "cache"),
                TOKSPEC_FUZZ_CORPORA=str(tmp_path / "corpora"),
                PYTHONPATH=os.pathsep.join([str(TOYS), os.environ.get("PYTHONPATH", "")]))


def test_hang_artifact_read_from_libfuzzer_output(tmp_path: Path) -> None:
    unit = tmp_path / "timeout-0a1b"
    unit.write_bytes(b"x")
    assert hang_artifact(f"Test unit written to {unit}\n==1== ERROR: libFuzzer: timeout after 2 seconds") == unit
    assert hang_artifact(f"Test unit written to {unit}\n==1== ERROR: libFuzzer: deadly signal") is None


def test_minimize_hang_keeps_only_what_still_hangs(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    for key, value in _env(tmp_path).items():
        monkeypatch.setenv(key, value)
    small, calls = minimize_hang(PAIR, b"abc\x07def", timeout=1.0, budget_s=20)
    assert small == b"\x07" and 0 < calls <= 20


def test_hanging_target_is_recorded_once_minimized_and_not_run_again(tmp_path: Path) -> None:
    target = target_by_name(PAIR)
    seeds = tmp_path / "corpora" / target.name / "corpus"
    seeds.mkdir(parents=True)
    (seeds / "hang").write_bytes(b"ab\x07cd")
    proc = subprocess.run([sys.executable, "-m", "tokspec.fuzz.run", "--targets", PAIR, "--seconds", "10",
                           "--property-seconds", "0", "--jobs", "1"], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path, env=_env(tmp_path))
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out  # a hang is a new finding
    hangs = list((tmp_path / "cache" / "fuzz" / "runs").glob(f"*/hangs/{target.name}/*.json"))
    assert len(hangs) == 1, (hangs, out)  # recorded once
    report = json.loads(hangs[0].read_text())
    assert report["text"] == "\x07" and report["minimized_by"] == "time" and report["original_hex"] == "616207" "6364"
    harness_starts = len(list((tmp_path / "cache" / "fuzz" / "runs").glob(f"*/{target.name}.stderr")))
    assert harness_starts == 1, out
    assert "hung: not run again (input 5 -> 1 bytes" in out, out
    last = [line for line in out.splitlines() if "NOT an all-clear" in line]
    assert last and f"{target.name} (hung: not run again" in last[0], out
