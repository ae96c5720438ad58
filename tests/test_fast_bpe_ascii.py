"""The fused ASCII pass of the fast: BPE engines (``tokspec.fast._bpe_ascii``) against tiktoken and
against the three-pass path it replaces for ASCII blocks (Peek2 spans, then ``_encode``), for the
cl100k family's patterns and o200k_base's."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokspec import load_engine
from tokspec.fast._bpe_ascii import _NO_IDS, ascii_ids, ascii_scan, splice_ids
from tokspec.fast._bpe_text import ids_of_text
from tokspec.fast.bpe_encoder import _ascii_args
from tokspec.fast.pretok_peek2 import kernel_args

#: every cl100k category in ASCII (letters of both cases, digits, space, tab and other whitespace,
#: CR, LF, the quote, punctuation) and the contraction letters in both cases
_ATOMS = list("aZsStTdDmMlLvVrReExq09 \t\x0b\x0c\r\n'.,!?-_/(\x00\x7f") + [
    "'s", "'S", "'t", "'ll", "'LL", "'lL", "'ve", "'VE", "'re", "'Re", "'d", "'m", "'x", "  ", "\r\n", " \n ",
    "123456", "hello", " world", "   \t", "!!!\n\n", "''", "'", " '",
    # o200k_base's word rules (upper then lower runs) and its punctuation tail [\r\n/]*
    "Hello", "HELLO", "helloWorld", "McDonald", "ABCdef", "aB", " X", "/", "\n/", "-/\r\n", "it'S", "DON'T"]
_TEXTS = st.lists(st.sampled_from(_ATOMS), max_size=60).map("".join)
_PATTERNS = ("cl100k_base", "llama3", "qwen2")  # on cl100k_base's tables; o200k_base on its own


@pytest.fixture(scope="module")
def cl100k() -> object:
    return load_engine("fast:cl100k_base")


@pytest.fixture(scope="module")
def truth() -> object:
    return load_engine("tiktoken:cl100k_base").library_encoding  # type: ignore[attr-defined]


@pytest.fixture(scope="module")
def o200k() -> object:
    return load_engine("fast:o200k_base")


@pytest.fixture(scope="module")
def o200k_truth() -> object:
    return load_engine("tiktoken:o200k_base").library_encoding  # type: ignore[attr-defined]


def _data(text: str) -> np.ndarray:
    return np.frombuffer(text.encode("ascii"), np.uint8)


def _utf8(text: str) -> np.ndarray:
    return np.frombuffer(text.encode(), np.uint8)


def _foreign_buffer(data: np.ndarray) -> np.ndarray:
    """:func:`ascii_scan`'s ``foreign`` for ``data``."""
    return np.empty(len(data) + 2, np.int64)


def _three_pass(engine: object, text: str, pattern: str, tables: tuple[object, ...]) -> list[int]:
    cps = np.frombuffer(text.encode("utf-32-le"), np.uint32)
    kernel, args = kernel_args(pattern)
    out: list[int] = ids_of_text(_utf8(text), cps, kernel, args, tables).tolist()
    return out


@settings(max_examples=300, deadline=None)
@given(_TEXTS)
def test_ascii_ids_equal_tiktoken_and_the_three_pass_path(cl100k: object, truth: object, o200k: object,
                                                          o200k_truth: object, text: str) -> None:
    tables = cl100k.bpe._tables  # type: ignore[attr-defined]
    got = ascii_ids(_data(text), _ascii_args("cl100k_base"), tables).tolist()
    assert got == truth.encode_ordinary(text)  # type: ignore[attr-defined]
    for pattern in _PATTERNS:  # llama3 (whitespace at the end of text) and qwen2 (one digit) too
        assert ascii_ids(_data(text), _ascii_args(pattern), tables).tolist() == _three_pass(cl100k, text, pattern, tables)
    tables = o200k.bpe._tables  # type: ignore[attr-defined]
    got = ascii_ids(_data(text), _ascii_args("o200k_base"), tables).tolist()
    assert got == o200k_truth.encode_ordinary(text)  # type: ignore[attr-defined]
    assert got == _three_pass(o200k, text, "o200k_base", tables)


def test_runs_of_every_length_at_every_offset_equal_tiktoken(cl100k: object, truth: object, o200k: object,
                                                             o200k_truth: object) -> None:
    """The runs the scan finds seven categories per load (letters, words, punctuation, whitespace
    forwards and its last CR/LF backwards): lengths 1..24 at offsets 0..9, before each kind of
    character and the end, for both pattern families, every pretoken through the merge (no
    shortcut) and with the lookups."""
    runs = ("abcXyZ", "hello", "!'(.-/", " ", " \t", "\r\n", "  \n\t\r ", "\x0b \x0c")
    texts = [fill * offset + (unit * length)[:length] + after
             for unit in runs for length in range(1, 25) for offset in range(10) for fill in "q "
             for after in ("", "a", "7", "!", " ", "\n", " x")]
    for engine, production in ((cl100k, truth), (o200k, o200k_truth)):
        pattern = "o200k_base" if engine is o200k else "cl100k_base"
        for tables in (engine.bpe._tables, engine.bpe._tables_no_shortcut):  # type: ignore[attr-defined]
            for text in texts:
                got = ascii_ids(_data(text), _ascii_args(pattern), tables).tolist()
                assert got == production.encode_ordinary(text), (pattern, text)  # type: ignore[attr-defined]


@settings(max_examples=200, deadline=None)
@given(_TEXTS)
def test_every_pretoken_missed_is_merged_in_place(cl100k: object, truth: object, o200k: object,
                                                  o200k_truth: object, text: str) -> None:
    """No whole-piece table and an empty store: every pretoken goes through the one ``_encode``
    call over the missed ones and :func:`splice_ids`."""
    tables = cl100k.bpe._tables_no_shortcut  # type: ignore[attr-defined]
    assert ascii_ids(_data(text), _ascii_args("cl100k_base"), tables).tolist() == truth.encode_ordinary(text)  # type: ignore[attr-defined]
    tables = o200k.bpe._tables_no_shortcut  # type: ignore[attr-defined]
    assert ascii_ids(_data(text), _ascii_args("o200k_base"), tables).tolist() == o200k_truth.encode_ordinary(text)  # type: ignore[attr-defined]


def test_scan_marks_exactly_the_missed_pretokens(cl100k: object) -> None:
    from tokspec.fast._bpe_ascii import scan_buffers
    from tokspec.fast.pretok_peek2 import split
    text = "It's a test-case of the scanner,\r\n   with 12345 digits and 'quotes'   \n"
    data = _data(text)
    out, missed, missed_bytes = scan_buffers(len(data))
    count, n_missed, n_bytes, n_foreign = ascii_scan(data, *_ascii_args("cl100k_base"), out, missed, missed_bytes,
                                                     None, *cl100k.bpe._tables_no_shortcut)  # type: ignore[attr-defined]
    assert n_foreign == 0
    pieces = [text[a:b] for a, b in split(text)]
    assert count == n_missed == len(pieces)  # no whole-piece table and no store: every pretoken missed
    assert out[:count].tolist() == [-1 - k for k in range(count)]
    assert [missed_bytes[missed[2 * k]:missed[2 * k + 1]].tobytes().decode() for k in range(count)] == pieces
    assert n_bytes == len(data)


def test_splice_puts_each_missed_pretokens_ids_at_its_marker() -> None:
    tok_len = np.array([1, 2, 3], np.int32)
    out = np.array([5, -1, 6, -2, 7], np.int32)
    missed = np.array([0, 3, 3, 5], np.int64)  # pretoken 0: 3 bytes, pretoken 1: 2 bytes
    merged = np.array([0, 1, 1], np.int64)  # pretoken 0 = ids 0, 1 (1 + 2 bytes); pretoken 1 = id 1 (2 bytes)
    no_foreign = np.empty(2, np.int64)
    assert splice_ids(out, 5, merged, missed, tok_len, _NO_IDS, no_foreign, 5).tolist() == [5, 0, 1, 6, 1, 7]
    with pytest.raises(ValueError, match="left over"):  # ids that no missed pretoken's bytes account for
        splice_ids(out, 5, np.array([0, 1, 1, 2], np.int64), missed, tok_len, _NO_IDS, no_foreign, 5)
    with pytest.raises(ValueError, match="end before"):
        splice_ids(out, 5, merged[:2], missed, tok_len, _NO_IDS, no_foreign, 5)
    # foreign segment f of n = 5 bytes: the marker -1 - 5 - f, its bytes foreign[2f + 1] - foreign[2f]
    out = np.array([5, -1 - 5 - 0, -1, -1 - 5 - 1], np.int32)
    foreign = np.array([0, 3, 7, 9], np.int64)  # segment 0: 3 bytes, segment 1: 2 bytes
    foreign_ids = np.array([2, 1], np.int64)  # 3 bytes; then 2 bytes
    got = splice_ids(out, 4, merged[:2], missed, tok_len, foreign_ids, foreign, 5).tolist()
    assert got == [5, 2, 0, 1, 1]  # (missed pretoken 0 is 3 bytes: ids 0, 1)
    with pytest.raises(ValueError, match="end before"):
        splice_ids(out, 4, merged[:2], missed, tok_len, foreign_ids[:1], foreign, 5)
    with pytest.raises(ValueError, match="left over"):
        splice_ids(out, 4, merged[:2], missed, tok_len, np.append(foreign_ids, 0), foreign, 5)


def test_interpreted_kernels_give_the_compiled_ids(cl100k: object, truth: object) -> None:
    """The module's plain-Python twin (``tokspec._interpreted``: every kernel it calls plain too)."""
    from tokspec._interpreted import interpreted_module
    from tokspec.fast import _bpe_ascii
    plain = interpreted_module(_bpe_ascii)
    text = "Don't stop: 2024 items,\tthe END.\r\n\r\n  x'LL y've  " * 3
    args = _ascii_args("cl100k_base")
    for tables in (cl100k.bpe._tables, cl100k.bpe._tables_no_shortcut):  # type: ignore[attr-defined]
        compiled = ascii_ids(_data(text), args, tables).tolist()
        assert compiled == truth.encode_ordinary(text)  # type: ignore[attr-defined]
        with np.errstate(over="ignore"):
            assert plain.ascii_ids(_data(text), args, tables).tolist() == compiled


def test_long_ascii_texts_through_encode_ids_equal_tiktoken(cl100k: object, truth: object, o200k: object,
                                                            o200k_truth: object) -> None:
    """encode_ids of >= 1 MB of ASCII (blocks between sound cuts, each an ASCII block), twice (the
    second finds the store warm), and with a few non-ASCII characters (their blocks take the
    three-pass path, the others the fused one), for both pattern families."""
    from tokspec.app.bench.fast import code, english
    text = (english(700_000) + code(500_000)).encode("ascii", "ignore").decode()
    mixed = text[:300_000] + "caf\u00e9 \u4e2d\u6587" + text[300_000:]
    for engine, production in ((cl100k, truth), (o200k, o200k_truth)):
        want = production.encode_ordinary(text)  # type: ignore[attr-defined]
        assert engine.encode_ids(text).tolist() == want  # type: ignore[attr-defined]
        assert engine.encode_ids(text).tolist() == want  # type: ignore[attr-defined]
        assert engine.encode_ids(mixed).tolist() == production.encode_ordinary(mixed)  # type: ignore[attr-defined]


def test_ids_of_block_takes_the_fused_pass_for_ascii_blocks_only(cl100k: object, truth: object, o200k: object,
                                                                 o200k_truth: object) -> None:
    """``FastBpeEncoder._ids_of_block`` on spans not starting at 0: ASCII ones (the fused pass) and
    ones with non-ASCII characters (the three-pass path), for both pattern families."""
    text = "The first block, it's ASCII.\n  Then caf\u00e9 \u4e2d\u6587 here; then ASCII again:  12345 x'LL\r\n"
    for a, b in ((4, 30), (10, 60), (31, len(text)), (0, len(text))):
        piece = text[a:b]
        assert cl100k._ids_of_block(text, a, b).tolist() == truth.encode_ordinary(piece), piece  # type: ignore[attr-defined]
        assert o200k._ids_of_block(text, a, b).tolist() == o200k_truth.encode_ordinary(piece), piece  # type: ignore[attr-defined]


def test_ascii_args_name_each_patterns_rules() -> None:
    """o200k_base's scan is chosen for o200k_base only; the cl100k family's limits and end rule."""
    o200k, cl100k, llama3, qwen2 = (_ascii_args(p) for p in ("o200k_base", "cl100k_base", "llama3", "qwen2"))
    assert o200k[0] is True and cl100k[0] is False and llama3[0] is False and qwen2[0] is False
    assert (cl100k[3], cl100k[4]) == (3, True) and (llama3[3], llama3[4]) == (3, False) and qwen2[3] == 1
    assert all(len(args) == 7 for args in (o200k, cl100k, llama3, qwen2))


def test_ids_of_block_sends_ascii_blocks_and_only_those_to_the_fused_pass(cl100k: object, truth: object,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The dispatch itself: ASCII spans call ``ascii_ids`` (once), others do not; a ``str`` subclass
    whose methods lie is read by its stored characters; a lone surrogate in a span still gives None."""
    from tokspec.fast import _bpe_ascii
    calls: list[int] = []
    real = _bpe_ascii.ascii_ids

    def counted(data: np.ndarray, *args: object) -> np.ndarray:
        calls.append(len(data))
        return real(data, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(_bpe_ascii, "ascii_ids", counted)
    text = "plain ASCII words, 42 of them\n  caf\u00e9 then"
    assert cl100k._ids_of_block(text, 0, 29).tolist() == truth.encode_ordinary(text[:29])  # type: ignore[attr-defined]
    assert calls == [29]
    assert cl100k._ids_of_block(text, 0, len(text)).tolist() == truth.encode_ordinary(text)  # type: ignore[attr-defined]
    assert calls == [29]

    class Lying(str):
        def __getitem__(self, key: object) -> str:
            return "zzz"

        def isascii(self) -> bool:
            return False

        def encode(self, *args: object, **kwargs: object) -> bytes:
            return b"zzz"

    lying = Lying("stored words stay what they are")
    assert cl100k._ids_of_block(lying, 7, 20).tolist() == truth.encode_ordinary("words stay wh")  # type: ignore[attr-defined]
    assert calls == [29, 13]
    assert cl100k._ids_of_block("ok \ud800 no", 0, 8) is None


def _missed_flags(out: np.ndarray, count: int, spans: list[tuple[int, int]], tok_len: np.ndarray) -> list[bool]:
    """Per pretoken of ``spans``, whether :func:`ascii_scan` marked it missed (``out``: a marker
    for a missed one, else its ids, as many as its bytes take)."""
    flags, t = [], 0
    for a, b in spans:
        if out[t] < 0:
            flags.append(True)
            t += 1
            continue
        need = b - a
        while need > 0:
            need -= int(tok_len[out[t]])
            t += 1
        assert need == 0
        flags.append(False)
    assert t == count
    return flags


def _scan_flags(data: np.ndarray, pattern: str, tables: tuple[object, ...], spans: list[tuple[int, int]]) -> list[bool]:
    """:func:`ascii_scan` over ``data`` with ``tables``, read by :func:`_missed_flags`."""
    from tokspec.fast._bpe_ascii import scan_buffers
    out, missed, missed_bytes = scan_buffers(len(data))
    count, _, _, _ = ascii_scan(data, *_ascii_args(pattern), out, missed, missed_bytes, None, *tables)
    return _missed_flags(out, count, spans, tables[0])  # type: ignore[arg-type]  # tables[0]: tok_len


@pytest.mark.parametrize("pattern", ["cl100k_base", "o200k_base"])
def test_scan_takes_every_shortcut_it_may(cl100k: object, truth: object, o200k: object, o200k_truth: object,
                                          pattern: str) -> None:
    """Exact ids do not show whether the scan looked a pretoken up: a scan that missed every one
    would still be exact (the merge gives the same ids), only slow. So the lookups' reach is stated
    and checked pretoken by pretoken (spans by the reference regex), on an empty store: a pretoken
    is found whole iff it is a reachable token (``_piece_table.piece_id``) of at most ``PIECE_MAX``
    bytes with 16 bytes readable from its start; one ``ascii_ids`` merges the others and keeps
    those of at most ``STORE_MAX`` bytes and ``IDS_MAX`` ids, and a second scan finds each of them
    that has 24 readable bytes in the store. Pretokens of 12, 13, 24 and 25 bytes sit at the edges;
    ``============\r`` (13 bytes) starts with the first 12 of a longer token, whose long-prefix
    entry in the piece table (length code 13, a trie node, not a token) a 13-byte lookup would
    return: its 13th byte, CR, leaves the length code 13 when packed over it."""
    from tokspec.fast._piece_store import IDS_MAX, STORE_MAX, new_store
    from tokspec.fast._piece_table import PIECE_MAX, piece_id
    from tokspec.reference.pretok_regex import compiled
    engine = o200k if pattern == "o200k_base" else cl100k
    tables = (*engine.bpe._tables[:-1], new_store())  # type: ignore[attr-defined]  # an empty store of the usual size
    tok_len, pieces = tables[0], tables[9]
    text = ("The quick brown fox's 12345 jumps; internationalization information, aaaaaaaaaaa bbbbbbbbbbbb "
            "abcdefghijklmnopqrstuvw abcdefghijklmnopqrstuvwx over\r\n\tthe lazy dog============\rIt's (done) ok? "
            "abcdefg the the the the")
    data = _data(text)
    n = len(data)
    spans = [m.span() for m in compiled(pattern).finditer(text)]
    assert {b - a for a, b in spans} >= {12, 13, 24, 25}
    whole = [b - a <= PIECE_MAX and a + 16 <= n and piece_id(pieces, data, a, b - a) >= 0 for a, b in spans]
    assert _scan_flags(data, pattern, tables, spans) == [not w for w in whole]
    assert 0 < sum(whole) < len(spans)
    ids = ascii_ids(data, _ascii_args(pattern), tables)
    assert ids.tolist() == (o200k_truth if pattern == "o200k_base" else truth).encode_ordinary(text)  # type: ignore[attr-defined]
    groups, t = [], 0  # each pretoken's ids
    for a, b in spans:
        k, need = t, b - a
        while need > 0:
            need -= int(tok_len[ids[k]])
            k += 1
        groups.append(ids[t:k])
        t = k
    stored = [b - a <= STORE_MAX and a + 24 <= n and len(g) <= IDS_MAX for (a, b), g in zip(spans, groups)]
    assert _scan_flags(data, pattern, tables, spans) == [not (w or s) for w, s in zip(whole, stored)]
    # the text reaches each edge: a whole token of PIECE_MAX bytes, one starting 16 bytes before the
    # end; stored pieces of STORE_MAX bytes and starting 24 bytes before the end; pieces still missed
    edges = [(w, s and not w, b - a, n - a) for (a, b), w, s in zip(spans, whole, stored)]
    assert any(w and m == PIECE_MAX for w, _, m, _ in edges) and any(w and r == 16 for w, _, _, r in edges)
    assert any(s and m == STORE_MAX for _, s, m, _ in edges) and any(s and r == 24 for _, s, _, r in edges)
    assert any(not (w or s) for w, s in zip(whole, stored))


@pytest.mark.parametrize("pattern", ["cl100k_base", "o200k_base"])
def test_scan_reads_both_ways_of_a_store_set(cl100k: object, o200k: object, pattern: str) -> None:
    """A store of one two-way set (``new_store(2)``) keeps the two latest pieces merged into it (the
    text's only storable misses); a scan after them finds the older one in the second way too."""
    from tokspec.fast._piece_store import new_store
    from tokspec.reference.pretok_regex import compiled
    engine = o200k if pattern == "o200k_base" else cl100k
    tables = (*engine.bpe._tables[:-1], new_store(2))  # type: ignore[attr-defined]
    tail = " abcdefghijklmnopqrstuvwxyzabcdefg"  # longer than STORE_MAX: merged, never stored
    text = " the qzxv the wqpk the the the" + tail
    data = _data(text)
    spans = [m.span() for m in compiled(pattern).finditer(text)]
    assert _scan_flags(data, pattern, tables, spans) == [text[a:b] in (" qzxv", " wqpk", tail) for a, b in spans]
    ascii_ids(data, _ascii_args(pattern), tables)
    assert _scan_flags(data, pattern, tables, spans) == [text[a:b] == tail for a, b in spans]


# -- mixed text: the fused pass over UTF-8 with foreign segments (_bpe_ascii, "Mixed text") ------

#: non-ASCII characters of every kind the scan's rules meet: letters of each case and both-case
#: (o200k), a combining mark, digits, punctuation, whitespace (NBSP, ideographic space, NEL, line
#: separator), a zero-width space, the case folds that make contractions (Kelvin sign, long s),
#: CJK, an emoji (4 bytes), and ASCII neighbours they attach to
_NON_ASCII = ["\u00e9", "\u00c9COLE", "\u01c5", "\u00df", "\u0301", "\u0661\u0662\u0663", "\u2019", "\u2014",
              "\u00a0", "\u3000", "\u0085", "\u2028", "\u200b", "\u212a", "\u017f", "'\u017f", "'\u212a",
              "\u4e2d\u6587", "\U0001f600", "caf\u00e9", " \u00e9", "\u00e9 ", "x\u00e9y", "1\u0663"]
_MIXED = st.lists(st.sampled_from(_ATOMS + _NON_ASCII), max_size=60).map("".join)


def _foreign_ids_of(pattern: str, tables: tuple[object, ...]) -> object:
    """The three-pass path (Peek2 on code points, then ``_encode``) for foreign segments."""
    def ids(utf8: bytes) -> np.ndarray:
        text = utf8.decode()
        kernel, args = kernel_args(pattern)
        out: np.ndarray = ids_of_text(np.frombuffer(utf8, np.uint8), np.frombuffer(text.encode("utf-32-le"), np.uint32),
                                      kernel, args, tables)
        return out
    return ids


@settings(max_examples=300, deadline=None)
@given(_MIXED)
def test_mixed_text_equals_tiktoken_and_the_three_pass_path(cl100k: object, truth: object, o200k: object,
                                                            o200k_truth: object, text: str) -> None:
    """UTF-8 with non-ASCII characters anywhere: the scan leaves every part near one to its foreign
    segments (Peek2 and the merge on code points) and the ids are production's, for the four
    patterns, with the lookups and with every pretoken merged."""
    for engine, production, patterns in ((cl100k, truth, ("cl100k_base", "llama3", "qwen2")),
                                         (o200k, o200k_truth, ("o200k_base",))):
        for tables in (engine.bpe._tables, engine.bpe._tables_no_shortcut):  # type: ignore[attr-defined]
            for pattern in patterns:
                got = ascii_ids(_utf8(text), _ascii_args(pattern), tables, _foreign_ids_of(pattern, tables)).tolist()
                want = production.encode_ordinary(text) if pattern == patterns[0] else _three_pass(  # type: ignore[attr-defined]
                    engine, text, pattern, tables)
                assert got == want, (pattern, text)


def test_foreign_segments_hold_every_non_ascii_byte_between_sound_cuts(cl100k: object, o200k: object) -> None:
    """Each foreign segment starts at the text's start or a space after an ASCII letter and ends
    at the text's end or such a space (theorem M2's cuts); the segments are in order, disjoint, and
    hold every non-ASCII byte; the scan's other entries are the pretokens between them."""
    from tokspec.fast._bpe_ascii import scan_buffers
    texts = ["caf\u00e9 au lait, don\u2019t stop", "\u00e9", "ascii only then \u4e2d\u6587", "x\u00e9", "\u00e9 x",
             "The END\u2014really. 'K and 'ſ", "a b c d \u00a0 e f g", "no cut\u00e9here\u00e9at all"]
    for engine, pattern in ((cl100k, "cl100k_base"), (o200k, "o200k_base")):
        for text in texts:
            data = _utf8(text)
            n = len(data)
            out, missed, missed_bytes = scan_buffers(n)
            foreign = _foreign_buffer(data)
            count, _, _, n_foreign = ascii_scan(data, *_ascii_args(pattern), out, missed, missed_bytes, foreign,
                                                *engine.bpe._tables)  # type: ignore[attr-defined]
            spans = [(int(foreign[2 * f]), int(foreign[2 * f + 1])) for f in range(n_foreign)]
            assert n_foreign >= 1 and [v for v in out[:count] if v < -n] == [-1 - n - f for f in range(n_foreign)]

            def cut(at: int) -> bool:
                return at in (0, n) or (data[at] == 32 and chr(data[at - 1]).isascii() and chr(data[at - 1]).isalpha())
            assert all(cut(a) and cut(b) and a < b for a, b in spans), (text, spans)
            assert all(b1 <= a2 for (_, b1), (a2, _) in zip(spans, spans[1:])), (text, spans)
            high = [k for k in range(n) if data[k] >= 0x80]
            assert all(any(a <= k < b for a, b in spans) for k in high), (text, spans)


def test_mostly_ascii_long_texts_take_the_fused_pass_and_equal_tiktoken(
        cl100k: object, truth: object, o200k: object, o200k_truth: object, monkeypatch: pytest.MonkeyPatch) -> None:
    """``encode_ids`` of >= 1 MB with one non-ASCII character in 2,000 (``bpe_encoder._mostly_ascii``:
    the fused pass, foreign segments through the engine's ``_foreign_ids``) and one in 50 (the
    three kernels), both families against tiktoken; a lone surrogate in such a text is named."""
    import tokspec.fast._bpe_ascii as fused
    from tokspec.app.bench.fast import english
    from tokspec.errors import InvalidTextError
    gathered: list[int] = []
    real = fused.foreign_bytes
    monkeypatch.setattr(fused, "foreign_bytes", lambda *a: gathered.append(a[2]) or real(*a))  # type: ignore[func-returns-value]
    base = english(1_100_000, seed=9)
    sparse = "".join(base[k:k + 2000] + "\u2019" for k in range(0, len(base), 2000))
    dense = "".join(base[k:k + 50] + "\u00e9" for k in range(0, 300_000, 50))
    for engine, production in ((cl100k, truth), (o200k, o200k_truth)):
        gathered.clear()
        assert engine.encode_ids(sparse).tolist() == production.encode_ordinary(sparse)  # type: ignore[attr-defined]
        assert sum(gathered) >= len(sparse) // 2000 // 2  # foreign segments (adjacent ones may join)
        gathered.clear()
        assert engine.encode_ids(dense).tolist() == production.encode_ordinary(dense)  # type: ignore[attr-defined]
        assert gathered == []
    bad = sparse[:700_001] + "\udc80" + sparse[700_001:]
    with pytest.raises(InvalidTextError, match="at index 700001;"):
        cl100k.encode_ids(bad)  # type: ignore[attr-defined]


def test_a_non_ascii_character_at_every_distance_after_each_kind_of_pretoken(
        cl100k: object, truth: object, o200k: object, o200k_truth: object) -> None:
    """Whether a pretoken of the scan is kept depends on the bytes it may have read past its end
    (``_bpe_ascii._WINDOW``: the character that ends a run, the one after a whitespace run, a
    contraction's letters): a non-ASCII character 0..6 characters after each kind of ASCII
    pretoken, with ASCII text after it, against production."""
    heads = ["abc", "Hello", "HELLO", "123456", "!!", "'", " '", "'s", "don'", "it'l", " ", "   ", "\t\t", "\r\n",
             "  \n", "x  ", ".  ", "a\r\n\r\n"]
    fillers = ["", "a", " ", "1", ".", "'", "\n"]
    texts = [head + fill * k + x + tail for head in heads for fill in fillers for k in range(7)
             for x in ("\u00e9", "\u00a0", "\u2019", "\u212a", "\u4e2d", "\u0301")
             for tail in ("", "x", " y", "'s", "  z")]
    for engine, production, pattern in ((cl100k, truth, "cl100k_base"), (o200k, o200k_truth, "o200k_base")):
        tables = engine.bpe._tables  # type: ignore[attr-defined]
        foreign_ids_of = _foreign_ids_of(pattern, tables)
        for text in texts:
            got = ascii_ids(_utf8(text), _ascii_args(pattern), tables, foreign_ids_of).tolist()
            assert got == production.encode_ordinary(text), (pattern, text)  # type: ignore[attr-defined]
