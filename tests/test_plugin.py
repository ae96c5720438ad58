"""The pytest plugin: helpers in-process, and the fixture in a user's own pytest run (subprocess)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest
from hypothesis import strategies as st

from tokspec import TokspecError
from tokspec.app.pytest_plugin import assert_engines_agree, check_against, default_texts

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


@pytest.fixture
def buggy(monkeypatch: pytest.MonkeyPatch) -> object:
    monkeypatch.syspath_prepend(str(EXAMPLES))
    from buggy_python_engine import engine

    return engine()


def test_assert_engines_agree(buggy: object) -> None:
    assert_engines_agree("tiktoken:cl100k_base", "bpe-openai:cl100k_base", "a\r\n\r\nb 🙂 it's")
    assert_engines_agree(buggy, "tiktoken:cl100k_base", "one line only")  # type: ignore[arg-type]
    with pytest.raises(AssertionError) as exc:
        assert_engines_agree(buggy, "tiktoken:cl100k_base", "a\r\n\r\nb")  # type: ignore[arg-type]
    message = str(exc.value)
    assert "different segmentation" in message and "first divergence at token #1" in message
    assert "A buggy_python_engine:engine" in message and "B tiktoken:cl100k_base" in message
    assert "text='\\r\\n\\r\\n'" in message  # the covered text of cl100k's token #1


def test_bad_engine_arguments() -> None:
    with pytest.raises(TypeError, match="engine must be"):
        assert_engines_agree(42, "tiktoken:cl100k_base", "x")  # type: ignore[arg-type]
    with pytest.raises(TokspecError, match="unknown engine"):
        assert_engines_agree("nosuchprefix", "tiktoken:cl100k_base", "x")


def test_check_against_finds_minimizes_and_saves(buggy: object, tmp_path: Path) -> None:
    with pytest.raises(AssertionError) as exc:
        check_against(buggy, "tiktoken:cl100k_base", reports=tmp_path)  # type: ignore[arg-type]
    message = str(exc.value)
    assert message.startswith("engines disagree: different segmentation: text=")
    assert "seed: 0 (reproduce: TOKSPEC_SEED=0" in message
    records = list(tmp_path.glob("*.json"))
    assert len(records) == 1, records
    record = json.loads(records[0].read_text(encoding="utf-8"))
    assert f"record: {records[0].resolve()}" in message
    assert (f"replay: tokspec diff buggy_python_engine:engine tiktoken:cl100k_base --inputs "
            f"{records[0].resolve()}") in message
    assert "\n" in record["text"] and len(record["text"]) <= 4  # minimized: two line ends meeting
    assert record["classification"] == "different segmentation"


def test_check_against_passes_for_agreeing_engines() -> None:
    check_against("tiktoken:cl100k_base", "bpe-openai:cl100k_base", max_examples=60)


def test_check_against_hypothesis_path() -> None:
    check_against("tiktoken:cl100k_base", "bpe-openai:cl100k_base",
                  texts=st.text(alphabet="ab \n", max_size=20), max_examples=20)
    check_against("tiktoken:cl100k_base", "bpe-openai:cl100k_base",
                  texts=default_texts("tiktoken:cl100k_base"), max_examples=20)


def test_check_against_hypothesis_path_finds(buggy: object) -> None:
    with pytest.raises(AssertionError, match="engines disagree: different segmentation"):
        check_against(buggy, "tiktoken:cl100k_base", texts=st.text(alphabet="a\n", max_size=8),  # type: ignore[arg-type]
                      max_examples=200)


def test_bad_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOKSPEC_SEED", "zero")
    with pytest.raises(TokspecError, match="TOKSPEC_SEED: tokspec-seed='zero' is not a valid int"):
        check_against("tiktoken:cl100k_base", "bpe-openai:cl100k_base")
    monkeypatch.delenv("TOKSPEC_SEED")
    with pytest.raises(TokspecError, match="max_examples must be >= 0"):
        check_against("tiktoken:cl100k_base", "bpe-openai:cl100k_base", max_examples=-1)


USER_TESTS = '''
from buggy_python_engine import engine

def test_agrees_on_one_line(tokspec):
    tokspec.assert_agree(engine(), "tiktoken:cl100k_base", "hello world")

def test_crlf(tokspec):
    tokspec.assert_agree(engine(), "tiktoken:cl100k_base", "a\\r\\n\\r\\nb")

def test_engine_by_name(tokspec):
    assert tokspec.engine("tiktoken:cl100k_base").encode("hi").ids == (6151,)

def test_search(tokspec):
    tokspec.check_against(engine(), "tiktoken:cl100k_base")
'''


def test_fixture_in_a_user_suite(tmp_path: Path) -> None:
    (tmp_path / "test_user.py").write_text(USER_TESTS, encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(EXAMPLES), os.environ.get("PYTHONPATH", "")]))
    # Once installed as the pytest11 entry point "tokspec" the plugin loads by itself (and a second
    # registration through -p would be an error); until then, -p loads it.
    registered = any(ep.name == "tokspec" for ep in metadata.entry_points(group="pytest11"))
    plugin_args = [] if registered else ["-p", "tokspec.app.pytest_plugin"]
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", *plugin_args, "-p", "no:cacheprovider",
         "-q", "-W", "ignore::DeprecationWarning", "--tokspec-seed", "7", "--tokspec-budget", "0",
         "--tokspec-reports", "found", "test_user.py"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "2 failed, 2 passed" in proc.stdout
    assert "engines disagree: different segmentation" in proc.stdout
    assert "first divergence at token #1" in proc.stdout
    # the search: options reach check_against, the record lands in --tokspec-reports
    records = list((tmp_path / "found").glob("*.json"))
    assert len(records) == 1, proc.stdout
    assert "seed: 7 (reproduce: TOKSPEC_SEED=7 TOKSPEC_BUDGET=0" in proc.stdout
    assert f"--inputs {records[0].resolve()}" in proc.stdout
