"""``tokspec.fast.merge_engines``: the strategy table's calling convention and the ``lopt:`` engines.

Every strategy is reached through ``merge_text`` and must receive the arguments it is given (seen
in its trace); only ``lopt`` is flagged lossless (the others have counterexamples in
``corpora/merge/``); ``lopt:ENGINE``
must be ENGINE behind the merge: same info apart from the name, same encodings, same pieces.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from tokspec import Encoder, Encoding, EncodingArrays, EngineInfo, load_engine
from tokspec.errors import UnknownEngineError
from tokspec.fast.merge_engines import DEFAULT_OVERLAP, STRATEGIES, LoptEncoder, load, merge_text
from tokspec.fast.parallel import Runner


class Runs(Encoder):
    """Maximal runs of one character are one token (id = code point * 100 + run length)."""

    info = EngineInfo("toy:runs", "tokenizer", "toy", "1.0", None)

    def __init__(self) -> None:
        self.closed = 0

    def _encode(self, text: str) -> Encoding:
        ids, offs, start = [], [], 0
        for i in range(1, len(text) + 1):
            if i == len(text) or text[i] != text[start]:
                ids.append(100 * ord(text[start]) + i - start)
                offs.append((start, i))
                start = i
        return Encoding.of(ids, offs)

    def close(self) -> None:
        self.closed += 1


def test_table_names_match_and_only_lopt_is_lossless() -> None:
    assert all(name == s.name for name, s in STRATEGIES.items())
    # the published strategies are lossy (corpora/merge holds their counterexamples); lopt is exact
    assert [name for name, s in STRATEGIES.items() if s.lossless] == ["lopt"]
    engine = Runs()
    text = "aaaa bbbb, cccc. dddd eeee, ffff. " * 2
    for c in (3, 5, 8):
        assert merge_text(engine, text, strategy="lopt", chunk_len=c).encoding == engine.encode(text)


@pytest.mark.parametrize(("name", "params"), [
    ("lopt", {"chunk_len": 6}),
    ("lopt-paper", {"chunk_len": 6, "overlap": 3, "min_match": 2}),
    ("overlap-filter", {"chunk_len": 6, "overlap": 3}),
    ("id-lcs", {"chunk_len": 6, "overlap": 3}),
    ("delimiter", {"chunk_len": 6, "delimiter": "space"}),
    ("delimiter-comma", {"chunk_len": 6, "delimiter": "comma"}),
    ("delimiter-period", {"chunk_len": 6, "delimiter": "period"}),
])
def test_each_strategy_gets_its_arguments(name: str, params: dict[str, object]) -> None:
    result = merge_text(Runs(), "ab, cd. ef gh, ij. kl", strategy=name, chunk_len=6, overlap=3)
    assert {k: result.trace.params[k] for k in params} == params
    assert STRATEGIES[name].uses_overlap == ("overlap" in params)


def test_overlap_defaults() -> None:
    text = "ab cd ef gh"
    for name in ("lopt-paper", "id-lcs"):
        assert merge_text(Runs(), text, strategy=name, chunk_len=4).trace.params["overlap"] == DEFAULT_OVERLAP == 512
    blog = merge_text(Runs(), text, strategy="overlap-filter", chunk_len=4).trace.params["overlap"]
    assert blog == 3 * 128 + 16  # unknown vocabulary: the default longest token


def test_chunk_len_default_comes_from_size_and_runner() -> None:
    text = "ab " * 3000
    got = merge_text(Runs(), text, strategy="delimiter")
    assert got.trace.params["chunk_len"] == 2250  # serial runner: one worker, 4 chunks per worker
    got = merge_text(Runs(), text, strategy="delimiter", runner=Runner("threads", 2))
    assert got.trace.params["chunk_len"] == 2048
    assert got.encoding == merge_text(Runs(), text, strategy="delimiter", chunk_len=2048).encoding


class RecordingRunner(Runner):
    def __init__(self) -> None:
        super().__init__("serial", 3)
        self.batches: list[list[str]] = []

    def arrays(self, engine: Encoder, texts: Sequence[str]) -> list[EncodingArrays]:
        self.batches.append(list(texts))
        return super().arrays(engine, texts)


def test_lopt_engine_is_its_inner_engine_behind_the_merge() -> None:
    inner = load_engine("tiktoken:cl100k_base")
    runner = RecordingRunner()
    outer = LoptEncoder(inner, runner=runner, chunk_len=30)
    i, o = inner.info, outer.info
    assert o.name == "lopt:tiktoken:cl100k_base"
    assert (o.kind, o.library, o.library_version, o.vocab_sha256) == (
        i.kind, i.library, i.library_version, i.vocab_sha256)
    assert o.description.startswith("lossless parallel merge over tiktoken:cl100k_base; ")
    assert o.description.endswith(outer.decision.describe())
    text = "The lopt engine cuts this text at sound cuts only. " * 4
    assert outer.encode(text) == inner.encode(text)
    assert runner.batches and len(runner.batches[0]) > 2  # chunk_len 30 was used: several pieces
    assert "".join(runner.batches[0]) == text
    assert outer.token_piece(791) == inner.token_piece(791)
    default = LoptEncoder(inner)
    assert default.runner.backend == "auto" and default.chunk_len is None
    assert default.encode(text) == inner.encode(text)


def test_lopt_engine_closes_its_inner_engine() -> None:
    inner = Runs()
    LoptEncoder(inner).close()
    assert inner.closed == 1


def test_lopt_provider_loads_and_names_bad_names() -> None:
    engine = load("lopt", "tiktoken:cl100k_base")
    assert isinstance(engine, LoptEncoder) and engine.inner.info.name == "tiktoken:cl100k_base"
    with pytest.raises(UnknownEngineError, match="^engine name 'lopt:': lopt needs an inner engine, "
                       "e.g. lopt:tiktoken:cl100k_base$"):
        load("lopt", "")
    with pytest.raises(UnknownEngineError, match="engine name 'other:x'"):
        load("other", "x")


def test_unknown_strategy_is_a_named_error_listing_the_choices() -> None:
    from tokspec.fast._chunking import MergeError

    with pytest.raises(MergeError) as err:
        merge_text(Runs(), "ab cd", strategy="lopt2")
    assert str(err.value) == f"unknown strategy='lopt2'; choose one of {', '.join(STRATEGIES)}"
    assert str(err.value).endswith("choose one of lopt, lopt-paper, overlap-filter, id-lcs, delimiter, "
                                   "delimiter-comma, delimiter-period")


def test_the_default_strategy_is_the_lossless_one() -> None:
    text = "ab cd ef gh ij"
    got = merge_text(Runs(), text, chunk_len=3)
    assert got.trace.strategy == "lopt" and STRATEGIES["lopt"].lossless
    assert got.encoding == Runs().encode(text)


class CallRecordingRunner(Runner):
    def __init__(self, backend: str = "serial", workers: int = 3) -> None:
        super().__init__(backend, workers)
        self.calls: list[list[str]] = []

    def __call__(self, engine: Encoder, texts: Sequence[str]) -> list[Encoding]:
        self.calls.append(list(texts))
        return super().__call__(engine, texts)


def test_merge_text_encodes_the_chunks_through_its_runner() -> None:
    runner = CallRecordingRunner()
    text = "ab cd ef gh ij"
    got = merge_text(Runs(), text, strategy="delimiter", chunk_len=3, runner=runner)
    assert runner.calls == [["ab cd", " ef", " gh", " ij"]]
    assert got.encoding == Runs().encode(text)


def test_default_chunk_len_follows_the_runners_backend() -> None:
    """processes: one chunk per worker; in-process backends: four (never below 2048). A text without
    a delimiter is one piece, so no worker process is started."""
    text = "a" * 6000
    procs = merge_text(Runs(), text, strategy="delimiter", runner=CallRecordingRunner("processes", 2))
    assert procs.trace.params["chunk_len"] == 3000
    threads = merge_text(Runs(), text, strategy="delimiter", runner=CallRecordingRunner("threads", 2))
    assert threads.trace.params["chunk_len"] == 2048


def test_the_listing_describes_the_lopt_prefix() -> None:
    from tokspec.fast.merge_engines import engines

    assert engines() == [("lopt:ENGINE", "any ENGINE through tokspec's lossless parallel merge (cuts where a "
                          "theorem proved for the engine's structure allows; else serial)")]


# -- the serial note and the attributes an lopt: engine exposes (the text users read) ---------------

class Unsafe(Runs):
    """Runs, declared not thread-safe (``auto`` then encodes the pieces serially)."""

    info = EngineInfo("toy:unsafe", "tokenizer", "toy", "1.0", None, thread_safe=False)


class Safe(Runs):
    info = EngineInfo("toy:safe", "tokenizer", "toy", "1.0", None, thread_safe=True)


SERIAL_NOTE = "pieces encoded serially: the engine declared not thread-safe"


@pytest.mark.parametrize(("runner", "engine", "noted"), [
    (Runner("auto", 2), Unsafe(), True),
    (Runner("auto", 1), Unsafe(), False),      # one worker: serial anyway, nothing to explain
    (Runner("threads", 2), Unsafe(), False),   # asked for explicitly: not auto's choice
    (Runner("serial", 2), Unsafe(), False),
    (Runner("auto", 2), Safe(), False),
])
def test_merge_text_notes_why_auto_encodes_serially(runner: Runner, engine: Encoder, noted: bool) -> None:
    text = "aa bb cc dd ee"
    got = merge_text(engine, text, strategy="delimiter", chunk_len=3, runner=runner)
    plain = merge_text(engine, text, strategy="delimiter", chunk_len=3)
    assert got.trace.notes == plain.trace.notes + ([SERIAL_NOTE] if noted else [])
    assert got.encoding == engine.encode(text)


def test_an_unchecked_engine_that_failed_the_check_is_noted_with_the_fault() -> None:
    from tokspec.concurrency import ConcurrencyFault, ThreadSafety

    engine = Runs()  # nothing declared: the remembered check result is what the note reports
    fault = ConcurrencyFault(("ab", "cde"), threads=4, index=1, kind="differs", detail="")
    engine._tokspec_thread_safety = ThreadSafety(False, "checked", fault)  # type: ignore[attr-defined]
    got = merge_text(engine, "aa bb", strategy="delimiter", chunk_len=3, runner=Runner("auto", 2))
    assert got.trace.notes[-1] == ("pieces encoded serially: the engine failed the concurrency check at "
                                   "load (4 threads over 2 texts: text 1 (3 chars) returned another "
                                   "result than alone)")
    assert LoptEncoder(engine, runner=Runner("auto", 2)).info.description.endswith(
        "; " + got.trace.notes[-1])


def test_lopt_engine_info_and_attributes_on_a_declared_unsafe_engine() -> None:
    from tokspec.concurrency import ThreadSafety
    from tokspec.fast import merge_lopt

    inner = Unsafe()
    runner = Runner("auto", 2)
    outer = LoptEncoder(inner, runner=runner, chunk_len=7)
    assert outer.inner is inner and outer.runner is runner and outer.chunk_len == 7
    assert outer.decision == merge_lopt.decision(inner)
    assert outer.safety == ThreadSafety(False, "declared")
    assert outer.info == EngineInfo(
        "lopt:toy:unsafe", "tokenizer", "toy", "1.0", None,
        f"lossless parallel merge over toy:unsafe; {outer.decision.describe()}; {SERIAL_NOTE}",
        thread_safe=False)
    serial = LoptEncoder(inner, runner=Runner("serial", 2))
    assert serial.info.description == f"lossless parallel merge over toy:unsafe; {serial.decision.describe()}"


@pytest.mark.parametrize(("inner", "declared"), [(Runs(), None), (Safe(), True), (Unsafe(), False)])
def test_lopt_engine_passes_the_declaration_through(inner: Encoder, declared: bool | None) -> None:
    from tokspec.concurrency import thread_safety

    outer = LoptEncoder(inner)
    assert outer.info.thread_safe is declared
    assert outer.safety == thread_safety(inner)
    assert outer.safety.source == ("checked" if declared is None else "declared")
    assert outer.runner.backend == "auto" and outer.runner.workers == Runner().workers


class Decoding(Runs):
    """Runs with the optional decoding attributes and an ``encode_ids``."""

    n_vocab = 12345
    special_tokens = {"<s>": 7}

    def decode(self, ids: Sequence[int]) -> str:
        return "".join(chr(i // 100) * (i % 100) for i in ids)

    def encode_ids(self, text: str) -> list[int]:
        return self.encode(text).ids


def test_lopt_engine_offers_exactly_what_its_inner_engine_offers() -> None:
    full = LoptEncoder(Decoding(), runner=Runner("serial", 1), chunk_len=3)
    assert full.n_vocab == 12345 and full.special_tokens == {"<s>": 7}
    assert full.decode == full.inner.decode  # type: ignore[attr-defined]
    text = "aaab bbcc cd"
    assert full.decode(full.encode(text).ids) == text  # type: ignore[attr-defined]
    assert list(full.encode_ids(text)) == list(Decoding().encode(text).ids)  # type: ignore[attr-defined]
    bare = LoptEncoder(Runs())
    for optional in ("decode", "special_tokens", "n_vocab", "encode_ids"):
        assert not hasattr(bare, optional), optional


def test_a_non_callable_encode_ids_is_not_offered() -> None:
    inner = Runs()
    inner.encode_ids = None  # type: ignore[attr-defined]
    assert not hasattr(LoptEncoder(inner), "encode_ids")
