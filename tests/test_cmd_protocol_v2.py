"""``cmd:`` protocol version 2 (tokspec.engines._cmd_v2): decode requests, special tokens, n_vocab;
version 1 engines keep working without decode."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

from tokspec import Encoder, Encoding, EngineFault, EngineInfo, load_engine
from tokspec.decoding import decode_of, has_decode, special_ids, vocab_size
from tokspec.diff import compare

SCRIPT = r'''
import json, sys
hello = json.loads(sys.argv[1])
print(json.dumps(hello), flush=True)
for line in sys.stdin:
    r = json.loads(line)
    if "decode" in r:
        if -1 in r["decode"]:
            print(json.dumps({"id": r["id"], "error": "bad id -1"}), flush=True)
            continue
        text = "".join(chr(i) for i in r["decode"] if chr(i) != DROP)
        print(json.dumps({"id": r["id"], "text": text}), flush=True)
        continue
    t = r["text"]
    print(json.dumps({"id": r["id"], "ids": [ord(c) for c in t], "offsets": [[i, i + 1] for i in range(len(t))]}), flush=True)
'''


def _engine(tmp_path: Path, handshake: str, drop: str = "") -> str:
    path = tmp_path / f"v2_{abs(hash((handshake, drop)))}.py"
    path.write_text(SCRIPT.replace("DROP", repr(drop)), encoding="utf-8")
    return "cmd:" + shlex.join([sys.executable, str(path), handshake])


class _Chars(Encoder):
    def __init__(self) -> None:
        self.info = EngineInfo("chars", "tokenizer", "toy", "0", None)

    def _encode(self, text: str) -> Encoding:
        return Encoding.of([ord(c) for c in text], [(i, i + 1) for i in range(len(text))])

    def decode(self, ids: list[int]) -> str:
        return "".join(map(chr, ids))


V2 = '{"tokspec": 2, "name": "chars", "version": "2", "decode": true, "special_tokens": {"<eot>": 57344}, "n_vocab": 1000}'


def test_version_1_engine_has_no_decode_and_still_compares(tmp_path: Path) -> None:
    engine = load_engine(_engine(tmp_path, '{"tokspec": 1, "name": "chars", "version": "1"}', drop="x"))
    try:
        assert not has_decode(engine) and special_ids(engine) == {} and vocab_size(engine) is None
        assert compare(engine, _Chars(), "axb").agree  # its decode is never asked for
    finally:
        engine.close()


def test_version_2_declares_decode_specials_and_vocab(tmp_path: Path) -> None:
    deep = tmp_path / ("a-long-folder-name-" * 12)  # the engine's error must survive a long command line
    deep.mkdir()
    engine = load_engine(_engine(deep, V2))
    try:
        assert has_decode(engine) and engine.decode([104, 105]) == "hi"  # type: ignore[attr-defined]
        assert special_ids(engine) == {57344: "<eot>"} and vocab_size(engine) == 1000
        assert compare(engine, _Chars(), "a🙂x").agree
        assert decode_of(engine, [-1]).error is not None and "bad id -1" in str(decode_of(engine, [-1]).error)
        assert engine.decode([65]) == "A"  # type: ignore[attr-defined] # still up after an error reply
    finally:
        engine.close()


def test_version_2_decode_bug_is_a_decode_finding(tmp_path: Path) -> None:
    engine = load_engine(_engine(tmp_path, V2, drop="x"))
    try:
        c = compare(engine, _Chars(), "abxcd")
        assert c.classification == "decode differs" and c.decode is not None and c.decode.ids == (120,)
        assert c.decode.a.text == "" and c.decode.b.text == "x"
    finally:
        engine.close()


@pytest.mark.parametrize("bad", ['{"tokspec": 3}', '{"tokspec": true}',
                                 '{"tokspec": 2, "special_tokens": {"<x>": -1}}',
                                 '{"tokspec": 2, "special_tokens": ["<x>"]}', '{"tokspec": 2, "n_vocab": 0}',
                                 '{"tokspec": 2, "n_vocab": "10"}'])
def test_malformed_handshakes_are_refused(tmp_path: Path, bad: str) -> None:
    with pytest.raises(EngineFault):
        load_engine(_engine(tmp_path, bad))


SPECIAL_SCRIPT = r'''
import json, sys
print(json.dumps({"tokspec": 2, "name": "chars", "version": "2", "special_tokens": {"<eot>": 57344},
                  "special_mode": True}), flush=True)
for line in sys.stdin:
    r = json.loads(line)
    t = r["text"]
    ids, offsets, i = [], [], 0
    while i < len(t):
        if r.get("special") and t.startswith("<eot>", i):
            ids.append(57344); offsets.append([i, i + 5]); i += 5
        else:
            ids.append(ord(t[i])); offsets.append([i, i + 1]); i += 1
    if r.get("post_process"):
        ids.append(1); offsets.append([len(t), len(t)])
    print(json.dumps({"id": r["id"], "ids": ids, "offsets": offsets}), flush=True)
'''


def test_version_2_special_mode_is_asked_for_by_special_engines(tmp_path: Path) -> None:
    path = tmp_path / "special_v2.py"
    path.write_text(SPECIAL_SCRIPT, encoding="utf-8")
    name = "cmd:" + shlex.join([sys.executable, str(path)])
    text_mode, special, post = load_engine(name), load_engine("special:" + name), load_engine("special-post:" + name)
    try:
        assert list(text_mode.encode("a<eot>").ids) == [97, 60, 101, 111, 116, 62]  # text mode: text
        got = special.encode("a<eot>b")
        assert list(got.ids) == [97, 57344, 98] and list(got.offsets) == [(0, 1), (1, 6), (6, 7)]
        got = post.encode("a<eot>")
        assert list(got.ids) == [97, 57344, 1] and list(got.offsets) == [(0, 1), (1, 6), (6, 6)]
    finally:
        for engine in (text_mode, special, post):
            engine.close()


@pytest.mark.parametrize("value", ['"yes"', "1"])
def test_a_malformed_special_mode_declaration_is_a_setup_fault(tmp_path: Path, value: str) -> None:
    handshake = '{"tokspec": 2, "name": "chars", "version": "2", "special_mode": ' + value + '}'
    with pytest.raises(EngineFault, match="special_mode=.* must be true or false"):
        load_engine(_engine(tmp_path, handshake))


def test_a_cmd_engine_without_special_mode_has_none(tmp_path: Path) -> None:
    with pytest.raises(Exception, match="has no special mode"):
        load_engine("special:" + _engine(tmp_path, V2))
