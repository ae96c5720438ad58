"""Issue 28 (hardening, round three), classes 3-7 and 9: processes outliving tokspec, hangs, inputs
from pipes, resource errors, report names, worker failures. (Class 1, caches:
``test_cache_hardening.py``.) Each test pins a case that broke before the fix.
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
import warnings
from pathlib import Path
from typing import Any

import pytest

from tokspec import Encoder, Encoding, EngineInfo
from tokspec.app.cli import main as tokspec_main

TOY = '''
import os, signal, time
from tokspec import Encoder, Encoding, EngineInfo

class Toy(Encoder):
    """One token per character; ``mode`` picks a misbehaviour on the letter it names."""
    def __init__(self, name, mode=""):
        self.info = EngineInfo(name, "tokenizer", "toy", "0", None)
        self.mode = mode

    def _encode(self, text):
        if self.mode == "oom" and "M" in text:
            raise MemoryError()
        if self.mode == "die" and "K" in text:
            os.kill(os.getpid(), signal.SIGKILL)
        if self.mode == "hang":
            time.sleep(3600)
        if self.mode == "whole":
            return Encoding.of([len(text) % 97], [(0, len(text))])
        return Encoding.of([ord(c) for c in text], [(i, i + 1) for i in range(len(text))])

chars = Toy("tokspec_toy_r3:chars")
oom = Toy("tokspec_toy_r3:oom", "oom")
die = Toy("tokspec_toy_r3:die", "die")
hang = Toy("tokspec_toy_r3:hang", "hang")
whole = Toy("tokspec_toy_r3:whole", "whole")
'''


@pytest.fixture
def toy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    (tmp_path / "tokspec_toy_r3.py").write_text(TOY, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    sys.modules.pop("tokspec_toy_r3", None)
    return "tokspec_toy_r3"


def _jsonl(texts: list[str]) -> bytes:
    return "".join(json.dumps({"text": t}) + "\n" for t in texts).encode()


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


def _descendants(root: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rpartition(")")[2].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    found, todo = set(), [root]
    while todo:
        for kid in children.get(todo.pop(), []):
            if kid not in found:
                found.add(kid)
                todo.append(kid)
    return found


def _kill_all(pids: set[int]) -> None:
    for p in pids:
        try:
            os.kill(p, signal.SIGKILL)
        except OSError:
            pass


# ----------------------------------------------------------------------------- 5. inputs from pipes

N_PIPED = 3000


def _diff_argv(toy: str, inputs: str) -> list[str]:
    return [sys.executable, "-m", "tokspec", "diff", f"{toy}:chars", f"{toy}:chars", "--inputs", inputs,
            "--workers", "1", "--json"]


def _summary(out: bytes) -> dict[str, Any]:
    return json.loads(out.decode().strip().splitlines()[-1])  # type: ignore[no-any-return]


@pytest.mark.parametrize("how", ["dash", "dev-stdin", "fifo", "process-substitution"])
def test_inputs_from_a_pipe_are_read_once(how: str, toy: str, tmp_path: Path) -> None:
    """``-``, ``/dev/stdin``, a FIFO and ``<(cmd)``: every piped line is an input (before: "holds no
    input", "line 1: not valid JSON", or a hang -- the path was opened three times)."""
    data = _jsonl([f"text {i}" for i in range(N_PIPED)])
    source = tmp_path / "inputs.jsonl"
    source.write_bytes(data)
    if how in ("dash", "dev-stdin"):
        proc = subprocess.run(_diff_argv(toy, "-" if how == "dash" else "/dev/stdin"), input=data,
                              capture_output=True, timeout=120)
    elif how == "fifo":
        fifo = tmp_path / "fifo"
        os.mkfifo(fifo)
        writer = threading.Thread(target=lambda: fifo.write_bytes(data), daemon=True)
        writer.start()
        try:
            proc = subprocess.run(_diff_argv(toy, str(fifo)), capture_output=True, timeout=120)
        finally:
            if writer.is_alive():  # unblock the writer if tokspec never opened the FIFO
                os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    else:
        cmd = " ".join(shlex.quote(a) for a in _diff_argv(toy, "PLACEHOLDER")).replace(
            "PLACEHOLDER", f"<(cat {shlex.quote(str(source))})")
        proc = subprocess.run(["bash", "-c", cmd], capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr.decode()
    summary = _summary(proc.stdout)
    assert summary["inputs"] == N_PIPED and summary["agreed"] == N_PIPED, summary


# ----------------------------------------------------------------------------- 6. resource errors


def test_a_line_over_the_input_limit_is_a_setup_error(toy: str, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """Stands for the 2 GiB single line (limit lowered to 1000 bytes): exit 2 naming the limit,
    before the line is held whole; no record."""
    monkeypatch.setenv("TOKSPEC_MAX_INPUT_BYTES", "1000")
    inputs = tmp_path / "in.txt"
    inputs.write_text("short\n" + "x" * 5000 + "\nafter\n", encoding="utf-8")
    code = tokspec_main(["diff", f"{toy}:chars", f"{toy}:oom", "--inputs", str(inputs),
                         "--report", str(tmp_path / "rep"), "--workers", "1"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "TOKSPEC_MAX_INPUT_BYTES=1000" in err and "line 2" in err and err.count("\n") == 1, err
    assert not (tmp_path / "rep").exists() or not list((tmp_path / "rep").iterdir())


def test_out_of_memory_in_an_engine_is_a_setup_error(toy: str, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """Before: the ``MemoryError`` was filed as an engine fault (exit 1, a record)."""
    inputs = tmp_path / "in.txt"
    inputs.write_text("fine\nMMM\n", encoding="utf-8")
    code = tokspec_main(["diff", f"{toy}:oom", f"{toy}:chars", "--inputs", str(inputs),
                         "--report", str(tmp_path / "rep"), "--workers", "1"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "out of memory" in err and "TOKSPEC_MAX_INPUT_BYTES" in err and "Traceback" not in err, err
    assert not (tmp_path / "rep").exists() or not list((tmp_path / "rep").iterdir())


# ----------------------------------------------------------------------------- 9. smaller


def test_deeply_nested_jsonl_line_is_a_clear_error(toy: str, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    inputs = tmp_path / "in.jsonl"
    inputs.write_text('{"text": "ok"}\n{"text": ' + "[" * 200_000 + "]" * 200_000 + "}\n", encoding="utf-8")
    code = tokspec_main(["diff", f"{toy}:chars", f"{toy}:chars", "--inputs", str(inputs), "--workers", "1"])
    err = capsys.readouterr().err
    assert code == 2 and "line 2" in err and "nested too deeply" in err, err
    assert "Traceback" not in err and err.count("\n") == 1, err


def test_killed_pool_worker_is_named_without_traceback(toy: str, tmp_path: Path) -> None:
    inputs = tmp_path / "in.txt"
    inputs.write_text("".join(f"line {i}\n" for i in range(300)) + "K\n", encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "tokspec", "diff", f"{toy}:die", f"{toy}:chars", "--inputs",
                           str(inputs), "--workers", "2", "--quiet", "--report", str(tmp_path / "rep")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr
    assert "killed by SIGKILL" in proc.stderr and "pid " in proc.stderr, proc.stderr


def test_workers_capped_by_jobs_and_memory() -> None:
    from io import StringIO

    from tokspec.app._capacity import WORKER_BYTES, cap_workers

    err = StringIO()
    assert cap_workers(2, jobs=1, memory=64 * WORKER_BYTES, err=err) == 1  # the usual case: silent
    assert cap_workers(1000, jobs=3, memory=64 * WORKER_BYTES, err=err) == 3
    assert cap_workers(1000, memory=5 * WORKER_BYTES + 1, err=err) == 5
    assert cap_workers(1000, jobs=0, memory=0, err=err) == 1
    assert cap_workers(4, jobs=10, memory=64 * WORKER_BYTES, err=err) == 4
    notes = err.getvalue().splitlines()
    assert len(notes) == 3 and notes[0].startswith("tokspec: --workers 1000 capped to 3 (3 batches")
    assert "GiB available" in notes[1]


# ----------------------------------------------------------------------------- 3. processes


ENGINE = r'''
import json, os, sys, time
log = sys.argv[1]
with open(log, "a") as f:
    f.write(f"{os.getpid()}\n")
print(json.dumps({"tokspec": 1, "name": "slow", "version": "1"}), flush=True)
for line in sys.stdin:
    req = json.loads(line)
    time.sleep(3600)
'''


def test_sigkill_of_tokspec_takes_pool_workers_and_their_engines(tmp_path: Path) -> None:
    """``tokspec diff --workers 2`` with a ``cmd:`` engine, SIGKILLed: every process it started
    (pool workers, supervisors, engines) is gone within seconds (before: alive 79 s later)."""
    script, log = tmp_path / "engine.py", tmp_path / "pids.log"
    script.write_text(ENGINE, encoding="utf-8")
    command = f"cmd:[timeout=3000] {shlex.quote(sys.executable)} {shlex.quote(str(script))} {shlex.quote(str(log))}"
    inputs = tmp_path / "in.txt"
    inputs.write_text("".join(f"text {i}\n" for i in range(400)), encoding="utf-8")
    proc = subprocess.Popen([sys.executable, "-m", "tokspec", "diff", command, command, "--inputs", str(inputs),
                             "--workers", "2", "--quiet"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    seen: set[int] = set()
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:  # setup engines (2) + each worker's (2 x 2)
            if log.exists() and len(log.read_text().split()) >= 6:
                break
            time.sleep(0.1)
        time.sleep(0.5)
        seen = _descendants(proc.pid)
        assert len(log.read_text().split()) >= 6, "the workers never started their engines"
        proc.kill()
        proc.wait(timeout=10)
        engines = {int(p) for p in log.read_text().split()}
        everything = seen | engines
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and any(_alive(p) for p in everything):
            time.sleep(0.1)
        left = {p for p in everything if _alive(p)}
        assert not left, f"still alive after SIGKILL of tokspec: {sorted(left)}"
    finally:
        proc.kill()
        _kill_all(seen | ({int(p) for p in log.read_text().split()} if log.exists() else set()))


def test_fuzz_worker_stuck_in_an_engine_call_respects_time(toy: str, tmp_path: Path) -> None:
    """A fuzz worker stuck in a call that never returns is killed once ``--time`` + ``--shrink-time``
    + a grace have passed (before: tokspec waited forever)."""
    from tokspec.app._pool_watch import FUZZ_GRACE

    argv = [sys.executable, "-m", "tokspec", "diff", f"{toy}:hang", f"{toy}:chars", "--fuzz", "--time", "1",
            "--shrink-time", "1", "--workers", "2", "--quiet", "--report", str(tmp_path / "rep")]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    start = time.monotonic()
    seen: set[int] = set()
    try:
        time.sleep(3)
        seen = _descendants(proc.pid)
        _, err = proc.communicate(timeout=2 + FUZZ_GRACE + 30)
        took = time.monotonic() - start
        assert proc.returncode == 2 and "--time" in err and "killed" in err, err
        assert took < 2 + FUZZ_GRACE + 25, took
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(_alive(p) for p in seen):
            time.sleep(0.1)
        assert not [p for p in seen if _alive(p)]
    finally:
        proc.kill()
        _kill_all(seen)


# ----------------------------------------------------------------------------- 4. hangs


class _FakeFuture:
    def result(self, timeout: float | None = None) -> Any:
        time.sleep(0.05 if timeout is None else min(timeout, 0.05))
        if timeout is None:
            threading.Event().wait()  # the Dask default: wait for workers that never come back
        raise TimeoutError


class _NoWorkers:
    def submit(self, fn: Any, job: Any, pure: bool = True) -> _FakeFuture:
        return _FakeFuture()

    def scheduler_info(self) -> dict[str, Any]:
        return {"workers": {}}


def test_dask_run_that_lost_all_workers_ends(monkeypatch: pytest.MonkeyPatch) -> None:
    from tokspec.app import _pool_watch
    from tokspec.app.executors import DaskExecutor

    monkeypatch.setattr(_pool_watch, "LOST_AFTER", 0.5, raising=False)
    executor = DaskExecutor.__new__(DaskExecutor)
    executor._client, executor._cluster, executor.workers = _NoWorkers(), None, 1  # type: ignore[attr-defined]
    box: list[BaseException] = []

    def run() -> None:
        try:
            list(executor.map(lambda job: job, range(3)))
        except BaseException as exc:  # noqa: BLE001
            box.append(exc)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(timeout=20)
    assert not worker.is_alive(), "waited forever for workers that are gone"
    assert box and "no worker" in str(box[0]) and "Traceback" not in str(box[0]), box


class _Slow(Encoder):
    def __init__(self, name: str, delay: float) -> None:
        self.info = EngineInfo(name, "tokenizer", "toy", "0", None)
        self.delay = delay
        self.calls = 0

    def _encode(self, text: str) -> Encoding:
        self.calls += 1
        time.sleep(self.delay)
        return Encoding.of([ord(c) for c in text], [(i, i + 1) for i in range(len(text))])


def _timed_check(engine: Encoder, max_seconds: float, limit: float) -> tuple[float, list[Any]]:
    from tokspec.app.pytest_plugin import check_against

    box: list[Any] = []

    def run() -> None:
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                check_against(engine, _Slow("toy:fast", 0.0), max_seconds=max_seconds, max_examples=10**6)
            box.append([str(w.message) for w in caught])
        except BaseException as exc:  # noqa: BLE001
            box.append(exc)

    start = time.monotonic()
    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(timeout=limit)
    took = time.monotonic() - start
    assert not worker.is_alive(), f"check_against(max_seconds={max_seconds}) still running after {took:.0f} s"
    return took, box


def test_check_against_bounds_the_replay_and_each_call() -> None:
    """50 ms per call (before: 63 s for max_seconds=5, the replay outside the bound) and a call
    that never returns (before: a hang): both end within max_seconds + the shrink allowance.

    Counted in calls, not wall time: the engine sleeps, so max_seconds + shrink (2 + 2 s) leaves room
    for at most 80 calls of 50 ms whatever the machine's load (the old code made ~1,260 for
    max_seconds=5); the rest of the wall time is tokspec's own CPU work, which a loaded machine
    stretches (9.1 s measured in tox -e lowest next to two other suites). The wall-clock bound
    (``limit``) still catches the hang."""
    slow = _Slow("toy:slow", 0.05)
    took, box = _timed_check(slow, 2.0, limit=20)
    assert isinstance(box[0], list) and any("max_seconds=2.0" in w for w in box[0]), (took, box)
    assert 0 < slow.calls <= (2.0 + 2.0) / 0.05, (slow.calls, took)
    took, box = _timed_check(_Slow("toy:hang", 3600.0), 2.0, limit=20)
    assert box and isinstance(box[0], Exception) and "did not return" in str(box[0]), box


# ----------------------------------------------------------------------------- 7. reports


def test_merge_report_name_fits_a_file_name_whatever_the_engine_name(tmp_path: Path) -> None:
    from tokspec.app.merge_report import report_name

    class Named(Encoder):
        def __init__(self, name: str) -> None:
            self.info = EngineInfo(name, "tokenizer", "toy", "0", None)

    for name in ["\U0001d400" * 70, "a" * 300, "\u00e9" * 200, "x:" + "\U0001f600" * 90]:
        stem = report_name(Named(name), "delimiter-comma", {"chunk_len": 8, "overlap": None}, "text")
        assert len((stem + ".json").encode()) <= 255 and len((stem + ".html").encode()) <= 255, stem
        (tmp_path / f"{stem}.html").write_text("written")  # ENAMETOOLONG before


def test_merge_check_reproduce_command_names_the_written_file_and_strategy(toy: str, tmp_path: Path) -> None:
    inputs = tmp_path / "in.txt"
    inputs.write_text("alpha, beta, gamma, delta, epsilon, zeta, eta, theta\n", encoding="utf-8")
    report = tmp_path / "rep"
    proc = subprocess.run([sys.executable, "-m", "tokspec", "merge-check", f"{toy}:whole", "--strategy",
                           "delimiter-comma", "--chunk-len", "12", "--inputs", str(inputs), "--report",
                           str(report), "--workers", "1", "--quiet", "--minimize-seconds", "1"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr
    reports = sorted(report.glob("*.json"))
    assert reports, list(report.iterdir())
    for path in reports:
        rep = json.loads(path.read_text(encoding="utf-8"))
        if "reproduce" not in rep:
            continue
        argv = shlex.split(rep["reproduce"])
        assert argv[argv.index("--strategy") + 1] == "delimiter-comma", rep["reproduce"]
        assert Path(argv[argv.index("--inputs") + 1]).is_file(), rep["reproduce"]
