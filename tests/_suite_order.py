"""The order in which ``tox -e py`` hands tests to its xdist workers: the heavy ones first.

``pytest -n auto`` (``--dist load``) gives out tests in collection order, to whichever worker runs
short (tests/conftest.py sets ``--maxschedchunk 1``: by default xdist first hands each worker a
consecutive chunk of a quarter of its share, and that chunk would hold every heavy test). A test
that takes a minute and is collected near the end (tests/test_tutorial.py sorts late) then starts
when the other worker has only seconds of work left, and the suite ends with one worker busy and
the other idle. Running the longest tests first (the LPT rule: longest processing time first)
leaves the short ones to fill the end on both workers. Measured (s39, per-test durations of one run
replayed through xdist 3.8's scheduler, 2 workers): collection order 562 s, heavy first with the
default chunks 550 s (the real run: 550 s and 451 s), heavy first one at a time 500 s, the sum of
durations over two; a second run under heavier load, with this order: 848 s in collection order
against 751 s, and its two workers really ended within a second of each other.

:data:`HEAVY_TESTS` names the tests that took seconds each in a measured run (``pytest -n 2 -q tests
--durations=80`` on 2 cores, empty caches as in CI; setup included where a module fixture compiles
or builds tables), with those seconds as their weight. :func:`heavy_first` keeps each test file
together (module-scoped fixtures are then set up once per worker, as in collection order): files
with a heavy test come first, heaviest first, each with its heavy tests at its front; every other
file follows in collection order. Unlisted tests keep their relative order, and a listed name that
no longer exists only loses its place (tests/test_suite_order.py checks every name still exists).

Out of scope: measuring durations at run time (pytest's cache provider is off in this project).
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["HEAVY_TESTS", "heavy_first", "suite_key"]

#: ``file::function`` (no folder, no parameters) -> seconds measured (module docstring).
HEAVY_TESTS: dict[str, float] = {
    "test_tutorial.py::test_tutorial_examples_print_what_the_tutorial_says": 60.3,
    "test_fast_hf_bpe_families.py::test_the_engines_say_what_they_run": 28.1,
    "test_fuzz_run_budget.py::test_budget_progress_legend_clean_tree_and_promote": 27.5,
    "test_reference_unigram.py::test_metaspace_variants_equal_hf": 25.4,
    "test_bench_split_unigram.py::test_split_rows_are_exact_and_complete": 20.6,
    "test_merge_structure.py::test_lopt_equals_serial_on_a_megabyte": 20.3,
    "test_diff_parallel.py::test_fuzz_workers_deduplicate_findings": 19.1,
    "test_threads_stage.py::test_check_against_fails_on_the_shared_scratch": 18.8,
    "test_hardening_round3.py::test_fuzz_worker_stuck_in_an_engine_call_respects_time": 17.6,
    "test_fuzz_min_share.py::test_a_ci_like_run_uses_its_budget_and_runs_every_target": 14.3,
    "test_threads_stage.py::test_diff_passes_the_clean_twin": 13.3,
    "test_fuzz_min_share.py::test_a_run_that_ends_a_little_late_is_not_interrupted": 13.2,
    "test_hypofuzz.py::test_hypofuzz_collects_every_hypothesis_target": 13.1,
    "test_mutant_cache.py::test_mutant_kernels_leave_the_cache_to_the_real_engine": 12.5,
    "test_fast_hf_bpe_families.py::test_hyp_qwen2_like_equals_hf": 12.4,
    "test_diff_parallel.py::test_workers_output_is_identical_to_one_worker": 12.2,
    "test_diff_parallel.py::test_directory_and_glob_of_shards": 12.2,
    "test_fast_spm_ids.py::test_encode_ids_equals_sentencepiece_and_encode_arrays": 11.5,
    "test_fuzz_engine_loads.py::test_a_run_loads_each_engine_once_per_process_and_never_in_the_runner": 10.9,
    "test_examples.py::test_tutorial_cmd_engine_bug_is_caught": 10.0,
    "test_examples.py::test_tutorial_python_engine_bug_is_caught": 9.7,
    "test_fuzz_rss_allowance.py::test_a_child_of_a_large_process_knows_what_it_inherited": 9.6,
    "test_fast_unigram_byte_classes.py::test_generated_model_equals_reference": 8.6,
    "test_fuzz_hangs.py::test_hanging_target_is_recorded_once_minimized_and_not_run_again": 8.3,
    "test_dask_worker_killed.py::test_a_worker_killed_mid_run_gives_the_full_result_or_one_line": 8.3,
    "test_fast_engines.py::test_regression_recorded_disagreements": 8.1,
    "test_threads_stage.py::test_diff_fuzz_finds_the_shared_scratch_and_replays_it": 7.9,
    "test_hostile_engines.py::test_hostile_cmd_engine_everything_escaped_and_recorded": 7.8,
    "test_fuzz_min_share.py::test_a_target_running_past_its_plan_is_stopped_for_the_next_ones_minimum": 7.7,
    "test_fuzz_min_share.py::test_every_toy_target_gets_inputs_and_a_slow_one_is_reported_starved": 7.6,
    "test_reference_bpe_merges.py::test_hf_converted_equals_tiktoken_on_corpus": 7.3,
    "test_cli_diff.py::test_fuzz_mode_shrinks_saves_corpus_and_summarizes": 7.1,
    "test_fast_hf_precompiled.py::test_hyp_compiled_precompiled_equals_general": 7.0,
    "test_clusterfuzzlite.py::test_build_sh_local_mode_and_one_target_of_each_kind": 7.0,
    "test_plugin.py::test_fixture_in_a_user_suite": 6.4,
    "test_hardening_round3.py::test_check_against_bounds_the_replay_and_each_call": 6.4,
}


def suite_key(nodeid: str) -> str:
    """``tests/test_x.py::test_f[a-b]`` -> ``test_x.py::test_f`` (the key of :data:`HEAVY_TESTS`);
    a method keeps its class: ``test_x.py::TestC::test_f``."""
    path, _, rest = nodeid.split("[", 1)[0].partition("::")
    return f"{path.rsplit('/', 1)[-1]}::{rest}"


def heavy_first(nodeids: Sequence[str], weights: dict[str, float] = HEAVY_TESTS) -> list[int]:
    """The positions of ``nodeids`` in the order the module docstring gives (a permutation)."""
    files: dict[str, list[int]] = {}
    for k, nodeid in enumerate(nodeids):
        files.setdefault(nodeid.partition("::")[0], []).append(k)

    def weight(k: int) -> float:
        return weights.get(suite_key(nodeids[k]), 0.0)

    blocks = [sorted(ks, key=lambda k: -weight(k)) for ks in files.values()]  # stable: heavy first
    blocks.sort(key=lambda ks: -weight(ks[0]))  # stable: unlisted files keep their order
    return [k for ks in blocks for k in ks]
