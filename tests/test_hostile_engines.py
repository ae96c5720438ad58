"""Engines are hostile data (issue 11, items 3, 4, 5 and the stdout flood of item 8).

``examples/hostile_cmd_engine.py`` puts terminal escapes, a bidi override, C1 controls and lone
surrogates in its handshake, pieces, error replies and stderr, and floods its stdout on request;
Python engines below raise messages with lone surrogates, call ``sys.exit`` or raise other
BaseExceptions. tokspec runs as a real subprocess (a strict UTF-8 stdout, like a terminal's) and
must: finish, keep its exit codes, print nothing unsafe, and store the exact data in records.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tokspec._escape import UNSAFE, dumps, escape

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
HOSTILE_ENGINE = f"{shlex.quote(sys.executable)} {shlex.quote(str(EXAMPLES / 'hostile_cmd_engine.py'))}"
sys.path.insert(0, str(EXAMPLES))
from hostile_cmd_engine import HOSTILE  # noqa: E402

#: What must never reach a terminal raw (newlines and tabs are layout).
RAW_DANGER = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")

PY_ENGINES = '''
from tokspec import Encoder, Encoding, EngineInfo

class Weird(BaseException):
    pass

class Chars(Encoder):
    def __init__(self, name, how=None):
        self.info = EngineInfo(name, "tokenizer", "toy", "0", None)
        self.how = how

    def _encode(self, text):
        if "!" in text:
            if self.how == "surrogate":
                raise RuntimeError("bad \\ud800 \\x1b[2J \\u202e message")
            if self.how == "exit":
                raise SystemExit(7)
            if self.how == "base":
                raise Weird("not an Exception")
        return Encoding.of([ord(c) for c in text], [(i, i + 1) for i in range(len(text))])

    def token_piece(self, token_id):
        return chr(token_id)

chars = Chars("hostile_py:chars")
surrogate = Chars("hostile_py:surrogate", "surrogate")
exits = Chars("hostile_py:exits", "exit")
base = Chars("hostile_py:base", "base")

def exits_on_load():
    raise SystemExit(5)
'''


def _tokspec(*argv: str, cwd: Path, env_path: Path | None = None) -> subprocess.CompletedProcess[bytes]:
    env = None
    if env_path is not None:
        import os
        env = dict(os.environ, PYTHONPATH=str(env_path))
    return subprocess.run([sys.executable, "-m", "tokspec", *argv], cwd=cwd, capture_output=True,
                          timeout=120, env=env)


def _safe_output(raw: bytes) -> str:
    text = raw.decode("utf-8")  # strict: a lone surrogate could not have been written anyway
    bad = RAW_DANGER.findall(text)
    assert not bad, f"unescaped characters reached the terminal: {bad!r}"
    assert "Traceback" not in text
    return text


def test_escape_and_dumps_contract() -> None:
    nasty = "a\x1b[2J\x00\x7f\x85\u202e\u2066\udfff\ud800\u2028\n\t\\"  # low, high: no pair
    shown = escape(nasty)
    assert not UNSAFE.search(shown) and escape(shown) == shown  # safe and idempotent
    shown.encode("utf-8")
    value = {"k" + nasty: [nasty, 1, None]}
    text = dumps(value, indent=1)
    assert json.loads(text) == value  # exact data back, lone surrogates included
    text.encode("utf-8")
    assert not RAW_DANGER.search(text)


def test_hostile_cmd_engine_everything_escaped_and_recorded(tmp_path: Path) -> None:
    inputs = tmp_path / "in.txt"
    inputs.write_text("ok\naD\nxE\nyC\nzF\nfine\n", encoding="utf-8")
    run = _tokspec("diff", f"cmd:[timeout=20] {HOSTILE_ENGINE}", f"cmd:[timeout=20] {HOSTILE_ENGINE} --calm",
                   "--inputs", str(inputs), "--report", "rep", cwd=tmp_path)
    out, err = _safe_output(run.stdout), _safe_output(run.stderr)
    assert run.returncode == 1, err
    assert "6 inputs, 2 agreed, 4 disagreed (3 engine faults)" in out
    assert "flooded its stdout" in out and "hung" not in out  # a flood is named, not a hang
    assert "screen cleared" in out and "exit status 3" in out
    assert escape(HOSTILE) in out  # stderr tail and error message, shown escaped
    records = sorted((tmp_path / "rep").glob("*.json"))
    assert len(records) == 4
    for path in records:
        raw = path.read_bytes()
        assert not RAW_DANGER.search(raw.decode("utf-8").replace("\n", ""))
        record = json.loads(raw)
        assert record["engines"][0]["library"] == "hostile " + HOSTILE  # the exact data
        if record["text"] == "aD":
            pieces = [t["piece"] for t in record["windows"]["a"]]
            assert pieces[0] == "\ud800\x1b[1m\x85" and pieces[1] == "\ud800\x1b[1m\u202e"
    summary = _tokspec("diff", f"cmd:[timeout=20] {HOSTILE_ENGINE}", f"cmd:[timeout=20] {HOSTILE_ENGINE} --calm",
                       "--inputs", str(inputs), "--report", "rep", "--json", cwd=tmp_path)
    assert summary.returncode == 1
    parsed = json.loads(_safe_output(summary.stdout))
    assert parsed["engines"][0]["library"] == "hostile " + HOSTILE and parsed["faults"] == 3


@pytest.mark.parametrize("engine, fault", [
    ("hostile_py:surrogate", "RuntimeError: bad \\ud800 \\x1b[2J \\u202e message"),
    ("hostile_py:exits", "SystemExit: 7"),
    ("hostile_py:base", "Weird: not an Exception"),
])
def test_python_engine_faults_are_findings_and_never_leak_an_exit_status(
        tmp_path: Path, engine: str, fault: str) -> None:
    (tmp_path / "hostile_py.py").write_text(PY_ENGINES, encoding="utf-8")
    inputs = tmp_path / "in.txt"
    inputs.write_text("ok\nbang!\nfine\n", encoding="utf-8")
    run = _tokspec("diff", "hostile_py:chars", engine, "--inputs", str(inputs), "--report", "rep",
                   cwd=tmp_path, env_path=tmp_path)
    out = _safe_output(run.stdout)
    _safe_output(run.stderr)
    assert run.returncode == 1
    assert "3 inputs, 2 agreed, 1 disagreed (1 engine faults)" in out and fault in out
    merge = _tokspec("merge-check", engine, "--strategy", "lopt", "--inputs", str(inputs), "--chunk-len", "2",
                     "--report", "mrep", "--minimize-seconds", "2", cwd=tmp_path, env_path=tmp_path)
    out = _safe_output(merge.stdout)
    _safe_output(merge.stderr)
    assert merge.returncode == 1, out
    assert "3 inputs, 2 agreed, 1 disagreed (1 engine faults)" in out
    reports = sorted((tmp_path / "mrep").glob("*.json"))
    assert len(reports) == 1 and sorted((tmp_path / "mrep").glob("*.html"))
    report = json.loads(reports[0].read_text(encoding="utf-8"))
    assert report["classification"] == "engine fault" and report["text"] == "!"  # minimized
    assert report["fault"] == fault and str(reports[0]) in str(tmp_path / out.split(" -> ")[1].split()[0])


def test_engine_exiting_while_loading_is_a_setup_error(tmp_path: Path) -> None:
    (tmp_path / "hostile_py.py").write_text(PY_ENGINES, encoding="utf-8")
    for argv in (["diff", "hostile_py:chars", "hostile_py:exits_on_load", "--inputs", "x"],
                 ["merge-check", "hostile_py:exits_on_load"]):
        run = _tokspec(*argv, cwd=tmp_path, env_path=tmp_path)
        err = _safe_output(run.stderr)
        assert run.returncode == 2 and "SystemExit" in err and len(err.strip().splitlines()) == 1
