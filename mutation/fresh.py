"""Judge the mutants of import-time code in a fresh interpreter.

mutmut forks every mutant's worker from a process that has already imported the package, and a
trampoline switches a function to its mutant when it is *called*. A function that runs only while
its module is imported (``_claims()`` registering spec/'s published claims, tables built at module
level) was called before the fork, with the original code: in the worker its mutant never runs and
looks like a survivor, or like "no tests" when the call happened during collection. Those verdicts
say nothing about the tests.

:func:`import_time_functions` finds such functions by importing every module of the mutated layers
in a fresh interpreter under a profiler; :func:`recheck` runs each of their undetected mutants in a
new interpreter (``MUTANT_UNDER_TEST`` set before the import), against the killer tests that
exercise the module. Verdicts go to ``build/mutation/fresh.json`` keyed by mutant and function hash
(mutmut's own files are never written), so an edit of the function voids them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tokspec import _procs
from tokspec._atomic import write_atomic

_PROBE = r"""
import importlib, json, pkgutil, sys
layers = json.loads(sys.argv[1])
seen = set()
def profile(frame, event, arg):
    if event == "call":
        name = frame.f_code.co_name
        if name.endswith("__mutmut_orig"):
            seen.add(frame.f_globals.get("__name__", "") + "." + name[: -len("__mutmut_orig")])
sys.setprofile(profile)
for layer in layers:
    package = importlib.import_module("tokspec." + layer)
    for info in pkgutil.iter_modules(package.__path__):
        importlib.import_module(f"tokspec.{layer}.{info.name}")
sys.setprofile(None)
print(json.dumps(sorted(seen)))
"""


def import_time_functions(work: Path, env: dict[str, str], layers: tuple[str, ...]) -> set[str]:
    """Mangled names (``tokspec.spec.merge.x__claims``) of functions that run while importing."""
    done = _procs.run([sys.executable, "-c", _PROBE, json.dumps(list(layers))], cwd=work / "mutants",
                      env={**env, "MUTANT_UNDER_TEST": ""}, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"mutation: import probe failed: {done.stderr.strip()[-500:]}")
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def tests_for_module(work: Path, module: str, killer_files: list[str],
                     tests_by_function: dict[str, list[str]]) -> list[str]:
    """Killer tests that exercise ``module``: its own test file (``tests/test_<layer>_<module>.py``)
    whole, plus those mutmut saw call any of its functions (``tests_by_function``, from
    mutmut-stats.json); with neither, the killer test files that name the module.

    The own file is included whole because a test of import-time results need not call anything:
    spec.merge's test that every registered witness is the one the search recorded reads the claim
    registry that ``_claims()`` filled at import, and mutmut records no call for it."""
    short = module.rpartition(".")[2]
    layer = module.split(".")[1]
    own = own_test_file(module)
    has_own = (work / "mutants" / own).is_file() and any(own == f or own.startswith(f.rstrip("/") + "/")
                                                         for f in killer_files)
    tests = sorted({t for fn, ts in tests_by_function.items()
                    if fn.rpartition(".")[0] == module for t in ts if not (has_own and t.startswith(own + "::"))})
    if tests or has_own:
        return [own] * has_own + tests
    files = []
    for f in killer_files:
        for path in sorted((work / "mutants" / f).rglob("*.py")) if (work / "mutants" / f).is_dir() else [work / "mutants" / f]:
            text = path.read_text()
            if module in text or f"from tokspec.{layer} import {short}" in text:
                files.append(str(path.relative_to(work / "mutants")))
    return files


def own_test_file(module: str) -> str:
    """``tokspec.spec.merge`` -> ``tests/test_spec_merge.py``."""
    return f"tests/test_{module.split('.')[1]}_{module.rpartition('.')[2]}.py"


def within_budget(tests: list[str], durations: dict[str, float], budget: float,
                  own_file: str = "") -> list[str]:
    """As many tests as fit ``budget`` seconds of their recorded duration (at least one): those of
    ``own_file`` (the module's own test file, ``tests/test_<layer>_<module>.py``) first, then the
    rest, each group fastest first. The module's own file goes first because the fastest tests of
    a module are often the ones that check the least: spec.merge's registered witnesses are checked
    by its own file's slower tests, which a fastest-first budget never reached."""
    chosen, spent = [], 0.0
    for t in sorted(tests, key=lambda t: (t.split("::")[0] != own_file, durations.get(t, 1.0))):
        if chosen and spent + durations.get(t, 1.0) > budget:
            break
        chosen.append(t)
        spent += durations.get(t, 1.0)
    return chosen


def _run_one(work: Path, env: dict[str, str], name: str, tests: list[str], timeout: float) -> int:
    cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:xdist", "-p", "no:cacheprovider", *tests]
    try:
        return _procs.run(cmd, cwd=work / "mutants", env={**env, "MUTANT_UNDER_TEST": name}, timeout=timeout,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
    except subprocess.TimeoutExpired:               # the whole process group is already killed
        return 36                                   # mutmut's "timeout"


def load(work: Path) -> dict[str, dict]:
    path = work / "fresh.json"
    return json.loads(path.read_text()) if path.exists() else {}


def recheck(work: Path, env: dict[str, str], jobs: list[tuple[str, str, list[str]]], workers: int,
            timeout: float) -> dict[str, dict]:
    """Run each (mutant, function hash, tests) job in a fresh interpreter; store and return verdicts."""
    verdicts = load(work)
    path = work / "fresh.json"

    def one(job: tuple[str, str, list[str]]) -> tuple[str, str, int]:
        name, digest, tests = job
        return name, digest, _run_one(work, env, name, tests, timeout)

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        for i, (name, digest, code) in enumerate(pool.map(one, jobs), 1):
            verdicts[name] = {"hash": digest, "exit": code}
            write_atomic(path, json.dumps(verdicts, indent=0))  # as each verdict arrives: resumable
            print(f"\rmutation: fresh-interpreter recheck {i}/{len(jobs)}", end="", flush=True)
    if jobs:
        print()
    return verdicts
