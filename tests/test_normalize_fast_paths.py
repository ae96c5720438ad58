"""The identity fast paths of ``tokspec.formats.normalize.replace`` and of the HF Metaspace pretokenizer
(``tokspec.formats.hf_pipeline``) give exactly what their edit lists give (text, HF spans, contract origins),
on texts where they apply and where they must not."""

from __future__ import annotations

import regex
from hypothesis import example, given
from hypothesis import strategies as st

from tokspec.formats import normalize as nz
from tokspec.formats.hf_pipeline import _metaspace, _split_before
from tokspec.formats.normalize import JOIN, Aligned

ALPHABET = st.sampled_from(list("ab \u00a0\u3000\u200b\u00ad\u2581") + ["e\u0301", "\u1100"])
TEXTS = st.lists(ALPHABET, max_size=12).map("".join)


def by_edits(a: Aligned, pattern: regex.Pattern[str], content: str) -> Aligned:
    """HF Replace as its edit list (the definition in ``replace``'s docstring), no fast path."""
    edits: list[nz.Edit] = []
    pos = 0
    for m in pattern.finditer(a.text):
        s, e = m.span()
        if s == e:
            continue
        edits += [(c, 0) for c in a.text[pos:s]] + [(JOIN, 0)] * (e - s - 1) + [(content[:1], 0)]
        edits += [(c, 1) for c in content[1:]]
        pos = e
    return nz.apply_edits(a, edits + [(c, 0) for c in a.text[pos:]])


@given(TEXTS, st.sampled_from([(r"\p{Zs}", " "), (r"[\u00AD\u200B]", ""), (" ", " "), (" +", " "),
                               (r"\p{Zs}", "  "), ("a", "a"), ("ab", "ab"), ("x?", "-")]), st.integers(0, 3))
@example("a b", (" ", " "), 0)       # every match already equals the content: the fast path
@example("a\u00a0b", (r"\p{Zs}", " "), 0)  # one match differs: the edit path
@example("ab ab", ("ab", "ab"), 0)   # two-character matches equal to content still move spans
def test_replace_equals_its_edit_list(text: str, rule: tuple[str, str], base: int) -> None:
    pattern, content = regex.compile(rule[0]), rule[1]
    a = Aligned.of(text, base)
    assert nz.replace(a, pattern, content) == by_edits(a, pattern, content)


def test_replace_fast_path_returns_the_input_itself() -> None:
    a = Aligned.of("a b  c")
    assert nz.replace(a, regex.compile(r"\p{Zs}"), " ") is a
    assert nz.replace(a, regex.compile(r"[\u200B]"), "") is a
    assert nz.replace(Aligned.of("ab"), regex.compile("ab"), "ab") != Aligned.of("ab")  # spans move


@given(TEXTS, st.sampled_from(["always", "first", "never"]), st.booleans())
def test_metaspace_equals_its_edit_list(text: str, scheme: str, split: bool) -> None:
    """Metaspace's one-for-one substitution (no edit list) against the edit-list definition:
    ' ' -> U+2581 by edits, the prepend of the scheme, then a cut before each U+2581."""
    run = _metaspace({"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": scheme, "split": split})
    for a in (Aligned.of(text), Aligned.of(text, 5)):
        edited = nz.apply_edits(a, [("\u2581" if c == " " else c, 0) for c in a.text])
        first = bool(a.spans and a.spans[0][0] == 0)
        if (scheme == "always" or (scheme == "first" and first)) and not edited.text.startswith("\u2581"):
            edited = nz.prepend(edited, "\u2581")
        assert run(a, 0) == (_split_before(edited, "\u2581") if split else [edited])
