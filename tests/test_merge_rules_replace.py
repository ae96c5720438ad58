"""``merge_rules``: a one-character ``Replace`` normalizer admits a cut at a space exactly when it
leaves a space a space (lemma N of ``tokspec.spec.merge``), checked by applying the replacement.

The oracle runs the normalizer's own definition on the text " " (``regex.sub`` for a Regex
pattern, ``str.replace`` for a String pattern); the rule reader must accept the normalizer iff
the result is still " ". Regex metacharacters in a String pattern are literal characters.
"""

from __future__ import annotations

import regex

from tokspec.fast.merge_rules import _normalizer_ok

PATTERNS = [{"Regex": r"[ ]"}, {"Regex": r"[\s]"}, {"Regex": r"\p{Zs}"}, {"Regex": r"\P{L}"},
            {"Regex": r"[a-z]"}, {"Regex": r"\p{L}"}, {"Regex": r"[^ ]"}, {"String": " "},
            {"String": "."}, {"String": "a"}, {"String": "\t"}]


def applied_to_a_space(pattern: dict[str, str], content: str) -> str:
    if "Regex" in pattern:
        return regex.sub(pattern["Regex"], content, " ")
    return " ".replace(pattern["String"], content)


def test_one_character_replace_is_accepted_iff_a_space_stays_a_space() -> None:
    for pattern in PATTERNS:
        for content in (" ", "_", "\u2581", ""):
            normalizer = {"type": "Replace", "pattern": pattern, "content": content}
            keeps_space = applied_to_a_space(pattern, content) == " "
            why = _normalizer_ok(normalizer)
            assert (why is None) == keeps_space, (pattern, content, why)
            if not keeps_space:
                assert why == "Replace rewrites the space"
            # the same inside a Sequence
            assert _normalizer_ok({"type": "Sequence", "normalizers": [{"type": "NFC"}, normalizer]}) == why
