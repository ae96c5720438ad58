"""The on-disk caches of tokspec.fast's derived tables: where they live, and that a cache file is
never trusted blindly (``tokspec.fast._cache``: "verify or rebuild on load").

- ``cache_dir``: ``$TOKSPEC_CACHE/<sub>`` (default: per user, ``~/.cache/tokspec/<sub>``), created;
- ``CompiledBPE.from_ranks(ranks, sha256)``: written once, loaded back without rebuilding (same
  encodings; the hash tables, piece table and level 3 read back, not refilled), rebuilt from the
  ranks when the file is unreadable or lacks the packed tables; keyed by the vocabulary hash.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pytest
from tokspec.fast import bpe_kernel, bpe_tables
from tokspec.fast._cache import cache_dir, load_arrays, save_arrays
from tokspec.fast.bpe_kernel import CompiledBPE
from tokspec.fuzz.strategies import trained_bpe_ranks


def test_cache_dir_under_the_environment_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOKSPEC_CACHE", str(tmp_path / "root"))
    path = cache_dir("peek2")
    assert path == tmp_path / "root" / "peek2" and path.is_dir()
    assert cache_dir("peek2") == path  # exists already: no error


@pytest.mark.parametrize("value", [None, ""])
def test_cache_dir_default_is_per_user(value: str | None, tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Not the temp dir shared by every user (issue 28): ``$XDG_CACHE_HOME/tokspec``, else
    ``~/.cache/tokspec``, created 0700."""
    if value is None:
        monkeypatch.delenv("TOKSPEC_CACHE", raising=False)
    else:
        monkeypatch.setenv("TOKSPEC_CACHE", value)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    assert cache_dir("bpe") == tmp_path / "home" / ".cache" / "tokspec" / "bpe"
    assert (tmp_path / "home" / ".cache" / "tokspec" / "bpe").is_dir()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir("bpe") == tmp_path / "xdg" / "tokspec" / "bpe"
    assert not (tmp_path / "tmp").exists()


PACKED = ("trie", "pairs", "pieces", "level3")  # CompiledBPE's tables built from the arrays


def _ranks() -> dict[bytes, int]:
    return trained_bpe_ranks(4, alphabet=b"abc", merges=25)


def test_bpe_cache_written_loaded_and_rebuilt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOKSPEC_CACHE", str(tmp_path))
    ranks, sha = _ranks(), "ab" * 32
    built = CompiledBPE.from_ranks(ranks, sha)
    files = sorted((tmp_path / "bpe").iterdir())
    assert len(files) == 1 and files[0].name.startswith(sha[:32]) and files[0].suffix == ".npz"

    def no_build(*args: object, **kwargs: object) -> None:
        raise AssertionError("rebuilt although the cache file is sound")

    with monkeypatch.context() as m:
        for name in ("BacktrackBPE", "fill_table", "fill_level3", "build_piece_table"):
            m.setattr(bpe_kernel, name, no_build)
        loaded = CompiledBPE.from_ranks(ranks, sha)
    assert set(loaded.arrays) == set(built.arrays)
    assert all(np.array_equal(loaded.arrays[k], built.arrays[k]) for k in built.arrays)
    for name in PACKED:
        assert np.array_equal(getattr(loaded, name), getattr(built, name)), name
        assert getattr(loaded, name).dtype == getattr(built, name).dtype, name
    for data in (b"abcabcaab", b"ccc", b"a" * 40):
        assert loaded.encode_bytes(data).tolist() == built.encode_bytes(data).tolist()

    files[0].write_bytes(b"garbage")
    rebuilt = CompiledBPE.from_ranks(ranks, sha)
    assert rebuilt.encode_bytes(b"abcabcaab").tolist() == built.encode_bytes(b"abcabcaab").tolist()
    with np.load(files[0]) as z:
        assert set(z.files) - {"__digest__"} == set(built.arrays) | set(PACKED), "the unreadable file is replaced"
    assert sorted((tmp_path / "bpe").iterdir()) == files, "no temporary file left behind"

    CompiledBPE.from_ranks(ranks, "cd" * 32)
    assert len(list((tmp_path / "bpe").iterdir())) == 2, "another vocabulary hash, another file"


def test_bpe_cache_without_the_packed_tables_is_rebuilt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A sound file of the arrays alone (the format before the packed tables were cached) is not
    half-trusted: the tables are rebuilt, and the file rewritten with them."""
    monkeypatch.setenv("TOKSPEC_CACHE", str(tmp_path))
    ranks, sha = _ranks(), "ef" * 32
    built = CompiledBPE.from_ranks(ranks, sha)
    path = bpe_tables.cache_path(sha)
    assert path is not None and save_arrays(path, path.stem, built.arrays)
    calls: list[object] = []
    real = bpe_kernel.BacktrackBPE

    def counted(*args: object, **kwargs: object) -> object:
        calls.append(args)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(bpe_kernel, "BacktrackBPE", counted)
    again = CompiledBPE.from_ranks(ranks, sha)
    assert len(calls) == 1
    assert all(np.array_equal(getattr(again, name), getattr(built, name)) for name in PACKED)
    loaded = load_arrays(path, path.stem)
    assert loaded is not None and set(loaded) == set(built.arrays) | set(PACKED)


def test_bpe_without_hash_is_not_cached(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOKSPEC_CACHE", str(tmp_path))
    CompiledBPE.from_ranks(_ranks())
    assert not (tmp_path / "bpe").exists() or not list((tmp_path / "bpe").iterdir())


def test_fast_engine_caches_its_tables_under_the_vocabulary_hash(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """``FastBpeEncoder`` passes its vocabulary's hash on, so a second engine over the same
    vocabulary loads the tables instead of rebuilding them."""
    from tokspec.fast.bpe_encoder import FastBpeEncoder
    from tokspec.formats.vocab import TiktokenVocab

    monkeypatch.setenv("TOKSPEC_CACHE", str(tmp_path))
    vocab = TiktokenVocab("generated", "ef" * 32, _ranks())
    first = FastBpeEncoder(vocab, "cl100k_base", "fast:generated")
    files = sorted((tmp_path / "bpe").iterdir())
    assert len(files) == 1 and files[0].name.startswith(vocab.sha256[:32])
    with monkeypatch.context() as m:
        m.setattr(bpe_kernel, "BacktrackBPE", lambda *a, **k: pytest.fail("rebuilt although cached"))
        second = FastBpeEncoder(vocab, "cl100k_base", "fast:generated")
    assert second.encode("abc cab").ids == first.encode("abc cab").ids
