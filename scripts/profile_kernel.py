"""Where the compiled BPE merge kernel's time goes, instruction by instruction, without hardware counters.

Issue 29 asks, where a speed target is missed, for a profile of the kernel. On a VM perf reports
every hardware event ``<not supported>``, but its ``cpu-clock`` event (a timer) still samples the
instruction pointer. This script runs itself under ``perf record -e cpu-clock``; the child encodes
new text with ``tokspec.fast._bpe_encode._encode`` (1 MB parts of standard-library source or of
English, each once, the engine warmed first on another text: what a stream of new documents costs),
then copies the executable mapping that holds the kernel's machine code to a file. The parent bins
the samples that fall in that mapping by instruction and prints the hottest ones, each after the
instructions before it (objdump's disassembly of the copy).

Reading it: a timer sample lands on the oldest instruction not yet retired, so a load that missed
the caches shows up on the instruction just after it (the first to wait for it). Moving a stall
(for example by prefetching the line earlier) can leave the total unchanged: compare the kernel's
ns/B, printed first, not only the shares. Needs ``perf`` and ``objdump`` (binutils). A developer's
tool: not run by the tests or CI.

usage: python scripts/profile_kernel.py [--encoding o200k_base] [--text code|english] [--parts 25]
       [--top 12] [--context 12]
"""

from __future__ import annotations

import argparse
import collections
import ctypes
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _child(out: Path, encoding: str, text: str, parts: int) -> None:
    """Encode ``parts`` new 1 MB texts with the kernel (timed), then write the kernel's mapping."""
    import numpy as np

    from tokspec.app.bench.stages import code_varied, english_varied
    from tokspec import load_engine
    import numba

    from tokspec.fast._bpe_encode import _encode
    from tokspec.fast.peek2_unicode import code_points
    from tokspec.fast.pretok_peek2 import spans_of_code_points

    engine = load_engine(f"fast:{encoding}")
    tables = engine.bpe._tables  # type: ignore[attr-defined]  # this thread's: the shared tables and its store
    no_cbs = np.empty(0, dtype=np.int64)

    def spans(t: str) -> tuple[np.ndarray, ...]:  # the arrays encode_ids hands the kernel, so its version
        cps = code_points(t)
        starts, ends = spans_of_code_points(cps, engine.pattern)  # type: ignore[attr-defined]
        return np.frombuffer(t.encode(), dtype=np.uint8), cps, starts, ends

    def make(i: int) -> str:
        return code_varied(1_000_000, part=i) if text == "code" else english_varied(1_000_000, first_seed=9000 + 300 * i)

    warm = spans(english_varied(1_000_000, first_seed=8700))
    jobs = [spans(make(i)) for i in range(parts)]
    args = (warm[0], no_cbs, *warm[1:], False, *tables)
    _encode(*args)  # compiled (or loaded) and warm
    result = _encode.overloads[tuple(numba.typeof(a) for a in args)]  # the version these calls run
    entry = result.library.get_pointer_to_function(result.fndesc.llvm_func_name)
    began = time.perf_counter()
    for data, cps, starts, ends in jobs:
        _encode(data, no_cbs, cps, starts, ends, False, *tables)
    seconds = time.perf_counter() - began
    with open("/proc/self/maps") as maps:
        for line in maps:
            fields = line.split()
            low, high = (int(x, 16) for x in fields[0].split("-"))
            if "x" in fields[1] and low <= entry < high:
                (out / "region.bin").write_bytes(ctypes.string_at(low, high - low))
                info = {"base": low, "entry": entry, "seconds": seconds,
                        "bytes": int(sum(len(job[0]) for job in jobs))}
                (out / "region.json").write_text(json.dumps(info))
                return
    raise SystemExit("profile_kernel: the kernel's entry point is in no executable mapping")


def _run(cmd: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
    """``cmd`` in its own process group, killed with it on a timeout or an interrupt."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except BaseException:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        raise
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def sample_counts(ips: list[int], base: int, size: int) -> collections.Counter[int]:
    """Samples per offset into the mapping ``[base, base + size)``; samples elsewhere dropped."""
    return collections.Counter(ip - base for ip in ips if base <= ip < base + size)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--encoding", default="o200k_base")
    ap.add_argument("--text", choices=("code", "english"), default="code")
    ap.add_argument("--parts", type=int, default=25, help="new 1 MB texts, each encoded once")
    ap.add_argument("--top", type=int, default=12, help="hottest instructions shown")
    ap.add_argument("--context", type=int, default=12, help="instructions shown before each")
    ap.add_argument("--frequency", type=int, default=20_000, help="samples per second")
    ap.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child is not None:
        _child(args.child, args.encoding, args.text, args.parts)
        return
    missing = [tool for tool in ("perf", "objdump") if shutil.which(tool) is None]
    if missing:
        raise SystemExit(f"profile_kernel: needs {' and '.join(missing)} on PATH (perf: linux-tools; objdump: binutils)")
    with tempfile.TemporaryDirectory(prefix="tokspec-profile-") as tmp:
        work = Path(tmp)
        child = [sys.executable, __file__, "--child", str(work), "--encoding", args.encoding, "--text", args.text,
                 "--parts", str(args.parts)]
        rec = _run(["perf", "record", "-q", "-e", "cpu-clock", "-F", str(args.frequency), "-o", str(work / "perf.data"),
                    "--", *child], timeout=1800)
        if rec.returncode != 0 or not (work / "region.json").exists():
            raise SystemExit(f"profile_kernel: the profiled run failed (exit {rec.returncode}):\n{rec.stderr[-3000:]}")
        info = json.loads((work / "region.json").read_text())
        code = (work / "region.bin").read_bytes()
        script = _run(["perf", "script", "-i", str(work / "perf.data"), "-F", "ip"], timeout=600)
        ips = [int(line, 16) for line in script.stdout.split() if line]
        counts = sample_counts(ips, info["base"], len(code))
        asm = _run(["objdump", "-D", "-b", "binary", "-m", "i386:x86-64", str(work / "region.bin")], timeout=120).stdout
    total = sum(counts.values())
    print(f"fast:{args.encoding}, {args.parts} new 1 MB {args.text} texts: kernel {1e9 * info['seconds'] / info['bytes']:.2f} ns/B; "
          f"{len(ips)} samples, {total} in the kernel's mapping ({len(code)} bytes at {info['base']:#x}, "
          f"entry +{info['entry'] - info['base']:#x})")
    if not total:
        raise SystemExit("profile_kernel: no sample fell in the kernel's mapping")
    lines = [line for line in asm.splitlines() if line[:1] == " " and ":" in line]
    where = {}
    for i, line in enumerate(lines):
        try:
            where[int(line.split(":")[0], 16)] = i
        except ValueError:
            continue
    for offset, n in counts.most_common(args.top):
        print(f"\n{100 * n / total:5.1f}% at +{offset:#x}")
        row = where.get(offset)
        if row is None:
            print("    (not at an instruction boundary of the disassembly)")
            continue
        for line in lines[max(0, row - args.context):row + 2]:
            at = int(line.split(":")[0], 16)
            print(f"  {100 * counts.get(at, 0) / total:5.1f}  {line.strip()}")


if __name__ == "__main__":
    main()
