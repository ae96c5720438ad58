"""The parts of :func:`tokspec.app.pytest_plugin.check_against` that are not the search itself: the
user's saved findings it replays first, the failure message and record of a finding, and the
concurrency stage with its own time bound (:data:`STAGE_SECONDS`, warnings :class:`SearchCutShort`
instead of a verdict when time runs out). ``tokspec.app.pytest_plugin`` re-exports the public names.
"""

from __future__ import annotations

import time
import warnings
from pathlib import Path
from typing import Any

from tokspec._types import Encoder
from tokspec.diff import format_comparison, reproduce_command, save_counterexample

__all__ = ["STAGE_SECONDS", "SearchCutShort", "failure_message", "saved_findings", "thread_check"]


class SearchCutShort(UserWarning):
    """``max_seconds`` ended a search before its example budget: that verdict depends on speed."""


#: The least time the concurrency stage of check_against gets once it starts (it starts only while
#: max_seconds has not run out): its sample is small (about a dozen texts), but a replay that used
#: most of max_seconds must not leave it a few milliseconds and so no verdict.
STAGE_SECONDS = 120.0


def thread_check(a: Encoder, b: Encoder, n: int, folder: str, *, start_by: float | None = None,
                 end_by: float | None = None, seconds: float | None = None) -> None:
    """The concurrency stage over the replay texts with ``n`` threads (none below 2); AssertionError
    naming the witness on a fault.

    ``a``/``b`` are the engines as loaded, not :func:`~tokspec.app._deadline.bounded`: a bounded
    engine raises DeadlineExceeded once its deadline passes, which under threads would read as a
    thread-safety fault. The stage has its own bound instead: skipped (warning :class:`SearchCutShort`)
    when ``start_by`` has passed, run on a daemon thread waited for until ``end_by`` (then a
    SearchCutShort warning, never a finding). An engine call the stage abandons finishes, or not,
    on its daemon thread."""
    __tracebackhide__ = True
    import threading

    from tokspec.app.finder import replay_texts
    from tokspec.app.threads_stage import StageResult, run_stage, sample_texts

    if n < 2:
        return
    where = f"tokspec check_against({a.info.name!r}, {b.info.name!r}): max_seconds={seconds}"
    if start_by is not None and time.monotonic() >= start_by:
        warnings.warn(SearchCutShort(f"{where} left no time for the concurrency stage; it was skipped "
                                     "(raise max_seconds)"), stacklevel=3)
        return
    box: list[Any] = []
    # a fault found is reported, minimized or not: the minimization stops with a quarter of the
    # stage's time left for writing the record
    minimize_by = None if end_by is None else end_by - 0.25 * max(0.0, end_by - time.monotonic())

    def stage_run() -> None:
        try:
            box.append(run_stage((a, b), sample_texts(t for _, t in replay_texts()), threads=n, report=folder,
                                 minimize_by=minimize_by))
        except BaseException as exc:  # noqa: BLE001 - handed back to the caller
            box.append(exc)

    worker = threading.Thread(target=stage_run, daemon=True, name="tokspec-thread-stage")
    worker.start()
    worker.join(None if end_by is None else max(0.0, end_by - time.monotonic()))
    if not box:
        warnings.warn(SearchCutShort(f"{where} ended the concurrency stage before it finished; no "
                                     "thread-safety verdict (raise max_seconds)"), stacklevel=3)
        return
    if isinstance(box[0], BaseException):
        raise box[0]
    stage: StageResult = box[0]
    for (name, fault), path in zip(stage.faults.items(), stage.records):
        raise AssertionError(f"engine {name!r} is not thread-safe: {fault.describe()}\n"
                             f"witness: {[t[:80] for t in fault.texts]!r}\nrecord: {Path(path).resolve()}")


def saved_findings(folder: str | Path) -> list[tuple[str, str]]:
    """``(source, text)`` of the records saved in ``folder`` (your earlier failures, kept like
    hypothesis' example database keeps its examples): every ``*.json`` below it with a ``text``,
    sorted by path; none when the folder does not exist. :func:`check_against` replays them first."""
    from tokspec.app.finder import _in_domain, _stored_texts

    root = Path(folder)
    if not root.is_dir():
        return []
    source = f"your saved findings ({root})"
    return [(source, text) for text in dict.fromkeys(_stored_texts(root)) if _in_domain(text)]


def failure_message(a: Encoder, b: Encoder, finding: Any, seed: int, budget: int, folder: Path,
             typed: tuple[str, str] | None = None, compare: str = "all") -> str:
    """The failure message; saves the record of the minimized comparison into ``folder`` (with
    its provenance and a replay command naming the engines as given, :mod:`tokspec.provenance`)."""
    small, original = finding.comparison, finding.original
    if typed is None:
        path = save_counterexample(a, b, small, folder).resolve()
        replay = reproduce_command(a, b, path)
    else:
        from tokspec.app.diff_tasks import _record
        from tokspec.records import write_record

        folder = folder.resolve()
        name, record = _record(a, b, small, str(folder), 3, typed, seed=seed, generator=finding.source,
                               compare_on=compare)
        path = write_record(record, folder / name)
        replay = str(record["reproduce"])
    return "\n".join([
        f"engines disagree: {format_comparison(a, b, small)}",
        f"found on input #{finding.input_number} ({finding.source}), minimized from {len(original.text)} "
        f"to {len(small.text)} characters",
        f"seed: {seed} (reproduce: TOKSPEC_SEED={seed} TOKSPEC_BUDGET={budget}, or check_against(..., "
        f"seed={seed}, max_examples={budget}))",
        f"record: {path}",
        f"replay: {replay}",
    ])
