"""Shrink a failing text to a small one that still fails: delta debugging (ddmin) over characters.

``minimize_text(text, still_fails)`` returns a text that still fails and is *1-minimal* when the
budget allows: removing any single character makes it pass. A final pass replaces characters by
simpler ones (``a``, space, ``0``) when the text keeps failing, so reports show plain characters
where the exact character does not matter.

Algorithm: Zeller and Hildebrandt's ddmin. Split the text into ``n`` chunks; keep a chunk alone
if it fails, else keep a complement (the text without one chunk) if it fails, else split finer.
Complexity: O(n log n) predicate calls when a single character is the cause (the usual case for a
tokenizer bug), O(n^2) in the worst case; each answer is cached, so no text is tested twice.

Out of scope: grammar-aware or token-aware shrinking (that is what hypothesis does for
strategies); the predicate is treated as a black box and must be deterministic.
"""

from __future__ import annotations

import time
from collections.abc import Callable

__all__ = ["minimize_text", "ddmin"]

_SIMPLE_CHARS = ("a", " ", "0")


class _Budget:
    """A cached predicate with a call limit and a deadline; past either, every unseen text "passes"."""

    def __init__(self, still_fails: Callable[[str], bool], max_tests: int, deadline: float | None):
        self._fn = still_fails
        self._cache: dict[str, bool] = {}
        self.max_tests = max_tests
        self.deadline = deadline
        self.tests = 0

    def exhausted(self) -> bool:
        over_time = self.deadline is not None and time.monotonic() >= self.deadline
        return self.tests >= self.max_tests or over_time

    def known(self, text: str, result: bool | None = None) -> bool:
        """Record ``result`` for ``text`` if given; return the cached answer (False if unknown)."""
        if result is not None:
            self._cache[text] = result
        return self._cache.get(text, False)

    def __call__(self, text: str) -> bool:
        if text in self._cache:
            return self._cache[text]
        if self.exhausted():
            return False
        self.tests += 1
        result = bool(self._fn(text))
        self._cache[text] = result
        return result


def _chunks(text: str, n: int) -> list[tuple[int, int]]:
    """Split ``range(len(text))`` into ``n`` nearly equal (start, end) chunks."""
    size, extra = divmod(len(text), n)
    bounds, start = [], 0
    for i in range(n):
        end = start + size + (1 if i < extra else 0)
        bounds.append((start, end))
        start = end
    return bounds


def ddmin(text: str, still_fails: Callable[[str], bool]) -> str:
    """Zeller's ddmin over the characters of ``text`` (which must fail). See module docstring."""
    n = 2
    while len(text) >= 2:
        chunks = _chunks(text, n)
        # 1. Is one chunk alone enough to fail?
        reduced = next((text[s:e] for s, e in chunks if still_fails(text[s:e])), None)
        if reduced is not None:
            text, n = reduced, 2
            continue
        # 2. Is one chunk unnecessary (its complement still fails)?
        reduced = next((text[:s] + text[e:] for s, e in chunks if still_fails(text[:s] + text[e:])), None)
        if reduced is not None:
            text, n = reduced, max(n - 1, 2)
            continue
        # 3. Neither: split finer, or stop when chunks are single characters.
        if n >= len(text):
            break
        n = min(2 * n, len(text))
    return text


def _simplify(text: str, still_fails: Callable[[str], bool]) -> str:
    """Replace each character by the first of ``_SIMPLE_CHARS`` that keeps the text failing."""
    for i in range(len(text)):
        for ch in _SIMPLE_CHARS:
            if text[i] == ch:
                break
            candidate = text[:i] + ch + text[i + 1:]
            if still_fails(candidate):
                text = candidate
                break
    return text


def minimize_text(text: str, still_fails: Callable[[str], bool], *, max_tests: int = 5000,
                  seconds: float | None = None, simplify: bool = True) -> str:
    """A small text that still fails (see module docstring).

    ``still_fails(text)`` must be True (and is checked once: a ValueError if not, since there is
    nothing to minimize). At most ``max_tests`` predicate calls and about ``seconds`` seconds are
    spent; when the budget runs out, the smallest failing text found so far is returned.
    """
    if max_tests < 1:
        raise ValueError(f"max_tests must be >= 1, got max_tests={max_tests!r}")
    deadline = None if seconds is None else time.monotonic() + seconds
    budget = _Budget(still_fails, max_tests + 1, deadline)
    if not still_fails(text):
        raise ValueError(f"nothing to minimize: still_fails(text) is False for text={text!r:.80}")
    budget.known(text, True)
    if budget(""):
        return ""
    smaller = ddmin(text, budget)
    if simplify:
        smaller = _simplify(smaller, budget)
    assert budget.known(smaller), "minimized text must still fail"
    return smaller
