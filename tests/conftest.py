"""Shared pytest setup: hypothesis profiles chosen by environment, the opt-in `slow` marker, and the
heavy tests collected first (xdist then starts them first: tests/_suite_order.py).

TOKSPEC_HYPOTHESIS_PROFILE=quick (default, `tox -e py`) | deep (`tox -e fuzz`) | fuzz (HypoFuzz:
no example limit, no deadline) | mutation (`tox -e mutation`: derandomized, no database).
TOKSPEC_HYPOTHESIS_DB=DIR or redis://HOST:PORT/DB: the example database every profile uses, shared
by all processes and machines that name it (``tokspec.fuzz._findings.hypothesis_database``); unset:
hypothesis' default ``.hypothesis/``.
TOKSPEC_SLOW=1 runs tests marked `slow`.
TOKSPEC_THREADS=0 (set here unless given): the concurrency stage of diff and check_against is
skipped by the many tests that are not about it (it cost seconds per diff: about a third of the
suite); the tests of the stage pass ``--threads``/``threads=`` (tests/test_threads_stage.py,
tests/test_concurrency.py, tests/test_diff_parallel.py).
"""

from __future__ import annotations

import os
import sys

import pytest
from hypothesis import HealthCheck, settings

from tokspec.fuzz._findings import hypothesis_database

os.environ.setdefault("TOKSPEC_THREADS", "0")  # module docstring; subprocesses inherit it

_db = {"database": hypothesis_database()} if os.environ.get("TOKSPEC_HYPOTHESIS_DB") else {}
settings.register_profile(
    "quick", max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow], **_db)
settings.register_profile(
    "deep", max_examples=2000, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large], **_db)
# mutation testing (mutation/run.py): a mutant's verdict must not depend on the run, so the
# examples are derandomized and no database replays what an earlier mutant found.
settings.register_profile(
    "mutation", max_examples=30, deadline=None, derandomize=True, database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
# HypoFuzz refuses to collect a test that suppresses HealthCheck.nested_given (status "nested_given":
# it cannot fuzz a @given inside a @given), so the fuzz profile suppresses every other check.
settings.register_profile(
    "fuzz", max_examples=10**9, deadline=None,
    suppress_health_check=[h for h in HealthCheck if h.name != "nested_given"], **_db)  # hypothesis >= 6.119
# hypofuzz registers a hypothesis plugin that imports hypothesis.extra.cli, which appends "." to
# sys.path when click is installed ("so Ghostwriter just works"). Run from the repository root,
# that makes the bare `import spec` / `import fast` resolve: exactly what tokspec's layout forbids
# (tests/test_layout.py). Undo that one entry; tokspec's own layout is what the guard checks.
sys.path[:] = [p for p in sys.path if p not in (".", "")]
# test helpers shared by several test files (``_hf_converted``): importable as top-level modules
# under --import-mode=importlib, which puts no test folder on sys.path itself
sys.path.append(os.path.dirname(os.path.abspath(__file__)))

settings.load_profile(os.environ.get("TOKSPEC_HYPOTHESIS_PROFILE", "quick"))


_ID_SAFE = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 _-.,:=+?'{}()<>")


def stable_id(text: str) -> str:
    r"""A parametrize id for ``text`` made of plain ASCII: other characters become ``<HEX>``.

    pytest escapes non-ASCII ids and backslashes anew on every collection in one process, so such
    node ids do not round-trip; mutation testing (mutmut) re-collects in process and selects tests
    by node id. ``"\U0001f642"`` -> ``<1F642>``, ``r"\S+"`` -> ``<5C>S+``.
    """
    return "".join(c if c in _ID_SAFE else f"<{ord(c):X}>" for c in text)


def pytest_make_parametrize_id(config: pytest.Config, val: object, argname: str) -> str | None:
    return stable_id(val) if isinstance(val, str) else None


def pytest_configure(config: pytest.Config) -> None:
    # xdist's `load` scheduling hands each worker a first chunk of a quarter of its share of the
    # tests, in collection order: with the heavy tests collected first, one worker got them all (and
    # ended 100 s after the other). One test at a time (two queued) makes it longest-first list
    # scheduling: tests/_suite_order.py. A --maxschedchunk given on the command line is kept.
    if getattr(config.option, "maxschedchunk", 0) is None:
        config.option.maxschedchunk = 1


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    from _suite_order import heavy_first  # the heavy tests first: tests/_suite_order.py

    items[:] = [items[k] for k in heavy_first([item.nodeid for item in items])]
    if os.environ.get("TOKSPEC_SLOW") == "1":
        return
    skip_slow = pytest.mark.skip(reason="slow stress test: opt in with TOKSPEC_SLOW=1")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip_slow)


@pytest.fixture
def registry(monkeypatch: pytest.MonkeyPatch) -> dict:
    """The spec claims as the registering functions produce them when called again into an empty
    registry (``bpe``, ``peek2`` and ``merge`` register when called; the other families at module
    level, once): what a claims test checks is what the registering code produces, not a registry
    cached before the test ran. Imported here, not at start-up, so other tests do not load spec/."""
    from tokspec.spec import CLAIMS, _verdict, load_claims
    from tokspec.spec import bpe, merge, pretok

    load_claims()
    registrars = {"bpe": bpe._register, "peek2": pretok._register, "merge": merge._claims}
    fresh = {n: c for n, c in CLAIMS.items() if n.partition(".")[0] not in registrars}
    monkeypatch.setattr(_verdict, "CLAIMS", fresh)
    for registrar in registrars.values():
        registrar()
    assert set(fresh) == set(CLAIMS), "re-registering gives other claim ids than importing did"
    return fresh


# Test dependencies that cannot install at tokspec's own floors (``tox -e lowest``): the ``test``
# extra holds them, ``test-lowest`` (pyproject.toml) leaves them out. module -> (requirement, the
# floor distribution that excludes it, the lowest version of that distribution the package accepts).
EXCLUDED_BY_FLOORS: dict[str, tuple[str, str, str]] = {
    "chonkie": ("chonkie>=1.7", "numpy", "2.0"),            # tokspec's numpy floor: 1.26.4
    "hypofuzz": ("hypofuzz>=25.1", "hypothesis", "6.121"),  # tokspec's hypothesis floor: 6.100
}


def excluded_by_floors(module: str) -> str | None:
    """Why ``module`` cannot install next to the installed floor distribution, or None if it can."""
    from packaging.version import Version

    from tokspec.versions import installed

    requirement, floor, needs = EXCLUDED_BY_FLOORS[module]
    have = installed(floor)
    if have is not None and Version(have) < Version(needs):
        return (f"{requirement} requires {floor} >= {needs}, installed {floor} {have} (a floor tox -e "
                f"lowest tests); it runs in tox -e py")
    return None


@pytest.fixture
def floor_require() -> object:
    """``floor_require(module)`` imports ``module``; if it is missing, the test is skipped only when
    the installed floors exclude it (:func:`excluded_by_floors`), and FAILS anywhere else (tox -e py,
    ``pip install -e .[test]``): a missing dependency is never a quiet skip."""
    import importlib

    def require(module: str) -> object:
        try:
            return importlib.import_module(module)
        except ImportError:
            reason = excluded_by_floors(module)
            if reason is None:
                pytest.fail(f"{module} is missing but installable here: pip install 'tokspec[test]'")
            pytest.skip(reason)
    require.excluded = EXCLUDED_BY_FLOORS  # type: ignore[attr-defined]
    return require
