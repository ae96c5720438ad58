"""Engine processes die with tokspec (issue 11, item 1): ``tokspec._procs`` and ``cmd:`` engines.

The engine here forks a grandchild that ignores SIGTERM and sleeps, ignores SIGTERM itself, logs
both pids, and hangs on any text containing "H". After tokspec exits -- normally, by SIGTERM or
by SIGKILL -- neither the engine nor its grandchild may survive (polled with a timeout).
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tokspec import _procs, load_engine
from tokspec.engines.cmd import CmdEngine

ORPHANER = r'''
import json, os, signal, sys, time
log = sys.argv[1]
kid = os.fork()
if kid == 0:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    time.sleep(3600)
    os._exit(0)
with open(log, "a") as f:
    f.write(f"{os.getpid()} {kid}\n")
signal.signal(signal.SIGTERM, signal.SIG_IGN)
print(json.dumps({"tokspec": 1, "name": "orphaner", "version": "1"}), flush=True)
for line in sys.stdin:
    req = json.loads(line)
    if "H" in req["text"]:
        open(log + ".hanging", "w").close()
        time.sleep(3600)
    text = req["text"]
    print(json.dumps({"id": req["id"], "ids": [ord(c) for c in text],
                      "offsets": [[i, i + 1] for i in range(len(text))]}), flush=True)
'''


def _alive(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie (PID 1 of a container may never reap it)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


def _pids(log: Path) -> list[int]:
    return [int(p) for line in log.read_text().splitlines() for p in line.split()] if log.exists() else []


def _wait_all_dead(pids: list[int], seconds: float = 10.0) -> list[int]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        alive = [p for p in pids if _alive(p)]
        if not alive:
            return []
        time.sleep(0.05)
    alive = [p for p in pids if _alive(p)]
    for p in alive:  # do not leave them behind for the rest of the suite
        try:
            os.kill(p, signal.SIGKILL)
        except OSError:
            pass
    return alive


@pytest.fixture
def orphaner(tmp_path: Path) -> tuple[str, Path]:
    script = tmp_path / "orphaner.py"
    script.write_text(ORPHANER, encoding="utf-8")
    log = tmp_path / "pids.log"
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(script))} {shlex.quote(str(log))}", log


def _diff(tmp_path: Path, command: str, texts: list[str], timeout: float) -> subprocess.Popen[bytes]:
    inputs = tmp_path / "inputs.jsonl"
    inputs.write_text("".join(json.dumps({"text": t}) + "\n" for t in texts), encoding="utf-8")
    argv = [sys.executable, "-m", "tokspec", "diff", f"cmd:[timeout={timeout}] {command}",
            f"cmd:[timeout={timeout}] {command}", "--inputs", str(inputs), "--report",
            str(tmp_path / "reports"), "--quiet"]
    return subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def test_normal_exit_leaves_no_engine_or_grandchild(tmp_path: Path, orphaner: tuple[str, Path]) -> None:
    command, log = orphaner
    proc = _diff(tmp_path, command, ["ab", "xHy", "cd"], timeout=0.5)  # a hang: kill + restart
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 1, err  # the hang is an engine fault
    pids = _pids(log)
    assert len(pids) >= 6  # 2 engines + 2 grandchildren, a restarted engine + its grandchild
    assert _wait_all_dead(pids) == []


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_signalled_tokspec_leaves_no_engine_or_grandchild(tmp_path: Path, orphaner: tuple[str, Path],
                                                          sig: signal.Signals) -> None:
    command, log = orphaner
    proc = _diff(tmp_path, command, ["ab", "H"], timeout=60)
    hanging = Path(str(log) + ".hanging")
    deadline = time.monotonic() + 60
    while not hanging.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert hanging.exists(), proc.stderr.read() if proc.stderr else ""
    proc.send_signal(sig)
    proc.communicate(timeout=30)
    if sig == signal.SIGTERM:
        assert proc.returncode == 128 + signal.SIGTERM
    pids = _pids(log)
    assert len(pids) == 4
    assert _wait_all_dead(pids) == []


def test_engine_started_in_a_short_lived_thread_outlives_the_thread(orphaner: tuple[str, Path]) -> None:
    """The parent-death signal follows the forking *thread*: a pool worker that exits must not
    take the engine with it (spawn forks from a long-lived thread)."""
    command, log = orphaner
    box: list[CmdEngine] = []
    worker = threading.Thread(target=lambda: box.append(load_engine(f"cmd:{command}")))  # type: ignore[arg-type]
    worker.start()
    worker.join()
    engine = box[0]
    try:
        time.sleep(0.3)
        assert engine.encode("still here").ids == tuple(ord(c) for c in "still here")
    finally:
        engine.close()
    assert _wait_all_dead(_pids(log)) == []


def test_spawn_run_and_stop(tmp_path: Path) -> None:
    done = _procs.run([sys.executable, "-c", "import sys; print('out'); sys.exit(3)"], capture_output=True,
                      text=True, timeout=30)
    assert done.returncode == 3 and done.stdout == "out\n"
    with pytest.raises(subprocess.TimeoutExpired):
        _procs.run([sys.executable, "-c", "import time; time.sleep(60)"], timeout=0.5)
    missing = _procs.run([str(tmp_path / "no-such-program")], capture_output=True, text=True, timeout=30)
    assert missing.returncode == 127 and "cannot start" in missing.stderr
    proc = _procs.spawn([sys.executable, "-c", "import time; time.sleep(60)"])
    assert proc.pid in _procs.live()
    # 143: the supervisor ended the program; -15: SIGTERM came before the supervisor was set up
    assert _procs.stop(proc) in (128 + signal.SIGTERM, -signal.SIGTERM)
    assert proc.pid not in _procs.live()
