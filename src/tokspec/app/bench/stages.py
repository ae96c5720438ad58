"""``tokspec bench --suite stages``: where ``fast:cl100k_base`` and ``fast:o200k_base`` ``encode_ids`` spend their time.

``encode_ids`` is four steps, each timed alone here on the same text (1 MB of English-like text
from one corpus and from many, :func:`english_varied`, Chinese-like text and code; 20 KB with
``quick``), best of 5, steps and the whole call interleaved:

1. ``code points``: the text as a uint32 array (``tokspec.fast.peek2_unicode.code_points``);
2. ``peek2``: the pretoken spans (the Peek2 kernel, with its category table lookup per character);
3. ``utf8``: the UTF-8 bytes and each character's first byte (``bpe_kernel.utf8_of_code_points``;
   since issue 29's second round ``encode_ids`` itself takes ``str.encode``'s bytes and counts byte
   positions in the merge kernel: this row is the offsets path's step);
4. ``merge``: the backtracking BPE kernel over all pretokens (trie walks, pair checks through
   the pair-validity memo, warm as in steady use); and ``merge, cold memo``: the same with the
   memo emptied first (what the memo saves); ``merge, no store``: without the per-thread store of
   merged pieces (``tokspec.fast._piece_store``: what the store saves on a text seen before).

Each row's subject is one step, its baseline the whole ``encode_ids``: the ratio is whole /
step (the step's share is its inverse), and the case names the step's nanoseconds per input
byte. Rows with the whole ``encode_ids`` against tiktoken ``encode_ordinary`` and the fastest
exact peers that are importable (toktok-rs, quicktok-v1: the ``bench`` extra) put the steps in
scale. The ids of the steps run in sequence, of ``encode_ids`` and of each peer are checked
equal in the same run (``INEXACT`` otherwise).

Those rows time each engine on ONE text, called again and again: an engine that keeps state across
calls (``fast:``'s store of merged pieces, toktok-rs's caches) sees it warm for exactly that text,
which flatters it beyond a stream of real documents. The ``fresh`` rows time first calls
instead: each round a new text (English from new corpora, new Chinese-like text, new standard
library files), each engine once, warmed only by the earlier rounds (:func:`_fresh_rows`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

from tokspec import load_engine
from tokspec.app.bench import BenchRow, fresh_copy
from tokspec.app.bench.fast import _exact, chinese_like, code, english

__all__ = ["run"]

SUITE = "stages"


def _best(fns: dict[str, Callable[[], object]], repeat: int) -> dict[str, float]:
    """Best seconds of each function, all called in turn ``repeat`` times (one warm-up round)."""
    import time
    best = {name: float("inf") for name in fns}
    for round_ in range(repeat + 1):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            if round_:
                best[name] = min(best[name], time.perf_counter() - t0)
    return best


def _stage_rows(lang: str, text: str, repeat: int, encoding: str = "cl100k_base") -> list[BenchRow]:
    from tokspec.app.bench.latency import peers
    from tokspec.fast import bpe_kernel
    from tokspec.fast._piece_store import new_store
    from tokspec.fast.peek2_unicode import code_points
    from tokspec.fast.pretok_peek2 import spans_of_code_points

    engine = load_engine(f"fast:{encoding}")
    fast = f"fast:{encoding}"
    bpe, pattern = engine.bpe, engine.pattern  # type: ignore[attr-defined]
    cps = code_points(text)
    starts, ends = spans_of_code_points(cps, pattern)
    data, cbs = bpe_kernel.utf8_of_code_points(cps)

    def merge() -> np.ndarray:
        with np.errstate(over="ignore"):
            ids = bpe_kernel._encode(data, cbs, bpe_kernel._NO_CPS, starts, ends, False, *bpe._tables)
        out: np.ndarray = ids
        return out

    def merge_cold() -> np.ndarray:
        bpe.memo.fill(-1)
        return merge()

    no_store = new_store(0)

    def merge_no_store() -> np.ndarray:
        with np.errstate(over="ignore"):
            ids = bpe_kernel._encode(data, cbs, bpe_kernel._NO_CPS, starts, ends, False, *(*bpe._shared, no_store))
        out: np.ndarray = ids
        return out

    whole = engine.encode_ids  # type: ignore[attr-defined]
    want = whole(text).tolist()
    lib = peers(encoding)
    fns: dict[str, Callable[[], object]] = {
        "encode_ids": lambda: whole(text), "code points": lambda: code_points(text),
        "peek2": lambda: spans_of_code_points(cps, pattern),
        "utf8": lambda: bpe_kernel.utf8_of_code_points(cps), "merge": merge, "merge, cold memo": merge_cold,
        "merge, no store": merge_no_store}
    names = [n for n in lib if n.split()[0] in ("tiktoken", "toktok-rs", "quicktok-v1")]
    fns.update({n: functools.partial(lib[n], text) for n in names})
    same = {n: list(lib[n](text)) == want for n in names}  # type: ignore[call-overload]
    stages_exact = merge().tolist() == want and merge_no_store().tolist() == want
    t = _best(fns, repeat)
    n_bytes = len(text.encode())
    rows = []
    for step in ("code points", "peek2", "utf8", "merge", "merge, cold memo", "merge, no store"):
        case = _exact(f"stages {lang} {step} {t[step] / n_bytes * 1e9:.1f} ns/B", stages_exact)
        rows.append(BenchRow(SUITE, case, f"{fast} {step}", f"{fast} encode_ids", n_bytes, t[step], t["encode_ids"]))
    for name in names:
        case = _exact(f"stages {lang} whole {t['encode_ids'] / n_bytes * 1e9:.1f} ns/B", same[name])
        rows.append(BenchRow(SUITE, case, f"{fast} encode_ids", name, n_bytes, t["encode_ids"], t[name]))
    return rows


def english_varied(n_bytes: int, piece: int = 8_000, first_seed: int = 1) -> str:
    """About ``n_bytes`` of English-like prose drawn from a new corpus every ``piece`` bytes
    (seeds ``first_seed``, ``first_seed + 1``, ...): :func:`english` repeats one corpus's few
    hundred texts, so per-call caches of merged pieces see far fewer distinct pieces there than in
    real prose (measured for issue 29: 1,771 distinct pieces per MB)."""
    out: list[str] = []
    size = 0
    seed = first_seed
    while size < n_bytes:
        out.append(english(piece, seed=seed))
        size += len(out[-1]) + 1
        seed += 1
    return " ".join(out)[:n_bytes]


def code_varied(n_bytes: int, part: int = 0) -> str:
    """About ``n_bytes`` of Python source read from this interpreter's standard library files (its
    tests included, site-packages not), part ``part`` of them: the files in a fixed shuffled order, taken in turn into parts of at
    least ``n_bytes`` (so parts share no file), the part cut to ``n_bytes``. :func:`code` repeats four modules' source.
    ValueError when the library has too little source for part ``part`` (29 parts of 1 MB
    on CPython 3.11): a short or empty text would be timed as if it were the size asked for."""
    import random
    import sysconfig
    from pathlib import Path

    root = Path(sysconfig.get_paths()["stdlib"])
    files = sorted(p for p in root.rglob("*.py") if "site-packages" not in p.relative_to(root).parts)
    random.Random(29).shuffle(files)
    out: list[str] = []
    size = 0
    ahead = part  # parts still to skip before the one asked for
    for path in files:
        try:
            src = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if ahead == 0:
            out.append(src)
        size += len(src)
        if size >= n_bytes:  # this part is full: the next file starts the next one
            ahead -= 1
            size = 0
            if ahead < 0:
                break
    text = "".join(out)[:n_bytes]
    if len(text) < n_bytes:
        raise ValueError(f"code_varied: the standard library at {root} has no part {part} of {n_bytes} "
                         f"characters (it gave {len(text)}); ask for a lower part or a smaller size")
    return text


def fresh_round(fns: dict[str, Callable[[str], object]], text: str, round_: int,
                best: dict[str, float]) -> dict[str, list[int]]:
    """Each engine of ``fns`` once on ``text``, in an order rotated by ``round_`` (no engine always
    first or last); its time recorded in ``best`` (a minimum) except in round 0, the warm-up.
    Each call gets its own new copy of the text (:func:`~tokspec.app.bench.fresh_copy`: no engine
    is handed the UTF-8 another one made). Returns each engine's ids, for the caller's exactness
    check. Shared by the fresh-text rows here and ``tokspec.app.bench.parallel.peer_fresh_rows``."""
    import time

    names = list(fns)
    got: dict[str, list[int]] = {}
    for name in names[round_ % len(names):] + names[:round_ % len(names)]:
        document = fresh_copy(text)
        t0 = time.perf_counter()
        ids = fns[name](document)
        took = time.perf_counter() - t0
        got[name] = list(ids)  # type: ignore[call-overload]
        if round_:
            best[name] = min(best[name], took)
    return got


def _fresh_rows(lang: str, make: Callable[[int], str], rounds: int, encoding: str) -> list[BenchRow]:
    """``encode_ids`` and the peers on texts none of them has seen: round ``r`` makes a new text
    (``make(r)``), and each engine encodes it once, in an order rotated by round; a warm-up round
    first. Best of ``rounds``, like the other rows, but of first calls: what a stream of new
    documents costs, with whatever state an engine keeps across calls (``fast:``'s store of merged
    pieces, a peer's caches) warmed only by the earlier documents. Ids checked equal on every text."""
    from tokspec.app.bench.latency import one_per_library, peers

    fast = f"fast:{encoding}"
    lib = one_per_library(peers(encoding))  # each library once per text (one_per_library: why)
    fns: dict[str, Callable[[str], object]] = {f"{fast} encode_ids": load_engine(fast).encode_ids}  # type: ignore[attr-defined]
    fns.update({n: f for n, f in lib.items() if n.split()[0] in ("tiktoken", "toktok-rs", "quicktok-v1")})
    names = list(fns)
    best = {name: float("inf") for name in names}
    same = {name: True for name in names}
    n_bytes = 0
    for round_ in range(rounds + 1):
        text = make(round_)
        n_bytes = len(text.encode())
        got = fresh_round(fns, text, round_, best)
        for name in names:
            same[name] = same[name] and got[name] == got[names[0]]
    whole = names[0]
    case = f"stages {lang} fresh {best[whole] / n_bytes * 1e9:.1f} ns/B"
    return [BenchRow(SUITE, _exact(case, same[name]), whole, name, n_bytes, best[whole], best[name])
            for name in names[1:]]


def run(*, quick: bool) -> list[BenchRow]:
    size, repeat = (20_000, 2) if quick else (1_000_000, 5)
    texts = {"english": english(size), "english-varied": english_varied(size), "chinese-like": chinese_like(size),
             "code": code(size)}
    fresh: dict[str, Callable[[int], str]] = {
        "english-varied": lambda r: english_varied(size, first_seed=1000 + 200 * r),
        "chinese-like": lambda r: chinese_like(size, seed=1000 + r),
        "code-varied": lambda r: code_varied(size, part=r)}
    rows = []
    for encoding in ("cl100k_base", "o200k_base"):
        for lang, text in texts.items():
            rows += _stage_rows(lang, text, repeat, encoding)
        for lang, make in fresh.items():
            rows += _fresh_rows(lang, make, repeat, encoding)
    return rows
