"""A hint to the memory system: :func:`prefetch` asks for the cache line of ``array[index]`` now,
so a load of it some pretokens later finds it cached.

Why: on a short text whose table lines were evicted since the text was last seen (issue 29's
latency bench: 1,000 texts of 0.5-2 KB, every engine called in turn on each), the merge kernel
``_bpe_encode._encode`` spent more time waiting on memory than computing: 13.2 us on a 1.2 KB
English text against 4.6 us when the same lines were cached, about one piece-table line per
pretoken. The probes of successive pretokens are independent, but each probe's result decides
the next branch, so the processor overlaps few of them. ``_encode`` therefore computes the slot a
pretoken some places ahead will probe and prefetches it (``_bpe_encode``'s module docstring has
the measurements).

Contract: compiled, an LLVM ``llvm.prefetch`` (read, keep in all cache levels) of the address of
``array[index]``; it never traps, changes no value the program computes and is dropped by the
processor when it is busy, so a prefetch can only change speed, never a result. ``index`` is not
checked compiled (the address is only a hint); callers pass slots of the array they will probe.
Interpreted (``TOKSPEC_JIT=0``), the plain function below checks that the index is inside
``array`` and does nothing else: a prefetch outside its table means the caller computed the
slot from the wrong bytes, which the compiled kernel would hide as a silent slowdown, so the
interpreted kernels the fuzzers run raise it. ``tests/test_fast_prefetch.py`` checks both modes,
and that ``_encode`` prefetches exactly the slots its probes read. O(1).
"""

from __future__ import annotations

import numpy as np

from tokspec._jit import JIT_ENABLED

__all__ = ["prefetch"]


def prefetch(array: np.ndarray, index: int) -> None:
    """Hint that ``array[index]`` is read soon (module docstring). Interpreted: IndexError if
    ``index`` is not a position of the one-dimensional ``array``."""
    if not 0 <= index < len(array):
        raise IndexError(f"prefetch of index={index!r} outside an array of {len(array)} items")


if JIT_ENABLED:  # numba only where kernels compile; interpreted kernels call the function above
    from llvmlite import ir  # type: ignore[import-untyped]
    from numba.core import cgutils, types

    from tokspec.fast._builtin import compile_as_builtin

    _I32 = ir.IntType(32)
    _BYTE_POINTER = ir.IntType(8).as_pointer()

    def _type_prefetch(array, index):  # type: ignore[no-untyped-def]  # numba's types
        if isinstance(array, types.Array) and array.ndim == 1 and isinstance(index, types.Integer):
            return types.none
        return None

    def _lower_prefetch(context, builder, signature, args):  # type: ignore[no-untyped-def]  # numba's protocol
        data = context.make_array(signature.args[0])(context, builder, args[0]).data
        at = builder.bitcast(builder.gep(data, [args[1]]), _BYTE_POINTER)  # no inbounds: a hint
        hint = ir.FunctionType(ir.VoidType(), [_BYTE_POINTER, _I32, _I32, _I32])
        llvm_prefetch = cgutils.get_or_insert_function(  # type: ignore[no-untyped-call]  # numba is untyped
            builder.module, hint, "llvm.prefetch.p0i8")
        # read (0), keep in every cache level (3), data cache (1)
        builder.call(llvm_prefetch, [at, ir.Constant(_I32, 0), ir.Constant(_I32, 3), ir.Constant(_I32, 1)])
        return context.get_dummy_value()

    compile_as_builtin(prefetch, _type_prefetch, _lower_prefetch)
