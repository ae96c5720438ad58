"""Every form of Peek2 against the production pattern run by ``regex`` (tokspec.reference.pretok_regex):
the compiled kernel (``split``, ``split_o200k``), the plain-Python run-search implementation
(``split_runs`` = ``peek2_runs``) and the interpreted-kernel engines ``peek2_cl100k`` /
``peek2_o200k`` of ``tokspec.fast.interpreted``. Exactness = identical span lists.

Adversarial focus: o200k's punctuation tail ``[\\r\\n/]*`` (a ``/`` can only join after a line break,
since ``/`` is itself punctuation), and its neighbours ``0`` / ``.`` that must not join.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from tokspec.fast import pretok_peek2 as p2
from tokspec.reference.pretok_regex import split as regex_split

from tokspec import load_engine

TAIL_ALPHABET = "!/\r\n0a .'"
TAIL_CASES = ["!\n/", "!\r\n//x", "?\n0", "!\n.", " !\n/ 1", "a!\n/0", "!\n\n/\n", "/\n/"]


def _want(text: str, pattern: str) -> list[tuple[int, int]]:
    return [(s, e) for s, e in regex_split(text, pattern)]


@pytest.mark.parametrize("text", TAIL_CASES)
def test_o200k_punct_tail_cases(text: str) -> None:
    want = _want(text, "o200k_base")
    assert p2.split_runs(text, "o200k_base") == want
    assert p2.split_o200k(text) == want
    assert p2.split(text, "o200k_base") == want


@given(text=st.text(alphabet=TAIL_ALPHABET, max_size=16))
@example(text="!\n/")
def test_hyp_o200k_all_forms_equal_regex_on_tail_alphabet(text: str) -> None:
    want = _want(text, "o200k_base")
    assert p2.split_runs(text, "o200k_base") == want
    assert p2.split_o200k(text) == want


@pytest.mark.parametrize("pattern", ["cl100k_base", "o200k_base"])
def test_interpreted_peek2_engines_equal_regex(pattern: str) -> None:
    factory = {"cl100k_base": "peek2_cl100k", "o200k_base": "peek2_o200k"}[pattern]
    engine = load_engine(f"tokspec.fast.interpreted:{factory}")
    assert engine.info.kind == "pretokenizer" and engine.info.name == f"peek2:{pattern} (interpreted kernels)"
    texts = ["Hello, world! It's 2024.\n\n  x", "I'LL  \n\n x\u017ft", "!\n/ \u4e2d\u6587 123456", "", "a\u0301B'Re"]
    for text in texts:
        enc = engine.encode(text)
        assert enc.ids is None
        assert list(enc.offsets) == _want(text, pattern), (pattern, text)


@pytest.mark.parametrize("form", [p2.split, p2.split_runs, p2.spans])
def test_unknown_pattern_lists_the_available_ones(form: object) -> None:
    from tokspec.errors import UnknownEngineError
    with pytest.raises(UnknownEngineError) as err:
        form("x", "r50k_base")  # type: ignore[operator]
    assert str(err.value) == f"Peek2 has no pattern='r50k_base'; available: {', '.join(p2.PATTERN_NAMES)}"


def test_empty_text_has_no_pretokens() -> None:
    for pattern in p2.PATTERN_NAMES:
        assert p2.split("", pattern) == p2.split_runs("", pattern) == []


def test_interpreted_copies_are_plain_python_from_the_same_source() -> None:
    import types

    from tokspec.fast import bpe_kernel, interpreted

    import tokspec._jit as jit
    saved = jit.kernel
    peek2, bpe = interpreted.modules.__wrapped__()  # a fresh pair of copies
    assert jit.kernel is saved, "the kernel decorator is restored after copying"
    assert (peek2.__name__, bpe.__name__) == ("tokspec.fast.pretok_peek2__interpreted",
                                              "tokspec.fast.bpe_kernel__interpreted")
    assert (peek2.__file__, bpe.__file__) == (p2.__file__, bpe_kernel.__file__)
    for fn in (peek2._cl100k_kernel, peek2._o200k_kernel, bpe._encode, bpe._slot):
        assert isinstance(fn, types.FunctionType), fn
    assert interpreted.modules() is interpreted.modules()


def test_default_pattern_is_cl100k_base() -> None:
    """Every entry point defaults to cl100k_base (a text where the four patterns disagree)."""
    text = "I'LL  1234\r\n x"
    assert len({tuple(p2.split(text, p)) for p in p2.PATTERN_NAMES}) > 1
    want = p2.split(text, "cl100k_base")
    starts, ends = p2.spans(text)
    assert p2.split(text) == p2.split_runs(text) == list(zip(starts.tolist(), ends.tolist())) == want
    assert starts.dtype == ends.dtype == np.int64
    assert p2.split_o200k(text) == p2.split(text, "o200k_base") != want


@pytest.mark.parametrize("pattern", p2.PATTERN_NAMES)
def test_run_search_equals_regex_on_digit_runs_and_near_contractions(pattern: str) -> None:
    """``split_runs`` on digit runs longer than any pattern's limit, and a quote after a word followed
    by letters that are not contraction letters (they must not join the word)."""
    texts = ["1" * k + "a" for k in range(1, 9)] + ["x" + "9" * k for k in range(1, 9)]
    for apo in ("'", "\u2019"):
        for c in ("x", "X", "q", "z", "b", "s", "T", "ll", "lx", "vE", "rq", ""):
            texts += [f"it{apo}{c}", f"IT{apo}{c}", f" {apo}{c}x"]
    for text in texts:
        assert p2.split_runs(text, pattern) == _want(text, pattern), (pattern, text)
