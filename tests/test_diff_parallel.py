"""``tokspec diff --workers N`` / ``--scheduler``: same output as one worker, bounded memory, shards.

Identity is checked on everything a user sees: stdout (text and ``--json``, minus the timing field),
the record files byte for byte, and the exit status, on inputs spanning many batches with
disagreements and engine faults spread through them.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tokspec.app.cli import main as tokspec_main
from tokspec.app.inputs import batches, iter_inputs, read_inputs
from tokspec.corpus import build_corpus, write_inputs

TOY = '''
from tokspec import Encoder, Encoding, EngineInfo

class Chars(Encoder):
    """One token per character; ``odd`` engines give 'z' another id and fail on '!'."""
    def __init__(self, name, odd=False, whole=False):
        self.info = EngineInfo(name, "tokenizer", "toy", "0", None)
        self.odd, self.whole = odd, whole

    def _encode(self, text):
        if self.whole:
            return Encoding.of([len(text) % 97] if text else [], [(0, len(text))] if text else [])
        if self.odd and "!" in text:
            raise RuntimeError("toy engine fails on !")
        ids = [ord(c) + (self.odd and c == "z") for c in text]
        return Encoding.of(ids, [(i, i + 1) for i in range(len(text))])

chars = Chars("tokspec_toy_p:chars")
odd = Chars("tokspec_toy_p:odd", odd=True)
whole = Chars("tokspec_toy_p:whole", whole=True)
'''


@pytest.fixture
def toy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    (tmp_path / "tokspec_toy_p.py").write_text(TOY, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    sys.modules.pop("tokspec_toy_p", None)
    return "tokspec_toy_p"


def _inputs(path: Path, n: int = 400) -> Path:
    """``n`` texts (several batches): corpus texts, some with a 'z' or a '!' planted at varied places."""
    corpus = build_corpus(seed=5, size="small")
    texts = []
    for i in range(n):
        t = corpus[i % len(corpus)][: 40 + i % 90]
        texts.append(t + ("z" if i % 7 == 0 else "") + ("!" if i % 31 == 0 else ""))
    write_inputs(path, texts)
    return path


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = tokspec_main(["diff", *argv])
    return code, capsys.readouterr().out


def _timeless(out: str) -> str:
    """Stdout without the run's duration (the one thing allowed to differ)."""
    out = re.sub(r'"seconds": [0-9.]+', '"seconds": 0', out)
    return re.sub(r" in [0-9.]+s;", " in Ts;", out)


def _records(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def _identical_runs(capsys: pytest.CaptureFixture[str], tmp_path: Path, a: str, b: str, inputs: Path,
                    variants: list[list[str]], extra: tuple[str, ...] = ()) -> list[tuple[int, str]]:
    """Run each variant (plus the 1-worker baseline first) into its own report folder; check identity."""
    seen = []
    for k, variant in enumerate([["--workers", "1"], *variants]):
        report = tmp_path / "rep"  # same folder name: printed record paths must match too
        if report.exists():
            for p in report.iterdir():
                p.unlink()
            report.rmdir()
        code, out = _run(capsys, a, b, "--inputs", str(inputs), "--report", str(report), "--quiet", *extra,
                         *variant)
        seen.append((code, _timeless(out), _records(report) if report.exists() else {}))
        assert seen[k] == seen[0], variant
    return [(c, o) for c, o, _ in seen]


def test_workers_output_is_identical_to_one_worker(tmp_path: Path, toy: str,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    inputs = _inputs(tmp_path / "in.jsonl")
    assert sum(1 for _ in batches(iter_inputs(inputs))) > 4  # really sharded
    for extra in [("--show", "1000"), ("--json",)]:
        (code, out), *_ = _identical_runs(capsys, tmp_path, f"{toy}:chars", f"{toy}:odd", inputs,
                                          [["--workers", "2"], ["--workers", "3"]], extra)
        assert code == 1
    summary = json.loads(out)
    texts = [t for _, t in read_inputs(inputs)]
    assert summary["disagreed"] == sum(1 for t in texts if "z" in t or "!" in t)
    assert summary["faults"] == sum(1 for t in texts if "!" in t) > 5


def test_workers_identical_on_production_engines_with_minimize(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    corpus = build_corpus(seed=11, size="small")
    inputs = tmp_path / "in.txt"
    inputs.write_text("\n".join(t.replace("\n", " ")[:60] for t in corpus * 2) + "\n", encoding="utf-8")
    (code, out), _ = _identical_runs(capsys, tmp_path, "tiktoken:cl100k_base", "tiktoken:o200k_base", inputs,
                                     [["--workers", "2"]], ("--json", "--minimize", "--shrink-time", "2"))
    assert code == 1 and json.loads(out)["disagreed"] > 10


def test_scheduler_local_dask_is_identical(tmp_path: Path, toy: str, capsys: pytest.CaptureFixture[str]) -> None:
    inputs = _inputs(tmp_path / "in.jsonl", 300)
    (code, out), _ = _identical_runs(capsys, tmp_path, f"{toy}:chars", f"{toy}:odd", inputs,
                                     [["--scheduler", "local", "--workers", "2"]], ("--json",))
    assert code == 1 and json.loads(out)["inputs"] == 300


def test_scheduler_without_dask_is_a_setup_error(tmp_path: Path, toy: str, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # "import distributed" now raises ImportError
    inputs = _inputs(tmp_path / "in.jsonl", 10)
    code = tokspec_main(["diff", f"{toy}:chars", f"{toy}:chars", "--inputs", str(inputs), "--scheduler", "local"])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    assert captured.err.count("\n") == 1 and "pip install 'tokspec[dask]'" in captured.err


@pytest.mark.parametrize("bad", ["nowhere:1234", "ray://head:10001"])
def test_bad_scheduler_address_is_a_setup_error(tmp_path: Path, toy: str, bad: str,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    inputs = _inputs(tmp_path / "in.jsonl", 10)
    code = tokspec_main(["diff", f"{toy}:chars", f"{toy}:chars", "--inputs", str(inputs), "--scheduler", bad])
    assert code == 2 and "--scheduler" in capsys.readouterr().err


def test_directory_and_glob_of_shards(tmp_path: Path, toy: str, capsys: pytest.CaptureFixture[str]) -> None:
    whole = _inputs(tmp_path / "all.jsonl", 120)
    lines = whole.read_text(encoding="utf-8").split("\n")[:-1]
    shards = tmp_path / "shards"
    shards.mkdir()
    for k in range(3):
        (shards / f"part-{k:02}.jsonl").write_text("".join(ln + "\n" for ln in lines[k * 40:(k + 1) * 40]),
                                                   encoding="utf-8")
    assert [t for _, t in read_inputs(shards)] == [t for _, t in read_inputs(whole)]
    assert read_inputs(str(shards / "part-*.jsonl")) == read_inputs(shards)
    assert read_inputs(shards)[40][0] == f"{shards / 'part-01.jsonl'}:line 1"
    outs = []
    for source in [whole, shards, shards / "part-*.jsonl"]:
        code, out = _run(capsys, f"{toy}:chars", f"{toy}:odd", "--inputs", str(source), "--json",
                         "--report", str(tmp_path / "rep"), "--workers", "2", "--threads", "3")
        outs.append((code, _timeless(out)))
    assert outs[0] == outs[1] == outs[2] and outs[0][0] == 1


CMD_TOY = r'''
import json, os, sys
log = sys.argv[1]
open(os.path.join(log, f"start-{os.getpid()}"), "w").close()
print(json.dumps({"tokspec": 1, "name": "pidtoy", "version": "1", "kind": "tokenizer"}), flush=True)
for line in sys.stdin:
    req = json.loads(line)
    open(os.path.join(log, f"served-{os.getpid()}"), "w").close()
    text = req["text"]
    print(json.dumps({"id": req["id"], "ids": [ord(c) for c in text],
                      "offsets": [[i, i + 1] for i in range(len(text))]}), flush=True)
'''


def test_cmd_engine_one_subprocess_per_worker(tmp_path: Path, toy: str, capsys: pytest.CaptureFixture[str]) -> None:
    script, log = tmp_path / "pidtoy.py", tmp_path / "pids"
    script.write_text(CMD_TOY, encoding="utf-8")
    log.mkdir()
    engine = f"cmd:{shlex.quote(sys.executable)} {shlex.quote(str(script))} {shlex.quote(str(log))}"
    inputs = _inputs(tmp_path / "in.jsonl", 300)
    code, out = _run(capsys, engine, f"{toy}:chars", "--inputs", str(inputs), "--json", "--workers", "2",
                     "--report", str(tmp_path / "rep"))
    assert code == 0 and json.loads(out)["inputs"] == 300
    served = [p for p in log.iterdir() if p.name.startswith("served-")]
    started = [p for p in log.iterdir() if p.name.startswith("start-")]
    # one engine process per worker, not per batch (300 inputs are many batches): at most two served,
    # each started once; plus the setup check's, closed before the workers start. A fast worker may
    # take every batch, so one serving process is as right as two.
    assert 1 <= len(served) <= 2 and len(started) <= 3
    assert {p.name.split("-")[1] for p in served} <= {p.name.split("-")[1] for p in started}


def test_fuzz_workers_deduplicate_findings(tmp_path: Path, toy: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _run(capsys, f"{toy}:chars", f"{toy}:odd", "--fuzz", "--time", "15", "--workers", "2",
                     "--json", "--quiet", "--report", str(tmp_path / "rep"), "--max-findings", "50")
    summary = json.loads(out)
    assert code == 1 and summary["inputs"] > 0
    records = [json.loads(Path(p).read_text(encoding="utf-8")) for p in summary["counterexamples"]]
    faults = [r for r in records if r["classification"] == "engine fault"]
    # both workers hit the fault on "!" (one finding: same message) and the id of "z" (minimized to
    # "z" unless a long text's shrinking ran out of budget): each finding is reported once
    assert len(faults) == 1 and "!" in faults[0]["text"], [(r["text"][:40], len(r["text"]), r.get("b"), r.get("a")) for r in faults]
    assert all("z" in r["text"] for r in records if r not in faults)
    assert len({r["text"] for r in records}) == len(records) >= 2


_RSS = '''
import json, resource, sys
from tokspec.app.cli import main
code = main(["diff", "tokspec_toy_p:whole", "tokspec_toy_p:whole", "--inputs", sys.argv[1], "--json",
             "--quiet", "--workers", "1"])
print(json.dumps({"code": code, "rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
'''


def test_memory_is_bounded_on_a_ten_times_larger_inputs_file(tmp_path: Path, toy: str) -> None:
    line = ("lorem ipsum dolor sit amet, 1234 émigré 🙂 " * 70)[:2900]
    peaks = []
    for n in (1_000, 10_000):  # ~3 MB and ~30 MB of text
        path = tmp_path / f"in-{n}.txt"
        with path.open("w", encoding="utf-8") as fh:
            for i in range(n):
                fh.write(f"{i} {line}\n")
        out = subprocess.run([sys.executable, "-c", _RSS, str(path)], capture_output=True, text=True,
                             timeout=300, env=dict(os.environ))
        result = json.loads(out.stdout.strip().splitlines()[-1])
        assert result["code"] == 0, out.stderr
        peaks.append(result["rss_kb"])
    assert peaks[1] <= 1.2 * peaks[0], peaks


def test_merge_check_workers_identical_to_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corpus = build_corpus(seed=2, size="small")
    texts = [corpus[i % len(corpus)][:80] + (" " + "a" * 130 if i % 9 == 0 else "") for i in range(80)]
    inputs = tmp_path / "in.jsonl"
    write_inputs(inputs, texts)
    seen = []
    for workers in ("1", "2"):
        report = tmp_path / f"rep{workers}"
        code = tokspec_main(["merge-check", "hf:bert-base-uncased", "--strategy", "lopt-paper", "--inputs",
                             str(inputs), "--chunk-len", "50", "--overlap", "30", "--json", "--report",
                             str(report), "--minimize-seconds", "1", "--max-reports", "3", "--workers", workers])
        out = capsys.readouterr().out.replace(str(report), "REPORT")
        seen.append((code, out, sorted(p.name for p in report.iterdir())))
    assert seen[0] == seen[1] and seen[0][0] == 1
    summary = json.loads(seen[0][1])
    assert summary["disagreed"] == 3 and summary["inputs"] < 80  # stopped at --max-reports, in input order
