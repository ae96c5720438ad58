"""The mutation-testing driver (mutation/run.py, mutation/report.py): staging, verdicts, allow-list.

The driver itself is exercised end to end by `tox -e mutation`; these tests pin the parts whose
mistakes would silently change a score: which lines the stage drops, how verdicts are counted,
which survivors an allow-list entry excuses, and that the CI sample is fixed by its seed.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _load(name: str):
    sys.path.insert(0, str(ROOT / "mutation"))
    try:
        spec = importlib.util.spec_from_file_location(f"_mutation_{name}", ROOT / "mutation" / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module      # dataclasses look their module up while being defined
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(ROOT / "mutation"))


report = _load("report")
run = _load("run")
stage = _load("stage")


def test_stage_drops_exactly_the_kernel_decorator_lines():
    source = "@kernel\ndef f(x):\n    return x  # @kernel in a comment stays\n@kernel_other\ndef g(): pass\n    @kernel\n"
    staged = stage.staged_text(source)
    assert staged == "def f(x):\n    return x  # @kernel in a comment stays\n@kernel_other\ndef g(): pass\n"


def test_stage_drops_kernel_decorators_with_arguments_too():
    """mutmut skips decorated functions: a kept ``@kernel(inline=True)`` line left Peek2's helpers,
    the piece table and cache and the spm lattice kernels out of the gate, unmutated."""
    source = ("@kernel(inline=True)\ndef f(x):\n    return x\n"
              "    @kernel(cache=False)  \ndef g(): pass\n"
              "@kernel()\ndef h(): pass\n"
              "@kernel(\n    inline=True)\ndef k(): pass\n"          # spread over lines: kept whole
              "@kernels(inline=True)\n@kernel_other(x)\nx = f(1)  # @kernel(inline=True) in a comment\n")
    staged = stage.staged_text(source)
    assert staged == ("def f(x):\n    return x\ndef g(): pass\ndef h(): pass\n"
                      "@kernel(\n    inline=True)\ndef k(): pass\n"
                      "@kernels(inline=True)\n@kernel_other(x)\nx = f(1)  # @kernel(inline=True) in a comment\n")


def test_a_kept_module_keeps_only_its_kernel_decorators_with_arguments():
    source = "@kernel\ndef f(): pass\n@kernel(inline=True)\ndef g(): pass\n"
    assert stage.staged_text(source, with_arguments=False) == "def f(): pass\n@kernel(inline=True)\ndef g(): pass\n"


def test_no_kernel_of_the_layers_keeps_its_decorator_on_the_stage_unless_listed():
    """Every ``@kernel`` of reference/, spec/ and fast/ is staged undecorated (so it is mutated),
    except in the modules config.toml's ``[stage] keep_decorated`` lists (decorated kernels whose
    mutants are not judged yet): a decorator form the stage does not strip would silently leave its
    function out of the gate. Every listed module exists and has such a kernel (no stale entry)."""
    keep = stage.kept_decorated()
    kept = []
    for layer in stage.LAYERS:
        for path in sorted((ROOT / layer).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            staged = stage.staged_text(path.read_text(encoding="utf-8"), with_arguments=rel not in keep)
            kept += [f"{rel}: {line.strip()}" for line in staged.splitlines() if line.strip().startswith("@kernel")]
    assert [k for k in kept if k.split(":")[0] not in keep] == []
    assert sorted({k.split(":")[0] for k in kept}) == sorted(keep)
    assert any("@kernel(inline=True)" in p.read_text() for p in (ROOT / "fast").glob("*.py"))


def test_stage_creates_the_import_path_of_the_mutated_copy_before_mutmut_starts(tmp_path):
    """A fresh stage without ``mutants/src`` made mutmut import the unmutated site-packages copy
    (the path entry was cached as missing at interpreter start) and stop with "no test case"."""
    stage.stage(tmp_path, [])
    assert (tmp_path / "mutants" / "src").is_dir()
    assert str(tmp_path / "mutants" / "src") == stage.mutation_env(tmp_path)["PYTHONPATH"]


def test_kernel_is_the_identity_in_interpreted_mode():
    """The stage relies on it: dropping `@kernel` must change nothing under TOKSPEC_JIT=0."""
    import subprocess

    probe = ("import tokspec._jit as j\nf = lambda x: x\n"
             "print(j.JIT_ENABLED, j.kernel(f) is f, j.kernel(inline=True)(f) is f, j.kernel(cache=False)(f) is f)")
    out = subprocess.run([sys.executable, "-c", probe], env={**__import__("os").environ, "TOKSPEC_JIT": "0"},
                         capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True", "True", "True"]


def _meta(tmp_path: Path, layer: str, module: str, codes: dict[str, int | None]) -> None:
    folder = tmp_path / "mutants" / "src" / "tokspec" / layer
    folder.mkdir(parents=True, exist_ok=True)
    prefix = f"tokspec.{layer}.{module}."
    (folder / f"{module}.py.meta").write_text(json.dumps(
        {"exit_code_by_key": {prefix + k: v for k, v in codes.items()}}))


def test_verdicts_are_read_per_layer_and_scored(tmp_path):
    _meta(tmp_path, "reference", "bpe_naive", {
        "x_encode__mutmut_1": 1, "x_encode__mutmut_2": 0, "x_encode__mutmut_3": 36, "x_merge__mutmut_1": 33})
    _meta(tmp_path, "fast", "engines", {"x_f__mutmut_1": 1, "x_f__mutmut_2": None})
    results = report.read_results(tmp_path, ("reference", "spec", "fast"))
    assert {m.status for m in results.values()} == {"killed", "survived", "timeout", "no tests", "not run"}
    assert results["tokspec.reference.bpe_naive.x_merge__mutmut_1"].function == "x_merge"
    summary = report.summarize(results, [], ("reference", "spec", "fast"))
    ref = summary.layers["reference"]
    assert (ref.generated, ref.detected) == (4, 2)
    assert ref.score == pytest.approx(2 / 4)          # no tests counts against the score
    assert summary.layers["fast"].score == 1.0        # "not run" is outside the denominator
    assert summary.layers["spec"].generated == 0
    assert [m.status for m in ref.survivors] == ["survived", "no tests"]


def test_an_allow_list_entry_excuses_only_the_mutant_it_describes(tmp_path):
    _meta(tmp_path, "spec", "bpe", {"x_check__mutmut_1": 0, "x_check__mutmut_2": 0, "x_check__mutmut_3": 1,
                                    "x_pending__mutmut_1": None})
    results = report.read_results(tmp_path, ("spec",))
    diffs = {"1": "--- a\n+++ b\n-    if n < 2:\n+    if n <= 2:", "2": "--- a\n+++ b\n-    return x\n+    return None",
             "3": "--- a\n+++ b\n-    if n < 2:\n+    if n <= 2:"}
    for name, m in results.items():
        m.diff = diffs[name[-1]]
    entry = report.Equivalent("tokspec.spec.bpe", "x_check", "if n < 2:", "if n <= 2:", "n == 2 takes the same path")
    other = report.Equivalent("tokspec.spec.bpe", "x_other", "return 1", "return 2", "stale")
    waiting = report.Equivalent("tokspec.spec.bpe", "x_pending", "return 1", "return 2", "not judged yet")
    summary = report.summarize(results, [entry, other, waiting], ("spec",))
    layer = summary.layers["spec"]
    assert layer.counts == {"equivalent": 1, "survived": 1, "killed": 1, "not run": 1}
    assert layer.score == pytest.approx(1 / 2)        # killed / (generated - equivalent)
    assert [e for _, e in summary.equivalents_used] == [entry]   # a killed mutant is never "equivalent"
    assert summary.stale_equivalents == [other]   # its function is gone; x_pending's is not judged yet


def test_allow_list_entries_need_a_reason(tmp_path):
    path = tmp_path / "equivalent.toml"
    path.write_text('[[equivalent]]\nmodule = "m"\nfunction = "x_f"\noriginal = "a"\nmutated = "b"\nreason = " "\n')
    with pytest.raises(SystemExit, match="reason"):
        report.load_equivalents(path)


def test_the_committed_allow_list_parses():
    for entry in report.load_equivalents(ROOT / "mutation" / "equivalent.toml"):
        assert entry.module.startswith(("tokspec.reference.", "tokspec.spec.", "tokspec.fast."))
        assert entry.original != entry.mutated


def test_the_ci_sample_is_fixed_by_its_seed_and_takes_each_layer():
    results = {f"tokspec.{layer}.m.x_f__mutmut_{i}": report.Mutant(f"tokspec.{layer}.m.x_f__mutmut_{i}", layer,
                                                                   f"tokspec.{layer}.m", "x_f", "not run")
               for layer in ("reference", "spec", "fast") for i in range(50)}
    a = run.sample_names(results, 7, seed=13)
    assert a == run.sample_names(dict(reversed(list(results.items()))), 7, seed=13)
    assert a != run.sample_names(results, 7, seed=14)
    assert [sum(n.startswith(f"tokspec.{layer}.") for n in a) for layer in run.LAYERS] == [7, 7, 7]
    # an edit that adds mutants elsewhere leaves the rest of the sample in place
    extra = {f"tokspec.fast.new.x_g__mutmut_{i}": report.Mutant(f"tokspec.fast.new.x_g__mutmut_{i}", "fast",
                                                              "tokspec.fast.new", "x_g", "not run") for i in range(5)}
    b = run.sample_names({**results, **extra}, 7, seed=13)
    assert len(set(a) - set(b)) <= 5 and len(set(b) - set(a)) <= 5


def test_report_lists_every_survivor_with_its_line(tmp_path):
    _meta(tmp_path, "fast", "engines", {"x_f__mutmut_1": 0, "x_f__mutmut_2": 1})
    results = report.read_results(tmp_path, ("reference", "spec", "fast"))
    results["tokspec.fast.engines.x_f__mutmut_1"].diff = "-    a = b + 1\n+    a = b - 1"
    summary = report.summarize(results, [], ("reference", "spec", "fast"))
    text = report.render(summary, title="t", wall_seconds=1.0, target=0.95, history=None)
    assert "`tokspec.fast.engines.x_f__mutmut_1` (survived): `a = b + 1` -> `a = b - 1`" in text
    assert "| `fast/` | 2 | 1 |" in text


def test_parametrize_ids_are_plain_ascii_and_round_trip(request):
    """tests/conftest.py's ids: pytest would re-escape non-ASCII and backslashes on each collection."""
    def stable_id(val):
        return request.config.hook.pytest_make_parametrize_id(config=request.config, val=val, argname="x")

    assert stable_id("\U0001f642") == "<1F642>"
    assert stable_id(r"\S+ ?") == "<5C>S+ ?"
    assert stable_id("a\n\n") == "a<A><A>"
    assert stable_id("plain-text_1") == "plain-text_1"
    for text in ["\u7684", "[^\\p{L}\\d]", "cafe\U0001e024\U00011236 ab"]:
        assert stable_id(text).isascii() and "\\" not in stable_id(text)
        assert stable_id(stable_id(text)) == stable_id(text)    # what a re-collection would do to it


def test_carried_verdicts_survive_a_reset_only_for_the_same_function_version(tmp_path):
    folder = tmp_path / "mutants" / "src" / "tokspec" / "fast"
    folder.mkdir(parents=True)
    meta = {"exit_code_by_key": {"tokspec.fast.m.x_f__mutmut_1": 1, "tokspec.fast.m.x_g__mutmut_1": 0},
            "hash_by_function_name": {"x_f": "h1", "x_g": "h2"}}
    (folder / "m.py.meta").write_text(json.dumps(meta))
    report.carry(tmp_path, list(report.read_results(tmp_path, ("fast",)).values()))   # only the killed one
    meta["exit_code_by_key"] = dict.fromkeys(meta["exit_code_by_key"])                   # mutmut's reset
    (folder / "m.py.meta").write_text(json.dumps(meta))
    after = report.read_results(tmp_path, ("fast",))
    assert after["tokspec.fast.m.x_f__mutmut_1"].status == "killed"
    assert after["tokspec.fast.m.x_g__mutmut_1"].status == "not run"     # a survivor is never carried
    meta["hash_by_function_name"]["x_f"] = "edited"
    (folder / "m.py.meta").write_text(json.dumps(meta))
    assert report.read_results(tmp_path, ("fast",))["tokspec.fast.m.x_f__mutmut_1"].status == "not run"


def test_scores_are_printed_rounded_down():
    assert report.floor_percent(94 / 99) == "94.9%"      # never a 95.0% hiding a missed target
    assert report.floor_percent(0.95) == "95.0%"
    assert report.floor_percent(1.0) == "100.0%"


def test_full_run_estimate_extrapolates_each_layer_from_its_sampled_mutants():
    def mutant(layer, seconds, status="killed"):
        return report.Mutant(f"tokspec.{layer}.m.x_f__mutmut_1", layer, f"tokspec.{layer}.m", "x_f", status,
                             seconds=seconds)
    sampled = [mutant("reference", 1.0), mutant("reference", 3.0), mutant("fast", 10.0),
               mutant("fast", 99.0, status="not run")]     # a stale time of an unjudged mutant is ignored
    # reference: mean 2 s x 100 mutants; fast: 10 s x 50 mutants; on 2 workers
    assert report.full_run_estimate(sampled, {"reference": 100, "fast": 50}, 2) == pytest.approx((200 + 500) / 2)
    assert report.full_run_estimate(sampled, {"reference": 100, "spec": 10}, 2) is None   # spec has no timing


def test_a_changed_layer_source_makes_mutmut_record_the_test_map_again(tmp_path):
    """A new function has no entry in mutmut's test map (its mutants would read "no tests"): a stage
    that writes a changed reference/, spec/ or fast/ source drops the map; an unchanged stage keeps it."""
    stage.stage(tmp_path, [])
    stats = tmp_path / "mutants" / "mutmut-stats.json"
    stats.write_text("{}")
    stage.stage(tmp_path, [])                               # nothing changed: the map stays
    assert stats.exists()
    staged = tmp_path / "src" / "tokspec" / "fast" / "_cache.py"
    staged.write_text(staged.read_text() + "\n# edited\n")   # differs from the checkout: re-synced
    stage.stage(tmp_path, [])
    assert not stats.exists()


def test_a_full_run_skips_exactly_the_allow_listed_mutants_and_counts_them_equivalent(tmp_path, monkeypatch):
    _meta(tmp_path, "spec", "bpe", {"x_check__mutmut_1": None, "x_check__mutmut_2": None,
                                    "x_check__mutmut_3": 34, "x_other__mutmut_1": None,
                                    "x_twice__mutmut_1": None, "x_twice__mutmut_2": None})
    lt, ret, gt = ("if n < 2:", "if n <= 2:"), ("return x", "return None"), ("if n > 2:", "if n >= 2:")
    brk = ("continue", "break")
    changes = {"x_check__mutmut_1": lt, "x_check__mutmut_2": ret, "x_check__mutmut_3": gt,
               "x_other__mutmut_1": ret, "x_twice__mutmut_1": brk, "x_twice__mutmut_2": brk}

    def fake_diffs(work, env, mutants):
        for m in mutants:
            minus, plus = changes[m.name.rsplit(".", 1)[1]]
            m.diff = f"--- a\n+++ b\n-    {minus}\n+    {plus}"
    monkeypatch.setattr(run.report, "attach_diffs", fake_diffs)   # the module run.py imported
    entry = run.report.Equivalent("tokspec.spec.bpe", "x_check", *lt, "n == 2 takes the same path")
    # the same change at two places of x_twice: the entry cannot say which one it means, both run
    twice = run.report.Equivalent("tokspec.spec.bpe", "x_twice", *brk, "the last iteration")
    # mutant 3 was skipped under an entry since removed: it is judged again
    assert run.skip_equivalents(tmp_path, {}, [entry, twice]) == 1
    results = report.read_results(tmp_path, ("spec",))
    assert sorted(n.rsplit(".", 1)[1] for n, m in results.items() if m.status == "skipped") == ["x_check__mutmut_1"]
    fake_diffs(None, None, results.values())
    layer = report.summarize(results, [entry, twice], ("spec",)).layers["spec"]
    assert layer.counts == {"equivalent": 1, "not run": 5}
    assert run.unskip(tmp_path) == 1                      # --equivalents: run them after all
    assert {m.status for m in report.read_results(tmp_path, ("spec",)).values()} == {"not run"}


def test_the_staged_pytest_arguments_load_the_hang_guard():
    assert ["-p", stage.HANG_GUARD] == [a for a in stage._stage_pyproject([]).split("pytest_add_cli_args = ")[1]
                                       .split("\n")[0].strip('[]').replace('"', "").split(", ")
                                       if a in ("-p", stage.HANG_GUARD)][-2:]


def test_the_hang_guard_stops_a_looping_test_as_a_timeout_and_logs_it(tmp_path):
    import shutil
    import subprocess
    shutil.copy(ROOT / "mutation" / "hang_guard.py", tmp_path / "_guard.py")
    (tmp_path / "conftest.py").write_text("import _guard\n_guard.CONSTANT = 0.3\n")
    (tmp_path / "test_x.py").write_text("def test_loop():\n    while True:\n        pass\n\n"
                                        "def test_quick():\n    assert sum(range(10)) == 45\n")
    (tmp_path / "mutmut-stats.json").write_text(json.dumps(
        {"duration_by_test": {"test_x.py::test_loop": 0.01, "test_x.py::test_quick": 0.01}}))

    def pytest_with(mutant, node):
        env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(tmp_path), "MUTANT_UNDER_TEST": mutant}
        return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "_guard", "-p", "no:cacheprovider",
                               f"test_x.py::{node}"], cwd=tmp_path, env=env, capture_output=True, timeout=60).returncode

    assert pytest_with("tokspec.spec.bpe.x_f__mutmut_1", "test_loop") == 36
    log = [json.loads(line) for line in (tmp_path / "hang-guard.jsonl").read_text().splitlines()]
    assert log == [{"mutant": "tokspec.spec.bpe.x_f__mutmut_1", "test": "test_x.py::test_loop",
                    "recorded": 0.01, "allowed": pytest.approx(0.35)}]
    assert pytest_with("tokspec.spec.bpe.x_f__mutmut_1", "test_quick") == 0


def test_a_fresh_recheck_runs_the_modules_own_test_file_first_then_the_fastest():
    fresh = _load("fresh")
    durations = {"tests/test_a.py::t1": 0.1, "tests/test_a.py::t2": 5.0, "tests/test_spec_merge.py::w": 8.0,
                 "tests/test_b.py::t3": 0.2}
    assert fresh.within_budget(list(durations), durations, 9.0, "tests/test_spec_merge.py") == \
        ["tests/test_spec_merge.py::w", "tests/test_a.py::t1", "tests/test_b.py::t3"]
    assert fresh.within_budget(list(durations), durations, 9.0) == \
        ["tests/test_a.py::t1", "tests/test_b.py::t3", "tests/test_a.py::t2"]
    assert fresh.within_budget(list(durations), durations, 0.0) == ["tests/test_a.py::t1"]  # at least one


def test_an_import_time_module_is_rechecked_with_its_own_test_file_whole(tmp_path):
    """A test of what a module registered at import calls nothing of it (mutmut maps no call), so
    the module's own test file is run whole, besides the tests mutmut saw calling it."""
    fresh = _load("fresh")
    (tmp_path / "mutants" / "tests").mkdir(parents=True)
    (tmp_path / "mutants" / "tests" / "test_spec_merge.py").write_text("def test_w(): pass\n")
    mapped = {"tokspec.spec.merge.x_f": ["tests/test_spec_merge.py::test_f", "tests/test_other.py::test_g"],
              "tokspec.spec.bpe.x_h": ["tests/test_spec_bpe.py::test_h"]}
    assert fresh.tests_for_module(tmp_path, "tokspec.spec.merge", ["tests/test_spec_merge.py"], mapped) == \
        ["tests/test_spec_merge.py", "tests/test_other.py::test_g"]
    assert fresh.tests_for_module(tmp_path, "tokspec.spec.merge", ["tests"], mapped)[0] == "tests/test_spec_merge.py"
    # not a killer file: only the mapped tests
    assert fresh.tests_for_module(tmp_path, "tokspec.spec.merge", ["tests/test_other.py"], mapped) == \
        ["tests/test_other.py::test_g", "tests/test_spec_merge.py::test_f"]
