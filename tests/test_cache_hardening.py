"""Issue 28, class 1: tokspec's own caches are never trusted (regressions of "cache contents are
trusted": truncated tables never rebuilt, doctored tables giving SIGSEGV or wrong ids, a shared ``/tmp`` cache planted by another user, garbage numba caches
becoming engine faults, a read-only or full cache making ``fast:`` unusable and leaving temporary
files behind). Peek2's flags are no longer a cache: a sha256-pinned table shipped with tokspec,
refused when changed (``tests/test_fast_unicode_flags.py``).

Each doctored file below keeps a valid layout (a readable zip with the right names, shapes and
dtypes) and changes content only, the way a corrupted or planted file does: the loader must rebuild
it from the source (the result equals a fresh build), not use it.
"""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import numpy as np
import pytest

from tokspec.fast._double_array import DoubleArray
from tokspec.fast.bpe_kernel import CompiledBPE
from tokspec.fuzz.strategies import trained_bpe_ranks

SHA = "ab" * 32
TEXTS = [b"abcabcaab", b"ccc", b"a" * 40, b"a\x01b", b"cab" * 7]


def _ranks() -> dict[bytes, int]:
    ranks = trained_bpe_ranks(4, alphabet=b"abc", merges=25)
    return {**ranks, **{bytes([b]): len(ranks) + i for i, b in enumerate(sorted(set(range(256)) - set(b"abc")))}}


def _only_file(folder: Path) -> Path:
    files = [p for p in folder.iterdir()]
    assert len(files) == 1, files
    return files[0]


def _rewrite(path: Path, change: dict[str, np.ndarray]) -> None:
    """Rewrite the npz at ``path`` with ``change`` applied, every other entry kept as it was."""
    with np.load(path) as z:
        arrays = {k: z[k] for k in z.files}
    arrays.update(change)
    with open(path, "wb") as fh:
        np.savez(fh, **arrays)


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "cache"
    monkeypatch.setenv("TOKSPEC_CACHE", str(root))
    return root


def _bpe_doctorings(path: Path) -> list[tuple[str, dict[str, np.ndarray] | bytes]]:
    with np.load(path) as z:
        a = {k: z[k] for k in z.files}
    root = a["root"].copy()
    root[ord("a")], root[ord("b")] = root[ord("b")], root[ord("a")]  # two bytes' tokens swapped
    vals = a["edge_vals"].copy()
    if len(vals) >= 2:
        vals[0], vals[1] = vals[1], vals[0]
    return [
        ("empty file", b""),
        ("truncated zip", path.read_bytes()[: path.stat().st_size // 2]),
        ("two bytes' tokens swapped", {"root": root}),
        ("two trie values swapped", {"edge_vals": vals}),
        ("arrays shortened", {"tok_len": a["tok_len"][:3], "split_left": a["split_left"][:3]}),
        ("pair table emptied", {"pair_keys": a["pair_keys"][:0], "pair_vals": a["pair_vals"][:0]}),
    ]


def test_doctored_bpe_tables_are_rebuilt_not_used(cache: Path) -> None:
    ranks = _ranks()
    fresh = CompiledBPE.from_ranks(ranks)  # uncached build: the truth
    want = {t: fresh.encode_bytes(t).tolist() for t in TEXTS}
    CompiledBPE.from_ranks(ranks, SHA)
    path = _only_file(cache / "bpe")
    for what, doctor in _bpe_doctorings(path):
        original = path.read_bytes()
        if isinstance(doctor, bytes):
            path.write_bytes(doctor)
        else:
            _rewrite(path, doctor)
        got = CompiledBPE.from_ranks(ranks, SHA)
        assert {t: got.encode_bytes(t).tolist() for t in TEXTS} == want, what
        assert _only_file(cache / "bpe") == path, f"{what}: rebuilt in place, no temporary left"
        assert zipfile.is_zipfile(path), f"{what}: the bad file is replaced by a sound one"
        again = CompiledBPE.from_ranks(ranks, SHA)
        assert {t: again.encode_bytes(t).tolist() for t in TEXTS} == want, what
        path.write_bytes(original)


def test_doctored_double_array_is_rebuilt(cache: Path) -> None:
    keys, vals = [b"ab", b"abc", b"b", b"\xe1\x80\x80"], [5, 6, 7, 8]
    first = DoubleArray.cached(keys, vals)
    path = _only_file(cache / "datrie")
    with np.load(path) as z:
        base, check = z["base"], z["check"]
    for what, doctor in [("empty", b""), ("truncated", path.read_bytes()[:40]),
                         ("all arrays shortened", {"base": base[:2], "check": check[:2],
                                                   "value": np.full(2, -1, dtype=np.int64)}),
                         ("a base redirected", {"base": np.where(base > 0, base + 1000, base)})]:
        if isinstance(doctor, bytes):
            path.write_bytes(doctor)
        else:
            _rewrite(path, doctor)
        trie = DoubleArray.cached(keys, vals)
        assert (trie.base, trie.check, trie.value) == (first.base, first.check, first.value), what


def test_default_cache_is_per_user_and_private(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TOKSPEC_CACHE", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    CompiledBPE.from_ranks(_ranks(), SHA)
    assert not (tmp_path / "tmp").exists(), "nothing in the shared temp dir"
    root = tmp_path / "xdg" / "tokspec"
    assert (root / "bpe").is_dir() and (os.stat(root).st_mode & 0o777) == 0o700
    assert (os.stat(root / "bpe").st_mode & 0o777) == 0o700


@pytest.mark.parametrize("unsafe", ["other owner", "world writable", "group writable"])
def test_cache_of_another_user_is_not_used(unsafe: str, cache: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    ranks = _ranks()
    fresh = CompiledBPE.from_ranks(ranks)
    CompiledBPE.from_ranks(ranks, SHA)  # a table is there ...
    path = _only_file(cache / "bpe")
    with np.load(path) as z:
        root = z["root"].copy()
    root[ord("a")], root[ord("b")] = root[ord("b")], root[ord("a")]
    with np.load(path) as z:  # ... replaced by a planted one, digest recomputed by its planter
        planted = {k: z[k] for k in z.files if k != "__digest__"}
    planted["root"] = root
    if "__digest__" in np.load(path).files:
        from tokspec._cache_store import array_digest
        planted["__digest__"] = np.array(array_digest(path.stem, planted))
    with open(path, "wb") as fh:
        np.savez(fh, **planted)
    capsys.readouterr()
    if unsafe == "other owner":
        uid = os.getuid()
        monkeypatch.setattr(os, "getuid", lambda: uid + 4242)
    else:
        cache.chmod(0o777 if unsafe == "world writable" else 0o770)
    got = CompiledBPE.from_ranks(ranks, SHA)
    assert got.encode_bytes(b"a\x01b").tolist() == fresh.encode_bytes(b"a\x01b").tolist()
    err = capsys.readouterr().err
    assert "working uncached" in err and err.count("\n") == 1, err


@pytest.mark.parametrize("failure", [errno.ENOSPC, errno.EROFS])
def test_unwritable_cache_works_uncached_and_leaves_nothing(failure: int, cache: Path,
                                                            monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """A full or read-only cache (simulated: the test runs as any user, root ignores modes): the
    table is built and used, one note, no temporary file left behind."""
    real_savez = np.savez

    def savez_fails(file: object, *args: object, **kwargs: object) -> None:
        if hasattr(file, "write"):
            file.write(b"PK\x03\x04partial")  # type: ignore[attr-defined]
        else:
            Path(str(file)).write_bytes(b"PK\x03\x04partial")
        raise OSError(failure, os.strerror(failure))

    ranks = _ranks()
    fresh = CompiledBPE.from_ranks(ranks)
    monkeypatch.setattr(np, "savez", savez_fails)
    capsys.readouterr()
    got = CompiledBPE.from_ranks(ranks, SHA)
    monkeypatch.setattr(np, "savez", real_savez)
    assert got.encode_bytes(b"abcabc").tolist() == fresh.encode_bytes(b"abcabc").tolist()
    assert list((cache / "bpe").iterdir()) == [], "no temporary file left behind"
    err = capsys.readouterr().err
    assert "working uncached" in err and err.count("\n") == 1, err


_KERNEL_MODULE = '''
from tokspec._jit import kernel

@kernel
def twice(x):
    return 2 * x
'''


@pytest.mark.skipif(os.environ.get("TOKSPEC_JIT", "1") == "0", reason="numba's cache exists in compiled mode only")
def test_garbage_numba_cache_is_recompiled(tmp_path: Path) -> None:
    (tmp_path / "kmod_i28.py").write_text(_KERNEL_MODULE)
    env = {**os.environ, "TOKSPEC_CACHE": str(tmp_path / "cache"), "PYTHONPATH": str(tmp_path)}
    env.pop("NUMBA_CACHE_DIR", None)
    run = [sys.executable, "-c", "import kmod_i28; print(kmod_i28.twice(21))"]
    first = subprocess.run(run, env=env, capture_output=True, text=True, timeout=120)
    assert first.stdout == "42\n", first.stderr
    entries = [p for p in (tmp_path / "cache").rglob("*") if p.suffix in (".nbi", ".nbc")]
    assert {p.suffix for p in entries} == {".nbi", ".nbc"}
    for garbage in (lambda b: b"\x80\x05garbage" * 3, lambda b: b[: len(b) // 2]):
        for p in entries:
            p.write_bytes(garbage(p.read_bytes()))
        again = subprocess.run(run, env=env, capture_output=True, text=True, timeout=120)
        assert again.returncode == 0 and again.stdout == "42\n", again.stderr
        assert "Traceback" not in again.stderr and again.stderr.count("\n") <= 1, again.stderr
