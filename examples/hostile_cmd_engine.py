"""A ``cmd:`` engine whose every output is hostile text (issue 11: escaping, faults, floods).

Tokenization: one token per character, id = code point (stdlib only, starts fast). But everything
it says is built to break a careless tool: its handshake name holds an ESC sequence, a bidi
override (U+202E) and a lone surrogate; its ``pieces`` are lone surrogates and control characters;
and on request it misbehaves:

- text containing ``D``: the ids are off by one (a real disagreement, so windows with pieces show);
- ``E``: an ``"error"`` reply whose message clears the screen and holds a lone surrogate;
- ``C``: writes terminal escapes and invalid UTF-8 to stderr, then exits with status 3;
- ``F``: floods its stdout (64 MiB without a newline) instead of replying.

tokspec must print all of it escaped, write it into records exactly (as JSON escapes), never crash
with ``UnicodeEncodeError``, and name the flood as a flood. Run::

    tokspec diff "cmd:python3 examples/hostile_cmd_engine.py" "cmd:python3 examples/hostile_cmd_engine.py --calm" \\
        --inputs my_inputs.txt

(``--calm``: the same engine without the ``D`` bug, so the two disagree only where it matters.)
"""

from __future__ import annotations

import json
import os
import sys

HOSTILE = "\x1b[31mred\x1b[0m \u202eevil\u202c \ud800 \x9b2J"


def main() -> None:
    calm = "--calm" in sys.argv
    # ensure_ascii=True writes the lone surrogate as the JSON escape \ud800 (valid JSON text).
    print(json.dumps({"tokspec": 1, "name": "hostile " + HOSTILE, "version": HOSTILE}), flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        text, rid = request["text"], request["id"]
        if "E" in text:
            print(json.dumps({"id": rid, "error": "\x1b[2J\x1b[H screen cleared " + HOSTILE}), flush=True)
            continue
        if "C" in text:
            os.write(2, b"\x1b]0;pwned\x07 \xff\xfe " + HOSTILE.encode("utf-8", "surrogatepass") + b"\n")
            sys.exit(3)
        if "F" in text:
            block = b"x" * (1 << 20)
            for _ in range(64):
                sys.stdout.buffer.write(block)
            sys.stdout.flush()
            continue
        shift = 1 if ("D" in text and not calm) else 0
        reply = {"id": rid, "ids": [ord(c) + shift for c in text],
                 "offsets": [[i, i + 1] for i in range(len(text))],
                 "pieces": ["\ud800\x1b[1m" + ("\u202e" if i % 2 else "\x85") for i in range(len(text))]}
        print(json.dumps(reply), flush=True)


if __name__ == "__main__":
    main()
