"""``python -m tokspec.fuzz.run``: fuzz every available target on every core within a wall-clock budget.

Usage::

    python -m tokspec.fuzz.run [--seconds S] [--jobs N] [--targets NAME ...] [--list]
                               [--property-seconds S] [--mutants [--no-seeds]] [--promote]
                               [--seed-corpora]

- Budget: ``--seconds`` or ``$TOKSPEC_FUZZ_SECONDS`` (default 540) is a promise for the whole run,
  within 10%: the property stage, fuzzing and replay of new findings together. The property stage
  runs first, for at most ``min(--property-seconds, a quarter of the budget)``, less what the fuzz
  targets need to all run (start-up plus ``MIN_TARGET_S`` each, down to an eighth of the budget:
  :func:`plan_phases`); fuzzing gets everything the stage leaves, the replay reserve (a twentieth,
  at most 30 s) included until a target reports a finding. So a run without findings ends near
  its budget, not early.
- Parallel: ``--jobs`` (default: the usable cores) harness processes at a time; each target's
  ``-max_total_time`` is its share of the slot-seconds left (``tokspec.fuzz._schedule``), so the
  per-target budget grows with the number of workers, and every target is guaranteed
  :func:`min_share` before any gets more (a target still under ``MIN_EXECS`` inputs is reported
  "starved", never inside an all-clear; a run that ends under it is first topped up, again if
  still short (at most ``MAX_TOP_UPS`` times), for the time its late rate needs, when the others'
  minimum allows: ``tokspec.fuzz._schedule``). When the budget cannot give every target start-up
  plus ``MIN_TARGET_S`` of fuzzing, the least recently fuzzed targets run and the others are
  deferred to the next run (the rotation is kept in ``<cache>/last-fuzzed.json``).
- Progress: a line at least every 5 s (elapsed/budget, running targets, executions, findings).
- Property stage (``--property-seconds``, default 180, 0 skips it): the tiny-vocabulary theorems
  and the stored-finding replay (:data:`DEEP_PROPERTY_TESTS`) under pytest with
  ``$TOKSPEC_HYPOTHESIS_PROFILE`` (default ``deep``) and the example database
  ``$TOKSPEC_HYPOTHESIS_DB`` (default ``<cache>/hypothesis``); stopped at its time, a failing test
  counts like a new finding.
- Each target runs as ``python -m tokspec.fuzz.harness TARGET -max_total_time=T -print_final_stats=1
  -artifact_prefix=DIR/ CACHE_CORPUS REPO_CORPUS``: libFuzzer reads both corpora and writes new
  inputs only into the first, the cache.
- The git tree stays clean: grown corpora go to ``<cache>/corpus/<target>/``, new findings (replayed
  in one fresh process per target, all its reports together; kept only if they reproduce) to ``<cache>/findings/<target>/``, run reports
  to ``<cache>/runs/<stamp>/``; ``<cache>`` is ``$TOKSPEC_CACHE/fuzz`` (else ``./.tokspec-cache/fuzz``).
  Pending findings count as known in later runs. ``--promote`` is the explicit step that copies
  pending findings into ``corpora/fuzz/<target>/findings/`` and merges the grown corpus into
  ``corpora/fuzz/<target>/corpus/`` (libFuzzer ``-merge=1``: only inputs that add coverage).
- Engines load only where needed: once in each harness process and once in a target's confirming
  replay; never in the runner itself (it imports engine modules to see what is installed, no more).
  ``--targets 'pair:["A", "B"]'`` fuzzes any two engines (yours too: ``module:attr``).
- Hangs: ``-timeout`` is ``$TOKSPEC_FUZZ_CALL_TIMEOUT`` (default 60 s per call). A target whose engine
  hangs is recorded once, its input minimized by time, and not run again (``tokspec.fuzz._hang_report``).
- Prints a table (its columns explained in one line under it) and exits 1 if anything new was
  found, 0 otherwise (2 on usage errors).
- ``--mutants``: the harness self-test: each deliberately broken engine of ``tokspec.fuzz.mutants``
  is fuzzed until first finding (budget per mutant), reading the seed corpus of the real target
  (``--no-seeds``: from an empty corpus, pure coverage-guided search); prints time-to-catch
  (seconds from the start of fuzzing to detection) and executions; exits 1 if one escapes.
- ``--seed-corpora``: (re)write the seed inputs of every target from ``tokspec.corpus`` and exit.

Out of scope: libFuzzer fork mode, remote corpora (ClusterFuzzLite does that: ``.clusterfuzzlite/``).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from tokspec.fuzz import _findings
from tokspec.fuzz._confirm import store_new as _store_new
from tokspec.fuzz._hangs import call_timeout
from tokspec.fuzz._property_stage import DEEP_PROPERTY_TESTS as DEEP_PROPERTY_TESTS  # (its old home)
from tokspec.fuzz._property_stage import property_stage
from tokspec.fuzz._schedule import Scheduler, TargetRun, parse_stats, remember, rotation
from tokspec.fuzz.targets import TARGETS, Target

__all__ = ["main", "TargetRun", "parse_stats", "plan_budget", "plan_phases", "min_share", "LEGEND"]

_STARTUP_S = 15.0   # engine loading before fuzzing starts (cl100k/o200k references take seconds)
MIN_TARGET_S = 10.0  # fuzzing seconds a target must get to be worth starting
LEGEND = ("columns: execs = inputs run; exec/s = their rate; cov = libFuzzer coverage features; "
          "new = findings new to corpora/ and the cache; first(s) = seconds to the first one; "
          "known = inputs failing in an already stored bug class")


def plan_budget(total_s: float, n_targets: int, jobs: int) -> float:
    """Fuzzing seconds per target if all start together in waves: total times jobs, shared, minus start-up."""
    if n_targets == 0:
        return 0.0
    return max(5.0, total_s * jobs / n_targets - _STARTUP_S)


def min_share(fuzz_s: float, n_targets: int, jobs: int) -> float:
    """Seconds (start-up included) every target is guaranteed before any gets more: half its fair
    slice ``fuzz_s * jobs / n_targets``, and never more than the phase itself."""
    return min(fuzz_s * jobs / max(1, n_targets) / 2, fuzz_s)


def plan_phases(total_s: float, property_s: float, n_targets: int = 0, jobs: int = 1) -> tuple[float, float, float]:
    """(fuzzing, replay reserve, property stage) seconds of a ``total_s`` budget (module docstring):
    the stage gets at most ``min(property_s, total_s / 4)``, and gives way, down to ``total_s / 8``,
    to what ``n_targets`` fuzz targets need on ``jobs`` workers to all run (no rotation)."""
    replay = min(30.0, total_s / 20)
    prop = min(property_s, total_s / 4) if property_s > 0 else 0.0
    need = n_targets * (_STARTUP_S + MIN_TARGET_S) / max(1, jobs)
    prop = max(0.0, min(prop, max(min(prop, total_s / 8), total_s - replay - need)))
    return total_s - prop - replay, replay, prop



def _corpus_cache(target: str) -> Path:
    return _findings.cache_root() / "corpus" / target


def _harness_argv(target: str, seconds: float, run_dir: Path, extra_corpus: str = "",
                  harness_name: str = "") -> list[str]:
    """Harness argv: first corpus = writable cache (or the run's own, for mutants), then read-only seeds."""
    safe = target.replace(":", "--")
    if target.startswith("mutant:"):
        corpora = [run_dir / "corpora" / safe]
    else:
        corpora = [_corpus_cache(target), _findings.corpus_dir(target)]
    corpora[0].mkdir(parents=True, exist_ok=True)
    artifacts = run_dir / "artifacts" / safe
    artifacts.mkdir(parents=True, exist_ok=True)
    return [sys.executable, "-m", "tokspec.fuzz.harness", harness_name or target, f"-max_total_time={int(seconds)}",
            "-print_final_stats=1", f"-artifact_prefix={artifacts}/", "-max_len=512",
            f"-timeout={max(1, round(call_timeout()))}",
            "-rss_limit_mb=3072", *[str(c) for c in corpora if c.is_dir()]] + ([extra_corpus] if extra_corpus else [])


def _table(runs: list[TargetRun], new: dict[str, list[str]]) -> str:
    head = f"{'target':58} {'execs':>9} {'exec/s':>7} {'cov':>6} {'new':>4} {'first(s)':>8} {'known':>6}  note"
    lines = [head, "-" * len(head)]
    for r in runs:
        first = f"{min(f[1] for f in r.findings):.1f}" if r.findings else "-"
        lines.append(f"{r.name[:58]:58} {int(r.stats.get('number_of_executed_units', 0)):>9} "
                     f"{int(r.stats.get('average_exec_per_sec', 0)):>7} {int(r.stats.get('cov', 0)):>6} "
                     f"{len(new.get(r.name, [])):>4} {first:>8} {int(r.stats.get('known_hits', 0)):>6}  {r.note}")
    return "\n".join(lines + [LEGEND])


def _select(names: list[str] | None) -> list[Target]:
    if not names:
        return list(TARGETS)
    from tokspec.fuzz.targets import target_by_name
    pairs = [target_by_name(n) for n in names if n.startswith("pair:")]  # any two engines (yours too)
    chosen = pairs + [t for t in TARGETS if any(t.name == n or n in t.name for n in names)]
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
    t0 = time.monotonic()
    targets: list[tuple[Target, str | None]] = []
    skipped: list[tuple[Target, str | None]] = []
    for t in _select(args.targets):
        reason = _cheap_unavailable(t)
        (skipped if reason else targets).append((t, reason))
    for t, reason in skipped:
        print(f"skip {t.name}: {reason}", flush=True)
    _fuzz_s, replay_s, prop_s = plan_phases(args.seconds, args.property_seconds, len(targets), args.jobs)
    # the property stage first: what it leaves unused goes to fuzzing
    properties_failed = property_stage(args.jobs, prop_s) if prop_s > 0 else False
    fuzz_end = t0 + args.seconds - replay_s  # the property stage's unused time is fuzzing time
    fuzz_s = fuzz_end - time.monotonic()
    chosen, deferred = rotation([t for t, _ in targets], (fuzz_s + replay_s) * args.jobs, _STARTUP_S + MIN_TARGET_S)
    run_dir = _findings.cache_root() / "runs" / time.strftime("%Y%m%dT%H%M%S")
    run_dir.mkdir(parents=True, exist_ok=True)
    harness = {t.name: t.meta.get("harness_name", t.name) for t in chosen}  # pair:[A, B] for any two engines
    runs = [TargetRun(t.name, 0.0, _harness_argv(t.name, 0.0, run_dir, harness_name=harness[t.name])) for t in chosen]
    print(f"fuzzing {len(runs)} targets on {args.jobs} cores for {fuzz_s:.0f} s (+{replay_s:.0f} s replay "
          f"reserve while nothing is found; of a {args.seconds:.0f} s budget, property stage planned "
          f"{prop_s:.0f} s); state in {run_dir}", flush=True)
    if deferred:
        print(f"deferred to the next run (budget too small for all): {', '.join(t.name for t in deferred)}")
    left = Scheduler(runs, args.jobs, run_dir, {}, fuzz_end, start=t0, reserve=replay_s,
                     min_share=min_share(fuzz_s, len(runs), args.jobs),
                     say=lambda line: print(line, flush=True)).run(args.seconds)
    for r in left:
        r.note = "deferred: out of time"
    remember(runs)
    replay_until = t0 + args.seconds
    new = {r.name: _store_new(r, run_dir, replay_until, harness[r.name]) for r in runs if r.findings}
    from tokspec.fuzz._hang_report import record_hangs
    for name, fids in record_hangs(runs, run_dir, harness, replay_until).items():
        new.setdefault(name, []).extend(fids)
    print(_table(runs, new))
    total_new = sum(len(v) for v in new.values())
    from tokspec.fuzz._coverage import not_covered, verdict_line

    missing = not_covered(runs, [(t.name, str(reason)) for t, reason in skipped], [t.name for t in deferred])
    print(verdict_line(total_new, len(runs) + len(skipped) + len(deferred), missing), flush=True)
    print(f"\n{total_new} new finding(s); reports in {run_dir / 'reports'}"
          + (f"; pending in {_findings.cache_root() / 'findings'} (promote with --promote)" if total_new else ""))
    print(f"fuzz run: {time.monotonic() - t0:.0f} s of a {args.seconds:.0f} s budget", flush=True)
    return 1 if total_new or properties_failed else 0


def _promote(args: argparse.Namespace) -> int:
    """Copy pending findings into corpora/ and merge grown corpora into the repository's (module docstring)."""
    copied = merged = 0
    for t in _select(args.targets):
        safe = t.name.replace(":", "--")
        pending = _findings.pending_dir(safe)
        for f in sorted(pending.glob("*.json")) if pending.is_dir() else []:
            dest = _findings.findings_dir(safe) / f.name
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(f, dest)
            f.unlink()
            copied += 1
        grown, repo = _corpus_cache(t.name), _findings.corpus_dir(t.name)
        if not grown.is_dir() or not any(grown.iterdir()):
            continue
        repo.mkdir(parents=True, exist_ok=True)
        before = len(list(repo.iterdir()))
        out = subprocess.run([sys.executable, "-m", "tokspec.fuzz.harness", t.name, "-merge=1", "-max_len=512",
                              str(repo), str(grown)], capture_output=True, text=True, timeout=1800)
        added = len(list(repo.iterdir())) - before
        merged += added
        print(f"{t.name:60} +{added} corpus inputs" + ("" if out.returncode == 0 else f" (exit {out.returncode})"))
    print(f"promoted {copied} finding(s) and {merged} corpus input(s) into {_findings.corpora_root()}")
    return 0


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
    t0 = time.monotonic()
    Scheduler(runs, args.jobs, run_dir, env, t0 + args.seconds, start=t0,
              say=lambda line: print(line, flush=True)).run(args.seconds)
    escaped = 0
    print(f"{'mutant':40} {'caught':>6} {'time-to-catch(s)':>16} {'execs':>9}  note")
    for r in runs:
        caught = bool(r.findings)
        escaped += not caught
        t = f"{r.findings[0][1]:.2f}" if caught else "-"
        print(f"{r.name[7:]:40} {'yes' if caught else 'NO':>6} {t:>16} "
              f"{int(r.stats.get('number_of_executed_units', 0)):>9}  {r.note}")
    return 1 if escaped else 0


def _cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tokspec.fuzz.run", description=__doc__.split("\n")[0])
    p.add_argument("--seconds", type=float, default=float(os.environ.get("TOKSPEC_FUZZ_SECONDS", "540")))
    p.add_argument("--property-seconds", type=float, default=180.0,
                   help="time for the deep-profile property stage, run before fuzzing (0: skip it)")
    p.add_argument("--max-chars", type=int, metavar="N",
                   help="cap generated long texts at N characters (default: none, up to 2 MiB); sets "
                        "TOKSPEC_FUZZ_MAX_CHARS for the harnesses")
    p.add_argument("--jobs", type=int, default=_cores(), help="harness processes at a time (default: usable cores)")
    p.add_argument("--targets", nargs="*")
    p.add_argument("--list", action="store_true", help="list targets and whether they can run here")
    p.add_argument("--mutants", action="store_true", help="run the harness self-test instead")
    p.add_argument("--promote", action="store_true",
                   help="copy pending findings and merge grown corpora from the cache into corpora/, then exit")
    p.add_argument("--no-seeds", action="store_true", help="--mutants: start from empty corpora")
    p.add_argument("--seed-corpora", action="store_true", help="write seed corpora and exit")
    args = p.parse_args(argv)
    if args.seconds <= 0 or args.jobs < 1:
        p.error(f"need --seconds > 0 and --jobs >= 1, got seconds={args.seconds!r} jobs={args.jobs!r}")
    if args.max_chars is not None:
        if args.max_chars < 1:
            p.error(f"need --max-chars >= 1, got max_chars={args.max_chars!r}")
        os.environ["TOKSPEC_FUZZ_MAX_CHARS"] = str(args.max_chars)  # inherited by every harness process
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
    if args.promote:
        return _promote(args)
    return _mutants(args) if args.mutants else _fuzz(args)


if __name__ == "__main__":
    sys.exit(main())
