"""The text sources of fuzz mode (``tokspec diff --fuzz``), seeded and alternated in slices.

Fuzz mode alternates, in one-second slices, two seeded text sources: tokspec's own generators (the
corpus generators of :mod:`tokspec.corpus`, adversarial repetitions, corpus slices) and the public
hypothesis strategies of :mod:`tokspec.fuzz.strategies` (Unicode-category text, shaped text,
repetitions), both with vocabulary-aware text made of the token surfaces engine A produces on the
small corpus. Hypothesis serves as a generator only there.

Input length is a dimension of both sources (:mod:`tokspec.longtext`): besides their short texts,
each draws *long* texts (1,000 characters to 2 MiB, heavy-tailed and boundary-targeted, built by
length-extension moves from corpus texts and earlier inputs, with seam fragments planted across
power-of-two and power-of-ten positions). Long texts get at most :data:`LONG_SHARE` of each
source's time, so throughput on short texts stays within a factor 1/(1 - LONG_SHARE) of before.

Each source has a ``name`` and ``run(until, on_text)``: it feeds texts to ``on_text`` until the
monotonic time ``until`` or until ``on_text`` returns True.
"""

from __future__ import annotations

import random
import sys
import time
import warnings
from collections.abc import Callable
from typing import Any

from tokspec._types import Encoder

__all__ = ["text_sources", "LONG_SHARE", "LongBudget"]

#: The largest share of a source's time spent on long texts.
LONG_SHARE = 0.4
_HISTORY = 64


class LongBudget:
    """Decides when the next text is long: while long texts took under ``share`` of the time so far.

    ``charge(seconds, long)`` records one text's cost. Deterministic given the costs.
    """

    def __init__(self, share: float = LONG_SHARE):
        self.share, self.long_s, self.total_s = share, 0.0, 0.0

    def want_long(self) -> bool:
        """True when the next text should be long (never the first: a run starts with short texts)."""
        return self.total_s > 0 and self.long_s <= self.share * self.total_s

    def charge(self, seconds: float, long: bool) -> None:
        self.total_s += seconds
        self.long_s += seconds if long else 0.0


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


class _OwnGenerator:
    """Seeded generator over tokspec's own text makers (corpus generators, repetitions, vocab text)."""

    name = "tokspec.corpus generators"

    def __init__(self, seed: int, corpus: list[str], pool: list[str]):
        from tokspec.corpus import generated_text

        self.rng = random.Random(seed)
        self._generated = generated_text
        self.corpus, self.pool = corpus, pool
        self.budget = LongBudget()
        self.history: list[str] = []

    def _long_text(self) -> str:
        """A long text (module docstring): corpus texts, earlier inputs, repeats, planted seams."""
        from tokspec.longtext import grow_text, pick_length

        n, unit = pick_length(self.rng)
        return grow_text(self.rng, n, unit=unit, pieces=self.corpus, history=self.history)

    def _text(self) -> str:
        kind = self.rng.randrange(6)
        if kind <= 1:
            return self._generated(self.rng)
        if kind == 2:
            return _repetition(self.rng)
        if kind == 3 and self.pool:
            return _vocab_text(self.rng, self.pool)
        if kind == 4:  # a corpus text, whole or a slice
            text = self.rng.choice(self.corpus)
            i = self.rng.randrange(len(text) + 1)
            return text[i:i + self.rng.randint(1, 200)] if self.rng.random() < 0.5 else text
        return "".join(self._generated(self.rng) for _ in range(self.rng.randint(2, 4)))

    def run(self, until: float, on_text: Callable[[str], bool]) -> None:
        """Feed texts to ``on_text`` until the monotonic time ``until`` or until it returns True."""
        while time.monotonic() < until:
            long = self.budget.want_long()
            text = self._long_text() if long else self._text()
            if not long and len(self.history) < _HISTORY:
                self.history.append(text)
            elif not long:
                self.history[self.rng.randrange(_HISTORY)] = text
            start = time.monotonic()
            stop = on_text(text)
            self.budget.charge(time.monotonic() - start, long)
            if stop:
                return


class _Stop(Exception):
    """Raised inside the hypothesis probe to end a slice (never escapes _HypothesisSource.run)."""


class _HypothesisSource:
    """Texts drawn from the public strategies of :mod:`tokspec.fuzz.strategies` (generate phase only).

    Hypothesis is used as a generator, not as a test runner: nothing fails, no shrinking (ddmin
    does that, the same way for every source), no example database. Deterministic per (seed, slice).
    """

    name = "tokspec.fuzz.strategies"

    def __init__(self, seed: int, pool: list[str], corpus: list[str]):
        from hypothesis import strategies as st

        from tokspec.fuzz import strategies as ts

        parts = [ts.mixed_text(max_size=80), ts.shaped_text(), ts.repetitions(max_repeat=200)]
        if pool:
            parts.append(ts.vocab_text(pool))
        self.short = st.one_of(*parts)
        self.long = ts.long_text(pieces=corpus)
        self.seed, self.slices = seed, 0
        self.budget = LongBudget()

    def run(self, until: float, on_text: Callable[[str], bool]) -> None:
        from hypothesis import HealthCheck, Phase, Verbosity, given, settings
        from hypothesis import seed as hypothesis_seed

        self.slices += 1
        stopped = False  # hypothesis replays the "failing" (stopping) example: don't count it twice
        long = self.budget.want_long()  # decided per slice: a replayed example must draw the same way
        strategy = self.long if long else self.short
        started = time.monotonic()

        @hypothesis_seed(self.seed * 100_003 + self.slices)
        @settings(max_examples=1_000_000, deadline=None, database=None, phases=[Phase.generate],
                  suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet, print_blob=False)
        @given(strategy)
        def probe(text: str) -> None:
            nonlocal stopped
            if stopped or time.monotonic() >= until or on_text(text):
                stopped = True
                raise _Stop

        try:
            with warnings.catch_warnings():  # hypothesis warns about the repr of a 1 MB "failing" text
                warnings.simplefilter("ignore")
                probe()
        except _Stop:
            pass
        self.budget.charge(time.monotonic() - started, long)


def _token_pool(engine: Encoder, corpus: list[str], limit: int = 3000) -> list[str]:
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


def text_sources(a: Encoder, seed: int) -> list[Any]:
    """The fuzz text sources, alternated in one-second slices (see module docstring)."""
    from tokspec.corpus import build_corpus

    corpus = build_corpus(seed=seed, size="small")
    pool = _token_pool(a, corpus[:120])
    sources: list[Any] = [_OwnGenerator(seed, corpus, pool)]
    try:
        sources.append(_HypothesisSource(seed, pool, corpus))
    except ImportError as exc:  # the fuzz layer is optional at run time; the summary says so
        print(f"tokspec diff: tokspec.fuzz.strategies unavailable ({exc}); own generators only",
              file=sys.stderr)
    return sources
