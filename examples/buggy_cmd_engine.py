"""A deliberately buggy ``cmd:`` engine for the tutorial (docs/tutorial.md): do not use it for real.

It speaks tokspec's JSON Lines protocol (docs/protocol.md) and tokenizes with cl100k_base, but it
strips trailing whitespace from every text first, the habit of a program that used to read its
input with ``line.strip()``. So ``"a "`` encodes like ``"a"``: the final space is lost and the
token sequence stands for a different text. ``tokspec diff`` classifies it as "decoded text differs".

Run::

    tokspec diff tiktoken:cl100k_base "cmd:python3 examples/buggy_cmd_engine.py" --fuzz --time 10
"""

from __future__ import annotations

import json
import sys

from tokspec import load_engine


def main() -> None:
    engine = load_engine("tiktoken:cl100k_base")
    hello = {"tokspec": 1, "name": "buggy-cmd-engine", "version": "0.1", "kind": "tokenizer",
             "vocab_sha256": engine.info.vocab_sha256}
    print(json.dumps(hello), flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        text = request["text"].rstrip()  # BUG: trailing whitespace is part of the text
        enc = engine.encode(text)
        reply = {"id": request["id"], "ids": list(enc.ids or ()), "offsets": [list(o) for o in enc.offsets]}
        print(json.dumps(reply), flush=True)


if __name__ == "__main__":
    main()
