"""Mutation testing of tokspec's reference/, spec/ and fast/ layers: how much the suite can catch.

Usage (``tox -e mutation -- ARGS`` runs ``python mutation/run.py ARGS``)::

    python mutation/run.py                   # full run: every mutant not yet judged, then REPORT.md
    python mutation/run.py --recheck         # also re-judge survivors (after adding killers)
    python mutation/run.py --equivalents     # also run the allow-listed equivalents (skipped otherwise)
    python mutation/run.py --sample 25       # CI: a fixed random subset of 25 mutants per layer
    python mutation/run.py --report-only     # rewrite the report from the stored results
    python mutation/run.py --only 'tokspec.fast._spm_kernels.*'   # (re-)judge matching mutants only
    python mutation/run.py --try-mutant NAME tests/test_x.py   # does this test kill that mutant?

Tool: mutmut 3 (pinned in tox.ini), chosen over cosmic-ray for three reasons of design, weighed
against this layout (only mutmut was run). (1) mutmut 3 puts every mutant of a function behind a
trampoline in one mutated copy of the module and switches between them with an environment
variable, forking a worker from a process that has already imported numpy, tokenizers, tiktoken and
the tests: a mutant costs the killer tests it runs, not a fresh interpreter importing all of that
(0.8-1.2 s measured here, before pytest collects anything). cosmic-ray rewrites the file on disk and
starts the test command anew for every mutant, and runs in parallel only through HTTP workers that
each need their own copy of the tree. (2) mutmut records, in one instrumented run, which tests call
which function, and runs a mutant against only those: the selection the issue asks for ("seconds,
not minutes") without a hand-kept map. (3) Results live in per-file ``.meta`` files keyed by a hash
of each function, so an interrupted run resumes where it stopped and an edit re-judges only the
functions it touched.

What the layout needs (and this driver does): mutmut derives module names from file paths under
``src/``, while tokspec installs ``reference/``, ``spec/``, ``fast/`` and ``fuzz/`` as subpackages
of ``tokspec`` (pyproject's package-dir). :func:`stage` therefore mirrors the *installed* layout in
``build/mutation/src/tokspec`` (mutation/stage.py) and runs mutmut there; the tests import the mutated copy, never the
checkout. mutmut does not mutate decorated functions; the fast kernels are decorated ``@kernel`` or
``@kernel(inline=True)``, the identity under ``TOKSPEC_JIT=0`` (checked before every run), so the
stage drops that one decorator line and the kernels are mutated in their interpreted form, as the
issue asks (``[stage] keep_decorated`` in config.toml: modules whose ``@kernel(...)`` kernels are
kept out until their mutants are judged).
Functions with any other decorator (``functools.lru_cache`` loaders, properties) stay unmutated and
are counted in the report as such.

Two things the fork hides, and what the driver does about them: (a) code that ran before the fork
(at import, or cached by an earlier test: tables, loaded models) never runs its mutant in a worker,
so undetected mutants of import-time functions and of functions with no detected mutant at all are
re-judged each in a fresh interpreter (mutation/fresh.py); (b) mutmut resets every verdict when the
killer list changes, so a sample run carries the detected verdicts of its mutants over (same
function hash: report.carry) and judges only the rest.

Verdicts: killed (a killer test failed), timed out (counted as detected, listed apart), survived,
no tests (no killer test calls the function: counted as survived), equivalent (a survivor listed in
``mutation/equivalent.toml`` with a one-line reason: removed from the denominator and counted
apart). Score = (killed + timed out) / (generated - equivalent), per layer; target 95%.
"""

from __future__ import annotations

import argparse
import fnmatch
import hashlib
import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
try:
    from tokspec import _procs  # children die with the driver, even by SIGKILL
except ImportError:  # driver run by an interpreter without tokspec installed: the checkout's core
    sys.path.append(str(Path(__file__).resolve().parents[1] / "src"))
    from tokspec import _procs

import fresh  # noqa: E402  (mutation/fresh.py: import-time code judged in a fresh interpreter)
import report  # noqa: E402  (mutation/report.py: verdict tables, allow-list matching)
from stage import (HERE, LAYERS, REPO, check_kernel_is_identity, check_node_ids,  # noqa: E402
                   load_config, mutation_env, stage)

WORK = REPO / "build" / "mutation"
#: recorded test time one fresh-interpreter recheck may spend (fastest tests first)
FRESH_BUDGET_SECONDS = 45.0


def mutmut(work: Path, env: dict[str, str], args: list[str]) -> int:
    cmd = [sys.executable, "-c", "import sys; from mutmut.__main__ import cli; sys.exit(cli())", *args]
    print("mutation: mutmut", " ".join(args[:6]) + (" ..." if len(args) > 6 else ""), flush=True)
    return _procs.run(cmd, cwd=work, env=env).returncode


def generate(work: Path, env: dict[str, str], max_children: int) -> None:
    """Write the mutated copies and their ``.meta`` files without judging a mutant (mutmut's first step)."""
    script = (
        "import sys\n"
        "from mutmut.__main__ import create_mutants\n"
        "from mutmut.utils.file_utils import copy_src_dir, copy_also_copy_files\n"
        "import os; os.makedirs('mutants', exist_ok=True)\n"
        "copy_src_dir(); copy_also_copy_files()\n"
        f"create_mutants({max_children})\n"
    )
    done = _procs.run([sys.executable, "-c", script], cwd=work, env=env, stdout=subprocess.DEVNULL)
    if done.returncode != 0:
        raise SystemExit(f"mutation: generating the mutants failed (exit {done.returncode})")


def recheck_in_fresh_interpreters(work: Path, env: dict[str, str], killers: list[str], workers: int,
                                  only: set[str] | None) -> None:
    """Re-judge, each in a new interpreter, the undetected mutants the fork may have hidden (fresh.py).

    Candidates: undetected mutants of functions that run at import, and of functions none of whose
    mutants was detected (the sign of code whose result was computed, or cached, before the fork:
    a function whose other mutants were caught demonstrably runs in the workers).
    """
    import_time = fresh.import_time_functions(work, env, LAYERS)
    stats = json.loads((work / "mutants" / "mutmut-stats.json").read_text())
    durations = stats.get("duration_by_test", {})
    by_function = stats.get("tests_by_mangled_function_name", {})
    results = report.read_results(work, LAYERS)
    detected_somewhere = {(m.module, m.function) for m in results.values() if m.status in report.DETECTED}
    judged = fresh.load(work)
    tests_by_module: dict[str, list[str]] = {}
    jobs = []
    for m in results.values():
        if m.status not in report.NOT_DETECTED or (only is not None and m.name not in only):
            continue
        qualified = f"{m.module}.{m.function}"
        if qualified not in import_time and (m.module, m.function) in detected_somewhere:
            continue
        if judged.get(m.name, {}).get("hash") == m.digest:
            continue                                     # already judged on this version
        tests = by_function.get(qualified, [])          # within_budget orders them
        if not tests or qualified in import_time:
            if m.module not in tests_by_module:
                tests_by_module[m.module] = fresh.tests_for_module(work, m.module, killers, by_function)
            tests = tests_by_module[m.module]
        tests = fresh.within_budget(tests, durations, FRESH_BUDGET_SECONDS, fresh.own_test_file(m.module))
        if tests:
            jobs.append((m.name, m.digest, tests))
    if jobs:
        longest = max(sum(durations.get(t, 1.0) for t in tests) for _, _, tests in jobs)
        fresh.recheck(work, env, jobs, workers, timeout=60 + 5 * longest)


def skip_equivalents(work: Path, env: dict[str, str], equivalents: list[report.Equivalent]) -> int:
    """Mark the unjudged mutants that an allow-list entry describes as skipped (mutmut's exit code 34),
    so a full run does not spend a survivor's whole test time on each (they were 508 of 12,191
    mutants and 191 of 364 worker-minutes). Matching is by what the mutant does (report.change_key:
    module, function, original and mutated line), the same test that counts a survivor as
    equivalent; the report counts a skipped mutant as equivalent only if an entry still matches.
    ``--equivalents`` runs them instead: the periodic check that every entry is still a survivor.
    Returns how many were marked."""
    functions = {(e.module, e.function) for e in equivalents}
    results = report.read_results(work, LAYERS)
    of_listed_functions = [m for m in results.values() if (m.module, m.function) in functions]
    report.attach_diffs(work, env, of_listed_functions)
    # a change key two mutants of one function share (``continue`` -> ``break`` at two places) does
    # not say which of them the entry was written for: such mutants are run, and only a survivor
    # among them is counted equivalent
    keys = Counter(report.change_key(m) for m in of_listed_functions)
    listed = {m.name for m in of_listed_functions if keys[report.change_key(m)] == 1
              and m.status in ("not run", "skipped") and any(e.matches(m) for e in equivalents)}
    # skipped earlier but no longer (uniquely) listed: an entry removed or its line edited
    report.set_exit_codes(work, [m for m in results.values() if m.status == "skipped" and m.name not in listed], None)
    report.set_exit_codes(work, [m for m in of_listed_functions if m.name in listed], report.SKIPPED_EXIT)
    return len(listed)


def unskip(work: Path) -> int:
    """Return every skipped mutant to "not run" (``--equivalents``)."""
    skipped = [m for m in report.read_results(work, LAYERS).values() if m.status == "skipped"]
    report.set_exit_codes(work, skipped, None)
    return len(skipped)


def try_mutant(work: Path, name: str, pytest_args: list[str]) -> int:
    """Does a test kill this mutant? pytest with the mutant switched on, in the staged copy.

    Test paths may lie outside the stage (a new test in a checkout): the package under test is the
    stage's mutated copy either way. Exit status 1 means killed, 0 survived.
    """
    env = {**mutation_env(work), "MUTANT_UNDER_TEST": name}
    pytest_args = [_absolute_test_path(a) for a in pytest_args]
    cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:xdist", "-p", "no:cacheprovider", *pytest_args]
    return _procs.run(cmd, cwd=work / "mutants", env=env).returncode


def _absolute_test_path(arg: str) -> str:
    """``tests/x.py::t`` relative to the caller's directory -> absolute (pytest runs in the stage)."""
    path, sep, node = arg.partition("::")
    if arg.startswith("-") or not Path(path).exists():
        return arg
    return str(Path(path).resolve()) + sep + node


def sample_names(results: dict[str, report.Mutant], per_layer: int, seed: int) -> list[str]:
    """A fixed random subset: of each layer, the ``per_layer`` mutants whose sha256 of
    ``"<seed>:<name>"`` is smallest. An edit that renumbers one function's mutants changes only
    those entries of the sample, not the whole subset (as drawing from a shuffled list would)."""
    chosen: list[str] = []
    for layer in LAYERS:
        names = [n for n, m in results.items() if m.layer == layer]
        names.sort(key=lambda n: hashlib.sha256(f"{seed}:{n}".encode()).hexdigest())
        chosen += names[:per_layer]
    return chosen


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="mutation", description=__doc__.split("\n\n")[0])
    parser.add_argument("--sample", type=int, metavar="N", help="judge only N fixed random mutants per layer")
    parser.add_argument("--seed", type=int, default=None, help="sample seed (default: config.toml's)")
    parser.add_argument("--recheck", action="store_true", help="re-judge survivors and no-test mutants")
    parser.add_argument("--equivalents", action="store_true",
                        help="also run the allow-listed equivalent mutants (a full run skips them): checks "
                             "that every entry of mutation/equivalent.toml still describes a survivor")
    parser.add_argument("--report-only", action="store_true", help="only rewrite the report")
    parser.add_argument("--only", nargs="+", metavar="GLOB",
                        help="(re-)judge only the mutants whose names match (fnmatch globs, e.g. "
                             "'tokspec.fast._spm_kernels.*'); writes build/mutation/only-report.md")
    parser.add_argument("--record", action="store_true",
                        help="append a sample run's scores to mutation/history.json (full runs always are)")
    parser.add_argument("--try-mutant", metavar="NAME",
                        help="run pytest (the remaining arguments) against one mutant of the current stage")
    parser.add_argument("--max-children", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--work", type=Path, default=WORK)
    args, rest = parser.parse_known_args(argv)
    if args.try_mutant:
        return try_mutant(args.work.resolve(), args.try_mutant, rest)
    if rest:
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    config = load_config()
    work: Path = args.work.resolve()
    env = mutation_env(work)
    equivalents = report.load_equivalents(HERE / "equivalent.toml")
    started = time.monotonic()
    commit = report.git_head()  # what gets staged: HEAD may move while a run takes an hour
    # verdicts already on the stage: a full run that finds some is a resumed one, and says so
    judged_before = sum(m.status != "not run" for m in report.read_results(work, LAYERS).values())
    if not args.report_only:
        stage(work, config["killers"]["tests"])
        check_kernel_is_identity(work, env)
        check_node_ids(work, env, config["killers"]["tests"])
        if args.only:
            generate(work, env, args.max_children)
            names = sorted(n for n in report.read_results(work, LAYERS) if any(fnmatch.fnmatch(n, g) for g in args.only))
            if not names:
                parser.error(f"--only: no mutant matches {' '.join(args.only)}")
            rc = mutmut(work, env, ["run", "--max-children", str(args.max_children), *args.only])
        elif args.sample is not None:
            generate(work, env, args.max_children)
            current = report.read_results(work, LAYERS)
            names = sample_names(current, args.sample, config["sample"]["seed"] if args.seed is None else args.seed)
            # A sampled mutant already detected on this version of its function keeps its verdict
            # (report.carry): mutmut resets every result when the killer list changes, and tests
            # are only ever added. Only the undetected and the unjudged are run.
            report.carry(work, [current[n] for n in names if current[n].status in report.DETECTED])
            names = [n for n in names if current[n].status not in report.DETECTED]
            rc = mutmut(work, env, ["run", "--max-children", str(args.max_children), *names]) if names else 0
        else:
            generate(work, env, args.max_children)
            if args.equivalents:
                print(f"mutation: {unskip(work)} allow-listed mutants skipped earlier will run", flush=True)
            else:
                print(f"mutation: {skip_equivalents(work, env, equivalents)} unjudged mutants are allow-listed "
                      "equivalents and are skipped (--equivalents runs them)", flush=True)
            rc = mutmut(work, env, ["run", "--max-children", str(args.max_children)])
            if args.recheck:
                results = report.read_results(work, LAYERS)
                again = [n for n, m in results.items() if m.status in {"survived", "no tests"}]
                if again:
                    rc = mutmut(work, env, ["run", "--max-children", str(args.max_children), *again])
        if rc not in (0, None):
            print(f"mutation: mutmut exited {rc}", file=sys.stderr)
            return rc
        only = set(names) if args.sample is not None or args.only else None
        recheck_in_fresh_interpreters(work, env, config["killers"]["tests"], args.max_children, only)
    wall = time.monotonic() - started
    results = report.read_results(work, LAYERS)
    report.attach_diffs(work, env, [m for m in results.values() if m.status in report.NOT_DETECTED | {"skipped"}])
    target = float(config["target"]["score"])
    if args.only:
        results = {n: m for n, m in results.items() if any(fnmatch.fnmatch(n, g) for g in args.only)}
        judged_functions = {(m.module, m.function) for m in results.values()}
        # only the entries about these functions: the others are not "stale", just outside the run
        equivalents = [e for e in equivalents if (e.module, e.function) in judged_functions]
        summary = report.summarize(results, equivalents, LAYERS)
        text = report.render(summary, title=f"Mutation run of {' '.join(args.only)}", wall_seconds=wall,
                             target=target, history=[])
        (work / "only-report.md").write_text(text)
        print(text)
        return 0
    if args.sample is not None:
        chosen = set(sample_names(results, args.sample, config["sample"]["seed"] if args.seed is None else args.seed))
        generated = {layer: sum(m.layer == layer for m in results.values()) for layer in LAYERS}
        results = {n: m for n, m in results.items() if n in chosen}
        estimate = report.full_run_estimate(list(results.values()), generated, args.max_children)
        summary = report.summarize(results, equivalents, LAYERS)
        seed = config["sample"]["seed"] if args.seed is None else args.seed
        history = report.record_history(HERE / "history.json", summary, wall, commit=commit,
                                        run=f"sample {args.sample}/layer seed {seed}" if args.record else None)
        text = report.render(summary, title=f"Mutation sample ({args.sample} per layer, seed {seed})",
                             wall_seconds=wall, target=target, history=history)
        if estimate is not None:
            text += (f"\nA full run (all {sum(generated.values())} mutants) would take about {estimate / 3600:.1f} h on "
                     f"{args.max_children} workers: the sampled mutants' measured times, extrapolated per layer "
                     "(plus the one-off recording of the test map).\n")
        (work / "sample-report.md").write_text(text)
        print(text)
        # The gate: a sampled mutant that escapes the tests and is neither a known survivor of the
        # last full run nor allow-listed means the suite lost power (or new code is untested).
        known = report.load_known_survivors(HERE / "survivors.json")
        new = [m for layer in summary.layers.values() for m in layer.survivors if report.change_key(m) not in known]
        for layer in LAYERS:
            score = summary.layers[layer].score
            print(f"mutation: sample {layer}/: {report.floor_percent(score)} "
                  f"({'meets' if score >= target else 'below'} the {target:.0%} target)")
        if new:
            print(f"mutation: {len(new)} sampled mutant(s) escape the tests and are not known survivors:", file=sys.stderr)
            for m in new:
                print(f"  {m.name}: {' -> '.join(m.change())}", file=sys.stderr)
            return 1
        return 0
    summary = report.summarize(results, equivalents, LAYERS)
    generated = sum(s.generated for s in summary.layers.values())
    run_name = None if args.report_only else "full" if not judged_before else \
        f"full, resumed: {judged_before} of {generated} mutants had verdicts from earlier segments"
    # Each mutant's own measured test time (the last time it was judged): with the stats time, the
    # cost of an uninterrupted full run, whatever segments this one was run in.
    mutant_seconds = round(sum(m.seconds or 0.0 for m in results.values() if m.status != "not run"))
    history = report.record_history(HERE / "history.json", summary, wall, run=run_name, commit=commit,
                                    mutant_seconds=mutant_seconds, workers=args.max_children)
    text = report.render(summary, title="Mutation testing report", wall_seconds=wall, target=target, history=history)
    (HERE / "REPORT.md").write_text(text)
    report.write_known_survivors(HERE / "survivors.json", summary)
    print(text)
    below = [layer for layer in LAYERS if summary.layers[layer].score < target]
    if below:
        print(f"mutation: below the {target:.0%} target: {', '.join(below)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
