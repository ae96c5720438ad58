"""The one mechanism giving a kernel module's plain-Python twin in a process where it is compiled.

``TOKSPEC_JIT=0`` switches every kernel to plain Python for a whole process. :func:`interpreted_module`
gives the same for one module inside a compiled process, for the differential "compiled equals
interpreted" checks and for coverage-guided fuzzing: it executes a second copy of the module's
source file (``<name>__interpreted``, registered in ``sys.modules``) with ``tokspec._jit.kernel``
replaced by the identity, then rebinds every kernel the copy imported from another ``tokspec.fast``
module to that module's interpreted copy, so every kernel *and every kernel it calls* is plain
Python. Same file, so the same source by construction. Both users -- ``tokspec.fast.interpreted``
(Peek2 + BPE engines) and ``DatrieUnigram(jit=False)`` -- go through here.

Coverage: a copy executed from a file bypasses ``atheris.instrument_imports`` (which hooks the
import system by module name), so libFuzzer would not see the kernels' branches. The fuzz harness
therefore registers atheris' ``instrument_func`` with :func:`instrument_copies`; every function
(and method) defined by a copy made afterwards is instrumented. Copies are cached per module: make
them after registering (the harness does, before loading targets).

Out of scope: modules that are not kernel modules (nothing to switch).
"""

from __future__ import annotations

import functools
import importlib.util
import sys
import threading
import types
from collections.abc import Callable
from typing import Any

__all__ = ["interpreted_module", "instrument_copies", "exec_copy", "COPY_SUFFIX"]

COPY_SUFFIX = "__interpreted"
_LOCK = threading.RLock()
_instrument: Callable[[Any], Any] | None = None


def instrument_copies(instrument: Callable[[Any], Any] | None) -> None:
    """Apply ``instrument`` (e.g. ``atheris.instrument_func``) to every function of copies made
    from now on; None stops it."""
    global _instrument
    _instrument = instrument


def _instrument_copy(plain: types.ModuleType) -> None:
    if _instrument is None:
        return
    for value in list(vars(plain).values()):
        if isinstance(value, types.FunctionType) and value.__module__ == plain.__name__:
            _instrument(value)
        elif isinstance(value, type) and value.__module__ == plain.__name__:
            for member in vars(value).values():
                fn = member.__func__ if isinstance(member, (classmethod, staticmethod)) else member
                if isinstance(fn, types.FunctionType):
                    _instrument(fn)


def _plain(fn: Any = None, **_options: Any) -> Any:
    """``tokspec._jit.kernel`` as ``TOKSPEC_JIT=0`` makes it: the identity (``@kernel`` and
    ``@kernel(inline=True)`` alike)."""
    return fn if fn is not None else (lambda f: f)


def exec_copy(path: str, name: str, kernel: Callable[..., Any]) -> types.ModuleType:
    """Execute a second copy of the module file ``path`` as module ``name`` (registered in
    ``sys.modules``: dataclasses look their module up while it runs) with ``tokspec._jit.kernel``
    replaced by ``kernel`` meanwhile. The one way module copies are made: plain Python here
    (:func:`interpreted_module`), compiled without the disk cache in ``tokspec.fuzz.mutants``."""
    import tokspec._jit as jit

    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None, path
    copy = importlib.util.module_from_spec(spec)
    with _LOCK:
        saved = jit.kernel
        jit.kernel = kernel  # for this copy only
        try:
            sys.modules[name] = copy
            spec.loader.exec_module(copy)
        finally:
            jit.kernel = saved
    return copy


@functools.cache
def interpreted_module(module: types.ModuleType) -> types.ModuleType:
    """The plain-Python copy of kernel module ``module`` (module docstring). O(import of the module)."""
    assert module.__file__ is not None, module
    plain = exec_copy(module.__file__, module.__name__ + COPY_SUFFIX, _plain)  # what TOKSPEC_JIT=0 does
    for attr, value in list(vars(plain).items()):  # kernels imported from another kernel module
        fn = getattr(value, "py_func", None)
        if fn is not None and fn.__module__.startswith("tokspec.fast.") and fn.__module__ != module.__name__:
            setattr(plain, attr, getattr(interpreted_module(sys.modules[fn.__module__]), fn.__name__))
    _instrument_copy(plain)
    return plain
