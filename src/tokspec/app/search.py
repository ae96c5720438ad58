"""The text sources of fuzz mode (``tokspec diff --fuzz``), seeded and alternated in slices.

Fuzz mode alternates, in one-second slices, two seeded text sources: tokspec's own generators (the
corpus generators of :mod:`tokspec.corpus`, adversarial repetitions, corpus slices) and the public
hypothesis strategies of :mod:`tokspec.fuzz.strategies` (Unicode-category text, shaped text,
repetitions), both with vocabulary-aware text made of the token surfaces engine A produces on the
small corpus. Hypothesis serves as a generator only there.

Input length is a dimension of both sources (:mod:`tokspec.longtext`): besides their short texts,
each draws *long* texts (1,000 characters to 2 MiB, heavy-tailed and boundary-targeted, built by
length-extension moves from corpus texts and earlier inputs, with seam fragments planted across
power-of-two and power-of-ten positions). A :class:`LongBudget` gives long texts at most
``long_share`` (in ``tokspec diff --fuzz``: :data:`LONG_SHARE`) of each source's *cost*, counted as characters plus
:data:`TEXT_COST` per text (about what one call costs an engine): deterministic, so counted slices
stay reproducible, and short-text throughput stays within a factor ~1/(1 - share) of before.

A third source, :class:`tokspec.app.dictionary_source.DictionarySource`, composes texts from the
pattern dictionary (contractions in every case, every whitespace kind, each alternative's trigger
characters) and the code points whose Unicode class drifts between versions.

Each source has a ``name``, a relative ``cost`` per text, and ``run(until, on_text)``: it feeds texts
to ``on_text`` until the monotonic time ``until`` or until ``on_text`` returns True. The search loop
itself is :func:`tokspec.app.finder.run_search`.
"""

from __future__ import annotations

import functools
import random
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from typing import Any

from tokspec._types import Encoder

__all__ = ["text_sources", "search_strategy", "own_text", "small_corpus", "token_pool", "LONG_SHARE",
           "TEXT_COST", "LongBudget"]

#: The default largest share of a source's cost spent on long texts.
LONG_SHARE = 0.5
#: Cost of one text beyond its characters, in characters (call overhead of a typical engine pair).
TEXT_COST = 2000
_HISTORY = 64


class LongBudget:
    """Decides when the next text is long: while long texts took at most ``share`` of the cost so far.

    ``charge(text, long)`` records one text's cost (``len(text) + TEXT_COST``). Deterministic.
    """

    def __init__(self, share: float = LONG_SHARE):
        self.share, self.long_cost, self.total_cost = share, 0, 0

    def want_long(self) -> bool:
        """True when the next text should be long (never the first: a run starts with short texts)."""
        return self.share > 0 and self.total_cost > 0 and self.long_cost <= self.share * self.total_cost

    def charge(self, text: str, long: bool) -> None:
        cost = len(text) + TEXT_COST
        self.total_cost += cost
        self.long_cost += cost if long else 0


_REPEAT_UNITS = ("a", " ", "\n", "  ", "ab", "\r\n", "1", "0 ", "'s", "é", "🙂", "的", "\t", ".", "=")


def _repetition(rng: random.Random) -> str:
    """Adversarial repetition: a run or periodic pattern, sometimes with a different character inside."""
    unit = rng.choice(_REPEAT_UNITS) if rng.random() < 0.7 else "".join(
        rng.choice("ab \n1'.é") for _ in range(rng.randint(1, 4)))
    text = unit * rng.randint(2, 300)
    if text and rng.random() < 0.5:
        i = rng.randrange(len(text))
        text = text[:i] + rng.choice(" x\n9🙂") + text[i:]
    return text


def _vocab_text(rng: random.Random, pool: list[str]) -> str:
    """Vocabulary-aware text: a concatenation of token surfaces seen in earlier encodings."""
    return "".join(rng.choice(pool) for _ in range(rng.randint(1, 12)))


def own_text(rng: random.Random, corpus: list[str], pool: list[str]) -> str:
    """One text of tokspec's own makers, drawn with ``rng``: corpus generators, adversarial
    repetitions, vocabulary-aware text over ``pool``, a corpus text or slice, or a concatenation."""
    from tokspec.corpus import generated_text

    kind = rng.randrange(6)
    if kind <= 1:
        return generated_text(rng)
    if kind == 2:
        return _repetition(rng)
    if kind == 3 and pool:
        return _vocab_text(rng, pool)
    if kind == 4:  # a corpus text, whole or a slice
        text = rng.choice(corpus)
        i = rng.randrange(len(text) + 1)
        return text[i:i + rng.randint(1, 200)] if rng.random() < 0.5 else text
    return "".join(generated_text(rng) for _ in range(rng.randint(2, 4)))


class _OwnGenerator:
    """Seeded generator over tokspec's own text makers (corpus generators, repetitions, vocab text)."""

    name = "tokspec.corpus generators"
    cost = 1

    def __init__(self, seed: int, corpus: list[str], pool: list[str], long_share: float = LONG_SHARE):
        self.rng = random.Random(seed)
        self.corpus, self.pool = corpus, pool
        self.budget = LongBudget(long_share)
        self.history: list[str] = []

    def _text(self) -> str:
        return own_text(self.rng, self.corpus, self.pool)

    def _long_text(self) -> str:
        """A long text (module docstring): corpus texts, earlier inputs, repeats, planted seams."""
        from tokspec.longtext import grow_text, pick_length

        n, unit = pick_length(self.rng)
        return grow_text(self.rng, n, unit=unit, pieces=self.corpus, history=self.history)

    def run(self, until: float, on_text: Callable[[str], bool]) -> None:
        """Feed texts to ``on_text`` until the monotonic time ``until`` or until it returns True."""
        while time.monotonic() < until:
            long = self.budget.want_long()
            text = self._long_text() if long else self._text()
            if not long:  # earlier inputs, for the length-extension moves
                if len(self.history) < _HISTORY:
                    self.history.append(text)
                else:
                    self.history[self.rng.randrange(_HISTORY)] = text
            self.budget.charge(text, long)
            if on_text(text):
                return


def search_strategy(pool: list[str]) -> Any:
    """The hypothesis strategy fuzz mode draws from: the public strategies of
    :mod:`tokspec.fuzz.strategies` (Unicode-category, shaped, repetitions), plus vocabulary-aware
    text over ``pool`` (token surfaces) when it is not empty."""
    from hypothesis import strategies as st

    from tokspec.fuzz import strategies as ts

    parts = [ts.mixed_text(max_size=80), ts.shaped_text(), ts.repetitions(max_repeat=200)]
    if pool:
        parts.append(ts.vocab_text(pool))
    return st.one_of(*parts)


class _Stop(Exception):
    """Raised inside the hypothesis probe to end a slice (never escapes _HypothesisSource.run)."""


class _HypothesisSource:
    """Texts drawn from the public strategies of :mod:`tokspec.fuzz.strategies` (generate phase only).

    Hypothesis is used as a generator, not as a test runner: nothing fails, no shrinking (ddmin
    does that, the same way for every source), no example database. Deterministic per (seed, slice).
    """

    name = "tokspec.fuzz.strategies"
    #: Relative cost of one text: drawing through hypothesis takes about ten times as long per text
    #: as the own generators, so a counted slice gives this source a tenth of the texts (as fuzz
    #: mode's one-second slices do in effect).
    cost = 10

    def __init__(self, seed: int, pool: list[str], corpus: Sequence[str] = (), long_share: float = LONG_SHARE):
        from tokspec.fuzz import strategies as ts

        self.strategy = search_strategy(pool)
        self.long = ts.long_text(pieces=list(corpus))
        self.seed, self.slices = seed, 0
        self.budget = LongBudget(long_share)

    def run(self, until: float, on_text: Callable[[str], bool]) -> None:
        from hypothesis import HealthCheck, Phase, Verbosity, given, settings
        from hypothesis import seed as hypothesis_seed

        self.slices += 1
        stopped = False  # hypothesis replays the "failing" (stopping) example: don't count it twice
        long = self.budget.want_long()  # decided per slice: a replayed example must draw the same way
        budget = self.budget

        @hypothesis_seed(self.seed * 100_003 + self.slices)
        @settings(max_examples=1_000_000, deadline=None, database=None, phases=[Phase.generate],
                  suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet, print_blob=False)
        @given(self.long if long else self.strategy)
        def probe(text: str) -> None:
            nonlocal stopped
            if stopped or time.monotonic() >= until:
                stopped = True
                raise _Stop
            budget.charge(text, long)
            if on_text(text):
                stopped = True
                raise _Stop

        try:
            with warnings.catch_warnings():  # hypothesis warns about the repr of a 1 MB "stopping" text
                warnings.simplefilter("ignore")
                probe()
        except _Stop:
            pass


def token_pool(engine: Encoder, corpus: list[str], limit: int = 3000) -> list[str]:
    """Distinct token surfaces ``engine`` produces on ``corpus`` (for vocabulary-aware text)."""
    pool: dict[str, None] = {}
    for text in corpus:
        try:
            enc = engine.encode(text)
        except Exception:  # noqa: BLE001 - a faulting engine just gives a smaller pool
            continue
        pool.update((text[s:e], None) for s, e in enc.offsets if e > s)
        if len(pool) >= limit:
            break
    return list(pool)[:limit]


@functools.lru_cache(maxsize=4)
def small_corpus(seed: int) -> tuple[str, ...]:
    """``build_corpus(seed=seed, size="small")``, built once per process; this machine's files only
    with ``TOKSPEC_MACHINE_TEXTS=1`` (:func:`tokspec.app.finder.machine_texts_wanted`)."""
    from tokspec.app.finder import machine_texts_wanted
    from tokspec.corpus import build_corpus

    return tuple(build_corpus(seed=seed, size="small", machine=machine_texts_wanted()))


def text_sources(a: Encoder, seed: int, *, long_share: float = 0.0, b: Encoder | None = None) -> list[Any]:
    """The fuzz text sources, alternated in slices (see module docstring). ``long_share``: the
    share of each source's cost given to long texts; ``tokspec diff --fuzz`` passes
    :data:`LONG_SHARE`; 0 (the default, e.g. the plugin's counted searches): short texts only.
    After tokspec's own generators and hypothesis come the special tokens of ``a`` and ``b``
    (:class:`tokspec.app.special_text.SpecialTextSource`) and the pattern dictionary with Unicode
    drift (:class:`tokspec.app.dictionary_source.DictionarySource`)."""
    from tokspec.app.special_text import SpecialTextSource

    corpus = list(small_corpus(seed))
    pool = token_pool(a, corpus[:120])
    sources: list[Any] = [_OwnGenerator(seed, corpus, pool, long_share)]
    try:
        sources.append(_HypothesisSource(seed, pool, corpus, long_share))
    except ImportError as exc:  # the fuzz layer is optional at run time; the summary says so
        print(f"tokspec diff: tokspec.fuzz.strategies unavailable ({exc}); own generators only",
              file=sys.stderr)
    sources.append(SpecialTextSource(seed, [a] if b is None else [a, b], pool[:200]))
    try:  # the pattern dictionary and Unicode drift (tokspec.app.dictionary_source)
        from tokspec.app.dictionary_source import DictionarySource

        sources.append(DictionarySource(seed))
    except ImportError as exc:
        print(f"tokspec diff: pattern dictionary unavailable ({exc})", file=sys.stderr)
    return sources
