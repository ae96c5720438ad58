"""The atheris harness: ``python -m tokspec.fuzz.harness TARGET [libFuzzer flags] [corpus dirs]``.

Coverage-guided fuzzing of one target (see ``tokspec.fuzz.targets``; ``mutant:NAME`` runs a
deliberately broken engine from ``tokspec.fuzz.mutants``). Engine modules of tokspec are imported
under ``atheris.instrument_imports`` so libFuzzer's coverage counter sees their Python code
(vocabulary loading, spec/ checks and the fuzz layer itself are left uninstrumented).

- ``diff``/``property`` targets: fuzzer bytes become text by ``targets.text_for`` (``text_from_bytes`` under the target's cap). A failing
  text is reported at once (raw report, atomic), then minimized (``tokspec.minimize``) and
  re-reported under its id; the raw report is removed only after the minimized one is written.
- ``hypothesis`` targets: the bytes drive ``test.hypothesis.fuzz_one_input``; a failure is
  reported with its example, then shrunk by hypothesis itself (replaying the example database).

Fuzzing continues after a finding; after ``TOKSPEC_FUZZ_MAX_REPORTS`` (default 5) new findings in
one run, further failing inputs are ignored (so minimization cannot eat the budget) while coverage
exploration goes on. With ``TOKSPEC_FUZZ_STOP_ON_FIRST=1`` (mutant runs) the process exits with
code 77 after the first report. With ``TOKSPEC_FUZZ_CRASH=1`` (the OSS-Fuzz/ClusterFuzzLite targets of
``tokspec.fuzz.clusterfuzzlite``) a new failure raises :class:`FindingCrash` at once, unminimized:
libFuzzer writes the ``crash-`` artifact and exits non-zero, as those platforms expect. Every report line on stderr reads ``TOKSPEC-FINDING <id> <seconds> <path>``, the
seconds counted from the start of fuzzing to the *detection* (before minimization).
A known finding (stored under ``corpora/fuzz/<target>/findings``), or a failure of the same class
(``_findings.finding_class``) as an open stored one, is not reported again: it is counted on stderr
as ``TOKSPEC-KNOWN <count> <class>``. Each new class is reported once per run.

``--replay DIR_OR_FILE TARGET`` re-checks stored reports deterministically and prints one JSON line
per report: ``{"id", "reproduces"}``.

Out of scope: distributed fuzzing, libFuzzer fork mode.
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["main", "EXIT_FOUND", "EXIT_UNAVAILABLE"]

EXIT_FOUND = 77
EXIT_UNAVAILABLE = 3


class FindingCrash(AssertionError):
    """A new finding in crash mode (``TOKSPEC_FUZZ_CRASH=1``); never caught by the harness."""
_NOT_INSTRUMENTED = ("tokspec.formats.vocab", "tokspec.spec", "tokspec.fuzz", "tokspec.minimize", "tokspec.corpus",
                     # modules with numba kernels (tokspec._jit): numba cannot compile instrumented
                     # bytecode (TypingError on atheris._trace_branch); their branches are fuzzed
                     # through tokspec.fast.interpreted's plain-Python copies instead
                     "tokspec._jit", "tokspec._offsets", "tokspec.engines._hf_kernels", "tokspec.engines._spm_tile",
                     "tokspec.fast.bpe_kernel", "tokspec.fast.pretok_peek2", "tokspec.fast._spm_kernels",
                     "tokspec.fast._unigram_emit", "tokspec.fast._unigram_kernels",
                     "tokspec.fast.unigram_datrie", "tokspec.fast._counting_kernels",
                     "tokspec.fast._piece_cache", "tokspec.fast._piece_table", "tokspec.fast._spm_ids",
                     "tokspec.fast._metaspace", "tokspec.fast._bpe_probe", "tokspec.fast._bpe_text",
                     "tokspec.fast._spm_norm_ids", "tokspec.fast._piece_store", "tokspec.fast._hf_norm_kernels",
                     "tokspec.fast._hf_pretok_kernels", "tokspec.fast._hf_precompiled", "tokspec.fast._le_load",
                     "tokspec.fast._cold_start", "tokspec.fast._hf_pretok_split", "tokspec.fast._hf_norm_forms")


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


def _load_target(name: str) -> Any:
    for prefix in ("mutant:", "mutant--"):
        if name.startswith(prefix):
            from tokspec.fuzz.mutants import mutant_target
            return mutant_target(name[len(prefix):])
    from tokspec.fuzz.targets import target_by_name
    return target_by_name(name)


def _replay(path: str, target_name: str) -> int:
    from tokspec.fuzz.replay import replay_report
    files = sorted(Path(path).glob("*.json")) if Path(path).is_dir() else [Path(path)]
    target = _load_target(target_name)
    check = None
    if target.kind != "hypothesis" and files:
        from tokspec.fuzz.targets import make_checker
        check = make_checker(target)  # the engines load once for all the reports
    bad = 0
    for f in files:
        report = json.loads(f.read_text(encoding="utf-8"))
        reproduces = replay_report(target, report, check)
        print(json.dumps({"id": report.get("id", f.stem), "reproduces": reproduces}), flush=True)
        bad += not reproduces
    return 0


#: One input checked before ``TOKSPEC-READY`` (the fuzzing clock starts after it; the runner counts
#: the time as start-up): the kernels of a compiled engine compile on first use, or load from
#: numba's disk cache, which is keyed by the installed files' folder, so a fresh ``tox -e fuzz``
#: environment starts with none even when ``tox -e py`` filled the table cache (measured: 301 seed
#: inputs of prop--fast_cl100k_base took 4 s instead of 2). It goes through the same check and
#: reporting as every fuzz input: a failure on it is reported like any other. Not in the mutant
#: self-test (``TOKSPEC_FUZZ_STOP_ON_FIRST``: it measures the search) nor in crash mode
#: (``TOKSPEC_FUZZ_CRASH``: a crash belongs inside libFuzzer, which writes its artifact).
WARM_UP_INPUT = "hello world, 12345 \u4e2d\u6587!\n  x".encode("utf-8")


#: libFuzzer's own default for -rss_limit_mb.
LIBFUZZER_RSS_LIMIT_MB = 2048


def inherited_peak_mb() -> int:
    """Megabytes of peak resident memory this process reports but never had: Linux carries the
    parent's peak into a child across fork and exec (``getrusage``'s ``ru_maxrss``), and libFuzzer
    judges -rss_limit_mb on that figure, so a fuzzer started by a large process (a pytest worker
    after many tests, a 2 GB runner) was stopped as out-of-memory before its first input. Call it
    first thing: the peak minus the memory resident now. 0 off Linux."""
    try:
        import resource
        with open("/proc/self/statm", encoding="ascii") as f:
            resident_pages = int(f.read().split()[1])
    except (ImportError, OSError, ValueError, IndexError):
        return 0
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024  # KiB on Linux
    return max(0, peak_mb - resident_pages * os.sysconf("SC_PAGE_SIZE") // (1 << 20))


def with_rss_allowance(flags: list[str], inherited_mb: int) -> list[str]:
    """libFuzzer ``flags`` whose -rss_limit_mb (given, or libFuzzer's default) is raised by the
    ``inherited_mb`` the process never used: the limit then bounds the fuzzer's own memory."""
    limit, rest = LIBFUZZER_RSS_LIMIT_MB, []
    for flag in flags:
        if flag.startswith("-rss_limit_mb="):
            limit = int(flag.split("=", 1)[1])
        else:
            rest.append(flag)
    if inherited_mb <= 0 or limit <= 0:  # nothing inherited, or no limit (-rss_limit_mb=0)
        return flags
    return [f"-rss_limit_mb={limit + inherited_mb}", *rest]


def main(argv: list[str], *, self_cmd: str | None = None) -> int:
    """``argv`` = [program, TARGET, libFuzzer flags and corpus dirs...]. ``self_cmd``: the shell
    command that re-runs this target (libFuzzer's -merge/-fork/-jobs use it; default: this module)."""
    inherited_mb = inherited_peak_mb()
    if len(argv) >= 2 and argv[1] == "--replay":
        return _replay(argv[2], argv[3])
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    import atheris

    from tokspec.fuzz._findings import cache_root
    target = _load_target(argv[1])
    report_dir = Path(os.environ.get("TOKSPEC_FUZZ_REPORT_DIR", cache_root() / "reports" / target.name))
    # Engines are instrumented for coverage; loaders and checkers are not (instrumented code runs
    # several times slower, and their branches say nothing about the engine under test).
    # The kernels' plain copies (tokspec._interpreted) are executed from their files, which the
    # import hook never sees: instrument them function by function as they are made.
    from tokspec._interpreted import instrument_copies
    instrument_copies(atheris.instrument_func)
    with atheris.instrument_imports(include=["tokspec"], exclude=list(_NOT_INSTRUMENTED)):
        try:
            if target.kind == "hypothesis":
                from tokspec.fuzz import hyp_targets
                reason = hyp_targets.unavailable_reason(target.properties[0])
                if reason:
                    raise RuntimeError(reason)
            else:
                from tokspec.fuzz.targets import make_checker
                check = make_checker(target)
        except Exception as exc:  # noqa: BLE001 - an engine that does not load: say so, exit 3
            print(f"TOKSPEC-UNAVAILABLE {type(exc).__name__}: {exc}"[:300], file=sys.stderr, flush=True)
            return EXIT_UNAVAILABLE
    rep = _Reporter(target, report_dir)
    one = (_hyp_one_input(target.properties[0], rep) if target.kind == "hypothesis"
           else _text_one_input(target, check, rep))
    if target.kind != "hypothesis" and not (rep.crash or rep.stop_on_first):  # start-up: see WARM_UP_INPUT
        one(WARM_UP_INPUT)
        rep.t0 = time.monotonic()
    print(f"TOKSPEC-READY {target.name}", file=sys.stderr, flush=True)
    # libFuzzer's -merge/-fork/-jobs re-run argv[0] through the shell: make it a command that works.
    import shlex
    self_cmd = self_cmd or shlex.join([sys.executable, "-m", "tokspec.fuzz.harness", argv[1]])
    atheris.Setup([self_cmd] + with_rss_allowance(argv[2:], inherited_mb), one)
    atheris.Fuzz()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
