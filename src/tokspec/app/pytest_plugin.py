"""tokspec checks in your own test suite: agreement assertions, a search for disagreements, a fixture.

Plain functions (import them from their public home :mod:`tokspec.testing`; no plugin registration
needed)::

    from tokspec.testing import assert_engines_agree, check_against

    def test_my_engine_on_crlf():
        assert_engines_agree(MyEngine(), "tiktoken:cl100k_base", "a\\r\\n\\r\\nb")

    def test_my_engine_everywhere():
        check_against(MyEngine(), "tiktoken:cl100k_base")   # the search of `tokspec diff --fuzz`

:func:`check_against` searches with the machinery of ``tokspec diff --fuzz`` (:mod:`tokspec.app.finder`):
it replays your own saved findings (the records in the reports folder, below), then texts spelling
every special token of both engines, their fragments and near misses (:mod:`tokspec.app.special_text`),
then tokspec's stored findings (``corpora/`` of a source checkout, or ``$TOKSPEC_CORPORA``),
its conformance corpus and two long documents made of it, then
draws texts from the fuzz sources (corpus generators, adversarial repetitions, vocabulary-aware text
over the second engine's token surfaces, the Unicode-category strategies of
:mod:`tokspec.fuzz.strategies`) in counted slices, until ``max_examples`` texts were compared.
It is deterministic: the same code and seed compare the same texts, so a verdict does not change
from run to run, nor with machine speed, nor with the files installed (the corpus includes this
machine's files only with ``TOKSPEC_MACHINE_TEXTS=1``). The search also draws from the pattern
dictionary and the Unicode-drift code points (:mod:`tokspec.app.dictionary_source`). ``max_seconds`` is only an upper bound (a search it cuts short warns with
:class:`SearchCutShort`, since the verdict then depends on machine speed).

Settings, first found wins: the keyword; the pytest option (``--tokspec-seed``,
``--tokspec-budget``, ``--tokspec-max-seconds``, ``--tokspec-reports``); the environment
(``TOKSPEC_SEED``, ``TOKSPEC_BUDGET``, ``TOKSPEC_MAX_SECONDS``, ``TOKSPEC_REPORTS``); the defaults
below. A failure is an ``AssertionError`` giving the minimized text and the divergence window of
``tokspec diff``, the seed, and a ``tokspec diff A B --inputs RECORD`` command; the record is saved
in the reports folder (default ``tokspec-reports/``, as for ``tokspec diff``).

``check_against(..., texts=STRATEGY)`` runs hypothesis instead (``@given`` over ``STRATEGY``, with
its shrinking and example database), for users composing tokspec's strategies with their own;
:func:`default_texts` is a strategy over the same generators as the search.

With the plugin active (the ``pytest11`` entry point ``tokspec``, or ``-p tokspec.app.pytest_plugin``)
the fixture ``tokspec`` offers the same as methods (``tokspec.assert_agree``,
``tokspec.check_against``, ``tokspec.engine(name)``, and ``tokspec.check_chunker(chunker, tokenizer,
limit)``, the check of ``tokspec chunk-check``) and engines loaded by name are closed at
session end. Out of scope: text outside the text domain (lone surrogates raise InvalidTextError).
"""

from __future__ import annotations

import os
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tokspec._registry import load_engine
from tokspec._types import Encoder
from tokspec.app.plugin_stages import STAGE_SECONDS, SearchCutShort, failure_message, saved_findings, thread_check
from tokspec.diff import check_pair, format_comparison
from tokspec.diff import compare as _compare_text
from tokspec.errors import TokspecError

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

__all__ = ["assert_engines_agree", "check_against", "check_complexity", "default_texts", "saved_findings",
           "SearchCutShort", "TokspecHelper", "tokspec", "DEFAULT_BUDGET", "DEFAULT_MAX_SECONDS", "DEFAULT_SEED"]

#: Texts searched after the replay, per check (counted, so the verdict is reproducible).
DEFAULT_BUDGET = 2000
#: Upper bound on one check's search, in seconds (a safety net against a slow engine, not the budget).
DEFAULT_MAX_SECONDS = 60.0
DEFAULT_SEED = 0
#: Texts per source and turn in the search (counted slices, see tokspec.app.finder).
SLICE = 200
#: Shrinking a finding: at most this many comparisons (reproducible), or these seconds (a safety net).
_SHRINK_TESTS = 400
_SHRINK_SECONDS = 60.0

_LOADED: dict[str, Encoder] = {}
_OPTIONS: dict[str, Any] = {}  # set from the pytest command line by pytest_configure

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


def _compared(a: Encoder, b: Encoder, compare: str) -> tuple[Encoder, Encoder]:
    """The pair as compared: ``compare="ids"`` views both on ids alone (:func:`tokspec.adapt.ids_only`)."""
    if compare not in ("all", "ids"):
        raise TokspecError(f"compare must be 'all' or 'ids', got compare={compare!r}")
    if compare == "all":
        return a, b
    from tokspec.adapt import ids_only

    return ids_only(a), ids_only(b)


def assert_engines_agree(engine: EngineLike, other: EngineLike, text: str, *, window: int = 3,
                         compare: str = "all") -> None:
    """Raise AssertionError (with the divergence window) unless both engines agree on ``text``.

    Agreement is tokspec's: equal ids and equal character offsets, no exception from either engine
    (``compare="ids"``, or an engine declaring ``EngineInfo.offsets=False``: ids alone).
    Cost: one encode per engine.
    """
    a, b = _compared(_engine(engine), _engine(other), compare)
    check_pair(a, b)
    comparison = _compare_text(a, b, text)
    if not comparison.agree:
        __tracebackhide__ = True
        raise AssertionError(f"engines disagree: {format_comparison(a, b, comparison, width=window)}")


def default_texts(reference: EngineLike | None = None) -> SearchStrategy[str]:
    """A hypothesis strategy over the search's generators: the strategies of
    :mod:`tokspec.fuzz.strategies` and tokspec's own text makers (driven by a hypothesis ``Random``);
    with ``reference``, vocabulary-aware text over its token surfaces too."""
    from hypothesis import strategies as st

    from tokspec.app.search import own_text, search_strategy, small_corpus, token_pool

    corpus = list(small_corpus(DEFAULT_SEED))
    pool = [] if reference is None else token_pool(_engine(reference), corpus[:120])
    own = st.randoms(use_true_random=False).map(lambda rng: own_text(rng, corpus, pool))
    return st.one_of(search_strategy(pool), own)


def _setting(value: Any, option: str, env: str, default: Any, kind: type) -> Any:
    """The keyword, else the pytest option, else the environment variable, else the default."""
    for source, raw in (("keyword", value), (f"--{option}", _OPTIONS.get(option)), (env, os.environ.get(env))):
        if raw is None or raw == "":
            continue
        try:
            return kind(raw)
        except (TypeError, ValueError):
            raise TokspecError(f"{source}: {option}={raw!r} is not a valid {kind.__name__}") from None
    return default


def check_against(engine: EngineLike, other: EngineLike, *, seed: int | None = None,
                  max_examples: int | None = None, max_seconds: float | None = None,
                  reports: str | Path | None = None, texts: SearchStrategy[str] | None = None,
                  compare: str = "all", threads: int | None = None) -> None:
    """Search for a text on which the engines disagree; fail with the minimized one (module docstring).

    Then the concurrency stage of ``tokspec diff`` (:mod:`tokspec.app.threads_stage`): each engine
    called from ``threads`` threads at once (default cores + 2; 0 skips) on a sample of the replay
    texts; a difference from its serial result fails the test with the minimized witness.

    ``engine`` is the engine under test (A), ``other`` the one it must agree with (B). ``max_examples``
    texts are searched after the replay (default :data:`DEFAULT_BUDGET`), seeded by ``seed``.
    Cost: the replay (about 2,000 texts and two 20,000-character documents) plus ``max_examples``
    comparisons, and shrinking on failure. Time bound: the replay and the search stop at
    ``max_seconds`` (warning :class:`SearchCutShort`), shrinking a finding takes at most
    ``min(max_seconds, 60 s)`` more, and an engine call still running past both raises
    :class:`~tokspec._limits.DeadlineExceeded` (a hang is an error, never a wait). The concurrency
    stage starts only before ``max_seconds`` has run out and then takes at most 120 s more.
    ``compare="ids"``: ids alone (for ids-only libraries).
    """
    __tracebackhide__ = True
    a, b = _compared(_engine(engine), _engine(other), compare)
    check_pair(a, b)
    if texts is not None:
        _hypothesis_check(a, b, texts, max_examples)
        return
    from tokspec.app.finder import Finder, replay_texts, run_search
    from tokspec.app.search import text_sources
    from tokspec.app.special_text import special_texts

    seed = _setting(seed, "tokspec-seed", "TOKSPEC_SEED", DEFAULT_SEED, int)
    budget = _setting(max_examples, "tokspec-budget", "TOKSPEC_BUDGET", DEFAULT_BUDGET, int)
    seconds = _setting(max_seconds, "tokspec-max-seconds", "TOKSPEC_MAX_SECONDS", DEFAULT_MAX_SECONDS, float)
    if budget < 0 or seconds <= 0:
        raise TokspecError(f"max_examples must be >= 0 and max_seconds > 0, got max_examples={budget!r}, "
                           f"max_seconds={seconds!r}")
    from tokspec.app._deadline import Cut, bounded, until

    # Bound: texts are compared until max_seconds; shrinking a finding takes at most
    # min(_SHRINK_SECONDS, max_seconds) more; no engine call is waited for past both.
    shrink = min(_SHRINK_SECONDS, seconds)
    deadline = time.monotonic() + seconds
    plain = (a, b)  # the thread stage calls these itself, under its own bound (_thread_check)
    a, b = bounded(a, deadline + shrink, seconds), bounded(b, deadline + shrink, seconds)
    specials = [("special-token strings", t) for t in special_texts(a, b)]
    finder = Finder(a, b, max_findings=1, shrink_seconds=shrink, shrink_tests=_SHRINK_TESTS)
    replay_cut = Cut()
    folder = _setting(reports, "tokspec-reports", "TOKSPEC_REPORTS", "tokspec-reports", str)
    # the user's own saved findings first (like hypothesis' example database), then the special
    # tokens' spellings, then tokspec's corpus
    replayed = (finder.replay(until(saved_findings(folder), deadline, replay_cut))
                or finder.replay(until(specials, deadline, replay_cut))
                or finder.replay(until(replay_texts(), deadline, replay_cut)))
    if not replayed and budget > 0 and not replay_cut.cut:
        outcome = run_search(finder, text_sources(b, seed, b=a), seconds=max(0.0, deadline - time.monotonic()),
                             max_inputs=budget, slice_inputs=SLICE)
        if outcome.cut_by_time:
            warnings.warn(SearchCutShort(
                f"tokspec check_against({a.info.name!r}, {b.info.name!r}): max_seconds={seconds} ended the "
                f"search after {outcome.inputs} of {budget} texts; the verdict may differ on a faster "
                "machine (raise max_seconds or lower max_examples)"), stacklevel=2)
    if replay_cut.cut and not finder.findings:
        warnings.warn(SearchCutShort(
            f"tokspec check_against({a.info.name!r}, {b.info.name!r}): max_seconds={seconds} ended the "
            "replay of stored findings; nothing was searched (raise max_seconds)"), stacklevel=2)
    if finder.findings:
        typed = (engine if isinstance(engine, str) else a.info.name, other if isinstance(other, str) else b.info.name)
        raise AssertionError(failure_message(a, b, finder.findings[0], seed, budget, Path(folder), typed, compare))
    # the concurrency stage starts only before max_seconds, then has at least STAGE_SECONDS
    from tokspec.app.threads_stage import THREADS_ENV, stage_threads

    thread_check(*plain, stage_threads(_setting(threads, "tokspec-threads", THREADS_ENV, None, int)), folder,
                 start_by=deadline, end_by=max(deadline + shrink, time.monotonic() + STAGE_SECONDS), seconds=seconds)


def check_complexity(engine: EngineLike, *, families: list[str] | None = None, max_chars: int = 1 << 16,
                     max_seconds: float = 60.0, seed: int = 0, reports: str | Path | None = None) -> None:
    """Fail when ``engine``'s cost grows faster than linearly on some text family: the measurement
    of ``tokspec complexity`` (:mod:`tokspec.app.complexity`, exponent threshold 1.3), with the
    witness and the record path in the message. Timing-based: meant for slow tests or CI jobs."""
    __tracebackhide__ = True
    from tokspec.app.complexity import make_record, measure, write_records

    result = measure(_engine(engine), families=families, seconds=max_seconds, max_chars=max_chars, seed=seed)
    worst = result.worst()
    if not result.flagged() or worst is None:
        return
    folder = _setting(reports, "tokspec-reports", "TOKSPEC_REPORTS", "tokspec-reports", str)
    record, page = write_records(make_record(result, worst, seed=seed, max_chars=max_chars), folder)
    raise AssertionError(f"superlinear cost: family {worst.name!r} has exponent {worst.exponent():.2f} > 1.3; "
                         f"witness (chars, cost / linear): {worst.witness()}; sizes and seconds: "
                         f"{worst.table()}\nrecord: {Path(record).resolve()}\nplot: {Path(page).resolve()}")


def _hypothesis_check(a: Encoder, b: Encoder, strategy: SearchStrategy[str], max_examples: int | None) -> None:
    """``@given(strategy)``: hypothesis' search, shrinking and example database."""
    from hypothesis import given, settings

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

    def check_chunker(self, chunker: Any, tokenizer: str, limit: int, **kwargs: Any) -> None:
        """:func:`tokspec.app.chunk_check.check_chunker`: fuzz a chunker against its claims."""
        __tracebackhide__ = True
        from tokspec.app.chunk_check import check_chunker
        check_chunker(chunker, tokenizer, limit, **kwargs)


@pytest.fixture
def tokspec() -> Iterator[TokspecHelper]:
    """tokspec's helpers as a fixture (see module docstring)."""
    yield TokspecHelper()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("tokspec", "tokspec engine checks (check_against)")
    group.addoption("--tokspec-seed", type=int, default=None, help="seed of check_against's search (default 0)")
    group.addoption("--tokspec-budget", type=int, default=None,
                    help=f"texts check_against searches after its replay (default {DEFAULT_BUDGET})")
    group.addoption("--tokspec-max-seconds", type=float, default=None,
                    help=f"upper bound on one check's search in seconds (default {DEFAULT_MAX_SECONDS:g})")
    group.addoption("--tokspec-threads", type=int, default=None,
                    help="threads of check_against's concurrency stage (default cores + 2; 0 skips)")
    group.addoption("--tokspec-reports", default=None, help="where failing checks save records "
                    "(default tokspec-reports/)")


def pytest_configure(config: pytest.Config) -> None:
    for name in ("tokspec-seed", "tokspec-budget", "tokspec-max-seconds", "tokspec-reports", "tokspec-threads"):
        _OPTIONS[name] = config.getoption(name.replace("-", "_"), default=None)


def pytest_unconfigure(config: pytest.Config) -> None:
    _OPTIONS.clear()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Close engines loaded by name (stops ``cmd:`` subprocesses)."""
    while _LOADED:
        _, engine = _LOADED.popitem()
        engine.close()
