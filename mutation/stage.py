"""The stage mutmut runs in: the installed package layout, the killer tests and the corpora under
``build/mutation``, the configuration mutmut reads there, and the checks made before it runs.

mutmut derives module names from file paths under ``src/``, while tokspec installs ``reference/``,
``spec/``, ``fast/`` and ``fuzz/`` as subpackages of ``tokspec`` (pyproject's package-dir), so the
stage mirrors the installed layout; see run.py's docstring for why and for what the stage drops.
"""

from __future__ import annotations

import json
import os
import re
import sys
import tomllib
from pathlib import Path

from tokspec import _procs

REPO = Path(__file__).resolve().parents[1]
HERE = REPO / "mutation"
LAYERS = ("reference", "spec", "fast")
#: checkout folder -> where it lives in the installed package
PACKAGE_DIRS = {
    "src/tokspec": "src/tokspec",
    "reference": "src/tokspec/reference",
    "spec": "src/tokspec/spec",
    "fast": "src/tokspec/fast",
    "fuzz": "src/tokspec/fuzz",
}
DATA_SUFFIXES = {".py", ".json", ".txt", ".typed"}
KERNEL_DECORATOR = "@kernel"
#: a whole line that is ``@kernel`` or ``@kernel(...)`` with its arguments on the same line
#: (``@kernel(inline=True)``); a decorator spread over several lines is kept, and its function stays
#: unmutated (counted as such in the report)
KERNEL_DECORATOR_LINE = re.compile(r"@kernel(\([^()\n]*\))?")
#: module name of mutation/hang_guard.py in the stage (a pytest plugin of mutmut's workers)
HANG_GUARD = "_mutation_hang_guard"



def load_config() -> dict:
    with open(HERE / "config.toml", "rb") as f:
        return tomllib.load(f)


def staged_text(text: str, with_arguments: bool = True) -> str:
    """The staged form of a source file: the same text without ``@kernel`` and ``@kernel(...)``
    decorator lines.

    Under ``TOKSPEC_JIT=0`` :func:`tokspec._jit.kernel` returns its function unchanged, with or
    without arguments (``kernel(inline=True)(f) is f``, checked before every run), so the line
    carries no meaning in the mode mutation testing runs; mutmut skips decorated functions.
    Line numbers shift by one per kernel; the report quotes lines by content, not number.
    ``with_arguments=False`` keeps ``@kernel(...)`` lines (a module in config.toml's
    ``[stage] keep_decorated``: its decorated kernels stay unmutated until their mutants are judged).
    """
    def dropped(line: str) -> bool:
        match = KERNEL_DECORATOR_LINE.fullmatch(line.strip())
        return match is not None and (with_arguments or match.group(1) is None)
    return "".join(line for line in text.splitlines(keepends=True) if not dropped(line))


def kept_decorated() -> set[str]:
    """Checkout paths (``fast/x.py``) whose ``@kernel(...)`` lines the stage keeps: config.toml's
    ``[stage] keep_decorated``."""
    return set(load_config().get("stage", {}).get("keep_decorated", []))


def _sync_file(src: Path, dst: Path, text_transform: bool, with_arguments: bool = True) -> bool:
    """Copy ``src`` to ``dst`` only if the content differs (so mutmut's mtime cache stays valid)."""
    data = src.read_bytes()
    if text_transform and src.suffix == ".py":
        data = staged_text(data.decode("utf-8"), with_arguments).encode("utf-8")
    return _write_if_changed(dst, data)


def stage(work: Path, killers: list[str]) -> int:
    """Mirror the installed package layout, the killer tests and the corpora under ``work``.

    Returns the number of files written. Files that vanished from the checkout are removed.
    """
    written = 0
    wanted: set[Path] = set()
    keep = kept_decorated()
    for checkout_dir, staged_dir in PACKAGE_DIRS.items():
        root = REPO / checkout_dir
        for src in sorted(root.rglob("*")):
            if not src.is_file() or "__pycache__" in src.parts or src.suffix not in DATA_SUFFIXES:
                continue
            rel = src.relative_to(root)
            if checkout_dir == "src/tokspec" and rel.parts[0] in {"reference", "spec", "fast", "fuzz"}:
                continue
            dst = work / staged_dir / rel
            wanted.add(dst)
            changed = _sync_file(src, dst, text_transform=True,
                                 with_arguments=f"{checkout_dir}/{rel.as_posix()}" not in keep)
            written += changed
            if changed and checkout_dir in LAYERS and src.suffix == ".py":
                _forget_test_map(work, f"{checkout_dir}/{rel}")
    for src in sorted((REPO / "tests").rglob("*.py")):
        dst = work / "tests" / src.relative_to(REPO / "tests")
        wanted.add(dst)
        written += _sync_file(src, dst, text_transform=False)
    for src in sorted((REPO / "scripts").glob("*.py")):  # generators some tests re-run (../scripts from tests/)
        written += _sync_file(src, work / "mutants" / "scripts" / src.name, text_transform=False)
    for stale in [p for p in (work / "src").rglob("*") if p.is_file() and "__pycache__" not in p.parts]:
        if stale not in wanted:
            stale.unlink()
    # corpora: a private copy (a mutant must never write into the checkout's findings)
    corpora = work / "mutants" / "corpora"
    for src in sorted(p for p in (REPO / "corpora").rglob("*") if p.is_file()):
        dst = corpora / src.relative_to(REPO / "corpora")
        wanted.add(dst)
        written += _sync_file(src, dst, text_transform=False)
    for stale in [p for p in corpora.rglob("*") if p.is_file() and p not in wanted]:
        stale.unlink()                                 # a finding removed from the checkout
    if not (work / "corpora").exists():              # tests run from the stage root too (check_node_ids)
        (work / "corpora").symlink_to(corpora)
    # the per-test hang guard (mutation/hang_guard.py), importable by mutmut's workers as a plugin;
    # outside mutmut's source folder, which it copies once and never refreshes
    written += _sync_file(HERE / "hang_guard.py", work / "mutants" / "src" / f"{HANG_GUARD}.py", text_transform=False)
    pyproject = _stage_pyproject(killers)
    written += _write_if_changed(work / "pyproject.toml", pyproject.encode("utf-8"))
    # mutmut's in-process stats run imports tokspec through PYTHONPATH=<work>/mutants/src. If that
    # folder does not exist when the interpreter starts, the first import that scans sys.path caches
    # "no finder" for the entry, and tokspec later comes from site-packages (the unmutated install):
    # no trampoline hits, and mutmut stops with "could not find any test case" on a fresh stage.
    (work / "mutants" / "src").mkdir(parents=True, exist_ok=True)
    return written


def _forget_test_map(work: Path, changed: str) -> None:
    """Drop mutmut's recorded test map when a mutated source changes, so the next run records it anew.

    mutmut re-records the map only for new *tests*: a new or edited function keeps the calls recorded
    for the old code (none for a new one, whose mutants then read "no tests": counted as survivors).
    Verdicts are kept; mutmut re-judges the mutants of changed functions by their hash."""
    stats = work / "mutants" / "mutmut-stats.json"
    if stats.exists():
        print(f"mutation: {changed} changed; the test map is recorded again", flush=True)
        stats.unlink()


def _write_if_changed(path: Path, data: bytes) -> bool:
    """Replace ``path`` by ``data`` atomically unless it already holds exactly that."""
    if path.exists() and path.read_bytes() == data:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)
    return True


def _stage_pyproject(killers: list[str]) -> str:
    config = load_config()
    cfg = config["mutmut"]
    deselect = [arg for node in config["killers"].get("deselect", []) for arg in ("--deselect", node)]
    only = [f"src/tokspec/{layer}/*" for layer in LAYERS]
    lines = [
        "[tool.mutmut]",
        'source_paths = ["src"]',
        f"only_mutate = {json.dumps(only)}",
        f"pytest_add_cli_args_test_selection = {json.dumps(killers)}",
        f"pytest_add_cli_args = {json.dumps(cfg['pytest_args'] + ['-p', HANG_GUARD] + deselect)}",
        f"timeout_multiplier = {float(cfg['timeout_multiplier'])}",
        f"timeout_constant = {float(cfg['timeout_constant'])}",
        "use_git_change_detection = false",
        "",
        "[tool.pytest.ini_options]",
        'addopts = "-p no:cacheprovider"',
        'markers = ["slow: long stress tests, opt-in with TOKSPEC_SLOW=1"]',
        "",
    ]
    return "\n".join(lines)


def mutation_env(work: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        TOKSPEC_JIT="0",
        TOKSPEC_HYPOTHESIS_PROFILE="mutation",
        TOKSPEC_CORPORA=str(work / "mutants" / "corpora"),
        TOKSPEC_CACHE=str(REPO / ".tokspec-cache" if not os.environ.get("TOKSPEC_CACHE") else os.environ["TOKSPEC_CACHE"]),
        PYTHONHASHSEED="0",
        PYTHONDONTWRITEBYTECODE="1",
        # tests that start a Python subprocess import the mutated copy too (and inherit the mutant)
        PYTHONPATH=str(work / "mutants" / "src"),
    )
    env.pop("TOKSPEC_SLOW", None)
    return env


def check_kernel_is_identity(work: Path, env: dict[str, str]) -> None:
    """Refuse to run if ``@kernel`` or ``@kernel(...)`` is not the identity in interpreted mode (the
    stage relies on it)."""
    probe = (
        "import tokspec._jit as j\n"
        "f = lambda x: x\n"
        "assert not j.JIT_ENABLED and j.kernel(f) is f, 'kernel is not the identity under TOKSPEC_JIT=0'\n"
        "assert j.kernel(inline=True)(f) is f and j.kernel(cache=False)(f) is f, "
        "'kernel(...) is not the identity under TOKSPEC_JIT=0'\n"
        "print(j.__file__)\n"
    )
    out = _procs.run([sys.executable, "-c", probe], cwd=work, env={**env, "PYTHONPATH": str(work / "src")},
                     capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"mutation: stage check failed: {out.stderr.strip().splitlines()[-1:]}")
    if not out.stdout.strip().startswith(str(work / "src")):
        raise SystemExit(f"mutation: the stage imports tokspec from {out.stdout.strip()}, not from the stage")


def check_node_ids(work: Path, env: dict[str, str], killers: list[str]) -> None:
    """Refuse node ids that do not round-trip: mutmut selects a mutant's tests by node id after
    collecting in the same process, and pytest re-escapes non-ASCII and backslashes on every
    collection, so such an id is "not found" in the worker (pytest exit 4, which would be read as
    a kill). tests/conftest.py makes string parameters ASCII (``stable_id``)."""
    # collected against the staged, unmutated copy: mutmut's copy (mutants/src) lags behind a module
    # the checkout just added until mutmut runs, and node ids do not depend on mutants
    done = _procs.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:xdist",
                       "-p", "no:cacheprovider", *killers], cwd=work, env={**env, "PYTHONPATH": str(work / "src")},
                      capture_output=True, text=True)
    ids = [ln for ln in done.stdout.splitlines() if "::" in ln]
    if done.returncode != 0 or not ids:
        raise SystemExit(f"mutation: collecting the killer tests failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    bad = [i for i in ids if "\\" in i or not i.isascii()]
    if bad:
        raise SystemExit("mutation: test ids that do not round-trip (give them ASCII ids):\n  " + "\n  ".join(bad[:20]))
