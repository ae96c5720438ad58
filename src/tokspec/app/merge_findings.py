"""Findings of ``tokspec merge-check`` (:mod:`tokspec.app.cli_merge`): a merge that differs from
serial encoding, or an engine that raises during either, written as a JSON + HTML report
(:mod:`tokspec.app.merge_report`) as found first, so nothing is lost if shrinking fails, then
minimized (ddmin, keeping a difference a difference and a fault a fault of the same type) and
replaced by the minimized one (:func:`report_finding`).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from tokspec import Encoder, Encoding
from tokspec.diff import fault_message

__all__ = ["merge_outcome", "report_finding"]


def _merge_differs(engine: Encoder, strategy: str, text: str, chunk_len: int, overlap: int | None,
                   runner: Any) -> tuple[bool, Any, Encoding]:
    from tokspec.fast.merge_engines import merge_text

    result = merge_text(engine, text, strategy=strategy, chunk_len=chunk_len, overlap=overlap,
                        runner=runner)
    serial = engine.encode(text)
    return result.encoding != serial, result, serial


def _write(engine: Encoder, strategy: str, text: str, chunk_len: int, overlap: int | None,
           runner: Any, args: argparse.Namespace, original_chars: int) -> dict[str, Any]:
    """Write the report of ``text`` (JSON then HTML, atomically); return its summary entry."""
    from tokspec.app.merge_report import build_report, report_name, write_report

    _, result, serial = _merge_differs(engine, strategy, text, chunk_len, overlap, runner)
    params = {"chunk_len": chunk_len, "overlap": overlap}
    path = str(Path(args.report) / f"{report_name(engine, strategy, params, text)}.json")
    rep = build_report(engine, text, result, serial, params=params, reproduce_path=path,
                       original_chars=original_chars, strategy=strategy)
    j, h = write_report(rep, args.report)
    return {"id": rep["id"], "json": str(j), "html": str(h), "classification": rep["classification"],
            "chars": len(text), "text": text, "chunk_len": chunk_len, "overlap": overlap}


def merge_outcome(engine: Encoder, strategy: str, text: str, chunk_len: int, overlap: int | None,
             runner: Any) -> tuple[bool, BaseException | None]:
    """(differs, fault): run the merge and serial encoding; an engine's exception is the fault."""
    from tokspec.fast._chunking import MergeError

    try:
        return _merge_differs(engine, strategy, text, chunk_len, overlap, runner)[0], None
    except (MergeError, KeyboardInterrupt):
        raise
    except BaseException as exc:  # noqa: BLE001 - an engine under test may raise anything
        return True, exc


def _write_fault(engine: Encoder, strategy: str, text: str, chunk_len: int, overlap: int | None,
                 fault: str, args: argparse.Namespace, original_chars: int) -> dict[str, Any]:
    """Write the fault report of ``text`` (JSON then HTML); return its summary entry."""
    from tokspec.app.merge_report import build_fault_report, report_name, write_report

    params = {"chunk_len": chunk_len, "overlap": overlap}
    path = str(Path(args.report) / f"{report_name(engine, strategy, params, text)}.json")
    rep = build_fault_report(engine, text, strategy=strategy, params=params, fault=fault,
                             reproduce_path=path, original_chars=original_chars)
    j, h = write_report(rep, args.report)
    return {"id": rep["id"], "json": str(j), "html": str(h), "classification": "engine fault",
            "chars": len(text), "text": text, "chunk_len": chunk_len, "overlap": overlap,
            "fault": rep["fault"]}


def report_finding(engine: Encoder, strategy: str, text: str, chunk_len: int, overlap: int | None,
            runner: Any, args: argparse.Namespace, fault: BaseException | None = None) -> dict[str, Any]:
    """Report the failing text as found first (so nothing is lost if shrinking fails), then
    minimize it (ddmin, keeping a difference a difference and a fault a fault of the same type)
    and replace that report by the minimized one."""
    from tokspec.minimize import minimize_text

    def write(t: str, exc: BaseException | None) -> dict[str, Any]:
        from tokspec.fast._chunking import MergeError

        if exc is None:
            try:  # runs the engine again (and token_piece): it may raise this time
                return _write(engine, strategy, t, chunk_len, overlap, runner, args, len(text))
            except (MergeError, KeyboardInterrupt):
                raise
            except BaseException as again:  # noqa: BLE001 - an engine under test may raise anything
                exc = again
        return _write_fault(engine, strategy, t, chunk_len, overlap, fault_message(exc), args, len(text))

    found = write(text, fault)
    faults: dict[str, BaseException | None] = {}

    def still_fails(t: str) -> bool:
        differs, exc = merge_outcome(engine, strategy, t, chunk_len, overlap, runner)
        faults[t] = exc
        return differs and type(exc) is type(fault)

    small = minimize_text(text, still_fails, seconds=args.minimize_seconds)
    if small == text:
        return found
    smaller = write(small, faults.get(small, fault))
    for key in ("json", "html"):
        Path(found[key]).unlink(missing_ok=True)
    return smaller
