"""Provenance of ``corpora/reference-bpe/findings/*.json`` and ``vocabs/*`` (run by hand to rebuild).

    python corpora/reference-bpe/make_findings.py

Each finding is a ``tokspec.diff`` counterexample record (both engines' outputs, first divergence,
classification) with four extra keys: ``finding`` (the id), ``engine_names`` (names that
``tokspec.load_engine`` resolves; ``{dir}`` stands for this folder), ``reproduced_by`` (the
reference engine that reproduces each side, when one does) and ``explanation``. The texts are
minimized with ``tokspec.minimize.minimize_text`` from the first disagreement found on
``tokspec.corpus.build_corpus()`` or on the inputs written below. Tests replay every record:
``tests/test_reference_bpe_findings.py``.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import tokspec
from tokspec.corpus import build_corpus
from tokspec.diff import compare, make_record, write_record
from tokspec.minimize import minimize_text
from tokspec.reference.bpe_merges_from_ranks import tokenizer_json_from_ranks
from tokspec.reference.pretok_regex import PATTERNS

HERE = Path(__file__).resolve().parent
FINDINGS = HERE / "findings"
VOCABS = HERE / "vocabs"

#: tiny vocabularies (multi-byte tokens in rank order after the 256 single bytes).
TINY = {
    "unreachable-abc": [b"abc", b"ab"],
    "unreachable-cbcb": [b"bc", b"cb", b"bb", b"cbcb", b"bcb"],
}


def _names(names: list[str]) -> list[str]:
    return [n.replace("{dir}", str(HERE)) for n in names]


def _write_tiny(stem: str, tokens: list[bytes]) -> None:
    ranks = {bytes([b]): b for b in range(256)}
    ranks.update({tok: 256 + i for i, tok in enumerate(tokens)})
    VOCABS.mkdir(exist_ok=True)
    lines = [f"{base64.b64encode(t).decode()} {r}" for t, r in sorted(ranks.items(), key=lambda kv: kv[1])]
    (VOCABS / f"{stem}.tiktoken").write_text("\n".join(lines) + "\n")
    data = tokenizer_json_from_ranks(ranks, PATTERNS["cl100k_base"], ignore_merges=True)
    (VOCABS / f"{stem}.json").write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n")


def _bpe_json(vocab: list[str], merges: list[list[str]], **model: object) -> dict[str, object]:
    return {"version": "1.0", "added_tokens": [], "normalizer": None, "pre_tokenizer": None,
            "post_processor": None, "decoder": None,
            "model": {"type": "BPE", "vocab": {t: i for i, t in enumerate(vocab)}, "merges": merges,
                      **model}}


def _write_hf_tiny() -> None:
    VOCABS.mkdir(exist_ok=True)
    dropped = _bpe_json(["a", "b", "c", "d", "ab", "abc"], [["a", "b"], ["ab", "c"]])
    fallback = _bpe_json(["a", "##b", *[f"<0x{b:02X}>" for b in range(256)]], [],
                         continuing_subword_prefix="##", byte_fallback=True)
    prefixed = _bpe_json(["\u0120", "x", "\u0109", "\u0120x"], [["\u0120", "x"]])
    prefixed["pre_tokenizer"] = {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False,
                                 "use_regex": True}
    partial = _bpe_json(["<unk>", "a", "<0xC3>", "<0xA9>"], [], unk_token="<unk>", byte_fallback=True)
    fused = _bpe_json(["[UNK]", "<0x61>"], [], unk_token="[UNK]", byte_fallback=True, fuse_unk=True)
    for stem, data in (("hf-dropped-char", dropped), ("hf-byte-fallback-prefix", fallback),
                       ("hf-unk-then-byte-fallback", partial), ("hf-bytelevel-prefix-space", prefixed),
                       ("hf-fuse-unk-across-byte-fallback", fused)):
        (VOCABS / f"{stem}.json").write_text(json.dumps(data, indent=1) + "\n")


def _finding(fid: str, names: list[str], candidates: list[str], reproduced_by: dict[str, str | None],
             explanation: str, counts_differ: bool = False) -> None:
    """Minimize the first disagreeing candidate; with ``counts_differ``, keep only texts on which the
    two engines give different numbers of tokens (a narrower class than any disagreement)."""
    a, b = (tokspec.load_engine(n) for n in _names(names))

    def keeps(t: str) -> bool:
        c = compare(a, b, t)
        return not c.agree and (not counts_differ or len(a.encode(t).offsets) != len(b.encode(t).offsets))

    text = next(t for t in candidates if keeps(t))
    small = minimize_text(text, keeps, max_tests=3000)
    record = make_record(a, b, compare(a, b, small))
    record.update({"finding": fid, "engine_names": names, "reproduced_by": reproduced_by,
                   "explanation": explanation})
    write_record(record, FINDINGS / f"{fid}.json")
    print(fid, repr(small), record["classification"])


def main() -> None:
    corpus = build_corpus()
    new17 = ["\u0c5c's", "a\u0c5c", "\U000323b0's"]
    _finding("hf-onig-interval-plus", ["tiktoken:cl100k_base", "hf-converted:cl100k_base"], corpus,
             {"a": "reference:cl100k_base", "b": "reference:hf-converted-cl100k_base"},
             "HF tokenizers (Oniguruma) reads \\p{N}{1,3}+ in the cl100k pattern as (?:\\p{N}{1,3})+, "
             "so a digit run is one pretoken; tiktoken reads {1,3}+ as possessive (runs of <= 3).")
    _finding("hf-onig-interval-plus-pretok", ["pretok:cl100k_base", "pretok:hf-split-cl100k_base"],
             corpus, {"a": "pretok:cl100k_base", "b": None},
             "The same at the pretokenizer level: HF's Split keeps a digit run whole.")
    _finding("unicode-17-letters", ["tiktoken:o200k_base", "reference:o200k_base-u17"], new17,
             {"a": "reference:o200k_base", "b": "reference:o200k_base-u17"},
             "The regex module has Unicode 17.0 tables; tiktoken (and HF) have 16.0. A letter new in "
             "17.0 (U+0C5C) is \\p{L} for regex only, so o200k's word rule takes the contraction.")
    _finding("unicode-17-letters-pretok", ["pretok:hf-split-o200k_base", "pretok:o200k_base-u17"], new17,
             {"a": "pretok:o200k_base", "b": "pretok:o200k_base-u17"},
             "The same at the pretokenizer level, against HF's Split pre-tokenizer.")
    _finding("pretok-cl100k-vs-llama3", ["pretok:cl100k_base", "pretok:llama3"], corpus,
             {"a": "pretok:cl100k_base", "b": "pretok:llama3"},
             "The seeds call cl100k, Llama 3 and Qwen 2.5 one 'cl100k-like' pretokenizer. tiktoken's "
             "current cl100k pattern (possessive, with \\s++$ and \\s*[\\r\\n]) and Llama 3's (the "
             "older form, \\s*[\\r\\n]+) split whitespace that ends the text differently; with "
             "cl100k ranks the BPE ids still coincided on every whitespace tail of up to 6 characters "
             "we tried (no cl100k token is a newline followed by other white space).")
    _finding("pretok-llama3-vs-qwen2", ["pretok:llama3", "pretok:qwen2"], corpus,
             {"a": "pretok:llama3", "b": "pretok:qwen2"},
             "Qwen 2's pattern takes digits one at a time (\\p{N}) where Llama 3 and cl100k take up "
             "to three (\\p{N}{1,3}): not the same pretokenizer.")
    _write_hf_tiny()
    _finding("hf-dropped-char-offsets", ["hf:{dir}/vocabs/hf-dropped-char.json",
                                         "reference:{dir}/vocabs/hf-dropped-char.json"],
             ["ab cd", "x ab"], {"a": None, "b": "reference:{dir}/vocabs/hf-dropped-char.json"},
             "HF BPE without unk_token silently drops a character missing from the vocabulary, then "
             "merges across the gap (same ids in both) and computes the offsets of later tokens in the "
             "pretoken from the kept characters only, so they shift left and stop covering their "
             "text. The reference keeps each token's true character span.")
    _finding("hf-byte-fallback-prefix", ["hf:{dir}/vocabs/hf-byte-fallback-prefix.json",
                                         "reference:{dir}/vocabs/hf-byte-fallback-prefix.json"],
             ["a\u00e9", "ab\u00e9"], {"a": None, "b": "reference:{dir}/vocabs/hf-byte-fallback-prefix.json"},
             "HF byte fallback encodes the symbol *with* its continuing_subword_prefix: '##é' becomes "
             "<0x23> <0x23> <0xC3> <0xA9> (the reference reproduces these ids), and HF counts each "
             "byte token as one byte of the word, so offsets run past the end of the text: the hf: "
             "adapter rejects the output (engine fault). The reference gives every byte token the "
             "span of its character.")
    _finding("hf-unk-then-byte-fallback", ["hf:{dir}/vocabs/hf-unk-then-byte-fallback.json",
                                           "reference:{dir}/vocabs/hf-unk-then-byte-fallback.json"],
             ["\u00fc\u00e9", "a\u00fc\u00e9a"],
             {"a": None, "b": "reference:{dir}/vocabs/hf-unk-then-byte-fallback.json"},
             "With byte_fallback and an incomplete set of <0xXX> tokens, a character that falls to "
             "<unk> followed by one that falls back to bytes comes out in the wrong order: HF holds "
             "the pending <unk> back while it appends the byte tokens, so 'üé' gives <0xC3> <0xA9> "
             "<unk>, and offsets are then laid out in that order (the bytes of é get ü's span). "
             "The reference keeps text order: <unk> <0xC3> <0xA9>.")
    _finding("hf-fuse-unk-across-byte-fallback", ["hf:{dir}/vocabs/hf-fuse-unk-across-byte-fallback.json",
                                                  "reference:{dir}/vocabs/hf-fuse-unk-across-byte-fallback.json"],
             ["\u00e9a\u00e9", "x\u00e9a\u00e9x"],
             {"a": None, "b": "reference:{dir}/vocabs/hf-fuse-unk-across-byte-fallback.json"},
             "The same held-back <unk> with fuse_unk=true changes the ids, not only their order: in "
             "' a ' (space unknown, 'a' only as <0x61>) HF appends <0x61> while the first [UNK] is "
             "pending, then fuses the second [UNK] into it across the byte token, and lays offsets out "
             "in that order: <0x61> (0,1), [UNK] (1,3), two tokens where the text has three pieces and "
             "<0x61> on the span of a space. The reference fuses only adjacent unknowns: "
             "[UNK] (0,1), <0x61> (1,2), [UNK] (2,3).", counts_differ=True)
    for stem, tokens in TINY.items():
        _write_tiny(stem, tokens)
        _finding(f"merges-{stem}", [f"tiktoken:{{dir}}/vocabs/{stem}.tiktoken,pattern=cl100k_base", f"hf:{{dir}}/vocabs/{stem}.json"],
                 ["abcb", "acbcbbc", "abcabc", "cbcbcb"],
                 {"a": f"reference:{{dir}}/vocabs/{stem}.tiktoken,pattern=cl100k_base", "b": f"reference:{{dir}}/vocabs/{stem}.json"},
                 f"Token {tokens[-2 if stem.endswith('cbcb') else 0]!r} is unreachable: encoding its bytes "
                 "with lower ranks never builds it, so merges_from_ranks lists no merge for it. tiktoken "
                 "merges any adjacent pair whose concatenation is a token; HF only listed pairs. "
                 "ignore_merges=true only rescues pretokens equal to the token.")


if __name__ == "__main__":
    main()
