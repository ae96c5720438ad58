"""Provenance: how the witnesses of the falsified merge claims in tokspec.spec.merge were found.

Random search (seeded) over short texts built from repetition-prone atoms, then ddmin
(tokspec.minimize) on each text argument while the claim still fails. Prints one JSON line per
(claim, engine) with the minimized keyword arguments; those are pasted into spec/merge.py's CLAIMS,
whose test replays them (the check recomputes everything; nothing stored is trusted).

Run: python corpora/merge/search_witnesses.py [SECONDS_PER_PAIR]
"""

from __future__ import annotations

import json
import random
import sys
import time

from tokspec import load_engine
from tokspec.minimize import minimize_text
from tokspec.spec import merge as M

ATOMS = ["a", "b", "ab", " ", "  ", "\n", "1", "12", "the", " the", "'s", ".", ",", "é", "中",
         "\t", "aaaa", "    ", "x" * 30, "un", "aff", "able", "ing", "z"]


def text(rng: random.Random, n_max: int = 200) -> str:
    base = "".join(rng.choice(ATOMS) for _ in range(rng.randint(1, 4)))
    parts = [base if rng.random() < 0.5 else rng.choice(ATOMS) * rng.randint(1, 30)
             for _ in range(rng.randint(1, 12))]
    return "".join(parts)[:n_max]


def shrink(kwargs: dict, keys: list[str], check) -> dict:
    for key in keys:
        def fails(v: str, key: str = key) -> bool:
            return not check(**{**kwargs, key: v})
        kwargs[key] = minimize_text(kwargs[key], fails, seconds=20)
    return kwargs


def search(claim: str, eng_name: str, seconds: float, rng: random.Random) -> dict | None:
    eng = load_engine(eng_name)
    t_max = M.max_token_chars(eng)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        t = text(rng)
        if claim == "4.1":
            kw = {"text": t, "chunk_len": rng.randint(2, 40), "overlap": rng.randint(1, 40)}
            check, keys = M.lopt_theorem_4_1, ["text"]
        elif claim == "7.1":
            kw = {"s1": text(rng, 120), "so": t[: rng.randint(1, 3 * t_max)] or "a", "s2": text(rng, 120)}
            check, keys = M.lopt_lemma_7_1, ["s2", "s1", "so"]
        elif claim == "blog":
            w = t_max + rng.randint(0, 8)
            t = t * (1 + (3 * w) // max(1, len(t)))
            kw = {"text": t, "mid": rng.randint(1, max(1, len(t) - 1)), "overlap": w}
            check, keys = M.blog_overlap_theorem, []
        else:
            w = t_max + rng.randint(0, 8)
            t = t * (1 + (3 * w) // max(1, len(t)))
            kw = {"text": t, "chunk_len": rng.randint(w // 2 + 1, 2 * w), "overlap": w}
            check, keys = M.parallel_tokenizer_claim, ["text"]
        if not check(eng, **kw):
            def chk(**k): return check(eng, **k)
            return shrink(kw, keys, chk)
    return None


def main() -> None:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 60
    rng = random.Random(2024)
    for claim in ("4.1", "7.1", "blog", "pt"):
        for eng in ("tiktoken:cl100k_base", "hf:bert-base-uncased", "hf:mon-unigram"):
            found = search(claim, eng, seconds, rng)
            print(json.dumps({"claim": claim, "engine": eng, "witness": found}, ensure_ascii=False), flush=True)


if __name__ == "__main__":
    main()
