"""Small pieces behind the merge strategies and the ``lopt:`` engines, each against its definition:
the chunk plumbing (parameter checks, the published split, slicing with and without ids/pieces,
the longest-token bound, checked against ``tokspec.spec``'s own reading of the vocabulary),
the serial default of ``encode_many``, ``rule_for`` = the structural decision, the untraced
``encode_arrays`` path without a runner, and what the ``lopt:`` provider lists and delegates.
"""

from __future__ import annotations

import re

import pytest

from tokspec import Encoder, Encoding, EngineInfo, list_engines, load_engine
from tokspec.fast import merge_lopt
from tokspec.fast._chunking import (Chunk, MergeError, check_positive, encode_spans, fixed_spans,
                                    keep_slices, max_token_chars, serial_encode_many, shift)
from tokspec.spec.merge_published import max_token_chars as spec_max_token_chars
from tokspec.fast.merge_engines import LoptEncoder, engines


class Pieces(Encoder):
    """One token per character with a readable piece per id."""

    info = EngineInfo("toy:pieces", "tokenizer", "toy", "0", None)

    def _encode(self, text: str) -> Encoding:
        return Encoding.of([ord(c) for c in text], [(i, i + 1) for i in range(len(text))])

    def token_piece(self, token_id: int) -> str:
        return f"<{chr(token_id)}>"


def test_serial_encode_many_encodes_each_text_in_order() -> None:
    engine = Pieces()
    texts = ["ab", "", "cde"]
    assert serial_encode_many(engine, texts) == [engine.encode(t) for t in texts]
    chunks = encode_spans(engine, "abcdef", [(0, 2), (2, 2), (2, 6)])  # the default encode_many
    assert [c.encoding for c in chunks] == [engine.encode(t) for t in ("ab", "", "cdef")]


def test_rule_for_is_the_structural_decision() -> None:
    for engine in (load_engine("tiktoken:cl100k_base"), Pieces()):
        dec = merge_lopt.decision(engine)
        assert merge_lopt.rule_for(engine) == (dec.family, dec.rule)
    assert merge_lopt.rule_for(load_engine("tiktoken:cl100k_base"))[1] is not None
    assert merge_lopt.rule_for(Pieces())[1] is None  # unknown structure: serial


def test_encode_arrays_without_a_runner_encodes_the_pieces_serially() -> None:
    engine = load_engine("tiktoken:cl100k_base")
    text = "Pieces between sound cuts are encoded one by one here. " * 8
    rule = merge_lopt.rule_for(engine)[1]
    assert rule is not None and merge_lopt.find_cuts(text, rule, 40)  # there are pieces
    assert merge_lopt.encode_arrays(engine, text, chunk_len=40).same_as(engine.encode_arrays(text))


def test_lopt_provider_lists_its_name_pattern_and_delegates_pieces() -> None:
    listed = engines()
    assert [name for name, _ in listed] == ["lopt:ENGINE"]
    assert all(desc for _, desc in listed)
    assert ("lopt:ENGINE", listed[0][1]) in list_engines()
    inner = Pieces()
    outer = LoptEncoder(inner)
    assert [outer.token_piece(i) for i in (97, 0x4E2D)] == ["<a>", "<中>"]


def test_check_positive_accepts_exactly_the_documented_values() -> None:
    for value in (1, 7):
        check_positive("n", value)
    check_positive("n", 0, allow_zero=True)
    check_positive("n", None, optional=True)
    for value, kw, low in ((0, {}, 1), (-1, {"allow_zero": True}, 0), (True, {}, 1), (2.0, {}, 1),
                           (None, {}, 1), (None, {"allow_zero": True}, 0), ("3", {"optional": True}, 1)):
        with pytest.raises(MergeError, match=f"^n must be an int >= {low}, got n={re.escape(repr(value))}$"):
            check_positive("n", value, **kw)  # type: ignore[arg-type]


def test_fixed_spans_are_the_published_split() -> None:
    for n in range(0, 30):
        for chunk_len in range(1, 8):
            for overlap in range(0, 5):
                want = [(k * chunk_len, min(n, k * chunk_len + chunk_len + overlap))
                        for k in range(n) if k * chunk_len < n] or [(0, 0)]
                assert fixed_spans(n, chunk_len, overlap) == want


def test_shift_and_keep_slices_carry_ids_and_pieces_only_when_every_chunk_has_them() -> None:
    full = Encoding.of([1, 2, 3], [(0, 1), (1, 2), (2, 4)], ["a", "b", "cd"])
    spans_only = Encoding(None, ((0, 2), (2, 4)))
    no_pieces = Encoding.of([5, 6], [(0, 1), (1, 4)])
    assert shift(full, 3, 1).pieces == ("b", "cd")
    assert shift(full, 3, 1) == Encoding.of([2, 3], [(4, 5), (5, 7)])
    assert shift(spans_only, 2, 0, 1) == Encoding(None, ((2, 4),))
    both = keep_slices([Chunk(0, 4, full), Chunk(4, 8, full)], [(0, 2), (1, None)])
    assert both == Encoding.of([1, 2, 2, 3], [(0, 1), (1, 2), (5, 6), (6, 8)])
    assert both.pieces == ("a", "b", "b", "cd")
    mixed = keep_slices([Chunk(0, 4, full), Chunk(4, 8, no_pieces)], [(0, 1), (0, None)])
    assert mixed == Encoding.of([1, 5, 6], [(0, 1), (4, 5), (5, 8)]) and mixed.pieces is None
    spans = keep_slices([Chunk(0, 4, full), Chunk(4, 8, spans_only)], [(0, 1), (1, None)])
    assert spans.ids is None and spans.offsets == ((0, 1), (6, 8))
    assert keep_slices([Chunk(0, 4, full)], [(2, 1)]) == Encoding.of([], [])  # lo > hi keeps nothing


# o200k_base: the one named vocabulary read from a .tiktoken.gz file first (cl100k's plain file comes first)
@pytest.mark.parametrize("name", ["tiktoken:cl100k_base", "tiktoken:o200k_base", "hf:bert-base-uncased",
                                  "hf:mon-unigram"])
def test_max_token_chars_of_a_named_vocabulary(name: str) -> None:
    engine = load_engine(name)
    bound, source = max_token_chars(engine)
    assert bound == spec_max_token_chars(engine)
    assert source == f"vocabulary sha256 {engine.info.vocab_sha256[:12]}"
    assert max_token_chars(engine) == (bound, source)  # cached: same answer


def test_max_token_chars_of_an_unknown_vocabulary_is_the_default() -> None:
    assert max_token_chars(Pieces()) == (128, "default (vocabulary unknown)")
    unnamed = Pieces()
    unnamed.info = EngineInfo("toy:unnamed", "tokenizer", "toy", "0", "0" * 64)
    assert max_token_chars(unnamed) == (128, "default (vocabulary unknown)")


@pytest.mark.parametrize("name", ["cl100k_base", "bert-base-uncased"])
def test_max_token_chars_refuses_a_vocabulary_file_that_is_not_the_named_one(
        name: str, monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The bound is read only from the file whose sha256 is the named vocabulary's: a different
    file at that path (here a one-token forgery) is a named error, not a silently wrong bound."""
    from tokspec.formats import vocab
    from tokspec.errors import VocabularyError
    from tokspec.fast._chunking import _named_max_token_chars
    suffix = ".tiktoken" if name == "cl100k_base" else ".json"
    forged = tmp_path / f"forged{suffix}"
    forged.write_text("YQ== 0\n" if suffix == ".tiktoken" else '{"model": {"vocab": {"a": 0}}}', encoding="utf-8")
    monkeypatch.setattr(vocab, "named_path", lambda n: forged)
    with pytest.raises(VocabularyError, match=f"has sha256 .*, expected {vocab.NAMED_FILES[name].sha256}"):
        _named_max_token_chars(vocab.NAMED_FILES[name].sha256)


def _claiming(sha: str | None):  # type: ignore[no-untyped-def]
    """An engine stand-in that claims vocabulary ``sha`` (all max_token_chars reads)."""
    from types import SimpleNamespace
    return SimpleNamespace(info=SimpleNamespace(name="claims-a-vocabulary", vocab_sha256=sha))


# one name per file kind: plain .tiktoken, .tiktoken.gz, WordPiece dict vocab, Unigram [piece, score] list
@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base", "bert-base-uncased", "mon-unigram"])
def test_named_bound_is_read_from_each_kind_of_named_file(name: str) -> None:
    """Called directly (no cache in between): the longest entry of the named file, as
    ``tokspec.spec`` reads it independently (tiktoken ranks, tokenizer.json dict or list vocab)."""
    from tokspec.formats import vocab
    from tokspec.fast._chunking import _named_max_token_chars
    sha = vocab.NAMED_FILES[name].sha256
    assert _named_max_token_chars(sha) == spec_max_token_chars(_claiming(sha))


def test_a_vocab_txt_only_vocabulary_has_no_named_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    """A vocabulary known only as a WordPiece vocab.txt ("<name>.vocab") is not read as a
    tokenizer.json: no named bound, so max_token_chars gives the default."""
    from tokspec.formats import vocab
    from tokspec.fast import _chunking
    sha = vocab.NAMED_FILES["bert-base-uncased.vocab"].sha256
    assert all(e.sha256 != sha for n, e in vocab.NAMED_FILES.items() if not n.endswith(".vocab"))
    assert _chunking._named_max_token_chars(sha) is None
    monkeypatch.setattr(_chunking, "_MAX_TOKEN_CACHE", {})
    assert max_token_chars(_claiming(sha)) == (128, "default (vocabulary unknown)")


def test_max_token_chars_computes_a_named_bound_once_then_caches_it(monkeypatch: pytest.MonkeyPatch) -> None:
    from tokspec.formats import vocab
    from tokspec.fast import _chunking
    sha = vocab.NAMED_FILES["bert-base-uncased"].sha256
    want = (spec_max_token_chars(_claiming(sha)), f"vocabulary sha256 {sha[:12]}")
    monkeypatch.setattr(_chunking, "_MAX_TOKEN_CACHE", {})  # as in a fresh process
    assert max_token_chars(_claiming(sha)) == want
    assert _chunking._MAX_TOKEN_CACHE == {sha: want[0]}

    def no_second_read(sha256: str) -> None:
        raise AssertionError("the vocabulary was read again")

    monkeypatch.setattr(_chunking, "_named_max_token_chars", no_second_read)
    assert max_token_chars(_claiming(sha)) == want


class SpacePieces(Pieces):
    """One token per character, declaring the ``space`` rule (every space is a sound cut)."""

    merge_family = "space"


@pytest.mark.parametrize("backend", ["processes", "threads"])
def test_lopt_engine_sizes_its_chunks_for_the_runners_backend(backend: str) -> None:
    """Without a chunk length, ``lopt:`` takes ``default_chunk_len`` for the backend the runner
    resolves to (one chunk per worker for processes, four otherwise): the pieces it hands the
    runner are those of ``find_cuts`` at that length."""
    from tokspec.fast.parallel import Runner, default_chunk_len

    inner = SpacePieces()
    text = "word " * 2000
    runner = Runner(backend, 2)
    handed: list[list[str]] = []

    def serial_arrays(engine: Encoder, texts: list[str]) -> list:  # type: ignore[type-arg]
        handed.append(list(texts))
        return [engine.encode_arrays(t) for t in texts]

    runner.arrays = serial_arrays  # type: ignore[method-assign]  # no pool is started
    assert LoptEncoder(inner, runner=runner).encode_arrays(text).same_as(inner.encode_arrays(text))
    rule = merge_lopt.decision(inner).rule
    assert rule is not None
    bounds = [0, *merge_lopt.find_cuts(text, rule, default_chunk_len(len(text), 2, backend)), len(text)]
    assert handed == [[text[a:b] for a, b in zip(bounds, bounds[1:])]]


def test_a_runner_returning_the_wrong_number_of_encodings_is_an_error_not_a_shorter_merge() -> None:
    engine = Pieces()

    def drops_the_last(eng: Encoder, texts: list[str]) -> list[Encoding]:
        return [eng.encode(t) for t in texts][:-1]

    with pytest.raises(ValueError, match="zip"):
        encode_spans(engine, "abcdef", [(0, 2), (2, 4), (4, 6)], drops_the_last)
    chunks = encode_spans(engine, "abcdef", [(0, 3), (3, 6)])
    for slices in ([(0, None)], [(0, None)] * 3):  # one slice per chunk, no fewer, no more
        with pytest.raises(ValueError, match="zip"):
            keep_slices(chunks, slices)
