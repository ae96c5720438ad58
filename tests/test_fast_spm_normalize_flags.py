"""The sentencepiece normalizer kernels (``tokspec.fast._spm_kernels``) under every flag combination.

The engines only ever run the kernels with a trained model's flags (dummy prefix, extra-space
removal and escaping all on), so each kernel is checked here directly, on many short generated
texts, with all 8 combinations of ``add_dummy_prefix``, ``remove_extra_whitespaces`` and
``escape_whitespaces``, over four charsmaps: none (identity), nmt_nfkc, and two small rule sets
compiled by sentencepiece whose rules hit the awkward cases (longest match over shared prefixes,
replacements that vanish, are spaces, start or end with spaces or hold them inside, keys and
replacements of 1 to 4 UTF-8 bytes, a rule for the space itself).

Oracles: ``sentencepiece.SentencePieceNormalizer`` (production) for the normalized text and the
byte offsets ``n2o`` (its ``norm_to_orig``, one entry per character plus the end); the readable
``tokspec.formats.spm_normalize.SpmNormalizer`` for the rule ends ``r1`` (its per-character byte records)
and for what :func:`spm_alignment` makes of them (library spans and contract origins);
``CharsMap.longest_match`` and the rule list for ``_replacement`` and ``starters`` (and, on a
hand-built trie with extended offsets, for ``tokspec.fast._charsmap.charsmap_entries``); the rule
list for ``tokspec.fast._spm_norm_ids.ascii_rules``, and sentencepiece for its ids-only
``normalize_ids``. The output
buffers are passed too small (empty), exact, or large and filled with garbage, and reused from call
to call as the engine does, so every regrowth path runs.
"""

from __future__ import annotations

import functools
import itertools
import json
import random
import tempfile
from pathlib import Path
from unittest import mock

import numpy as np
import pytest
import sentencepiece

from tokspec.formats import spm_normalize as readable
from tokspec._offsets import byte_to_char_index
from tokspec.formats._protowire import iter_fields
from tokspec.engines._spm import _version
from tokspec.fast import _spm_kernels as sk
from tokspec.fast import _spm_norm_ids as ni
from tokspec.fast._charsmap import charsmap_entries
from tokspec.fast.unigram_datrie import _spm_arrays
from tokspec.formats.models import trained_model
from tokspec.formats.spm_normalize import CharsMap, SpmNormalizer
from tokspec.formats.spm_model import load_spm_model

RULES = {
    "a": "A", "ab": "X", "abc": "", "q": "", "s": " ", "t": "  t  ", "u": "u ", "w": "w w",
    "z": "\U0001f600", "\u00e9": "e\u0301", "\ufb01": "fi", "\u2163": "IV", "\U0001f600": "\u263a",
    "\u3000": " ", "x\u0301": "\u1e8b", "\u00a0": "  ", "v": " v", "\u00df": "", "\u0958": "\u0915\u093c",
}
SPACE_RULES = {**RULES, "  ": "_", " ,": ",", "\u2581": " "}   # spaces go through the trie
ALPHABET = [" ", " ", " ", "a", "b", "c", "q", "s", "t", "u", "w", "v", "x", "y", "z", "\u0301", "\u00e9",
            "\ufb01", "\u2163", "\U0001f600", "\U0001f642", "\u3000", "\u00a0", "\u00df", "\u00e8", "\u4e2d",
            "\u2581", "\t", ".", ",", "\u0915", "\u0958"]
FLAGS = list(itertools.product([False, True], repeat=3))   # (dummy, remove_extra, escape)
CHARSMAPS = ["identity", "rules", "space-rules", "nmt_nfkc"]


def _tsv(rules: dict[str, str]) -> str:
    return "".join(" ".join(f"{ord(c):X}" for c in k) + "\t" + " ".join(f"{ord(c):X}" for c in v) + "\n"
                   for k, v in rules.items())


@functools.cache
def _rule_file(name: str) -> str | None:
    """The path sentencepiece compiles a charsmap from, for a rule set (None: not a rule set)."""
    rules = {"rules": RULES, "space-rules": SPACE_RULES}.get(name)
    if rules is None:
        return None
    path = Path(tempfile.mkdtemp(prefix="tokspec-spm-flags-")) / f"{name}.tsv"
    path.write_text(_tsv(rules), encoding="ascii")
    return str(path)


def oracle(name: str, dummy: bool, remove_extra: bool, escape: bool) -> sentencepiece.SentencePieceNormalizer:
    flags = {"add_dummy_prefix": dummy, "remove_extra_whitespaces": remove_extra, "escape_whitespaces": escape}
    if name == "identity":
        return sentencepiece.SentencePieceNormalizer(rule_name="identity", **flags)
    if name == "nmt_nfkc":
        return sentencepiece.SentencePieceNormalizer(model_file=str(trained_model("spm-unigram")), **flags)
    return sentencepiece.SentencePieceNormalizer(rule_tsv=_rule_file(name), **flags)


@functools.cache
def charsmap(name: str) -> CharsMap | None:
    """The precompiled charsmap sentencepiece uses for ``name`` (None for identity)."""
    if name == "nmt_nfkc":
        blob = load_spm_model(trained_model("spm-unigram")).precompiled_charsmap
    else:
        oracle_ = oracle(name, True, True, True)
        if not hasattr(oracle_, "serialized_normalizer_spec"):  # the API came after 0.2.0
            assert _version(sentencepiece.__version__) <= (0, 2, 0), sentencepiece.__version__
            if name == "identity":
                return CharsMap.parse(b"", name)  # the identity rule compiles to no charsmap
            pytest.skip(f"sentencepiece {sentencepiece.__version__} cannot hand out the charsmap it "
                        f"compiles from a rule file (no serialized_normalizer_spec); runs in tox -e py")
        spec = oracle_.serialized_normalizer_spec()
        blob = next((v for n, _, v in iter_fields(spec) if n == 2), b"")
    return CharsMap.parse(blob, name)


def readable_normalizer(name: str, dummy: bool, remove_extra: bool, escape: bool) -> SpmNormalizer:
    norm = SpmNormalizer.__new__(SpmNormalizer)
    norm.charsmap = charsmap(name)
    norm.add_dummy_prefix, norm.remove_extra = dummy, remove_extra
    norm.space = "\u2581" if escape else " "
    return norm


@functools.cache
def kernel_tables(name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    cm = charsmap(name)
    units = np.asarray(cm.units if cm else (), dtype=np.int64)
    pool = np.frombuffer(cm.pool if cm else b"", dtype=np.uint8)
    return units, pool, sk.ascii_copies(units)


def texts(seed: int, count: int) -> list[str]:
    """Short texts over ALPHABET (spaces weighted up), plus the edge cases every run needs."""
    rng = random.Random(seed)
    fixed = ["", " ", "   ", "a", "q", " q ", "abc", "ab", "abd", "  a  b  ", "s s", "\u3000\u3000x",
             "t", "a \u2581", "\u2581a\u2581", "x\u0301", "\u00a0", "zz", "\U0001f600 ", "a s", "x s"]
    return fixed + ["".join(rng.choice(ALPHABET) for _ in range(rng.randint(1, 9))) for _ in range(count)]


class Buffers:
    """The kernel's output buffers, sized by a cycling policy and kept across calls like the engine's
    workspace (the kernel may return regrown arrays)."""

    def __init__(self) -> None:
        self.calls = 0
        self.out = np.zeros(0, dtype=np.uint8)
        self.n2o = np.zeros(0, dtype=np.int64)
        self.r1 = np.zeros(0, dtype=np.int64)

    def next(self, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        self.calls += 1
        policy = self.calls % 4
        if policy == 0:    # empty: every write regrows
            return np.zeros(0, dtype=np.uint8), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        if policy == 1:    # one entry each
            return np.full(1, 0xEE, dtype=np.uint8), np.full(1, -7, dtype=np.int64), np.full(1, -7, dtype=np.int64)
        if policy == 2:    # what the engine allocates, full of garbage
            return (np.full(n + n // 2 + 8, 0xEE, dtype=np.uint8), np.full(n + 10, -7, dtype=np.int64),
                    np.full(n + 9, -7, dtype=np.int64))
        return self.out, self.n2o, self.r1   # the previous call's (possibly regrown) arrays

    def keep(self, out: np.ndarray, n2o: np.ndarray, r1: np.ndarray) -> None:
        self.out, self.n2o, self.r1 = out, n2o, r1


def character_starts(text: str) -> dict[int, int]:
    """UTF-8 byte offset -> character index, for the offsets between characters only (a byte
    offset inside a character is an error the comparison must see)."""
    starts = {len(text.encode("utf-8")): len(text)}
    at = 0
    for i, c in enumerate(text):
        starts[at] = i
        at += len(c.encode("utf-8"))
    return starts


def reference_records(norm: SpmNormalizer, text: str) -> tuple[readable.Aligned, list[tuple[str, int, int, int]]]:
    """SpmNormalizer.normalize(text) and its per-character byte records (char, n2o, rule start,
    rule end), as it hands them to its ``_aligned``."""
    spy = mock.Mock(wraps=readable._aligned)
    with mock.patch.object(readable, "_aligned", spy):
        aligned = norm.normalize(text)
    return aligned, (list(spy.call_args.args[1]) if spy.call_args else [])


@pytest.mark.parametrize("name", CHARSMAPS)
@pytest.mark.parametrize(("dummy", "remove_extra", "escape"), FLAGS)
def test_normalize_and_alignment_equal_sentencepiece_and_readable(name: str, dummy: bool, remove_extra: bool,
                                                                   escape: bool) -> None:
    """Normalized bytes and n2o == sentencepiece; r1 == the readable normalizer's rule ends; the
    alignment arrays == the readable normalizer's spans and origins."""
    spm = oracle(name, dummy, remove_extra, escape)
    norm = readable_normalizer(name, dummy, remove_extra, escape)
    units, pool, copies = kernel_tables(name)
    buffers = Buffers()
    for text in texts(seed=CHARSMAPS.index(name) * 8 + FLAGS.index((dummy, remove_extra, escape)), count=40):
        raw = np.frombuffer(text.encode("utf-8"), dtype=np.uint8)
        bufs = buffers.next(len(raw))
        rep = np.full(max(len(pool), 4), 0x20 if buffers.calls % 2 else 0xEE, dtype=np.uint8)  # scratch: any bytes
        out, n2o, r1, k, m = sk.spm_normalize(raw, units, pool, copies, dummy, remove_extra, escape, rep, *bufs)
        buffers.keep(out, n2o, r1)
        want_text, want_n2o = spm.Normalize(text, with_offsets=True)   # offsets in characters
        strict = character_starts(text)
        got = (bytes(out[:k]).decode("utf-8"), [strict.get(b, -1) for b in n2o[:m + 1].tolist()])
        assert got == (want_text, want_n2o), (text, name)
        aligned, records = reference_records(norm, text)
        assert aligned.text == want_text
        assert r1[:m].tolist() == [end for _, _, _, end in records], text
        table = np.asarray(byte_to_char_index(text), dtype=np.int64)
        arrays = [np.full(m + 1, -9, dtype=np.int64) for _ in range(4)]
        sk.spm_alignment(n2o, r1, m, table, *arrays)
        o_start, o_end, sp_start, sp_end = (a[:m].tolist() for a in arrays)
        assert list(zip(sp_start, sp_end)) == list(aligned.spans), text
        assert list(zip(o_start, o_end)) == list(aligned.origins), text
        assert all(a[m] == -9 for a in arrays)   # nothing written past the m characters


@pytest.mark.parametrize("name", ["rules", "space-rules", "nmt_nfkc"])
def test_replacement_is_the_longest_rule_else_one_character(name: str) -> None:
    """_replacement at every character start == CharsMap.longest_match (or the character copied)."""
    cm = charsmap(name)
    assert cm is not None
    units, pool, _ = kernel_tables(name)
    for text in texts(seed=5, count=30):
        data = text.encode("utf-8")
        raw = np.frombuffer(data, dtype=np.uint8)
        for pos in sorted({len(text[:i].encode("utf-8")) for i in range(len(text))}):
            rep = np.full(max(len(pool), 4), 0xEE, dtype=np.uint8)
            rl, used = sk._replacement(units, pool, raw, pos, rep)
            match = cm.longest_match(data, pos)
            char = len(text.encode("utf-8")[pos:].decode("utf-8")[0].encode("utf-8"))
            want = (match[1], match[0]) if match else (data[pos:pos + char], char)
            assert (bytes(rep[:rl]), used) == want, (text, pos)


@pytest.mark.parametrize("name", ["identity", "rules", "space-rules", "nmt_nfkc"])
def test_longest_key_is_the_longest_rule_within_the_bound(name: str) -> None:
    """longest_key (the one darts-clone walk every normalizer inlines) at every byte position and
    every bound n == CharsMap.longest_match over data[:n]: the key's length and its replacement's
    index in the pool; (0, -1) where no key matches (always, without a charsmap)."""
    cm = charsmap(name)
    units, pool, _ = kernel_tables(name)
    root = 0 if len(units) == 0 else (int(units[0]) >> 10) << ((int(units[0]) & 512) >> 6)
    for text in texts(seed=6, count=8):
        data = text.encode("utf-8")
        raw = np.frombuffer(data, dtype=np.uint8)
        for pos in range(len(data)):
            for n in range(pos, min(len(data), pos + 6) + 1):
                used, at = sk.longest_key(raw, pos, n, units, root)
                match = cm.longest_match(data[:n], pos) if cm is not None else None
                if match is None:
                    assert (used, at) == (0, -1), (text, pos, n)
                else:
                    end = bytes(pool[at:]).split(b"\0")[0]
                    assert (used, end) == (match[0], match[1]), (text, pos, n)


def test_replacement_with_no_charsmap_copies_one_character() -> None:
    units, pool, _ = kernel_tables("identity")
    for text in ["a", "\u00e9x", "\u4e2d", "\U0001f642!"]:
        raw = np.frombuffer(text.encode("utf-8"), dtype=np.uint8)
        rep = np.zeros(4, dtype=np.uint8)
        first = text[0].encode("utf-8")
        assert sk._replacement(units, pool, raw, 0, rep) == (len(first), len(first))
        assert bytes(rep[:len(first)]) == first


@pytest.mark.parametrize("name", ["identity", "rules"])
def test_engine_kernel_arguments_carry_every_flag(name: str) -> None:
    """The Unigram engine's ``_spm_arrays`` (charsmap tables and the three flags it hands the
    kernel, read off an SpmNormalizer) normalize as sentencepiece does under every flag combination."""
    texts_ = ["a b", "  a  b  ", "s t", "\u3000x ", "\u2581 a"]
    for dummy, remove_extra, escape in FLAGS:
        args = _spm_arrays(readable_normalizer(name, dummy, remove_extra, escape), sk)
        spm = oracle(name, dummy, remove_extra, escape)
        for text in texts_:
            raw = np.frombuffer(text.encode("utf-8"), dtype=np.uint8)
            rep = np.zeros(max(len(args[1]), 4), dtype=np.uint8)
            empty = (np.zeros(0, dtype=np.uint8), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
            out, _, _, k, _ = sk.spm_normalize(raw, *args, rep, *empty)
            assert bytes(out[:k]).decode("utf-8") == spm.Normalize(text), (text, dummy, remove_extra, escape)


@pytest.mark.parametrize("name", ["identity", "rules", "space-rules"])
def test_starters_are_the_first_bytes_of_the_rules(name: str) -> None:
    rules = {"rules": RULES, "space-rules": SPACE_RULES}.get(name, {})
    starts = sk.starters(kernel_tables(name)[0])
    assert starts.dtype == np.bool_ and starts.shape == (256,)   # one flag per byte value
    assert np.flatnonzero(starts).tolist() == sorted({key.encode("utf-8")[0] for key in rules})


def extended_offset_trie() -> tuple[np.ndarray, bytes]:
    """A darts-clone double array big enough (> 2^21 units) that offsets use the extended encoding:
    an offset of 2^21 or more is stored as ``offset >> 8`` with bit 9 set (decoded
    ``(unit >> 10) << 8``). Keys "a" -> "A" and "ab" -> "Z"; the root's and "a"'s offsets are
    extended. Built by hand, unit by unit: root 0 (offset O) -> "a" at O ^ 0x61 (offset O: its
    block starts at 0x61, where its value sits) -> "ab" at 0x61 ^ 0x62 = 3 (offset 0x100: value at
    3 ^ 0x100). Edges a walk must stop at: the array ends at O + 0xC3, so the root's child for
    byte 0xC3 is exactly one past the end (and higher bytes further); "c" at O ^ 0x63 is flagged
    as a key end whose value unit would be that same one-past-the-end ("d" likewise, 256 units
    further: past every child block); the pool's last string has no terminating NUL."""
    big = 1 << 21
    units = np.zeros(big + 0xC3, dtype=np.int64)
    extended = ((big >> 8) << 10) | (1 << 9)
    leaf, has_leaf = 1 << 31, 1 << 8
    units[0] = extended                          # the root: children at big ^ byte
    units[big] = leaf                            # the root holds no value (label 0 never matches)
    units[big ^ 0x61] = extended | has_leaf | 0x61
    units[0x61] = leaf | 0                       # "a" -> pool[0:] "A"
    units[0x61 ^ 0x62] = (0x100 << 10) | has_leaf | 0x62
    units[3 ^ 0x100] = leaf | 2                  # "ab" -> pool[2:] "Z" (unterminated)
    units[big ^ 0x63] = ((0x63 ^ 0xC3) << 10) | has_leaf | 0x63   # value would sit at len(units)
    units[big ^ 0x64] = ((0x64 ^ 0x1C3) << 10) | has_leaf | 0x64  # value would sit at len(units) + 256
    return units, b"A\x00Z"


def check_against_readable_walk(units: np.ndarray, pool_bytes: bytes, texts: list[str]) -> None:
    """_replacement at every character start and spm_normalize under every flag combination ==
    the readable trie walk and normalizer over the same units and pool."""
    cm = CharsMap(units, pool_bytes)   # the readable walk indexes the array like the tuple it parses
    copies = sk.ascii_copies(units)
    pool = np.frombuffer(pool_bytes, dtype=np.uint8)
    for text in texts:
        data = text.encode("utf-8")
        raw = np.frombuffer(data, dtype=np.uint8)
        for pos in range(len(data)):
            if 0x80 <= data[pos] < 0xC0:
                continue
            rep = np.zeros(max(len(pool), 4), dtype=np.uint8)
            rl, used = sk._replacement(units, pool, raw, pos, rep)
            match = cm.longest_match(data, pos)
            char = len(data[pos:].decode("utf-8")[0].encode("utf-8"))
            assert (bytes(rep[:rl]), used) == ((match[1], match[0]) if match else (data[pos:pos + char], char))
        for dummy, remove_extra, escape in FLAGS:
            norm = readable_normalizer("identity", dummy, remove_extra, escape)
            norm.charsmap = cm
            aligned, records = reference_records(norm, text)
            out, n2o, r1, k, m = sk.spm_normalize(raw, units, pool, copies, dummy, remove_extra, escape,
                                                  np.zeros(max(len(pool), 4), dtype=np.uint8),
                                                  *Buffers().next(len(raw)))
            assert bytes(out[:k]).decode("utf-8") == aligned.text, text
            assert (n2o[:m].tolist(), r1[:m].tolist()) == ([o for _, o, _, _ in records], [e for *_, e in records])
            assert ids_normalized(raw, units, pool, dummy, remove_extra, escape) == bytes(out[:k]), text


def ids_normalized(raw: np.ndarray, units: np.ndarray, pool: np.ndarray, dummy: bool, remove_extra: bool,
                   escape: bool) -> bytes:
    """``_spm_norm_ids.normalize_ids``' bytes, its buffer grown from empty as the engine grows it."""
    tables = np.concatenate([ni.ascii_rules(units, pool), sk.starters(units).astype(np.uint8)])
    out = np.zeros(0, dtype=np.uint8)
    for _ in range(40):
        k = ni.normalize_ids(raw, units, pool, tables, dummy, remove_extra, escape, out)
        if k >= 0:
            return bytes(out[:k])
        assert -1 - k > len(out)
        out = np.full(-1 - k, 0xEE, dtype=np.uint8)
    raise AssertionError("normalize_ids never fit")


def test_extended_offsets_and_walks_leaving_the_array() -> None:
    """Tries past 2^21 units (bit 9 offsets) read like the readable trie walk: starters, the
    longest match (stopping at the array's and the pool's ends), the whole normalization."""
    units, pool = extended_offset_trie()
    cm = CharsMap(units, pool)
    assert cm.longest_match(b"abc", 0) == (2, b"Z") and cm.longest_match(b"ax", 0) == (1, b"A")
    assert cm.longest_match(b"c", 0) is None and cm.longest_match(b"d", 0) is None
    starts = sk.starters(units)
    assert starts.dtype == np.bool_ and np.flatnonzero(starts).tolist() == [0x61, 0x63, 0x64]
    assert charsmap_entries(cm) == ([(b"a", b"A"), (b"ab", b"Z")], False, 2)   # the rule listing too
    check_against_readable_walk(units, pool, ["abab", "a", "ba ab\u00e9a", "  ab  ", "b", "\u00e9", "aab acd",
                                              "c\u00e9c", "\u00ff\U0001f642"])
    # the same trie over a pool of four spaces, unterminated: "a" -> "    " fills the scratch exactly
    check_against_readable_walk(units, b"    ", [" a", "x  ab a", "a"])


def test_one_unit_trie() -> None:
    """A double array of the root alone whose offset and label are 0 and that flags a key end:
    the key is the byte 0 (the root is its own child) and its value is pool[256:]."""
    units = np.array([1 << 8], dtype=np.int64)
    pool = bytes(256) + b"N\x00"
    assert CharsMap(units, pool).longest_match(b"\x00", 0) == (1, b"N")
    assert np.flatnonzero(sk.starters(units)).tolist() == [0]
    check_against_readable_walk(units, pool, ["\x00", "a\x00 \x00b", " \x00 "])


@pytest.mark.parametrize("jit", [False, True])
def test_regression_n2o_overflow_after_workspace_regrowth(jit: bool) -> None:
    """corpora/fast/spm-normalize-buffers/n2o-overflow.json: two texts in a row on one engine; the
    second regrows the workspace so n2o is longer than r1, then expands past n2o's end (was an
    IndexError interpreted, a heap corruption compiled). Ids and offsets == sentencepiece."""
    from tokspec.fast.unigram_datrie import DatrieUnigram

    from tokspec import load_engine
    from tokspec.formats.unigram_model import unigram_model_from_spm
    doc = json.loads((Path(__file__).resolve().parent.parent / "corpora" / "fast" / "spm-normalize-buffers"
                      / "n2o-overflow.json").read_text(encoding="utf-8"))
    path = str(trained_model("spm-unigram"))
    engine = DatrieUnigram(unigram_model_from_spm(path), "fast", jit=jit)
    spm = load_engine(f"spm:{path}")
    for text in doc["texts"]:
        got, want = engine.encode_arrays(text), spm.encode_arrays(text)
        assert (got.ids.tolist(), got.starts.tolist(), got.ends.tolist()) == \
            (want.ids.tolist(), want.starts.tolist(), want.ends.tolist()), text


@pytest.mark.parametrize("name", CHARSMAPS)
def test_ascii_rules_are_the_rule_list(name: str) -> None:
    """``ascii_rules[c]``: WALK for a non-ASCII byte, for a key that continues with c and an ASCII
    byte, or for a key c whose replacement is not at most one ASCII byte; else that byte (c itself
    when c is no key) or DELETE for an empty replacement."""
    cm = charsmap(name)
    units, pool, _ = kernel_tables(name)
    rules = ni.ascii_rules(units, pool)
    entries = dict(charsmap_entries(cm)[0]) if cm else {}
    assert rules.shape == (256,) and rules.dtype == np.uint8
    for c in range(256):
        longer = any(len(key) > 1 and key[0] == c and key[1] < 0x80 for key in entries)
        rep = entries.get(bytes([c]))
        if c >= 0x80 or longer or (rep is not None and (len(rep) > 1 or (rep and rep[0] >= 0x80))):
            want = ni.ASCII_WALK
        else:
            want = c if rep is None else rep[0] if rep else ni.ASCII_DELETE
        assert rules[c] == want, (name, c, rep, longer)
    if name == "rules":  # the rule set holds every outcome
        assert (rules[ord("q")], rules[ord("s")], rules[ord("a")], rules[ord("t")], rules[ord("b")]) == \
            (ni.ASCII_DELETE, 32, ni.ASCII_WALK, ni.ASCII_WALK, ord("b"))


@pytest.mark.parametrize("name", CHARSMAPS)
@pytest.mark.parametrize(("dummy", "remove_extra", "escape"), FLAGS)
def test_normalize_ids_equals_sentencepiece(name: str, dummy: bool, remove_extra: bool, escape: bool) -> None:
    """The ids-only normalizer's bytes == sentencepiece's normalized text. ``out`` starts empty,
    at the engine's size (3 bytes per input byte + 8) or at exactly the result's size, full of
    garbage: a short one returns ``-1 - size`` with ``size`` above its length, and the call with
    ``size`` bytes succeeds."""
    spm = oracle(name, dummy, remove_extra, escape)
    units, pool, _ = kernel_tables(name)
    tables = np.concatenate([ni.ascii_rules(units, pool), sk.starters(units).astype(np.uint8)])
    long = ["sqa  ab t\tu v, x. w z" * 3, "abc \u00e9s  q\u0301 " * 4, "  \u3000 s q  "]
    # a leading "!" (byte 33, one past the space), as a table-decided byte, before a non-ASCII
    # character (walked, no key), and as a replacement (U+FF01 -> "!" in nmt_nfkc): never a space
    leading = ["!a", "!\u00e9", "\uff01a", " !"]
    for i, text in enumerate(texts(seed=100 + FLAGS.index((dummy, remove_extra, escape)), count=30) + long + leading):
        data = text.encode("utf-8")
        want = spm.Normalize(text).encode("utf-8")
        size = (0, 3 * len(data) + 8, max(len(want), 1))[i % 3]
        out = np.full(size, 0xEE, dtype=np.uint8)
        for _ in range(40):
            k = ni.normalize_ids(data, units, pool, tables, dummy, remove_extra, escape, out)
            if k >= 0:
                break
            assert -1 - k > len(out), (text, k, len(out))
            out = np.full(-1 - k, 0xEE, dtype=np.uint8)
        assert bytes(out[:k]) == want, (text, name)
