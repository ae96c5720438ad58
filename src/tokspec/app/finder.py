"""The one search loop of ``tokspec diff --fuzz`` and of the pytest plugin's ``check_against``.

A :class:`Finder` compares two engines on each text it is given, shrinks every disagreement with
:func:`tokspec.minimize.minimize_text` (keeping its classification and which side faulted) and keeps
each distinct minimized finding once (:func:`finding_key`). :func:`run_search` feeds it from the
text sources of :mod:`tokspec.app.search`, alternating them in slices, until a budget runs out:

- *time slices* (``slice_inputs=None``, ``tokspec diff --fuzz``): one second per source and turn,
  until ``seconds``; how many texts each source gives depends on machine speed;
- *counted slices* (``slice_inputs=N``, the plugin): ``N // source.cost`` texts per source and turn
  (a source ten times as slow per text gets a tenth of the texts, as time slices give it), until
  ``max_inputs`` texts were compared. Every source is seeded, so the same code, seed and machine
  setup compare the same texts in the same order at any speed: the verdict is reproducible. ``seconds`` stays an
  upper bound; :attr:`SearchOutcome.cut_by_time` says when it, not the count, ended the search.

:func:`replay_texts` is what the plugin replays before searching: stored findings and tokspec's
conformance corpus (without this machine's files unless ``TOKSPEC_MACHINE_TEXTS=1``: fixed per
tokspec version), then two long documents made of the corpus (its texts joined by line ends, and
run together in reverse order): long inputs are their own bug class.

Out of scope: parallel engines (one text at a time, in order) and writing records (callers do).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tokspec._types import Encoder
from tokspec.app.cost_findings import CLASSIFICATION as COST
from tokspec.app.cost_findings import COST_MIN_CHARS, cost_key, is_timeout, shrink_by_time
from tokspec.diff import Comparison, compare
from tokspec.minimize import minimize_text

__all__ = ["Finder", "Finding", "SearchOutcome", "finding_key", "minimized", "replay_texts", "run_search",
           "LONG_DOCUMENT_CHARS"]

#: Size of each long replay document: past 8 KiB and 16 KiB chunk boundaries and past 4096 tokens
#: (about 14,600 cl100k tokens: the corpus is multilingual); larger costs seconds per check.
LONG_DOCUMENT_CHARS = 20_000


def signature(c: Comparison) -> tuple[Any, ...]:
    """What must stay the same while shrinking: the classification and which side faulted."""
    return (c.classification, c.a.fault is None, c.b.fault is None)


_RAW_CUT_MIN = 8  # shorter raw texts are not cut out of fault messages (see finding_key)


def finding_key(c: Comparison) -> tuple[Any, ...]:
    """When two findings count as one: equal minimized texts, or faults with the same messages.

    Fault messages are compared with the input text (and its repr) cut out, so a program that
    crashes on every astral character is reported once, not once per character.
    """
    if c.classification != "engine fault":
        return ("text", c.text)
    # the text's repr, whole or truncated as messages commonly truncate it, and the raw text only
    # when it is long enough not to be a piece of the message itself (cutting "!" out of "fails on
    # !" made the minimized "!" and a long text with a "!" two findings)
    text_repr = repr(c.text)
    cut = [text_repr, *(text_repr[:n] for n in (120, 100, 80, 60, 40) if n < len(text_repr))]
    if len(c.text) >= _RAW_CUT_MIN:
        cut.append(c.text)

    def strip(message: str | None) -> str | None:
        for piece in cut:
            message = None if message is None else message.replace(piece, "")
        return message

    return ("fault", strip(c.a.fault), strip(c.b.fault))


def minimized(a: Encoder, b: Encoder, c: Comparison, seconds: float, max_tests: int = 5000) -> Comparison:
    """The comparison on a minimized text with the same :func:`signature` as ``c``, after at most
    ``max_tests`` comparisons or about ``seconds`` (whichever ends first: only the count is
    reproducible across machines).

    Every comparison's signature is kept (by text; long texts by their sha256), so no text (a hang
    costs a timeout) runs twice; whole comparisons are kept only for short texts, so shrinking a
    1 MB text holds one text's encodings at a time, not one per comparison."""
    want = signature(c)
    signatures: dict[str | bytes, tuple[Any, ...]] = {}
    kept = {c.text: c}

    def key(text: str) -> str | bytes:
        return text if len(text) <= 256 else hashlib.sha256(text.encode("utf-8")).digest()

    def still_fails(text: str) -> bool:
        k = key(text)
        if k not in signatures:
            comparison = compare(a, b, text)
            signatures[k] = signature(comparison)
            if len(text) <= 4096:
                kept[text] = comparison
        return signatures[k] == want

    from tokspec.app.shrink import window_first

    start = window_first(c, still_fails)  # a few characters around the first divergence, when they do
    small = minimize_text(start, still_fails, seconds=seconds, max_tests=max_tests)
    return kept[small] if small in kept else compare(a, b, small)


@dataclass(frozen=True)
class Finding:
    """A minimized disagreement, the text it was found on, the input's number and its source."""

    comparison: Comparison
    original: Comparison
    input_number: int
    source: str
    cause: Any = None  # tokspec.cluster.Cause of the minimized comparison


class Finder:
    """Compares ``a`` and ``b`` on each text; shrinks and keeps distinct findings (module docstring).

    ``on_compare`` sees every comparison made on a given text (not the shrinking ones);
    ``on_finding`` each new finding. ``source`` names where the current texts come from.
    """

    def __init__(self, a: Encoder, b: Encoder, *, max_findings: int = 1, shrink_seconds: float = 20.0,
                 shrink_tests: int = 5000, on_compare: Callable[[Comparison], None] | None = None,
                 on_finding: Callable[[Finding], None] | None = None) -> None:
        self.a, self.b = a, b
        self.max_findings, self.shrink_seconds, self.shrink_tests = max_findings, shrink_seconds, shrink_tests
        self.on_compare, self.on_finding = on_compare, on_finding
        self.seen: set[tuple[Any, ...]] = set()
        self.findings: list[Finding] = []
        self.inputs = 0
        self.source = ""
        from tokspec.cluster import Clusters

        self.clusters = Clusters()  # findings by cause (tokspec.cluster); max_findings counts causes

    def done(self) -> bool:
        return len(self.clusters) >= self.max_findings

    def on_text(self, text: str) -> bool:
        """Compare on ``text``; shrink and keep a finding of a new cause (a finding of a known cause
        is counted, not shrunk). True when the search should stop."""
        from tokspec.cluster import cause_of

        c = compare(self.a, self.b, text)
        self.inputs += 1
        if self.on_compare is not None:
            self.on_compare(c)
        if c.agree:
            return self.done()
        raw = cause_of(self.a, self.b, c)
        if finding_key(c) in self.seen or raw in self.clusters:  # known: skip the costly shrinking
            self.clusters.add(raw)
            return self.done()
        small = self._timeout(c)
        if small is None:
            small = minimized(self.a, self.b, c, self.shrink_seconds, self.shrink_tests)
        cause = cause_of(self.a, self.b, small)
        self.clusters.alias(raw, cause)
        key = cost_key(small, self.source) if small.classification == COST else finding_key(small)
        known = key in self.seen or cause in self.clusters
        self.clusters.add(cause)
        if not known:
            self.seen.add(key)
            finding = Finding(small, c, self.inputs, self.source, cause)
            self.findings.append(finding)
            if self.on_finding is not None:
                self.on_finding(finding)
        return self.done()

    def _timeout(self, c: Comparison) -> Comparison | None:
        """A timeout on a long text: shrunk by time (:mod:`tokspec.app.cost_findings`); None otherwise,
        or when this source's cost finding is known (then ``c`` itself, already seen)."""
        if not is_timeout(c):
            return None
        if len(c.text) >= COST_MIN_CHARS and cost_key(
                dataclasses.replace(c, classification=COST), self.source) in self.seen:
            return dataclasses.replace(c, classification=COST)
        small = shrink_by_time(self.a, self.b, c)
        return small if small.classification == COST else None

    def replay(self, texts: Iterable[tuple[str, str]]) -> bool:
        """Feed ``(source, text)`` pairs in order until done; True if the search should stop."""
        for source, text in texts:
            self.source = source
            if self.on_text(text):
                return True
        return self.done()


@dataclass(frozen=True)
class SearchOutcome:
    """Texts compared by one :func:`run_search`, its wall time, and whether ``seconds`` (not the
    count or a finding) ended it while a count budget was set."""

    inputs: int
    seconds: float
    cut_by_time: bool


def run_search(finder: Finder, sources: list[Any], *, seconds: float, max_inputs: int | None = None,
               slice_inputs: int | None = None, tick: Callable[[], None] | None = None) -> SearchOutcome:
    """Alternate ``sources`` (see :mod:`tokspec.app.search`) feeding ``finder`` (module docstring).

    Stops when the finder is done, after ``max_inputs`` compared texts (counting from
    ``finder.inputs`` now), or at ``seconds``. ``slice_inputs`` picks counted slices over time slices.
    Cost: one comparison per text, plus shrinking per finding (``finder.shrink_seconds`` at most).
    """
    start = time.monotonic()
    deadline = start + seconds
    limit = None if max_inputs is None else finder.inputs + max_inputs
    first, turn = finder.inputs, 0

    def spent() -> bool:
        return limit is not None and finder.inputs >= limit

    while time.monotonic() < deadline and not finder.done() and not spent():
        source = sources[turn % len(sources)]
        finder.source = source.name
        if slice_inputs is None:
            source.run(min(deadline, time.monotonic() + 1.0), finder.on_text)
        else:
            size = max(1, slice_inputs // getattr(source, "cost", 1))
            stop_at = finder.inputs + size if limit is None else min(limit, finder.inputs + size)
            source.run(deadline, lambda text: finder.on_text(text) or finder.inputs >= stop_at)
        turn += 1
        if tick is not None:
            tick()
    cut = not finder.done() and not spent() and max_inputs is not None
    return SearchOutcome(finder.inputs - first, time.monotonic() - start, cut)


# ----------------------------------------------------------------------------- replay


def _corpora() -> Path | None:
    """tokspec's ``corpora/`` folder (:func:`tokspec._paths.corpora_dir`: ``$TOKSPEC_CORPORA``, a
    source checkout, or ``./corpora``), or None when there is none. A ``./corpora`` that is not
    tokspec's (no ``diff/`` and ``fuzz/`` inside) is left alone: a user project may have its own."""
    from tokspec._paths import corpora_dir

    root = corpora_dir()
    return root if (root / "diff").is_dir() and (root / "fuzz").is_dir() else None


def _stored_texts(root: Path) -> list[str]:
    """Texts of every stored finding and record (JSON with a string ``text`` or ``input``) and of
    the seed corpora of tokspec's differential fuzz targets (``fuzz/diff--*/corpus/*``), sorted by path."""
    texts: list[str] = []
    for path in sorted(root.rglob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            continue
        if isinstance(data, dict):
            texts.extend(v for k in ("text", "input") if isinstance(v := data.get(k), str))
    for path in sorted(root.glob("fuzz/diff--*/corpus/*")):
        try:
            texts.append(path.read_bytes().decode("utf-8"))
        except (OSError, UnicodeDecodeError):
            continue
    return texts


def _in_domain(text: str) -> bool:
    """False for text with lone surrogates (outside the text domain; stored JSON may hold them)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _document(text: str) -> str:
    """``text`` repeated or cut to exactly :data:`LONG_DOCUMENT_CHARS` characters."""
    return (text * (LONG_DOCUMENT_CHARS // max(1, len(text)) + 1))[:LONG_DOCUMENT_CHARS]


def machine_texts_wanted() -> bool:
    """Files of this machine (stdlib sources, /usr/share) join the corpus only on request
    (``TOKSPEC_MACHINE_TEXTS=1``): by default the replayed and searched corpus is fixed per tokspec
    version, so a verdict does not depend on what is installed."""
    import os

    return os.environ.get("TOKSPEC_MACHINE_TEXTS") == "1"


@functools.lru_cache(maxsize=1)
def replay_texts() -> tuple[tuple[str, str], ...]:
    """``(source, text)`` pairs the plugin compares first, in order (module docstring). Cached."""
    from tokspec.corpus import build_corpus

    root = _corpora()
    stored = [] if root is None else _stored_texts(root)
    corpus = build_corpus(seed=0, size="small", machine=machine_texts_wanted())
    documents = [_document("\n".join(corpus)), _document("".join(reversed(corpus)))]
    seen: set[str] = set()
    out: list[tuple[str, str]] = []
    for source, texts in (("stored findings (corpora/)", stored), ("conformance corpus", corpus),
                          (f"long documents ({LONG_DOCUMENT_CHARS} chars)", documents)):
        for text in texts:
            if text not in seen and _in_domain(text):
                seen.add(text)
                out.append((source, text))
    return tuple(out)
