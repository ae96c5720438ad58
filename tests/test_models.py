"""tokspec.formats.models: argument checks, the on-disk cache, reproducibility of training."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from tokspec import TokspecError, load_engine, models

FAST_DETERMINISTIC = ["spm-bpe", "spm-unigram-identity", "hf-bpe"]


@pytest.fixture
def fresh_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TOKSPEC_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(models, "_resolved", {})
    return tmp_path / "cache"


@pytest.mark.parametrize("kwargs, message", [
    ({"kind": "nope"}, "unknown model kind='nope'"),
    ({"kind": "spm-bpe", "vocab_size": 10}, "vocab_size=10"),
    ({"kind": "spm-bpe", "vocab_size": 1000.0}, "vocab_size=1000.0"),
    ({"kind": "spm-bpe", "seed": -1}, "seed=-1"),
])
def test_bad_arguments(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(TokspecError, match=message):
        models.trained_model(**kwargs)  # type: ignore[arg-type]


def test_cache_trains_once_and_atomically(fresh_cache: Path) -> None:
    path = models.trained_model("spm-bpe")
    assert path.parent == fresh_cache and path.is_file()
    assert [p.name for p in fresh_cache.iterdir()] == [path.name]  # no temporary left behind
    mtime = path.stat().st_mtime_ns
    models._resolved.clear()  # force the disk lookup, not the in-process memo
    assert models.trained_model("spm-bpe") == path and path.stat().st_mtime_ns == mtime
    other = models.trained_model("spm-bpe", seed=1)
    assert other != path and other.is_file()


def test_training_text_is_deterministic() -> None:
    a = models.training_texts(seed=0, vocab_size=models.SMALL)
    assert a == models.training_texts(seed=0, vocab_size=models.SMALL)
    assert len(a) > 1000 and all(line.strip() for line in a)


@pytest.mark.parametrize("kind", FAST_DETERMINISTIC)
def test_training_is_byte_identical(kind: str) -> None:
    assert models.train_bytes(kind, vocab_size=models.SMALL) == models.train_bytes(
        kind, vocab_size=models.SMALL)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["spm-unigram", "spm-unigram-bytes"])
def test_training_is_byte_identical_slow(kind: str) -> None:
    assert models.train_bytes(kind, vocab_size=models.SMALL) == models.train_bytes(
        kind, vocab_size=models.SMALL)


@pytest.mark.slow
def test_hf_unigram_same_piece_set() -> None:
    """The documented weaker property of HF Unigram training (scores differ between runs)."""
    runs = [json.loads(models.train_bytes("hf-unigram", vocab_size=models.SMALL)) for _ in range(2)]
    sets = [{piece for piece, _ in run["model"]["vocab"]} for run in runs]
    assert sets[0] == sets[1]


@pytest.mark.parametrize("kind", models.KINDS)
def test_every_kind_loads_as_an_engine(kind: str) -> None:
    name = models.engine_name(kind)
    assert name.startswith("spm:" if kind.startswith("spm-") else "hf:")
    eng = load_engine(name)
    enc = eng.encode("Models train on this machine's text: 日本語, café.")
    assert len(enc) > 0 and eng.info.vocab_sha256 is not None


def test_wordpiece_ids_are_canonical() -> None:
    data = json.loads(models.trained_model("hf-wordpiece").read_text(encoding="utf-8"))
    vocab = data["model"]["vocab"]
    order = sorted(vocab, key=vocab.__getitem__)
    assert order[0] == "[UNK]"
    assert order[1:] == sorted(order[1:], key=lambda t: (t.startswith("##"), len(t), t))


def test_train_models_cli(fresh_cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = Path(__file__).resolve().parents[1] / "scripts" / "train_models.py"
    spec = importlib.util.spec_from_file_location("train_models", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.main(["--kind", "spm-bpe"]) == 0
    out = capsys.readouterr().out
    assert "spm-bpe" in out and f"spm:{fresh_cache}" in out


@pytest.mark.slow
@pytest.mark.parametrize("kind", models.KINDS)
def test_mid_models_train(kind: str) -> None:
    eng = load_engine(models.engine_name(kind, vocab_size=models.MID))
    assert len(eng.encode("a mid-size model")) > 0
