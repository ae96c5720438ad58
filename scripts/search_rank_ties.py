"""Search for the one case fast/hf_bpe_ranks.py does not prove: ranks vs an HF merge list on ties.

Under rules R1-R4 of ``tokspec.fast.hf_bpe_ranks`` the backtracking encoder (rank semantics) and
HF's BPE (merge-list semantics) may merge the same pairs in the same order, except when two
*different* pairs producing the *same* token are both mergeable: HF takes the one listed first, rank
semantics the leftmost. This script draws small vocabularies over two or three letters (tokens of
2-5 letters, ids shuffled), writes each as a converter would (every two-token split a merge, by
produced id), and compares ``fast:`` with HF ``tokenizers`` on random words over the same letters,
where such ties are frequent. A difference is printed with its vocabulary and word.

    TOKSPEC_CACHE=/tmp/ties python scripts/search_rank_ties.py SEED VOCABULARIES

Each vocabulary's compiled tables land in ``$TOKSPEC_CACHE`` (use a throwaway folder).
Run for issue 27 (seeds 1 and 2; 300 + 3,000 vocabularies, 60 words each): 2,461 vocabularies
built (839 refused at build by the backtracking encoder's own checks), 0 differences.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from _hf_converted import converted_json  # noqa: E402 - the tests' converter, one copy

from tokspec.engines._hf import HfEngine
from tokspec.errors import TokspecError
from tokspec.fast.hf_bpe_json import LLAMA3_SPLIT, FastHfBpeEncoder
from tokspec.formats.vocab import TokenizerJson


def converted(ranks: dict[bytes, int]) -> dict[str, object]:
    """A tokenizer.json for ``ranks`` with every two-token split of a token as a merge, HF's own merge
    order (``ignore_merges`` off), no decoder (tests/_hf_converted.py)."""
    return converted_json(ranks, LLAMA3_SPLIT, ignore_merges=False, decoder=False)


def main(seed: int, count: int) -> int:
    rng = random.Random(seed)
    built = refused = found = 0
    for _ in range(count):
        letters = "abc"[:rng.choice([2, 3])]
        extra: set[bytes] = set()
        while len(extra) < rng.randint(3, 12):
            extra.add("".join(rng.choice(letters) for _ in range(rng.randint(2, 5))).encode())
        order = list(extra)
        rng.shuffle(order)
        ranks = {bytes([b]): b for b in range(256)} | {t: 256 + k for k, t in enumerate(order)}
        tj = TokenizerJson("t.json", f"{rng.getrandbits(256):064x}", converted(ranks))  # type: ignore[arg-type]
        try:
            fast = FastHfBpeEncoder(tj, "fast:t")
        except TokspecError:
            refused += 1
            continue
        built += 1
        hf = HfEngine("hf:t", tj)
        for _ in range(60):
            word = "".join(rng.choice(letters) for _ in range(rng.randint(1, 12)))
            if fast.encode(word) != hf.encode(word):
                found += 1
                print("DIFF", [t.decode() for t in order], repr(word), fast.encode(word).ids, hf.encode(word).ids)
                break
    print(f"built {built}, refused {refused}, differences {found}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]), int(sys.argv[2])))
