"""Issue 28, class 8: one mechanism gives the kernels' plain-Python twins, and the atheris harness
sees them (before: ``tokspec.fast.interpreted`` and ``DatrieUnigram(jit=False)`` each had their own
copy loader, and neither copy was instrumented: libFuzzer's coverage stayed at the harness).
"""

from __future__ import annotations

import sys
import types
from typing import Any

import pytest

from tokspec.fast import _unigram_kernels, bpe_kernel, interpreted, pretok_peek2


def test_both_users_share_one_mechanism() -> None:
    from tokspec._interpreted import interpreted_module
    from tokspec.fast import unigram_datrie

    assert interpreted.modules() == (interpreted_module(pretok_peek2), interpreted_module(bpe_kernel))
    assert unigram_datrie.interpreted_module(_unigram_kernels) is interpreted_module(_unigram_kernels)


def test_copies_made_after_registration_are_instrumented(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every function and method a fresh copy defines goes through the registered instrumenter;
    functions it imported from elsewhere do not (their own module is instrumented, or not, by
    the import hook)."""
    from tokspec import _interpreted

    seen: list[Any] = []
    # the copies of the kernel modules bpe_kernel imports from (_bpe_encode, _bpe_probe, ...) made
    # and cached first: the fresh copy below then rebinds to them, and only its own functions are
    # new (the test no longer depends on which test made them before)
    _interpreted.interpreted_module(bpe_kernel)
    monkeypatch.delitem(sys.modules, bpe_kernel.__name__ + "__interpreted")  # restored afterwards
    monkeypatch.setattr(_interpreted, "_instrument", None)
    _interpreted.instrument_copies(seen.append)
    try:
        copy = _interpreted.interpreted_module.__wrapped__(bpe_kernel)
    finally:
        _interpreted.instrument_copies(None)
    names = {f.__qualname__ for f in seen}
    own = {name for name, v in vars(copy).items()
           if isinstance(v, types.FunctionType) and v.__module__ == copy.__name__}
    assert own and own <= names, own - names
    assert "CompiledBPE.from_ranks" in names and "CompiledBPE.encode_text" in names
    assert all(f.__module__ == copy.__name__ for f in seen)


def test_atheris_instruments_a_copy_in_place(monkeypatch: pytest.MonkeyPatch) -> None:
    if sys.platform != "linux":  # atheris is a dependency on Linux only (pyproject)
        pytest.skip("atheris installs on Linux only")
    import atheris
    from tokspec import _interpreted

    monkeypatch.delitem(sys.modules, pretok_peek2.__name__ + "__interpreted", raising=False)

    plain = _interpreted.interpreted_module.__wrapped__(pretok_peek2)
    before = plain.split.__code__.co_code
    _interpreted.instrument_copies(atheris.instrument_func)
    try:
        copy = _interpreted.interpreted_module.__wrapped__(pretok_peek2)
    finally:
        _interpreted.instrument_copies(None)
    assert copy.split.__code__.co_code != before, "the copy's code is patched with coverage callbacks"
    assert copy.split("it's 12 cats", "cl100k_base") == plain.split("it's 12 cats", "cl100k_base")
