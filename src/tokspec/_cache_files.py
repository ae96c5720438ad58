"""Verified byte files in tokspec's per-user cache, for artifacts another library reads by path.

:mod:`tokspec._cache_store` keeps arrays in an ``.npz`` that carries its own digest. Some cached
artifacts must stay plain files a library opens itself (an HF ``tokenizer.json``), so here the
digest lives in a sidecar ``<name>.sha256``: sha256 over the caller's *key* (what the bytes were
derived from), a NUL, and the bytes.

- :func:`load_bytes` returns the stored bytes only if both files are regular files (no symlink)
  owned by this user and the sidecar matches; anything else (missing, truncated, emptied, planted,
  derived from another key) is reported as absent, and the caller rebuilds. Never raises on a bad
  file. O(file size): one read and one sha256 pass.
- :func:`save_bytes` writes the data, then the sidecar, each to a temporary sibling and
  ``os.replace``; no temporary file is left on error. A cache that cannot be written gives one note
  and False: the caller goes on with the bytes it built.

Where the folder is and when it is refused (owner, mode, symlink): :func:`tokspec._cache_store.subfolder`.
Out of scope: eviction; concurrent writers beyond "last ``os.replace`` wins" (same key, same bytes).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from tokspec._cache_store import note
from tokspec._cache_store import read_own_file as _read_own
from tokspec._cache_store import write_private

__all__ = ["bytes_digest", "load_bytes", "save_bytes", "sidecar"]


def sidecar(path: Path) -> Path:
    """The digest file of ``path``: same folder, ``.sha256`` appended to the name."""
    return path.with_name(path.name + ".sha256")


def bytes_digest(key: str, data: bytes) -> str:
    """sha256 hex over ``key`` (UTF-8), a NUL byte, and ``data``."""
    return hashlib.sha256(key.encode("utf-8", "surrogatepass") + b"\0" + data).hexdigest()


def load_bytes(path: Path, key: str) -> bytes | None:
    """The bytes stored at ``path`` under ``key``, or None if absent or not verified."""
    digest = _read_own(sidecar(path))
    if digest is None:
        return None
    data = _read_own(path)
    if data is None or digest.strip() != bytes_digest(key, data).encode("ascii"):
        return None
    return data


def save_bytes(path: Path, key: str, data: bytes) -> bool:
    """Store ``data`` at ``path`` (and its digest beside it) atomically; False and a note if the
    cache cannot be written."""
    try:
        write_private(path, lambda fh: fh.write(data))
        write_private(sidecar(path), lambda fh: fh.write(bytes_digest(key, data).encode("ascii") + b"\n"))
        return True
    except OSError as exc:
        note(f"cache {str(path.parent)!r} not writable ({exc.strerror}); working uncached")
        return False
