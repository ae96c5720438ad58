"""Provenance of ``pretok_regex.UNICODE17_NEW`` and ``UNICODE17_CHANGED`` (run by hand, prints them).

Needs ``unicodedata2==16.0.0`` (Unicode 16.0 tables) beside the ``regex`` module (Unicode 17.0):
a character is *new in 17.0* if ``regex`` says it is assigned (``\\P{Cn}``) and Unicode 16.0 says
``Cn``; a character *changed category* if both assign it and regex's ``\\p{<16.0 category>}`` does
not match it. tests/test_reference_pretok_regex.py re-derives both when unicodedata2 16.0 is present.
"""

from __future__ import annotations

import regex
import unicodedata2


def main() -> None:
    assert unicodedata2.unidata_version.startswith("16.0"), unicodedata2.unidata_version
    assigned = regex.compile(r"\P{Cn}")
    new: list[list[int]] = []
    changed: dict[int, str] = {}
    for cp in range(0x110000):
        if 0xD800 <= cp <= 0xDFFF or not assigned.match(chr(cp)):
            continue
        old = unicodedata2.category(chr(cp))
        if old == "Cn":
            if new and new[-1][1] == cp - 1:
                new[-1][1] = cp
            else:
                new.append([cp, cp])
        elif not regex.match(rf"\p{{{old}}}", chr(cp)):
            changed[cp] = old
    print("UNICODE17_NEW =", [(hex(a), hex(b)) for a, b in new])
    print("UNICODE17_CHANGED =", {hex(k): v for k, v in changed.items()})


if __name__ == "__main__":
    main()
