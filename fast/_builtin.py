"""Plain functions that compiled kernels call as numba builtins: :func:`compile_as_builtin`.

The one-instruction helpers of the kernels (``_le_load.load_le64``, ``_wrapping.mul64`` and
``add64``, ``_prefetch.prefetch``, ``_bits.trailing_zeros64``) are plain Python functions, which
interpreted kernels (``TOKSPEC_JIT=0``, and ``py_func``) call as they are. Compiled kernels need
each call to become its LLVM instruction. This module registers a function with numba's low-level
extension API: a typing template for calls of the function (``type_callable``) and a lowering
that emits the instruction at the call site (``lower_builtin``), the way numba compiles ``len``.

Why not ``@overload(fn, inline="always")`` over an ``@intrinsic``, as these modules did: numba
inlined the overload's Python body at every call site, then typed it again there. ``_encode`` has
some 80 such sites; the inlining and the extra statements cost its compile 0.3-0.5 s of a cold
start of about 4 s (issue 29, ``_encode``'s numba passes timed one by one). The machine code is
the same instruction either way. An ``@overload`` without inlining would be a function call per
site, whose array arguments numba reference-counts (atomics in the hot loop).

Contract of :func:`compile_as_builtin`: ``typer`` takes the numba types of a call's arguments
(one parameter per argument of ``fn``) and returns the result's numba type, or None when it does
not accept them (numba's typing error names the call); ``codegen(context, builder, signature,
args)`` returns the LLVM value of the result (``context.get_dummy_value()`` for None). Registered
once per process at import, when kernels compile; in interpreted mode this module defines nothing
(its callers import it only when kernels compile).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tokspec._jit import JIT_ENABLED

__all__ = ["compile_as_builtin"]

if JIT_ENABLED:  # numba only where kernels compile (and mutation testing, interpreted, skips it)
    from numba.core import types
    from numba.extending import lower_builtin, type_callable

    def compile_as_builtin(fn: Callable[..., Any], typer: Callable[..., Any],
                           codegen: Callable[[Any, Any, Any, Any], Any]) -> None:
        """Compiled kernels type a call of ``fn`` by ``typer`` and lower it by ``codegen``
        (module docstring)."""
        type_callable(fn)(lambda context: typer)
        any_arguments = types.VarArg(types.Any)  # type: ignore[no-untyped-call]  # numba is untyped
        lower_builtin(fn, any_arguments)(codegen)  # type: ignore[no-untyped-call]
