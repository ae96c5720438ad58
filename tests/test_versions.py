"""Version ranges, the CI lock and the lowest-end constraints agree; findings replay per version."""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

from tokspec import versions
from tokspec.versions import RECORDED, FindingReproductionError, check_finding

ROOT = Path(__file__).resolve().parents[1]


def _pins(name: str) -> dict[str, str]:
    pins = {}
    for line in (ROOT / "constraints" / name).read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            dist, _, version = line.partition("==")
            assert version, f"constraints/{name}: {line!r} is not an exact pin"
            pins[re.sub(r"[-_.]+", "-", dist.lower())] = version
    return pins


def _requirements() -> dict[str, Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs = list(project["dependencies"]) + [r for extra in project["optional-dependencies"].values()
                                            for r in extra]
    out = {}
    for text in reqs:
        req = Requirement(text)
        out.setdefault(re.sub(r"[-_.]+", "-", req.name.lower()), req)
    return out


def test_recorded_versions_are_the_ci_lock() -> None:
    ci = _pins("ci.txt")
    assert {lib: ci[lib] for lib in RECORDED} == RECORDED


@pytest.mark.parametrize("lock", ["ci.txt", "lowest.txt"])
def test_locks_lie_in_the_ranges(lock: str) -> None:
    reqs = _requirements()
    for dist, version in _pins(lock).items():
        if dist in reqs:
            assert reqs[dist].specifier.contains(version, prereleases=True), (lock, dist, version,
                                                                             str(reqs[dist].specifier))


def test_lowest_is_the_lower_bound_of_each_range() -> None:
    reqs, lowest = _requirements(), _pins("lowest.txt")
    for dist in ("regex", "tiktoken", "tokenizers", "sentencepiece", "numba", "numpy", "hypothesis",
                 "pytest", "pytest-xdist", "atheris", "transformers"):
        lower = [s.version for s in reqs[dist].specifier if s.operator == ">="]
        assert lower, f"{dist} has no lower bound in pyproject.toml"
        assert Version(lowest[dist]) == Version(lower[0]), (dist, lowest[dist], lower[0])


def test_production_engines_are_ranges_not_pins() -> None:
    reqs = _requirements()
    for dist in ("regex", "tiktoken", "tokenizers", "sentencepiece"):
        ops = {s.operator for s in reqs[dist].specifier}
        assert ops == {">=", "<"}, (dist, str(reqs[dist].specifier))


def test_check_finding_asserts_with_the_recorded_version(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(versions, "installed", lambda lib: RECORDED[lib])
    assert check_finding("f", "tokenizers", True).status == "reproduced"
    with pytest.raises(FindingReproductionError, match="does not reproduce with tokenizers"):
        check_finding("f", "tokenizers", False, "ids differ")


def test_check_finding_reports_with_another_version(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(versions, "installed", lambda lib: "0.0.1")
    with pytest.warns(versions.FindingNews, match="'f' still holds with tokenizers 0.0.1"):
        assert check_finding("f", "tokenizers", True).status == "holds"
    with pytest.warns(versions.FindingNews, match="'g' CHANGED with tokenizers 0.0.1"):
        changed = check_finding("g", "tokenizers", False, "fixed upstream")
    assert (changed.status, changed.installed, changed.recorded) == ("changed", "0.0.1", RECORDED["tokenizers"])
    assert versions.STATUSES[-1] == changed


def test_unknown_library_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="library='nope' has no recorded version"):
        versions.is_recorded("nope")


def test_versions_view(capsys: pytest.CaptureFixture[str]) -> None:
    from tokspec.app.cli import main

    assert main(["engines", "--versions"]) == 0
    out = capsys.readouterr().out
    for lib, recorded in RECORDED.items():
        assert re.search(rf"^{lib}\s+\S+\s+{re.escape(recorded)}\s", out, re.M), out


def test_the_lowest_extra_leaves_out_only_what_the_floors_exclude(floor_require: Any) -> None:
    # tox -e lowest installs test-lowest: the test extra minus the packages conftest names, and each
    # of those really cannot install at the floor pinned in constraints/lowest.txt
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    excluded = floor_require.excluded
    assert "tokspec[test-lowest]" in extras["test"]
    rest = [Requirement(r) for r in extras["test"] if not r.startswith("tokspec[")]
    assert sorted(r.name for r in rest) == sorted(excluded)
    lowest = _pins("lowest.txt")
    for module, (_requirement, floor, needs) in excluded.items():
        assert Version(lowest[floor]) < Version(needs), (module, floor, lowest[floor], needs)
    assert "extras = test-lowest" in (ROOT / "tox.ini").read_text()


def test_a_missing_test_dependency_fails_unless_the_floors_exclude_it(
        floor_require: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "chonkie", None)  # import chonkie raises ImportError
    monkeypatch.setattr(versions, "installed", lambda dist: "2.3.5")
    with pytest.raises(pytest.fail.Exception, match="chonkie is missing but installable here"):
        floor_require("chonkie")
    monkeypatch.setattr(versions, "installed", lambda dist: "1.26.4")
    with pytest.raises(pytest.skip.Exception, match=r"numpy >= 2.0, installed numpy 1.26.4"):
        floor_require("chonkie")
