"""The pattern dictionary: text the pretokenizer patterns and normalizers treat specially.

One dictionary, used by the libFuzzer dictionaries of :mod:`tokspec.fuzz.clusterfuzzlite` and by
the search of ``tokspec diff --fuzz`` and the plugin's ``check_against``
(:mod:`tokspec.app.search`, the ``pattern dictionary + Unicode drift`` source). Entries:

- every whitespace kind the patterns' ``\\s`` or the normalizers may disagree on: ASCII spaces and
  line ends, U+0085, U+00A0, U+1680, U+180E, U+2000..U+200B, U+2028, U+2029, U+202F, U+205F,
  U+3000, U+FEFF, U+001C..U+001F;
- the English contractions of the cl100k/o200k patterns in every case (``'s 'S 'll 'LL 'Ll ...``,
  matched case-insensitively by tiktoken's ``(?i:...)``: a case-sensitive rewrite misses the upper
  case forms) and the typographic apostrophe;
- the trigger characters of each alternative: digits (ASCII and others, runs past 3), punctuation
  runs with line ends, combining marks and joiners, letters of several scripts and cases, emoji,
  SentencePiece's ``▁`` and WordPiece's ``##``, a special-token surface.

Out of scope: token surfaces of a particular vocabulary (the callers add those).
"""

from __future__ import annotations

__all__ = ["SPECIALS", "WHITESPACE", "CONTRACTIONS", "contraction_cases"]

#: Whitespace kinds (module docstring).
WHITESPACE: tuple[str, ...] = (
    " ", "  ", "\n", "\n\n", "\r\n", "\r", "\t", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x1f",
    "\u0085", "\u00a0", "\u1680", "\u180e", *(chr(c) for c in range(0x2000, 0x200C)), "\u2028", "\u2029",
    "\u202f", "\u205f", "\u3000", "\ufeff",
)

CONTRACTIONS: tuple[str, ...] = ("s", "t", "re", "ve", "m", "ll", "d")


def contraction_cases() -> tuple[str, ...]:
    """``'s``, ``'S``, ``'ll``, ``'Ll``, ``'lL``, ``'LL``, ...: every contraction in every case."""
    out: list[str] = []
    for c in CONTRACTIONS:
        forms = [""]
        for ch in c:
            forms = [f + x for f in forms for x in (ch, ch.upper())]
        out += ["'" + f for f in forms]
    return tuple(out)


#: Text the pretokenizers and normalizers of tokspec's engines treat specially.
SPECIALS: tuple[str, ...] = (
    *WHITESPACE, *contraction_cases(), "’s", "’S",
    "0", "1", "12", "123", "1234", "12345", "٣", "٣٤٥٦", "१२", "½", "Ⅻ",
    "!", "?", ".", ",", ";", ":", "-", "_", "(", ")", "[", "]", "{", "}", "\"", "'", "`", "...", "--", ".\n",
    ";\r\n", "/", "=",
    "\u0301", "\u0308\u0323", "\u200d", "\u200b", "\u200c", "é", "ß", "İ", "ǅ", "ʰ", "中文", "日本", "한", "ا",
    "🙂", "👩‍💻", "▁", "##", "<|endoftext|>",
)
