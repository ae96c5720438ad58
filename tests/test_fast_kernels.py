"""The compiled kernels of tokspec.fast: one source, two modes, and long inputs.

- compiled == interpreted: the same kernels run as plain Python (``tokspec.fast.interpreted`` in
  this process, and ``TOKSPEC_JIT=0`` in a subprocess) give identical ids and offsets;
- the compiled backtracking BPE == the Python ``BacktrackBPE`` (same algorithm, other code) on
  trained tiny vocabularies and on cl100k with arbitrary bytes;
- the compiled Peek2 == the plain-Python run-search Peek2 (``peek2_runs``);
- long inputs (>= 1 MB of English-like, Chinese-like, code and random Unicode text): compiled
  ``fast:cl100k_base`` / ``fast:o200k_base`` equal tiktoken (ids and offsets).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokspec import load_engine
from tokspec.app.bench.fast import chinese_like, code, english
from tokspec.app.bench.stages import code_varied
from tokspec.corpus import build_corpus
from tokspec.fast import interpreted
from tokspec.fast import pretok_peek2 as p2
from tokspec.fast.bpe_backtrack import BacktrackBPE
from tokspec.fast.bpe_kernel import CompiledBPE
from tokspec.fuzz.strategies import trained_bpe_ranks

# characters from every class the Peek2 patterns distinguish (see test_fast_peek2.TRICKY)
TRICKY = (" '\r\n\t\x0b\x85\xa0\u2028\u3000\u200b aAsSdDmMtTlLvVeErR\u017f\u212a\u01c5\u02b0\u4e2d"
          "\u00e9\u00c9\u0301\u0903\u20dd0159\u0663\u2167\u00bd\u0295\U00018d80.,!?/-\u2019`\"_@"
          "\U0001f642\u200d\x00")


@pytest.mark.parametrize("pattern", p2.PATTERN_NAMES)
@given(text=st.text(alphabet=TRICKY, max_size=40))
def test_hyp_kernel_spans_equal_run_search_peek2(pattern: str, text: str) -> None:
    assert p2.split(text, pattern) == p2.split_runs(text, pattern)


@given(text=st.text(alphabet=TRICKY, max_size=30))
@settings(max_examples=60)
def test_hyp_peek2_interpreted_equals_compiled(text: str) -> None:
    for pattern in ("cl100k_base", "o200k_base"):
        starts, ends = interpreted.modules()[0].spans(text, pattern)
        assert list(zip(starts.tolist(), ends.tolist())) == p2.split(text, pattern)


@pytest.mark.parametrize("vocab", ["cl100k", "o200k"])
def test_bpe_interpreted_equals_compiled(vocab: str) -> None:
    slow = load_engine(f"tokspec.fast.interpreted:fast_{vocab}")
    fast = load_engine(f"fast:{vocab}_base")
    texts = build_corpus(seed=5)[::6] + ["\u4e2d\u6587\u5b57" * 20, "a" * 300, " " * 50 + "x", "\U0001f642" * 30]
    for text in texts:
        got, want = slow.encode_arrays(text), fast.encode_arrays(text)
        assert got.same_as(want), text[:60]


def test_encode_ids_is_encode_without_offsets() -> None:
    from tokspec import InvalidTextError
    fast = load_engine("fast:cl100k_base")
    for text in build_corpus(seed=6)[::10] + [""]:
        assert fast.encode_ids(text).tolist() == list(fast.encode(text).ids or ())  # type: ignore[attr-defined]
    with pytest.raises(InvalidTextError, match="surrogate"):
        fast.encode_ids("a\ud800")  # type: ignore[attr-defined]


def test_jit_off_subprocess_equals_compiled() -> None:
    """TOKSPEC_JIT=0 makes every kernel plain Python for the whole process: same output."""
    texts = ["Hello, world! It's 2024.\n\n  x", "\u4e2d\u6587\u5b57 123456 I'LL \u017ft", "\U0001f642\u200d!\r\n"]
    engines = ["fast:cl100k_base", "peek2:o200k_base", "peek2:llama3"]
    code_ = ("import json, sys; from tokspec import load_engine; from tokspec._jit import JIT_ENABLED\n"
             "texts, names = json.loads(sys.stdin.read())\n"
             "out = [[list(load_engine(n).encode(t).offsets), load_engine(n).encode(t).ids] for n in names for t in texts]\n"
             "print(json.dumps([JIT_ENABLED, out]))")
    env = dict(os.environ, TOKSPEC_JIT="0")
    proc = subprocess.run([sys.executable, "-c", code_], input=json.dumps([texts, engines]), env=env,
                          capture_output=True, text=True, timeout=300, check=True)
    jit_enabled, out = json.loads(proc.stdout)
    assert jit_enabled is False
    want = [[[list(o) for o in load_engine(n).encode(t).offsets],
             None if load_engine(n).encode(t).ids is None else list(load_engine(n).encode(t).ids)]  # type: ignore[arg-type]
            for n in engines for t in texts]
    assert out == want


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_compiled_bpe_equals_python_backtracking_tiny(seed: int) -> None:
    ranks = trained_bpe_ranks(seed, alphabet=b"abc", merges=60, segments=20, segment_len=(20, 40))
    python, compiled = BacktrackBPE(ranks), CompiledBPE.from_ranks(ranks)
    rng = random.Random(seed)
    for _ in range(300):
        data = bytes(rng.choice(b"abc") for _ in range(rng.randint(1, 60)))
        assert compiled.encode_bytes(data).tolist() == python.encode(data), data


@given(data=st.binary(min_size=1, max_size=80))
@settings(max_examples=200)
def test_hyp_compiled_bpe_equals_python_backtracking_cl100k(data: bytes) -> None:
    compiled = load_engine("fast:cl100k_base").bpe  # type: ignore[attr-defined]
    assert compiled.encode_bytes(data).tolist() == _python_cl100k().encode(data)


def _python_cl100k() -> BacktrackBPE:
    global _PY
    if _PY is None:
        from tokspec.formats.vocab import load_named_tiktoken
        _PY = BacktrackBPE(load_named_tiktoken("cl100k_base").ranks, self_check=False)
    return _PY


_PY: BacktrackBPE | None = None


def random_unicode(n_chars: int, seed: int = 0) -> str:
    """Code points drawn from every plane's assigned-ish ranges (no surrogates), with spaces."""
    rng = random.Random(seed)
    ranges = [(0x20, 0x7E), (0xA0, 0x2FFF), (0x3000, 0x9FFF), (0xAC00, 0xD7A3), (0xE000, 0xFFFD),
              (0x10000, 0x1FFFF), (0x20000, 0x2FFFF), (0xE0000, 0xE01EF)]
    out = []
    for _ in range(n_chars):
        lo, hi = rng.choice(ranges)
        out.append(" " if rng.random() < 0.1 else chr(rng.randint(lo, hi)))
    return "".join(out)


LONG_TEXTS = {
    "english": lambda: english(1_100_000),
    "chinese-like": lambda: chinese_like(1_100_000),
    "code": lambda: code(1_100_000),
    "library-code": lambda: code_varied(1_100_000, part=2),  # ASCII runs with some non-ASCII between
    "random-unicode": lambda: random_unicode(350_000),
}


@pytest.mark.parametrize("vocab", ["cl100k_base", "o200k_base"])
@pytest.mark.parametrize("kind", sorted(LONG_TEXTS))
def test_long_input_equals_tiktoken(vocab: str, kind: str) -> None:
    """>= 1 MB compiled: ids from tiktoken's encode_ordinary, offsets from the tiktoken adapter;
    ``encode_ids`` (byte positions counted from the code points, not the ``cbs`` array) too."""
    text = LONG_TEXTS[kind]()
    assert len(text.encode("utf-8")) >= 1_000_000
    fast = load_engine(f"fast:{vocab}")
    got = fast.encode_arrays(text)
    want = load_engine(f"tiktoken:{vocab}").encode_arrays(text)
    assert got.ids is not None and want.ids is not None
    assert fast.encode_ids(text).tolist() == want.ids.tolist()  # type: ignore[attr-defined]
    if not got.same_as(want):
        k = int(np.argmax((got.ids[:len(want.ids)] != want.ids[:len(got.ids)])))
        pytest.fail(f"{vocab} {kind}: first difference at token {k} of {len(want.ids)}")


def test_an_interpreted_copy_is_a_registered_module(monkeypatch: pytest.MonkeyPatch) -> None:
    """Like an import, the copy (``tokspec._interpreted.interpreted_module``, the one mechanism) is
    registered in ``sys.modules`` under its own name, so code that finds a module by name (import,
    pickle by reference) finds the copy; the original module is untouched."""
    import importlib
    import pickle

    from tokspec._interpreted import interpreted_module

    name = "tokspec.fast.pretok_peek2__interpreted"
    monkeypatch.delitem(sys.modules, name, raising=False)  # the cached copy comes back afterwards
    copy = interpreted_module.__wrapped__(p2)  # a fresh copy, not the cached one
    assert copy.__name__ == name and copy is not p2 and sys.modules["tokspec.fast.pretok_peek2"] is p2
    assert importlib.import_module(name) is copy
    assert pickle.loads(pickle.dumps(copy.split)) is copy.split
    assert copy.split("it's 12 cats", "cl100k_base") == p2.split("it's 12 cats", "cl100k_base")
