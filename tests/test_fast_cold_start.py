"""``tokspec.fast._cold_start``: a cold ``fast:`` BPE build with the tables made in a child process.

- the child's tables are byte-identical to ``CompiledBPE.from_ranks``'s (every array, packed tables
  included), they come from the child (``from_ranks`` runs only on the 256-byte warm-up vocabulary),
  they are cached, and no child or temporary folder is left;
- every failure of the child falls back to ``from_ranks`` here: a vocabulary error (the same error
  is raised), a child that never answers (stopped after the wait), a file that fails its digest;
- tables that pass the digest but fail the self-check raise SelfCheckError and are not cached;
- when the child is used at all (``use_child``), and ``_TokenView`` against ``BacktrackBPE``.

The child path is taken with interpreted kernels too (``jit=True``), so this runs under
``TOKSPEC_JIT=0``; each child costs about half a second to start.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import tokspec.fast._cold_start as cold
from tokspec import _procs
from tokspec.fast.bpe_backtrack import BacktrackBPE, NonMonotoneVocabularyError
from tokspec.fast.bpe_kernel import _ARRAY_NAMES, _PACKED_NAMES, CompiledBPE, SelfCheckError
from tokspec.fast.bpe_tables import cache_path
from tokspec.fuzz.strategies import trained_bpe_ranks

SHA = "5" * 64  # a vocabulary hash for the cache file name (the content is what is compared)


def _with_unreachable() -> dict[bytes, int]:
    ranks = {bytes([i]): i for i in range(256)}
    ranks.update({b"ab": 256, b"xyz": 257, b"abq": 300})  # xyz unreachable; ids 258-299 unused
    return ranks


@pytest.fixture()
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TOKSPEC_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("TOKSPEC_COLD_CHILD", raising=False)
    monkeypatch.setattr(cold.tempfile, "tempdir", str(tmp_path))  # the transfer folder lands here
    return tmp_path


def _tables(built: CompiledBPE) -> dict[str, np.ndarray]:
    return {**built.arrays, "trie": built.trie, "pairs": built.pairs, "pieces": built.pieces, "level3": built.level3}


def _assert_same(got: CompiledBPE, want: CompiledBPE) -> None:
    a, b = _tables(got), _tables(want)
    assert set(a) == set(b) == _ARRAY_NAMES | _PACKED_NAMES
    for name in a:
        assert a[name].dtype == b[name].dtype and np.array_equal(a[name], b[name]), name


def _record_waits(monkeypatch: pytest.MonkeyPatch) -> list[tuple[bytes, bool]]:
    """(line waited for, whether it came) for each wait on the child."""
    waits: list[tuple[bytes, bool]] = []
    real = cold._wait_line

    def spy(proc: subprocess.Popen[bytes], want: bytes, deadline: float) -> bool:
        waits.append((want, real(proc, want, deadline)))
        return waits[-1][1]

    monkeypatch.setattr(cold, "_wait_line", spy)
    return waits


def _nothing_left(cache: Path) -> bool:
    """No child running, no transfer folder left (only the cache folder in the test's temp dir)."""
    return _procs.live() == [] and sorted(p.name for p in cache.iterdir()) == ["cache"]


def _record_from_ranks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    sizes: list[int] = []
    real = CompiledBPE.from_ranks.__func__  # type: ignore[attr-defined]

    def spy(cls: type[CompiledBPE], ranks: Any, sha256: str | None = None) -> CompiledBPE:
        sizes.append(len(ranks))
        built: CompiledBPE = real(cls, ranks, sha256)
        return built

    monkeypatch.setattr(CompiledBPE, "from_ranks", classmethod(spy))
    return sizes


@pytest.mark.parametrize("ranks", [
    trained_bpe_ranks(3, alphabet=b"\x00a\xc3\xa9\xff", merges=80, segments=20, segment_len=(10, 30)),
    _with_unreachable(),
], ids=["trained-nul-bytes", "unreachable-and-gaps"])
def test_child_tables_equal_from_ranks_and_are_cached(ranks: dict[bytes, int], cache: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    want = CompiledBPE.from_ranks(ranks)
    path = cold.use_child(SHA, jit=True)
    assert path is not None and path == cache_path(SHA) and not path.exists()
    sizes = _record_from_ranks(monkeypatch)
    waits = _record_waits(monkeypatch)
    loaded: list[dict[str, np.ndarray]] = []
    real_load = cold.load_arrays
    monkeypatch.setattr(cold, "load_arrays", lambda path, key: loaded.append(real_load(path, key)) or loaded[-1])
    got = cold.compiled_bpe(ranks, SHA, "cl100k_base", jit=True)
    assert sizes == [256]  # only the warm-up vocabulary was built here: the tables are the child's
    assert waits == [(b"tables", True), (b"compiled", True)]
    _assert_same(got, want)
    assert all(getattr(got, name) is loaded[0][name] for name in _PACKED_NAMES)  # used, not built again
    assert _nothing_left(cache)
    assert cold.use_child(SHA, jit=True) is None  # cached now: read back, nothing built
    sizes.clear()
    _assert_same(cold.compiled_bpe(ranks, SHA, "cl100k_base", jit=True), want)
    assert sizes == [len(ranks)]  # from_ranks, which read the cache


def test_vocabulary_error_in_child_is_raised_here(cache: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capfd: pytest.CaptureFixture[str]) -> None:
    ranks = {bytes([i]): i for i in range(256)}
    ranks.update({b"abc": 256, b"ab": 257})  # abc only through the higher-ranked ab
    waits = _record_waits(monkeypatch)
    with pytest.raises(NonMonotoneVocabularyError):
        cold.compiled_bpe(ranks, SHA, None, jit=True)
    assert waits == [(b"tables", False)]  # the child died without tables (EOF)
    assert capfd.readouterr().err == ""  # its traceback is not shown: the error is raised here
    assert _nothing_left(cache)


def _fake_child(monkeypatch: pytest.MonkeyPatch, program: str) -> list[subprocess.Popen[bytes]]:
    """Start ``program`` (given the child's argv) instead of the child; the started processes."""
    started: list[subprocess.Popen[bytes]] = []
    real = _procs.spawn

    def spawn(argv: list[str], **kwargs: Any) -> subprocess.Popen[bytes]:
        proc: subprocess.Popen[bytes] = real([sys.executable, "-c", program, *argv[3:]], **kwargs)
        started.append(proc)
        return proc

    monkeypatch.setattr(cold._procs, "spawn", spawn)
    return started


def test_silent_child_is_stopped_and_tables_built_here(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ranks = _with_unreachable()
    started = _fake_child(monkeypatch, "import time; time.sleep(60)")
    monkeypatch.setattr(cold, "TABLES_WAIT", 0.2)
    waits = _record_waits(monkeypatch)
    want = CompiledBPE.from_ranks(ranks)
    child_alive_at_build: list[bool] = []
    real = CompiledBPE.from_ranks.__func__  # type: ignore[attr-defined]

    def spy(cls: type[CompiledBPE], vocab: Any, sha256: str | None = None) -> CompiledBPE:
        if len(vocab) == len(ranks):
            child_alive_at_build.append(started[0].poll() is None)
        built: CompiledBPE = real(cls, vocab, sha256)
        return built

    monkeypatch.setattr(CompiledBPE, "from_ranks", classmethod(spy))
    got = cold.compiled_bpe(ranks, SHA, None, jit=True)
    _assert_same(got, want)
    assert waits == [(b"tables", False)]
    assert child_alive_at_build == [False]  # stopped before building here, not after
    assert len(started) == 1 and started[0].poll() is not None  # stopped, not left running
    assert _nothing_left(cache)
    assert cache_path(SHA) is not None and cache_path(SHA).exists()  # type: ignore[union-attr]


def test_tables_failing_their_digest_are_not_used(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ranks = _with_unreachable()
    _fake_child(monkeypatch, "import sys; open(sys.argv[2], 'wb').write(b'not an npz'); print('noise'); "
                             "print('tables')")
    sizes = _record_from_ranks(monkeypatch)
    waits = _record_waits(monkeypatch)
    got = cold.compiled_bpe(ranks, SHA, "cl100k_base", jit=True)
    assert waits == [(b"tables", True)]  # other lines skipped; no wait for Peek2 after a fallback
    assert sizes == [256, len(ranks)]  # the warm-up, then the fallback build
    _assert_same(got, CompiledBPE.from_ranks(ranks))


def test_tables_failing_the_self_check_raise_and_are_not_cached(cache: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    ranks = _with_unreachable()
    real = cold.load_arrays

    def tampered(path: Path, key: str) -> dict[str, np.ndarray] | None:
        arrays = real(path, key)
        assert arrays is not None
        arrays["root"][ord("a")] = ord("b")  # byte a now walks to token b
        return arrays

    monkeypatch.setattr(cold, "load_arrays", tampered)
    with pytest.raises(SelfCheckError, match="bytes=b'a'"):
        cold.compiled_bpe(ranks, SHA, None, jit=True)
    assert not cache_path(SHA).exists()  # type: ignore[union-attr]
    assert _procs.live() == []


def test_use_child_only_when_it_can_help(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert cold.use_child(SHA, jit=True) == cache_path(SHA)
    assert cold.use_child(SHA, jit=False) is None
    assert cold.use_child(None, jit=True) is None
    with monkeypatch.context() as m:
        m.setattr(cold, "_cpus", lambda: 1)
        assert cold.use_child(SHA, jit=True) is None
    monkeypatch.setenv("TOKSPEC_COLD_CHILD", "0")
    assert cold.use_child(SHA, jit=True) is None
    monkeypatch.setenv("TOKSPEC_COLD_CHILD", "1")
    assert cold.use_child(SHA, jit=True) == cache_path(SHA)
    with monkeypatch.context() as m:
        m.setattr(cold.os, "name", "nt")
        assert cold.use_child(SHA, jit=True) is None
    with monkeypatch.context() as m:
        m.setattr(cold.sys, "executable", "")
        assert cold.use_child(SHA, jit=True) is None
    path = cache_path(SHA)
    assert path is not None
    path.write_bytes(b"")
    assert cold.use_child(SHA, jit=True) is None


def test_usable_cpus(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cold.os, "sched_getaffinity", lambda pid: {0, 5, 7} if pid == 0 else set(), raising=False)
    assert cold._cpus() == 3  # the CPUs this process may run on, not all the machine's
    monkeypatch.delattr(cold.os, "sched_getaffinity")
    monkeypatch.setattr(cold.os, "cpu_count", lambda: 4)
    assert cold._cpus() == 4
    monkeypatch.setattr(cold.os, "cpu_count", lambda: None)  # unknown: assume one
    assert cold._cpus() == 1


def test_no_child_process_means_building_here(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ranks = _with_unreachable()

    def refuse(argv: list[str], **kwargs: Any) -> subprocess.Popen[bytes]:
        raise OSError("no processes left")

    monkeypatch.setattr(cold._procs, "spawn", refuse)
    want = CompiledBPE.from_ranks(ranks)
    sizes = _record_from_ranks(monkeypatch)
    _assert_same(cold.compiled_bpe(ranks, SHA, None, jit=True), want)
    assert sizes == [len(ranks)] and _nothing_left(cache)


@pytest.mark.parametrize("ranks", [_with_unreachable(), trained_bpe_ranks(0, alphabet=b"abc", merges=60, segments=20,
                                                                            segment_len=(20, 40))])
def test_token_view_is_backtrack_bpe_tokens_and_reachable(ranks: dict[bytes, int]) -> None:
    bpe = BacktrackBPE(ranks, self_check=False)
    view = cold._TokenView(CompiledBPE.from_ranks(ranks).arrays)
    assert view.tokens == bpe.tokens
    assert view.reachable == bpe.reachable


def test_token_view_marks_unreachable_tokens_and_unused_ids() -> None:
    view = cold._TokenView(CompiledBPE.from_ranks(_with_unreachable()).arrays)
    assert (view.reachable[256], view.reachable[257], view.reachable[258], view.reachable[300]) == (True, False, False, True)
    assert view.tokens[258] == b"" and view.tokens[257] == b"xyz"


def test_child_refuses_tables_for_other_code(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOKSPEC_CACHE", str(tmp_path / "cache"))
    source = cold._ranks_source(_with_unreachable(), tmp_path)
    key = cache_path(SHA).stem  # type: ignore[union-attr]
    other = key[:-1] + ("0" if key[-1] != "0" else "1")  # another tokspec's code hash
    with pytest.raises(SystemExit, match="is not this code's table key"):
        cold._child(source, str(tmp_path / "t.npz"), other, "")
    assert capsys.readouterr().out == "" and not (tmp_path / "t.npz").exists()


def test_child_in_process_writes_the_tables_then_compiles(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOKSPEC_CACHE", str(tmp_path / "cache"))
    key = cache_path(SHA).stem  # type: ignore[union-attr]
    ranks = _with_unreachable()
    want = CompiledBPE.from_ranks(ranks)

    def no_check(self: BacktrackBPE) -> None:
        raise AssertionError("the child does not self-check: the parent does, with the compiled kernel")

    monkeypatch.setattr(BacktrackBPE, "self_check", no_check)
    source = cold._ranks_source(ranks, tmp_path)
    assert source == f"pickle:{tmp_path / 'ranks.pickle'}" and cold._load_ranks(source) == ranks
    cold._child(source, str(tmp_path / "t.npz"), key, "o200k_base")
    assert capsys.readouterr().out == "tables\ncompiled\n"
    loaded = cold.load_arrays(tmp_path / "t.npz", key)
    assert loaded is not None
    _assert_same(CompiledBPE({k: loaded[k] for k in _ARRAY_NAMES}, {k: loaded[k] for k in _PACKED_NAMES}), want)
    cold._child(source, str(tmp_path / "u.npz"), key, "")
    assert capsys.readouterr().out == "tables\n"  # no pattern: nothing compiled


def test_named_vocabulary_is_parsed_by_the_child(tmp_path: Path) -> None:
    from tokspec.formats.vocab import LazyRanks, load_named_tiktoken

    lazy = LazyRanks("cl100k_base")
    assert cold._ranks_source(lazy, tmp_path) == "named:cl100k_base" and not lazy.parsed
    assert not (tmp_path / "ranks.pickle").exists()
    assert cold._load_ranks("named:cl100k_base") == load_named_tiktoken("cl100k_base").ranks
    assert lazy[b"a"] == 64 and lazy.parsed  # parsed already: handed over as a pickle
    assert cold._ranks_source(lazy, tmp_path) == f"pickle:{tmp_path / 'ranks.pickle'}"
