"""docs/tutorial.md is executable: every ``console`` block is run and its output compared (issue 11).

Format (documented at the top of the tutorial's source, in an HTML comment):

- In a ```` ```console ```` block, a line ``$ COMMAND`` is run with bash in a scratch folder holding
  a symlink ``examples`` to the repository's examples (stdout and stderr merged, tokspec and python
  from this test's environment first on PATH); the lines after it, up to the next ``$``, are its
  expected output. If they end with ``exit status N`` and the command does not print that itself,
  the command's exit status is checked against N.
- ``...`` in an expected line matches any text (timings, machine-dependent counts, generator-
  dependent input numbers); everything else must match exactly. Progress lines (``fuzz:``, ``diff:``,
  ``merge-check:`` on stderr, timing-dependent) are left out on both sides.
- ``<!-- file: PATH -->`` right before a fenced block writes that block into PATH first.
- ``<!-- tutorial: slow -->`` right before a console block runs it only with TOKSPEC_SLOW=1
  (long fuzz runs); all other blocks run in the default suite, in order, in one folder.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TUTORIAL = ROOT / "docs" / "tutorial.md"
_PROGRESS = re.compile(r"^(fuzz|diff|merge-check): \d")
_FENCE = re.compile(r"^```(\w*)\s*$")


@dataclass
class Block:
    line: int
    kind: str
    body: list[str]
    slow: bool = False
    file: str | None = None
    commands: list[tuple[str, list[str]]] = field(default_factory=list)


def parse(text: str) -> list[Block]:
    """The fenced blocks of the tutorial with their markers (module docstring)."""
    blocks: list[Block] = []
    lines = text.splitlines()
    i, marks = 0, []
    while i < len(lines):
        m = _FENCE.match(lines[i].strip()) if lines[i].startswith("```") else None
        if lines[i].startswith("<!--"):
            marks.append(lines[i])
        elif m:
            start, body = i + 1, []
            i += 1
            while not lines[i].startswith("```"):
                body.append(lines[i])
                i += 1
            block = Block(start, m.group(1), body)
            for mark in marks:
                if "tutorial: slow" in mark:
                    block.slow = True
                f = re.search(r"file: (\S+)", mark)
                if f:
                    block.file = f.group(1)
            if block.kind == "console":
                for line in body:
                    if line.startswith("$ "):
                        block.commands.append((line[2:], []))
                    else:
                        block.commands[-1][1].append(line)
            blocks.append(block)
            marks = []
        elif lines[i].strip():
            marks = []
        i += 1
    return blocks


def _matches(expected: str, actual: str) -> bool:
    pattern = ".*?".join(re.escape(part) for part in expected.split("..."))
    return re.fullmatch(pattern, actual) is not None


def _check(command: str, expected: list[str], cwd: Path, where: str) -> None:
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
               PYTHONIOENCODING="utf-8", COLUMNS="80")
    for key in [k for k in env if k.startswith(("PYTEST_", "TOKSPEC_", "HYPOTHESIS")) or k == "PYTHONPATH"]:
        del env[key]  # a user's shell, not this test run's (xdist workers, profiles)
    run = subprocess.run(["bash", "-c", command], cwd=cwd, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, timeout=300)
    actual = [line for line in run.stdout.decode("utf-8").splitlines() if not _PROGRESS.match(line)]
    wanted = [line for line in expected if not _PROGRESS.match(line)]
    if wanted and wanted[-1].startswith("exit status ") and "exit status" not in command:
        actual.append(f"exit status {run.returncode}")
    problems = [f"line {k + 1}: expected {w!r}\n           got {a!r}"
                for k, (w, a) in enumerate(zip(wanted, actual)) if not _matches(w, a)]
    if len(wanted) != len(actual):
        problems.append(f"expected {len(wanted)} lines, got {len(actual)}")
    assert not problems, f"{where}: $ {command}\n" + "\n".join(problems) + "\n--- got:\n" + "\n".join(actual)


def _run_tutorial(tmp_path: Path, *, slow: bool) -> int:
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    ran = 0
    for block in parse(TUTORIAL.read_text(encoding="utf-8")):
        if block.file:
            path = tmp_path / block.file
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("\n".join(block.body) + "\n", encoding="utf-8")
        if block.kind != "console" or (block.slow and not slow):
            continue
        for command, expected in block.commands:
            _check(command, expected, tmp_path, f"docs/tutorial.md:{block.line}")
            ran += 1
    return ran


def test_parser_reads_commands_outputs_and_markers() -> None:
    doc = "<!-- tutorial: slow -->\n```console\n$ echo a\na\n$ false\nexit status 1\n```\n" \
          "<!-- file: x.py -->\n```python\nprint(1)\n```\n"
    console, python = parse(doc)
    assert console.slow and console.commands == [("echo a", ["a"]), ("false", ["exit status 1"])]
    assert python.file == "x.py" and python.body == ["print(1)"] and not python.slow
    assert _matches("in ...s; all agree", "in 0.4s; all agree") and not _matches("a ... b", "a x c")


def test_tutorial_examples_print_what_the_tutorial_says(tmp_path: Path) -> None:
    assert _run_tutorial(tmp_path, slow=False) >= 6


@pytest.mark.slow
def test_tutorial_examples_all_blocks(tmp_path: Path) -> None:
    assert _run_tutorial(tmp_path, slow=True) >= 10
