"""Every reference engine reports what it is (``EngineInfo``: kind, implementing module and its
version, vocabulary sha256, description), since records and reports identify results by these, and
its constructor defaults are the documented ones."""

from __future__ import annotations

import json
from pathlib import Path

import regex

from tokspec.formats.normalize import Aligned
from tokspec.reference.bpe_hf import HfBpeEncoder
from tokspec.reference.bpe_naive import NaiveBpeEncoder
from tokspec.reference.pretok_regex import RegexPretokenizer, compiled
from tokspec.reference.unigram import UnigramReference
from tokspec.formats.unigram_model import UnigramModel
from tokspec.formats.vocab import TokenizerJson

RANKS = {bytes([b]): b for b in range(256)} | {b"ab": 256}


def test_naive_bpe_info() -> None:
    engine = NaiveBpeEncoder(RANKS, compiled("cl100k_base"), name="reference:tiny", vocab_sha256="s" * 64,
                             description="tiny table")
    info = engine.info
    assert (info.name, info.kind, info.vocab_sha256, info.description) == ("reference:tiny", "tokenizer", "s" * 64,
                                                                           "tiny table")
    assert (info.library, info.library_version) == ("tokspec.reference.bpe_naive", "1")
    plain = NaiveBpeEncoder(RANKS, compiled("cl100k_base"), name="t", vocab_sha256=None)
    assert plain.info.description == "" and plain.info.vocab_sha256 is None
    assert plain.encode("").ids == () and plain.encode("ab").ids == (256,)


def test_hf_bpe_info() -> None:
    data = {"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": [["a", "b"]]},
            "pre_tokenizer": {"type": "Split", "pattern": {"Regex": r"\p{N}{1,3}+|\D+"}, "behavior": "Isolated",
                              "invert": False}}
    engine = HfBpeEncoder(TokenizerJson("dir/tiny.json", "h" * 64, data), "reference:dir/tiny.json")
    info = engine.info
    assert (info.name, info.kind, info.vocab_sha256) == ("reference:dir/tiny.json", "tokenizer", "h" * 64)
    assert (info.library, info.library_version) == ("tokspec.reference.bpe_hf", "1")
    assert info.description == "reference HF BPE semantics of dir/tiny.json"
    assert engine.encode("ab").ids == (2,) and engine.encode("").ids == ()
    # the default dialect is HF's Oniguruma: ``{1,3}+`` repeats, so a digit run is one piece
    assert engine.pretokenizer.pieces("12345ab", 0, 7) == [(0, 5), (5, 7)]
    from tokspec.reference.bpe_hf import parse_pretokenizer
    assert parse_pretokenizer(data["pre_tokenizer"]).pieces("12345ab", 0, 7) == [(0, 5), (5, 7)]  # type: ignore[arg-type]
    assert HfBpeEncoder(TokenizerJson("t.json", "h", json.loads(json.dumps(data))), "r", dialect="regex") \
        .pretokenizer.pieces("12345ab", 0, 7) == [(0, 3), (3, 5), (5, 7)]


def test_regex_pretokenizer_info() -> None:
    for unicode, suffix in (("16.0", ""), ("17.0", "-u17")):
        engine = RegexPretokenizer("o200k_base", unicode)  # type: ignore[arg-type]
        info = engine.info
        assert (info.name, info.kind, info.vocab_sha256) == (f"pretok:o200k_base{suffix}", "pretokenizer", None)
        assert (info.library, info.library_version) == ("regex", str(regex.__version__))
        assert info.description == f"o200k_base split pattern run by the regex module, Unicode {unicode}"
        assert engine.pattern is compiled("o200k_base", unicode)  # type: ignore[arg-type]
    assert RegexPretokenizer("llama3").info.name == "pretok:llama3"
    assert RegexPretokenizer("llama3").pattern is compiled("llama3", "16.0")
    assert RegexPretokenizer("llama3").encode("") .offsets == ()


def _unigram(flavour: str = "hf", matchable: bool = True) -> UnigramModel:
    return UnigramModel(("<unk>", "a", "ab"), (0.0, -1.0, -1.5), (False, matchable, matchable), 0, -10.0, False, (),
                        True, flavour, False, lambda t: [Aligned.of(t)], sha256="u" * 64,
                        description="(tiny)")  # type: ignore[arg-type]


def test_unigram_info_and_defaults() -> None:
    engine = UnigramReference(_unigram(), "reference:uni")
    info = engine.info
    assert (info.name, info.kind, info.vocab_sha256) == ("reference:uni", "tokenizer", "u" * 64)
    assert (info.library, info.library_version) == ("tokspec.reference", "0")
    assert info.description == "reference Unigram (hf flavour) (tiny)"
    assert engine.offsets == "contract" and engine.tie_break == "hf" and engine.max_len == 2
    enc = engine.encode("abz")
    assert enc.ids == (2, 0) and enc.pieces == ("ab", "<unk>")
    assert enc.pieces == tuple(engine.token_piece(i) for i in enc.ids)
    assert UnigramReference(_unigram("spm"), "u").tie_break == "spm"
    assert UnigramReference(_unigram("spm"), "u", tie_break="last").tie_break == "last"
    assert UnigramReference(_unigram(), "u", library="sentencepiece").info.library == "sentencepiece"
    assert UnigramReference(_unigram(matchable=False), "u").max_len == 1  # nothing matchable


def test_unigram_loaders_pass_their_options_on(tmp_path: Path) -> None:
    from tokenizers import Tokenizer, models

    from tokspec.formats.models import trained_model
    from tokspec.reference.unigram import unigram_encoder_from_spm_model, unigram_encoder_from_tokenizer_json
    tiny = tmp_path / "uni.json"
    tiny.write_text(Tokenizer(models.Unigram([("<unk>", 0.0), ("h", -2.0), ("e", -2.0), ("l", -2.0), ("o", -2.0),
                                              ("hel", -3.0), ("lo", -2.5)], unk_id=0)).to_str(), encoding="utf-8")
    for load, path in ((unigram_encoder_from_tokenizer_json, tiny),
                       (unigram_encoder_from_spm_model, trained_model("spm-unigram"))):
        default = load(path, "reference:u")
        assert (default.info.name, default.offsets, default.tie_break) == ("reference:u", "contract",
                                                                            default.model.flavour)
        assert default.model.source == str(path) or str(path).endswith(default.model.source)
        chosen = load(path, "reference:v", tie_break="last", offsets="library")
        assert (chosen.info.name, chosen.offsets, chosen.tie_break) == ("reference:v", "library", "last")
        assert chosen.encode("hello world").ids and default.encode("hello world").ids
    hf = Tokenizer.from_file(str(tiny)).encode("hello", add_special_tokens=False)
    assert unigram_encoder_from_tokenizer_json(tiny, "u").encode("hello").pieces == tuple(hf.tokens)


def test_hf_converted_info_names_the_rank_files_sha256(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """``hf-converted:NAME`` runs merges recovered from NAME's rank file, so its vocabulary sha256 is
    that file's (records compare engines by it): here a tiny rank table stands in for cl100k_base."""
    from tokspec.reference import engines as provider
    from tokspec.formats.vocab import TiktokenVocab
    vocab = TiktokenVocab("tiny.tiktoken", "t" * 64, RANKS)
    monkeypatch.setenv("TOKSPEC_CACHE", str(tmp_path))
    monkeypatch.setattr(provider, "load_named_tiktoken", lambda name: vocab)
    engine = provider.load("hf-converted", "cl100k_base")
    assert (engine.info.name, engine.info.vocab_sha256) == ("hf-converted:cl100k_base", "t" * 64)
    assert engine.encode("ab").ids == (256,)


def test_hf_converted_runs_the_converted_file_of_its_own_rank_table(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The cache is keyed by the rank file's sha256: two rank tables under the same name (a changed
    file) get their own converted files, never the other's merges."""
    from tokspec.reference import engines as provider
    from tokspec.formats.vocab import TiktokenVocab
    monkeypatch.setenv("TOKSPEC_CACHE", str(tmp_path))
    without_ab = {t: r for t, r in RANKS.items() if t != b"ab"}
    for vocab, ids in ((TiktokenVocab("a.tiktoken", "a" * 64, RANKS), (256,)),
                       (TiktokenVocab("b.tiktoken", "b" * 64, without_ab), (97, 98))):
        monkeypatch.setattr(provider, "load_named_tiktoken", lambda name, v=vocab: v)
        assert provider.load("hf-converted", "cl100k_base").encode("ab").ids == ids
