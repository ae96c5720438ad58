"""One source, two modes: how tokspec compiles its kernels.

Every kernel in ``tokspec.fast`` (and the compiled offset helpers of the production adapters) is a
plain Python function over numpy arrays, decorated with :func:`kernel`. By default it is compiled
by numba in nopython mode with ``nogil=True`` (threads run it in parallel) and ``cache=True``. With
``TOKSPEC_JIT=0`` in the environment (read once, at import of this module) the decorator returns the
function unchanged, so the same source runs interpreted: that is the mode the atheris targets fuzz
(coverage guidance sees the kernels' branches) and the mode mutation testing mutates.
:func:`interpreted` gives the plain function of any kernel in either mode, for the differential
target "compiled equals interpreted".

Cache (numba's on-disk cache of compiled machine code):

- Location: ``$NUMBA_CACHE_DIR`` if the user set it, else ``$TOKSPEC_CACHE/numba/<key>``, else
  ``~/.cache/tokspec/numba/<key>`` (``$XDG_CACHE_HOME`` honoured). It never lives in site-packages, so a read-only install works.
- ``<key>`` is a sha256 over the source of every module of the installed tokspec package and the
  numba version. numba itself invalidates a cache entry only when the kernel's *own* file changes;
  a kernel that calls a kernel from another module would keep stale machine code. Keying the whole
  directory on all sources makes any change invalidate every dependent entry (at the price of
  recompiling unrelated kernels after an edit, which only a developer pays).
- If the folder cannot be created or written, kernels compile without caching (slower start, never
  an import error). The folder must be the user's own (``tokspec._cache_store``: owner and mode
  checked). A cache entry numba cannot read back (garbage, truncated) or write (full, read-only)
  is recompiled, with a one-line note (``tokspec._jit_cache``), never an error of the kernel call.

Optimization level: the kernels' LLVM module passes run at -O2 (:data:`KERNEL_OPT`), not numba's
default -O3, unless ``NUMBA_OPT`` is set in the environment (then numba's own setting applies).
Measured on this project's 2-core VM: a cold first use of ``fast:cl100k_base`` compiled in 4.1 s of
CPU instead of 5.6 s, and ``encode_ids`` on 1 MB of English, code and Chinese-like text ran no
slower (best of 21: 15.3/14.2/25.2 ms against 16.0/14.5/26.3 ms). The level is switched only while
numba's compiler lock is held for one of tokspec's kernels, then restored: other numba code in the
process compiles at its own level.

Lean kernels (``kernel(lean=True)``): compiled without numba's rewrite passes (``no_rewrites``: its
constant folding of branches and getitems, and its fusion of array expressions) and without its
SSA reconstruction. Each is an optimization or a convenience of typing that a large scalar kernel
over arrays does not use; LLVM still optimizes the code. The fast BPE's merge kernel
(``_bpe_encode._encode``) and its callees are lean: their compile is most of a cold first use of
``fast:cl100k_base`` (issue 29). Measured on this project's 2-core VM, cold
first uses (empty cache, load and one ``encode_ids``) alternating between the full and the lean
pipeline, medians: the merge kernel alone lean, 5 each, 5.96 -> 4.94 s wall (its compile, numba's
own timer, 5.13 -> 4.15 s); its callees lean too, 4 each, 6.45 -> 5.11 s (5.52 -> 4.23 s).
``encode_ids`` of 2 MB of English, code and Chinese-like text and of 0.5-2 KB texts: no change
beyond the machine's noise. Dropping a rewrite or SSA changes what numba must type, not what the
code computes (numba itself retries a failed compile without its rewrites): a construct only they
make typable would fail at the kernel's first call, an error, not other results.
``tests/test_jit_lean.py`` checks a lean kernel against the full pipeline and Python, and that the
merge kernels are lean.

Calls without the dispatcher: :func:`entry_point` gives the machine-code entry of a version a kernel
has compiled already, for a caller that builds every argument itself and so knows their types (the
dispatcher's typing costs about 15 ns per argument per call; ``tokspec.fast._bpe_text``).

Out of scope: parallel=True loops (threads come from the callers, e.g. ``lopt:``), GPU targets.
"""

from __future__ import annotations

import functools
import hashlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar, cast, overload

__all__ = ["JIT_ENABLED", "KERNEL_OPT", "kernel", "interpreted", "cache_dir", "entry_point"]

F = TypeVar("F", bound=Callable[..., Any])

#: False when ``TOKSPEC_JIT=0`` (interpreted mode); fixed at import.
JIT_ENABLED: bool = os.environ.get("TOKSPEC_JIT", "1").strip().lower() not in {"0", "false", "no", "off"}

_PACKAGE_ROOT = Path(__file__).resolve().parent.parent  # the folder holding the tokspec package

#: LLVM optimization level of the kernels' module passes (module docstring); None: numba's own
#: (``NUMBA_OPT`` set by the user).
KERNEL_OPT: int | None = None if os.environ.get("NUMBA_OPT") else 2


def _source_key() -> str:
    """sha256 over every tokspec module's bytes (sorted paths) and the numba version."""
    digest = hashlib.sha256()
    roots = {Path(__file__).resolve().parent}
    try:  # the layers (fast/, spec/, ...) live outside src/tokspec in a source checkout
        import tokspec.fast as _fast

        roots.update(Path(p).resolve() for p in _fast.__path__)
    except ImportError:  # pragma: no cover - a broken install; the key just covers less
        pass
    for root in sorted(roots):
        for path in sorted(root.rglob("*.py")):
            digest.update(str(path.relative_to(root)).encode())
            digest.update(path.read_bytes())
    try:
        import numba

        digest.update(numba.__version__.encode())
    except ImportError:  # pragma: no cover
        pass
    return digest.hexdigest()[:16]


def cache_dir() -> Path | None:
    """The writable folder for numba's cache (see module docstring), or None if there is none."""
    explicit = os.environ.get("NUMBA_CACHE_DIR")
    if explicit:
        return Path(explicit)
    from tokspec._cache_store import cache_root, safe_folder

    root = cache_root()  # per-user, owner and mode checked (None: uncached, noted)
    if root is None:
        return None
    path = root / "numba" / _source_key()
    try:
        path.parent.mkdir(mode=0o700, exist_ok=True)
        path.mkdir(mode=0o700, exist_ok=True)
        if safe_folder(path.parent) or safe_folder(path):
            return None
        with tempfile.NamedTemporaryFile(dir=path):
            pass
    except OSError:
        return None
    return path


_CACHE_DIR: Path | None = None
_CACHE_READY = False


def _ensure_cache() -> bool:
    """Point numba at :func:`cache_dir` once; True if caching is possible."""
    global _CACHE_DIR, _CACHE_READY
    if not _CACHE_READY:
        _CACHE_DIR = cache_dir()
        if _CACHE_DIR is not None:
            from numba.core import config

            os.environ.setdefault("NUMBA_CACHE_DIR", str(_CACHE_DIR))
            config.CACHE_DIR = str(_CACHE_DIR)  # type: ignore[attr-defined]  # set by numba at run time
        _CACHE_READY = True
    return _CACHE_DIR is not None


@overload
def kernel(fn: F, *, inline: bool = False, cache: bool = True, lean: bool = False) -> F: ...
@overload
def kernel(fn: None = None, *, inline: bool = False, cache: bool = True, lean: bool = False) -> Callable[[F], F]: ...
def kernel(fn: F | None = None, *, inline: bool = False, cache: bool = True, lean: bool = False) -> F | Callable[[F], F]:
    """Compile ``fn`` with numba (nopython, nogil, cached), or return it as is when interpreted.

    The compiled function keeps the plain one as ``.py_func`` (numba's attribute), which
    :func:`interpreted` returns. ``@kernel(inline=True)``: numba inlines the body into every
    compiled caller (``inline="always"``): for a kernel called once per pretoken with many array
    arguments, whose call would otherwise pass and reference-count each array per call.
    ``cache=False``: never read or write numba's disk cache for this kernel (a copy of a module
    whose kernels must not share cached machine code with the real ones, e.g. a mutant's).
    ``lean=True``: compile with :func:`_lean_options` (module docstring, "Lean kernels"), for
    a large scalar kernel whose compile a cold start waits for.
    """
    if fn is None:
        def decorate(f: F) -> F:
            return _compile(f, inline, cache, lean)
        return decorate
    return _compile(fn, inline, cache, lean)


def _compile(fn: F, inline: bool, cache: bool, lean: bool) -> F:
    """:func:`kernel`'s work (not through the module global ``kernel``, which a module copy may
    have swapped while its decorators run, see ``tokspec.fuzz.mutants``)."""
    if not JIT_ENABLED:
        return fn
    import numba

    cached = cache and _ensure_cache()
    options: dict[str, Any] = _lean_options() if lean else {}
    compiled = numba.njit(nogil=True, cache=cached, inline="always" if inline else "never", **options)(fn)
    if KERNEL_OPT is not None:
        _compile_at(compiled, KERNEL_OPT)
    if cached:
        from tokspec._jit_cache import guard_cache

        guard_cache(compiled)
    return cast(F, compiled)  # a numba Dispatcher, called like fn


@functools.cache
def _lean_options() -> dict[str, Any]:
    """numba options of a lean kernel (made once): ``no_rewrites`` (a numba target option) and a
    compiler class whose nopython pipeline is numba's own without SSA reconstruction; ``{}``
    (numba's full pipeline) where this numba lacks those internals."""
    try:
        from numba.core.compiler import CompilerBase, DefaultPassBuilder
        from numba.core.typed_passes import PreLowerStripPhis
        from numba.core.untyped_passes import ReconstructSSA
    except ImportError:  # pragma: no cover - another numba
        return {}

    class LeanCompiler(CompilerBase):
        """numba's nopython pipeline less its SSA passes (older numba releases typed without them)."""

        def define_pipelines(self) -> list[Any]:
            build = DefaultPassBuilder.define_nopython_pipeline
            pipeline = build(self.state)  # type: ignore[no-untyped-call]  # numba is untyped
            pipeline.passes = [(p, d) for p, d in pipeline.passes if p not in (ReconstructSSA, PreLowerStripPhis)]
            pipeline.finalize()
            return [pipeline]

    return {"no_rewrites": True, "pipeline_class": LeanCompiler}


def _compile_at(dispatcher: Any, level: int) -> None:
    """Make ``dispatcher`` compile each signature with numba's ``config.OPT`` at ``level``, set and
    restored under numba's (re-entrant) compiler lock, so no other compile sees it. Kernels a
    kernel calls compile inside its window. A numba without these internals: left as it is."""
    try:
        from numba.core import config as numba_config
        from numba.core.compiler_lock import global_compiler_lock
        config: Any = numba_config  # OPT is set by numba at run time (no stub declares it)
        opt_level = type(config.OPT)(level)
    except (ImportError, AttributeError, TypeError, ValueError):  # pragma: no cover - other numba
        return
    inner = dispatcher.compile

    def compile_at_level(sig: Any) -> Any:
        with global_compiler_lock:
            saved = config.OPT
            config.OPT = opt_level
            try:
                return inner(sig)
            finally:
                config.OPT = saved

    dispatcher.compile = compile_at_level


def interpreted(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The plain-Python body of a :func:`kernel` (the function itself in interpreted mode)."""
    return getattr(fn, "py_func", fn)


def entry_point(fn: Callable[..., Any], args: tuple[Any, ...]) -> Callable[..., Any] | None:
    """The machine-code entry of the version of kernel ``fn`` compiled (or loaded from the cache)
    for exactly the numba types of ``args``, or None: interpreted mode, no such version yet, or a
    numba without these internals. Called, it unboxes its arguments and runs the kernel as the
    dispatcher would, but skips the dispatcher's typing of each argument and its choice of a
    version: arguments whose numba types differ from those of ``args`` (dtype, dimensions, layout,
    read-only flag, alignment) are undefined behaviour, not an error. Only a caller that builds
    each argument itself, with the same types on every call, may call it."""
    if not JIT_ENABLED:
        return None
    try:
        import numba

        types = tuple(numba.typeof(a) for a in args)  # type: ignore[no-untyped-call]  # numba is untyped
        version = getattr(fn, "overloads", {}).get(types)
    except (ImportError, TypeError, ValueError):  # pragma: no cover - a value numba cannot type
        return None
    entry: Callable[..., Any] | None = getattr(version, "entry_point", None)
    return entry
