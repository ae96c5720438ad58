"""``tokspec export NAME --format tiktoken|tokenizer.json|vocab-merges --out PATH``: a vocabulary
tokspec ships, in the format a library loads.

===================  =============================================================================
format               what is written
===================  =============================================================================
``tiktoken``         ``PATH``: one ``BASE64(token) RANK`` line per token (tiktoken's ``.tiktoken``)
``tokenizer.json``   ``PATH``: HF ByteLevel BPE with the merges recovered from the ranks and the
                     encoding's split pattern (:mod:`tokspec.reference.bpe_merges_from_ranks`)
``vocab-merges``     folder ``PATH``: ``vocab.json`` + ``merges.txt`` (GPT-2 style, the same model);
                     these two files carry no split pattern: pair them with the pattern yourself
===================  =============================================================================

NAME is a byte-level vocabulary with a known pattern: ``cl100k_base``, ``o200k_base``. Each export is
checked by tests that load it into the production library (tiktoken, HF ``tokenizers``) and compare
ids with the original on a corpus. Files are written atomically. Out of scope: WordPiece/Unigram
vocabularies (their tokenizer.json is already what tokspec ships).
"""

from __future__ import annotations

import argparse
import base64
import json
import sys
from pathlib import Path

from tokspec._atomic import write_atomic
from tokspec._escape import escape
from tokspec.errors import TokspecError

__all__ = ["add_arguments", "run", "NAMES", "FORMATS", "export"]

NAMES = ("cl100k_base", "o200k_base")
FORMATS = ("tiktoken", "tokenizer.json", "vocab-merges")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = ("Write a vocabulary tokspec ships in the format a library loads (tiktoken's "
                          ".tiktoken, HF tokenizer.json, or vocab.json + merges.txt).")
    parser.add_argument("name", metavar="NAME", choices=NAMES, help=f"vocabulary: {', '.join(NAMES)}")
    parser.add_argument("--format", required=True, choices=FORMATS,
                        help="tiktoken: a .tiktoken file; tokenizer.json: HF ByteLevel BPE with merges and "
                             "the split pattern; vocab-merges: a folder with vocab.json and merges.txt")
    parser.add_argument("--out", metavar="PATH", required=True,
                        help="file to write (a folder for vocab-merges)")


def export(name: str, fmt: str, out: str | Path) -> list[Path]:
    """Write vocabulary ``name`` as ``fmt`` to ``out`` (module docstring); return the paths written."""
    from tokspec.engines.production import _TIKTOKEN_FILES
    from tokspec.reference.bpe_merges_from_ranks import converted_json_path
    from tokspec.formats.vocab import load_named_tiktoken

    if name not in NAMES or fmt not in FORMATS:
        raise TokspecError(f"export: name={name!r} must be one of {NAMES} and format={fmt!r} one of {FORMATS}")
    vocab = load_named_tiktoken(_TIKTOKEN_FILES[name])
    ordered = sorted(vocab.ranks.items(), key=lambda kv: kv[1])
    if fmt == "tiktoken":
        lines = "".join(f"{base64.b64encode(tok).decode('ascii')} {rank}\n" for tok, rank in ordered)
        return [write_atomic(out, lines)]
    data = json.loads(converted_json_path(vocab.ranks, vocab.sha256, name).read_text(encoding="utf-8"))
    if fmt == "tokenizer.json":
        return [write_atomic(out, json.dumps(data, ensure_ascii=False))]
    folder = Path(out)
    merges = "".join(f"{a} {b}\n" for a, b in data["model"]["merges"])
    return [write_atomic(folder / "vocab.json", json.dumps(data["model"]["vocab"], ensure_ascii=False)),
            write_atomic(folder / "merges.txt", "#version: 0.2\n" + merges)]


def run(args: argparse.Namespace) -> int:
    paths = export(args.name, args.format, args.out)
    print(f"wrote {args.name} as {args.format}: {', '.join(escape(str(p)) for p in paths)}", file=sys.stderr)
    return 0
