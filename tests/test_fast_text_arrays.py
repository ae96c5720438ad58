"""``tokspec.fast._text_arrays.fill_text_arrays`` and ``FastBpeEncoder.encode_ids_range`` (the
chunks of ``lopt:`` without slices).

Contract: the kernel writes the code points and the UTF-8 bytes of ``text[start:end]`` (the
UTF-32 codec's and ``str.encode``'s), returns the byte count, and ``-1 - i`` at the first lone
surrogate ``start + i``. Checked compiled and interpreted (``py_func``: the same source as Python)
on texts of every storage width (ASCII, Latin-1, BMP, past U+FFFF) and every range of short texts;
``encode_ids_range`` equals ``encode_ids`` of the slice, errors included.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from tokspec import load_engine
from tokspec._jit import JIT_ENABLED, interpreted
from tokspec.errors import InvalidTextError
from tokspec.fast._text_arrays import fill_text_arrays

_ALPHABETS = {
    "ascii": "ab \n1!~\x00\x7f",
    "latin1": "ab é\xff\x80 ",
    "bmp": "a é中\u07ff\u0800\uffff\ue000 ",
    "astral": "a é中😀\U0010ffff\U00010000 ",
}


def _text(alphabet: str, n: int, seed: int) -> str:
    rng = random.Random(seed)
    return "".join(rng.choice(alphabet) for _ in range(n))


def _fill(fill: object, text: str, start: int, end: int) -> tuple[int, np.ndarray, np.ndarray]:
    cps = np.full(end - start, 7, dtype=np.uint32)
    utf8 = np.full(4 * (end - start), 7, dtype=np.uint8)
    k = fill(text, start, end, cps, utf8)  # type: ignore[operator]
    return int(k), cps, utf8


@pytest.mark.parametrize("fill", [fill_text_arrays, interpreted(fill_text_arrays)], ids=["compiled", "interpreted"])
@pytest.mark.parametrize("kind", sorted(_ALPHABETS))
def test_arrays_are_the_codecs_bytes_for_every_range(fill: object, kind: str) -> None:
    for seed in range(3):
        text = _text(_ALPHABETS[kind], 23, seed)
        for start in range(len(text) + 1):
            for end in range(start, len(text) + 1):
                k, cps, utf8 = _fill(fill, text, start, end)
                piece = text[start:end]
                assert bytes(utf8[:k]) == piece.encode(), (kind, seed, start, end)
                assert cps.tolist() == [ord(c) for c in piece]


@pytest.mark.parametrize("fill", [fill_text_arrays, interpreted(fill_text_arrays)], ids=["compiled", "interpreted"])
def test_a_lone_surrogate_stops_the_fill_at_its_index(fill: object) -> None:
    for surrogate in ("\ud800", "\udbff", "\udc00", "\udfff"):
        text = "ab中" + surrogate + "x\ud800"
        assert _fill(fill, text, 0, len(text))[0] == -1 - 3
        assert _fill(fill, text, 1, len(text))[0] == -1 - 2
        assert _fill(fill, text, 4, len(text))[0] == -1 - 1  # the later one
        assert _fill(fill, text, 4, 5)[0] == 1  # a range without one
    assert _fill(fill, "\ud7ff\ue000", 0, 2)[0] == 6  # the neighbours of the surrogates encode


def test_long_text_of_every_width_compiled() -> None:
    for kind, alphabet in _ALPHABETS.items():
        text = _text(alphabet, 300_000, 5)
        k, cps, utf8 = _fill(fill_text_arrays, text, 1_000, 299_000)
        assert bytes(utf8[:k]) == text[1_000:299_000].encode(), kind
        assert np.array_equal(cps, np.frombuffer(text[1_000:299_000].encode("utf-32-le"), np.uint32))


@pytest.fixture(scope="module")
def cl100k() -> object:
    return load_engine("fast:cl100k_base")


def test_encode_ids_range_equals_encode_ids_of_the_slice(cl100k: object) -> None:
    rng = random.Random(11)
    for kind, alphabet in _ALPHABETS.items():
        text = _text(alphabet + "the words of a text, 12345 ", 3_000, 7)
        for _ in range(20):
            a = rng.randrange(len(text) + 1)
            b = rng.randrange(a, len(text) + 1)
            got = cl100k.encode_ids_range(text, a, b)  # type: ignore[attr-defined]
            want = cl100k.encode_ids(text[a:b])  # type: ignore[attr-defined]
            assert got.dtype == want.dtype and got.tolist() == want.tolist(), (kind, a, b)


def test_encode_ids_range_errors_are_those_of_the_slice(cl100k: object) -> None:
    text = "word " * 10 + "\udc80" + " tail"
    with pytest.raises(InvalidTextError, match="at index 48;"):  # the slice's index, as encode_ids(slice)
        cl100k.encode_ids_range(text, 2, len(text))  # type: ignore[attr-defined]
    assert cl100k.encode_ids_range(text, 0, 50).tolist() == cl100k.encode_ids(text[:50]).tolist()  # type: ignore[attr-defined]
    for start, end in ((-1, 3), (3, 2), (0, len(text) + 1)):
        with pytest.raises(ValueError, match="0 <= start <= end <= len"):
            cl100k.encode_ids_range(text, start, end)  # type: ignore[attr-defined]
    with pytest.raises(InvalidTextError, match="must be str"):
        cl100k.encode_ids_range(b"bytes", 0, 1)  # type: ignore[attr-defined]


def test_encode_ids_range_edges(cl100k: object) -> None:
    text = "😀" * 50 + " and 中文 words"  # a range of four-byte characters only: the buffer's bound
    for a, b in ((0, 50), (0, len(text)), (5, 5), (len(text), len(text)), (49, 52)):
        got = cl100k.encode_ids_range(text, a, b)  # type: ignore[attr-defined]
        assert got.tolist() == cl100k.encode_ids(text[a:b]).tolist(), (a, b)  # type: ignore[attr-defined]
    assert cl100k.encode_ids_range(text, 5, 5).tolist() == []  # type: ignore[attr-defined]


@pytest.mark.skipif(not JIT_ENABLED, reason="compiled versions exist only where kernels compile")
def test_encode_ids_range_uses_the_compiled_versions_encode_ids_uses(cl100k: object) -> None:
    from tokspec.fast._bpe_encode import _encode

    cl100k.encode_ids("warm up é中😀")  # type: ignore[attr-defined]
    versions = len(_encode.signatures)
    cl100k.encode_ids_range("a range é中😀 of text", 2, 15)  # type: ignore[attr-defined]
    assert len(_encode.signatures) == versions  # read-only arrays, as encode_ids passes: no new version


def test_long_encode_ids_takes_the_fill_path_with_the_same_ids_and_errors(cl100k: object) -> None:
    from tokspec.fast.engines import FILL_MIN

    base = _text(_ALPHABETS["astral"] + "the words of a text, 12345 ", FILL_MIN + 10, 3)
    short = base[:FILL_MIN - 1]  # the str.encode path
    want_short = cl100k.encode_ids(short).tolist()  # type: ignore[attr-defined]
    assert want_short == cl100k.encode_ids_range(short, 0, len(short)).tolist()  # type: ignore[attr-defined]
    long_ids = cl100k.encode_ids(base)  # type: ignore[attr-defined]
    assert long_ids.dtype == np.int64
    assert long_ids.tolist() == cl100k.encode_ids_range(base, 0, len(base)).tolist()  # type: ignore[attr-defined]
    assert long_ids.tolist() == list(load_engine("tiktoken:cl100k_base").encode(base).ids or ())  # production
    bad = base[:FILL_MIN + 5] + "\ud9ff" + "tail"
    with pytest.raises(InvalidTextError, match=f"at index {FILL_MIN + 5};"):
        cl100k.encode_ids(bad)  # type: ignore[attr-defined]


class _HostileStr(str):
    """A str whose methods lie: the kernels must read its stored characters, as str.encode does."""

    def __getitem__(self, key: object) -> str:  # type: ignore[override]
        return "zzz"

    def encode(self, *args: object, **kwargs: object) -> bytes:  # type: ignore[override]
        return b"zzz"

    def __len__(self) -> int:  # a kernel trusting it would read past the string's storage
        return 1 << 30


def test_a_str_subclass_is_encoded_by_its_characters(cl100k: object) -> None:
    from tokspec.fast.engines import FILL_MIN

    for n in (40, FILL_MIN + 3):
        plain = _text("ab é中😀 words ", n, 9)
        hostile = _HostileStr(plain)
        want = cl100k.encode_ids(plain).tolist()  # type: ignore[attr-defined]
        assert cl100k.encode_ids(hostile).tolist() == want, n  # type: ignore[attr-defined]
        assert cl100k.encode_ids_range(hostile, 0, n).tolist() == want, n  # type: ignore[attr-defined]
        assert cl100k.encode_ids_range(hostile, 3, 17).tolist() == cl100k.encode_ids(plain[3:17]).tolist()  # type: ignore[attr-defined]
        with pytest.raises(ValueError, match=f"len\\(text\\)={n}"):  # its stored length, not its __len__
            cl100k.encode_ids_range(hostile, 0, n + 1)  # type: ignore[attr-defined]


def test_the_fill_path_is_taken_from_fill_min_characters(cl100k: object, monkeypatch: pytest.MonkeyPatch) -> None:
    """Which path a call takes is not visible in its ids, so it is watched: the fill kernel from
    FILL_MIN characters on (and then no UTF-32 encode), the codecs below it, and an empty range
    never falls back to ``encode_ids``."""
    import tokspec.fast.bpe_encoder as fe

    long_text = ("ab é " * fe.FILL_MIN)[:fe.FILL_MIN]
    short_text = long_text[:-1]
    want_long = cl100k.encode_ids(long_text).tolist()  # type: ignore[attr-defined]
    want_short = cl100k.encode_ids(short_text).tolist()  # type: ignore[attr-defined]
    want_head = cl100k.encode_ids(long_text[:5]).tolist()  # type: ignore[attr-defined]
    filled: list[int] = []
    real_fill, real_utf32 = fe.fill_text_arrays, fe._UTF32_LE
    utf32: list[int] = []
    monkeypatch.setattr(fe, "fill_text_arrays", lambda text, a, b, *arrays: filled.append(b - a) or real_fill(text, a, b, *arrays))
    monkeypatch.setattr(fe, "_UTF32_LE", lambda text: utf32.append(len(text)) or real_utf32(text))
    assert cl100k.encode_ids(long_text).tolist() == want_long  # type: ignore[attr-defined]
    assert (filled, utf32) == ([fe.FILL_MIN], [])
    assert cl100k.encode_ids(short_text).tolist() == want_short  # type: ignore[attr-defined]
    assert (filled, utf32) == ([fe.FILL_MIN], [fe.FILL_MIN - 1])

    def no_fallback(text: str) -> object:
        raise AssertionError("encode_ids_range fell back to encode_ids")

    monkeypatch.setattr(cl100k, "encode_ids", no_fallback)
    assert cl100k.encode_ids_range(long_text, 7, 7).tolist() == []  # type: ignore[attr-defined]
    assert cl100k.encode_ids_range(long_text, 0, 5).tolist() == want_head  # type: ignore[attr-defined]
