"""Issue 28 (cache contents are trusted), on the hf-converted tokenizer.json cache of
``reference/bpe_merges_from_ranks.py``: before, it lived in ``<tmp>/tokspec-cache`` (shared by every
user) and any file found under the expected name was used as it was. Now it is the per-user cache
with a digest sidecar (``tokspec._cache_files``): a file planted in the old place is never read, a
corrupted, truncated, foreign or planted file is rebuilt, and an unusable cache means a private
per-process file plus one note.

Every doctored file keeps the expected name; the check is always on what HF then encodes (the ids
of a fresh build), not only on the file.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tokspec.reference.bpe_merges_from_ranks import (CONVERTER_VERSION, HfConvertedEncoder, converted_json_path,
                                                     tokenizer_json_from_ranks)
from tokspec.reference.pretok_regex import PATTERNS

RANKS = {bytes([b]): b for b in range(256)} | {b"ab": 256, b"abc": 257, b" a": 258}
TEXT = "abc ab a\x01b"


def _ids(path: Path) -> list[int]:
    return list(HfConvertedEncoder(path, name="hf-converted:t", vocab_sha256="sha").encode(TEXT).ids or ())


def _fresh_ids(tmp_path: Path) -> list[int]:
    """HF on a JSON built here from the ranks, outside any cache."""
    path = tmp_path / "fresh.json"
    path.write_text(json.dumps(tokenizer_json_from_ranks(RANKS, PATTERNS["o200k_base"]), ensure_ascii=False),
                    encoding="utf-8")
    return _ids(path)


def _wrong_json() -> str:
    """A valid converted JSON whose tokens "ab" and "abc" trade ids: HF loads it and gives wrong ids."""
    swapped = {**RANKS, b"ab": 257, b"abc": 256}
    return json.dumps(tokenizer_json_from_ranks(swapped, PATTERNS["o200k_base"]), ensure_ascii=False)


def _old_name() -> str:
    key = f"sha|{PATTERNS['o200k_base']}|True|{CONVERTER_VERSION}"
    return f"hf-converted-o200k_base-{hashlib.sha256(key.encode()).hexdigest()[:20]}.json"


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TOKSPEC_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache" / "hf-converted"


def test_the_wrong_json_is_wrong(tmp_path: Path) -> None:
    """The planted content below is a real hazard: used, it changes the ids."""
    path = tmp_path / "wrong.json"
    path.write_text(_wrong_json(), encoding="utf-8")
    assert _ids(path) != _fresh_ids(tmp_path)


def test_a_file_planted_in_the_old_shared_temp_location_is_not_used(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TOKSPEC_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    planted = tmp_path / "tmp" / "tokspec-cache" / _old_name()
    planted.parent.mkdir(parents=True)
    planted.write_text(_wrong_json(), encoding="utf-8")
    path = converted_json_path(RANKS, "sha", "o200k_base")
    assert path.parent == tmp_path / "xdg" / "tokspec" / "hf-converted"
    assert _ids(path) == _fresh_ids(tmp_path)
    assert planted.read_text(encoding="utf-8") == _wrong_json(), "the planted file is left alone"


def _doctor(how: str, path: Path, other: Path) -> None:
    """Change the cached file at ``path`` (``other``: a valid cached file for another key)."""
    digest = path.with_name(path.name + ".sha256")
    if how == "empty":
        path.write_bytes(b"")
    elif how == "truncated":
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    elif how == "ids swapped":
        path.write_text(_wrong_json(), encoding="utf-8")
    elif how == "digest removed":
        path.write_text(_wrong_json(), encoding="utf-8")
        digest.unlink()
    elif how == "pair of another key":
        path.write_bytes(other.read_bytes())
        digest.write_bytes(other.with_name(other.name + ".sha256").read_bytes())
    elif how == "symlink to a valid file":
        path.unlink()
        path.symlink_to(other)
    else:
        raise AssertionError(how)


@pytest.mark.parametrize("how", ["empty", "truncated", "ids swapped", "digest removed", "pair of another key",
                                 "symlink to a valid file"])
def test_a_corrupted_cached_json_is_rebuilt(how: str, cache: Path, tmp_path: Path) -> None:
    path = converted_json_path(RANKS, "sha", "o200k_base")
    good = path.read_bytes()
    swapped = {**RANKS, b"ab": 257, b"abc": 256}
    other = converted_json_path(swapped, "sha-other", "o200k_base")  # same pattern and flag, other vocabulary
    _doctor(how, path, other)
    assert converted_json_path(RANKS, "sha", "o200k_base") == path
    assert not path.is_symlink() and path.read_bytes() == good
    assert _ids(path) == _fresh_ids(tmp_path)
    assert sorted(p.name for p in cache.iterdir() if not p.name.startswith(other.name)) == [
        path.name, path.name + ".sha256"], "no temporary file left"


@pytest.mark.skipif(not hasattr(os, "getuid") or os.getuid() != 0, reason="planting a file of another uid needs chown")
def test_a_file_of_another_uid_in_the_cache_is_rebuilt(cache: Path, tmp_path: Path) -> None:
    path = converted_json_path(RANKS, "sha", "o200k_base")
    digest = path.with_name(path.name + ".sha256")
    path.write_text(_wrong_json(), encoding="utf-8")  # planted, with a matching digest, by uid 4242
    from tokspec._cache_files import bytes_digest
    key = f"sha|{PATTERNS['o200k_base']}|True|{CONVERTER_VERSION}"
    digest.write_text(bytes_digest(key, path.read_bytes()) + "\n", encoding="ascii")
    os.chown(path, 4242, 4242)
    os.chown(digest, 4242, 4242)
    assert converted_json_path(RANKS, "sha", "o200k_base") == path
    assert path.stat().st_uid == os.getuid() and _ids(path) == _fresh_ids(tmp_path)


@pytest.mark.parametrize("unsafe", ["other owner", "group writable", "world writable"])
def test_a_cache_folder_not_private_to_this_user_is_not_used(unsafe: str, cache: Path, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    path = converted_json_path(RANKS, "sha", "o200k_base")
    path.write_text(_wrong_json(), encoding="utf-8")  # planted, digest recomputed by its planter
    from tokspec._cache_files import bytes_digest
    key = f"sha|{PATTERNS['o200k_base']}|True|{CONVERTER_VERSION}"
    path.with_name(path.name + ".sha256").write_text(bytes_digest(key, path.read_bytes()), encoding="ascii")
    if unsafe == "other owner":
        uid = os.getuid()
        monkeypatch.setattr(os, "getuid", lambda: uid + 4242)
    else:
        cache.chmod(0o770 if unsafe == "group writable" else 0o777)
    capsys.readouterr()
    got = converted_json_path(RANKS, "sha", "o200k_base")
    monkeypatch.undo()
    assert got != path and got.name == path.name and cache not in got.parents
    assert got.parent.name.startswith("tokspec-hf-converted-") and (got.parent.stat().st_mode & 0o777) == 0o700
    assert _ids(got) == _fresh_ids(tmp_path)
    err = capsys.readouterr().err
    assert "working uncached" in err and err.count("\n") == 1, err


def test_an_unwritable_cache_works_uncached_and_leaves_nothing(cache: Path, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """A full cache (simulated: root ignores modes): the JSON goes to the private folder, one note."""
    real = os.replace

    def full(src: str, dst: str) -> None:
        if str(cache) in str(dst):
            raise OSError(28, "No space left on device")
        real(src, dst)

    monkeypatch.setattr(os, "replace", full)
    capsys.readouterr()
    got = converted_json_path(RANKS, "sha", "o200k_base")
    monkeypatch.undo()
    assert list(cache.iterdir()) == [], "no temporary file left behind"
    assert got.is_file() and _ids(got) == _fresh_ids(tmp_path)
    err = capsys.readouterr().err
    assert "not writable (No space left on device); working uncached" in err and err.count("\n") == 1, err


def test_the_private_uncached_folder_is_removed_at_exit(tmp_path: Path) -> None:
    root = tmp_path / "not-a-folder"
    root.write_text("x")  # the cache root cannot be created: uncached
    script = ("from tokspec.reference.bpe_merges_from_ranks import converted_json_path as c; "
              f"p = c({RANKS!r}, 'sha', 'o200k_base'); q = c({RANKS!r}, 'sha', 'o200k_base', ignore_merges=False); "
              "print(p); print(q); print(p.read_text(encoding='utf-8') != q.read_text(encoding='utf-8')); "
              "import shutil; shutil.rmtree(p.parent) if 'gone' in __import__('sys').argv else None")
    env = {**os.environ, "TOKSPEC_CACHE": str(root / "cache")}
    for argv in ([], ["gone"]):  # removed at exit; already removed is no error either
        done = subprocess.run([sys.executable, "-c", script, *argv], env=env, capture_output=True, text=True,
                              check=False)
        assert done.returncode == 0, done.stderr[-2000:]
        first, second, differ = done.stdout.split("\n")[:3]
        assert Path(first).parent == Path(second).parent and differ == "True"
        assert not Path(first).parent.exists()
        assert done.stderr.count("\n") == 1 and "working uncached" in done.stderr, done.stderr


def test_the_digest_binds_the_documented_key(cache: Path) -> None:
    """What the sidecar proves: these bytes were stored for this key (vocabulary sha256, pattern,
    flag, converter version) by this user, in this user's private folder. A file rewritten by the
    user with a digest recomputed for the same key is that user's own choice and is used."""
    from tokspec._cache_files import bytes_digest
    path = converted_json_path(RANKS, "sha", "o200k_base")
    mine = _wrong_json().encode("utf-8")
    path.write_bytes(mine)
    key = f"sha|{PATTERNS['o200k_base']}|True|{CONVERTER_VERSION}"
    path.with_name(path.name + ".sha256").write_text(bytes_digest(key, mine) + "\n", encoding="ascii")
    assert converted_json_path(RANKS, "sha", "o200k_base") == path and path.read_bytes() == mine


def test_the_private_uncached_folder_is_registered_for_removal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """In-process twin of the test above: one private folder per process, registered once with
    ``atexit`` to be removed whether or not it still exists."""
    import atexit
    import shutil

    from tokspec.reference import bpe_merges_from_ranks as module

    registered: list[tuple[object, ...]] = []
    monkeypatch.setattr(atexit, "register", lambda *args: registered.append(args))
    monkeypatch.setattr(module, "_private", None)
    (tmp_path / "file").write_text("x")
    monkeypatch.setenv("TOKSPEC_CACHE", str(tmp_path / "file" / "cache"))  # unusable: uncached
    first = converted_json_path(RANKS, "sha", "o200k_base")
    second = converted_json_path(RANKS, "sha", "o200k_base", ignore_merges=False)
    assert first.parent == second.parent and registered == [(shutil.rmtree, first.parent, True)]
    assert json.loads(first.read_text(encoding="utf-8")) == tokenizer_json_from_ranks(RANKS, PATTERNS["o200k_base"])
    fn, folder, ignore_errors = registered[0]
    fn(folder, ignore_errors)  # type: ignore[operator]
    fn(folder, ignore_errors)  # type: ignore[operator]  # already gone: no error
    assert not first.parent.exists()
