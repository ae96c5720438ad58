"""Shrink a failing text to a small one that still fails: delta debugging (ddmin) over characters.

``minimize_text(text, still_fails)`` returns a text that still fails and is *1-minimal* when the
budget allows: removing any single character makes it pass. A final pass replaces characters by
simpler ones (``a``, space, ``0``) when the text keeps failing, so reports show plain characters
where the exact character does not matter.

Algorithm: blocks first, then Zeller and Hildebrandt's ddmin. A text longer than
:data:`BLOCK_FIRST` characters is first cut from the end, then from the start, by binary search
over the cut after galloping from 64 characters (O(log n) predicate calls each, on texts about as
long as the cause's distance from the start: a 1 MB text is down to the few characters around a
local cause in about 40 calls, where ddmin alone spends its first calls on half-megabyte texts).
Then ddmin: split the text into ``n`` chunks; keep a chunk alone if it fails, else keep a complement
(the text without one chunk) if it fails, else split finer. Complexity: O(n log n) predicate calls
when a single character is the cause (the usual case for a tokenizer bug), O(n^2) in the worst
case; each answer is cached (long texts by their sha256, so the cache stays small), so no text is
tested twice.

Out of scope: grammar-aware or token-aware shrinking (that is what hypothesis does for
strategies); the predicate is treated as a black box and must be deterministic.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable

__all__ = ["minimize_text", "ddmin", "trim_blocks", "BLOCK_FIRST"]

_SIMPLE_CHARS = ("a", " ", "0")
#: Texts longer than this are trimmed by binary search (:func:`trim_blocks`) before ddmin.
BLOCK_FIRST = 2048


def _key(text: str) -> str | bytes:
    """Cache key: short texts themselves, long ones their sha256 (memory stays O(calls), not O(calls * n))."""
    if len(text) <= 256:
        return text
    return hashlib.sha256(text.encode("utf-8", errors="surrogatepass")).digest()


class _Budget:
    """A cached predicate with a call limit and a deadline; past either, every unseen text "passes"."""

    def __init__(self, still_fails: Callable[[str], bool], max_tests: int, deadline: float | None):
        self._fn = still_fails
        self._cache: dict[str | bytes, bool] = {}
        self.max_tests = max_tests
        self.deadline = deadline
        self.tests = 0

    def exhausted(self) -> bool:
        over_time = self.deadline is not None and time.monotonic() >= self.deadline
        return self.tests >= self.max_tests or over_time

    def known(self, text: str, result: bool | None = None) -> bool:
        """Record ``result`` for ``text`` if given; return the cached answer (False if unknown)."""
        key = _key(text)
        if result is not None:
            self._cache[key] = result
        return self._cache.get(key, False)

    def __call__(self, text: str) -> bool:
        key = _key(text)
        if key in self._cache:
            return self._cache[key]
        if self.exhausted():
            return False
        self.tests += 1
        result = bool(self._fn(text))
        self._cache[key] = result
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


def _shortest(n: int, fails_at: Callable[[int], bool]) -> int:
    """A small ``m`` in [1, n] with ``fails_at(m)``, given ``fails_at(n)`` and not ``fails_at(0)``.

    Galloping, then binary search: try 64, 128, 256, ... until one fails, then bisect between the
    last passing and the first failing size. Keeps the invariant "``hi`` fails, ``lo`` passes";
    exact for a monotone predicate, a local minimum otherwise. O(log m) calls on texts of at most
    2m characters, where m is the answer: cheap when the cause is near the start, whatever n is."""
    lo, hi = 0, min(n, 64)
    while hi < n and not fails_at(hi):
        lo, hi = hi, min(n, 2 * hi)
    while lo + 1 < hi:
        mid = (lo + hi) // 2
        if fails_at(mid):
            hi = mid
        else:
            lo = mid
    return hi


def trim_blocks(text: str, still_fails: Callable[[str], bool]) -> str:
    """Cut ``text`` (which must fail) from the end, then from the start, as far as it keeps failing.

    The shortest failing prefix (:func:`_shortest`), then the shortest failing suffix of that. For a
    cause that is local (one seam, one token) this leaves the few characters around it in
    O(log n) calls, each on a text not much longer than the cause's distance from the start (then
    from the end); for a cause that needs length (a chunk of 1 MB) it stops at that length."""
    end = _shortest(len(text), lambda m: still_fails(text[:m]))
    text = text[:end]
    cut = len(text) - _shortest(len(text), lambda m: still_fails(text[len(text) - m:]))
    return text[cut:]


def ddmin(text: str, still_fails: Callable[[str], bool]) -> str:
    """Zeller's ddmin over the characters of ``text`` (which must fail). See module docstring."""
    n = 2
    exhausted = getattr(still_fails, "exhausted", lambda: False)
    while len(text) >= 2 and not exhausted():
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
    exhausted = getattr(still_fails, "exhausted", lambda: False)
    for i in range(len(text)):
        if exhausted():
            break
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
    smaller = trim_blocks(text, budget) if len(text) > BLOCK_FIRST else text
    smaller = ddmin(smaller, budget)
    if simplify:
        smaller = _simplify(smaller, budget)
    assert budget.known(smaller), "minimized text must still fail"
    return smaller
