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

What happens on a failing input (reports, minimizing, crash mode) lives in
``tokspec.fuzz._harness_report``; this module runs libFuzzer and replays reports.

Out of scope: distributed fuzzing, libFuzzer fork mode.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

# the reporting half of the harness; EXIT_FOUND and FindingCrash stay importable from here
from tokspec.fuzz._harness_report import EXIT_FOUND, FindingCrash, _hyp_one_input, _Reporter, _text_one_input

__all__ = ["main", "EXIT_FOUND", "EXIT_UNAVAILABLE", "FindingCrash"]

EXIT_UNAVAILABLE = 3


_NOT_INSTRUMENTED = ("tokspec.formats.vocab", "tokspec.spec", "tokspec.fuzz", "tokspec.minimize", "tokspec.corpus",
                     # modules with numba kernels (tokspec._jit): numba cannot compile instrumented
                     # bytecode (TypingError on atheris._trace_branch); their branches are fuzzed
                     # through tokspec.fast.interpreted's plain-Python copies instead
                     "tokspec._jit", "tokspec._offsets", "tokspec.engines._hf_kernels", "tokspec.engines._spm_tile",
                     "tokspec.engines._spm_align",
                     "tokspec.fast.bpe_kernel", "tokspec.fast._bpe_encode", "tokspec.fast.pretok_peek2", "tokspec.fast._bpe_batch",
                     "tokspec.fast._spm_kernels",
                     "tokspec.fast._unigram_emit", "tokspec.fast._unigram_kernels", "tokspec.fast._unigram_batch",
                     "tokspec.fast.unigram_datrie", "tokspec.fast._counting_kernels",
                     "tokspec.fast._piece_cache", "tokspec.fast._piece_table", "tokspec.fast._spm_ids",
                     "tokspec.fast._metaspace", "tokspec.fast._bpe_probe", "tokspec.fast._bpe_text",
                     "tokspec.fast._spm_norm_ids", "tokspec.fast._piece_store", "tokspec.fast._hf_norm_kernels",
                     "tokspec.fast._hf_pretok_kernels", "tokspec.fast._hf_precompiled", "tokspec.fast._le_load", "tokspec.fast._wrapping",
                     "tokspec.fast._prefetch", "tokspec.fast._bits", "tokspec.fast._builtin", "tokspec.fast._text_arrays",
                     "tokspec.fast._cold_start", "tokspec.fast._hf_pretok_split", "tokspec.fast._hf_norm_forms",
                     "tokspec.fast._bpe_ascii", "tokspec.fast._bpe_ascii_scan")


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
