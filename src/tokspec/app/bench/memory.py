"""Suite ``memory``: peak resident memory of ``tokspec diff`` on one long line, against the engines alone.

Each row runs two fresh subprocesses on the same generated text of N characters (one line, the
prose-like text of :func:`tokspec.app.bench.parallel.generate_text`):

- *baseline*: load both engines, ``encode_arrays`` the text with each (results dropped between):
  the engines' own needs, which tokspec cannot lower;
- *subject*: what ``tokspec diff A B --inputs FILE`` does per input: :func:`tokspec.diff.compare`,
  and on a disagreement :func:`tokspec.records.save_counterexample` (record size reported in the
  case name).

Both report the growth of peak RSS (``resource.getrusage(RUSAGE_SELF).ru_maxrss``) over the RSS
once both engines are loaded and warm (the vocabularies cost the same for any input). Rows carry
``unit="MB"``: ``subject_s``/``baseline_s`` hold that growth in MB, and the table shows it per input
byte, so the bound "peak RSS within a small multiple of the input plus the engines' own needs" is
read off directly: subject per byte minus baseline per byte is what tokspec adds.
Pairs: the same engine twice (agree) and cl100k vs o200k (disagree from token 0: the largest record).
Out of scope: memory of fuzz mode (texts there are at most a few MB) and of ``merge-check``.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import tempfile

from tokspec.app.bench import BenchRow

__all__ = ["run", "probe"]

_PAIRS = (("tiktoken:cl100k_base", "tiktoken:cl100k_base"), ("tiktoken:cl100k_base", "tiktoken:o200k_base"))


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: kilobytes


def probe(mode: str, a_name: str, b_name: str, n_chars: int, out_dir: str) -> dict[str, float]:
    """Run one measurement in this process (call it in a fresh one): ``mode`` is "engines" or "diff"."""
    from tokspec import load_engine
    from tokspec.app.bench.parallel import generate_text

    a, b = load_engine(a_name), load_engine(b_name)
    text = generate_text(n_chars).replace("\n", " ")
    a.encode_arrays("warm up"), b.encode_arrays("warm up")
    loaded = _peak_mb()
    record_bytes = 0
    if mode == "engines":
        for engine in (a, b):
            engine.encode_arrays(text)
    else:
        from tokspec.diff import compare
        from tokspec.records import save_counterexample
        comparison = compare(a, b, text)
        if not comparison.agree:
            record_bytes = save_counterexample(a, b, comparison, out_dir).stat().st_size
    return {"peak_mb": _peak_mb(), "loaded_mb": loaded, "record_bytes": record_bytes,
            "input_bytes": len(text.encode("utf-8"))}


def _measure(mode: str, a: str, b: str, n_chars: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="tokspec-bench-memory-") as out_dir:
        code = ("import json, sys; from tokspec.app.bench.memory import probe; "
                "print(json.dumps(probe(*sys.argv[1:4], int(sys.argv[4]), sys.argv[5])))")
        done = subprocess.run([sys.executable, "-c", code, mode, a, b, str(n_chars), out_dir],
                              capture_output=True, text=True, check=True)
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def run(*, quick: bool) -> list[BenchRow]:
    """quick: 1M characters; full: 8M characters. One row per engine pair."""
    n_chars = 1_000_000 if quick else 8_000_000
    rows = []
    for a, b in _PAIRS:
        engines = _measure("engines", a, b, n_chars)
        diff = _measure("diff", a, b, n_chars)
        verdict = f"record {diff['record_bytes'] / 1e6:.1f} MB" if diff["record_bytes"] else "agree"
        rows.append(BenchRow("memory", f"{n_chars // 1_000_000}M-char line, {verdict}",
                             f"diff {a} {b}", "engines' encode alone", int(diff["input_bytes"]),
                             diff["peak_mb"] - diff["loaded_mb"], engines["peak_mb"] - engines["loaded_mb"],
                             unit="MB"))
    return rows


if __name__ == "__main__":  # pragma: no cover - manual use: python -m tokspec.app.bench.memory
    print(json.dumps([r.as_dict() for r in run(quick="--quick" in sys.argv)], indent=1))
