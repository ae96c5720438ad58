"""sentencepiece charsmaps in tokspec.fast._charsmap: the rule listing and Theorem M5's cut pattern.

Oracles: sentencepiece's own charsmap compiler (a model trained with ``normalization_rule_tsv``: the
listing must give back exactly the rules it was fed), the readable trie walk
``tokspec.formats.spm_normalize.CharsMap.prefix_matches`` (on nmt_nfkc's ~27K rules), and M5's rule as the
spec states it (``tokspec.spec.merge.rule_spm_space``). Finding (fixed): a charsmap rewriting the
space itself (" " -> "_") passed the M5 check, because keys starting with a space were looked for
among the vanishing/space-producing rules only; sentencepiece shows that cut is unsound.
"""

from __future__ import annotations

import functools
import io
import tempfile
from pathlib import Path

import sentencepiece
from hypothesis import example, given
from hypothesis import strategies as st

from tokspec.fast._charsmap import _pattern_for, charsmap_entries, spm_cut_pattern
from tokspec.formats.models import trained_model
from tokspec.spec.merge import rule_spm_space
from tokspec.formats.spm_normalize import CharsMap
from tokspec.formats.spm_model import load_spm_model

TRAINING = ["hello world, the quick brown fox jumps over the lazy dog 42 times"] * 100
# rules whose replacement vanishes, ends with a space, is only a space, or is ordinary
SOUND = {"q": "", "y": "y ", "z": " ", "\u00e9": "e\u0301", "ff": "F", "k": "kk", "\u2163": "IV"}
SPACED = {**SOUND, "a b": "x"}   # a key holding a space after its first character
SPACE_REWRITTEN = {" ": "_"}     # the space itself rewritten: M5 forbids it


@functools.cache
def compiled(rules: tuple[tuple[str, str], ...], model_type: str = "unigram") -> tuple[CharsMap, Path]:
    """The charsmap sentencepiece compiles from ``rules`` (and the model file it trained)."""
    folder = Path(tempfile.mkdtemp(prefix="tokspec-charsmap-"))
    tsv = folder / "rules.tsv"
    tsv.write_text("".join(" ".join(f"{ord(c):X}" for c in k) + "\t" + " ".join(f"{ord(c):X}" for c in v) + "\n"
                           for k, v in rules), encoding="utf-8")
    buf = io.BytesIO()
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=iter(TRAINING), model_writer=buf, vocab_size=40, model_type=model_type,
        normalization_rule_tsv=str(tsv), hard_vocab_limit=False, minloglevel=3)
    path = folder / "m.model"
    path.write_bytes(buf.getvalue())
    cm = CharsMap.parse(load_spm_model(path).precompiled_charsmap, str(path))
    assert cm is not None
    return cm, path


def charsmap(rules: dict[str, str]) -> CharsMap:
    return compiled(tuple(rules.items()))[0]


def test_entries_are_the_rules_sentencepiece_compiled() -> None:
    for rules in (SOUND, SPACED, SPACE_REWRITTEN):
        entries, spaced, count = charsmap_entries(charsmap(rules))
        assert dict(entries) == {k.encode(): v.encode() for k, v in rules.items()}
        assert count == len(entries) == len(rules)
        assert spaced == any(" " in k[1:] for k in rules)
        lengths = [len(k) for k, _ in entries]
        assert lengths == sorted(lengths)  # shortest keys first
        vanishing = charsmap_entries(charsmap(rules), lambda v: v == b"")
        assert vanishing == ([e for e in entries if e[1] == b""], spaced, count)


def test_nmt_nfkc_entries_are_the_tries_rules() -> None:
    """Every listed rule is what the readable trie walk finds for its key (sound), and every rule
    the walk finds on a BMP character outside the CJK ideographs is listed (complete over those)."""
    cm = CharsMap.parse(load_spm_model(trained_model("spm-unigram")).precompiled_charsmap, "nmt_nfkc")
    assert cm is not None
    entries, spaced, count = charsmap_entries(cm)
    table = dict(entries)
    assert count == len(entries) == len(table) > 1000 and not spaced
    for key, value in entries:
        assert cm.longest_match(key, 0) == (len(key), value), key
    for cp in [*range(0x3400), *range(0xA000, 0xD800), *range(0xE000, 0x10000)]:  # not CJK ideographs
        data = chr(cp).encode("utf-8")
        for n, value in cm.prefix_matches(data, 0):
            assert table.get(data[:n]) == value, data


def bad_sets(rules: dict[str, str]) -> tuple[frozenset[str], frozenset[str]]:
    """M5's exclusions: last characters of keys whose output vanishes or ends with a space, first
    characters of keys whose output is empty or only spaces."""
    last = frozenset(k[-1] for k, v in rules.items() if v == "" or v.endswith(" "))
    first = frozenset(k[0] for k, v in rules.items() if v.strip(" ") == "")
    return last, first


TEXTS = st.text(st.sampled_from("ab 1q yzX\u00e9k,\u2163\u4e2d\t"), max_size=16)


@given(text=TEXTS)
@example(text="aq b ay zb by 1 q k \u00e9 \u2163 X Xa")
def test_cut_pattern_is_m5s_rule(text: str) -> None:
    _pattern_for.cache_clear()  # computed here, not remembered from an earlier test
    cases = [(spm_cut_pattern(charsmap(SOUND)), SOUND, f"charsmap of {len(SOUND)} rules checked"),
             (spm_cut_pattern(None), {}, "identity normalization")]
    for (pattern, note), rules, want_note in cases:
        assert pattern is not None and note == want_note
        last, first = bad_sets(rules)
        want = {c for c in range(len(text)) if rule_spm_space(text, c, last, first)}
        assert {m.start() for m in pattern.finditer(text)} == want, (text, rules)


def test_cut_pattern_refuses_charsmaps_m5_excludes() -> None:
    _pattern_for.cache_clear()
    pattern, note = spm_cut_pattern(charsmap(SPACED))
    assert pattern is None and "holds a space after its first character" in note
    pattern, note = spm_cut_pattern(charsmap(SPACE_REWRITTEN))
    assert pattern is None and "rewrites a space (' ' -> '_')" in note


def test_rewriting_the_space_really_breaks_the_cut() -> None:
    """Why SPACE_REWRITTEN must be refused: sentencepiece (BPE, M5's setting) encodes the two pieces
    of "hello world" cut at the space into other tokens than the whole text."""
    _, path = compiled(tuple(SPACE_REWRITTEN.items()), "bpe")
    sp = sentencepiece.SentencePieceProcessor(model_file=str(path))
    text, c = "hello world", 5
    assert rule_spm_space(text, c)
    assert sp.encode(text) != sp.encode(text[:c]) + sp.encode(text[c:])
