"""fast/bpe_counting.py against reference/bpe_counting.py: appending, prepending, interval counts
and the split point, on tiny trained vocabularies (hypothesis) and on cl100k_base / o200k_base."""

from __future__ import annotations

import functools
import os
import random

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tokspec import load_engine
from tokspec.fast.bpe_counting import (AppendingCounter, CountingTables, IntervalCounter,
                                       PrependingCounter, SliceError, split_after)
from tokspec.fast.bpe_kernel import CompiledBPE
from tokspec.fuzz.strategies import trained_bpe_ranks
from tokspec.reference import bpe_counting as R
from tokspec.formats.vocab import load_named_tiktoken

ALPHABET = "ab cé"


@functools.lru_cache(maxsize=None)
def tiny(seed: int) -> tuple[dict[bytes, int], CountingTables]:
    ranks = trained_bpe_ranks(seed, alphabet="ab cé".encode(), merges=30)
    return ranks, CountingTables(CompiledBPE.from_ranks(ranks))


@functools.lru_cache(maxsize=None)
def real(name: str) -> CountingTables:
    return CountingTables(load_engine(f"fast:{name}").bpe)  # type: ignore[attr-defined]


def check_all(ranks: dict[bytes, int], tables: CountingTables, text: str) -> None:
    data = text.encode()
    want = R.prefix_counts(ranks, data)
    app = AppendingCounter(tables)
    assert app.extend(data).tolist() == want
    assert app.count == (want[-1] if want else 0) and len(app) == len(data)
    assert [tables.bpe.token_bytes(t) for t in app.tokens()] == __import__(
        "tokspec.reference.bpe_naive", fromlist=["_"]).bpe_pieces(data, ranks, shortcut=False) if data else True
    one = AppendingCounter(tables)
    assert [one.push(b) for b in data] == want
    pre = PrependingCounter(tables)
    assert pre.prepend(data).tolist() == R.suffix_counts(ranks, data)
    assert pre.count == (want[-1] if want else 0) and len(pre) == len(data)
    inter = IntervalCounter(tables, data)
    for i in range(len(data) + 1):
        for j in range(i, len(data) + 1):
            assert inter.count(i, j) == R.count_slice(ranks, data, i, j), (i, j)
    for n in range(0, 5):
        assert split_after(tables, text, n) == R.split_after(ranks, text, n), n


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 30), text=st.text(alphabet=ALPHABET, max_size=14))
@example(seed=0, text="")
@example(seed=1, text="aaaaaaaaaaaa")
@example(seed=2, text="ééé ab ab")
def test_hyp_tiny_vocab_equals_reference(seed: int, text: str) -> None:
    ranks, tables = tiny(seed)
    check_all(ranks, tables, text)


def test_piecewise_appending_and_prepending_equal_one_call() -> None:
    ranks, tables = tiny(3)
    data = "ab abé cab aab".encode() * 6  # 90 bytes: both counters outgrow their first 64
    app, pre = AppendingCounter(tables), PrependingCounter(tables)
    got = [int(c) for k in range(0, len(data), 5) for c in app.extend(data[k:k + 5])]
    assert got == R.prefix_counts(ranks, data)
    rev = []
    for k in range(len(data), 0, -7):
        rev += pre.prepend(data[max(0, k - 7):k]).tolist()
    assert rev == R.suffix_counts(ranks, data)
    assert pre.count == app.count == R.count_bytes(ranks, data)
    one = AppendingCounter(tables)
    assert [one.push(b) for b in data] == R.prefix_counts(ranks, data)
    assert one.tokens() == app.tokens() and len(one) == len(data) == len(pre)


def test_bad_slices_and_budgets_are_named_errors() -> None:
    _, tables = tiny(0)
    inter = IntervalCounter(tables, b"abc")
    for i, j in ((2, 1), (-1, 2), (0, 4)):
        with pytest.raises(SliceError, match=r"\(i, j\)="):
            inter.count(i, j)
    with pytest.raises(SliceError, match="n=-1"):
        split_after(tables, "abc", -1)
    assert inter.count(1, 1) == 0


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_real_vocab_short_texts_equal_reference(name: str) -> None:
    ranks, tables = load_named_tiktoken(name).ranks, real(name)
    for text in ("xhr ease déjà", "\uff41\uff41\uff41\u1792\u1792", "日本語😀a"):
        check_all(ranks, tables, text)


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_real_vocab_counts_equal_backtracking_encoder(name: str) -> None:
    """Against the whole-text encoder (``CompiledBPE.encode_bytes``) on a multilingual text."""
    tables = real(name)
    enc = tables.bpe.encode_bytes
    text = ("Chunk me: naïve café, 日本語のテキスト, ࿋ ᚠᛇ ａａａ ធធ 😀👍🏽 " * 6).encode()
    counts = AppendingCounter(tables).extend(text)
    suffix = PrependingCounter(tables).prepend(text)
    inter = IntervalCounter(tables, text)
    rng = random.Random(0)
    for _ in range(60):
        i = rng.randrange(len(text))
        j = rng.randrange(i, len(text) + 1)
        assert inter.count(i, j) == len(enc(text[i:j]))
        assert counts[j - 1] == len(enc(text[:j])) if j else True
        assert suffix[len(text) - 1 - i] == len(enc(text[i:]))


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("TOKSPEC_SLOW") != "1", reason="1 MB texts: TOKSPEC_SLOW=1")
@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_megabyte_text_equals_backtracking_encoder(name: str) -> None:
    from tokspec.corpus import build_corpus
    tables = real(name)
    enc = tables.bpe.encode_bytes
    parts = build_corpus()
    text = "".join(parts).encode()
    while len(text) < 1_000_000:
        text += text
    text = text[:1_000_000]
    while True:  # cut at a character boundary
        try:
            text.decode()
            break
        except UnicodeDecodeError:
            text = text[:-1]
    counts = AppendingCounter(tables).extend(text)
    suffix = PrependingCounter(tables).prepend(text)
    inter = IntervalCounter(tables, text)
    assert counts[-1] == suffix[-1] == len(enc(text)) == inter.count(0, len(text))
    rng = random.Random(1)
    for _ in range(300):
        i = rng.randrange(len(text))
        j = min(len(text), i + rng.choice([10, 1000, 100_000, 1_000_000]))
        assert inter.count(i, j) == len(enc(text[i:j]))
        assert counts[j - 1] == len(enc(text[:j]))
        assert suffix[len(text) - 1 - i] == len(enc(text[i:]))
    s = split_after(tables, text.decode(), 5000)
    assert len(enc(text.decode()[:s].encode())) <= 5000 < len(enc(text.decode()[:s + 1].encode()))


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 30), text=st.text(alphabet=ALPHABET, max_size=16), cut=st.integers(0, 16))
@example(seed=0, text="ab  ab c", cut=3)
def test_hyp_pretokenized_slice_counts_theorem_c4(seed: int, text: str, cut: int) -> None:
    """count_pieces over the pretokens of a slice (as byte ranges of the whole text) equals the
    reference's pretokenized count of the slice on its own."""
    import regex
    ranks, tables = tiny(seed)
    pattern = regex.compile(r"\s+(?!\S)|\s+|\S+")
    i = min(cut, len(text))
    data = text.encode()
    inter = IntervalCounter(tables, data)
    base = len(text[:i].encode())
    bounds = [base]
    for m in pattern.finditer(text[i:]):
        bounds.append(base + len(text[i:i + m.end()].encode()))
    assert inter.count_pieces(bounds) == R.count_pretokenized(ranks, pattern, text[i:])


@settings(max_examples=60, deadline=None)
@given(data=st.binary(max_size=48), cut=st.integers(0, 48))
@example(data="\uff41\uff41\uff41".encode()[1:], cut=2)
def test_hyp_arbitrary_bytes_o200k(data: bytes, cut: int) -> None:
    """Any bytes (not only UTF-8): every prefix, suffix and slice from ``cut`` on o200k_base."""
    tables = real("o200k_base")
    enc = tables.bpe.encode_bytes
    counts = AppendingCounter(tables).extend(data).tolist()
    assert counts == [len(enc(data[:e])) for e in range(1, len(data) + 1)]
    assert PrependingCounter(tables).prepend(data).tolist() == [
        len(enc(data[s:])) for s in range(len(data) - 1, -1, -1)]
    inter, i = IntervalCounter(tables, data), min(cut, len(data))
    assert [inter.count(i, j) for j in range(i, len(data) + 1)] == [len(enc(data[i:j])) for j in range(i, len(data) + 1)]
