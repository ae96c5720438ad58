"""Peek2's per-code-point class flags (``tokspec.fast.peek2_unicode``) against independent oracles.

``flags()`` reads the Unicode 16.0 class table shipped with tokspec (``CLASS_FILE``, sha256-pinned).
Here the table is checked for EVERY code point 0..0x10FFFF against:

- unicodedata2 16.0.0's general categories with the regex module's ``\\s`` (exact);
- HF tokenizers' regex engine (the table's generator, ``scripts/peek2_classes.py``): exact where
  its tables are Unicode 16; an older release (tokenizers 0.21: Unicode 14) may only lack classes
  for characters assigned later, finding ``tokenizers-0.21-split-unicode-14-tables``;
- the ``regex`` module (Unicode 17.0): the differences are few and all of the kind a newer Unicode
  brings, exactly the pin of ``reference.pretok_regex``.

It also checks the table's reader: a changed file is refused, a malformed one named by line.
"""

from __future__ import annotations

import hashlib
import importlib.util
from pathlib import Path

import numpy as np
import pytest
import regex
from tokspec.fast import peek2_unicode as pu
from tokspec.reference.pretok_regex import UNICODE17_CHANGED, UNICODE17_NEW
from tokspec.unicode_domain import scalar_text, scalar_values

# (bit, class) as the module documents them: letters, numbers, \s, upper (Lu Lt), lower (Ll), marks.
CLASSES = ((1, r"\p{L}"), (2, r"\p{N}"), (4, r"\s"), (8, r"[\p{Lu}\p{Lt}]"), (16, r"\p{Ll}"), (32, r"\p{M}"))
SURROGATES = range(0xD800, 0xE000)


def _generator():  # scripts/peek2_classes.py, the table's generator, as a module
    path = Path(__file__).resolve().parents[1] / "scripts" / "peek2_classes.py"
    spec = importlib.util.spec_from_file_location("peek2_classes", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _all_text() -> tuple[str, np.ndarray]:
    """Every scalar value once, in order, and its code points (built here, not by the module)."""
    cps = [c for c in range(0x110000) if c not in SURROGATES]
    return "".join(map(chr, cps)), np.array(cps, dtype=np.int64)


def _regex_flags(text: str, cps: np.ndarray) -> np.ndarray:
    out = np.zeros(0x110000, dtype=np.uint8)
    for bit, prop in CLASSES:
        inside = np.zeros(len(text), dtype=bool)
        for m in regex.finditer(prop + "+", text):
            inside[m.start():m.end()] = True
        out[cps[inside]] |= bit
    return out


@pytest.fixture(scope="module")
def shipped() -> np.ndarray:
    return pu.flags()


def test_all_code_points_are_every_scalar_value_once() -> None:
    """The domain of the module's tables (U+0000 and U+E000 included: no class holds them)."""
    text, cps = _all_text()
    got = scalar_values()
    assert got.dtype == np.dtype("<u4") and np.array_equal(got, cps) and not got.flags.writeable
    assert scalar_text() == got.tobytes().decode("utf-32-le") == text
    assert np.array_equal(_generator().all_code_points(), cps)


def test_shipped_flags_shape_and_pin(shipped: np.ndarray) -> None:
    assert shipped.shape == (0x110000,) and shipped.dtype == np.uint8
    assert not shipped[0xD800:0xE000].any(), "surrogates carry no class"
    assert hashlib.sha256(pu.CLASS_FILE.read_bytes()).hexdigest() == pu.CLASS_FILE_SHA256


def test_shipped_flags_equal_unicodedata2_16_on_every_code_point(shipped: np.ndarray) -> None:
    want = _generator().derive_from_unicodedata2()
    diff = np.flatnonzero(shipped != want)
    assert len(diff) == 0, [f"U+{c:04X}: {shipped[c]} vs {want[c]}" for c in diff[:8].tolist()]


def test_shipped_flags_against_the_installed_tokenizers(shipped: np.ndarray) -> None:
    hf = _generator().derive_from_tokenizers()
    diff = np.flatnonzero(shipped != hf)
    if hf[0x1C89]:  # a letter new in Unicode 16.0 (tokenizers 0.23): the same tables
        assert len(diff) == 0, [f"U+{c:04X}: {shipped[c]} vs {hf[c]}" for c in diff[:8].tolist()]
    else:  # older tables (tokenizers 0.21: Unicode 14): only characters assigned later lack a class
        assert len(diff) > 0 and not hf[diff].any() and shipped[0x1C89] != 0


def test_shipped_flags_are_the_regex_module_pinned_to_unicode_16(shipped: np.ndarray) -> None:
    text, cps = _all_text()
    want17 = _regex_flags(text, cps)
    diff = np.flatnonzero(shipped != want17)
    # Unicode 16.0 -> 17.0: ~4600 new letters and a few recategorised characters; nothing else.
    assert 0 < len(diff) < 8000, f"{len(diff)} code points differ from the regex module's classes"
    assert (want17[diff] != 0).all()
    pinned = want17.copy()
    for first, last in UNICODE17_NEW:
        pinned[first:last + 1] = 0
    for cp, category in UNICODE17_CHANGED.items():  # 16.0's category (each a letter here)
        assert category[0] == "L"
        pinned[cp] = 1 | (8 if category in ("Lu", "Lt") else 0) | (16 if category == "Ll" else 0)
    assert np.array_equal(shipped, pinned)


def test_spot_checks_independent_of_any_engine(shipped: np.ndarray) -> None:
    """Stable facts (Unicode 1.1 .. 16.0 alike): each class bit, and several bits at once."""
    assert shipped[ord("A")] == 1 | 8 and shipped[ord("a")] == 1 | 16
    assert shipped[ord("7")] == 2 and shipped[ord(" ")] == 4 and shipped[ord("\n")] == 4
    assert shipped[0x01C5] == 1 | 8            # Lt: upper class
    assert shipped[0x02B0] == 1                # Lm: neither upper nor lower
    assert shipped[0x0301] == 32               # Mn
    assert shipped[0x2167] == 2                # Nl
    assert shipped[0] == 0 and shipped[ord("!")] == 0 and shipped[0x10FFFF] == 0
    assert shipped[0x20000] == 1               # CJK extension B (a supplementary plane)
    assert shipped[0x1C89] == 1 | 8            # Cyrillic TJE, new in 16.0
    assert shipped[0x0295] == 1 | 16           # Ll in 16.0 (Lo in 17.0)


# -- the table's reader -----------------------------------------------------------------------------

def test_table_text_round_trips(shipped: np.ndarray) -> None:
    rng = np.random.default_rng(7)
    for flags in (shipped, np.zeros(0x110000, np.uint8), _random_flags(rng), _random_flags(rng)):
        text = pu.format_class_table(flags, "a header\n\nover lines")
        assert text.startswith("# a header\n#\n# over lines\n")
        assert np.array_equal(pu.parse_class_table(text), flags)
    body = [line for line in pu.format_class_table(shipped, "x").splitlines() if not line.startswith("#")]
    assert body == [line for line in pu.CLASS_FILE.read_text().splitlines() if not line.startswith("#")]
    assert "0041..005A L,UP" in body and "0009..000D WS" in body  # bit order: L N WS UP LO M
    assert pu.format_class_table(np.array([0, 4 | 8, 4 | 8, 2 | 32, 0], np.uint8), "h").splitlines()[1:] == [
        "0001..0002 WS,UP", "0003..0003 N,M"]


def _random_flags(rng: np.random.Generator) -> np.ndarray:
    runs = np.repeat(rng.integers(0, 64, 3000, dtype=np.uint8), 0x110000 // 3000 + 1)[:0x110000]
    runs[0xD800:0xE000] = 0
    runs[0x10FFFF] = 63  # a run ending on the last code point
    return runs


def test_parse_reads_each_line() -> None:
    got = pu.parse_class_table("# c\n0041..0042 L,UP\n00E9..00E9 LO,L\n10FFFF..10FFFF M\n")
    assert got.dtype == np.uint8 and got.shape == (0x110000,)
    assert np.flatnonzero(got).tolist() == [0x41, 0x42, 0xE9, 0x10FFFF]
    assert got[0x41] == got[0x42] == 9 and got[0xE9] == 17 and got[0x10FFFF] == 32
    assert not pu.parse_class_table("# only a comment\n").any()


@pytest.mark.parametrize(("bad", "says"), [
    ("0041..0042 L\n0040..0040 N", "out of order"),      # out of order
    ("0041..0042 L\n0042..0043 N", "overlaps"),          # overlapping
    ("0043..0041 L", "out of order"),                     # backwards
    ("D7FF..D800 L", "scalar values"),                    # into the surrogates
    ("DFFF..E000 L", "scalar values"),                    # out of the surrogates
    ("E000..110000 L", "scalar values"),                  # past the last code point
    ("0041..0042 Q", "class='Q' is not one of"),          # unknown class
    ("0041..0042", "is not 'FIRST..LAST CLASSES'"),       # no class
    ("0041-0042 L", "is not 'FIRST..LAST CLASSES'"),      # not the format
    ("", "is not 'FIRST..LAST CLASSES'"),                 # an empty line
    ("0041..0042 L,", "is not 'FIRST..LAST CLASSES'"),    # a dangling comma
])
def test_parse_names_the_bad_line(bad: str, says: str) -> None:
    with pytest.raises(pu.ClassTableError) as info:
        pu.parse_class_table("# header\n" + bad + "\n")
    assert isinstance(info.value, ValueError) and says in str(info.value)
    if says in ("out of order", "overlaps", "scalar values"):  # one message names all three
        assert str(info.value).endswith(", overlaps the one before, or leaves the scalar values")
    assert f"line={2 + bad.count(chr(10))}:" in str(info.value), "the last line of bad is named"


def test_a_changed_table_is_refused(tmp_path: Path) -> None:
    data = pu.CLASS_FILE.read_bytes()
    path = tmp_path / "classes.txt"
    path.write_bytes(data.replace(b"0041..005A L,UP", b"0041..005A L,LO"))
    with pytest.raises(pu.ClassTableError, match="sha256") as info:
        pu.read_class_file(path, pu.CLASS_FILE_SHA256)
    assert repr(str(path)) in str(info.value) and pu.CLASS_FILE_SHA256 in str(info.value)
    path.write_bytes(data)
    assert np.array_equal(pu.read_class_file(path, pu.CLASS_FILE_SHA256), pu.flags())


# -- the category tables, from the (cached, checked above) flags, by what each category means ------

def _bits(f: np.ndarray) -> dict[str, np.ndarray]:
    return {"L": (f & 1) != 0, "N": (f & 2) != 0, "WS": (f & 4) != 0, "UP": (f & 8) != 0,
            "LO": (f & 16) != 0, "M": (f & 32) != 0}


def _special(*chars: str) -> np.ndarray:
    out = np.zeros(0x110000, dtype=bool)
    out[[ord(c) for c in chars]] = True
    return out


def test_cl100k_categories_mean_their_classes() -> None:
    """Smaller sets take precedence: space, quote, CR/LF, then numbers over letters over \\s."""
    cat, b = pu.cl100k_category_table.__wrapped__(), _bits(pu.flags())
    assert cat.shape == (0x110000,) and cat.dtype == np.uint8
    space, quote, crlf = _special(" "), _special("'"), _special("\r", "\n")
    plain = ~(space | quote | crlf)
    expect = {pu.SPACE: space, pu.QUOTE: quote, pu.CRLF: crlf, pu.NUMBER: plain & b["N"],
              pu.LETTER: plain & b["L"] & ~b["N"], pu.WHITESPACE: plain & b["WS"] & ~b["L"] & ~b["N"],
              pu.OTHER: plain & ~b["WS"] & ~b["L"] & ~b["N"]}
    for c, mask in expect.items():
        assert np.array_equal(cat == c, mask), f"category {c}: {np.flatnonzero((cat == c) != mask)[:5]}"


def test_o200k_categories_mean_their_classes() -> None:
    cat, b = pu.o200k_category_table.__wrapped__(), _bits(pu.flags())
    assert cat.shape == (0x110000,) and cat.dtype == np.uint8
    space, crlf = _special(" "), _special("\r", "\n")
    plain = ~(space | crlf)
    letter = plain & b["L"] & ~b["N"]
    expect = {pu.O_SPACE: space, pu.O_CRLF: crlf, pu.O_NUMBER: plain & b["N"],
              pu.O_LO: letter & b["LO"], pu.O_UP: letter & b["UP"] & ~b["LO"],
              pu.O_BOTH: letter & ~b["UP"] & ~b["LO"],
              pu.O_MARK: plain & b["M"] & ~b["L"] & ~b["N"],
              pu.O_WS: plain & b["WS"] & ~b["M"] & ~b["L"] & ~b["N"],
              pu.O_OTHER: plain & ~b["WS"] & ~b["M"] & ~b["L"] & ~b["N"]}
    for c, mask in expect.items():
        assert np.array_equal(cat == c, mask), f"category {c}: {np.flatnonzero((cat == c) != mask)[:5]}"


def test_fold_table_is_every_case_fold_of_the_contraction_letters() -> None:
    cps, to = pu.fold_table.__wrapped__()
    text, _ = _all_text()
    want = sorted((ord(m.group()), ord(x)) for x in "sdmtlver" for m in regex.finditer(f"(?i:{x})", text))
    assert list(zip(cps.tolist(), to.tolist())) == want
    assert cps.dtype == to.dtype == np.int64
    assert (0x017F, ord("s")) in want and (0x212A, ord("k")) not in want  # long s; Kelvin is a k


def test_code_points_are_ord_of_each_character() -> None:
    text = "a\x00\u00e9\u4e2d\U0001f642\U0010ffff"
    got = pu.code_points(text)
    assert got.dtype == np.uint32 and got.tolist() == [ord(c) for c in text]
    assert pu.code_points("").tolist() == []
