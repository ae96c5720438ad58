"""A range of a ``str``'s code points and UTF-8 bytes, read from the string itself by a GIL-free
kernel: :func:`fill_text_arrays` (``FastBpeEncoder.encode_ids_range``, the chunks of ``lopt:``,
and ``encode_ids`` of a text of ``bpe_encoder.FILL_MIN`` characters or more).

Why: ``encode_ids(text)`` turns its text into the kernels' two arrays with ``str.encode`` (UTF-8)
and a UTF-32 encode (code points). Both hold the GIL. Under ``lopt:`` each chunk was first sliced
out of the text (a new ``str``; for a text with one character past U+FFFF every slice is
re-narrowed, 1 ms for 2 MB) and then converted, all of it with the GIL held, so two threads did
that work one after the other: on 2 MB of standard-library code (it has such a character) about
2.5 ms of a 10.5 ms ``lopt:`` call ran on one core. Here the kernel reads the characters of
``text[start:end]`` where the string keeps them (numba passes a ``str`` by reference) and writes
both arrays with the GIL released, each chunk on its own thread. One long call gains too: its
arrays are numpy's (large ones on huge pages) rather than a ``bytes`` of UTF-8 and one of UTF-32
freshly faulted in on every call; ``encode_ids`` of 2 MB, best of repeated calls, one process:
English 23.1 -> 20.3 ms, code 21.3 -> 17.5 ms, Chinese-like 29.7 -> 28.2 ms. Below 64K
characters the kernel's call costs more than it saves (2K characters: 7.9 -> 10.0 us), so shorter
texts keep ``str.encode``.

Contract: for ``0 <= start <= end <= len(text)``, ``cps`` of at least ``end - start`` items and
``utf8`` of at least ``4 * (end - start)``: ``cps[:end - start]`` are the code points of
``text[start:end]`` and ``utf8[:k]``, ``k`` the return value, its UTF-8 (``str.encode``'s
bytes). A lone surrogate (U+D800..U+DFFF, which strict UTF-8 refuses) stops the fill:
``-1 - i`` for the first one at ``start + i``, the arrays then partly written. Compiled, a
character is read by :func:`code_point`, numba's own reader of a string's storage, and the
string's ASCII flag by :func:`all_ascii` (builtins, ``_builtin``); interpreted
(``TOKSPEC_JIT=0``, and ``py_func``), by ``ord`` and ``str.isascii``. O(end - start).
``tests/test_fast_text_arrays.py`` checks both modes against ``str.encode`` and the UTF-32 codec,
ranges included, and the surrogate's position.
"""

from __future__ import annotations

import numpy as np

from tokspec._jit import JIT_ENABLED, kernel

__all__ = ["code_point", "ascii_code", "all_ascii", "fill_text_arrays"]


def code_point(text: str, i: int) -> int:
    """The code point of ``text[i]`` (``str``'s own indexing: a subclass's cannot change it)."""
    return ord(str.__getitem__(text, i))


def ascii_code(text: str, i: int) -> int:
    """The code point of ``text[i]`` in a text of ASCII characters only (compiled: its byte, read
    without the storage-width dispatch of :func:`code_point`)."""
    return ord(str.__getitem__(text, i))


def all_ascii(text: str) -> bool:
    """Whether every character of ``text`` is ASCII (compiled: the flag the string keeps)."""
    return str.isascii(text)


@kernel
def fill_text_arrays(text: str, start: int, end: int, cps: np.ndarray, utf8: np.ndarray) -> int:
    """Code points and UTF-8 of ``text[start:end]`` into ``cps`` and ``utf8``; the byte count,
    or ``-1 - i`` for a lone surrogate at ``start + i`` (module docstring). An ASCII text in
    a loop without the UTF-8 branches (English: 1.9 -> 0.1 ms per 2 MB)."""
    if all_ascii(text):
        for i in range(end - start):
            byte = ascii_code(text, start + i)
            cps[i] = byte
            utf8[i] = byte
        return end - start
    k = 0
    for i in range(end - start):
        cp = code_point(text, start + i)
        cps[i] = cp
        if cp < 0x80:
            utf8[k] = cp
            k += 1
        elif cp < 0x800:
            utf8[k] = 0xC0 | (cp >> 6)
            utf8[k + 1] = 0x80 | (cp & 0x3F)
            k += 2
        elif cp < 0x10000:
            if 0xD800 <= cp < 0xE000:
                return -1 - i
            utf8[k] = 0xE0 | (cp >> 12)
            utf8[k + 1] = 0x80 | ((cp >> 6) & 0x3F)
            utf8[k + 2] = 0x80 | (cp & 0x3F)
            k += 3
        else:
            utf8[k] = 0xF0 | (cp >> 18)
            utf8[k + 1] = 0x80 | ((cp >> 12) & 0x3F)
            utf8[k + 2] = 0x80 | ((cp >> 6) & 0x3F)
            utf8[k + 3] = 0x80 | (cp & 0x3F)
            k += 4
    return k


if JIT_ENABLED:  # numba only where kernels compile; interpreted kernels call the function above
    from numba.core import types
    from numba.cpython.unicode import _get_code_point, deref_uint8

    from tokspec.fast._builtin import compile_as_builtin

    def _type_code_point(text, i):  # type: ignore[no-untyped-def]  # numba's types
        return types.int64 if text == types.unicode_type and isinstance(i, types.Integer) else None

    def _lower_code_point(context, builder, signature, args):  # type: ignore[no-untyped-def]  # numba's protocol
        def read(text, i):  # type: ignore[no-untyped-def]
            return np.int64(_get_code_point(text, i))  # type: ignore[no-untyped-call]  # numba is untyped

        return context.compile_internal(builder, read, signature, args)

    compile_as_builtin(code_point, _type_code_point, _lower_code_point)

    def _type_all_ascii(text):  # type: ignore[no-untyped-def]  # numba's types
        return types.boolean if text == types.unicode_type else None

    def _lower_all_ascii(context, builder, signature, args):  # type: ignore[no-untyped-def]  # numba's protocol
        def read(text):  # type: ignore[no-untyped-def]
            return text._is_ascii != 0

        return context.compile_internal(builder, read, signature, args)

    compile_as_builtin(all_ascii, _type_all_ascii, _lower_all_ascii)

    def _lower_ascii_code(context, builder, signature, args):  # type: ignore[no-untyped-def]  # numba's protocol
        def read(text, i):  # type: ignore[no-untyped-def]
            # an ASCII str is stored one byte per character (numba's intrinsic: typing context first)
            return np.int64(deref_uint8(text._data, i))  # type: ignore[call-arg]

        return context.compile_internal(builder, read, signature, args)

    compile_as_builtin(ascii_code, _type_code_point, _lower_ascii_code)
