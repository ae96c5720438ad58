"""HypoFuzz collects every hypothesis fuzz target as a pytest ``@given`` test, and the shared
example database setting is honoured (a failure saved by one process is replayed by another)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tokspec.fuzz import hyp_targets as H

REPO = Path(__file__).resolve().parents[1]

_COLLECT = '''
import json, sys
from hypofuzz.collection import collect_tests
result = collect_tests(["-p", "no:cacheprovider", "--import-mode=importlib", "-q", sys.argv[1]])
print("NODEIDS " + json.dumps([t.nodeid for t in result.fuzz_targets]))
print("NOT_COLLECTED " + json.dumps({k: str(v) for k, v in result.not_collected.items()})[:3000])
'''


@pytest.mark.parametrize("profile", ["quick", "fuzz"])
def test_hypofuzz_collects_every_hypothesis_target(profile: str, floor_require: Any) -> None:
    floor_require("hypofuzz")  # hypofuzz 25.x needs hypothesis >= 6.121: not in tox -e lowest
    # "fuzz" is the profile docs/scale.md tells HypoFuzz users to set (TOKSPEC_HYPOTHESIS_PROFILE=fuzz)
    # A HypoFuzz machine is not a CI job: with CI set, hypothesis' built-in "ci" profile (the parent
    # of tokspec's profiles) derandomizes every test, and HypoFuzz rightly skips derandomized tests.
    # hypothesis reads CI from several variables, tox's copy of CI (__TOX_ENVIRONMENT_VARIABLE_ORIGINAL_CI)
    # among them; its list is private, so fall back to the known names if it moves.
    try:
        from hypothesis._settings import _CI_VARS as ci_vars
    except ImportError:  # pragma: no cover - a hypothesis without the private table
        ci_vars = {"CI": None, "__TOX_ENVIRONMENT_VARIABLE_ORIGINAL_CI": None, "TF_BUILD": None,
                   "GITHUB_ACTIONS": None, "GITLAB_CI": None, "BUILDKITE": None, "CIRCLECI": None}
    env = {k: v for k, v in os.environ.items() if k not in ci_vars}
    env["TOKSPEC_HYPOTHESIS_PROFILE"] = profile
    out = subprocess.run([sys.executable, "-c", _COLLECT, "tests/property/test_hyp_spec_tiny.py"], cwd=REPO,
                         capture_output=True, text=True, timeout=300, env=env)
    line = next((ln for ln in out.stdout.splitlines() if ln.startswith("NODEIDS ")), None)
    assert line is not None, out.stdout[-3000:] + out.stderr[-3000:]
    names = {nodeid.rsplit("::", 1)[-1] for nodeid in json.loads(line[8:])}
    wanted = {f"test_hyp_target_{n}" for n in H.FACTORIES if n != "merge_claims"}
    assert wanted <= names, (wanted - names, out.stdout[-3000:], out.stderr[-2000:])


_FAIL_ONCE = '''
import sys
from hypothesis import Phase, given, settings, strategies as st
from tokspec.fuzz._findings import hypothesis_database

def check(n):
    assert n < 1000

phases = [Phase.reuse] if sys.argv[1] == "replay" else list(Phase)
test = settings(database=hypothesis_database(), max_examples=500, phases=phases)(given(st.integers())(check))
try:
    test()
except AssertionError:
    print("FAILED")
'''


def test_shared_database_directory_replays_across_processes(tmp_path: Path) -> None:
    env = dict(os.environ, TOKSPEC_HYPOTHESIS_DB=str(tmp_path / "shared-db"))
    run = [sys.executable, "-c", _FAIL_ONCE]
    fresh = subprocess.run([*run, "replay"], env=env, capture_output=True, text=True, timeout=120)
    assert "FAILED" not in fresh.stdout  # nothing saved yet: replay alone finds nothing
    first = subprocess.run([*run, "search"], env=env, capture_output=True, text=True, timeout=120)
    assert "FAILED" in first.stdout, first.stderr[-2000:]
    assert any(p.is_file() for p in (tmp_path / "shared-db").rglob("*"))  # saved where the setting says
    # another process (machine) naming the same database replays the saved failure without searching
    second = subprocess.run([*run, "replay"], env=env, capture_output=True, text=True, timeout=120)
    assert "FAILED" in second.stdout, second.stderr[-2000:]
