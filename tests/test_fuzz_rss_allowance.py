"""A fuzzer started by a large process is not stopped as out-of-memory for its parent's memory.

Linux carries a parent's peak resident memory into the child across fork and exec, and libFuzzer
reads -rss_limit_mb against that peak: a pytest worker past 2 GB made both ClusterFuzzLite fuzzers
of ``tests/test_clusterfuzzlite.py`` report "out-of-memory" before their first input. The harness
now measures what it inherited and raises the limit by that much (``fuzz.harness``).
"""

from __future__ import annotations

import subprocess
import sys

from tokspec.fuzz.harness import LIBFUZZER_RSS_LIMIT_MB, with_rss_allowance

_PROBE = "from tokspec.fuzz.harness import inherited_peak_mb; print(inherited_peak_mb())"


def test_a_child_of_a_large_process_knows_what_it_inherited() -> None:
    parent = ("import subprocess, sys\n"
              "ballast = bytearray(1200 << 20)\n"
              "for i in range(0, len(ballast), 4096): ballast[i] = 1\n"
              f"print(subprocess.run([sys.executable, '-c', {_PROBE!r}], capture_output=True, text=True).stdout)")
    # the same probe through a parent without ballast: this test's own process may be large (a
    # pytest worker after many tests), and its direct children inherit that peak, so both probes
    # run as grandchildren (a fork passes on the parent's memory peak, not the peak it inherited)
    lean = ("import subprocess, sys\n"
            f"print(subprocess.run([sys.executable, '-c', {_PROBE!r}], capture_output=True, text=True).stdout)")
    big = int(subprocess.run([sys.executable, "-c", parent], capture_output=True, text=True, check=True).stdout)
    small = int(subprocess.run([sys.executable, "-c", lean], capture_output=True, text=True, check=True).stdout)
    # the child's own resident memory at the probe (an interpreter and tokspec's imports, 100-250 MB)
    # is not inherited: the probe reports the ballast's 1,200 MB less about that much
    assert big >= 800 and small < 100, (big, small)


def test_the_limit_grows_by_the_inherited_memory_only() -> None:
    corpus = ["-runs=5", "corpus/"]
    assert with_rss_allowance(corpus, 0) == corpus
    assert with_rss_allowance(corpus, 900) == [f"-rss_limit_mb={LIBFUZZER_RSS_LIMIT_MB + 900}", *corpus]
    assert with_rss_allowance(["-rss_limit_mb=3072", *corpus], 100) == ["-rss_limit_mb=3172", *corpus]
    assert with_rss_allowance(["-rss_limit_mb=0", *corpus], 100) == ["-rss_limit_mb=0", *corpus]  # 0: none
    assert LIBFUZZER_RSS_LIMIT_MB == 2048
