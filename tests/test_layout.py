"""The layout guard: layers import only as tokspec.*, the wheel's package list matches the disk,
and imports flow one way (fast/ never imports reference/ or spec/)."""

from __future__ import annotations

import ast
import importlib.util
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = {"spec": "tokspec.spec", "reference": "tokspec.reference", "fast": "tokspec.fast",
          "fuzz": "tokspec.fuzz"}


@pytest.mark.parametrize("bare", ["spec", "fast", "reference", "fuzz"])
def test_bare_layer_import_fails(bare: str, tmp_path: Path) -> None:
    # In the test process (pytest runs with --import-mode=importlib, so the repo root is not on
    # sys.path) and in a fresh interpreter outside the repo, only the namespaced name resolves.
    assert importlib.util.find_spec(bare) is None, f"`import {bare}` resolves in the test process"
    proc = subprocess.run([sys.executable, "-c", f"import {bare}"], cwd=tmp_path, capture_output=True)
    assert proc.returncode != 0, f"`import {bare}` worked in a fresh interpreter"


@pytest.mark.parametrize("layer", sorted(LAYERS.values()))
def test_namespaced_layer_imports(layer: str) -> None:
    assert importlib.util.find_spec(layer) is not None


def _packages_on_disk() -> set[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    found = set()
    for name, folder in config["package-dir"].items():
        base = ROOT / folder
        for init in base.rglob("__init__.py"):
            rel = init.parent.relative_to(base).parts
            found.add(".".join((name, *rel)))
    return found


def test_package_list_matches_disk() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert set(config["packages"]) == _packages_on_disk()


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


#: Public modules of the top package that only re-export the application (nothing imports them back):
#: tokspec.testing (the stable home of the pytest helpers) and the old path tokspec.pytest_plugin.
_PUBLIC_FACADES_OVER_APP = ("testing.py", "pytest_plugin.py")


@pytest.mark.parametrize("folder,forbidden", [
    ("fast", ("tokspec.reference", "tokspec.spec", "tokspec.fuzz", "tokspec.app")),
    ("reference", ("tokspec.fast", "tokspec.spec", "tokspec.fuzz", "tokspec.app")),
    ("src/tokspec/engines", ("tokspec.fast", "tokspec.reference", "tokspec.spec", "tokspec.fuzz", "tokspec.app")),
    # the core (contract, vocabularies, normalizers, diff and shrinking) sits under the application
    ("src/tokspec", ("tokspec.app", "tokspec.testing", "tokspec.pytest_plugin")),
])
def test_imports_flow_one_way(folder: str, forbidden: tuple[str, ...]) -> None:
    offenders = []
    for path in sorted((ROOT / folder).glob("*.py")):
        if path.name == "__main__.py":  # the entry point of `python -m tokspec` runs the application
            continue
        if path.name in _PUBLIC_FACADES_OVER_APP and folder == "src/tokspec":
            continue
        for name in _imports(path):
            if name.startswith(forbidden):
                offenders.append(f"{path.relative_to(ROOT)} imports {name}")
    assert not offenders, offenders
