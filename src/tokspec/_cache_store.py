"""tokspec's private on-disk cache: a per-user folder, and verified array files inside it.

A verification tool must never give a wrong verdict from its own cache, so nothing read back from
this cache is trusted:

- **Where** (:func:`cache_root`): ``$TOKSPEC_CACHE`` if set, else ``$XDG_CACHE_HOME/tokspec``, else
  ``~/.cache/tokspec`` -- never a folder shared by every user such as ``/tmp``. The folder is created
  with mode 0700 and used only if it is a real folder (no symlink) owned by the current user and not
  writable by group or others; otherwise tokspec works uncached (one note on stderr).
- **What** (:func:`load_arrays` / :func:`save_arrays`): a ``.npz`` of named arrays plus
  ``__digest__``, a sha256 over a caller's *key* (what the arrays were derived from: vocabulary hash,
  code hash, format) and every array's name, dtype, shape and bytes. A file that is not owned by the
  user, not a regular file, unreadable, truncated, pickled, or whose digest does not match, is
  reported as absent: the caller rebuilds it. Cost: one sha256 pass over the bytes just loaded
  (about 1 ms per MB).
- **Writes** go to a temporary sibling and ``os.replace``; the temporary file is removed on any
  error. A cache that cannot be written (read-only, full) gives one note and the caller goes on with
  the arrays it built.

Out of scope: eviction (files are small and content-addressed), concurrent writers beyond
"last ``os.replace`` wins" (both wrote the same content).
"""

from __future__ import annotations

import hashlib
import io
import os
import stat
import sys
import tempfile
import zipfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import BinaryIO

import numpy as np

__all__ = ["cache_root", "load_arrays", "save_arrays", "note", "array_digest", "read_own_file", "write_private"]

_DIGEST = "__digest__"
_noted: set[str] = set()


def note(message: str) -> None:
    """Print ``tokspec: <message>`` on stderr once per process and message."""
    if message not in _noted:
        _noted.add(message)
        print(f"tokspec: {message}", file=sys.stderr)


def _default_root() -> Path:
    env = os.environ.get("TOKSPEC_CACHE")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache") / "tokspec"


def safe_folder(path: Path) -> str | None:
    """Why ``path`` (an existing entry) is not a private folder of this user, or None if it is."""
    try:
        st = os.lstat(path)
    except OSError as exc:
        return f"cannot stat it ({exc.strerror})"
    if not stat.S_ISDIR(st.st_mode):
        return "not a folder (a symlink or file)"
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        return f"owned by uid {st.st_uid}, not by this user (uid {os.getuid()})"
    if st.st_mode & 0o022:
        return f"writable by others (mode {stat.S_IMODE(st.st_mode):o})"
    return None


def cache_root() -> Path | None:
    """The per-user cache folder (module docstring), created 0700; None (and a note) if unusable."""
    root = _default_root()
    try:
        root.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        note(f"cache {str(root)!r} unusable ({exc.strerror}); working uncached")
        return None
    why = safe_folder(root)
    if why is not None:
        note(f"cache {str(root)!r} not used: {why}; working uncached")
        return None
    return root


def subfolder(sub: str) -> Path | None:
    """``cache_root() / sub`` created 0700 and checked like the root, or None (and a note)."""
    root = cache_root()
    if root is None:
        return None
    path = root / sub
    try:
        path.mkdir(mode=0o700, exist_ok=True)
    except OSError as exc:
        note(f"cache {str(path)!r} unusable ({exc.strerror}); working uncached")
        return None
    why = safe_folder(path)
    if why is not None:
        note(f"cache {str(path)!r} not used: {why}; working uncached")
        return None
    return path


def array_digest(key: str, arrays: Mapping[str, np.ndarray]) -> str:
    """sha256 over ``key`` and every array's name, dtype, shape and bytes (sorted by name)."""
    digest = hashlib.sha256(key.encode("utf-8", "surrogatepass"))
    for name in sorted(arrays):
        arr = np.ascontiguousarray(arrays[name])
        digest.update(f"\0{name}\0{arr.dtype.str}\0{arr.shape}\0".encode())
        digest.update(memoryview(arr).cast("B"))  # type: ignore[arg-type]  # an ndarray is a buffer
    return digest.hexdigest()


def read_own_file(path: Path) -> bytes | None:
    """The bytes of ``path`` if it is a regular file owned by this user (a symlink is not followed),
    else None (never raises on a bad file)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        with os.fdopen(fd, "rb") as fh:
            st = os.fstat(fh.fileno())
            if not stat.S_ISREG(st.st_mode) or (hasattr(os, "getuid") and st.st_uid != os.getuid()):
                return None
            return fh.read()
    except (OSError, MemoryError):
        return None


def load_arrays(path: Path, key: str) -> dict[str, np.ndarray] | None:
    """The arrays stored at ``path`` under ``key``, or None if absent or not verified (see module
    docstring; never raises on a bad file). O(file size)."""
    data = read_own_file(path)
    if data is None:
        return None
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
    except (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile, MemoryError):
        return None
    stored = arrays.pop(_DIGEST, None)
    if stored is None or stored.dtype.kind != "U" or stored.shape != ():
        return None
    if str(stored) != array_digest(key, arrays):
        return None
    return arrays


def write_private(path: Path, fill: Callable[[BinaryIO], object]) -> None:
    """Write ``path`` atomically through a private (0600) temporary sibling that ``fill`` writes;
    the temporary is removed on any failure, which propagates (OSError: the caller notes it)."""
    tmp: str | None = None
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        with os.fdopen(fd, "wb") as fh:
            fill(fh)
        os.replace(tmp, path)
        tmp = None
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass


def save_arrays(path: Path, key: str, arrays: Mapping[str, np.ndarray]) -> bool:
    """Store ``arrays`` at ``path`` under ``key`` atomically; False (and a note) if the cache cannot
    be written. Leaves no temporary file behind."""
    payload = {k: np.ascontiguousarray(v) for k, v in arrays.items()}
    payload[_DIGEST] = np.array(array_digest(key, payload))
    try:
        write_private(path, lambda fh: np.savez(fh, **payload))  # type: ignore[arg-type]  # numpy's stub types **kwds as bool
        return True
    except OSError as exc:
        note(f"cache {str(path.parent)!r} not writable ({exc.strerror}); working uncached")
        return False
