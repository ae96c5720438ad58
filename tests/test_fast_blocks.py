"""``fast:`` BPE engines encode a long text a block at a time (``FastBpeEncoder._ids_of_span``).

Contract: between cuts of theorem M2's rule (a space after a letter), about ``BLOCK`` characters
apart and never within ``BLOCK`` of either end of the span, the ids of the blocks concatenated are
the ids of the span in one piece; a span with no such cut, or shorter than ``2 * BLOCK``, is one
block. The blocks are watched (which spans the kernels are given), since ids cannot show them.
Most tests shrink ``BLOCK`` so that short texts have many blocks (fast in interpreted mode too);
one compiled test keeps the real size on a text past 1 MB and checks it against tiktoken.
``sharing_tables``: a second engine on the same tables with state of its own.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokspec import load_engine
from tokspec._jit import JIT_ENABLED
from tokspec.errors import InvalidTextError

_WORDS = ["the", "words", "Été", "中文字", "😀x", "12345", "don't", "  ", "\n", "a", "ß", "(x)", "\t", "def"]


def _text(n_words: int, seed: int) -> str:
    rng = random.Random(seed)
    return " ".join(rng.choice(_WORDS) for _ in range(n_words))


@pytest.fixture(scope="module")
def cl100k() -> object:
    return load_engine("fast:cl100k_base")


@pytest.fixture()
def blocks(cl100k: object, monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    """The spans given to ``_ids_of_block``, with BLOCK = ASCII_BLOCK = 40 characters."""
    import tokspec.fast.bpe_encoder as fe

    seen: list[tuple[int, int]] = []
    real = fe.FastBpeEncoder._ids_of_block
    monkeypatch.setattr(fe, "BLOCK", 40)
    monkeypatch.setattr(fe, "ASCII_BLOCK", 40)
    monkeypatch.setattr(fe.FastBpeEncoder, "_ids_of_block",
                        lambda self, text, a, b: seen.append((a, b)) or real(self, text, a, b))
    return seen


def _one_piece(engine: object, text: str) -> list[int]:
    """The ids with no blocks: the UTF-8 path of a short text (below FILL_MIN)."""
    return engine.encode_ids(text).tolist()  # type: ignore[attr-defined, no-any-return]


def test_blocks_are_cut_at_spaces_after_letters_and_give_the_ids_of_one_piece(
        cl100k: object, blocks: list[tuple[int, int]]) -> None:
    for seed in range(6):
        text = _text(120, seed)
        want = _one_piece(cl100k, text)
        blocks.clear()
        got = cl100k.encode_ids_range(text, 0, len(text))  # type: ignore[attr-defined]
        assert got.dtype == np.int64 and got.tolist() == want, seed
        assert len(blocks) >= 3, (seed, blocks)  # several blocks, contiguous, covering the span
        assert blocks[0][0] == 0 and blocks[-1][1] == len(text)
        assert all(a[1] == b[0] for a, b in zip(blocks, blocks[1:]))
        for a, _ in blocks[1:]:  # each cut: a space after a letter, 40 or more from either end
            assert text[a] == " " and text[a - 1].isalpha(), (seed, a, text[a - 1:a + 1])
            assert 40 <= a <= len(text) - 40
        windows = [a // 40 for a, _ in blocks[1:]]  # each cut in [target, target + 40) of its own
        assert windows == sorted(set(windows)), (seed, blocks)


def test_a_span_inside_a_text_is_cut_within_the_span(cl100k: object, blocks: list[tuple[int, int]]) -> None:
    text = _text(200, 11)
    for start, end in ((0, 500), (37, 640), (250, len(text)), (101, 180), (5, 84)):
        want = _one_piece(cl100k, text[start:end])
        blocks.clear()
        assert cl100k.encode_ids_range(text, start, end).tolist() == want, (start, end)  # type: ignore[attr-defined]
        assert blocks[0][0] == start and blocks[-1][1] == end
        assert all(start + 40 <= a <= end - 40 for a, _ in blocks[1:])
    blocks.clear()
    cl100k.encode_ids_range(text, 5, 84)  # type: ignore[attr-defined]  # under 2 * BLOCK: one block
    assert blocks == [(5, 84)]
    blocks.clear()
    cl100k.encode_ids_range(text, 5, 85)  # type: ignore[attr-defined]  # 2 * BLOCK: targets 45 only
    assert len(blocks) <= 2


def test_a_span_without_a_sound_cut_is_one_block(cl100k: object, blocks: list[tuple[int, int]]) -> None:
    for text in ("中文字" * 80, "a" * 300, "1 2 3 " * 60, ". " * 150, "ab\n" * 100, "a\n" * 150):
        blocks.clear()
        assert cl100k.encode_ids_range(text, 0, len(text)).tolist() == _one_piece(cl100k, text)  # type: ignore[attr-defined]
        assert blocks == [(0, len(text))], text[:9]


def test_each_target_takes_the_first_cut_within_block_of_it(cl100k: object, blocks: list[tuple[int, int]]) -> None:
    # BLOCK 40: targets 40, 80, 120, ... before len - 40, each searched over [target, target + 40)
    text = "x" * 45 + " " + "1" * 50 + "b" + " " + "2" * 200  # letter-spaces at 45 and 97
    assert cl100k.encode_ids_range(text, 0, len(text)).tolist() == _one_piece(cl100k, text)  # type: ignore[attr-defined]
    assert [a for a, _ in blocks[1:]] == [45, 97]
    blocks.clear()
    text = "x" * 45 + " " + "1" * 80 + "b" + " " + "2" * 200  # 127: past 80's window, in 120's
    assert cl100k.encode_ids_range(text, 0, len(text)).tolist() == _one_piece(cl100k, text)  # type: ignore[attr-defined]
    assert [a for a, _ in blocks[1:]] == [45, 127]
    blocks.clear()
    text = "2" * 90 + "b" + " " + "2" * 28  # 91: past the last target's window, [40, 80)
    assert cl100k.encode_ids_range(text, 0, len(text)).tolist() == _one_piece(cl100k, text)  # type: ignore[attr-defined]
    assert blocks == [(0, 120)]


def test_an_ascii_text_is_cut_into_ascii_blocks(cl100k: object, blocks: list[tuple[int, int]],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """A text whose every character is ASCII, or all but at most one in 256 of a sample
    (``bpe_encoder._mostly_ascii``), is cut about ``ASCII_BLOCK`` characters apart (its blocks each
    take one fused pass, ``_bpe_ascii``: fewer, longer calls), any other text about ``BLOCK`` apart;
    the ids are one piece's either way. A span is judged over the span."""
    import tokspec.fast.bpe_encoder as fe

    monkeypatch.setattr(fe, "ASCII_BLOCK", 200)
    ascii_text = _text(400, 8).encode("ascii", "ignore").decode()
    assert ascii_text.isascii() and len(ascii_text) > 1000
    sparse = ascii_text[:-1] + "\u00e9"  # one non-ASCII character, at the end
    dense = "".join(ascii_text[k:k + 10] + "\u00e9" for k in range(0, len(ascii_text), 10))
    for text, apart in ((ascii_text, 200), (sparse, 200), (dense, 40)):
        blocks.clear()
        assert cl100k.encode_ids_range(text, 0, len(text)).tolist() == _one_piece(cl100k, text)  # type: ignore[attr-defined]
        cuts = [a for a, _ in blocks[1:]]
        windows = [a // apart for a in cuts]  # one cut in each window [k * apart, (k + 1) * apart)
        assert windows == list(range(1, len(text) // apart)), (apart, cuts)
    blocks.clear()  # a span of the dense text
    cl100k.encode_ids_range(dense, 0, 1000)  # type: ignore[attr-defined]
    assert [a // 40 for a, _ in blocks[1:]] == list(range(1, 1000 // 40 - 1))


@pytest.mark.skipif(not JIT_ENABLED, reason="a 2.2 MB text: compiled kernels only (the interpreted "
                    "ones are checked on the same code path by the tests above, with small blocks)")
def test_a_long_ascii_text_in_real_ascii_blocks_is_tiktokens(cl100k: object, monkeypatch: pytest.MonkeyPatch) -> None:
    import tokspec.fast.bpe_encoder as fe
    from tokspec.app.bench.fast import english

    text = english(2 * fe.ASCII_BLOCK + 200_000, seed=3)
    assert text.isascii() and len(text) > 2 * fe.ASCII_BLOCK
    seen: list[tuple[int, int]] = []
    real = fe.FastBpeEncoder._ids_of_block
    monkeypatch.setattr(fe.FastBpeEncoder, "_ids_of_block",
                        lambda self, t, a, b: seen.append((a, b)) or real(self, t, a, b))
    got = cl100k.encode_ids(text).tolist()  # type: ignore[attr-defined]
    assert len(seen) == 2 and seen[0][1] == seen[1][0] and seen[-1][1] == len(text)
    assert got == load_engine("tiktoken:cl100k_base").library_encoding.encode_ordinary(text)  # type: ignore[attr-defined]


def test_a_lone_surrogate_in_a_later_block_is_named_as_in_one_piece(
        cl100k: object, blocks: list[tuple[int, int]], monkeypatch: pytest.MonkeyPatch) -> None:
    import tokspec.fast.bpe_encoder as fe

    text = _text(150, 3)
    bad = text[:400] + "\udc80" + text[400:]
    with pytest.raises(InvalidTextError, match="at index 400;"):
        cl100k.encode_ids_range(bad, 0, len(bad))  # type: ignore[attr-defined]
    assert len(blocks) >= 2  # it was reached block by block
    monkeypatch.setattr(fe, "FILL_MIN", 100)  # encode_ids through the blocks too
    blocks.clear()
    with pytest.raises(InvalidTextError, match="at index 400;"):
        cl100k.encode_ids(bad)  # type: ignore[attr-defined]
    assert len(blocks) >= 2
    blocks.clear()
    assert cl100k.encode_ids(text).tolist() == cl100k.encode_ids_range(text, 0, len(text)).tolist()  # type: ignore[attr-defined]


def test_a_pattern_without_a_rule_is_never_cut(cl100k: object, blocks: list[tuple[int, int]]) -> None:
    from tokspec.fast._blocks import cut_rule

    assert cut_rule("no such pattern") is None
    other = cl100k.sharing_tables()  # type: ignore[attr-defined]
    other.pattern = "no such pattern"  # (its Peek2 kernel was fixed when it was made)
    other._cut_rule = None  # not decided yet for this pattern
    text = _text(150, 5)
    assert other._block_cuts(text, 0, len(text)) == [] and other._cut_rule is False
    assert other.encode_ids_range(text, 0, len(text)).tolist() == _one_piece(cl100k, text)
    assert blocks == [(0, len(text))]


def test_the_rule_is_m2s_for_every_peek2_pattern() -> None:
    from tokspec.fast._blocks import cut_rule
    from tokspec.fast.merge_rules import RULES, decide
    from tokspec.fast.pretok_peek2 import PATTERN_NAMES

    for pattern in PATTERN_NAMES:  # every pattern a fast: BPE engine can have
        assert decide({"format": "regex-bpe", "pattern": pattern}).rule is RULES["space-after-letter"], pattern
        assert cut_rule(pattern) is RULES["space-after-letter"], pattern
    for name in ("fast:cl100k_base", "fast:o200k_base"):
        engine = load_engine(name)
        engine._block_cuts("", 0, 0)  # type: ignore[attr-defined]
        assert engine._cut_rule is RULES["space-after-letter"], name  # type: ignore[attr-defined]


@pytest.mark.skipif(not JIT_ENABLED, reason="a 1.3 MB text: compiled kernels only (the interpreted "
                    "ones are checked on the same code path by the tests above, with small blocks)")
def test_a_long_text_in_real_blocks_is_tiktokens(cl100k: object, monkeypatch: pytest.MonkeyPatch) -> None:
    import tokspec.fast.bpe_encoder as fe

    text = _text(360_000, 21)
    assert len(text) > 10 * fe.BLOCK > 1_000_000
    seen: list[tuple[int, int]] = []
    real = fe.FastBpeEncoder._ids_of_block
    monkeypatch.setattr(fe.FastBpeEncoder, "_ids_of_block",
                        lambda self, t, a, b: seen.append((a, b)) or real(self, t, a, b))
    got = cl100k.encode_ids(text).tolist()  # type: ignore[attr-defined]
    assert len(seen) >= 9 and seen[-1][1] == len(text)
    assert got == list(load_engine("tiktoken:cl100k_base").encode(text).ids or ())
    arrays = cl100k.encode_arrays(text)  # type: ignore[attr-defined]
    assert arrays.ids.tolist() == got
    monkeypatch.setattr(fe, "BLOCK", 1 << 40)  # one piece
    assert got == cl100k.encode_ids(text).tolist()  # type: ignore[attr-defined]
    assert arrays.same_as(cl100k.encode_arrays(text))  # type: ignore[attr-defined]


class _LyingStr(str):
    """A str whose methods lie: the blocks must be its stored characters."""

    def __getitem__(self, key: object) -> str:  # type: ignore[override]
        return "zzz"

    def __len__(self) -> int:
        return 3


def test_encode_arrays_of_a_long_text_shifts_each_blocks_offsets(
        cl100k: object, monkeypatch: pytest.MonkeyPatch) -> None:
    import tokspec.fast.bpe_encoder as fe

    texts = [_text(130, seed) for seed in range(5)] + ["中文字" * 80, "x" * 45 + " " + "1" * 80 + "b " + "2" * 200]
    want = [cl100k.encode_arrays(t) for t in texts]  # type: ignore[attr-defined]  # BLOCK 128K: one piece
    seen: list[int] = []
    real = fe.FastBpeEncoder._arrays_of_block
    monkeypatch.setattr(fe, "BLOCK", 40)
    monkeypatch.setattr(fe.FastBpeEncoder, "_arrays_of_block",
                        lambda self, t: seen.append(len(t)) or real(self, t))
    for text, expected in zip(texts, want):
        seen.clear()
        got = cl100k.encode_arrays(text)  # type: ignore[attr-defined]
        assert got.same_as(expected), text[:20]
        assert got.ids.dtype == got.starts.dtype == got.ends.dtype == np.int64
        assert sum(seen) == len(text)
        assert len(seen) >= (1 if text.startswith("中") else 3), (text[:9], seen)
        assert cl100k.encode(text) == expected.to_encoding()  # type: ignore[attr-defined]  # encode() too
    seen.clear()
    lying = _LyingStr(texts[0])
    assert cl100k.encode_arrays(lying).same_as(want[0])  # type: ignore[attr-defined]
    assert sum(seen) == len(texts[0]) and len(seen) >= 3
    with pytest.raises(InvalidTextError, match="at index 300;"):
        cl100k.encode_arrays(texts[1][:300] + "\ud800" + texts[1][300:])  # type: ignore[attr-defined]


_PARTS = ["a", "b ", " ", "  ", "\n", "\r\n", "1", "234", "é", "e\u0301", "中文", "😀", "'s", "'S", "'ll",
          "\u00a0", "ǅ", "Ab", "x" * 20, "!?", "\t", " ("]


@settings(max_examples=150, deadline=None)
@given(parts=st.lists(st.sampled_from(_PARTS), max_size=60), block=st.integers(1, 12),
       encoding=st.sampled_from(["fast:cl100k_base", "fast:o200k_base"]))
def test_hyp_blocks_of_any_size_give_the_ids_and_offsets_of_one_piece(parts: list[str], block: int,
                                                                      encoding: str) -> None:
    """Theorem M2 through the blocks: with BLOCK from 1 character, a cut lands at nearly every
    space after a letter (hypothesis draws letters, marks, contractions, digits, no-break
    spaces, CR LF and CJK around them)."""
    import tokspec.fast.bpe_encoder as fe

    engine = load_engine(encoding)
    text = "".join(parts)
    want_ids = engine.encode_ids(text).tolist()  # type: ignore[attr-defined]  # short: no blocks
    want = engine.encode_arrays(text)
    saved = fe.BLOCK
    try:
        fe.BLOCK = block
        assert engine.encode_ids_range(text, 0, len(text)).tolist() == want_ids  # type: ignore[attr-defined]
        assert engine.encode_arrays(text).same_as(want)
        if len(text) > 4:
            inner = text[2:-2]
            assert engine.encode_ids_range(text, 2, len(text) - 2).tolist() == \
                engine.encode_ids(inner).tolist()  # type: ignore[attr-defined]
    finally:
        fe.BLOCK = saved


def test_an_engines_own_block_size_overrides_block(cl100k: object, monkeypatch: pytest.MonkeyPatch) -> None:
    import tokspec.fast.bpe_encoder as fe
    from tokspec.fuzz.wrapped import BLOCK_CHARS, fast_blocks_o200k

    assert cl100k.block is None  # type: ignore[attr-defined]  # the module's BLOCK
    other = cl100k.sharing_tables()  # type: ignore[attr-defined]
    other.block = 40
    seen: list[tuple[int, int]] = []
    real = fe.FastBpeEncoder._ids_of_block
    monkeypatch.setattr(fe.FastBpeEncoder, "_ids_of_block",
                        lambda self, t, a, b: seen.append((a, b)) or real(self, t, a, b))
    text = _text(150, 2)
    want = _one_piece(cl100k, text)
    assert other.encode_ids_range(text, 0, len(text)).tolist() == want
    assert len(seen) >= 3 and all(40 <= a <= len(text) - 40 for a, _ in seen[1:])
    seen.clear()
    assert cl100k.encode_ids_range(text, 0, len(text)).tolist() == want  # type: ignore[attr-defined]
    assert seen == [(0, len(text))]  # BLOCK (128K) for the engine without its own
    seen.clear()
    fuzzed = fast_blocks_o200k()  # the fuzzing configuration (tokspec.fuzz.wrapped)
    assert fuzzed.block == BLOCK_CHARS == 32 and fuzzed.info.name == "fast:o200k_base (32-character blocks)"
    o200k = load_engine("fast:o200k_base")
    assert fuzzed.bpe.pieces is o200k.bpe.pieces  # type: ignore[attr-defined]
    assert fuzzed.encode_ids_range(text, 0, len(text)).tolist() == o200k.encode_ids(text).tolist()  # type: ignore[attr-defined]
    assert len(seen) >= 3


def test_sharing_tables_shares_the_tables_and_not_the_state(cl100k: object) -> None:
    other = cl100k.sharing_tables()  # type: ignore[attr-defined]
    mine, theirs = cl100k.bpe, other.bpe  # type: ignore[attr-defined]
    assert theirs is not mine
    for name in ("trie", "pairs", "pieces", "level3"):
        assert getattr(theirs, name) is getattr(mine, name), name
    assert theirs.arrays["tok_len"] is mine.arrays["tok_len"]
    assert theirs.memo is not mine.memo and not np.shares_memory(theirs.memo, mine.memo)
    assert theirs._tables[-1] is not mine._tables[-1]  # this thread's store: one each
    text = _text(300, 8)
    assert other.encode_ids(text).tolist() == cl100k.encode_ids(text).tolist()  # type: ignore[attr-defined]
    assert other.encode(text) == cl100k.encode(text)  # type: ignore[attr-defined]
    assert other.info == cl100k.info  # type: ignore[attr-defined]


@pytest.mark.parametrize("encoding", ["cl100k_base", "o200k_base"])
def test_the_fuzzed_ids_blocks_engines_equal_tiktoken_ids_and_offsets(encoding: str) -> None:
    """``tokspec.fuzz.wrapped.fast_ids_blocks_*``: encode_ids' long-text path on 32-character
    blocks, offsets derived from the ids; ids and offsets equal tiktoken's (multi-byte characters
    split across tokens included), and a lone surrogate is refused as encode_ids refuses it."""
    from tokspec.errors import InvalidTextError
    from tokspec.fuzz import wrapped

    engine = getattr(wrapped, f"fast_ids_blocks_{encoding.split('_')[0]}")()
    truth = load_engine(f"tiktoken:{encoding}")
    for text in ("", "a", _text(150, 3), "caf\u00e9 \U0001f642\U0001f642 \u4e2d\u6587 " * 9 + "x" * 40,
                 "It's  \r\n\r\n  12345 " * 7):
        assert engine.encode_arrays(text).same_as(truth.encode_arrays(text)), text
    with pytest.raises(InvalidTextError):
        engine.encode_arrays("abc \ud800 " * 10)
