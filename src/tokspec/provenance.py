"""Where a finding came from and how to replay it: typed engine names, environment, version, seed.

A counterexample record is only useful if the command it prints works where it was found. So the
command names the engines *as typed* (``buggy:engine``, not an engine's internal
``EngineInfo.name``), carries the environment a ``module:attr`` engine needs (``PYTHONPATH``),
and keeps the comparison mode (``--compare ids``) and the input mode (``--raw`` for fuzzer bytes).
:func:`provenance` is the record's ``"provenance"`` object: ``tokspec_version``, ``engines_typed``,
``env``, ``seed`` and ``generator`` (None in file mode), ``compare``.

Out of scope: capturing the whole environment (virtualenvs, versions of other packages: the record's
``"engines"`` carries each engine's library version).
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Any

__all__ = ["is_module_attr", "env_needed", "replay_command", "provenance"]


def is_module_attr(name: str) -> bool:
    """True if ``name`` loads as ``module:attr`` (no built-in prefix and no entry point owns it)."""
    from tokspec._registry import PROVIDERS, _entry_points

    prefix, sep, _ = name.partition(":")
    if not sep or prefix in PROVIDERS:
        return False
    try:
        return prefix not in _entry_points()
    except Exception:  # noqa: BLE001 - broken entry-point metadata: assume a module
        return True


def env_needed(names: list[str]) -> dict[str, str]:
    """The environment a replay needs: ``PYTHONPATH`` as set now, when an engine is ``module:attr``
    (its module was found through it); empty otherwise."""
    path = os.environ.get("PYTHONPATH", "")
    if path and any(is_module_attr(n) for n in names):
        return {"PYTHONPATH": path}
    return {}


def replay_command(a: str, b: str, path: str | Path, *, env: dict[str, str] | None = None,
                   compare_on: str = "all", raw: bool = False) -> str:
    """``[VAR=value ...] tokspec diff A B --inputs PATH [--raw] [--compare ids]``, shell-quoted."""
    words = [f"{k}={shlex.quote(v)}" for k, v in sorted((env or {}).items())]
    words += ["tokspec", "diff", shlex.quote(a), shlex.quote(b), "--inputs", shlex.quote(str(path))]
    if raw:
        words.append("--raw")
    if compare_on != "all":
        words += ["--compare", shlex.quote(compare_on)]
    return " ".join(words)


def provenance(a: str, b: str, *, seed: int | None = None, generator: str | None = None,
               compare_on: str = "all") -> dict[str, Any]:
    """The record's ``"provenance"`` object (module docstring)."""
    import tokspec

    return {"tokspec_version": tokspec.__version__, "engines_typed": [a, b], "env": env_needed([a, b]),
            "seed": seed, "generator": generator, "compare": compare_on}
