"""The compiled engines' kernels run as plain Python, in a process where they are also compiled.

``TOKSPEC_JIT=0`` switches every kernel to plain Python for a whole process. This module gives the
same in one process, for the differential "compiled equals interpreted" checks and for fuzzing
under coverage guidance (the fuzzer sees the kernels' branches, which compiled code hides): it
uses the plain copies of ``tokspec.fast.pretok_peek2`` and ``tokspec.fast.bpe_kernel`` made by
:func:`tokspec._interpreted.interpreted_module` (the one mechanism, also behind
``DatrieUnigram(jit=False)``), so every kernel *and every kernel it calls* is the plain function.
The copies share the source files with the compiled modules: one source, two modes.

Engines (``module:attr`` names, zero-argument factories): ``fast_cl100k``, ``fast_o200k``
(``fast:cl100k_base`` / ``fast:o200k_base`` interpreted), ``peek2_cl100k``, ``peek2_o200k``.
They are slow (a Python step per character and per trie byte): meant for short texts.
"""

from __future__ import annotations

import functools
import types
from typing import Literal

import numpy as np

from tokspec import Encoder, EngineInfo, load_engine
from tokspec import __version__ as _VERSION
from tokspec._interpreted import interpreted_module
from tokspec._types import EncodingArrays
from tokspec.fast.peek2_unicode import code_points

__all__ = ["modules", "fast_cl100k", "fast_o200k", "peek2_cl100k", "peek2_o200k"]

@functools.lru_cache(maxsize=1)
def modules() -> tuple[types.ModuleType, types.ModuleType]:
    """(pretok_peek2, bpe_kernel) copies whose kernels are plain Python functions
    (``tokspec._interpreted.interpreted_module``: the one mechanism, which atheris instruments)."""
    from tokspec.fast import bpe_kernel, pretok_peek2

    return interpreted_module(pretok_peek2), interpreted_module(bpe_kernel)


class _Interpreted(Encoder):
    """A ``fast:`` or ``peek2:`` engine whose kernels run interpreted (see module docstring)."""

    def __init__(self, pattern: str, compiled: str | None) -> None:
        peek2, bpe_kernel = modules()
        self._peek2, self.pattern = peek2, pattern
        self._bpe = None
        if compiled is not None:  # reuse the compiled engine's (cached, self-checked) arrays
            source = load_engine(compiled)
            self._bpe = bpe_kernel.CompiledBPE(source.bpe.arrays)  # type: ignore[attr-defined]
        kind: Literal["tokenizer", "pretokenizer"] = "tokenizer" if compiled else "pretokenizer"
        base = compiled or f"peek2:{pattern}"
        self.info = EngineInfo(name=f"{base} (interpreted kernels)", kind=kind, library="tokspec.fast",
                               library_version=_VERSION, vocab_sha256=None if compiled is None else
                               source.info.vocab_sha256, description=f"{base}, kernels as plain Python")

    def _encode_arrays(self, text: str) -> EncodingArrays:
        cps = code_points(text)
        with np.errstate(over="ignore"):
            starts, ends = self._peek2.spans_of_code_points(cps, self.pattern)
            if self._bpe is None:
                return EncodingArrays(None, starts, ends)
            return self._bpe.encode_text(cps, starts, ends)  # type: ignore[no-any-return]


def fast_cl100k() -> Encoder:
    """``fast:cl100k_base`` with interpreted kernels."""
    return _Interpreted("cl100k_base", "fast:cl100k_base")


def fast_o200k() -> Encoder:
    """``fast:o200k_base`` with interpreted kernels."""
    return _Interpreted("o200k_base", "fast:o200k_base")


def peek2_cl100k() -> Encoder:
    """``peek2:cl100k_base`` with interpreted kernels."""
    return _Interpreted("cl100k_base", None)


def peek2_o200k() -> Encoder:
    """``peek2:o200k_base`` with interpreted kernels."""
    return _Interpreted("o200k_base", None)
