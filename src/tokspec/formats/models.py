"""Small and mid-size tokenizer models trained reproducibly on this machine, cached on disk.

``trained_model(kind, vocab_size=..., seed=0) -> Path`` trains (or finds in the cache) a model and
returns its file; ``engine_name(...)`` gives the matching engine name (``hf:PATH`` / ``spm:PATH``).

========================  ==============  ===========================================================
kind                      file            what
========================  ==============  ===========================================================
``hf-bpe``                tokenizer.json  HF byte-level BPE (ByteLevel pre-tokenizer, GPT-2 regex)
``hf-wordpiece``          tokenizer.json  HF WordPiece, BertNormalizer (lowercase), BertPreTokenizer
``hf-unigram``            tokenizer.json  HF Unigram, NFKC normalizer, Metaspace pre-tokenizer
``spm-unigram``           .model          sentencepiece Unigram, nmt_nfkc, no byte fallback
``spm-unigram-bytes``     .model          sentencepiece Unigram, nmt_nfkc, byte_fallback
``spm-unigram-identity``  .model          sentencepiece Unigram, identity normalization, byte_fallback
``spm-bpe``               .model          sentencepiece BPE, nmt_nfkc, byte_fallback
========================  ==============  ===========================================================

Sizes: ``SMALL`` (1000 pieces, ~200k characters of training text, about a second per kind; other
test suites use these), ``MID`` (8000 pieces, ~1.5M characters, tens of seconds: mark tests
using them slow) and ``LARGE`` (32000 pieces, ~11M characters, about two minutes for a
sentencepiece kind: the benchmark's English-centric model of at least 32K pieces). Training text (:func:`training_texts`) is ``tokspec.corpus.build_corpus(seed)``
plus chunks of this Python's standard library (:func:`stdlib_chunks`): deterministic on one
machine, different across machines, which is why the cache key is the sha256 of the text itself
(plus kind, vocab size, seed, trainer parameters and library version). Non-byte-level trainers see
only the lines made of the most frequent characters (:func:`common_char_lines`).

Reproducibility: sentencepiece trains with ``num_threads=1``, no sentence sampling and no shuffling;
two trainings give byte-identical ``.model`` files (checked by tests/test_models.py). HF
WordPiece and Unigram train on the lines made of the ``vocab_size // 4`` most frequent characters
(:func:`common_char_lines`). HF byte-level BPE is byte-identical across trainings. HF WordPiece is
NOT reproducible: ids come in hash order (renumbered canonically here, see
:func:`_canonical_wordpiece_ids`) and about one training in six picks different tokens at tied last
merges (e.g. ``##east`` vs ``##he``). HF Unigram is NOT reproducible: the same piece set, but
scores differ by up to ~2e-3 between runs (even with ``TOKENIZERS_PARALLELISM=false``: ~1e-11, and
a different id order). Both are recorded in ``corpora/production/training_reproducibility.json``.
The cache makes each machine's first training the one everybody uses.

Cache: ``$TOKSPEC_CACHE`` (default ``~/.cache/tokspec/models``); files are written to a temporary
name and renamed, so concurrent test workers never see a partial file.

Out of scope: training on user corpora (use the libraries directly), special tokens beyond the
unknown token, models larger than LARGE.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import random
import sysconfig
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import sentencepiece
import tokenizers
from tokenizers import decoders, models, normalizers, pre_tokenizers, trainers

from tokspec.corpus import build_corpus
from tokspec.errors import TokspecError

__all__ = ["KINDS", "SMALL", "MID", "LARGE", "trained_model", "engine_name", "training_texts", "cache_dir",
           "train_bytes", "common_char_lines", "reproducibility_report", "stdlib_chunks"]

SMALL = 1000
MID = 8000
LARGE = 32000
_MIN_VOCAB = 300  # byte fallback needs 256 byte pieces plus the characters it must keep

_SPM_KINDS: dict[str, dict[str, Any]] = {
    "spm-unigram": {"model_type": "unigram", "normalization_rule_name": "nmt_nfkc",
                    "byte_fallback": False},
    "spm-unigram-bytes": {"model_type": "unigram", "normalization_rule_name": "nmt_nfkc",
                          "byte_fallback": True},
    "spm-unigram-identity": {"model_type": "unigram", "normalization_rule_name": "identity",
                             "byte_fallback": True},
    "spm-bpe": {"model_type": "bpe", "normalization_rule_name": "nmt_nfkc", "byte_fallback": True},
}
_HF_KINDS = ("hf-bpe", "hf-wordpiece", "hf-unigram")
KINDS: tuple[str, ...] = _HF_KINDS + tuple(_SPM_KINDS)


def cache_dir() -> Path:
    """``$TOKSPEC_CACHE`` or ``~/.cache/tokspec/models`` (created if missing)."""
    path = Path(os.environ.get("TOKSPEC_CACHE") or Path.home() / ".cache" / "tokspec" / "models")
    path.mkdir(parents=True, exist_ok=True)
    return path


def stdlib_chunks(rng: random.Random, count: int, *, max_chars: int = 4000) -> list[str]:
    """``count`` chunks of this Python's standard-library ``.py`` files (site-packages excluded, so
    installing a package does not change them). Deterministic for a given ``rng`` state."""
    root = Path(sysconfig.get_paths()["stdlib"])
    files: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in ("site-packages", "dist-packages",
                                                               "__pycache__"))
        files += [Path(dirpath) / f for f in sorted(filenames) if f.endswith(".py")]
    out: list[str] = []
    for path in rng.sample(files, min(count, len(files))):
        text = path.read_bytes()[:200_000].decode("utf-8", "replace")
        start = rng.randrange(max(1, len(text)))
        out.append(text[start:start + rng.randint(1, max_chars)])
    return out


def training_texts(*, seed: int, vocab_size: int) -> list[str]:
    """The training lines: the conformance corpus plus standard-library chunks, split into
    non-blank lines. More library text for larger vocabularies (200 chunks up to 2000 pieces, else
    1500; above ``MID``: three large conformance corpora, seeds ``seed..seed+2``, and chunks of up
    to 40,000 characters of every library file, ~11M characters). Note that ``build_corpus`` itself includes chunks of machine files, so the text (and
    hence the cache key) changes when those files change.
    """
    if vocab_size > MID:  # the small corpus allows ~15.6K sentencepiece pieces: three large ones
        texts = [t for k in range(3) for t in build_corpus(seed=seed + k, size="large")]
        texts += stdlib_chunks(random.Random(seed), 6000, max_chars=40_000)
        return [line for text in texts for line in text.splitlines() if line.strip()]
    n_chunks = 200 if vocab_size <= 2000 else 1500
    texts = build_corpus(seed=seed, size="small")
    texts += stdlib_chunks(random.Random(seed), n_chunks, max_chars=4000)
    return [line for text in texts for line in text.splitlines() if line.strip()]


def _train_spm(lines: list[str], vocab_size: int, params: dict[str, Any]) -> bytes:
    """One sentencepiece training, single-threaded and unsampled; returns the .model bytes.

    The lines are restricted to the ``vocab_size // 2`` most frequent characters, so the
    characters sentencepiece must keep always fit next to the 256 byte pieces.
    """
    lines = common_char_lines(lines, vocab_size // 2)
    out = io.BytesIO()
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=iter(lines), model_writer=out, vocab_size=vocab_size,
        num_threads=1, minloglevel=2, character_coverage=0.99, input_sentence_size=0,
        shuffle_input_sentence=False, max_sentence_length=100_000, **params)
    return out.getvalue()


def _hf_bpe(vocab_size: int) -> tuple[tokenizers.Tokenizer, Any]:
    tok = tokenizers.Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    return tok, trainers.BpeTrainer(vocab_size=vocab_size, show_progress=False,
                                    initial_alphabet=pre_tokenizers.ByteLevel.alphabet())


def _hf_wordpiece(vocab_size: int) -> tuple[tokenizers.Tokenizer, Any]:
    tok = tokenizers.Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    return tok, trainers.WordPieceTrainer(vocab_size=vocab_size, show_progress=False,
                                          special_tokens=["[UNK]"])


def _hf_unigram(vocab_size: int) -> tuple[tokenizers.Tokenizer, Any]:
    tok = tokenizers.Tokenizer(models.Unigram())
    tok.normalizer = normalizers.NFKC()
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Metaspace()
    return tok, trainers.UnigramTrainer(vocab_size=vocab_size, show_progress=False,
                                        special_tokens=["<unk>"], unk_token="<unk>")


_HF_BUILDERS: dict[str, Callable[[int], tuple[tokenizers.Tokenizer, Any]]] = {
    "hf-bpe": _hf_bpe, "hf-wordpiece": _hf_wordpiece, "hf-unigram": _hf_unigram}


def common_char_lines(lines: list[str], n_chars: int) -> list[str]:
    """The lines made only of the ``n_chars`` most frequent characters (ties: lower code point).

    HF's WordPiece and Unigram trainers must keep every character of their input (Unigram fails,
    WordPiece's ``limit_alphabet`` breaks frequency ties in hash order, so two trainings differ);
    filtering the input instead keeps training deterministic. O(total characters).
    """
    counts: dict[str, int] = {}
    for line in lines:
        for ch in line:
            counts[ch] = counts.get(ch, 0) + 1
    keep = set(sorted(counts, key=lambda c: (-counts[c], c))[:n_chars])
    return [line for line in lines if set(line) <= keep]


def _train_hf(kind: str, lines: list[str], vocab_size: int) -> bytes:
    """One HF training; returns the tokenizer.json bytes."""
    tok, trainer = _HF_BUILDERS[kind](vocab_size)
    if kind != "hf-bpe":  # byte-level BPE has a 256-symbol alphabet whatever the text
        lines = common_char_lines(lines, vocab_size // 4)
    tok.train_from_iterator(lines, trainer=trainer)
    if kind == "hf-wordpiece":
        _canonical_wordpiece_ids(tok)
    return tok.to_str(pretty=True).encode("utf-8")


def _canonical_wordpiece_ids(tok: tokenizers.Tokenizer) -> None:
    """Renumber a trained WordPiece vocabulary: ``[UNK]`` = 0, then by (``##``?, length, text).

    WordPiece segmentation depends only on the vocabulary *set*, so this changes ids, never
    tokens; it removes the hash-order id assignment of HF's trainer (two trainings give the same
    set in different orders).
    """
    vocab = tok.get_vocab()
    order = sorted((t for t in vocab if t != "[UNK]"), key=lambda t: (t.startswith("##"), len(t), t))
    tok.model = models.WordPiece({t: i for i, t in enumerate(["[UNK]", *order])}, unk_token="[UNK]")


def _check_args(kind: str, vocab_size: int, seed: int) -> None:
    if kind not in KINDS:
        raise TokspecError(f"unknown model kind={kind!r}; known: {', '.join(KINDS)}")
    if not isinstance(vocab_size, int) or not _MIN_VOCAB <= vocab_size <= 64_000:
        raise TokspecError(f"vocab_size={vocab_size!r} must be an int in [{_MIN_VOCAB}, 64000]")
    if not isinstance(seed, int) or seed < 0:
        raise TokspecError(f"seed={seed!r} must be a non-negative int")


def _cache_key(kind: str, vocab_size: int, seed: int, lines: list[str]) -> str:
    """sha256 over the training text, the parameters and the training library's version."""
    h = hashlib.sha256()
    for line in lines:
        h.update(line.encode("utf-8", "surrogatepass") + b"\n")
    library = tokenizers.__version__ if kind in _HF_KINDS else sentencepiece.__version__
    params = {"kind": kind, "vocab_size": vocab_size, "seed": seed, "library": library,
              "spm": _SPM_KINDS.get(kind), "format": 1}
    h.update(json.dumps(params, sort_keys=True).encode())
    return h.hexdigest()


def _write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to a temporary file next to ``path``, then rename it over ``path``."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def train_bytes(kind: str, *, vocab_size: int, seed: int = 0) -> bytes:
    """Train once, without the cache; return the model file's bytes."""
    _check_args(kind, vocab_size, seed)
    lines = training_texts(seed=seed, vocab_size=vocab_size)
    if kind in _SPM_KINDS:
        return _train_spm(lines, vocab_size, _SPM_KINDS[kind])
    return _train_hf(kind, lines, vocab_size)


#: In-process memo of resolved paths: building and hashing the training text takes ~0.3 s.
_resolved: dict[tuple[str, int, int], Path] = {}


def trained_model(kind: str, *, vocab_size: int = SMALL, seed: int = 0) -> Path:
    """The cached model file of ``kind`` (see module table), training it first if needed.

    O(training) on a cache miss (about a second for SMALL), O(training-text hashing) on a hit.
    Raises TokspecError for an unknown kind or a vocab_size outside [300, 64000].
    """
    _check_args(kind, vocab_size, seed)
    known = _resolved.get((kind, vocab_size, seed))
    if known is not None and known.is_file():
        return known
    lines = training_texts(seed=seed, vocab_size=vocab_size)
    key = _cache_key(kind, vocab_size, seed, lines)
    suffix = ".model" if kind in _SPM_KINDS else ".json"
    path = cache_dir() / f"{kind}-{vocab_size}-s{seed}-{key[:16]}{suffix}"
    if not path.is_file():
        if kind in _SPM_KINDS:
            data = _train_spm(lines, vocab_size, _SPM_KINDS[kind])
        else:
            data = _train_hf(kind, lines, vocab_size)
        _write_atomic(path, data)
    _resolved[(kind, vocab_size, seed)] = path
    return path


def engine_name(kind: str, *, vocab_size: int = SMALL, seed: int = 0) -> str:
    """The engine name for a trained model: ``hf:PATH`` or ``spm:PATH``."""
    prefix = "spm" if kind in _SPM_KINDS else "hf"
    return f"{prefix}:{trained_model(kind, vocab_size=vocab_size, seed=seed)}"


def _vocab_of(data: bytes) -> dict[str, float]:
    """piece -> score (Unigram) or piece -> id (BPE/WordPiece) of a tokenizer.json."""
    vocab = json.loads(data)["model"]["vocab"]
    if isinstance(vocab, list):
        return {str(piece): float(score) for piece, score in vocab}
    return {str(piece): float(i) for piece, i in vocab.items()}


def reproducibility_report(kind: str, *, runs: int = 3, vocab_size: int = SMALL) -> dict[str, Any]:
    """Train ``runs`` times and describe how the files differ. O(runs * training).

    Keys: ``identical`` (all files byte-identical), ``distinct_files``; for HF kinds also
    ``vocab_differences`` (pieces in some run but not the first) and ``max_value_difference``
    (largest |score or id| difference of a piece present in both).
    """
    files = [train_bytes(kind, vocab_size=vocab_size) for _ in range(runs)]
    report: dict[str, Any] = {"kind": kind, "vocab_size": vocab_size, "runs": runs,
                              "identical": len(set(files)) == 1, "distinct_files": len(set(files))}
    if kind in _HF_KINDS:
        first = _vocab_of(files[0])
        others = [_vocab_of(f) for f in files[1:]]
        report["vocab_differences"] = sorted({p for o in others for p in set(o) ^ set(first)})
        report["max_value_difference"] = max(
            (abs(o[p] - first[p]) for o in others for p in o if p in first), default=0.0)
    return report
