"""``tokspec diff``: inputs files, exit codes, --json summary, records, faults, the issue's done criteria.

Runs the subcommand in-process through ``tokspec.app.cli.main`` (the real entry point) and
``tokspec.app.cli_diff.main``; the done criteria use a small corpus file (the large one is measured by hand).
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from tokspec import load_engine
from tokspec.app.cli import main as tokspec_main
from tokspec.app.inputs import InputFileError, read_inputs
from tokspec.corpus import build_corpus, write_inputs
from tokspec.diff import compare

TOY_MODULE = '''
from tokspec import Encoder, Encoding, EngineInfo

class Chars(Encoder):
    def __init__(self, name, kind="tokenizer", fail_on=None):
        self.info = EngineInfo(name, kind, "toy", "0", None)
        self.fail_on = fail_on

    def _encode(self, text):
        if self.fail_on and self.fail_on in text:
            raise RuntimeError("toy engine fails on " + self.fail_on)
        ids = None if self.info.kind == "pretokenizer" else [ord(c) for c in text]
        return Encoding.of(ids, [(i, i + 1) for i in range(len(text))])

chars = Chars("tokspec_toy_g:chars")
chars2 = Chars("tokspec_toy_g:chars2")
pre = Chars("tokspec_toy_g:pre", kind="pretokenizer")
flaky = Chars("tokspec_toy_g:flaky", fail_on="!")
'''


@pytest.fixture
def toy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """An importable module ``tokspec_toy_g`` of char-level engines (module:attr names)."""
    (tmp_path / "tokspec_toy_g.py").write_text(TOY_MODULE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("tokspec_toy_g", None)
    return "tokspec_toy_g"


@pytest.fixture(scope="module")
def small_corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("inputs") / "small.jsonl"
    write_inputs(path, build_corpus(seed=0, size="small"))
    return path


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = tokspec_main(["diff", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# ----------------------------------------------------------------------------- inputs files


def test_input_formats(tmp_path: Path) -> None:
    jsonl = tmp_path / "a.jsonl"
    jsonl.write_text('{"text": "x\\ny"}\n\n{"text": ""}\n', encoding="utf-8")
    assert read_inputs(jsonl) == [("line 1", "x\ny"), ("line 3", "")]
    sniffed = tmp_path / "a.txt"
    sniffed.write_text('{"text": "a"}\n{"text": "b"}\n', encoding="utf-8")
    assert [t for _, t in read_inputs(sniffed)] == ["a", "b"]
    plain = tmp_path / "p.txt"
    plain.write_bytes("one\r\n\ntwo é\n".encode())
    assert [t for _, t in read_inputs(plain)] == ["one\r", "", "two é"]
    record = tmp_path / "r.json"
    record.write_text(json.dumps({"text": "\u2028z", "other": 1}), encoding="utf-8")
    assert read_inputs(record) == [("record", "\u2028z")]


@pytest.mark.parametrize(("name", "content", "message"), [
    ("bad.txt", b"ok\nab\xffcd\n", r"not valid UTF-8: byte offset 5 \(line 2\)"),
    ("bad.jsonl", b'{"text": "a"}\n{"txt": "b"}\n', r"bad.jsonl:line 2: expected a JSON object"),
    ("bad2.jsonl", b'{"text": "a"}\n{"text": \n', r"bad2.jsonl:line 2: not valid JSON"),
    ("sur.jsonl", b'{"text": "a\\ud800b"}\n', r"sur.jsonl:line 1: .*lone surrogate"),
    ("bad.json", b"[1, 2]", r"bad.json:record: expected a JSON object"),
])
def test_input_errors_name_file_and_place(tmp_path: Path, name: str, content: bytes, message: str) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(InputFileError, match=message):
        read_inputs(path)


def test_setup_errors_exit_2_with_one_line(tmp_path: Path, toy: str,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"\xc3(")
    cases = [
        (["tiktoken:cl100k_base", "nosuchprefix", "--inputs", str(bad)], "unknown engine"),
        ([f"{toy}:chars", f"{toy}:chars", "--inputs", str(tmp_path / "missing.jsonl")], "cannot read"),
        ([f"{toy}:chars", f"{toy}:chars", "--inputs", str(bad)], "byte offset 0"),
        ([f"{toy}:chars", f"{toy}:pre", "--inputs", str(bad)], "a pretokenizer"),
        ([f"{toy}:chars", f"{toy}:chars", "--fuzz", "--time", "0"], "--time"),
    ]
    for argv, message in cases:
        code, out, err = _run(capsys, *argv)
        assert code == 2, (argv, err)
        assert message in err and err.count("\n") == 1 and "Traceback" not in err
        assert out == ""


# ----------------------------------------------------------------------------- runs


def test_agreeing_toys_exit_0(tmp_path: Path, toy: str, capsys: pytest.CaptureFixture[str]) -> None:
    inputs = tmp_path / "in.txt"
    inputs.write_text("abc\n\u00e9\U0001F600\n\n", encoding="utf-8")
    code, out, _ = _run(capsys, f"{toy}:chars", f"{toy}:chars2", "--inputs", str(inputs), "--json",
                        "--report", str(tmp_path / "rep"))
    summary = json.loads(out)
    assert code == 0
    assert (summary["inputs"], summary["agreed"], summary["disagreed"], summary["faults"]) == (3, 3, 0, 0)
    assert summary["counterexamples"] == [] and not (tmp_path / "rep").exists()


def test_engine_fault_is_reported_and_run_continues(tmp_path: Path, toy: str,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    inputs = tmp_path / "in.jsonl"
    write_inputs(inputs, ["ok", "bang!", "fine", "again!!"])
    code, out, _ = _run(capsys, f"{toy}:chars", f"{toy}:flaky", "--inputs", str(inputs), "--json",
                        "--report", str(tmp_path / "rep"))
    summary = json.loads(out)
    assert code == 1
    assert (summary["inputs"], summary["agreed"], summary["disagreed"], summary["faults"]) == (4, 2, 2, 2)
    records = [json.loads(Path(p).read_text(encoding="utf-8")) for p in summary["counterexamples"]]
    # one record per cause (issue 26): the same fault message once the input is cut out of it
    messages = {r["outputs"]["b"]["fault"].replace(repr(r["text"]), "") for r in records}
    assert {r["text"] for r in records} <= {"bang!", "again!!"} and len(records) == len(messages)
    assert sum(c["findings"] for c in summary["causes"]) == 2
    assert all(r["classification"] == "engine fault" for r in records)
    assert all("toy engine fails on !" in r["outputs"]["b"]["fault"] for r in records)


def test_done_criterion_tiktoken_vs_bpe_openai_agree(small_corpus: Path, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "tiktoken:cl100k_base", "bpe-openai:cl100k_base",
                          "--inputs", str(small_corpus), "--report", str(tmp_path / "rep"))
    n = len(read_inputs(small_corpus))
    assert code == 0, out[-2000:]
    assert f"{n} inputs, {n} agreed, 0 disagreed" in out


def test_done_criterion_cl100k_vs_o200k_disagree(small_corpus: Path, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    report = tmp_path / "rep"
    code, out, _ = _run(capsys, "tiktoken:cl100k_base", "tiktoken:o200k_base",
                        "--inputs", str(small_corpus), "--report", str(report), "--json")
    assert code == 1
    summary = json.loads(out)  # exactly one JSON object on stdout
    assert summary["disagreed"] > 0 and summary["agreed"] + summary["disagreed"] == summary["inputs"]
    assert len(summary["counterexamples"]) == len({p for p in summary["counterexamples"]})
    a, b = load_engine("tiktoken:cl100k_base"), load_engine("tiktoken:o200k_base")
    for path in summary["counterexamples"][:25]:
        record = json.loads(Path(path).read_text(encoding="utf-8"))
        text = record["text"]
        assert bytes.fromhex(record["text_utf8_hex"]).decode("utf-8") == text
        assert [e["vocab_sha256"] for e in record["engines"]] == [a.info.vocab_sha256, b.info.vocab_sha256]
        ea, eb = a.encode(text), b.encode(text)
        assert record["outputs"]["a"]["ids"] == list(ea.ids or ())
        assert record["outputs"]["b"]["offsets"] == [list(o) for o in eb.offsets]
        k = record["first_divergence"]["index"]
        assert (ea.ids[:k], ea.offsets[:k]) == (eb.ids[:k], eb.offsets[:k])  # type: ignore[index]
        assert k == min(len(ea), len(eb)) or (ea.ids[k], ea.offsets[k]) != (eb.ids[k], eb.offsets[k])  # type: ignore[index]
        assert record["classification"] != "engine fault"


def test_readable_output_and_reproduce_command(small_corpus: Path, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    report = tmp_path / "rep"
    code, out, _ = _run(capsys, "tiktoken:cl100k_base", "tiktoken:o200k_base",
                        "--inputs", str(small_corpus), "--report", str(report), "--show", "2")
    assert code == 1
    assert out.count("first divergence at token #") == 2
    assert "A tiktoken:cl100k_base" in out and "B tiktoken:o200k_base" in out and "> #" in out
    assert "more counterexample records not shown" in out
    record = json.loads(next(report.iterdir()).read_text(encoding="utf-8"))
    argv = shlex.split(record["reproduce"])
    assert argv[:2] == ["tokspec", "diff"]
    code, out, _ = _run(capsys, *argv[2:], "--json", "--report", str(tmp_path / "again"))
    assert code == 1 and json.loads(out)["inputs"] == 1


def test_minimize_in_file_mode(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    inputs = tmp_path / "in.jsonl"
    write_inputs(inputs, ["Hello there, it's a test of contractions: we'll see."])
    code, out, _ = _run(capsys, "tiktoken:cl100k_base", "tiktoken:o200k_base", "--inputs", str(inputs),
                        "--minimize", "--json", "--report", str(tmp_path / "rep"))
    assert code == 1
    record = json.loads(Path(json.loads(out)["counterexamples"][0]).read_text(encoding="utf-8"))
    small, kind = record["text"], record["classification"]
    assert 0 < len(small) < 20
    # 1-minimal: dropping any character loses this kind of disagreement.
    a, b = load_engine("tiktoken:cl100k_base"), load_engine("tiktoken:o200k_base")
    assert compare(a, b, small).classification == kind
    for i in range(len(small)):
        assert compare(a, b, small[:i] + small[i + 1:]).classification != kind


def test_standalone_module_main(tmp_path: Path, toy: str) -> None:
    from tokspec.app.cli_diff import main

    inputs = tmp_path / "in.txt"
    inputs.write_text("a\n", encoding="utf-8")
    assert main([f"{toy}:chars", f"{toy}:chars2", "--inputs", str(inputs), "--quiet"]) == 0


def test_engine_from_an_entry_point(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    """A package declaring ``[project.entry-points."tokspec.engines"] toyg = ...`` gives ``toyg:ARG``."""
    (tmp_path / "tokspec_toy_ep.py").write_text(TOY_MODULE + '''
def make(arg):
    return Chars("toyg:" + arg, fail_on=arg or None)
''', encoding="utf-8")
    dist = tmp_path / "tokspec_toy_ep-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: tokspec-toy-ep\nVersion: 0.1\n", encoding="utf-8")
    (dist / "entry_points.txt").write_text("[tokspec.engines]\ntoyg = tokspec_toy_ep:make\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    engine = load_engine("toyg:Q")
    assert engine.info.name == "toyg:Q" and engine.encode("ab").ids == (97, 98)
    inputs = tmp_path / "in.txt"
    inputs.write_text("abc\nxQx\n", encoding="utf-8")
    code, out, _ = _run(capsys, "toyg:", "toyg:Q", "--inputs", str(inputs), "--json",
                        "--report", str(tmp_path / "rep"))
    summary = json.loads(out)
    assert code == 1 and (summary["agreed"], summary["faults"]) == (1, 1)


def test_fuzz_mode_shrinks_saves_corpus_and_summarizes(tmp_path: Path, toy: str,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    corpus = tmp_path / "corpus"
    code, out, _ = _run(capsys, f"{toy}:chars", f"{toy}:flaky", "--fuzz", "--time", "20", "--seed", "3",
                        "--max-findings", "1", "--json", "--quiet", "--report", str(tmp_path / "rep"),
                        "--save-corpus", str(corpus))
    summary = json.loads(out)
    assert code == 1 and summary["mode"] == "fuzz" and summary["faults"] >= 1
    assert summary["generators"] == ["tokspec.corpus generators", "tokspec.fuzz.strategies",
                                     "special-token strings", "pattern dictionary + Unicode drift"]
    saved = [json.loads(p.read_text(encoding="utf-8")) for p in corpus.iterdir()]
    assert [r["text"] for r in saved] == ["!"]  # the toy engine fails on "!": minimal input
    assert [Path(p).name for p in summary["counterexamples"]] == [p.name for p in corpus.iterdir()]
