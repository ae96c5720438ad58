"""The model and vocabulary formats moved to ``tokspec.formats`` (session 33); every old import path
stays importable as the very same module, so user code, monkeypatches and pickles keep working."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

MOVED = {"tokspec.vocab": "tokspec.formats.vocab", "tokspec.spm_model": "tokspec.formats.spm_model",
         "tokspec.spm_normalize": "tokspec.formats.spm_normalize", "tokspec.hf_pipeline": "tokspec.formats.hf_pipeline",
         "tokspec.unigram_model": "tokspec.formats.unigram_model", "tokspec.normalize": "tokspec.formats.normalize",
         "tokspec.models": "tokspec.formats.models", "tokspec.engines._protowire": "tokspec.formats._protowire"}


@pytest.mark.parametrize("old, new", sorted(MOVED.items()))
def test_old_path_is_the_moved_module(old: str, new: str) -> None:
    assert importlib.import_module(old) is importlib.import_module(new)


def test_old_from_imports_in_a_fresh_interpreter() -> None:
    """The old spellings users wrote, first import in the process (the shim runs, not a cached module)."""
    code = ("from tokspec.vocab import load_named_tiktoken, named_path; from tokspec import models, normalize; "
            "from tokspec.engines._protowire import iter_fields; import tokspec.formats.models as m; "
            "assert models is m and normalize.Aligned.of('ab').text == 'ab' and callable(iter_fields); print('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]
