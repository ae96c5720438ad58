"""A ``cmd:`` engine that crashes on some inputs and hangs on others (docs/tutorial.md).

Tokenization itself is cl100k_base and correct. But the program "stores text as UCS-2", so it
dies (exit status 3, a message on stderr) on any character outside the Basic Multilingual Plane,
such as most emoji; and its "tab expansion" loops forever on a tab. ``tokspec diff`` reports both as
engine faults with the input that caused them, restarts the program, and finishes the run.

Run (a short per-request timeout keeps hangs cheap)::

    tokspec diff tiktoken:cl100k_base "cmd:[timeout=2] python3 examples/crashy_cmd_engine.py" \\
        --fuzz --time 10
"""

from __future__ import annotations

import json
import sys
import time

from tokspec import load_engine


def main() -> None:
    engine = load_engine("tiktoken:cl100k_base")
    print(json.dumps({"tokspec": 1, "name": "crashy-cmd-engine", "version": "0.1"}), flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        text = request["text"]
        if any(ord(ch) > 0xFFFF for ch in text):  # BUG: crash outside the BMP
            print("fatal: character outside UCS-2", file=sys.stderr, flush=True)
            sys.exit(3)
        while "\t" in text:  # BUG: never makes progress
            time.sleep(0.05)
        enc = engine.encode(text)
        reply = {"id": request["id"], "ids": list(enc.ids or ()), "offsets": [list(o) for o in enc.offsets]}
        print(json.dumps(reply), flush=True)


if __name__ == "__main__":
    main()
