"""``tokspec bench fast``: the fast engines against their references and production peers.

Cases (``quick=False``; sizes are UTF-8 bytes of generated text):

- ``bpe-whole``: backtracking BPE on ONE pretoken (no pretokenization, the seed's worst case) of
  10 KB, 100 KB and 1 MB, vs the naive reference merge loop where it finishes in reasonable time
  (10 KB; at 100 KB it would take minutes: quadratic) and vs tiktoken's merge loop on one piece.
  A ``linear`` row compares the 1 MB time to 10 x the 100 KB time (ratio >= 1/1.1 means the 1 MB
  run took at most 11 x the 100 KB run).
- ``bpe-text``: ``fast:cl100k_base`` (ids and offsets, one compiled pass) vs raw tiktoken
  ``encode_ordinary``, the bpe-openai Rust encoder and the tiktoken adapter's ids + offsets on 1 MB
  of English, Chinese-like text and code (``fast:o200k_base``: English), subject and baseline timed
  alternately, output checked equal in the same run (a mismatch marks the case ``INEXACT``); and
  ``fast:cl100k_base`` vs ``reference:cl100k_base`` on 300 KB.
- ``unigram``: double-array Viterbi vs the same compiled Viterbi over an open-addressing hash trie
  (``tokspec.fast._hash_trie``; forward pass only, on normalized pretokens prepared beforehand, so
  only the trie differs; on the small trained model, on ``mon-unigram``, 64,256 pieces, and on an
  English-centric trained sentencepiece model of 32,000 pieces, ``models.LARGE``: about two minutes
  of training on a machine's first run); ``fast:MODEL`` ids vs ``sentencepiece`` ``encode`` on 1 MB (a trained
  nmt_nfkc + byte-fallback model), ``fast:MODEL`` vs ``spm:MODEL`` (ids + offsets), and
  ``fast:mon-unigram`` vs ``hf:mon-unigram``. Subject and baseline run interleaved, best of 5,
  and each row first checks both outputs are equal (a mismatch marks the case ``INEXACT``).
- ``peek2``: Peek2 spans (compiled kernel) vs ``regex`` spans (tiktoken's pattern, pinned to
  Unicode 16.0 as the reference runs it, and as written) on ~1 MB of English, Chinese-like text,
  code; spans checked equal in the same run.

- ``adapter``: each production adapter's ids + contract offsets (``encode_arrays``) vs the library's
  own encode (ids only) on ~2 MB of English-like and Chinese-like text; the case names the extra
  fraction the offsets cost (issue 10's target: at most +0.30). And ``hf:`` ``encode_batch_arrays``
  (HF's ``encode_batch``) vs a loop of ``encode_arrays`` over ~200 paragraphs. Subject and baseline
  are timed interleaved (minimum of each).

``quick=True``: the same kinds of rows on ~20 KB inputs with a generated tiny BPE vocabulary and a
small trained Unigram model, a few seconds in all. Text is generated at run time: prose from
``tokspec.corpus``, code from this Python's standard library sources, CJK from code point ranges.
"""

from __future__ import annotations

import inspect
import random
import textwrap
from collections.abc import Callable

import numpy as np

from tokspec import load_engine
from tokspec.app.bench import BenchRow, time_best
from tokspec.corpus import build_corpus

__all__ = ["run"]

SUITE = "fast"


def english(n_bytes: int, seed: int = 0) -> str:
    """About ``n_bytes`` of English-like prose: ASCII corpus texts, shuffled and repeated."""
    rng = random.Random(seed)
    texts = [t for t in build_corpus(seed=seed) if t.isascii() and " " in t]
    out: list[str] = []
    size = 0
    while size < n_bytes:
        t = rng.choice(texts)
        out.append(t)
        size += len(t) + 1
    return " ".join(out)[:n_bytes]


def english_typographic(n_bytes: int, seed: int = 0) -> str:
    """:func:`english` as typeset text is: apostrophes as U+2019 and spaced hyphens as em dashes
    (about 1% of characters non-ASCII), what most English on the web looks like to a tokenizer."""
    return english(n_bytes, seed).replace("'", "\u2019").replace(" - ", " \u2014 ")


def english_accented(n_bytes: int, seed: int = 0, every: int = 2000) -> str:
    """:func:`english` with one accented word (``café``) about every ``every`` characters: ASCII
    text with a few non-ASCII characters (names, loanwords, a symbol in code comments)."""
    text = english(n_bytes, seed)
    return " caf\u00e9 ".join(text[k:k + every] for k in range(0, len(text), every))


def chinese_like(n_bytes: int, seed: int = 0) -> str:
    """CJK ideographs with sparse punctuation, spaces and digits (3 bytes per ideograph)."""
    rng = random.Random(seed)
    chars = []
    for _ in range(n_bytes // 3):
        r = rng.random()
        chars.append(chr(rng.randint(0x4E00, 0x9FFF)) if r < 0.9 else rng.choice("，。、 1\n"))
    return "".join(chars)


def code(n_bytes: int) -> str:
    """Python source from the standard library, repeated to size."""
    import collections
    import json
    src = "".join(inspect.getsource(m) for m in (inspect, collections, json, textwrap))
    return (src * (n_bytes // len(src) + 1))[:n_bytes]


def _row(case: str, subject: str, baseline: str, n: int, fs: Callable[[], object],
         fb: Callable[[], object], repeat: int = 3) -> BenchRow:
    return BenchRow(SUITE, case, subject, baseline, n, time_best(fs, repeat=repeat), time_best(fb, repeat=repeat))


def _paired(fs: Callable[[], object], fb: Callable[[], object], repeat: int) -> tuple[float, float]:
    """Best seconds of subject and baseline, timed alternately (a noisy machine hits both alike)."""
    ts = tb = float("inf")
    for _ in range(max(1, repeat)):
        ts = min(ts, time_best(fs, repeat=1))
        tb = min(tb, time_best(fb, repeat=1))
    return ts, tb


def _exact(label: str, same: bool) -> str:
    """The case label, marked INEXACT when the subject's output differed from the baseline's."""
    return label if same else f"{label} INEXACT"


def _peek2_rows(size: int) -> list[BenchRow]:
    """Peek2 spans (the compiled kernel's arrays, as ``peek2:`` engines return them) vs ``regex``
    spans, with the pattern run two ways: as the reference does (general categories pinned to
    Unicode 16.0 by set expressions, which costs regex time) and as written (the regex module's
    Unicode 17.0 tables: not the same classes, but the plain engine speed). Each row's spans are
    checked equal to the pinned regex's in the same run."""
    import regex

    from tokspec.fast.pretok_peek2 import spans
    from tokspec.reference.pretok_regex import PATTERNS, compiled
    rows = []
    inputs = {"english": english(size), "chinese-like": chinese_like(size), "code": code(size)}
    for pattern in ("cl100k_base", "o200k_base"):
        spans("warm up", pattern)
        for label, text in inputs.items():
            starts, ends = spans(text, pattern)
            same = list(zip(starts.tolist(), ends.tolist())) == [m.span() for m in compiled(pattern).finditer(text)]
            for base_name, pat in (("regex pinned 16.0", compiled(pattern)),
                                   ("regex plain pattern", regex.compile(PATTERNS[pattern]))):
                ts, tb = _paired(lambda: spans(text, pattern), lambda: [m.span() for m in pat.finditer(text)], 3)
                rows.append(BenchRow(SUITE, _exact(f"peek2 {pattern} {label}", same), "peek2 spans", base_name,
                                     len(text.encode()), ts, tb))
    return rows


def _bpe_text_rows(size: int) -> list[BenchRow]:
    """``fast:cl100k_base`` ids (compiled Peek2 + backtracking BPE, ``encode_ids``) vs raw tiktoken
    ``encode_ordinary`` and the bpe-openai Rust encoder (ids only), and its ids + offsets (one
    compiled pass, ``encode_arrays``) vs the tiktoken adapter's ids + offsets, on English,
    Chinese-like and code; ``fast:o200k_base`` likewise on English. Ids (and, against the adapter,
    offsets) are checked equal in the same run."""
    rows = []
    cases = [("cl100k_base", "english", english(size)), ("cl100k_base", "chinese-like", chinese_like(size)),
             ("cl100k_base", "code", code(size)), ("o200k_base", "english", english(size))]
    for vocab, label, text in cases:
        fast, adapter = load_engine(f"fast:{vocab}"), load_engine(f"tiktoken:{vocab}")
        rust = load_engine(f"bpe-openai:{vocab}").backend  # type: ignore[attr-defined]
        library = adapter.library_encoding  # type: ignore[attr-defined]
        fast.encode(text[:1000])
        got, want = fast.encode_arrays(text), adapter.encode_arrays(text)
        assert got.ids is not None
        ids = got.ids.tolist()
        n = len(text.encode())
        ids_only = fast.encode_ids  # type: ignore[attr-defined]
        ids_same = ids_only(text).tolist() == ids  # the ids-only path gives the same ids
        for subject, fs, base_name, base, same in (
                ("ids", lambda: ids_only(text), "tiktoken encode_ordinary",
                 lambda: library.encode_ordinary(text), ids == library.encode_ordinary(text)),
                ("ids", lambda: ids_only(text), "bpe-openai encode", lambda: rust.encode(text),
                 ids == list(rust.encode(text))),
                ("ids+offsets", lambda: fast.encode_arrays(text), "tiktoken adapter ids+offsets",
                 lambda: adapter.encode_arrays(text), got.same_as(want))):
            ts, tb = _paired(fs, base, 3)
            rows.append(BenchRow(SUITE, _exact(f"bpe-text {vocab[:-5]} {label}", same and ids_same),
                                 f"fast:{vocab} {subject}", base_name, n, ts, tb))
    return rows


def _tiny_ranks(seed: int = 0) -> dict[bytes, int]:
    """A BPE table learned BPE-style on random text over a 4-letter alphabet (for quick runs)."""
    from tokspec.fuzz.strategies import trained_bpe_ranks
    return trained_bpe_ranks(seed, alphabet=b"abcd", merges=200, segments=50, segment_len=(40, 40))


def _bpe_whole_rows(quick: bool) -> list[BenchRow]:
    import tiktoken

    from tokspec.fast.bpe_kernel import CompiledBPE
    from tokspec.reference.bpe_naive import bpe_ids
    from tokspec.formats.vocab import load_named_tiktoken
    if quick:
        sizes: tuple[int, ...] = (2_000, 20_000)
        ranks, label = _tiny_ranks(), "tiny"
        rng = random.Random(1)
        data = bytes(rng.choice(b"abcd") for _ in range(sizes[-1]))
    else:
        ranks, label, sizes = load_named_tiktoken("cl100k_base").ranks, "cl100k", (10_000, 100_000, 1_000_000)
        data = english(sizes[-1]).encode()
    enc = CompiledBPE.from_ranks(ranks)
    core = tiktoken.Encoding(f"{label}-whole", pat_str=r"(?s).+", mergeable_ranks=ranks, special_tokens={})
    rows: list[BenchRow] = []
    times: dict[int, float] = {}
    for n in sizes:
        piece = data[:n]
        # cold pair-validity memo for every call, so sizes compare like with like
        def cold_memo_call() -> object:
            enc.memo.fill(-1)
            return enc.encode_bytes(piece)
        times[n] = time_best(cold_memo_call,
                             repeat=1 if n >= 1_000_000 else 3)
        tk = time_best(lambda: core._core_bpe.encode_single_piece(piece), repeat=1)
        rows.append(BenchRow(SUITE, f"bpe-whole {label} {n // 1000}KB", "backtrack", "tiktoken 1 piece", n,
                             times[n], tk))
        if n <= 10_000 or quick:
            naive = time_best(lambda: bpe_ids(piece, ranks), repeat=1)
            rows.append(BenchRow(SUITE, f"bpe-whole {label} {n // 1000}KB", "backtrack", "reference naive", n,
                                 times[n], naive))
    small, big = sizes[-2], sizes[-1]
    rows.append(BenchRow(SUITE, f"linear {big // 1000}KB vs 10x{small // 1000}KB", "backtrack big",
                         "backtrack small x10", big, times[big], times[small] * big / small))
    return rows


def _engine_rows(case: str, subject: str, baselines: list[str], text: str) -> list[BenchRow]:
    fast = load_engine(subject)
    fast.encode(text[:1000])
    rows = []
    t_fast = time_best(lambda: fast.encode(text), repeat=2)
    for name in baselines:
        engine = load_engine(name)
        engine.encode(text[:1000])
        rows.append(BenchRow(SUITE, case, subject, name, len(text.encode()), t_fast,
                             time_best(lambda: engine.encode(text), repeat=2)))
    return rows


def _viterbi_row(case: str, da: object, ht: object, text: str, repeat: int) -> BenchRow:
    """Double array vs hash trie on the Viterbi forward pass alone (the same compiled loop; the
    normalized pretokens are prepared once beforehand), both outputs compared."""
    data, bounds, _ = da.normalized(text)  # type: ignore[attr-defined]
    a, b = da.forward_all(data, bounds), ht.forward_all(data, bounds)  # type: ignore[attr-defined]
    same = all(np.array_equal(x, y) for x, y in zip(a, b))
    ts, tb = _paired(lambda: da.forward_all(data, bounds), lambda: ht.forward_all(data, bounds),  # type: ignore[attr-defined]
                     repeat)
    return BenchRow(SUITE, _exact(case, same), "double-array viterbi", "hash-trie viterbi (open addr.)", len(data), ts, tb)


def _unigram_engine_row(case: str, subject: str, baseline: str, text: str, repeat: int) -> BenchRow:
    """Two engines, ids and offsets as arrays, interleaved, outputs compared."""
    fast, base = load_engine(subject), load_engine(baseline)
    a, b = fast.encode_arrays(text), base.encode_arrays(text)
    same = a.same_as(b)
    ts, tb = _paired(lambda: fast.encode_arrays(text), lambda: base.encode_arrays(text), repeat)
    return BenchRow(SUITE, _exact(case, same), subject.split("/")[-1], baseline.split("/")[-1], len(text.encode()), ts, tb)


def _spm_ids_row(case: str, path: str, text: str, repeat: int) -> BenchRow:
    """``fast:MODEL`` ids (``encode_ids``: no alignment, no offsets) vs sentencepiece's own
    ``encode`` (ids); the ids are checked equal to sentencepiece's and to ``encode_arrays``'."""
    import sentencepiece

    fast = load_engine(f"fast:{path}")
    sp = sentencepiece.SentencePieceProcessor(model_file=path)
    got = fast.encode_ids(text)  # type: ignore[attr-defined]
    same = got.tolist() == sp.encode(text) == fast.encode_arrays(text).ids.tolist()  # type: ignore[union-attr]
    ts, tb = _paired(lambda: fast.encode_ids(text), lambda: sp.encode(text), repeat)  # type: ignore[attr-defined]
    return BenchRow(SUITE, _exact(case, same), "fast:MODEL encode_ids", "sentencepiece encode (ids)", len(text.encode()), ts, tb)


def _unigram_rows(quick: bool) -> list[BenchRow]:
    """Unigram rows (sentencepiece model: ``spm-unigram-bytes``, nmt_nfkc and byte fallback,
    trained by ``tokspec.formats.models``; HF: mon-unigram)."""
    from tokspec.fast.unigram_datrie import datrie_encoder
    from tokspec.formats.models import LARGE, trained_model
    path = str(trained_model("spm-unigram-bytes"))
    text = english(20_000 if quick else 1_000_000)
    repeat = 2 if quick else 5
    da, ht = datrie_encoder(path), datrie_encoder(path, trie="hash")
    rows = [_viterbi_row("unigram spm-small english", da, ht, text, repeat),
            _spm_ids_row("unigram spm-small english", path, text, repeat),
            _unigram_engine_row("unigram spm-small english", f"fast:{path}", f"spm:{path}", text, repeat)]
    if not quick:
        rng = random.Random(2)
        burmese = "".join(chr(rng.randint(0x1000, 0x102A)) + " " * (i % 5 == 0) for i in range(100_000))
        da, ht = datrie_encoder("mon-unigram"), datrie_encoder("mon-unigram", trie="hash")
        rows.append(_viterbi_row("unigram mon english", da, ht, text[:300_000], repeat))
        rows.append(_viterbi_row("unigram mon burmese-like", da, ht, burmese, repeat))
        large = str(trained_model("spm-unigram-bytes", vocab_size=LARGE))  # English-centric, 32K pieces
        rows.append(_viterbi_row("unigram spm-32k english", datrie_encoder(large),
                                 datrie_encoder(large, trie="hash"), text, repeat))
        rows.append(_unigram_engine_row("unigram mon english", "fast:mon-unigram", "hf:mon-unigram",
                                        text[:300_000], 3))
    return rows


def _interleaved(fs: Callable[[], object], fb: Callable[[], object], repeat: int) -> tuple[float, float]:
    """Minimum seconds of ``fs`` and of ``fb``, called alternately ``repeat`` times each (so load
    changes on a shared machine hit both alike); one untimed warm-up call of each first."""
    import time
    fs()
    fb()
    best_s = best_b = float("inf")
    for _ in range(max(1, repeat)):
        t0 = time.perf_counter()
        fs()
        best_s = min(best_s, time.perf_counter() - t0)
        t0 = time.perf_counter()
        fb()
        best_b = min(best_b, time.perf_counter() - t0)
    return best_s, best_b


def _library_encode(engine: object) -> Callable[[str], object]:
    """The library's own encode (ids only) behind a production adapter."""
    lib_encoding = getattr(engine, "library_encoding", None)
    if lib_encoding is not None:  # tiktoken
        return lambda t: lib_encoding.encode_ordinary(t)
    backend = getattr(engine, "backend", None)
    if backend is not None:  # bpe-openai
        return lambda t: backend.encode(t)
    processor = getattr(engine, "library_processor", None)
    if processor is not None:  # sentencepiece
        return lambda t: processor.encode(t)
    return lambda t: engine.library_encode(t).ids  # type: ignore[attr-defined]


def _adapter_rows(quick: bool) -> list[BenchRow]:
    """Adapter ids + offsets vs library encode, and HF batch vs loop (module docstring)."""
    from tokspec.formats import models
    size, repeat = (20_000, 5) if quick else (2_000_000, 3)
    texts = {"english": english(size), "chinese-like": chinese_like(size)}
    names = ["tiktoken:cl100k_base", "bpe-openai:cl100k_base", "hf:bert-base-uncased", "hf:mon-unigram",
             models.engine_name("spm-unigram-bytes")]
    rows = []
    for name in names:
        engine = load_engine(name)
        label = name if len(name) < 24 else "spm:spm-unigram-bytes"
        lib = _library_encode(engine)
        for lang, text in texts.items():
            t_adapter, t_lib = _interleaved(lambda: engine.encode_arrays(text), lambda: lib(text), repeat)
            rows.append(BenchRow(SUITE, f"adapter {lang[:2]} extra {t_adapter / t_lib - 1:+.2f}",
                                 f"{label} ids+offsets", "library encode", len(text.encode()),
                                 t_adapter, t_lib))
    paragraphs = [english(size // 200, seed=i) for i in range(200)]
    n_bytes = sum(len(p.encode()) for p in paragraphs)
    for name in ("hf:bert-base-uncased", "hf:mon-unigram"):
        engine = load_engine(name)
        t_batch, t_loop = _interleaved(lambda: engine.encode_batch_arrays(paragraphs),
                                       lambda: [engine.encode_arrays(p) for p in paragraphs], repeat)
        rows.append(BenchRow(SUITE, "adapter batch 200 paragraphs", f"{name} encode_batch_arrays",
                             "loop of encode_arrays", n_bytes, t_batch, t_loop))
    return rows


def run(*, quick: bool) -> list[BenchRow]:
    """All rows of the suite (see module docstring); ``quick`` keeps it to a few seconds."""
    rows = _peek2_rows(20_000 if quick else 1_000_000)
    rows += _bpe_whole_rows(quick)
    rows += _unigram_rows(quick)
    rows += _adapter_rows(quick)
    if not quick:
        rows += _bpe_text_rows(1_000_000)
        text = english(300_000)
        rows += _engine_rows("bpe-text cl100k english", "fast:cl100k_base", ["reference:cl100k_base"], text)
    return rows
