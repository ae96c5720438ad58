"""The work of ``tokspec diff`` that runs where the engines are: in this process or in a worker.

Every function here is a picklable top-level function taking plain data, so the same code runs
inline (``--workers 1``), in spawned processes (``--workers N``) and on Dask workers
(``--scheduler``); this is what makes a parallel run's output identical to a serial one.

- :func:`engines_for` loads a pair once per process (per thread on multi-threaded Dask workers) and
  keeps it; ``cmd:`` engines therefore get one subprocess per worker. Engines are closed at exit.
- :func:`diff_batch` compares one batch of inputs and returns, per input, the classification and,
  for a disagreement, the record (content-hash name + record dict) and its readable report: the
  caller writes records and prints, in input order.
- :func:`fuzz_loop` is fuzz mode's search loop for one seed; each finding goes to ``emit``.

Out of scope: writing files or printing (the caller does both, once, in order).
"""

from __future__ import annotations

import atexit
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from tokspec._orphan import die_with_parent
from tokspec._types import Encoder
from tokspec.app._checks import load_engine_checked
from tokspec.app.cost_findings import CLASSIFICATION as COST
from tokspec.app.cost_findings import cost_key
from tokspec.app.finder import Finder, finding_key, minimized, run_search
from tokspec.diff import Comparison, check_pair, compare, format_comparison, make_record, record_name, reproduce_command
from tokspec.errors import TokspecError

__all__ = ["DiffJob", "FuzzParams", "Finding", "engines_for", "close_engines", "diff_batch", "fuzz_loop",
           "load", "fuzz_process"]


class WorkerSetupError(TokspecError):
    """A setup error raised in a worker, carried back as its one-line message."""


def load(name: str) -> Encoder:
    """The engine ``name``; any failure to load is one TokspecError line."""
    return load_engine_checked(name)


_local = threading.local()


def engines_for(a: str, b: str, compare_on: str = "all") -> tuple[Encoder, Encoder]:
    """The engine pair (a, b), loaded and checked once per process/thread, then cached.
    ``compare_on="ids"`` gives both as :func:`tokspec.adapt.ids_only` views (compared on ids alone)."""
    cache: dict[tuple[str, str], tuple[Encoder, Encoder]] = getattr(_local, "engines", None) or {}
    _local.engines = cache
    if (a, b) not in cache:
        ea = load(a)
        try:
            eb = load(b)
            check_pair(ea, eb)
        except BaseException:
            ea.close()
            raise
        cache[(a, b)] = (ea, eb)
    if compare_on == "ids":
        from tokspec.adapt import ids_only

        key = (a, b, "ids")
        views: dict[tuple[str, str, str], tuple[Encoder, Encoder]] = getattr(_local, "ids_views", None) or {}
        _local.ids_views = views
        if key not in views:
            views[key] = (ids_only(cache[(a, b)][0]), ids_only(cache[(a, b)][1]))
        return views[key]
    return cache[(a, b)]


def close_engines() -> None:
    """Close and forget the engines this thread loaded (registered at exit too)."""
    _local.ids_views = {}
    cache = getattr(_local, "engines", None) or {}
    while cache:
        for engine in cache.popitem()[1]:
            engine.close()


atexit.register(close_engines)


def _record(a: Encoder, b: Encoder, c: Comparison, directory: str, width: int,
            typed: tuple[str, str] | None = None, seed: int | None = None, generator: str | None = None,
            compare_on: str = "all") -> tuple[str, dict[str, Any]]:
    """(file name, record) of ``c`` as :func:`tokspec.diff.save_counterexample` would write it; with
    ``typed`` (the names as typed), the replay command uses them and the record gets its
    ``"provenance"`` (:mod:`tokspec.provenance`) and ``"cause"`` (:mod:`tokspec.cluster`)."""
    name = record_name(a, b, c.text)
    if typed is None:
        return name, make_record(a, b, c, width=width, reproduce=reproduce_command(a, b, Path(directory) / name))
    from tokspec.cluster import cause_of
    from tokspec.provenance import provenance, replay_command

    prov = provenance(*typed, seed=seed, generator=generator, compare_on=compare_on)
    command = replay_command(*typed, Path(directory) / name, env=prov["env"], compare_on=compare_on)
    record = make_record(a, b, c, width=width, reproduce=command)
    record["provenance"] = prov
    record["cause"] = cause_of(a, b, c).as_dict()
    return name, record


@dataclass(frozen=True)
class DiffJob:
    """One batch of file mode: engine names, options, and (location, text) inputs."""

    a: str
    b: str
    report: str
    width: int
    minimize: bool
    shrink_time: float
    inputs: list[tuple[str, str]]
    compare_on: str = "all"


def diff_batch(job: DiffJob) -> tuple[list[dict[str, Any]], list[tuple[Any, ...]]]:
    """Compare ``job``'s inputs in order: (engine infos, per input ``(classification,)`` when they
    agree or ``(classification, where, record name, record, readable report)``). O(encode)."""
    try:
        a, b = engines_for(job.a, job.b, job.compare_on)
    except TokspecError as exc:
        raise WorkerSetupError(str(exc)) from None
    out: list[tuple[Any, ...]] = []
    for where, text in job.inputs:
        c = compare(a, b, text)
        if c.agree:
            out.append((None,))
            continue
        classification = c.classification
        if job.minimize:
            c = minimized(a, b, c, job.shrink_time)
            where += f" (minimized from {len(text)} to {len(c.text)} chars)"
        name, record = _record(a, b, c, job.report, job.width, (job.a, job.b), compare_on=job.compare_on)
        out.append((classification, where, name, record, format_comparison(a, b, c, width=job.width)))
    return [asdict(a.info), asdict(b.info)], out


@dataclass(frozen=True)
class FuzzParams:
    """Fuzz mode's options, as plain data for a worker."""

    a: str
    b: str
    seconds: float  # search time once the engines are loaded (as in one process)
    max_findings: int
    shrink_time: float
    report: str
    save_corpus: str | None
    width: int
    compare_on: str = "all"


@dataclass
class Finding:
    """A new (to its worker) minimized finding, with everything the caller needs to report it."""

    key: tuple[Any, ...]
    classification: str
    input_number: int
    found_chars: int
    chars: int
    name: str
    record: dict[str, Any]
    corpus_record: dict[str, Any] | None
    display: str
    cause_key: tuple[Any, ...] = ()
    cause_name: str = ""
    members: int = 0  # > 0: not a finding but the count of one cause's findings in a worker (at its end)


class _StoppableFinder(Finder):
    """A :class:`Finder` that also stops when ``stop()`` says so (another worker ended the run)."""

    def __init__(self, a: Encoder, b: Encoder, stop: Callable[[], bool], **kwargs: Any) -> None:
        super().__init__(a, b, **kwargs)
        self._stop = stop

    def done(self) -> bool:
        return self._stop() or super().done()


def fuzz_loop(params: FuzzParams, seed: int, emit: Callable[[Finding], None], stop: Callable[[], bool],
              tick: Callable[[int], None] | None = None) -> tuple[list[str], Counter[str | None]]:
    """Search with the seeded text sources (:func:`tokspec.app.finder.run_search`) for
    ``params.seconds``, until ``params.max_findings`` findings, or until ``stop()``.

    Returns (generator names, how many inputs got each classification: None = agreed). Each new
    minimized finding (by :func:`~tokspec.app.finder.finding_key`, within this loop) goes to ``emit``.
    """
    from tokspec.app.search import LONG_SHARE, text_sources

    a, b = engines_for(params.a, params.b, params.compare_on)
    sources = text_sources(a, seed, long_share=LONG_SHARE, b=b)
    classes: Counter[str | None] = Counter()

    def on_finding(f: Any) -> None:
        small, text = f.comparison, f.original.text
        typed, how = (params.a, params.b), {"seed": seed, "generator": f.source, "compare_on": params.compare_on}
        name, record = _record(a, b, small, params.report, params.width, typed, **how)
        corpus = _record(a, b, small, params.save_corpus, params.width, typed, **how)[1] if params.save_corpus \
            else None
        key = cost_key(small, f.source) if small.classification == COST else finding_key(small)
        emit(Finding(key, str(small.classification), f.input_number, len(text), len(small.text),
                     name, record, corpus, format_comparison(a, b, small, width=params.width),
                     f.cause.key, f.cause.name))

    finder = _StoppableFinder(a, b, stop, max_findings=params.max_findings, shrink_seconds=params.shrink_time,
                              on_compare=lambda c: classes.update([c.classification]), on_finding=on_finding)
    run_search(finder, sources, seconds=params.seconds,
               tick=None if tick is None else lambda: tick(classes.total()))
    for key, count in finder.clusters.members.items():  # member counts per cause, for the summary
        emit(Finding((), "", 0, 0, 0, "", {}, None, "", key, finder.clusters.names[key], count))
    return [s.name for s in sources], classes


def fuzz_process(params: FuzzParams, seed: int, queue: Any, stop: Any) -> None:
    """A fuzz worker process: :func:`fuzz_loop` with findings and progress sent on ``queue``, then
    ``("done", generators, counts, infos)``, or ``("error", one-line message)``. Dies with its
    parent, even on the parent's SIGKILL."""
    die_with_parent()
    try:
        names, counts = fuzz_loop(params, seed, lambda f: queue.put(("finding", f)), stop.is_set,
                                  lambda n: queue.put(("tick", seed, n)))
        a, b = engines_for(params.a, params.b)
        queue.put(("done", names, counts, [asdict(a.info), asdict(b.info)]))
    except TokspecError as exc:
        queue.put(("error", str(exc)))
    except BaseException as exc:  # noqa: BLE001 - the parent must hear of it, not wait forever
        queue.put(("error", f"fuzz worker failed: {type(exc).__name__}: {exc}"))
    finally:
        close_engines()
