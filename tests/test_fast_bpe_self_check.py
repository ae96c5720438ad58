"""The compiled BPE's build-time self-check (``CompiledBPE.self_check``) is live and exact.

Contract (``tokspec.fast.bpe_kernel``): every reachable token encodes to itself; on a sound build the
whole check is ONE kernel call over all reachable tokens; otherwise SelfCheckError names the first
token (by id) that does not. With the kernels compiled, ``from_ranks`` runs it; interpreted
(``TOKSPEC_JIT=0``), the Python ``BacktrackBPE`` checks itself instead, so it is called directly here.
A broken kernel is simulated by rewriting the instance's ``encode_pieces`` output. The check runs
with the whole-piece shortcut off (``tokspec.fast._piece_table``): the shortcut's premise is what
it checks, so with the shortcut on it would pass by construction.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np
import pytest
from tokspec.fast.bpe_backtrack import BacktrackBPE, SelfCheckError
from tokspec.fast.bpe_kernel import CompiledBPE
from tokspec.fuzz.strategies import trained_bpe_ranks

SEEDS = [0, 1, 2, 3]


def _build(seed: int) -> tuple[BacktrackBPE, CompiledBPE]:
    ranks = trained_bpe_ranks(seed, alphabet=b"abcd", merges=40, segments=20, segment_len=(10, 30))
    return BacktrackBPE(ranks, self_check=False), CompiledBPE.from_ranks(ranks)


def _spy(compiled: CompiledBPE, rewrite: Callable[[list[int]], list[int]] | None = None) -> list[int]:
    """Wrap the instance's ``encode_pieces`` (also used by ``encode_bytes``); return the call log."""
    calls: list[int] = []
    original = compiled.encode_pieces

    def encode_pieces(data: bytes, bounds: np.ndarray, *, shortcut: bool = True) -> np.ndarray:
        assert shortcut is False, "the self-check must not go through the whole-piece lookup it proves"
        ids = original(data, bounds, shortcut=shortcut)
        calls.append(len(data))
        return ids if rewrite is None else np.array(rewrite(ids.tolist()), dtype=np.int64)

    compiled.encode_pieces = encode_pieces  # type: ignore[method-assign]
    return calls


def _reachable_multibyte(bpe: BacktrackBPE) -> list[int]:
    return [t for t, tok in enumerate(bpe.tokens) if bpe.reachable[t] and len(tok) >= 2]


@pytest.mark.parametrize("seed", SEEDS)
def test_sound_build_passes_in_one_kernel_call(seed: int) -> None:
    bpe, compiled = _build(seed)
    calls = _spy(compiled)
    compiled.self_check(bpe)
    reachable_bytes = sum(len(tok) for t, tok in enumerate(bpe.tokens) if bpe.reachable[t])
    assert calls == [reachable_bytes], "a sound build is checked by one call over every reachable token"


@pytest.mark.parametrize("seed", SEEDS)
def test_wrong_id_of_same_length_is_reported_naming_the_token(seed: int) -> None:
    """The kernel returns another id for one token (same number of ids): the batch compare catches
    it and the per-token pass names exactly that token, its bytes and what it encoded to."""
    bpe, compiled = _build(seed)
    bad = _reachable_multibyte(bpe)[-1]
    other = bpe.split_left[bad]
    _spy(compiled, lambda ids: [other if i == bad else i for i in ids])
    msg = (f"compiled BPE self-check failed: token id={bad} bytes={bpe.tokens[bad]!r} "
           f"encodes to [{other}]")
    with pytest.raises(SelfCheckError, match=re.escape(msg)):
        compiled.self_check(bpe)


@pytest.mark.parametrize("seed", SEEDS)
def test_token_split_in_two_is_reported(seed: int) -> None:
    """The kernel returns a token as its two halves (one id more): reported for the first such id."""
    bpe, compiled = _build(seed)
    bad = _reachable_multibyte(bpe)[0]
    left, right = bpe.split_left[bad], bpe.split_right[bad]
    _spy(compiled, lambda ids: [x for i in ids for x in ((left, right) if i == bad else (i,))])
    msg = f"token id={bad} bytes={bpe.tokens[bad]!r} encodes to [{left}, {right}]"
    with pytest.raises(SelfCheckError, match=re.escape(msg)):
        compiled.self_check(bpe)


def test_first_bad_token_is_named_when_several_are_bad() -> None:
    bpe, compiled = _build(0)
    bad = _reachable_multibyte(bpe)
    first, later = bad[0], bad[1:]
    assert later, "the table needs two multi-byte tokens"
    _spy(compiled, lambda ids: [bpe.split_left[i] if i in bad else i for i in ids])
    with pytest.raises(SelfCheckError, match=f"token id={first} "):
        compiled.self_check(bpe)


def test_from_ranks_runs_the_self_check_of_its_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    """``from_ranks`` checks every build once: by the Python encoder when interpreted, by the kernel
    when compiled (never neither). Both checks are made to fail here, so the one that runs is seen."""
    from tokspec._jit import JIT_ENABLED

    def python_check(self: BacktrackBPE) -> None:
        raise SelfCheckError("python self-check ran")

    def kernel_check(self: CompiledBPE, bpe: BacktrackBPE) -> None:
        assert isinstance(bpe, BacktrackBPE)
        raise SelfCheckError("kernel self-check ran")

    monkeypatch.setattr(BacktrackBPE, "self_check", python_check)
    monkeypatch.setattr(CompiledBPE, "self_check", kernel_check)
    ranks = trained_bpe_ranks(0, alphabet=b"abcd", merges=10, segments=10, segment_len=(10, 20))
    with pytest.raises(SelfCheckError, match="kernel" if JIT_ENABLED else "python"):
        CompiledBPE.from_ranks(ranks)


@pytest.mark.parametrize("compiled_mode", [True, False])
def test_from_ranks_checks_once_in_either_mode(compiled_mode: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """The mode switch of ``from_ranks`` in both positions, whatever mode this run is in (the kernels
    run interpreted either way): compiled mode runs only the kernel's check, over the Python encoder
    it built the tables from; interpreted mode only the Python encoder's own check."""
    from tokspec.fast import bpe_kernel

    calls: list[str] = []

    def python_check(self: BacktrackBPE) -> None:
        calls.append("python")

    def kernel_check(self: CompiledBPE, bpe: BacktrackBPE) -> None:
        assert isinstance(bpe, BacktrackBPE) and bpe.ranks == ranks
        calls.append("kernel")

    monkeypatch.setattr(bpe_kernel, "JIT_ENABLED", compiled_mode)
    monkeypatch.setattr(BacktrackBPE, "self_check", python_check)
    monkeypatch.setattr(CompiledBPE, "self_check", kernel_check)
    ranks = trained_bpe_ranks(0, alphabet=b"abcd", merges=10, segments=10, segment_len=(10, 20))
    built = CompiledBPE.from_ranks(ranks)
    assert calls == (["kernel"] if compiled_mode else ["python"])
    assert built.encode_bytes(b"abcdabcd").tolist() == BacktrackBPE(ranks).encode(b"abcdabcd")


def test_python_encoder_checks_itself_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    """``BacktrackBPE(ranks)`` runs its self-check unless told not to (``self_check=False``)."""
    calls: list[int] = []
    monkeypatch.setattr(BacktrackBPE, "self_check", lambda self: calls.append(len(self.tokens)))
    ranks = trained_bpe_ranks(0, alphabet=b"abcd", merges=10, segments=10, segment_len=(10, 20))
    BacktrackBPE(ranks)
    assert calls == [max(ranks.values()) + 1]
    BacktrackBPE(ranks, self_check=False)
    assert len(calls) == 1
