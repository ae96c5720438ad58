"""int64 arithmetic that wraps modulo 2**64 in compiled kernels: :func:`mul64` and :func:`add64`.

Why: numba compiles ``a * b`` and ``a + b`` of signed integers with LLVM's ``nsw`` flag ("no signed
wrap", ``numba.cpython.numbers._int_arith_flags``): a signed overflow is undefined behaviour, and
LLVM may compile whatever follows it as it likes. The multiply-shift hashes of the compiled BPE
(``_bpe_probe._slot``, ``_piece_table._home``, ``_piece_cache``, ``_piece_store``) overflow by
design, and their tables are filled in numpy, whose int64 products do wrap. Found in issue 29's
work: a five-line kernel that packs a 12-byte key, ``k1 = 12 << 32 | low``, and hashes it with
``_home`` compiled to ``(k0 * M0 ^ k1 * M1) & mask`` with the ``>> 32`` gone (LLVM proved
``k1 * M1`` always overflows, so the shift of a poison value could be dropped): slot 7120
where numpy's is 3990 (6491 in the test's kernel), a lookup that silently misses. The kernels then in main were not
miscompiled (their keys' high bits were not known to LLVM), but only by luck.

Here compiled code gets a builtin (``_builtin``) that emits a plain LLVM ``mul``/``add`` (no ``nsw``: wraps
by definition, the same instruction); interpreted mode (``TOKSPEC_JIT=0``) gets the plain
functions below, which compute the same bits with Python ints. Contract: integer arguments; the
result is the two's-complement int64 of the exact result modulo 2**64. ``tests/test_fast_wrapping.py``
checks both modes against Python's integers, and the hashes of the five callers against numpy's,
in a kernel that lets LLVM prove the overflow (the one above, which fails without this module).
O(1).
"""

from __future__ import annotations

from typing import Any, Union

import numpy as np

from tokspec._jit import JIT_ENABLED

__all__ = ["add64", "mul64"]

_Int = Union[int, "np.integer[Any]"]

_LOW64 = (1 << 64) - 1
_SIGN = 1 << 63


def _int64(x: int) -> np.int64:
    x &= _LOW64
    return np.int64(x - (1 << 64) if x & _SIGN else x)


def mul64(a: _Int, b: _Int) -> np.int64:
    """``a * b`` modulo 2**64, as an int64."""
    return _int64(int(a) * int(b))


def add64(a: _Int, b: _Int) -> np.int64:
    """``a + b`` modulo 2**64, as an int64."""
    return _int64(int(a) + int(b))


if JIT_ENABLED:  # numba only where kernels compile; interpreted kernels call the functions above
    from numba.core import types

    from tokspec.fast._builtin import compile_as_builtin

    def _type_pair(a, b):  # type: ignore[no-untyped-def]  # numba's types
        return types.int64 if isinstance(a, types.Integer) and isinstance(b, types.Integer) else None

    def _wrapping(op: str):  # type: ignore[no-untyped-def]
        def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]  # numba's protocol
            x = context.cast(builder, args[0], signature.args[0], types.int64)
            y = context.cast(builder, args[1], signature.args[1], types.int64)
            return getattr(builder, op)(x, y)  # no flags: wraps modulo 2**64

        return codegen

    compile_as_builtin(mul64, _type_pair, _wrapping("mul"))
    compile_as_builtin(add64, _type_pair, _wrapping("add"))
