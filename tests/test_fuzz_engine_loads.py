"""Issue 26, friction 6: the fuzz runner loads engines only where they are needed: once in each
harness (worker) process, never in the runner itself, and once more -- for ALL of a target's new
reports together -- in the fresh process that confirms them. Counted with a toy engine that records
every construction (``tests/toy_engines/toy_count_engine.py``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from tokspec.fuzz._confirm import store_new
from tokspec.fuzz._schedule import TargetRun
from tokspec.fuzz.targets import target_by_name

TOYS = Path(__file__).resolve().parent / "toy_engines"
PAIR = 'pair:["toy_count_engine:good", "toy_count_engine:bad"]'


def _loads(path: Path) -> list[tuple[str, int]]:
    if not path.exists():
        return []
    return [(name, int(pid)) for name, pid in (line.split() for line in path.read_text().splitlines())]


@pytest.fixture()
def toy_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    loads = tmp_path / "loads"
    monkeypatch.setenv("TOY_LOADS", str(loads))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(TOYS), os.environ.get("PYTHONPATH", "")]))
    monkeypatch.setenv("TOKSPEC_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("TOKSPEC_FUZZ_CORPORA", str(tmp_path / "corpora"))
    return loads


def test_new_reports_are_confirmed_in_one_process_with_one_load(tmp_path: Path, toy_env: Path) -> None:
    target = target_by_name(PAIR)
    reports = tmp_path / "run" / "reports" / target.name
    reports.mkdir(parents=True)
    texts = {"r-x": "axb", "r-z": "azb", "r-ok": "abc"}  # two failing, one that does not reproduce
    for fid, text in texts.items():
        (reports / f"{fid}.json").write_text(json.dumps({"id": fid, "target": target.name, "text": text}))
    run = TargetRun(target.name, 1.0, [])
    confirmed = store_new(run, tmp_path / "run", time.monotonic() + 60, PAIR)
    assert sorted(confirmed) == ["r-x", "r-z"]
    loads = _loads(toy_env)
    assert Counter(name for name, _ in loads) == {"toy_count_engine:good": 1, "toy_count_engine:bad": 1}
    assert os.getpid() not in {pid for _, pid in loads}  # the runner itself never loaded them


def test_a_run_loads_each_engine_once_per_process_and_never_in_the_runner(tmp_path: Path, toy_env: Path) -> None:
    seeds = tmp_path / "corpora" / target_by_name(PAIR).name / "corpus"
    seeds.mkdir(parents=True)
    (seeds / "seed").write_bytes(b"ab")
    proc = subprocess.run([sys.executable, "-m", "tokspec.fuzz.run", "--targets", PAIR, "--seconds", "8",
                           "--property-seconds", "0", "--jobs", "1"], capture_output=True, text=True,
                          timeout=60, cwd=tmp_path)
    out = proc.stdout + proc.stderr
    assert proc.returncode in (0, 1), out
    per_process = Counter(_loads(toy_env))
    assert per_process and set(per_process.values()) == {1}, (per_process, out)  # once per process
    pids = {pid for _, pid in per_process}
    found = "1 new finding(s)" in out or "2 new finding(s)" in out
    assert len(pids) == (2 if found else 1), (per_process, out)  # the harness (+ one confirming replay)
