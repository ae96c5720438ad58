"""What a Rust or C extension does to a ``str`` it reads, for the tests of the benches' fresh copies."""

from __future__ import annotations

import ctypes

_as_utf8 = ctypes.pythonapi.PyUnicode_AsUTF8AndSize  # how an extension reads a str
_as_utf8.restype = ctypes.c_char_p
_as_utf8.argtypes = [ctypes.py_object, ctypes.c_void_p]


def make_utf8(text: str) -> None:
    """Ask for ``text``'s UTF-8 as an extension does: CPython then keeps it beside the object
    (``sys.getsizeof`` grows for a non-ASCII str)."""
    _as_utf8(text, None)
