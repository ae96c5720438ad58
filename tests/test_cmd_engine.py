"""The ``cmd:`` provider: protocol, fault isolation (crash, hang, malformed reply), restarts.

The engine program is a stdlib-only script written to tmp_path (starts in ~30 ms): one token per
character, id = code point; flags make it misbehave on inputs containing a given character.
"""

from __future__ import annotations

import shlex
import sys
import time
from pathlib import Path

import pytest

from tokspec import EngineFault, UnknownEngineError, load_engine
from tokspec.engines.cmd import CmdEngine, CmdEngineFault

TOY = r'''
import json, os, sys, time
args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
if "--no-handshake" not in sys.argv:
    print(json.dumps({"tokspec": 1, "name": "toy", "version": "9.9", "kind": args.get("--kind", "tokenizer"),
                      "vocab_sha256": "ab" * 32}), flush=True)
for line in sys.stdin:
    req = json.loads(line)
    text, rid = req["text"], req["id"]
    if args.get("--crash-on", "\0\0") in text:
        print("dying on purpose", file=sys.stderr, flush=True)
        os._exit(7)
    if args.get("--hang-on", "\0\0") in text:
        time.sleep(3600)
    if args.get("--error-on", "\0\0") in text:
        print(json.dumps({"id": rid, "error": "cannot do that"}), flush=True)
        continue
    if args.get("--garbage-on", "\0\0") in text:
        print("this is not json", flush=True)
        continue
    if args.get("--bad-offsets-on", "\0\0") in text:
        print(json.dumps({"id": rid, "ids": [1], "offsets": [[0, "x"]]}), flush=True)
        continue
    if args.get("--wrong-id-on", "\0\0") in text:
        rid += 1
    ids = None if args.get("--kind") == "pretokenizer" else [ord(c) for c in text]
    print(json.dumps({"id": rid, "ids": ids, "offsets": [[i, i + 1] for i in range(len(text))]}), flush=True)
'''


@pytest.fixture(scope="module")
def toy(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("cmd") / "toy_engine.py"
    path.write_text(TOY, encoding="utf-8")
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(path))}"


def _load(toy: str, flags: str = "", options: str = "[timeout=5]") -> CmdEngine:
    engine = load_engine(f"cmd:{options} {toy} {flags}".strip())
    assert isinstance(engine, CmdEngine)
    return engine


def _expected(text: str) -> tuple[tuple[int, ...], tuple[tuple[int, int], ...]]:
    return tuple(ord(c) for c in text), tuple((i, i + 1) for i in range(len(text)))


def test_roundtrip_of_awkward_text_and_handshake(toy: str) -> None:
    engine = _load(toy)
    try:
        assert engine.info.library == "toy" and engine.info.library_version == "9.9"
        assert engine.info.vocab_sha256 == "ab" * 32 and engine.info.kind == "tokenizer"
        for text in ["a", "line\nbreak\r\n", "\u2028\u2029\x00\x1b", "é🙂👩‍💻", '"quote" \\ back', "x" * 200_000]:
            enc = engine.encode(text)
            assert (enc.ids, enc.offsets) == _expected(text)
        assert engine.encode("") == load_engine(f"cmd:{toy}").encode("")
    finally:
        engine.close()


def test_error_reply_is_a_fault_and_engine_stays_up(toy: str) -> None:
    engine = _load(toy, "--error-on E")
    try:
        with pytest.raises(CmdEngineFault, match="cannot do that") as exc:
            engine.encode("xEx")
        assert exc.value.text == "xEx"
        assert engine.encode("ok").ids == _expected("ok")[0]
        assert engine.restarts == 0
    finally:
        engine.close()


@pytest.mark.parametrize(("flags", "bad", "message"), [
    ("--crash-on C", "aCb", r"crashed .*exit status 7.*stderr: dying on purpose"),
    ("--garbage-on G", "G", "not a JSON object"),
    ("--bad-offsets-on O", "O", "malformed reply"),
    ("--wrong-id-on W", "W", "replied with id="),
])
def test_crash_and_malformed_reply_are_isolated(toy: str, flags: str, bad: str, message: str) -> None:
    engine = _load(toy, flags)
    try:
        with pytest.raises(CmdEngineFault, match=message) as exc:
            engine.encode(bad)
        assert exc.value.text == bad and repr(bad) in str(exc.value)
        assert engine.encode("fine").ids == _expected("fine")[0]  # restarted
        assert engine.restarts == 1
    finally:
        engine.close()


def test_hang_times_out_and_process_is_replaced(toy: str) -> None:
    engine = _load(toy, "--hang-on H", options="[timeout=0.5]")
    try:
        old_pid = engine._proc.proc.pid if engine._proc else None
        start = time.monotonic()
        with pytest.raises(CmdEngineFault, match=r"hung \(no reply within 0.5s\)"):
            engine.encode("aHa")
        assert time.monotonic() - start < 3.0
        assert engine.encode("ok").ids == _expected("ok")[0]
        assert engine._proc is not None and engine._proc.proc.pid != old_pid
    finally:
        engine.close()


def test_close_stops_the_process(toy: str) -> None:
    engine = _load(toy)
    assert engine._proc is not None
    proc = engine._proc.proc
    engine.close()
    assert proc.poll() is not None
    engine.close()  # idempotent


def test_pretokenizer_kind(toy: str) -> None:
    engine = _load(toy, "--kind pretokenizer")
    try:
        enc = engine.encode("ab")
        assert engine.info.kind == "pretokenizer" and enc.ids is None and enc.offsets == ((0, 1), (1, 2))
    finally:
        engine.close()


def test_setup_errors(toy: str) -> None:
    with pytest.raises(UnknownEngineError, match="cannot start"):
        load_engine("cmd:/nonexistent/engine-program")
    with pytest.raises(UnknownEngineError, match="no command"):
        load_engine("cmd:")
    with pytest.raises(UnknownEngineError, match="option 'speed' unknown"):
        load_engine(f"cmd:[speed=1] {toy}")
    with pytest.raises(UnknownEngineError, match="not a number"):
        load_engine(f"cmd:[timeout=soon] {toy}")
    with pytest.raises(EngineFault, match="no handshake line within 0.5s"):
        load_engine(f"cmd:[startup=0.5] {toy} --no-handshake")
    with pytest.raises(EngineFault, match="exited before its handshake"):
        load_engine(f"cmd:{shlex.quote(sys.executable)} -c pass")


def test_command_is_not_run_through_a_shell(toy: str, tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    # With a shell, `; touch marker` would run; with shlex + exec it is two harmless argv items.
    engine = _load(toy, f"--unused '; touch {marker}'")
    try:
        assert engine.encode("$(touch x)").ids == _expected("$(touch x)")[0]
    finally:
        engine.close()
    assert not marker.exists()
