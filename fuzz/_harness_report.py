"""Reports of the atheris harness (``tokspec.fuzz.harness``): what happens when an input fails.

- :class:`_Reporter` writes one target run's reports atomically (``_findings.write_json_atomic``),
  counts known findings and classes, and in crash mode (``TOKSPEC_FUZZ_CRASH=1``) raises
  :class:`FindingCrash` at once with a message that says what differs (:func:`_crash_detail`).
- :func:`_text_one_input` (``diff``/``property`` targets): a failing text is reported raw at once,
  then minimized (``tokspec.minimize``) and re-reported under its id; the raw report is removed
  only after the minimized one is written.
- :func:`_hyp_one_input` (``hypothesis`` targets): the fuzzer's bytes drive
  ``fuzz_one_input``; a failure is reported with its example, then shrunk by hypothesis itself
  (:func:`_report_hyp`).

Split out of ``tokspec.fuzz.harness`` (which re-exports these names) along the seam between
reporting and running libFuzzer. Nothing found is lost: every report is written before anything
that can fail (minimizing, shrinking).
"""

from __future__ import annotations

import os
import sys
import time
import traceback
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["EXIT_FOUND", "FindingCrash"]

EXIT_FOUND = 77


class FindingCrash(AssertionError):
    """A new finding in crash mode (``TOKSPEC_FUZZ_CRASH=1``); never caught by the harness."""


class _Reporter:
    """Writes reports for one target run; remembers ids seen (known + this run)."""

    def __init__(self, target: Any, report_dir: Path) -> None:
        from tokspec.fuzz import _findings
        self.target = target
        self.dir = report_dir
        self.seen = _findings.known_ids(target.name)
        self.classes = _findings.known_classes(target.name)
        self.known_hits = 0
        self.count = 0
        self.execs = 0
        self.t0 = time.monotonic()
        self.max_reports = int(os.environ.get("TOKSPEC_FUZZ_MAX_REPORTS", "5"))
        self.stop_on_first = os.environ.get("TOKSPEC_FUZZ_STOP_ON_FIRST") == "1"
        self.crash = os.environ.get("TOKSPEC_FUZZ_CRASH") == "1"

    def crash_now(self, explanation: str) -> None:
        """Crash mode (OSS-Fuzz/ClusterFuzzLite): a new failure is an uncaught exception, so libFuzzer
        writes the input as its ``crash-<sha1>`` artifact and exits non-zero; the platform minimizes."""
        if self.crash:
            message = f"{self.target.name}: {explanation}"[:2000]
            print(f"TOKSPEC-CRASH {message}", file=sys.stderr, flush=True)
            raise FindingCrash(message)

    def elapsed(self) -> float:
        return round(time.monotonic() - self.t0, 3)

    def write(self, fid: str, body: dict[str, Any]) -> Path:
        """Write report ``fid`` atomically; ``body`` should carry ``detected_after_s``."""
        from tokspec.fuzz._findings import write_json_atomic
        body = {"id": fid, "target": self.target.name, "kind": self.target.kind,
                "engines": list(self.target.engines), "written_after_s": self.elapsed(),
                "status": "open", "reproduce": f"python -m tokspec.fuzz.harness --replay "
                f"corpora/fuzz/{self.target.name}/findings/{fid}.json {self.target.name}", **body}
        return write_json_atomic(self.dir / f"{fid}.json", body)

    def is_known_class(self, explanation: str, witness: dict[str, Any] | None) -> bool:
        """True (and counted) if the failure belongs to a known open bug class."""
        from tokspec.fuzz._findings import finding_class
        cls = finding_class(explanation, witness)
        if cls not in self.classes:
            return False
        self.known_hits += 1
        if self.known_hits in (1, 10, 100, 1000) or self.known_hits % 10000 == 0:
            print(f"TOKSPEC-KNOWN {self.known_hits} {cls}", file=sys.stderr, flush=True)
        return True

    def done(self, fid: str, path: Path, detected: float) -> None:
        self.count += 1
        print(f"TOKSPEC-EXECS {self.execs}", file=sys.stderr, flush=True)
        print(f"TOKSPEC-FINDING {fid} {detected:.3f} {path}", file=sys.stderr, flush=True)
        if self.stop_on_first:
            os._exit(EXIT_FOUND)


def _crash_detail(explanation: str, witness: dict[str, Any] | None, target: Any) -> str:
    """A crash message that says what differs: the explanation, the character where the first
    differing tokens start, both engines' tokens there, and the replay command of the crash file."""
    if not witness or "text" not in witness or "outputs" not in witness:
        return explanation
    text, names = witness["text"], list(witness.get("outputs", {}))
    k = witness.get("first_divergence")
    parts = [explanation]
    for name in names:
        out = witness["outputs"][name]
        if k is None or "offsets" not in out or k >= len(out["offsets"]):
            parts.append(f"{name}: {str(out.get('crash') or out.get('invalid') or 'no token here')[:200]}")
            continue
        s, e = out["offsets"][k]
        tid = None if out.get("ids") is None else out["ids"][k]
        parts.append(f"{name} token #{k}: id={tid} offsets=({s}, {e}) text={text[s:e]!r:.80}")
    starts = [witness["outputs"][n]["offsets"][k][0] for n in names
              if k is not None and k < len(witness["outputs"][n].get("offsets") or [])]
    if starts:
        c = min(starts)
        ch = text[c] if c < len(text) else ""
        parts.append(f"at character {c} " + (f"U+{ord(ch):04X} ({unicodedata.category(ch)})" if ch else ""))
    if getattr(target, "kind", "") == "diff" and len(names) == 2:
        parts.append(f"replay the crash file: tokspec diff {names[0]} {names[1]} --inputs CRASH_FILE --raw")
    return "; ".join(parts)


def _text_one_input(target: Any, check: Callable[[str], Any], rep: _Reporter) -> Callable[[bytes], None]:
    from tokspec.fuzz._findings import finding_id
    from tokspec.fuzz.targets import text_for
    from tokspec.minimize import minimize_text

    def one(data: bytes) -> None:
        rep.execs += 1
        text = text_for(target, data)
        verdict = check(text)
        if verdict.holds or rep.count >= rep.max_reports:
            return
        raw_id = finding_id(text)
        if raw_id in rep.seen or rep.is_known_class(verdict.explanation, verdict.witness):
            return
        rep.crash_now(_crash_detail(verdict.explanation, verdict.witness, target))
        detected = rep.elapsed()
        raw_path = rep.write("raw-" + raw_id, {"text": text, "minimized": False, "detected_after_s": detected,
                                               "explanation": verdict.explanation, "witness": verdict.witness})
        small = minimize_text(text, lambda t: not check(t).holds, max_tests=400, seconds=20)
        fid = finding_id(small)
        v = check(small)
        # Test "seen" before recording this input: an input that is already minimal has
        # fid == raw_id and must still be reported.
        known = fid in rep.seen or rep.is_known_class(v.explanation, v.witness)
        rep.seen.update((raw_id, fid))
        if known:
            raw_path.unlink(missing_ok=True)  # minimized to a known finding or class
            return
        from tokspec.fuzz._findings import finding_class
        rep.classes.add(finding_class(v.explanation, v.witness))
        path = rep.write(fid, {"text": small, "text_hex": small.encode("utf-8", "surrogatepass").hex(),
                               "original_text": text, "minimized": True, "detected_after_s": detected,
                               "explanation": v.explanation, "witness": v.witness})
        raw_path.unlink(missing_ok=True)
        rep.done(fid, path, detected)
    return one


def _hyp_one_input(name: str, rep: _Reporter) -> Callable[[bytes], None]:
    from hypothesis import Phase, settings
    from tokspec.fuzz import hyp_targets
    from tokspec.fuzz._findings import finding_id, hypothesis_database, hypothesis_db_dir
    db = hypothesis_database(hypothesis_db_dir())
    test = settings(database=db, deadline=None, max_examples=1)(hyp_targets.make_test(name))
    shrink = settings(database=db, deadline=None, phases=[Phase.reuse, Phase.shrink])(
        hyp_targets.make_test(name))

    def one(data: bytes) -> None:
        rep.execs += 1
        if rep.count >= rep.max_reports:
            return
        try:
            test.hypothesis.fuzz_one_input(data)  # type: ignore[attr-defined]
        except hyp_targets.PropertyFailed as exc:
            _report_hyp(exc, shrink, rep, finding_id)
        except Exception as exc:  # noqa: BLE001 - an engine crash on a tiny vocabulary is data
            if rep.crash:
                raise
            fid = finding_id({"crash": repr(exc)[:300]})
            if fid not in rep.seen:
                rep.seen.add(fid)
                detected = rep.elapsed()
                rep.done(fid, rep.write(fid, {"explanation": "crash", "detected_after_s": detected,
                                              "traceback": traceback.format_exc()}), detected)
    return one


def _report_hyp(exc: Any, shrink: Any, rep: _Reporter, finding_id: Callable[[Any], str]) -> None:
    raw = finding_id(exc.example)
    if raw in rep.seen or rep.is_known_class(exc.verdict.explanation, exc.verdict.witness):
        return
    rep.crash_now(exc.verdict.explanation)
    detected = rep.elapsed()
    raw_path = rep.write("raw-" + raw, {"example": exc.example, "explanation": exc.verdict.explanation,
                                        "detected_after_s": detected,
                                        "witness": exc.verdict.witness, "minimized": False})
    best = exc
    try:
        shrink()
    except Exception as shrunk:  # noqa: BLE001 - the shrunk failure, whatever it is
        best = shrunk if hasattr(shrunk, "example") else exc
    fid = finding_id(best.example)
    rep.seen.add(raw)
    if fid in rep.seen or rep.is_known_class(best.verdict.explanation, best.verdict.witness):
        raw_path.unlink(missing_ok=True)  # shrank to a known finding or class
        return
    rep.seen.add(fid)
    from tokspec.fuzz._findings import finding_class
    rep.classes.add(finding_class(best.verdict.explanation, best.verdict.witness))
    path = rep.write(fid, {"example": best.example, "explanation": best.verdict.explanation,
                           "witness": best.verdict.witness, "minimized": True, "detected_after_s": detected,
                           "original_example": exc.example})
    raw_path.unlink(missing_ok=True)
    rep.done(fid, path, detected)
