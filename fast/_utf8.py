"""UTF-8 bytes of a code point array, with each character's first byte (for the compiled BPE's
character offsets): the kernel behind ``tokspec.fast.bpe_kernel.utf8_of_code_points``.

Input: code points of Unicode scalar values (as ``peek2_unicode.code_points`` gives; surrogates are
refused before). O(n) time, 4n + 8n bytes of scratch. Out of scope: validation of the code points.
"""

from __future__ import annotations

import numpy as np

from tokspec._jit import kernel

__all__ = ["_utf8"]


@kernel
def _utf8(cps: np.ndarray, data: np.ndarray, cbs: np.ndarray) -> int:
    """UTF-8 bytes of code points ``cps`` into ``data``; ``cbs[c]`` = first byte of character c
    (``cbs[n]`` = byte length, returned). O(n)."""
    b = 0
    for c in range(len(cps)):
        cp = cps[c]
        cbs[c] = b
        if cp < 0x80:
            data[b] = cp
            b += 1
        elif cp < 0x800:
            data[b] = 0xC0 | (cp >> 6)
            data[b + 1] = 0x80 | (cp & 0x3F)
            b += 2
        elif cp < 0x10000:
            data[b] = 0xE0 | (cp >> 12)
            data[b + 1] = 0x80 | ((cp >> 6) & 0x3F)
            data[b + 2] = 0x80 | (cp & 0x3F)
            b += 3
        else:
            data[b] = 0xF0 | (cp >> 18)
            data[b + 1] = 0x80 | ((cp >> 12) & 0x3F)
            data[b + 2] = 0x80 | ((cp >> 6) & 0x3F)
            data[b + 3] = 0x80 | (cp & 0x3F)
            b += 4
    cbs[len(cps)] = b
    return b
