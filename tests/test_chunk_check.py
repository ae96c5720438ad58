"""tokspec chunk-check: the checks on hand-made chunkers, the CLI and plugin helper, the three
wired splitters, and the stored findings (corpora/chunking) replayed on the installed splitters."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tokspec import load_engine
from tokspec._paths import corpora_dir
from tokspec.app.chunk_check import ChunkClaims, check_chunker, check_text, fuzz_texts, search
from tokspec.app.chunkers import ChunkerError, load_chunker
from tokspec.app.cli import main

TOK = "tiktoken:cl100k_base"


def count(text: str) -> int:
    return len(load_engine(TOK).encode(text).ids or ())


def kinds(text: str, chunks: list[str], **claims: object) -> set[str]:
    c = ChunkClaims(TOK, **{"limit": 3, **claims})  # type: ignore[arg-type]
    return {v.kind for v in check_text(text, chunks, count, c)}


def test_each_violation_kind() -> None:
    assert kinds("hello world", ["hello", " world"]) == set()
    assert kinds("a b c d e f g", ["a b c d e f g"]) == {"over-limit"}
    # the half characters are not in the text, so the text is not reassembled either
    assert kinds("\uff41\uff41", ["\uff41\ufffd", "\ufffd"]) == {"split-inside-character", "lost-text"}
    assert kinds("hello world", ["hello", "planet"]) == {"not-in-text", "lost-text"}
    assert kinds("hello world", ["hello"]) == {"lost-text"}
    assert kinds("hello world", ["hello w", "o world"]) == {"overlap"}
    assert kinds("hello world", ["hello w", "o world"], overlap=True) == set()
    assert kinds("hello  world", ["hello", "world"]) == {"lost-text"}
    assert kinds("hello  world ", ["hello", "world"], trim=True) == set()
    assert kinds("hello world", ["hello", "world"], trim=True) == set()
    assert kinds("hello world", ["hel", "lo world"], maximal=True) == {"not-maximal"}
    assert kinds("hello world", ["hello", " world"], maximal=True, limit=1) == set()


def test_periodic_text_is_placed_by_search_not_first_occurrence() -> None:
    text = "a" + "\u0c02" * 10 + "   " + "\u0c02" * 2
    chunks = ["a\u0c02\u0c02\u0c02", "\u0c02" * 4, "\u0c02" * 4, "\u0c02" * 2, "\u0c02" * 2]
    assert kinds(text, chunks, limit=99, overlap=True, trim=True) == set()
    assert kinds("xxxxxxx", ["xxxx", "xxxx"], limit=99, overlap=True) == set()
    assert kinds("xxxxxxx", ["xxxx", "xxxx"], limit=99) == {"overlap", "lost-text"}


def good_chunker(text: str) -> list[str]:
    """Greedy characters under cl100k_base, 3 tokens: a correct (slow) chunker."""
    out, start = [], 0
    while start < len(text):
        end = start + 1
        while end < len(text) and count(text[start:end + 1]) <= 3:
            end += 1
        out.append(text[start:end])
        start = end
    return out


def bad_chunker(text: str) -> list[str]:
    return [text[i:i + 4] for i in range(0, len(text), 4)] + (["!"] if "x" in text else [])


def test_search_minimizes_and_stores(tmp_path: Path) -> None:
    claims = ChunkClaims(TOK, 3)
    checked, found = search(bad_chunker, "bad", count, claims, texts=fuzz_texts(0), seconds=30,
                            max_texts=50, folder=tmp_path, minimize_seconds=5)
    assert checked <= 50 and {f.kind for f in found} >= {"over-limit", "not-in-text"}
    stored = {json.loads(p.read_text())["kind"] for p in tmp_path.glob("*.json")}
    assert stored == {f.kind for f in found}
    assert all(len(f.text) <= f.original_length for f in found)
    assert next(f for f in found if f.kind == "not-in-text").text == "x"


def test_plugin_helper_passes_good_and_fails_bad() -> None:
    check_chunker(good_chunker, TOK, 3, maximal=True, max_texts=8)
    with pytest.raises(AssertionError, match="over-limit"):
        check_chunker(bad_chunker, TOK, 3, max_texts=20)
    with pytest.raises(ChunkerError, match="not a str"):
        check_chunker(lambda t: [1], TOK, 3, max_texts=1)  # type: ignore[list-item,return-value]


def test_cli_exit_codes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                        capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "my_chunkers.py").write_text(
        "def whole(text):\n    return [text]\n\ndef none(text):\n    return []\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    inputs = tmp_path / "in.jsonl"
    inputs.write_text(json.dumps({"text": "hi there"}) + "\n")
    base = ["chunk-check", "--tokenizer", TOK, "--limit", "5", "--inputs", str(inputs),
            "--report", str(tmp_path / "rep")]
    assert main([base[0], "my_chunkers:whole", *base[1:]]) == 0
    capsys.readouterr()
    assert main([base[0], "my_chunkers:none", *base[1:], "--json"]) == 1
    out = capsys.readouterr().out
    assert json.loads(out)["findings"][0]["kind"] == "lost-text"
    assert main([base[0], "my_chunkers:missing", *base[1:]]) == 2
    assert main([base[0], "nonsense", *base[1:]]) == 2
    assert main([base[0], "my_chunkers:whole", "--tokenizer", TOK, "--limit", "0"]) == 2
    script = tmp_path / "chunker_cmd.py"
    script.write_text("import json, sys\nt = json.load(sys.stdin)['text']\nprint(json.dumps({'chunks': [t]}))\n")
    assert main([base[0], f"cmd:{sys.executable} {script}", *base[1:]]) == 0


def test_semantic_text_splitter_keeps_its_promises() -> None:
    """No violation found on 60 fuzzed texts at 8 tokens, trim as it documents (with overlap too)."""
    for vocab in ("cl100k_base", "o200k_base"):
        for overlap in (0, 2):
            chunker = load_chunker("semantic-text-splitter", tokenizer=f"tiktoken:{vocab}", limit=8, overlap=overlap)
            enc = load_engine(f"tiktoken:{vocab}")
            claims = ChunkClaims(f"tiktoken:{vocab}", 8, overlap=overlap > 0, trim=True)
            _, found = search(chunker, "sts", lambda s: len(enc.encode(s).ids or ()), claims,
                              texts=fuzz_texts(1), seconds=60, max_texts=60)
            assert found == [], [(f.kind, f.text, f.chunks) for f in found]


def _stored() -> list[str]:
    return sorted(p.name for p in (corpora_dir() / "chunking").glob("*.json"))


@pytest.mark.parametrize("file", _stored())
def test_regression_stored_chunker_findings(file: str, floor_require: Any) -> None:
    """Each finding reproduces with the installed splitter (the versions in constraints/ci.txt)."""
    rec = json.loads((corpora_dir() / "chunking" / file).read_text(encoding="utf-8"))
    if rec["chunker"].startswith("chonkie"):
        floor_require("chonkie")  # chonkie >= 1.7 needs numpy >= 2: not in tox -e lowest
    claims = ChunkClaims(**rec["claims"])
    chunker = load_chunker(rec["chunker"], tokenizer=claims.tokenizer, limit=claims.limit)
    enc = load_engine(claims.tokenizer)
    if rec["kind"] == "error":
        with pytest.raises(ValueError, match="disallowed special token"):
            chunker(rec["text"])
        return
    chunks = chunker(rec["text"])
    assert chunks == rec["chunks"]
    got = check_text(rec["text"], chunks, lambda s: len(enc.encode(s).ids or ()), claims)
    assert rec["kind"] in {v.kind for v in got}
    if "note" in rec:  # over-limit by re-encoding alone, no half character involved
        assert any(v.kind == "over-limit" and "\ufffd" not in v.detail for v in got)


def test_plugin_fixture_checks_a_chunker(tokspec: object) -> None:
    tokspec.check_chunker(good_chunker, TOK, 3, max_texts=5)  # type: ignore[attr-defined]
    with pytest.raises(AssertionError, match="not-in-text"):
        tokspec.check_chunker(bad_chunker, TOK, 3, max_texts=20)  # type: ignore[attr-defined]
