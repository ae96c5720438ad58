"""Re-record corpora/counting/*.json: the counting witnesses, with tiktoken's and the references' outputs.

Found by the searches kept here (:func:`search_loops`, :func:`search_monotone`), named in each
file's "found_by". Run: ``python corpora/counting/record_witnesses.py``.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import tiktoken

from tokspec import load_engine
from tokspec.spec.counting import _pretokenized_tokens, naive_split, split_point
from tokspec.formats.vocab import load_named_tiktoken

HERE = Path(__file__).resolve().parent


def _tiktoken(vocab: str) -> tiktoken.Encoding:
    """tiktoken's own Encoding, as ``tiktoken:VOCAB`` builds it offline (verified ranks)."""
    return load_engine(f"tiktoken:{vocab}").library_encoding  # type: ignore[attr-defined,no-any-return]


def search_monotone(vocab: str, tries: int = 20000) -> tuple[str, str]:
    """Shortest random lowercase text whose count drops when one letter is appended."""
    enc, rng, best = _tiktoken(vocab), random.Random(0), None
    for _ in range(tries):
        t = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz ") for _ in range(rng.randint(1, 8)))
        for ch in "abcdefghijklmnopqrstuvwxyz":
            if len(enc.encode_ordinary(t + ch)) < len(enc.encode_ordinary(t)) and (
                    best is None or len(t) < len(best[0])):
                best = (t, ch)
    assert best is not None
    return best


def search_loops(vocab: str) -> list[str]:
    """Characters c such that c*k encodes as a loop of tokens 'tail of c + head of c' (every
    token end inside a character): from the tokens that start and end inside a character."""
    ranks, enc, out = load_named_tiktoken(vocab).ranks, _tiktoken(vocab), []
    for tok in ranks:
        for cut in range(1, len(tok)):
            try:
                ch = (tok[cut:] + tok[:cut]).decode("utf-8")
            except UnicodeDecodeError:
                continue
            if len(ch) == 1 and enc.decode_tokens_bytes(enc.encode_ordinary(ch * 8))[1] == tok:
                out.append(ch)
    return sorted(set(out))


def record(vocab: str, monotone: tuple[str, str], loop_char: str) -> None:
    enc = _tiktoken(vocab)
    text, ch = monotone
    (HERE / f"non-monotone-{vocab}.json").write_text(json.dumps({
        "id": f"non-monotone-{vocab}", "claim": "counting.monotone", "vocab": vocab,
        "text": text, "appended": ch,
        "outputs": {"tiktoken encode_ordinary(text)": enc.encode_ordinary(text),
                    "tiktoken encode_ordinary(text + appended)": enc.encode_ordinary(text + ch),
                    "reference tokens(text)": [t.hex() for t in _pretokenized_tokens(vocab, text)],
                    "reference tokens(text + appended)": [t.hex() for t in _pretokenized_tokens(vocab, text + ch)]},
        "found_by": "search_monotone: random lowercase texts of 1-8 characters, shortest kept",
    }, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    text = loop_char * 6
    tokens = enc.decode_tokens_bytes(enc.encode_ordinary(text))
    (HERE / f"collapse-{vocab}.json").write_text(json.dumps({
        "id": f"collapse-{vocab}", "claim": "counting.drop_to_boundary", "vocab": vocab,
        "text": text, "n": 5,
        "outputs": {"tiktoken encode_ordinary(text)": enc.encode_ordinary(text),
                    "tiktoken token bytes": [t.hex() for t in tokens],
                    "naive split (characters kept)": naive_split(tokens, text, 5),
                    "split point after 5 tokens (characters)": split_point(
                        lambda s: len(enc.encode_ordinary(s)), text, 5)},
        "loop_characters": search_loops(vocab),
        "found_by": "search_loops: every token that rotates into one character, checked on c*8",
    }, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    record("cl100k_base", search_monotone("cl100k_base"), "\u1792")
    record("o200k_base", search_monotone("o200k_base"), "\uff41")
