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
