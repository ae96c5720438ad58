"""Child processes that die with tokspec: on a clean exit, a signal, or a SIGKILL of tokspec.

Every program tokspec starts (``cmd:`` engines, the fuzz runner's harnesses) goes through
:func:`spawn`, which starts it under a tiny *supervisor*: a Python process (stdlib only, ``-I -S``)
that

1. asks the kernel for a parent-death signal (Linux ``prctl(PR_SET_PDEATHSIG, SIGTERM)``), so it
   learns of tokspec's death even by SIGKILL, when no code of tokspec can run;
2. forks the program into a new process group of its own (pgid = the program's pid), the program
   also with a parent-death signal (SIGKILL, in case the supervisor itself is killed);
3. on SIGTERM/SIGHUP/SIGINT, or when the program exits, SIGKILLs that whole group (so children the
   program started die too, even if it exits or ignores signals), then exits with the program's
   exit status (``128 + signal`` if it was killed by a signal).

The supervisor is a session leader (``start_new_session``): a Ctrl-C in tokspec's terminal does not
reach it or the program. ``Popen.pid`` is the supervisor's pid; its stdin/stdout/stderr are the
program's (the supervisor keeps none of them open, so EOF propagates).

Caveat of the kernel interface: the parent-death signal fires when the *thread* that forked the
child exits, not the process. :func:`spawn` therefore forks from the main thread, or, when called
from another thread (a pool worker that may exit), from one dedicated daemon thread that lives as
long as the process.

Inside tokspec, :func:`stop` ends one child (and its group) and an ``atexit`` hook stops every child
still running. Costs: one extra small Python process (~10 ms start-up, a few MB) per child.
Out of scope: programs that leave their process group on purpose (``setsid``), non-Linux systems
(the parent-death signal is Linux-only; elsewhere only the atexit/stop path applies).
"""

from __future__ import annotations

import atexit
import os
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["spawn", "stop", "run", "live"]

#: The supervisor program (argv: expected parent pid, then the program's argv).
_SUPERVISOR = r"""
import os, signal, sys
try:
    import ctypes
    _prctl = ctypes.CDLL(None, use_errno=True).prctl
except Exception:
    _prctl = None
def pdeathsig(sig):
    if _prctl is not None:
        _prctl(1, int(sig), 0, 0, 0)  # PR_SET_PDEATHSIG
child = 0
def end(signum, frame=None):
    if child:
        for kill in (os.killpg, os.kill):
            try:
                kill(child, signal.SIGKILL)
            except OSError:
                pass
    os._exit(128 + signum)
for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
    signal.signal(s, end)
pdeathsig(signal.SIGTERM)
parent, argv = int(sys.argv[1]), sys.argv[2:]
if os.getppid() != parent:
    end(signal.SIGTERM)
me = os.getpid()
child = os.fork()
if child == 0:
    os.setpgid(0, 0)
    pdeathsig(signal.SIGKILL)
    if os.getppid() != me:
        os._exit(137)
    for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT, signal.SIGPIPE, signal.SIGXFSZ):
        signal.signal(s, signal.SIG_DFL)
    try:
        os.execvp(argv[0], argv)
    except OSError as exc:
        os.write(2, ("tokspec: cannot start %r: %s\n" % (argv[0], exc.strerror)).encode())
    os._exit(127)
try:
    os.setpgid(child, child)
except OSError:
    pass
nul = os.open(os.devnull, os.O_RDWR)
os.dup2(nul, 0)
os.dup2(nul, 1)
_, status = os.waitpid(child, 0)
try:
    os.killpg(child, signal.SIGKILL)
except OSError:
    pass
code = os.waitstatus_to_exitcode(status)
os._exit(code if code >= 0 else 128 - code)
"""

#: running children: pid -> (Popen, pid of the tokspec process that started it; a forked copy of
#: tokspec inherits this table but must not stop its parent's children)
_live: dict[int, tuple[subprocess.Popen[Any], int]] = {}
_lock = threading.Lock()
_requests: queue.Queue[tuple[Callable[[], Any], queue.Queue[tuple[bool, Any]]]] | None = None


def _spawner_loop(requests: queue.Queue[tuple[Callable[[], Any], queue.Queue[tuple[bool, Any]]]]
                  ) -> None:
    while True:
        make, reply = requests.get()
        try:
            reply.put((True, make()))
        except BaseException as exc:  # noqa: BLE001 - handed back to the calling thread
            reply.put((False, exc))


def _in_long_lived_thread(make: Callable[[], Any]) -> Any:
    """Run ``make()`` in the main thread or in the dedicated spawner thread (see module docstring)."""
    global _requests
    if threading.current_thread() is threading.main_thread():
        return make()
    with _lock:
        if _requests is None:
            _requests = queue.Queue()
            threading.Thread(target=_spawner_loop, args=(_requests,), name="tokspec-spawner",
                             daemon=True).start()
        requests = _requests
    reply: queue.Queue[tuple[bool, Any]] = queue.Queue(maxsize=1)
    requests.put((make, reply))
    ok, value = reply.get()
    if not ok:
        raise value
    return value


def spawn(argv: list[str], **popen_kwargs: Any) -> subprocess.Popen[Any]:
    """Start ``argv`` under a supervisor (module docstring); ``popen_kwargs`` go to ``Popen``
    (stdin/stdout/stderr, env, cwd, text, ...; not ``start_new_session``/``preexec_fn``).

    Raises OSError if the supervisor cannot start. A program that cannot be executed writes one
    ``tokspec: cannot start ...`` line to its stderr and exits with status 127.
    """
    if not argv:
        raise ValueError("spawn: argv is empty")
    full = [sys.executable, "-I", "-S", "-c", _SUPERVISOR, str(os.getpid()), *map(str, argv)]

    def make() -> subprocess.Popen[Any]:
        proc = subprocess.Popen(full, start_new_session=True, **popen_kwargs)
        with _lock:
            _live[proc.pid] = (proc, os.getpid())
        return proc

    proc: subprocess.Popen[Any] = _in_long_lived_thread(make)
    return proc


def stop(proc: subprocess.Popen[Any], *, grace: float = 0.0) -> int | None:
    """End a child started by :func:`spawn`, its program and the program's whole process group.

    Waits up to ``grace`` seconds for it to exit by itself (close its stdin first to ask it), then
    SIGTERMs the supervisor (which SIGKILLs the program's group) and, if that has not worked within
    two seconds, SIGKILLs the supervisor. Idempotent; returns the exit status.
    """
    try:
        if grace > 0:
            try:
                return proc.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                pass
        if proc.poll() is None:
            _signal(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=2.0)
            except subprocess.TimeoutExpired:
                _signal(proc.pid, signal.SIGKILL, group=True)
                proc.wait()
        return proc.returncode
    finally:
        with _lock:
            _live.pop(proc.pid, None)


def _signal(pid: int, sig: int, *, group: bool = False) -> None:
    try:
        (os.killpg if group else os.kill)(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def run(argv: list[str], *, timeout: float | None = None, input: Any = None,
        **popen_kwargs: Any) -> subprocess.CompletedProcess[Any]:
    """Like :func:`subprocess.run` (``capture_output=True`` accepted) for a :func:`spawn` child:
    on timeout the program's whole group is killed, then ``subprocess.TimeoutExpired`` is raised."""
    if popen_kwargs.pop("capture_output", False):
        popen_kwargs["stdout"] = popen_kwargs["stderr"] = subprocess.PIPE
    if input is not None:
        popen_kwargs["stdin"] = subprocess.PIPE
    proc = spawn(argv, **popen_kwargs)
    try:
        out, err = proc.communicate(input, timeout=timeout)
    except BaseException:
        stop(proc)
        proc.communicate()
        raise
    finally:
        with _lock:
            _live.pop(proc.pid, None)
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


def live() -> list[int]:
    """Pids (supervisors) of children started by :func:`spawn` and not yet stopped."""
    with _lock:
        return [pid for pid, (proc, owner) in _live.items() if owner == os.getpid() and proc.poll() is None]


@atexit.register
def _stop_all() -> None:
    with _lock:
        procs = [proc for proc, owner in _live.values() if owner == os.getpid()]
    for proc in procs:
        stop(proc)
