"""Command-line conventions: --version, bare help, one error prefix, help text for every option (no
reST markup), one option name per concept shared by diff and merge-check (old names kept as
aliases), ``-`` for stdout, progress every second on a terminal and sparsely into a log."""

from __future__ import annotations

import argparse
import io
import json
from pathlib import Path

import pytest

from tokspec import __version__
from tokspec.app import cli
from tokspec.app._progress import LOG_SECONDS, TTY_SECONDS, progress_interval
from tokspec.errors import TokspecError

COMMANDS = ["engines", "corpus", "bench", "diff", "merge-check"]


def _subparser(command: str) -> argparse.ArgumentParser:
    parser = cli._build_parser(command)
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices[command]


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        cli.main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out == f"tokspec {__version__}\n"


def test_bare_command_prints_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main([]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: tokspec")
    for command in COMMANDS:
        assert command in out


@pytest.mark.parametrize("argv,message", [
    (["--bogus"], "tokspec: error: the following arguments are required: COMMAND\n"),
    (["diff", "a"], "tokspec: error: diff: the following arguments are required: B\n"),
])
def test_usage_error_has_one_prefix(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(argv) == 2
    assert capsys.readouterr().err == message


@pytest.mark.parametrize("command", [None, *COMMANDS])
def test_every_option_has_help_and_no_markup(command: str | None) -> None:
    parser = cli._build_parser(command) if command is None else _subparser(command)
    missing = [a.option_strings or a.dest for a in parser._actions if not a.help]
    assert not missing, missing
    text = parser.format_help()
    for markup in ("``", ":mod:", ":func:", ":class:", ":data:"):
        assert markup not in text, (markup, text)


def _parse(command: str, argv: list[str]) -> dict[str, object]:
    return vars(_subparser(command).parse_args(argv))


@pytest.mark.parametrize("command,first,canonical,old", [
    ("diff", ["A", "B", "--fuzz"], ["--reports", "R", "--minimize-seconds", "3"],
     ["--report", "R", "--shrink-time", "3"]),
    ("merge-check", ["E"], ["--reports", "R", "--max-findings", "4"], ["--report", "R", "--max-reports", "4"]),
])
def test_shared_option_names_and_old_aliases(command: str, first: list[str], canonical: list[str],
                                             old: list[str]) -> None:
    new = _parse(command, first + canonical)
    assert new == _parse(command, first + old)
    assert new != _parse(command, first)  # the options do something


def test_the_shared_names_exist_in_both_commands() -> None:
    diff = {s for a in _subparser("diff")._actions for s in a.option_strings}
    merge = {s for a in _subparser("merge-check")._actions for s in a.option_strings}
    shared = {"--reports", "--max-findings", "--minimize-seconds", "--seed", "--time", "--inputs", "--fuzz",
              "--json", "--quiet", "--workers"}
    assert shared <= diff and shared <= merge, (shared - diff, shared - merge)


def test_corpus_out_dash_writes_stdout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    assert cli.main(["corpus", "--out", "-", "--size", "small"]) == 0
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert len(lines) > 100 and all(isinstance(json.loads(line)["text"], str) for line in lines)
    assert "to stdout" in captured.err
    assert not (tmp_path / "-").exists()
    # the file form writes the same texts
    assert cli.main(["corpus", "--out", "c.jsonl", "--size", "small"]) == 0
    assert (tmp_path / "c.jsonl").read_text(encoding="utf-8").splitlines() == lines


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_every_second_on_a_terminal_sparse_in_a_log(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TOKSPEC_PROGRESS_SECONDS", raising=False)
    assert progress_interval(_Tty()) == TTY_SECONDS == 1.0
    assert progress_interval(io.StringIO()) == LOG_SECONDS == 30.0
    monkeypatch.setenv("TOKSPEC_PROGRESS_SECONDS", "120")
    assert progress_interval(io.StringIO()) == 120.0
    assert progress_interval(_Tty()) == 1.0
    monkeypatch.setenv("TOKSPEC_PROGRESS_SECONDS", "0")
    with pytest.raises(TokspecError, match="TOKSPEC_PROGRESS_SECONDS='0'"):
        progress_interval(io.StringIO())


def test_diff_and_merge_progress_use_the_interval(monkeypatch: pytest.MonkeyPatch) -> None:
    from tokspec.app import cli_merge
    from tokspec.app.diff_results import Progress as _Progress

    monkeypatch.delenv("TOKSPEC_PROGRESS_SECONDS", raising=False)
    log, tty = _Progress(io.StringIO(), "diff"), _Progress(_Tty(), "diff")
    assert (log.every, log.next - log.start) == (30.0, 30.0)  # first line after 30 s, then every 30 s
    assert (tty.every, tty.next - tty.start) == (1.0, 2.0)
    log.next = log.start  # due: prints once, then waits 30 s again
    log.tick(lambda s: "3 inputs")
    assert log.stream.getvalue().startswith("diff: ") and "3 inputs" in log.stream.getvalue()
    assert log.next - log.start >= 30.0
    monkeypatch.setattr(cli_merge.sys, "stderr", io.StringIO())
    assert cli_merge._Progress(False).every == 30.0
