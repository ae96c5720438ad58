"""Special mode (tokspec.special_mode, tokspec.reference.special_mode): the reference's definitions
one by one, then references against tiktoken and HF on texts spelling every special token, with HF's
added-token flags switched on in copies of the real tokenizer.json files."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import pytest

from tokspec import Encoding, UnknownEngineError, load_engine
from tokspec.app.cli import main as cli_main
from tokspec.app.special_text import special_texts
from tokspec.decoding import special_ids
from tokspec.diff import compare, format_comparison
from tokspec.reference.special_mode import AddedToken, encode_special, split_special, template_of
from tokspec.formats.vocab import load_tokenizer_json, named_path

A, B = AddedToken("<a>", 1), AddedToken("<ab>", 2)


def _plain(text: str) -> Encoding:
    return Encoding.of([ord(c) for c in text], [(i, i + 1) for i in range(len(text))])


def test_split_leftmost_longest() -> None:
    assert split_special("x<ab>y<a>", [A, B]) == [(0, 1, None), (1, 5, B), (5, 6, None), (6, 9, A)]
    assert split_special("<a><a>", [A]) == [(0, 3, A), (3, 6, A)]
    assert split_special("", [A]) == [] and split_special("abc", [A]) == [(0, 3, None)]
    assert split_special("<a>", [AddedToken("", 9), A]) == [(0, 3, A)]


def test_split_flags() -> None:
    l, r = AddedToken("<m>", 3, lstrip=True), AddedToken("<m>", 3, rstrip=True)
    assert split_special("x \t<m> y", [l]) == [(0, 1, None), (1, 6, l), (6, 8, None)]
    assert split_special("x <m> \ny", [r]) == [(0, 2, None), (2, 7, r), (7, 8, None)]
    assert split_special("<m><m>", [AddedToken("<m>", 3, lstrip=True, rstrip=True)])[1][:2] == (3, 6)
    w = AddedToken("<w>", 4, single_word=True)
    assert split_special("a<w>", [w]) == [(0, 4, None)] and split_special("<w>_", [w]) == [(0, 4, None)]
    assert split_special("é<w>", [w]) == [(0, 4, None)] and split_special("1<w>", [w]) == [(0, 4, None)]
    assert split_special(" <w>.", [w]) == [(0, 1, None), (1, 4, w), (4, 5, None)]
    assert split_special("<w>", [w]) == [(0, 3, w)]


def test_encode_special_shifts_offsets_and_post_processes() -> None:
    enc = encode_special("ab<a>c", [A], _plain)
    assert enc.ids == (97, 98, 1, 99) and enc.offsets == ((0, 1), (1, 2), (2, 5), (5, 6))
    post = encode_special("ab", [A], _plain, template=[7, None, 8, 9], post_process=True)
    assert post.ids == (7, 97, 98, 8, 9) and post.offsets == ((0, 0), (0, 1), (1, 2), (2, 2), (2, 2))
    assert encode_special("ab", [A], _plain, template=[7, None], post_process=False).ids == (97, 98)


def test_template_of() -> None:
    bert = load_tokenizer_json(named_path("bert-base-uncased")).data
    assert template_of(bert) == [101, None, 102] and template_of({"post_processor": None}) == []
    from tokspec.errors import UnsupportedComponentError
    with pytest.raises(UnsupportedComponentError):
        template_of({"post_processor": {"type": "RobertaProcessing"}})


@functools.lru_cache(maxsize=None)
def _flagged(base: str, folder: str) -> str:
    """A copy of a named tokenizer.json with HF's added-token flags switched on."""
    data = load_tokenizer_json(named_path(base)).data
    for t in data["added_tokens"]:
        t["lstrip"] = t["rstrip"] = t["content"] in ("[MASK]", "<pad>")
        t["single_word"] = t["content"] in ("[SEP]", "</s>")
        t["lstrip"] = t["lstrip"] or t["content"] in ("[CLS]", "<s>")
    path = Path(folder) / f"{base}-flags.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


EXTRA = ["x  [MASK]  y", "a[SEP]b", "a [SEP] b", "\n[CLS]\t", "_[SEP]_", "x  <pad>  y", "a</s>b", " <s>x",
         "hi <|endoftext|> there<|fim_prefix|>", "[CLS][SEP] a"]


@pytest.mark.parametrize("ref,prod", [("reference:cl100k_base", "tiktoken:cl100k_base"),
                                      ("reference:bert-base-uncased", "hf:bert-base-uncased"),
                                      ("reference:mon-unigram", "hf:mon-unigram"),
                                      ("flags:bert-base-uncased", ""), ("flags:mon-unigram", "")])
@pytest.mark.parametrize("mode", ["special", "special-post"])
def test_reference_special_mode_equals_production(ref: str, prod: str, mode: str,
                                                  tmp_path_factory: pytest.TempPathFactory) -> None:
    if ref.startswith("flags:"):
        path = _flagged(ref[6:], str(tmp_path_factory.getbasetemp()))
        ref, prod = f"reference:{path}", f"hf:{path}"
    a, b = load_engine(f"{mode}:{ref}"), load_engine(f"{mode}:{prod}")
    texts = special_texts(a.inner, b.inner)[::4] + EXTRA  # type: ignore[attr-defined]
    promoted = 0
    for text in texts:
        c = compare(a, b, text)
        assert c.agree, format_comparison(a, b, c)
        promoted += any(i in special_ids(b.inner) for i in c.a.arrays.ids.tolist())  # type: ignore[union-attr,attr-defined]
    assert promoted >= 2 * len(special_ids(b.inner))  # type: ignore[attr-defined] # texts really use them


def test_special_engine_names() -> None:
    tik = load_engine("special:tiktoken:cl100k_base")
    assert tik.info.name == "special:tiktoken:cl100k_base" and tik.encode("<|endoftext|>").ids == (100257,)
    assert tik.decode([100257]) == "<|endoftext|>" and not hasattr(tik, "special_tokens")  # type: ignore[attr-defined]
    post = load_engine("special-post:hf:bert-base-uncased")
    enc = post.encode("hi")
    assert enc.ids == (101, 7632, 102) and enc.offsets == ((0, 0), (0, 2), (2, 2))
    with pytest.raises(UnknownEngineError, match="no special mode"):
        load_engine("special:pretok:cl100k_base")
    with pytest.raises(UnknownEngineError, match="inner engine"):
        load_engine("special:")
    from tokspec import list_engines
    names = [n for n, _ in list_engines()]
    assert "special:ENGINE" in names and "special-post:ENGINE" in names


def test_cli_diff_in_special_mode(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    inputs = tmp_path / "in.txt"
    inputs.write_text("a <|endoftext|> b\n<|fim_prefix|>x<|fim_suffix|>\n", encoding="utf-8")
    code = cli_main(["diff", "special:reference:cl100k_base", "special:tiktoken:cl100k_base", "--inputs",
                     str(inputs), "--workers", "1", "--report", str(tmp_path / "r")])
    assert code == 0, capsys.readouterr()
    code = cli_main(["diff", "special:tiktoken:cl100k_base", "tiktoken:cl100k_base", "--inputs", str(inputs),
                     "--workers", "1", "--report", str(tmp_path / "r")])
    assert code == 1  # special mode and text mode differ exactly on such texts
    code = cli_main(["diff", "reference:cl100k_base", "tiktoken:cl100k_base", "--special", "--inputs", str(inputs),
                     "--workers", "1", "--report", str(tmp_path / "r"), "--json"])
    out = capsys.readouterr().out
    assert code == 0 and '"special:tiktoken:cl100k_base"' in out
