"""Atomic file writes that leave nothing behind and respect the umask.

:func:`write_atomic` writes a whole file through a temporary sibling, then renames it over the
target (``os.replace``): a reader sees the old file or the new one, never half of one.

- The temporary file is ``.<name>.tokspec-tmp-<pid>-<random>``: hidden, and named after the
  process writing it. It is removed on any exception (Ctrl-C, SIGTERM via the CLI's handler, a full
  disk). A SIGKILL cannot be caught, so the next write into the same folder (once per folder and
  process) removes temporary files whose writer process no longer exists.
- Modes: the file is created like ``open(path, "w")`` does (0666 minus the umask: 0644 under the
  usual umask 022), not 0600 as :func:`tempfile.mkstemp` would.

Meant for tokspec's own outputs (records, reports) inside folders it owns; it replaces whatever
entry is at ``path``. For a path a user names as an output file, see
:func:`tokspec.corpus.write_inputs`, which writes through instead. Out of scope: fsync
(durability across power loss).
"""

from __future__ import annotations

import os
import re
import secrets
from pathlib import Path

__all__ = ["write_atomic", "remove_stale_temporaries"]

_TMP = re.compile(r"^\..+\.tokspec-tmp-(\d+)-[0-9a-f]+$")
_swept: set[str] = set()


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale_temporaries(directory: str | Path) -> list[Path]:
    """Remove ``directory``'s temporary files whose writer process is gone; return them. O(entries)."""
    removed: list[Path] = []
    try:
        names = os.listdir(directory)
    except OSError:
        return removed
    for name in names:
        m = _TMP.match(name)
        if m and int(m.group(1)) != os.getpid() and not _pid_alive(int(m.group(1))):
            path = Path(directory) / name
            try:
                path.unlink()
                removed.append(path)
            except OSError:
                pass
    return removed


def write_atomic(path: str | Path, content: str, *, mkdir: bool = True) -> Path:
    """Write ``content`` (UTF-8) to ``path`` atomically (module docstring); return ``path``.

    ``mkdir``: create missing parent folders. O(len(content)).
    """
    target = Path(path)
    folder = target.parent
    if mkdir:
        folder.mkdir(parents=True, exist_ok=True)
    key = str(folder.resolve())
    if key not in _swept:
        _swept.add(key)
        remove_stale_temporaries(folder)
    tmp = folder / f".{target.name}.tokspec-tmp-{os.getpid()}-{secrets.token_hex(4)}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(content)
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return target
