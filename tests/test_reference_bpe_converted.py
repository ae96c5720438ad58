"""reference/bpe_merges_from_ranks.py beyond the merge recovery: the generated tokenizer.json is
exactly the pipeline HF itself serializes for the documented components, HF on it reproduces the
naive reference's ids AND offsets on multi-byte text, the cache file lives in the per-user cache
(TOKSPEC_CACHE, else XDG_CACHE_HOME/tokspec; never the shared system temp dir), is written there
atomically and is rebuilt unless its digest verifies (issue 28), and the two engines built on HF
report what they run."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import tokenizers
from hypothesis import given
from hypothesis import strategies as st
from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers

from tokspec.fuzz.strategies import bpe_merge_ranks
from tokspec.reference.bpe_hf import bytes_to_unicode
from tokspec.reference.bpe_merges_from_ranks import (
    CONVERTER_VERSION,
    HfConvertedEncoder,
    HfSplitPretokenizer,
    converted_json_path,
    merge_pair,
    merges_from_ranks,
    tokenizer_json_from_ranks,
)
from tokspec.reference.bpe_naive import NaiveBpeEncoder
from tokspec.reference.pretok_regex import PATTERNS, compiled, split

#: a byte-complete table with multi-byte UTF-8 tokens, a space-led token and a 3-byte merge chain
RANKS = {bytes([b]): b for b in range(256)} | {
    b"ab": 256, b" a": 257, b"\xc3\xa9": 258, b"abc": 259, b"\xe2\x82": 260, b"\xe2\x82\xac": 261,
    b" ab": 262, b"  ": 263}
TEXTS = ["abc ab", " a  é€", "ab€abc", "x  \n ab", "é,é", "a\U0001f600b c"]


def _visible(token: bytes) -> str:
    table = bytes_to_unicode()
    return "".join(table[b] for b in token)


def _hf_built(ranks: dict[bytes, int], pattern: str, ignore_merges: bool) -> dict[str, object]:
    """What HF serializes for the documented pipeline, built from its own Python API."""
    vocab = {_visible(t): r for t, r in ranks.items()}
    merges = [(_visible(a), _visible(b)) for a, b in merges_from_ranks(ranks)[0]]
    tok = Tokenizer(models.BPE(vocab, merges, ignore_merges=ignore_merges))
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(pattern), "isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False, trim_offsets=False)])
    tok.decoder = decoders.ByteLevel()
    out: dict[str, object] = json.loads(tok.to_str())
    if "trim_offsets" not in (pre_tokenizers.ByteLevel.__text_signature__ or ""):
        # finding tokenizers-0.21-bytelevel-ignores-trim-offsets (corpora/production/
        # findings_old_releases.json): that release's Python API ignores trim_offsets=False, so what
        # it serializes cannot be the documented pipeline; write the documented value in
        assert tokenizers.__version__ == "0.21.0", tokenizers.__version__
        byte_level = out["pre_tokenizer"]["pretokenizers"][1]  # type: ignore[index]
        assert byte_level["trim_offsets"] is True  # the recorded library output
        byte_level["trim_offsets"] = False
    return out


@pytest.mark.parametrize("ignore_merges", [True, False])
def test_generated_json_is_the_pipeline_hf_serializes(ignore_merges: bool) -> None:
    data = tokenizer_json_from_ranks(RANKS, PATTERNS["o200k_base"], ignore_merges=ignore_merges)
    expected = _hf_built(RANKS, PATTERNS["o200k_base"], ignore_merges)
    assert {k: v for k, v in data.items() if k != "decoder"} == {k: v for k, v in expected.items() if k != "decoder"}
    # HF reads every key back unchanged (no unknown key, no value it would default differently)
    assert json.loads(Tokenizer.from_str(json.dumps(data)).to_str()) == data
    # the decoder mirrors the ByteLevel pre-tokenizer's settings, and undoes the byte mapping
    assert data["decoder"] == data["pre_tokenizer"]["pretokenizers"][1]  # type: ignore[index]
    hf = Tokenizer.from_str(json.dumps(data))
    for text in TEXTS:
        assert hf.decode(hf.encode(text, add_special_tokens=False).ids) == text


def test_vocab_is_listed_in_rank_order() -> None:
    shuffled = dict(sorted(RANKS.items(), key=lambda kv: kv[0], reverse=True))
    vocab = tokenizer_json_from_ranks(shuffled, PATTERNS["cl100k_base"])["model"]["vocab"]  # type: ignore[index]
    assert list(vocab.values()) == sorted(RANKS.values())
    assert list(vocab) == [_visible(t) for t, _ in sorted(RANKS.items(), key=lambda kv: kv[1])]


def test_merges_of_multibyte_tokens() -> None:
    merges, unreachable = merges_from_ranks(RANKS)
    assert unreachable == []
    assert merges == [(b"a", b"b"), (b" ", b"a"), (b"\xc3", b"\xa9"), (b"ab", b"c"), (b"\xe2", b"\x82"),
                      (b"\xe2\x82", b"\xac"), (b" ", b"ab"), (b" ", b" ")]
    assert [merge_pair(t, RANKS) for t in (b"a", b"ab", b"abc")] == [None, (b"a", b"b"), (b"ab", b"c")]


@given(bpe_merge_ranks(alphabet=b"ab\xc3", max_merges=8))
def test_hyp_merge_pair_rebuilds_every_reachable_token(ranks: dict[bytes, int]) -> None:
    """Each recovered merge joins two lower-ranked tokens into the token; every token of two or
    more bytes is either produced by exactly one merge or listed as unreachable, never both."""
    merges, unreachable = merges_from_ranks(ranks)
    produced = [a + b for a, b in merges]
    assert sorted(produced + unreachable, key=ranks.__getitem__) == sorted(
        (t for t in ranks if len(t) >= 2), key=ranks.__getitem__)
    assert produced == sorted(produced, key=ranks.__getitem__)
    for a, b in merges:
        assert max(ranks[a], ranks[b]) < ranks[a + b]
        assert merge_pair(a + b, ranks) == (a, b)
    for token in ranks:
        if len(token) == 1:
            assert merge_pair(token, ranks) is None


def test_hf_on_the_converted_file_equals_the_naive_reference_with_offsets(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOKSPEC_CACHE", str(tmp_path))
    path = converted_json_path(RANKS, "sha-tiny", "cl100k_base")
    hfc = HfConvertedEncoder(path, name="hf-converted:tiny", vocab_sha256="sha-tiny")
    ref = NaiveBpeEncoder(RANKS, compiled("cl100k_base"), name="reference:tiny", vocab_sha256="sha-tiny")
    for text in TEXTS:
        assert hfc.encode(text) == ref.encode(text), text
    assert hfc.info.name == "hf-converted:tiny" and hfc.info.kind == "tokenizer"
    assert hfc.info.library == "tokenizers" and hfc.info.library_version == tokenizers.__version__
    assert hfc.info.vocab_sha256 == "sha-tiny" and path.name in hfc.info.description
    assert hfc.json_path == path


def test_converted_engine_adds_no_special_tokens(tmp_path: Path) -> None:
    """The engine encodes with add_special_tokens=False even if the file has a post-processor."""
    data = tokenizer_json_from_ranks(RANKS, PATTERNS["cl100k_base"])
    data["post_processor"] = {"type": "TemplateProcessing", "single": [
        {"SpecialToken": {"id": "ab", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
        "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}],
        "special_tokens": {"ab": {"id": "ab", "ids": [256], "tokens": ["ab"]}}}
    path = tmp_path / "with-template.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    hfc = HfConvertedEncoder(path, name="hf-converted:t", vocab_sha256="x")
    assert Tokenizer.from_file(str(path)).encode("c").ids == [256, ord("c")]  # the template is live
    assert hfc.encode("c").ids == (ord("c"),)


def test_cache_file_name_default_flag_and_readable_content(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOKSPEC_CACHE", str(tmp_path / "deep" / "cache"))  # created with its parents
    path = converted_json_path(RANKS, "sha-a", "o200k_base")
    assert path.parent == tmp_path / "deep" / "cache" / "hf-converted"
    assert re.fullmatch(r"hf-converted-o200k_base-[0-9a-f]{20}\.json", path.name)
    assert converted_json_path(RANKS, "sha-a", "o200k_base", ignore_merges=True) == path  # the default
    other = converted_json_path(RANKS, "sha-a", "o200k_base", ignore_merges=False)
    assert other != path and json.loads(other.read_text(encoding="utf-8"))["model"]["ignore_merges"] is False
    assert converted_json_path(RANKS, "sha-b", "o200k_base") != path
    assert converted_json_path(RANKS, "sha-a", "cl100k_base").name.startswith("hf-converted-cl100k_base-")
    text = path.read_text(encoding="utf-8")
    assert json.loads(text) == tokenizer_json_from_ranks(RANKS, PATTERNS["o200k_base"])
    assert "\u0120a" in text  # ByteLevel spellings are stored as themselves, not \u escapes
    assert sorted(p.suffix for p in path.parent.iterdir()) == [".json"] * 4 + [".sha256"] * 4


def test_cache_defaults_to_the_per_user_cache_not_the_temp_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TOKSPEC_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    path = converted_json_path(RANKS, "sha-t", "o200k_base")
    assert path.parent == tmp_path / "xdg" / "tokspec" / "hf-converted"
    assert path.is_file() and not (tmp_path / "tmp").exists()
    assert (os.stat(path.parent).st_mode & 0o777) == 0o700 == (os.stat(path.parent.parent).st_mode & 0o777)
    assert converted_json_path(RANKS, "sha-t", "o200k_base") == path  # the folder already exists


def test_cache_write_stays_inside_the_cache_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The temporary file is created next to the target (os.replace is atomic only within one
    file system): with TOKSPEC_CACHE set, an unusable system temp dir does not matter."""
    monkeypatch.setenv("TOKSPEC_CACHE", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "does-not-exist"))
    path = converted_json_path(RANKS, "sha-w", "o200k_base")
    assert path.is_file() and json.loads(path.read_text(encoding="utf-8"))["model"]["vocab"]["ab"] == 256
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name, path.name + ".sha256"]


def test_a_verified_cache_file_is_reused_as_is(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOKSPEC_CACHE", str(tmp_path))
    path = converted_json_path(RANKS, "sha-r", "o200k_base")
    stamps = path.stat().st_mtime_ns, (path.parent / (path.name + ".sha256")).stat().st_mtime_ns
    os.utime(path, ns=(1, 1))
    assert converted_json_path(RANKS, "sha-r", "o200k_base") == path
    assert path.stat().st_mtime_ns == 1, "not rewritten"
    assert (path.parent / (path.name + ".sha256")).stat().st_mtime_ns == stamps[1]
    assert CONVERTER_VERSION >= 1


@pytest.mark.parametrize("name", ["o200k_base", "qwen2"])  # cl100k: finding hf-onig-interval-plus
def test_hf_split_pretokenizer_equals_the_regex_split(name: str) -> None:
    engine = HfSplitPretokenizer(name)
    assert engine.info.name == f"pretok:hf-split-{name}" and engine.info.kind == "pretokenizer"
    assert engine.info.library == "tokenizers" and engine.info.library_version == tokenizers.__version__
    assert engine.info.vocab_sha256 is None and name in engine.info.description
    for text in ["Hello, world 123!", "a  b\n\n c", "don't 12345", "é€ x"]:
        assert list(engine.encode(text).offsets) == split(text, name), text
        assert engine.encode(text).ids is None


@given(st.text("ab é\n1", max_size=12))
def test_hyp_hf_split_pretokenizer_equals_the_regex_split(text: str) -> None:
    assert list(HfSplitPretokenizer("llama3").encode(text).offsets) == split(text, "llama3")


def test_cache_file_is_utf8_under_an_ascii_locale(tmp_path: Path) -> None:
    """The cache is UTF-8 whatever the locale (HF reads it as UTF-8): written from a process whose
    locale encoding is ASCII, it still holds the ByteLevel spellings and loads in HF."""
    script = ("import sys; from tokspec.reference.bpe_merges_from_ranks import converted_json_path; "
              f"print(converted_json_path({RANKS!r}, 'sha-c', 'o200k_base'))")
    env = {**os.environ, "TOKSPEC_CACHE": str(tmp_path), "LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0",
           "PYTHONCOERCECLOCALE": "0", "PYTHONIOENCODING": "utf-8"}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    path = Path(done.stdout.strip())
    assert "\u0120a" in path.read_text(encoding="utf-8")
    assert Tokenizer.from_file(str(path)).encode("ab a").ids == [256, 257]


def test_converted_engine_names_itself_when_the_library_output_is_malformed(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Output HF should never give (an offset past the text, ids and offsets of different lengths)
    is an EngineFault naming this engine, as Encoding.validate documents for its ``engine``."""
    from types import SimpleNamespace

    from tokspec.errors import EngineFault
    monkeypatch.setenv("TOKSPEC_CACHE", str(tmp_path))
    hfc = HfConvertedEncoder(converted_json_path(RANKS, "sha-tiny", "cl100k_base"), name="hf-converted:tiny",
                             vocab_sha256="sha-tiny")
    for ids, offsets, needle in (([97], [(0, 5)], "returned offset 0=(0, 5) outside text of length 2"),
                                 ([97, 98], [(0, 1)], "returned 2 ids but 1 offsets")):
        hfc.tokenizer = SimpleNamespace(encode=lambda text, add_special_tokens, e=(ids, offsets):
                                        SimpleNamespace(ids=e[0], offsets=e[1]))
        with pytest.raises(EngineFault, match=f"^hf-converted:tiny {re.escape(needle)}$"):
            hfc.encode("ab")


def test_cache_file_bytes_do_not_depend_on_the_locale(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The file written here and the one an ASCII-locale process writes for the same inputs are
    byte for byte the same UTF-8 JSON."""
    monkeypatch.setenv("TOKSPEC_CACHE", str(tmp_path / "here"))
    here = converted_json_path(RANKS, "sha-l", "cl100k_base")
    script = ("from tokspec.reference.bpe_merges_from_ranks import converted_json_path; "
              f"print(converted_json_path({RANKS!r}, 'sha-l', 'cl100k_base'))")
    env = {**os.environ, "TOKSPEC_CACHE": str(tmp_path / "ascii"), "LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0",
           "PYTHONCOERCECLOCALE": "0", "PYTHONIOENCODING": "utf-8"}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    there = Path(done.stdout.strip())
    assert there.name == here.name and there.read_bytes() == here.read_bytes()
    json.loads(here.read_bytes().decode("utf-8"))
