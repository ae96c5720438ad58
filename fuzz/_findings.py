"""Where fuzzing keeps its state, and how findings are named, written and recognised.

Layout (``<corpora>`` is ``$TOKSPEC_FUZZ_CORPORA``, else ``./corpora/fuzz`` when the current
directory has ``corpora/``, else ``corpora/fuzz`` next to this package's source folder):

- ``<corpora>/<target>/corpus/<sha1>``: the seed corpus libFuzzer reads and grows (content-hash
  names, libFuzzer's own convention);
- ``<corpora>/<target>/findings/<id>.json``: stored findings: *known*, replayed by the test suite,
  never "new" again;
- ``<cache>/fuzz/``: hypothesis example database (``hypothesis/``), per-run reports
  (``runs/<stamp>/<target>/``), grown corpora (``corpus/<target>/``) and pending findings
  (``findings/<target>/``, known like stored ones until promoted into ``<corpora>``), where ``<cache>`` is ``$TOKSPEC_CACHE`` or ``.tokspec-cache`` in the
  current directory.

A finding's ``id`` is the first 16 hex digits of the sha256 of its minimized input (text as UTF-8
with surrogatepass, or the canonical JSON of a hypothesis example), so the same input found twice
has one id. Its *class* (:func:`finding_class`) groups inputs of one bug: a failing input whose
class matches an open stored finding of the same target is *known*, not new (it is counted, not
minimized or stored). Reports are written atomically (temporary file + ``os.replace``).

Out of scope: cross-machine corpus syncing.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["finding_class", "known_classes", "corpora_root", "cache_root", "finding_id", "write_json_atomic", "known_ids",
           "findings_dir", "corpus_dir", "load_findings", "hypothesis_db_dir", "pending_dir", "pending_findings",
           "hypothesis_database"]


def corpora_root() -> Path:
    """The ``corpora/fuzz`` directory (module docstring)."""
    env = os.environ.get("TOKSPEC_FUZZ_CORPORA")
    if env:
        return Path(env)
    if getattr(sys, "frozen", False):  # a PyInstaller-built OSS-Fuzz/ClusterFuzzLite fuzzer: bundled data
        return Path(getattr(sys, "_MEIPASS", ".")) / "corpora" / "fuzz"
    if (Path.cwd() / "corpora").is_dir():
        return Path.cwd() / "corpora" / "fuzz"
    return Path(__file__).resolve().parents[1] / "corpora" / "fuzz"


def cache_root() -> Path:
    """``$TOKSPEC_CACHE/fuzz`` or ``./.tokspec-cache/fuzz``."""
    base = os.environ.get("TOKSPEC_CACHE")
    return (Path(base) if base else Path.cwd() / ".tokspec-cache") / "fuzz"


def hypothesis_db_dir() -> Path:
    return cache_root() / "hypothesis"


def hypothesis_database(default: Path | None = None) -> Any:
    """The hypothesis example database named by ``$TOKSPEC_HYPOTHESIS_DB``, shared by every process
    and machine that names the same one, so each replays every failure any of them found:

    - a directory (for instance on shared storage: NFS, a CI cache):
      ``DirectoryBasedExampleDatabase`` (safe for concurrent writers: one file per example);
    - ``redis://HOST:PORT/DB``: hypothesis' ``RedisExampleDatabase`` (needs the ``redis`` package).

    Unset: ``default`` as a directory, or None (hypothesis' own default, ``.hypothesis/``).
    """
    from hypothesis.database import DirectoryBasedExampleDatabase

    spec = os.environ.get("TOKSPEC_HYPOTHESIS_DB", "")
    if spec.startswith(("redis://", "rediss://")):
        try:
            import redis
            from hypothesis.extra.redis import RedisExampleDatabase
        except ImportError as exc:
            raise RuntimeError(f"TOKSPEC_HYPOTHESIS_DB={spec!r} needs the redis package "
                               f"(pip install redis): {exc}") from None
        return RedisExampleDatabase(redis.Redis.from_url(spec))
    if spec:
        return DirectoryBasedExampleDatabase(spec)
    return None if default is None else DirectoryBasedExampleDatabase(str(default))


def corpus_dir(target: str) -> Path:
    return corpora_root() / target / "corpus"


def findings_dir(target: str) -> Path:
    return corpora_root() / target / "findings"


def finding_id(payload: str | dict[str, Any]) -> str:
    """Stable id of a minimized input (module docstring)."""
    if isinstance(payload, str):
        raw = payload.encode("utf-8", errors="surrogatepass")
    else:
        raw = json.dumps(payload, sort_keys=True, ensure_ascii=True).encode()
    return hashlib.sha256(raw).hexdigest()[:16]


def write_json_atomic(path: Path, data: dict[str, Any]) -> Path:
    """Write ``data`` as JSON to ``path`` atomically; returns ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, ensure_ascii=True, indent=1, sort_keys=True)
            fh.write("\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def load_findings(target: str) -> dict[str, dict[str, Any]]:
    """Stored findings of ``target``: id -> report."""
    out: dict[str, dict[str, Any]] = {}
    d = findings_dir(target)
    if d.is_dir():
        for p in sorted(d.glob("*.json")):
            out[p.stem] = json.loads(p.read_text(encoding="utf-8"))
    return out


def pending_dir(target: str) -> Path:
    """New findings of fuzz runs not yet promoted into ``corpora/`` (``tokspec.fuzz.run --promote``)."""
    return cache_root() / "findings" / target


def pending_findings(target: str) -> dict[str, dict[str, Any]]:
    """Pending findings of ``target`` (see :func:`pending_dir`): id -> report."""
    d = pending_dir(target)
    return {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in sorted(d.glob("*.json"))} if d.is_dir() else {}


def known_ids(target: str) -> set[str]:
    """Ids of stored findings and of pending ones: neither is "new" again."""
    return set(load_findings(target)) | set(pending_findings(target))


def finding_class(explanation: str, witness: dict[str, Any] | None) -> str:
    """The bug class of a finding: a diff's classification ("different tokens", "same ids,
    different offsets", "crash or rejection"), else the property's explanation with numbers
    blanked. Two findings of one target with the same class count as the same bug."""
    if witness and isinstance(witness.get("classification"), str):
        return str(witness["classification"])
    return re.sub(r"\d+", "N", explanation)


def known_classes(target: str) -> set[str]:
    """Classes of the stored findings of ``target`` that are still open."""
    return {finding_class(r.get("explanation", ""), r.get("witness"))
            for r in [*load_findings(target).values(), *pending_findings(target).values()]
            if r.get("status") == "open"}
