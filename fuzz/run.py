"""``python -m tokspec.fuzz.run``: fuzz every available target within a time budget.

Usage::

    python -m tokspec.fuzz.run [--seconds S] [--jobs N] [--targets NAME ...] [--list]
                               [--property-seconds S] [--mutants [--no-seeds]] [--no-store]
                               [--seed-corpora]

- Budget: ``--seconds`` or ``$TOKSPEC_FUZZ_SECONDS`` (default 540: with engine start-up, replay
  and the property stage, a ~15-minute CI job on 2 cores) is the total wall time of the fuzzing
  phase; it is shared equally by the available targets, ``--jobs`` (default 2) at a time.
- Property stage (``--property-seconds``, default 180, 0 skips it): after fuzzing, the tiny-
  vocabulary theorems and the stored-finding replay (:data:`DEEP_PROPERTY_TESTS`) run under pytest
  with ``$TOKSPEC_HYPOTHESIS_PROFILE`` (default ``deep``); a failing test counts like a new finding.
  Their hypothesis database is hypothesis' default ``.hypothesis/`` in the current directory.
- Each target runs as ``python -m tokspec.fuzz.harness TARGET -max_total_time=T
  -print_final_stats=1 -artifact_prefix=DIR/ CORPUS``; statistics are parsed from its stderr.
- State: corpora and stored findings under ``corpora/fuzz/<target>/``; the hypothesis example
  database and per-run reports under ``$TOKSPEC_CACHE/fuzz`` (else ``./.tokspec-cache/fuzz``).
  See ``tokspec.fuzz._findings``.
- Every new finding is replayed deterministically in a fresh process; a finding that reproduces is
  copied to ``corpora/fuzz/<target>/findings/<id>.json`` (unless ``--no-store``), where it becomes a
  known regression (replayed by the tests, never "new" again).
- Prints a table (target, executions, exec/s, coverage, new findings, time to first finding, and
  "known": failing inputs of already stored open bug classes, at least this many) and exits 1 if
  anything new was found, 0 otherwise (2 on usage errors).
- ``--mutants``: the harness self-test: each deliberately broken engine of ``tokspec.fuzz.mutants``
  is fuzzed until first finding (budget per mutant), reading the seed corpus of the real target
  (``--no-seeds``: from an empty corpus, pure coverage-guided search); prints time-to-catch
  (seconds from the start of fuzzing to detection) and executions; exits 1 if one escapes.
- ``--seed-corpora``: (re)write the seed inputs of every target from ``tokspec.corpus`` and exit.

Out of scope: libFuzzer fork/merge modes, remote corpora.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from tokspec.fuzz import _findings
from tokspec.fuzz.targets import TARGETS, Target

__all__ = ["main", "TargetRun", "parse_stats", "plan_budget"]

_STARTUP_S = 15.0   # engine loading before fuzzing starts (cl100k/o200k references take seconds)


@dataclass
class TargetRun:
    """One harness subprocess and what it reported."""

    name: str
    seconds: float
    argv: list[str]
    proc: subprocess.Popen[str] | None = None
    stderr_path: Path | None = None
    started: float = 0.0
    returncode: int | None = None
    stats: dict[str, float] = field(default_factory=dict)
    findings: list[tuple[str, float, str]] = field(default_factory=list)
    note: str = ""


def parse_stats(stderr: str) -> tuple[dict[str, float], list[tuple[str, float, str]], str]:
    """libFuzzer final stats, the last ``cov:`` value, finding lines, and an unavailability note."""
    stats: dict[str, float] = {}
    for key, value in re.findall(r"^stat::(\w+):\s+(\d+)", stderr, flags=re.M):
        stats[key] = float(value)
    cov = re.findall(r"\bcov: (\d+)", stderr)
    if cov:
        stats["cov"] = float(cov[-1])
    found = [(m[0], float(m[1]), m[2]) for m in re.findall(r"^TOKSPEC-FINDING (\S+) (\S+) (.+)$", stderr, re.M)]
    execs = re.findall(r"^TOKSPEC-EXECS (\d+)$", stderr, re.M)
    if execs and "number_of_executed_units" not in stats:  # exited at a finding: no final stats
        stats["number_of_executed_units"] = float(execs[-1])
    known = re.findall(r"^TOKSPEC-KNOWN (\d+) ", stderr, re.M)
    if known:
        stats["known_hits"] = float(known[-1])
    note = ""
    m = re.search(r"^TOKSPEC-UNAVAILABLE (.*)$", stderr, re.M)
    if m:
        note = "unavailable: " + m.group(1)
    return stats, found, note


def plan_budget(total_s: float, n_targets: int, jobs: int) -> float:
    """Fuzzing seconds per target: the total wall budget times the jobs, shared out, minus start-up."""
    if n_targets == 0:
        return 0.0
    return max(5.0, total_s * jobs / n_targets - _STARTUP_S)


def _harness_argv(target: str, seconds: float, run_dir: Path, extra_corpus: str = "") -> list[str]:
    corpus = (run_dir / "corpora" / target.replace(":", "--") if target.startswith("mutant:")
              else _findings.corpus_dir(target))
    corpus.mkdir(parents=True, exist_ok=True)
    artifacts = run_dir / "artifacts" / target.replace(":", "--")
    artifacts.mkdir(parents=True, exist_ok=True)
    return [sys.executable, "-m", "tokspec.fuzz.harness", target, f"-max_total_time={int(seconds)}",
            "-print_final_stats=1", f"-artifact_prefix={artifacts}/", "-max_len=512", "-timeout=60",
            "-rss_limit_mb=3072", str(corpus)] + ([extra_corpus] if extra_corpus else [])


def _start(run: TargetRun, run_dir: Path, extra_env: dict[str, str]) -> None:
    safe = run.name.replace(":", "--")
    env = dict(os.environ, TOKSPEC_FUZZ_REPORT_DIR=str(run_dir / "reports" / safe), **extra_env)
    run.stderr_path = run_dir / f"{safe}.stderr"
    fh = run.stderr_path.open("w", encoding="utf-8")
    run.started = time.monotonic()
    run.proc = subprocess.Popen(run.argv, stdout=subprocess.DEVNULL, stderr=fh, text=True, env=env)
    fh.close()


def _run_all(runs: list[TargetRun], jobs: int, run_dir: Path, extra_env: dict[str, str]) -> None:
    """Run the subprocesses ``jobs`` at a time; kill one that overstays its budget by 120 s."""
    pending, active = list(runs), []
    while pending or active:
        while pending and len(active) < jobs:
            run = pending.pop(0)
            _start(run, run_dir, extra_env)
            active.append(run)
        time.sleep(0.5)
        for run in list(active):
            assert run.proc is not None
            if run.proc.poll() is None and time.monotonic() - run.started > run.seconds + _STARTUP_S + 120:
                run.proc.kill()
                run.note = "killed: overran its budget"
            if run.proc.poll() is not None:
                run.returncode = run.proc.returncode
                text = run.stderr_path.read_text(encoding="utf-8", errors="replace") if run.stderr_path else ""
                run.stats, run.findings, note = parse_stats(text)
                run.note = run.note or note or ("" if run.returncode in (0, 77) else f"exit {run.returncode}")
                active.remove(run)


def _store_new(run: TargetRun, run_dir: Path, store: bool) -> list[str]:
    """Replay each new report in a fresh process; store those that reproduce. Returns ids."""
    safe = run.name.replace(":", "--")
    report_dir = run_dir / "reports" / safe
    reports = [p for p in sorted(report_dir.glob("*.json"))] if report_dir.is_dir() else []
    confirmed = []
    for path in reports:
        out = subprocess.run([sys.executable, "-m", "tokspec.fuzz.harness", "--replay", str(path), run.name],
                             capture_output=True, text=True, timeout=600)
        lines = [json.loads(x) for x in out.stdout.splitlines() if x.startswith("{")]
        reproduces = bool(lines and lines[0]["reproduces"])
        report = json.loads(path.read_text(encoding="utf-8"))
        report["replayed"] = reproduces
        _findings.write_json_atomic(path, report)
        if reproduces:
            confirmed.append(path.stem)
            if store:
                dest = _findings.findings_dir(safe) / path.name
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, dest)
    return confirmed


def _table(runs: list[TargetRun], new: dict[str, list[str]]) -> str:
    head = f"{'target':58} {'execs':>9} {'exec/s':>7} {'cov':>6} {'new':>4} {'first(s)':>8} {'known':>6}  note"
    lines = [head, "-" * len(head)]
    for r in runs:
        first = f"{min(f[1] for f in r.findings):.1f}" if r.findings else "-"
        lines.append(f"{r.name[:58]:58} {int(r.stats.get('number_of_executed_units', 0)):>9} "
                     f"{int(r.stats.get('average_exec_per_sec', 0)):>7} {int(r.stats.get('cov', 0)):>6} "
                     f"{len(new.get(r.name, [])):>4} {first:>8} {int(r.stats.get('known_hits', 0)):>6}  {r.note}")
    return "\n".join(lines)


def _select(names: list[str] | None) -> list[Target]:
    if not names:
        return list(TARGETS)
    chosen = [t for t in TARGETS if any(t.name == n or n in t.name for n in names)]
    if not chosen:
        raise SystemExit(f"no target matches {names!r}; see --list")
    return chosen


def _cheap_unavailable(t: Target) -> str | None:
    """Why ``t`` cannot run, from checks that load no vocabulary (None: try it)."""
    import importlib

    from tokspec._registry import PROVIDERS
    if t.kind == "hypothesis":
        from tokspec.fuzz.hyp_targets import unavailable_reason
        return unavailable_reason(t.properties[0])
    for name in t.engines:
        prefix = name.split(":", 1)[0]
        module = PROVIDERS.get(prefix, prefix)
        try:
            importlib.import_module(module)
        except ImportError as exc:
            return f"unavailable: {exc}"
    return None


def _fuzz(args: argparse.Namespace) -> int:
    targets, skipped = [], []
    for t in _select(args.targets):
        reason = _cheap_unavailable(t)
        (skipped if reason else targets).append((t, reason))
    for t, reason in skipped:
        print(f"skip {t.name}: {reason}", flush=True)
    targets = [t for t, _ in targets]
    per = plan_budget(args.seconds, len(targets), args.jobs)
    run_dir = _findings.cache_root() / "runs" / time.strftime("%Y%m%dT%H%M%S")
    run_dir.mkdir(parents=True, exist_ok=True)
    runs = [TargetRun(t.name, per, _harness_argv(t.name, per, run_dir)) for t in targets]
    print(f"fuzzing {len(runs)} targets, {per:.0f} s each, {args.jobs} at a time; state in {run_dir}",
          flush=True)
    _run_all(runs, args.jobs, run_dir, {})
    new = {r.name: _store_new(r, run_dir, not args.no_store) for r in runs if r.findings}
    print(_table(runs, new))
    total_new = sum(len(v) for v in new.values())
    print(f"\n{total_new} new finding(s); reports in {run_dir / 'reports'}"
          + ("" if args.no_store else f"; stored under {_findings.corpora_root()}/<target>/findings"))
    properties_failed = _property_stage(args) if args.property_seconds > 0 else False
    return 1 if total_new or properties_failed else 0


#: The property tests run by the fuzz job with the deep hypothesis profile (tiny-vocabulary theorems
#: and the replay of stored findings; engine-level properties, and the merge cut theorems that load
#: real engines, are fuzzed by the harnesses above).
DEEP_PROPERTY_TESTS = ("tests/property/test_hyp_spec_tiny.py", "tests/property/test_hyp_regressions.py")


def _property_stage(args: argparse.Namespace) -> bool:
    """Run :data:`DEEP_PROPERTY_TESTS` under the deep profile; True if a test FAILED.

    Skipped (with a message) when the tests are not under the current directory; a stage that runs
    out of its time is reported and does not count as a failure (nothing was found)."""
    files = [f for f in DEEP_PROPERTY_TESTS if Path(f).is_file()]
    if not files:
        print("property stage skipped: run from the repository root to include tests/property")
        return False
    env = dict(os.environ)
    env.setdefault("TOKSPEC_HYPOTHESIS_PROFILE", "deep")
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--import-mode=importlib",
           "-n", str(args.jobs), "-k", "not merge_claims", *files]
    print(f"property stage ({env['TOKSPEC_HYPOTHESIS_PROFILE']} profile, up to {args.property_seconds:.0f} s): "
          + " ".join(files), flush=True)
    t0 = time.monotonic()
    try:
        out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=args.property_seconds)
    except subprocess.TimeoutExpired:
        print(f"property stage: out of time after {args.property_seconds:.0f} s (no failure seen)")
        return False
    print(out.stdout.strip().splitlines()[-1] if out.stdout.strip() else out.stderr[-500:],
          f"({time.monotonic() - t0:.0f} s)")
    if out.returncode not in (0, 5):
        print(out.stdout[-4000:])
    return out.returncode not in (0, 5)


def _mutants(args: argparse.Namespace) -> int:
    from tokspec.fuzz.mutants import MUTANTS
    run_dir = _findings.cache_root() / "runs" / ("mutants-" + time.strftime("%Y%m%dT%H%M%S"))
    run_dir.mkdir(parents=True, exist_ok=True)
    per = max(10.0, args.seconds * args.jobs / max(1, len(MUTANTS)) - _STARTUP_S)
    runs = [TargetRun("mutant:" + m.name, per, _harness_argv(
        "mutant:" + m.name, per, run_dir,
        str(_findings.corpus_dir(m.seed_from)) if m.seed_from and not args.no_seeds else ""))
        for m in MUTANTS]
    env = {"TOKSPEC_FUZZ_STOP_ON_FIRST": "1", "TOKSPEC_FUZZ_CORPORA": str(run_dir / "corpora")}
    print(f"mutant self-test: {len(runs)} mutants, up to {per:.0f} s each, "
          f"{'empty corpora' if args.no_seeds else 'seed corpora of the real targets'}", flush=True)
    _run_all(runs, args.jobs, run_dir, env)
    escaped = 0
    print(f"{'mutant':40} {'caught':>6} {'time-to-catch(s)':>16} {'execs':>9}  note")
    for r in runs:
        caught = bool(r.findings)
        escaped += not caught
        t = f"{r.findings[0][1]:.2f}" if caught else "-"
        print(f"{r.name[7:]:40} {'yes' if caught else 'NO':>6} {t:>16} "
              f"{int(r.stats.get('number_of_executed_units', 0)):>9}  {r.note}")
    return 1 if escaped else 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tokspec.fuzz.run", description=__doc__.split("\n")[0])
    p.add_argument("--seconds", type=float, default=float(os.environ.get("TOKSPEC_FUZZ_SECONDS", "540")))
    p.add_argument("--property-seconds", type=float, default=180.0,
                   help="time for the deep-profile property stage after fuzzing (0: skip it)")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--targets", nargs="*")
    p.add_argument("--list", action="store_true", help="list targets and whether they can run here")
    p.add_argument("--mutants", action="store_true", help="run the harness self-test instead")
    p.add_argument("--no-store", action="store_true", help="do not copy new findings into corpora/")
    p.add_argument("--no-seeds", action="store_true", help="--mutants: start from empty corpora")
    p.add_argument("--seed-corpora", action="store_true", help="write seed corpora and exit")
    args = p.parse_args(argv)
    if args.seconds <= 0 or args.jobs < 1:
        p.error(f"need --seconds > 0 and --jobs >= 1, got seconds={args.seconds!r} jobs={args.jobs!r}")
    if args.list:
        from tokspec.fuzz.targets import available_targets
        for t, reason in available_targets(tuple(_select(args.targets))):
            print(f"{t.name:60} {'ok' if reason is None else reason}")
        return 0
    if args.seed_corpora:
        from tokspec.fuzz.seeds import write_seed_corpora
        for name, n in write_seed_corpora(_select(args.targets)).items():
            print(f"{name:60} {n} seed files")
        return 0
    return _mutants(args) if args.mutants else _fuzz(args)


if __name__ == "__main__":
    sys.exit(main())
