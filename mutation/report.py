"""Verdicts of a mutmut run, the equivalent-mutant allow-list, and the committed summary.

Pure functions over mutmut's per-file ``.meta`` results (``build/mutation/mutants/**.py.meta``),
so the report can be rebuilt at any time without re-running a mutant. A mutant is identified for
the allow-list by what it *does* (module, function, the original and the mutated line), not by
mutmut's running number, which shifts when a function is edited.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import os
import subprocess
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from tokspec import _procs
from tokspec._atomic import write_atomic

#: mutmut 3.8 exit codes -> verdict (mutmut.stats.status_by_exit_code, reduced to what we report)
_STATUS = {1: "killed", 3: "killed", 0: "survived", 5: "no tests", 33: "no tests", 34: "skipped",
           36: "timeout", 24: "timeout", -24: "timeout", 152: "timeout", 255: "timeout",
           -11: "crashed", -9: "crashed", None: "not run"}
SKIPPED_EXIT = 34  # mutmut: "skipped"; set by the driver for allow-listed mutants (run.skip_equivalents)
DETECTED = {"killed", "timeout", "crashed"}
NOT_DETECTED = {"survived", "no tests", "suspicious"}


@dataclass
class Mutant:
    name: str            # mutmut's name: tokspec.<layer>.<module>.x_<function>__mutmut_<n>
    layer: str
    module: str          # tokspec.<layer>.<module>
    function: str        # mangled function name (x_f, or xǁClassǁmethod)
    status: str
    digest: str = ""     # mutmut's hash of the function's source
    fresh: bool = False  # judged in a fresh interpreter (import-time code, fresh.py)
    diff: str = ""       # unified diff of the function, filled for the undetected only
    path: str = ""       # the source file, relative to the stage
    seconds: float | None = None  # how long mutmut's worker took on it (its last judgement)

    def change(self) -> tuple[str, str]:
        """The removed and the added lines of the diff, stripped, each joined by ' / '."""
        minus = [ln[1:].strip() for ln in self.diff.splitlines() if ln.startswith("-") and not ln.startswith("---")]
        plus = [ln[1:].strip() for ln in self.diff.splitlines() if ln.startswith("+") and not ln.startswith("+++")]
        return " / ".join(minus), " / ".join(plus)


def full_run_estimate(sampled: list[Mutant], generated: dict[str, int], workers: int) -> float | None:
    """Seconds a full run would take on ``workers`` workers, extrapolated per layer from the measured
    times of the sampled mutants mutmut judged (a random sample, so the mean is unbiased; it excludes
    the one-off test-map recording and the fresh-interpreter rechecks). None without timings."""
    total = 0.0
    for layer, count in generated.items():
        times = [m.seconds for m in sampled if m.layer == layer and m.seconds is not None and m.status != "not run"]
        if not times:
            return None
        total += sum(times) / len(times) * count
    return total / max(workers, 1)


def change_key(m: Mutant) -> tuple[str, str, str, str]:
    """A mutant's identity across runs: module, function, original and mutated line (not its number)."""
    return (m.module, m.function, *m.change())


def write_known_survivors(path: Path, summary: "Summary") -> None:
    """The undetected, non-equivalent mutants of a full run, by :func:`change_key` (committed)."""
    keys = sorted({change_key(m) for layer in summary.layers.values() for m in layer.survivors})
    write_atomic(path, json.dumps([list(k) for k in keys], indent=0, ensure_ascii=False) + "\n")


def load_known_survivors(path: Path) -> set[tuple[str, str, str, str]]:
    return {tuple(k) for k in json.loads(path.read_text())} if path.exists() else set()


def status_of(exit_code: int | None) -> str:
    return _STATUS.get(exit_code, "suspicious")


def read_results(work: Path, layers: tuple[str, ...]) -> dict[str, Mutant]:
    """Every generated mutant of the given layers with its verdict, from the ``.meta`` files.

    A fresh-interpreter verdict (``fresh.json``, see fresh.py) replaces an undetected one when it
    was taken on the same version of the function (same hash).
    """
    fresh_path, carried_path = work / "fresh.json", work / "carried.json"
    fresh = json.loads(fresh_path.read_text()) if fresh_path.exists() else {}
    carried = json.loads(carried_path.read_text()) if carried_path.exists() else {}
    results: dict[str, Mutant] = {}
    for layer in layers:
        for meta in sorted((work / "mutants" / "src" / "tokspec" / layer).glob("*.py.meta")):
            data = json.loads(meta.read_text())
            stem = meta.name[: -len(".py.meta")]
            module = f"tokspec.{layer}" if stem == "__init__" else f"tokspec.{layer}.{stem}"
            source = f"src/tokspec/{layer}/{stem}.py"
            hashes = data.get("hash_by_function_name", {})
            for name, code in data["exit_code_by_key"].items():
                function = name[len(module) + 1:].partition("__mutmut_")[0]
                m = Mutant(name, layer, module, function, status_of(code), hashes.get(function, ""),
                           path=source, seconds=data.get("durations_by_key", {}).get(name))
                again = fresh.get(name)
                if m.status in NOT_DETECTED and again and again["hash"] == m.digest:
                    m.status, m.fresh = status_of(again["exit"]), True
                kept = carried.get(name)
                if m.status == "not run" and kept and kept["hash"] == m.digest:
                    m.status = kept["status"]
                results[name] = m
    return results


def set_exit_codes(work: Path, mutants: list[Mutant], code: int | None) -> None:
    """Write one verdict for these mutants into mutmut's ``.meta`` files (atomically): mutmut runs
    only the mutants whose exit code is None, unless they are named."""
    by_meta: dict[Path, list[str]] = {}
    for m in mutants:
        by_meta.setdefault(work / "mutants" / f"{m.path}.meta", []).append(m.name)
    for meta, names in by_meta.items():
        data = json.loads(meta.read_text())
        unknown = set(names) - set(data["exit_code_by_key"])
        if unknown:
            raise SystemExit(f"mutation: {meta} has no mutant {sorted(unknown)[0]}")
        data["exit_code_by_key"].update(dict.fromkeys(names, code))
        write_atomic(meta, json.dumps(data, indent=4))


def attach_diffs(work: Path, env: dict[str, str], mutants: list[Mutant]) -> None:
    """Fill ``diff`` for the given mutants (one subprocess in the stage, using mutmut's own differ)."""
    if not mutants:
        return
    script = (
        "import json, sys\n"
        "from mutmut.mutation.diff_apply import get_diff_for_mutant\n"
        "names = json.load(sys.stdin)\n"
        "out = {}\n"
        "for name, path in names:\n"
        "    try:\n"
        "        out[name] = get_diff_for_mutant(name, path=path)\n"
        "    except Exception as e:\n"
        "        out[name] = f'(no diff: {type(e).__name__}: {e})'\n"
        "json.dump(out, sys.stdout)\n"
    )
    pairs = [(m.name, m.path) for m in mutants]
    done = _procs.run([sys.executable, "-c", script], cwd=work, env=env, input=json.dumps(pairs),
                      capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"mutation: reading the mutants' diffs failed: {done.stderr.strip()[-300:]}")
    diffs = json.loads(done.stdout)
    for m in mutants:
        m.diff = diffs.get(m.name, "")


def carry(work: Path, mutants: list[Mutant]) -> None:
    """Remember detected verdicts (by mutant and function hash) across a reset of mutmut's results."""
    path = work / "carried.json"
    carried = json.loads(path.read_text()) if path.exists() else {}
    carried.update({m.name: {"hash": m.digest, "status": m.status} for m in mutants if m.status in DETECTED})
    write_atomic(path, json.dumps(carried, indent=0))


@dataclass(frozen=True)
class Equivalent:
    module: str
    function: str
    original: str
    mutated: str
    reason: str

    def matches(self, m: Mutant) -> bool:
        return (m.module, m.function, *m.change()) == (self.module, self.function, self.original, self.mutated)


def load_equivalents(path: Path) -> list[Equivalent]:
    """The allow-list: ``[[equivalent]]`` tables with module, function, original, mutated, reason."""
    if not path.exists():
        return []
    with open(path, "rb") as f:
        entries = tomllib.load(f).get("equivalent", [])
    out = []
    for i, e in enumerate(entries):
        missing = {"module", "function", "original", "mutated", "reason"} - set(e)
        if missing or not str(e.get("reason", "")).strip():
            raise SystemExit(f"{path}: entry {i + 1} lacks {sorted(missing) or ['a reason']}")
        out.append(Equivalent(e["module"], e["function"], e["original"], e["mutated"], e["reason"]))
    return out


@dataclass
class LayerSummary:
    counts: dict[str, int] = field(default_factory=dict)
    generated: int = 0
    equivalent: int = 0
    survivors: list[Mutant] = field(default_factory=list)

    @property
    def detected(self) -> int:
        return sum(self.counts.get(s, 0) for s in DETECTED)

    @property
    def score(self) -> float:
        judged = self.generated - self.equivalent - self.counts.get("not run", 0) - self.counts.get("skipped", 0)
        return self.detected / judged if judged > 0 else 1.0


@dataclass
class Summary:
    layers: dict[str, LayerSummary]
    modules: dict[str, LayerSummary]
    equivalents_used: list[tuple[Mutant, Equivalent]]
    stale_equivalents: list[Equivalent]


def summarize(results: dict[str, Mutant], equivalents: list[Equivalent], layers: tuple[str, ...]) -> Summary:
    by_layer = {layer: LayerSummary() for layer in layers}
    by_module: dict[str, LayerSummary] = {}
    used: list[tuple[Mutant, Equivalent]] = []
    matched: set[Equivalent] = set()
    for m in sorted(results.values(), key=lambda m: m.name):
        for bucket in (by_layer[m.layer], by_module.setdefault(m.module, LayerSummary())):
            bucket.generated += 1
        eq = next((e for e in equivalents if m.status in NOT_DETECTED | {"skipped"} and e.matches(m)), None)
        status = "equivalent" if eq else m.status
        if eq:
            used.append((m, eq))
            matched.add(eq)
        for bucket in (by_layer[m.layer], by_module[m.module]):
            bucket.counts[status] = bucket.counts.get(status, 0) + 1
            bucket.equivalent += bool(eq)
            if status in NOT_DETECTED:
                bucket.survivors.append(m)
    # stale: matches no undetected mutant although every mutant of its function has been judged
    # (a function with unjudged mutants may still produce the survivor the entry describes)
    pending = {(m.module, m.function) for m in results.values() if m.status == "not run"}
    stale = [e for e in equivalents if e not in matched and (e.module, e.function) not in pending]
    return Summary(by_layer, by_module, used, stale)


def record_history(path: Path, summary: Summary, wall_seconds: float, *, run: str | None,
                   commit: str | None = None, **extra: object) -> list[dict]:
    """Append this run (``run`` names it: "full", "sample 100/layer seed 2026"; None: append
    nothing) to ``history.json`` and return the whole history. ``extra`` keys are stored as given
    (a resumed full run says how many verdicts it found, and the summed per-mutant test time).
    ``commit``: the checkout's HEAD when the run staged its sources (default: HEAD now)."""
    history = json.loads(path.read_text()) if path.exists() else []
    if run:
        history.append({
            "run": run,
            "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "commit": commit or git_head(),
            "wall_seconds": round(wall_seconds),
            "cores": os.cpu_count(),
            "scores": {k: round(v.score, 6) for k, v in summary.layers.items()},
            "judged": {k: v.generated - v.counts.get("not run", 0) for k, v in summary.layers.items()},
            **extra,
        })
        write_atomic(path, json.dumps(history, indent=1) + "\n")
    return history


def git_head() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              cwd=Path(__file__).parent, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "?"


_COLUMNS = ("killed", "timeout", "crashed", "survived", "no tests", "suspicious", "equivalent", "not run")


def floor_percent(score: float) -> str:
    """One decimal, rounded down: 0.9495 is 94.9%, never a 95.0% that hides a missed target."""
    return f"{math.floor(score * 1000 + 1e-9) / 10:.1f}%"


def _row(name: str, s: LayerSummary) -> str:
    cells = [str(s.counts.get(c, 0)) for c in _COLUMNS]
    return f"| {name} | {s.generated} | " + " | ".join(cells) + f" | {floor_percent(s.score)} |"


def render(summary: Summary, *, title: str, wall_seconds: float, target: float, history: list[dict] | None) -> str:
    head = "| | generated | " + " | ".join(_COLUMNS) + " | score |"
    rule = "|" + "---|" * (len(_COLUMNS) + 3)
    out = [f"# {title}", "",
           "Generated by `python mutation/run.py` (`tox -e mutation`); do not edit by hand. Score = (killed + "
           "timeout + crashed) / (generated - equivalent - not run). Target: "
           f"{target:.0%} per layer." + (f" This run took {wall_seconds:.0f} s wall clock on {os.cpu_count()} cores."
                                          if wall_seconds >= 1 else ""),
           ""]
    generated = sum(v.generated for v in summary.layers.values())
    unjudged = sum(v.counts.get("not run", 0) for v in summary.layers.values())
    if unjudged:
        out += [f"**{generated - unjudged} of {generated} mutants judged**; the scores are over the judged ones "
                "(the rest are \"not run\": `tox -e mutation` runs them all and resumes where it stopped).", ""]
    out += ["## Per layer", "", head, rule]
    out += [_row(f"`{k}/`", v) for k, v in summary.layers.items()]
    out += ["", "## Per module", "", head, rule]
    out += [_row(f"`{k}`", v) for k, v in sorted(summary.modules.items())]
    if history:
        out += ["", "## History", "", "| run | date | commit | wall | " + " | ".join(summary.layers) + " |",
                "|---|---|---|---|" + "---|" * len(summary.layers)]
        for h in history:
            out.append(f"| {h.get('run', 'full')} | {h['date']} | {h['commit']} | {h['wall_seconds']} s | "
                       + " | ".join(f"{floor_percent(h['scores'].get(k, 0))} of {h.get('judged', {}).get(k, '?')}"
                                    for k in summary.layers) + " |")
    out += ["", "## Survivors (not detected, not allow-listed)", ""]
    survivors = [m for layer in summary.layers.values() for m in layer.survivors]
    if not survivors:
        out.append("None.")
    for m in survivors:
        original, mutated = m.change()
        out.append(f"- `{m.name}` ({m.status}): `{original}` -> `{mutated}`")
    out += ["", f"## Equivalent mutants (allow-listed in `mutation/equivalent.toml`): {len(summary.equivalents_used)}", ""]
    for m, e in summary.equivalents_used:
        out.append(f"- `{m.name}`: `{e.original}` -> `{e.mutated}`: {e.reason}")
    if summary.stale_equivalents:
        out += ["", "## Allow-list entries that matched no undetected mutant (stale)", ""]
        out += [f"- `{e.module}.{e.function}`: `{e.original}` -> `{e.mutated}`" for e in summary.stale_equivalents]
    return "\n".join(out) + "\n"
