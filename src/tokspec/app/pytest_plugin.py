"""tokspec checks in your own test suite: agreement assertions, a hypothesis check, a fixture.

Plain functions (import them; no plugin registration needed)::

    from tokspec.app.pytest_plugin import assert_engines_agree, check_against

    def test_my_engine_on_crlf():
        assert_engines_agree(MyEngine(), "tiktoken:cl100k_base", "a\\r\\n\\r\\nb")

    def test_my_engine_everywhere():
        check_against(MyEngine(), "tiktoken:cl100k_base")   # hypothesis search + shrinking

With the plugin active (``-p tokspec.app.pytest_plugin``, or automatically once tokspec registers it as
the ``pytest11`` entry point ``tokspec``), the fixture ``tokspec`` offers the same as methods
(``tokspec.assert_agree``, ``tokspec.check_against``, ``tokspec.engine(name)``) and closes the
engines it loaded (``cmd:`` subprocesses) at the end of the session.

An engine is an :class:`~tokspec.Encoder` or an engine name; names are loaded once per process.
A failure is an ``AssertionError`` whose message is the divergence window of ``tokspec diff``
(first diverging token, a few tokens of context from both engines, the classification).

Out of scope: comparing on text outside the text domain (lone surrogates raise
InvalidTextError, as for every engine) and writing counterexample records (use ``tokspec diff``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

from tokspec._registry import load_engine
from tokspec._types import Encoder
from tokspec.diff import check_pair, compare, format_comparison

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

__all__ = ["assert_engines_agree", "check_against", "default_texts", "TokspecHelper", "tokspec"]

_LOADED: dict[str, Encoder] = {}

EngineLike = Encoder | str


def _engine(engine: EngineLike) -> Encoder:
    """``engine`` itself, or the engine a name resolves to (loaded once per process)."""
    if isinstance(engine, Encoder):
        return engine
    if not isinstance(engine, str):
        raise TypeError(f"engine must be a tokspec.Encoder or an engine name, got {type(engine).__name__}")
    if engine not in _LOADED:
        _LOADED[engine] = load_engine(engine)
    return _LOADED[engine]


def assert_engines_agree(engine: EngineLike, other: EngineLike, text: str, *, window: int = 3) -> None:
    """Raise AssertionError (with the divergence window) unless both engines agree on ``text``.

    Agreement is tokspec's: equal ids and equal character offsets, no exception from either engine.
    Cost: one encode per engine.
    """
    a, b = _engine(engine), _engine(other)
    check_pair(a, b)
    comparison = compare(a, b, text)
    if not comparison.agree:
        __tracebackhide__ = True
        raise AssertionError(f"engines disagree: {format_comparison(a, b, comparison, width=window)}")


def default_texts() -> SearchStrategy[str]:
    """The default text strategy of :func:`check_against`: tokspec's mixed and shaped text."""
    from hypothesis import strategies as st

    from tokspec.fuzz import strategies as ts

    return st.one_of(ts.mixed_text(max_size=60), ts.shaped_text())


def check_against(engine: EngineLike, other: EngineLike, *, texts: SearchStrategy[str] | None = None,
                  max_examples: int | None = None) -> None:
    """Search with hypothesis for a text on which the engines disagree; fail with the shrunk one.

    ``texts`` defaults to :func:`default_texts`; ``max_examples`` to the active hypothesis profile.
    Hypothesis' own example database and shrinking apply, so a failure replays on the next run.
    """
    from hypothesis import given, settings

    a, b = _engine(engine), _engine(other)
    check_pair(a, b)
    strategy = default_texts() if texts is None else texts

    @given(strategy)
    def engines_agree(text: str) -> None:
        assert_engines_agree(a, b, text)

    if max_examples is not None:
        engines_agree = settings(max_examples=max_examples, deadline=None)(engines_agree)
    engines_agree()


class TokspecHelper:
    """What the ``tokspec`` fixture returns: the helpers above plus engine loading by name."""

    def engine(self, name: str) -> Encoder:
        """The engine ``name`` (loaded once per process, closed at session end)."""
        return _engine(name)

    def assert_agree(self, engine: EngineLike, other: EngineLike, text: str, **kwargs: Any) -> None:
        __tracebackhide__ = True
        assert_engines_agree(engine, other, text, **kwargs)

    def check_against(self, engine: EngineLike, other: EngineLike, **kwargs: Any) -> None:
        __tracebackhide__ = True
        check_against(engine, other, **kwargs)


@pytest.fixture
def tokspec() -> Iterator[TokspecHelper]:
    """tokspec's helpers as a fixture (see module docstring)."""
    yield TokspecHelper()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Close engines loaded by name (stops ``cmd:`` subprocesses)."""
    while _LOADED:
        _, engine = _LOADED.popitem()
        engine.close()
