"""The OSS-Fuzz / ClusterFuzzLite build, without Docker: ``.clusterfuzzlite/build.sh`` in local mode
(no ``compile_python_fuzzer``: fuzzers are copied as Python programs), then each fuzzer run as a plain
libFuzzer program: argv handling, ``atheris.Setup``, the seed corpus zip and dictionary, exit codes,
and a crash artifact written where libFuzzer writes it.

The default suite builds and runs one target of each kind (diff, property, hypothesis); with
TOKSPEC_SLOW=1 every target is built and run.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tokspec.fuzz.clusterfuzzlite import build, fuzzer_name, fuzzer_source
from tokspec.fuzz.targets import TARGETS

REPO = Path(__file__).resolve().parents[1]
ONE_OF_EACH = ["diff--reference_cl100k_base--tiktoken_cl100k_base", "prop--tiktoken_cl100k_base",
               "hyp--bpe_reference_tiny"]


def test_project_files_follow_the_python_builder_conventions() -> None:
    cfl = REPO / ".clusterfuzzlite"
    assert re.search(r"^language: python$", (cfl / "project.yaml").read_text(), re.M)
    assert "FROM gcr.io/oss-fuzz-base/base-builder-python" in (cfl / "Dockerfile").read_text()
    script = (cfl / "build.sh").read_text()
    assert "compile_python_fuzzer" in script and "_seed_corpus.zip" in script and ".dict" in script


def _build(tmp_path: Path, names: list[str]) -> Path:
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "tokspec").symlink_to(REPO)
    env = dict(os.environ, SRC=str(src), WORK=str(tmp_path / "work"), OUT=str(out), PYTHON=sys.executable,
               TOKSPEC_CFL_LOCAL="1", TOKSPEC_CFL_TARGETS=" ".join(names),
               PATH=os.environ.get("PATH", ""))
    done = subprocess.run(["bash", str(REPO / ".clusterfuzzlite" / "build.sh")], env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    return out


def _run_fuzzer(out: Path, name: str, tmp_path: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    corpus = tmp_path / f"corpus-{name}"
    with zipfile.ZipFile(out / f"{name}_seed_corpus.zip") as zf:
        zf.extractall(corpus)
    env = dict(os.environ, TOKSPEC_CACHE=str(tmp_path / "cache"))
    return subprocess.run([sys.executable, str(out / f"{name}.py"), "-runs=200", f"-dict={out / name}.dict",
                           *flags, str(corpus)], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=600)


def _check_targets(tmp_path: Path, names: list[str]) -> None:
    out = _build(tmp_path, names)
    for target in names:
        name = fuzzer_name(target)
        with zipfile.ZipFile(out / f"{name}_seed_corpus.zip") as zf:
            assert len(zf.namelist()) > 0
        assert "kw0=" in (out / f"{name}.dict").read_text(encoding="ascii")
        done = _run_fuzzer(out, name, tmp_path)
        assert done.returncode == 0, (target, done.stderr[-3000:])
        assert re.search(r"Dictionary: \d+ entries", done.stderr), done.stderr[-2000:]
        assert re.search(r"^Done \d+ runs", done.stderr, re.M), done.stderr[-2000:]
        assert not list(tmp_path.glob("crash-*")), target  # the real targets hold on these inputs


def test_build_sh_local_mode_and_one_target_of_each_kind(tmp_path: Path) -> None:
    _check_targets(tmp_path, ONE_OF_EACH)


@pytest.mark.slow
def test_build_sh_local_mode_every_target(tmp_path: Path) -> None:
    _check_targets(tmp_path, [t.name for t in TARGETS])


def test_a_finding_is_a_crash_with_its_artifact(tmp_path: Path) -> None:
    """A deliberately broken engine (mutant) as a standalone fuzzer: exit non-zero, crash file under
    -artifact_prefix, and running the fuzzer on that file alone reproduces the crash."""
    out = tmp_path / "out"
    build(out, [t for t in TARGETS if t.name == ONE_OF_EACH[0]], engines=False)
    shutil.copyfile(out / f"{fuzzer_name(ONE_OF_EACH[0])}_seed_corpus.zip",
                    out / "fuzz_mutant_seed_corpus.zip")
    (out / "fuzz_mutant.dict").write_text('kw0="a b"\n', encoding="ascii")
    (out / "fuzz_mutant.py").write_text(fuzzer_source("mutant:offset_off_by_one"), encoding="utf-8")
    artifacts = tmp_path / "artifacts"
    artifacts.mkdir()
    done = _run_fuzzer(out, "fuzz_mutant", tmp_path, f"-artifact_prefix={artifacts}/")
    crashes = list(artifacts.glob("crash-*"))
    assert done.returncode != 0 and len(crashes) == 1, done.stderr[-3000:]
    assert "TOKSPEC-CRASH mutant--offset_off_by_one" in done.stderr, done.stderr[-3000:]
    again = subprocess.run([sys.executable, str(out / "fuzz_mutant.py"), str(crashes[0])], cwd=tmp_path,
                           env=dict(os.environ, TOKSPEC_CACHE=str(tmp_path / "cache")), capture_output=True,
                           text=True, timeout=300)
    assert again.returncode != 0 and "TOKSPEC-CRASH" in again.stderr, again.stderr[-3000:]


TOY = '''
from tokspec import Encoder, Encoding, EngineInfo

class Chars(Encoder):
    def __init__(self, name, odd=False):
        self.info = EngineInfo(name, "tokenizer", "toy", "0", None)
        self.odd = odd

    def _encode(self, text):
        ids = [ord(c) + (self.odd and c == "z") for c in text]
        return Encoding.of(ids, [(i, i + 1) for i in range(len(text))])

chars = Chars("tokspec_toy_cfl:chars")
odd = Chars("tokspec_toy_cfl:odd", odd=True)
'''


def test_your_own_engine_pair_as_a_fuzzer(tmp_path: Path) -> None:
    """docs/scale.md: ``--pair A B`` builds a fuzzer for a user's engine; its bug is a crash."""
    (tmp_path / "tokspec_toy_cfl.py").write_text(TOY, encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]),
               TOKSPEC_CACHE=str(tmp_path / "cache"))
    out = tmp_path / "out"
    built = subprocess.run([sys.executable, "-m", "tokspec.fuzz.clusterfuzzlite", "build", str(out), "--pair",
                            "tokspec_toy_cfl:chars", "tokspec_toy_cfl:odd"], env=env, capture_output=True,
                           text=True, timeout=300)
    assert built.returncode == 0, built.stderr[-2000:]
    (name,) = built.stdout.split()
    corpus = tmp_path / "corpus"
    with zipfile.ZipFile(out / f"{name}_seed_corpus.zip") as zf:
        assert zf.namelist()  # tokspec's generated seeds: this pair has no stored corpus
        zf.extractall(corpus)
    done = subprocess.run([sys.executable, str(out / f"{name}.py"), "-runs=5000", f"-dict={out / name}.dict",
                           f"-artifact_prefix={tmp_path}/", str(corpus)], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode != 0 and "TOKSPEC-CRASH" in done.stderr, done.stderr[-3000:]
    crash = next(tmp_path.glob("crash-*")).read_bytes()
    assert b"z" in crash  # the toy's bug: another id for "z"
