"""``tokspec._jit``: kernels compile at ``KERNEL_OPT`` (-O2), only while numba's compiler lock is
held for them; other numba code keeps numba's level; ``NUMBA_OPT`` set by the user wins."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tokspec._jit import JIT_ENABLED, KERNEL_OPT, kernel

pytestmark = pytest.mark.skipif(not JIT_ENABLED, reason="interpreted mode (TOKSPEC_JIT=0) compiles nothing")


def _add_one(x: int) -> int:
    return x + 1


def _twice(x: int) -> int:
    return 2 * x


def test_kernels_compile_at_kernel_opt_and_other_numba_code_at_its_own() -> None:
    import numba
    from numba.core import config
    from numba.core import event as ev

    seen: dict[str, int] = {}

    class Listener(ev.Listener):
        def on_start(self, event: ev.Event) -> None:
            seen[event.data["dispatcher"].py_func.__name__] = int(config.OPT)

        def on_end(self, event: ev.Event) -> None:
            pass

    before = int(config.OPT)
    listener = Listener()
    ev.register("numba:compile", listener)
    try:
        own = kernel(_add_one, cache=False)
        other = numba.njit(_twice)
        assert (own(1), other(2)) == (2, 4)
    finally:
        ev.unregister("numba:compile", listener)
    if "NUMBA_OPT" in os.environ:
        assert KERNEL_OPT is None and seen["_add_one"] == before
    else:
        assert KERNEL_OPT == 2 and seen["_add_one"] == 2
    assert seen["_twice"] == before == int(config.OPT)  # restored; not seen by other code


def test_numba_opt_set_by_the_user_wins() -> None:
    code = "import tokspec._jit as j; from numba.core import config; print(j.KERNEL_OPT, int(config.OPT))"
    env = {**os.environ, "NUMBA_OPT": "1"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["None", "1"]
