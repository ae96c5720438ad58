"""A wall-clock bound over a whole :func:`~tokspec.app.pytest_plugin.check_against`, single engine
calls included.

An in-process engine call cannot be interrupted safely, so :func:`bounded` wraps an engine so that
each call runs on one daemon thread of the wrapper and the caller waits at most until the
deadline: a call still running then raises :class:`~tokspec._limits.DeadlineExceeded` naming the
engine (the abandoned call finishes, or not, on its daemon thread; it cannot keep the interpreter
alive). :func:`until` cuts an iterable of texts at the deadline (the replay of stored findings).

Cost: one thread hand-off per engine call (tens of microseconds). Out of scope: freeing what a hung
call holds (a ``cmd:`` engine has its own per-call timeout and is restarted).
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

from tokspec._limits import DeadlineExceeded
from tokspec._types import Encoder, Encoding, EncodingArrays

__all__ = ["bounded", "until", "Cut"]

T = TypeVar("T")


class _Caller:
    """One daemon thread running calls handed to it; :meth:`call` waits until ``deadline``."""

    def __init__(self, name: str) -> None:
        self._jobs: queue.Queue[tuple[Callable[[], Any], queue.Queue[tuple[bool, Any]]]] = queue.Queue()
        self._stuck = False
        threading.Thread(target=self._loop, daemon=True, name=f"tokspec-bounded-{name}").start()

    def _loop(self) -> None:
        while True:
            fn, box = self._jobs.get()
            try:
                box.put((True, fn()))
            except BaseException as exc:  # noqa: BLE001 - handed back to the caller as is
                box.put((False, exc))

    def call(self, fn: Callable[[], T], deadline: float, what: str) -> T:
        if self._stuck:
            raise DeadlineExceeded(f"{what}: an earlier call is still running past the deadline")
        box: queue.Queue[tuple[bool, Any]] = queue.Queue(maxsize=1)
        self._jobs.put((fn, box))
        try:
            ok, value = box.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            self._stuck = True
            raise DeadlineExceeded(f"{what} did not return before the deadline; the engine "
                                   "hangs or is too slow for this bound") from None
        if ok:
            return value  # type: ignore[no-any-return]
        raise value


class _Bounded(Encoder):
    def __init__(self, inner: Encoder, deadline: float, limit: float) -> None:
        self.inner, self.info, self._deadline = inner, inner.info, deadline
        self._caller = _Caller(inner.info.name)
        self._what = f"engine {inner.info.name!r} (max_seconds={limit:g})"

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def _encode(self, text: str) -> Encoding:
        return self._caller.call(lambda: self.inner.encode(text), self._deadline, self._what)

    def token_piece(self, token_id: int) -> str:
        return self.inner.token_piece(token_id)


class _BoundedArrays(_Bounded):
    def _encode_arrays(self, text: str) -> EncodingArrays:
        return self._caller.call(lambda: self.inner.encode_arrays(text), self._deadline, self._what)


def bounded(engine: Encoder, deadline: float, limit: float) -> Encoder:
    """``engine`` with each call bounded by ``deadline`` (``time.monotonic()``); ``limit`` is the
    bound's value in seconds, for messages. Same path (tuples or arrays) as ``engine``."""
    natively = type(engine)._encode_arrays is not Encoder._encode_arrays
    return (_BoundedArrays if natively else _Bounded)(engine, deadline, limit)


class Cut:
    """Set when :func:`until` stopped an iterable early."""

    def __init__(self) -> None:
        self.cut = False


def until(items: Iterable[T], deadline: float, cut: Cut) -> Iterator[T]:
    """``items`` up to the deadline; sets ``cut.cut`` if it stopped early."""
    for item in items:
        if time.monotonic() >= deadline:
            cut.cut = True
            return
        yield item
