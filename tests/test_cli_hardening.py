"""The command line under misuse (issue 11, items 2 and 8): output paths, option values, nothing
compared, broken pipes, file modes, temporary files, merge-check's report names and progress.

Every misuse gives exit status 2 and one line on stderr, found before any engine work.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tokspec import _atomic
from tokspec.app.cli import main
from tokspec.diff import write_record

TOY = '''
from tokspec import Encoder, Encoding, EngineInfo

class Chars(Encoder):
    def __init__(self, name, shift=0):
        self.info = EngineInfo(name, "tokenizer", "toy", "0", None)
        self.shift = shift

    def _encode(self, text):
        return Encoding.of([ord(c) + self.shift for c in text], [(i, i + 1) for i in range(len(text))])

chars = Chars("hard_toy:chars")
shifted = Chars("hard_toy:shifted", 1)
'''


@pytest.fixture
def toy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "hard_toy.py").write_text(TOY, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("hard_toy", None)
    return tmp_path


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _one_line_error(code: int, err: str, *needles: str) -> None:
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1 and err.startswith("tokspec"), err
    assert "Traceback" not in err
    for needle in needles:
        assert needle in err, err


# ----------------------------------------------------------------------------- corpus --out


def test_corpus_out_writes_through_a_symlink_and_keeps_the_file(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "real.jsonl"
    target.write_text("old\n")
    target.chmod(0o640)
    inode = target.stat().st_ino
    link = tmp_path / "link.jsonl"
    link.symlink_to(target)
    code, _, err = _run(capsys, "corpus", "--out", str(link), "--size", "small")
    assert code == 0, err
    assert link.is_symlink() and target.stat().st_ino == inode  # written through, not replaced
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert target.read_text(encoding="utf-8").startswith('{"text": ')
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.jsonl", "real.jsonl"]  # no temp file


@pytest.mark.parametrize("kind", ["fifo", "symlink-to-fifo", "device", "folder", "missing-folder",
                                  "dangling-symlink"])
def test_corpus_out_refuses_what_is_not_a_regular_file(tmp_path: Path, kind: str,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    work = tmp_path / "work"
    work.mkdir()
    fifo = work / "fifo"
    os.mkfifo(fifo)
    # The device is reached through a symlink: an implementation that renames over its target
    # must replace only the link in tmp_path, never the machine's /dev/null.
    out = {"fifo": fifo, "device": work / "l3", "folder": work, "missing-folder": work / "no" / "x.jsonl",
           "symlink-to-fifo": work / "l1", "dangling-symlink": work / "l2"}[kind]
    (work / "l1").symlink_to(fifo)
    (work / "l2").symlink_to(work / "nothing-here")
    (work / "l3").symlink_to(os.devnull)
    before = sorted(os.listdir(work))
    code, _, err = _run(capsys, "corpus", "--out", str(out), "--size", "small")
    _one_line_error(code, err, "--out")
    assert sorted(os.listdir(work)) == before  # nothing created, nothing replaced
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and (work / "l1").is_symlink()
    assert (work / "l3").is_symlink() and stat.S_ISCHR(os.stat(work / "l3").st_mode)


# ----------------------------------------------------------------------------- option values


@pytest.mark.parametrize("extra, needle", [
    (["--window", "-1"], "--window"), (["--show", "-1"], "--show"), (["--time", "nan"], "--time"),
    (["--time", "inf"], "--time"), (["--shrink-time", "0"], "--shrink-time"),
    (["--max-findings", "0"], "--max-findings"),
])
def test_bad_option_values_exit_2_before_engines_load(extra: list[str], needle: str, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, "diff", "no-such-engine:a", "no-such-engine:b", "--fuzz", *extra,
                        "--report", str(tmp_path / "rep"))
    _one_line_error(code, err, needle)


@pytest.mark.parametrize("value", ["-1", "0", "nan", "soon"])
def test_bad_cmd_timeout_environment_exits_2(value: str, tmp_path: Path, toy: Path,
                                             monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("TOKSPEC_CMD_TIMEOUT", value)
    inputs = tmp_path / "in.txt"
    inputs.write_text("a\n")
    code, _, err = _run(capsys, "diff", "hard_toy:chars", f"cmd:{sys.executable} -c pass", "--inputs",
                        str(inputs), "--report", str(tmp_path / "rep"))
    _one_line_error(code, err, "TOKSPEC_CMD_TIMEOUT")


def test_bad_report_folder_is_found_before_the_first_finding(tmp_path: Path, toy: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    inputs = tmp_path / "in.txt"
    inputs.write_text("disagree\n")
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    for report in (blocker, blocker / "below"):
        code, out, err = _run(capsys, "diff", "hard_toy:chars", "hard_toy:shifted", "--inputs", str(inputs),
                              "--report", str(report))
        _one_line_error(code, err, "--report")
        assert out == ""  # nothing compared, so no finding lost
    code, _, err = _run(capsys, "merge-check", "hard_toy:chars", "--inputs", str(inputs),
                        "--report", str(blocker))
    _one_line_error(code, err, "--report")


def test_nothing_compared_is_not_agreement(tmp_path: Path, toy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    code, out, err = _run(capsys, "diff", "hard_toy:chars", "hard_toy:chars", "--inputs", str(empty),
                          "--report", str(tmp_path / "rep"))
    _one_line_error(code, err, "nothing compared")
    assert "all agree" not in out
    code, out, err = _run(capsys, "merge-check", "hard_toy:chars", "--inputs", str(empty),
                          "--report", str(tmp_path / "rep"))
    _one_line_error(code, err, "nothing compared")


# ----------------------------------------------------------------------------- output


@pytest.mark.parametrize("command", [
    # diff's report is small (findings clustered by cause: about 1 KB here), so its reader goes away
    # before the first write; encode's golden file (over 1 MB) and the corpus outgrow the pipe while
    # being read (a large write cut by the reader once returned as success: exit 0, file cut)
    ["diff", "hard_toy:chars", "hard_toy:shifted", "--show", "100000", "--report", "rep", "--quiet",
     "--inputs", "in.txt"],
    ["encode", "hard_toy:chars", "--out", "-", "--inputs", "in.txt"],
    ["corpus", "--out", "-"],
])
def test_stdout_closed_early_gives_no_traceback(tmp_path: Path, command: list[str]) -> None:
    (tmp_path / "hard_toy.py").write_text(TOY, encoding="utf-8")
    (tmp_path / "in.txt").write_text("".join(f"line number {i} of many\n" for i in range(3000)))
    proc = subprocess.Popen([sys.executable, "-m", "tokspec", *command], cwd=tmp_path,
                            env=dict(os.environ, PYTHONPATH=str(tmp_path)),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    if command[0] != "diff":
        proc.stdout.readline()  # `| head -1`
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141
    assert "Traceback" not in err and "BrokenPipe" not in err, err


def test_files_follow_the_umask_and_no_temporary_file_is_left(tmp_path: Path, toy: Path,
                                                             monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    rep = tmp_path / "rep"
    rep.mkdir()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = rep / f".old.json.tokspec-tmp-{dead.pid}-0badcafe"  # a writer killed mid-write
    stale.write_text("{")
    inputs = tmp_path / "in.txt"
    inputs.write_text("abc\n")
    old = os.umask(0o022)
    try:
        code, _, _ = _run(capsys, "diff", "hard_toy:chars", "hard_toy:shifted", "--inputs", str(inputs),
                          "--report", str(rep))
        code2, out, _ = _run(capsys, "merge-check", "hf:bert-base-uncased", "--strategy", "lopt-paper",
                             "--inputs", str(_lossy_input(tmp_path)), "--chunk-len", "50", "--overlap", "30",
                             "--report", str(rep), "--minimize-seconds", "2")
    finally:
        os.umask(old)
    assert code == 1 and code2 == 1, out
    written = list(rep.iterdir())
    assert {p.suffix for p in written} == {".json", ".html"}  # stale temp removed, none left
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o644 for p in written)
    html = [p for p in written if p.suffix == ".html"]
    assert html and all(f"(HTML: {p})" in out for p in html)  # merge-check names what it wrote

    def interrupted(src: object, dst: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(_atomic.os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_record({"text": "x"}, rep / "new.json")
    assert sorted(p.name for p in rep.iterdir()) == sorted(p.name for p in written)


def _lossy_input(tmp_path: Path) -> Path:
    path = tmp_path / "lossy.txt"
    path.write_text("a" * 130 + "\n")  # one 130-letter word: [UNK] serially (see test_merge_cli)
    return path


def test_merge_check_shows_progress(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOKSPEC_PROGRESS_SECONDS", "1")  # captured stderr is no terminal: 30 s by default
    code, _, err = _run(capsys, "merge-check", "tiktoken:cl100k_base", "--strategy", "lopt", "--fuzz",
                        "--time", "3.5", "--report", str(tmp_path / "rep"))
    assert code == 0
    assert "merge-check: " in err and " inputs (" in err
