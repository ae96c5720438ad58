"""A first use of a ``fast:`` BPE engine with an empty cache, on two cores: a child process builds the
tables (and compiles the Peek2 kernel into numba's disk cache) while this process compiles the
merge kernel, which is most of a cold start.

``CompiledBPE.from_ranks`` on an empty cache does, in one process: build the tables in Python
(``BacktrackBPE``, about 1 s for cl100k_base), compile ``_encode`` (about 3.5 s) for the self-check,
and the first ``encode`` compiles the Peek2 kernel (about 0.8 s). :func:`compiled_bpe` does the same
work in two processes:

- the child (``python -m tokspec.fast._cold_start``, started through ``tokspec._procs.spawn``, so it
  dies with this process, even on SIGKILL) builds the tables exactly as ``from_ranks`` does, writes
  them to a private temporary folder (digest-checked file, ``tokspec._cache_store``), prints
  ``tables``, then compiles the Peek2 kernel of ``pattern`` (numba's on-disk cache: this process
  then loads it instead of compiling) and prints ``compiled``;
- meanwhile this process compiles ``_encode`` by building a 256-token vocabulary of single bytes
  (the same code path and argument types, so the same compiled version, now in numba's cache);
- then it loads the child's tables, runs the self-check on them (the same check ``from_ranks``
  runs: every reachable token encodes to itself) and only then stores them in the table cache.

Nothing the child makes is trusted unchecked: its tables pass the digest and the self-check before
they are used or cached, and numba's cache is numba's (keyed by code and types; two writers replace
whole files). Any failure of the child (vocabulary error, crash, no ``tables`` within
:data:`TABLES_WAIT` seconds) means falling back to ``from_ranks`` here, which raises the same
errors as before. Used only when it can help: compiled kernels, a cache folder, no cached tables yet,
a POSIX system with at least two usable CPUs, and ``TOKSPEC_COLD_CHILD`` not ``0``.
Out of scope: the Unigram engines; more than one child.
"""

from __future__ import annotations

import os
import pickle
import select
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any, cast

import numpy as np

from tokspec import _procs
from tokspec._jit import JIT_ENABLED
from tokspec.fast._cache import load_arrays, save_arrays
from tokspec.fast.bpe_backtrack import BacktrackBPE
from tokspec.fast.bpe_kernel import _ARRAY_NAMES, _PACKED_NAMES, CompiledBPE
from tokspec.fast.bpe_tables import arrays_of, cache_path

__all__ = ["compiled_bpe", "use_child", "TABLES_WAIT", "COMPILED_WAIT"]

TABLES_WAIT = 120.0  # seconds from the start for the child's tables, else built here
COMPILED_WAIT = 30.0  # seconds more for its Peek2 compile, else stopped (compiled here on first use)
_TEXT = "hello world, the first use of an engine: 12345 \u4e2d\u6587!"


def use_child(sha256: str | None, *, jit: bool = JIT_ENABLED) -> Path | None:
    """The table cache file a child would fill for the vocabulary ``sha256``, or None when the child
    cannot help (see module docstring; ``jit``: whether kernels are compiled)."""
    if not jit or sha256 is None or os.environ.get("TOKSPEC_COLD_CHILD") == "0":
        return None
    if os.name != "posix" or not sys.executable or _cpus() < 2:
        return None
    path = cache_path(sha256)
    return None if path is None or path.exists() else path


def _cpus() -> int:
    affinity = getattr(os, "sched_getaffinity", None)  # Linux; elsewhere all CPUs
    return len(affinity(0)) if affinity is not None else (os.cpu_count() or 1)


def compiled_bpe(ranks: Mapping[bytes, int], sha256: str | None, pattern: str | None = None, *,
                 jit: bool = JIT_ENABLED) -> CompiledBPE:
    """``CompiledBPE.from_ranks(ranks, sha256)``, built as the module docstring says when the table
    cache is empty; ``pattern``: the Peek2 pattern whose kernel the child also compiles. ``jit``
    (tests): take the child's path even with interpreted kernels, as with compiled ones."""
    path = use_child(sha256, jit=jit)
    if path is None:
        return CompiledBPE.from_ranks(ranks, sha256)
    folder = Path(tempfile.mkdtemp())
    proc: subprocess.Popen[bytes] | None = None
    try:
        source = _ranks_source(ranks, folder)
        try:
            proc = _procs.spawn([sys.executable, "-m", "tokspec.fast._cold_start", source, str(folder / "tables.npz"),
                                 path.stem, pattern or ""], stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL)  # its errors are raised again here
        except OSError:  # no process to be had: build here
            return CompiledBPE.from_ranks(ranks, sha256)
        start = time.monotonic()
        CompiledBPE.from_ranks({bytes([b]): b for b in range(256)})  # compiles _encode meanwhile
        loaded = None
        if _wait_line(proc, b"tables", start + TABLES_WAIT):
            loaded = load_arrays(folder / "tables.npz", path.stem)
        if loaded is None or set(loaded) != _ARRAY_NAMES | _PACKED_NAMES:
            _procs.stop(proc)  # before building here: the child would take the second core
            return CompiledBPE.from_ranks(ranks, sha256)
        built = CompiledBPE({k: loaded[k] for k in _ARRAY_NAMES}, {k: loaded[k] for k in _PACKED_NAMES})
        built.self_check(cast(BacktrackBPE, _TokenView(built.arrays)))  # raises SelfCheckError
        save_arrays(path, path.stem, loaded)
        if pattern:  # numba's cache then has the Peek2 kernel (else the first encode compiles it)
            _wait_line(proc, b"compiled", time.monotonic() + COMPILED_WAIT)
        return built
    finally:
        if proc is not None:  # stopped even when done: after "compiled" it has nothing left to write
            _procs.stop(proc)
            cast(IO[bytes], proc.stdout).close()
        shutil.rmtree(folder)


class _TokenView:
    """What ``CompiledBPE.self_check`` reads of a ``BacktrackBPE`` (``tokens``, ``reachable``), from
    the arrays: a token is reachable iff it is one byte or has a last merge (``split_left[t] != t``,
    the rule ``_piece_table.build_piece_table`` also relies on)."""

    def __init__(self, arrays: Mapping[str, np.ndarray]) -> None:
        offsets = arrays["tok_offsets"].tolist()
        raw = arrays["tok_bytes"].tobytes()
        self.tokens = [raw[offsets[i]:offsets[i + 1]] for i in range(len(offsets) - 1)]
        left = arrays["split_left"]
        self.reachable: list[bool] = ((arrays["tok_len"] == 1) | (left != np.arange(len(left)))).tolist()


def _ranks_source(ranks: Mapping[bytes, int], folder: Path) -> str:
    """How the child gets the ranks: a named vocabulary not parsed yet by name (the child parses it,
    not this process), else a pickle file of the dict."""
    from tokspec.formats.vocab import LazyRanks

    if isinstance(ranks, LazyRanks) and not ranks.parsed:
        return f"named:{ranks.name}"
    with open(folder / "ranks.pickle", "wb") as fh:
        pickle.dump(dict(ranks), fh)
    return f"pickle:{folder / 'ranks.pickle'}"


def _wait_line(proc: subprocess.Popen[bytes], want: bytes, deadline: float) -> bool:
    """Read the child's lines until ``want`` (True), EOF or ``deadline`` (False)."""
    out = cast(IO[bytes], proc.stdout)
    while select.select([out], [], [], max(0.0, deadline - time.monotonic()))[0]:
        line = out.readline()
        if line.strip() == want:
            return True
        if not line:  # EOF: the child is gone
            return False
    return False


def _load_ranks(source: str) -> Mapping[bytes, int]:
    """The ranks :func:`_ranks_source` describes."""
    kind, _, arg = source.partition(":")
    if kind == "named":
        from tokspec.formats.vocab import load_named_tiktoken

        return load_named_tiktoken(arg).ranks
    with open(arg, "rb") as fh:
        ranks: Mapping[bytes, int] = pickle.load(fh)
    return ranks


def _child(source: str, out: str, key: str, pattern: str) -> None:
    """The child: the tables as ``from_ranks`` builds them (no self-check: the parent runs it),
    then the Peek2 kernel of ``pattern`` compiled on a short text, as the engine calls it. Refuses
    (SystemExit) unless ``key`` is the cache key its own code gives (the same tokspec as the parent's)."""
    mine = cache_path(key.partition("-")[0])
    if mine is None or mine.stem != key:
        raise SystemExit(f"tokspec cold-start child: key={key!r} is not this code's table key")
    built = CompiledBPE(arrays_of(BacktrackBPE(_load_ranks(source), self_check=False)))
    tables: dict[str, Any] = {**built.arrays, "trie": built.trie, "pairs": built.pairs, "pieces": built.pieces,
                              "level3": built.level3}
    if save_arrays(Path(out), key, tables):
        _say("tables")
    if pattern:
        from tokspec.fast.peek2_unicode import code_points
        from tokspec.fast.pretok_peek2 import spans_of_code_points

        spans_of_code_points(code_points(_TEXT), pattern)
        _say("compiled")


def _say(word: str) -> None:
    sys.stdout.write(word + "\n")
    sys.stdout.flush()  # now: the parent is waiting for this line


if __name__ == "__main__":
    _child(*sys.argv[1:5])
