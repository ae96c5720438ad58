"""Eight bytes of a uint8 array as one little-endian int64, in one load: :func:`load_le64`.

Why: the compiled BPE packs every pretoken's bytes into words to look it up whole
(``tokspec.fast._piece_table``). A byte loop there costs a load, a shift and an or per byte and a
mispredicted loop exit per pretoken (the lengths vary): under callgrind, on 200 KB of English from
many corpora with o200k_base, 149 instructions and 1.33 mispredicted branches per lookup, against
63 and 0.17 with two word loads (23 -> 8 ns per lookup, measured in one process). numba has no
unaligned load of a wider type from a byte array, so compiled code gets one here: a builtin (``_builtin``) that
emits a single LLVM ``load i64, align 1`` (x86 and arm64 load unaligned words natively).

Contract: ``data`` a C-contiguous uint8 array, ``0 <= i`` and ``i + 8 <= len(data)``; the result is
``sum(data[i + k] << 8k)`` as a two's-complement int64 (negative when ``data[i + 7] >= 0x80``), the
same bits a byte loop building it in int64 gives. Compiled, nothing is checked (an index past the
end reads past the array): callers test the bound first, as ``_piece_table._pack`` does. In
interpreted mode (``TOKSPEC_JIT=0``, ``tokspec._interpreted``) :func:`load_le64` is the plain
function below, which slices (so a bad index gives a short slice and a ValueError, not garbage).
``tests/test_fast_le_load.py`` checks both against ``struct``'s ``<q`` at every byte value and
offset. O(1).
"""

from __future__ import annotations

import numpy as np

from tokspec._jit import JIT_ENABLED

__all__ = ["load_le64"]


def load_le64(data: np.ndarray, i: int) -> np.int64:
    """``data[i:i+8]`` as a little-endian int64 (module docstring: ``i + 8 <= len(data)``)."""
    word = data[i:i + 8]
    if len(word) != 8:
        raise ValueError(f"load_le64 needs 8 bytes from i={i!r}; the array has len(data)={len(data)!r}")
    return np.int64(int.from_bytes(word.tobytes(), "little", signed=True))


if JIT_ENABLED:  # numba only where kernels compile; interpreted kernels call the function above
    from llvmlite import ir  # type: ignore[import-untyped]
    from numba.core import types

    from tokspec.fast._builtin import compile_as_builtin

    def _type_load(data, i):  # type: ignore[no-untyped-def]  # numba's types
        if isinstance(data, types.Array) and data.dtype == types.uint8 and data.layout == "C" \
                and isinstance(i, types.Integer):
            return types.int64
        return None

    def _lower_load(context, builder, signature, args):  # type: ignore[no-untyped-def]  # numba's protocol
        array = context.make_array(signature.args[0])(context, builder, args[0])
        at = builder.gep(array.data, [args[1]])
        return builder.load(builder.bitcast(at, ir.IntType(64).as_pointer()), align=1)

    compile_as_builtin(load_le64, _type_load, _lower_load)
