"""The public, stable home of the pytest helpers (tokspec.testing), the old import path
tokspec.pytest_plugin (a warning shim), and check_against replaying the user's own saved findings."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import warnings
from dataclasses import replace
from pathlib import Path

import pytest

import tokspec.testing as testing
from tokspec import Encoder, Encoding, EngineInfo, load_engine
from tokspec.app import pytest_plugin

MARK = "q\u2603z"  # the text the planted bug below answers wrongly (in no stored corpus)


def test_testing_reexports_every_public_plugin_name() -> None:
    wanted = set(pytest_plugin.__all__) - testing.PLUGIN_ONLY
    assert set(testing.__all__) == wanted, (wanted ^ set(testing.__all__))
    for name in testing.__all__:
        assert getattr(testing, name) is getattr(pytest_plugin, name), name
    assert testing.PLUGIN_ONLY <= set(pytest_plugin.__all__)  # no stale exclusion


def test_old_import_path_works_and_warns() -> None:
    sys.modules.pop("tokspec.pytest_plugin", None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        old = importlib.import_module("tokspec.pytest_plugin")
    assert any(issubclass(w.category, DeprecationWarning) and "tokspec.testing" in str(w.message)
               for w in caught), [str(w.message) for w in caught]
    assert old.check_against is testing.check_against
    assert old.assert_engines_agree is testing.assert_engines_agree
    assert set(old.__all__) == set(testing.__all__)


OLD_USER_SUITE = '''
from tokspec.pytest_plugin import assert_engines_agree

def test_agree_old_path():
    assert_engines_agree("tiktoken:cl100k_base", "reference:cl100k_base", "a\\r\\n\\r\\nb")

def test_fixture(tokspec):
    assert tokspec.engine("tiktoken:cl100k_base").encode("hi").ids == (6151,)
'''


def test_old_user_suite_runs_with_the_old_plugin_flag(tmp_path: Path) -> None:
    # a suite written against the documented path of the first release, run the way its docs said
    (tmp_path / "test_old.py").write_text(OLD_USER_SUITE, encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "tokspec.pytest_plugin", "-p", "no:cacheprovider", "-q",
         "test_old.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "2 passed" in proc.stdout


class _WrongOnMark(Encoder):
    """cl100k_base, but one id is changed on any text containing MARK (a bug no search draws)."""

    def __init__(self) -> None:
        self.inner = load_engine("tiktoken:cl100k_base")
        self.info: EngineInfo = replace(self.inner.info, name="test:wrong-on-mark")

    def _encode(self, text: str) -> Encoding:
        enc = self.inner.encode(text)
        assert enc.ids is not None
        ids = list(enc.ids)
        if MARK in text:
            ids[0] += 1
        return Encoding.of(ids, list(enc.offsets))


def test_check_against_replays_saved_findings_first(tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    engine = _WrongOnMark()
    # nothing saved: tokspec's own replay and a zero budget do not meet the planted text
    testing.check_against(engine, "tiktoken:cl100k_base", max_examples=0, reports=reports)
    reports.mkdir()
    (reports / "earlier.json").write_text(json.dumps({"text": f"ab {MARK} cd"}), encoding="utf-8")
    assert testing.saved_findings(reports) == [(f"your saved findings ({reports})", f"ab {MARK} cd")]
    with pytest.raises(AssertionError) as failure:
        testing.check_against(engine, "tiktoken:cl100k_base", max_examples=0, reports=reports)
    assert "(your saved findings (" in str(failure.value)
    # the failure saved its (minimized) record there too, so the next run replays that one as well
    texts = [t for _, t in testing.saved_findings(reports)]
    assert len(texts) == 2 and all(MARK in t for t in texts)


def test_saved_findings_of_a_missing_folder_is_empty(tmp_path: Path) -> None:
    assert testing.saved_findings(tmp_path / "none") == []
