"""``tokspec.fast._builtin.compile_as_builtin``: plain functions that compiled kernels call as numba
builtins (typed by a typer, lowered at the call site), and the kernels' helpers registered so.

Compiled mode only: in interpreted mode (``TOKSPEC_JIT=0``) the module defines nothing and the
helpers are the plain functions, which their own tests (``test_fast_le_load``, ``test_fast_wrapping``,
``test_fast_prefetch``, ``test_fast_bits``) check in both modes.
"""

from __future__ import annotations

import numpy as np
import pytest
from tokspec._jit import JIT_ENABLED, kernel
from tokspec.fast._bits import trailing_zeros64
from tokspec.fast._le_load import load_le64
from tokspec.fast._prefetch import prefetch
from tokspec.fast._wrapping import add64, mul64

pytestmark = pytest.mark.skipif(not JIT_ENABLED, reason="builtins exist only where kernels compile (TOKSPEC_JIT on)")


def _rotate_left_13(x: int) -> int:
    """A helper the test registers: ``x`` rotated left by 13 bits as a 64-bit word (plain form)."""
    word = x & ((1 << 64) - 1)
    out = ((word << 13) | (word >> 51)) & ((1 << 64) - 1)
    return out - (1 << 64) if out >> 63 else out


def _register() -> None:
    from llvmlite import ir
    from numba.core import types
    from tokspec.fast._builtin import compile_as_builtin

    def typer(x):  # type: ignore[no-untyped-def]
        return types.int64 if isinstance(x, types.Integer) else None

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        word = context.cast(builder, args[0], signature.args[0], types.int64)
        i64 = ir.IntType(64)
        return builder.or_(builder.shl(word, ir.Constant(i64, 13)), builder.lshr(word, ir.Constant(i64, 51)))

    compile_as_builtin(_rotate_left_13, typer, codegen)


if JIT_ENABLED:
    _register()


@kernel(cache=False)
def _rotations(xs: np.ndarray) -> np.ndarray:
    out = np.empty(len(xs), dtype=np.int64)
    for i in range(len(xs)):
        out[i] = _rotate_left_13(xs[i])
    return out


@kernel(cache=False)
def _rotate_float(x: float) -> int:
    return _rotate_left_13(x)  # type: ignore[arg-type]  # the typer refuses a float


def test_a_registered_function_compiles_to_its_codegen() -> None:
    xs = np.array([0, 1, -1, 1 << 50, (1 << 63) - 1, -(1 << 63), 0x0123456789ABCDEF], dtype=np.int64)
    assert _rotations(xs).tolist() == [_rotate_left_13(int(x)) for x in xs]


def test_the_typer_refuses_other_arguments_with_a_typing_error() -> None:
    from numba.core.errors import TypingError

    with pytest.raises(TypingError, match="_rotate_left_13"):
        _rotate_float(1.5)


@pytest.mark.parametrize("helper", [load_le64, mul64, add64, prefetch, trailing_zeros64])
def test_kernel_helpers_are_builtins_not_inlined_overloads(helper: object) -> None:
    """Each helper types through the one template ``compile_as_builtin`` registers (a call-site
    lowering), not an ``@overload`` numba would inline and type again at every call site."""
    from numba.core import types
    from numba.core.registry import cpu_target
    from numba.core.typing.templates import CallableTemplate

    context = cpu_target.typing_context
    context.refresh()
    ty = context.resolve_value_type(helper)
    assert isinstance(ty, types.Function)
    assert all(issubclass(t, CallableTemplate) for t in ty.templates), ty.templates
