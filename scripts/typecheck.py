"""Run mypy (strict, ``[tool.mypy]`` in pyproject.toml) over the whole ``tokspec`` package.

    python scripts/typecheck.py [MYPY ARGS...]      # what ``tox -e typecheck`` runs

The package is spread over several folders (``package-dir`` in pyproject.toml: ``src/tokspec``,
``fast/`` as ``tokspec.fast``, ``reference/`` as ``tokspec.reference``, ...), a layout mypy cannot
map. So this builds the package's tree from symbolic links in a temporary folder, runs mypy there,
and prints each message with the repository path of its file. Exit status: mypy's.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def package_dirs() -> dict[str, Path]:
    """Package name -> folder, from pyproject.toml (the packages setuptools installs)."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    mapped = {name: ROOT / folder for name, folder in config["package-dir"].items()}
    out = {}
    for name in config["packages"]:
        parent, _, leaf = name.rpartition(".")
        out[name] = mapped.get(name) or (out[parent] / leaf)
    return out


def link_tree(root: Path) -> dict[str, str]:
    """Build ``root/tokspec/...`` from links to each package's ``.py`` files; linked path -> real path."""
    real = {}
    for name, folder in package_dirs().items():
        target = root.joinpath(*name.split("."))
        target.mkdir(parents=True, exist_ok=True)
        for source in sorted(folder.glob("*.py")) + sorted(folder.glob("py.typed")):
            (target / source.name).symlink_to(source)
            real[str((target / source.name).relative_to(root))] = str(source.relative_to(ROOT))
    return real


def main(argv: list[str]) -> int:
    with tempfile.TemporaryDirectory(prefix="tokspec-typecheck-") as tmp:
        real = link_tree(Path(tmp))
        command = [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"),
                   "--cache-dir", str(ROOT / ".mypy_cache"), "-p", "tokspec", *argv]
        done = subprocess.run(command, cwd=tmp, capture_output=True, text=True,
                              env={**os.environ, "MYPYPATH": tmp})
        for line in (done.stdout + done.stderr).splitlines():
            path, sep, rest = line.partition(":")
            print(real.get(path, path) + sep + rest)
        return done.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
