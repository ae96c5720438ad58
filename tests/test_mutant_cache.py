"""Regression: a mutant copy of a compiled module must not write numba's disk cache.

``tokspec.fuzz.mutants`` copies ``tokspec.fast.pretok_peek2`` (same source file) and changes a table.
Its kernels used to be compiled with ``cache=True``: the cached machine code, keyed by the shared
source file, was then loaded by the real ``fast:`` engines in later processes using the same cache
(found as "No module named 'tokspec.fast.pretok_peek2__mutant'" faults of fast:cl100k_base).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

_MUTANT = '''
from tokspec.fuzz.mutants import peek2_wrong_cell
print(peek2_wrong_cell().encode("a b  c").offsets)
'''
_REAL = '''
import json
from tokspec import load_engine
from tokspec.diff import compare
fast, ref = load_engine("fast:cl100k_base"), load_engine("tiktoken:cl100k_base")
texts = ["a b  c", "ab", "hello  world\\n\\n 12345 it's", "x" * 50]
print(json.dumps([compare(fast, ref, t).classification for t in texts]))
'''


def test_mutant_kernels_leave_the_cache_to_the_real_engine(tmp_path: Path) -> None:
    env = dict(os.environ, TOKSPEC_CACHE=str(tmp_path / "cache"))
    env.pop("NUMBA_CACHE_DIR", None)
    env.pop("TOKSPEC_JIT", None)
    first = subprocess.run([sys.executable, "-c", _MUTANT], env=env, capture_output=True, text=True, timeout=600)
    assert first.returncode == 0, first.stderr[-2000:]
    second = subprocess.run([sys.executable, "-c", _REAL], env=env, capture_output=True, text=True, timeout=600)
    assert second.returncode == 0, second.stderr[-2000:]
    assert json.loads(second.stdout.strip().splitlines()[-1]) == [None, None, None, None], second.stdout
