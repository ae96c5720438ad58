"""The concurrency stage of ``tokspec diff`` and ``check_against``: each engine called from several
threads at once on a sample of the inputs already compared, every result checked against the same
engine's serial result (issue 24).

A difference or an exception under concurrency is a finding of class ``"not thread-safe"``,
minimized by :func:`tokspec.concurrency.minimize_fault` to the smallest pair of texts and thread
count that shows it, and stored as a *thread record*: a JSON Lines file, one object per text of the
witness, the first also holding ``"tokspec_thread_record"`` (engine info, class, thread count, the
faulting text's index, what went wrong, the command that replays it). Because every line has a
``"text"``, the replay is an ordinary inputs file: ``tokspec diff E E --inputs RECORD --threads N``
(the stage then samples exactly those texts).

Engines skipped, each said in the stage's notes: ``cmd:`` engines (exempt: one request at a time)
and engines declaring ``thread_safe=False``; an engine given twice (``diff E E``) is tested once.
Engines declaring ``True`` are tested like the undeclared: a declaration is a claim.

Sample (:func:`sample_texts`): the :data:`LONG` longest inputs and :data:`SPREAD` others spread
evenly over the input order, at most :data:`MAX_SAMPLE_CHARS` characters in all (longer texts are
cut). Cost: ``threads * ROUNDS`` encodes of the sample plus one serial pass per engine, and the
minimization on a fault. Out of scope: crashes that end the process (the stage runs in-process).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import shlex
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tokspec._atomic import write_atomic
from tokspec._escape import dumps, escape
from tokspec._limits import DeadlineExceeded
from tokspec._types import Encoder
from tokspec.concurrency import ConcurrencyFault, concurrency_fault, declared_thread_safe, minimize_fault

__all__ = ["diff_stage", "stage_threads", "THREADS_ENV", "CLASSIFICATION", "LONG", "SPREAD", "MAX_SAMPLE_CHARS", "ROUNDS", "StageResult",
           "default_threads", "sample_texts", "run_stage", "write_thread_record", "read_thread_record"]

CLASSIFICATION = "not thread-safe"
LONG, SPREAD = 2, 10
MAX_SAMPLE_CHARS = 100_000
ROUNDS = 3
FUZZ_LONG_CHARS = 30_000  # the long text the stage adds in fuzz mode


def default_threads() -> int:
    """A small number above the usable cores: cores + 2 (4 on a 2-core machine)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    return max(1, cores) + 2


THREADS_ENV = "TOKSPEC_THREADS"


def stage_threads(given: int | None) -> int:
    """The stage's thread count: ``given`` (``--threads``, ``threads=``), else the environment
    variable :data:`THREADS_ENV` (``0`` skips the stage: a suite whose many diffs are not about
    threads, a CI job that runs the stage once elsewhere), else :func:`default_threads`."""
    if given is not None:
        return given
    raw = os.environ.get(THREADS_ENV, "").strip()
    if not raw:
        return default_threads()
    try:
        value = int(raw)
    except ValueError:
        value = -1
    if value < 0:
        from tokspec.errors import TokspecError

        raise TokspecError(f"{THREADS_ENV}={raw!r} is not a thread count (an integer >= 0; 0 skips the stage)")
    return value


def sample_texts(texts: Iterable[str], *, long: int = LONG, spread: int = SPREAD,
                 max_chars: int = MAX_SAMPLE_CHARS) -> list[str]:
    """The ``long`` longest non-empty texts, then up to ``spread`` others evenly spaced over the
    order given, distinct, within ``max_chars`` characters in all (a long text is cut to fit).
    Holds every text once: O(total characters)."""
    pool = list(dict.fromkeys(t for t in texts if t))
    longest = sorted(range(len(pool)), key=lambda i: -len(pool[i]))[:long]
    rest = [i for i in range(len(pool)) if i not in set(longest)]
    step = max(1, len(rest) // max(1, spread))
    chosen = longest + rest[::step][:spread]
    out: list[str] = []
    budget = max_chars
    for i in chosen:
        if budget <= 0:
            break
        text = pool[i][:budget]
        out.append(text)
        budget -= len(text)
    return out


@dataclass
class StageResult:
    """What the stage did: ``faults`` (engine name -> minimized fault), ``records`` written, ``notes``."""

    faults: dict[str, ConcurrencyFault] = field(default_factory=dict)
    records: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _rounds(texts: list[str], rounds: int) -> int:
    """More rounds for a small sample (a replayed witness): about 20,000 characters' worth, at most 50."""
    return max(rounds, min(50, 20_000 // max(1, sum(map(len, texts)))))


def _skip_reason(engine: Encoder) -> str | None:
    if engine.info.name.startswith("cmd:"):
        return "exempt (cmd: engines serve one request at a time)"
    if declared_thread_safe(engine) is False:
        return "skipped: declared thread_safe=False"
    return None


def run_stage(engines: Iterable[Encoder], texts: list[str], *, threads: int, report: str | Path | None,
              rounds: int = ROUNDS, minimize_by: float | None = None) -> StageResult:
    """Test each engine (once per name) on ``texts`` with ``threads`` threads; write a thread record
    per faulting engine into ``report`` (if given). ``threads < 2`` or no text: nothing runs.
    ``minimize_by`` (a :func:`time.monotonic` time): a fault's minimization stops there and the
    smallest witness found so far is recorded (said in the notes)."""
    result = StageResult()
    if threads < 2 or not texts:
        result.notes.append("concurrency stage skipped" + (" (--threads 0)" if threads == 0 else ""))
        return result
    seen: set[str] = set()
    for engine in engines:
        name = engine.info.name
        if name in seen:
            continue
        seen.add(name)
        reason = _skip_reason(engine)
        if reason is not None:
            result.notes.append(f"{name}: {reason}")
            continue
        try:
            fault = concurrency_fault(engine, texts, threads=threads, rounds=_rounds(texts, rounds))
        except KeyboardInterrupt:
            raise
        except DeadlineExceeded:  # a time bound, not the engine: no verdict either way
            result.notes.append(f"{name}: concurrency stage cut short by a time bound (no verdict)")
            continue
        except BaseException as exc:  # noqa: BLE001 - fails alone (even SystemExit): the comparison reports that
            result.notes.append(f"{name}: concurrency stage skipped, the engine fails alone ({type(exc).__name__})")
            continue
        if fault is None:
            result.notes.append(f"{name}: {threads} threads x {len(texts)} texts x {_rounds(texts, rounds)} rounds agree "
                                "with serial encoding")
            continue
        small = minimize_fault(engine, fault, deadline=minimize_by)
        result.faults[name] = small
        cut = minimize_by is not None and time.monotonic() >= minimize_by
        result.notes.append(f"{name}: NOT THREAD-SAFE: {small.describe()}"
                            + (" (minimization cut short by a time bound)" if cut else ""))
        if report is not None:
            result.records.append(str(write_thread_record(engine, small, report)))
    return result


def _record_name(engine: Encoder, fault: ConcurrencyFault) -> str:
    digest = hashlib.sha256(json.dumps([engine.info.name, fault.threads, list(fault.texts)]).encode("utf-8"))
    return f"threads-{digest.hexdigest()[:20]}.jsonl"


def write_thread_record(engine: Encoder, fault: ConcurrencyFault, directory: str | Path) -> Path:
    """Write the thread record of ``fault`` (module docstring) atomically into ``directory``."""
    path = Path(directory) / _record_name(engine, fault)
    name = shlex.quote(engine.info.name)
    meta: dict[str, Any] = {
        "classification": CLASSIFICATION,
        "engine": dataclasses.asdict(engine.info),
        "threads": fault.threads,
        "index": fault.index,
        "kind": fault.kind,
        "detail": fault.detail,
        "reproduce": f"tokspec diff {name} {name} --inputs {shlex.quote(str(path))} --threads {fault.threads}",
    }
    lines = [dumps({"text": fault.texts[0], "tokspec_thread_record": meta})]
    lines += [dumps({"text": t}) for t in fault.texts[1:]]
    return write_atomic(path, "\n".join(lines) + "\n")


def read_thread_record(path: str | Path) -> tuple[dict[str, Any], tuple[str, ...]]:
    """(metadata, texts) of a thread record."""
    rows = [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]
    if not rows or "tokspec_thread_record" not in rows[0]:
        raise ValueError(f"not a tokspec thread record: path={str(path)!r}")
    return rows[0]["tokspec_thread_record"], tuple(str(r["text"]) for r in rows)


def _fuzz_sample(seed: int, records: list[str]) -> list[str]:
    """Fuzz mode's sample: the findings' texts, then tokspec's corpus (seeded) and one long grown
    text: the same sources the search drew from (the search's own inputs are not kept)."""
    import random

    from tokspec.corpus import build_corpus
    from tokspec.longtext import grow_text

    texts = []
    for path in records:
        try:
            texts.append(str(json.loads(Path(path).read_text(encoding="utf-8"))["text"]))
        except (OSError, ValueError, KeyError):
            continue
    corpus = build_corpus(seed=seed)
    return texts + [grow_text(random.Random(seed), FUZZ_LONG_CHARS, pieces=corpus[:50])] + corpus


def _read_once(inputs: str) -> bool:
    """Whether ``--inputs`` names a stream (stdin, a FIFO, ``<(cmd)``), which cannot be read again."""
    from tokspec.app._input_source import is_stream
    from tokspec.app.inputs import input_files

    try:
        return any(is_stream(f) for f in input_files(inputs))
    except (OSError, ValueError):  # tokspec.errors.TokspecError is a ValueError
        return True


def diff_stage(args: Any, engines: tuple[Encoder, Encoder], results: Any, out: Any, err: Any) -> None:
    """``tokspec diff``'s stage after the comparisons (``--threads``; module docstring). A fault
    counts as one disagreement of class :data:`CLASSIFICATION`; its record path joins
    ``results.counterexamples``; the notes become the summary's ``"concurrency"`` (a declared-unsafe
    engine's skip is also said on ``err``), faults go to ``out`` (unless --json)."""
    threads = stage_threads(getattr(args, "threads", None))
    if threads < 2:
        return
    if args.fuzz:
        texts = sample_texts(_fuzz_sample(args.seed, list(results.counterexamples)))
    elif _read_once(args.inputs):
        # stdin or a FIFO: read once by the comparison, not again here (a pipe is gone); the
        # findings' texts and the fuzz sample stand in
        texts = sample_texts(_fuzz_sample(args.seed, list(results.counterexamples)))
    else:  # a file, a directory or a glob of regular files: the same texts however they are given
        from tokspec.app.inputs import iter_inputs, iter_raw_inputs
        from tokspec.fuzz.targets import long_text_cap, pretoken_cap

        pair = (str(getattr(args, "a", "")), str(getattr(args, "b", "")))
        read = (functools.partial(iter_raw_inputs, cap=long_text_cap(pair), pretokens=pretoken_cap(pair))
                if getattr(args, "raw", False)
                else iter_inputs)  # as the comparison read them
        texts = sample_texts(t for _, t in read(args.inputs))
    # a fault's minimization has --minimize-seconds, as a comparison's shrink does
    shrink = getattr(args, "shrink_time", None)
    stage = run_stage(engines, texts, threads=threads, report=args.report,
                      minimize_by=None if shrink is None else time.monotonic() + shrink)
    results.concurrency = stage.notes  # in the --json summary
    for note in stage.notes:
        if err is not None and "declared thread_safe=False" in note:  # the rest: --json only
            print(f"threads: {escape(note)}", file=err)
    for (name, fault), path in zip(stage.faults.items(), stage.records):
        results.disagreed += 1
        results.classifications[CLASSIFICATION] += 1
        results.counterexamples.append(path)
        if not args.json:
            print(f"--- {CLASSIFICATION}: {escape(name)}: {escape(fault.describe())}", file=out)
            print(f"  record: {escape(path)}", file=out)
