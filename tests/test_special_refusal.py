"""tiktoken's refusal of disallowed special tokens in special mode (``special-refuse:``,
``special-allow:IDS:``): the reference's definition case by case, the tiktoken adapter against
tiktoken's own ``encode``, the reference against tiktoken on texts spelling every special token, their
fragments and near misses (cl100k_base, o200k_base), and the comparison's two outcomes (both refuse:
agreement; one refuses: ``special refusal differs``) in ``compare``, ``tokspec diff`` and the plugin."""

from __future__ import annotations

import ast
import functools
import json
from pathlib import Path
from typing import Any

import pytest

from tokspec import Encoder, Encoding, EngineInfo, UnknownEngineError, load_engine
from tokspec.app.cli import main as cli_main
from tokspec.app.special_text import SpecialTextSource, special_texts
from tokspec.cluster import cause_of
from tokspec.diff import compare, format_comparison, run_engine
from tokspec.engines._bytelevel import _refusal
from tokspec.errors import DisallowedSpecialError
from tokspec.reference.special_mode import AddedToken, encode_special, refused_special
from tokspec.special_mode import mode_name
from tokspec.testing import check_against

X, Y = AddedToken("<x>", 1), AddedToken("<xy>", 2)


def _plain(text: str) -> Encoding:
    return Encoding.of([ord(c) for c in text], [(i, i + 1) for i in range(len(text))])


def test_refused_special_is_leftmost_then_longest() -> None:
    assert refused_special("a<|x|>b<|y|>", ["<|y|>", "<|x|>"]) == "<|x|>"
    assert refused_special("ab<xy>", ["<x", "<xy>", "y>"]) == "<xy>"  # longest of those starting at 2
    assert refused_special("<|x|", ["<|x|>"]) is None and refused_special("", ["<x>"]) is None
    assert refused_special("abc", ["", "c"]) == "c"  # the empty string never occurs
    assert refused_special("z<x>", []) is None
    assert refused_special("<x>", ["<x>"]) == "<x>"  # at position 0 and at the very end
    assert refused_special("ab<x>", ["<x>"]) == "<x>"


def test_encode_special_refuses_before_matching() -> None:
    with pytest.raises(DisallowedSpecialError, match="<xy>") as info:
        encode_special("<x>a<xy>", [X], _plain, disallowed=["<xy>"])
    assert info.value.token == "<xy>" and isinstance(info.value, ValueError)
    allowed = encode_special("a<x>b", [X], _plain, disallowed=["<xy>"])
    assert allowed.ids == (97, 1, 98) and allowed.offsets == ((0, 1), (1, 4), (4, 5))
    assert encode_special("a<x", [X], _plain, disallowed=["<x>"]).ids == (97, 60, 120)  # a fragment is text
    assert "token='<q>'" in str(DisallowedSpecialError("<q>")) and str(DisallowedSpecialError("<q>", "m")) == "m"


@functools.cache
def _tiktoken(vocab: str) -> Any:
    return load_engine(f"tiktoken:{vocab}").library_encoding


def _library(vocab: str, text: str, allowed: set[str]) -> tuple[int, ...] | str:
    """tiktoken's own ``encode(text, allowed_special=allowed)``: ids, or the refused token."""
    try:
        return tuple(_tiktoken(vocab).encode(text, allowed_special=allowed))
    except ValueError as exc:  # the token is the repr in tiktoken's first line
        token = ast.literal_eval(str(exc).split("disallowed special token ", 1)[1].split(".\n", 1)[0])
        assert isinstance(token, str)
        return token


def _ours(engine: Encoder, text: str) -> tuple[int, ...] | str:
    try:
        encoding = engine.encode(text)
    except DisallowedSpecialError as exc:
        return exc.token
    assert encoding.ids is not None
    return encoding.ids


def _forms(vocab: str) -> list[tuple[str, set[str]]]:
    table = load_engine(f"tiktoken:{vocab}").special_tokens()  # type: ignore[attr-defined]
    first, last = min(table, key=table.__getitem__), max(table, key=table.__getitem__)
    return [("special-refuse:", set()), (f"special-allow:{table[first]}:", {first}),
            (f"special-allow:{table[first]},{table[last]}:", {first, last})]


@pytest.mark.parametrize("vocab", ["cl100k_base", "o200k_base"])
def test_adapter_and_reference_equal_tiktoken_encode(vocab: str) -> None:
    """Every form, on every special text of the generator plus 60 seeded ones: the adapter gives
    tiktoken's ids or refuses with the token tiktoken refuses on; the reference gives the same."""
    tik = load_engine(f"tiktoken:{vocab}")
    texts = special_texts(tik) + [SpecialTextSource(3, [tik]).text() for _ in range(60)]
    refusals = 0
    for prefix, allowed in _forms(vocab):
        adapter, ref = load_engine(prefix + f"tiktoken:{vocab}"), load_engine(prefix + f"reference:{vocab}")
        for text in texts:
            want = _library(vocab, text, allowed)
            assert _ours(adapter, text) == want, (prefix, text)
            assert _ours(ref, text) == want, (prefix, text)
            refusals += isinstance(want, str)
    assert refusals > 50  # the texts do spell disallowed tokens


def test_refusal_reads_tiktokens_message_only() -> None:
    try:
        _tiktoken("cl100k_base").encode("a<|endofprompt|>")
    except ValueError as exc:
        out = _refusal(exc)
    assert isinstance(out, DisallowedSpecialError) and out.token == "<|endofprompt|>"
    other = ValueError("Encountered something else.\n")
    assert _refusal(other) is other  # any other ValueError stays a fault
    assert _refusal(ValueError("x Encountered text corresponding to disallowed special token 'a'.\n")).args[0][0] == "x"


def test_names_and_setup_errors() -> None:
    assert load_engine("special-refuse:tiktoken:cl100k_base").info.name == "special-refuse:tiktoken:cl100k_base"
    both = load_engine("special-allow:100257,100276:reference:cl100k_base")
    assert both.info.name == "special-allow:100257,100276:reference:cl100k_base"
    assert "'<|endofprompt|>', '<|endoftext|>'" in both.info.description
    assert "allowed=all" in load_engine("special:tiktoken:cl100k_base").info.description
    assert both.encode("<|endofprompt|><|endoftext|>").ids == (100276, 100257)
    for bad in ("special-allow:tiktoken:cl100k_base", "special-allow:1x:tiktoken:cl100k_base",
                "special-allow:100257", "special-allow:,:tiktoken:cl100k_base"):
        with pytest.raises(UnknownEngineError, match="special-allow needs special ids"):
            load_engine(bad)
    with pytest.raises(UnknownEngineError, match=r"ids=\[5\] are not special tokens"):
        load_engine("special-allow:100257,5:tiktoken:cl100k_base")
    with pytest.raises(UnknownEngineError, match="no refusal"):
        load_engine("special-refuse:hf:bert-base-uncased")
    with pytest.raises(UnknownEngineError, match="inner engine"):
        load_engine("special-refuse:")
    assert mode_name("tiktoken:cl100k_base") == "special:tiktoken:cl100k_base"
    assert mode_name("a:b", "none") == "special-refuse:a:b" and mode_name("a:b", " None") == "special-refuse:a:b"
    assert mode_name("a:b", "1,2") == "special-allow:1,2:a:b"
    for kept in ("special:a:b", "special-post:a:b", "special-refuse:a:b", "special-allow:1:a:b"):
        assert mode_name(kept, "none") == kept
    from tokspec import list_engines
    names = [n for n, _ in list_engines()]
    assert "special-refuse:ENGINE" in names and "special-allow:IDS:ENGINE" in names


class _Raises(Encoder):
    """An engine raising ``exc`` on every text (a fault unless it is a refusal)."""

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc
        self.info = EngineInfo("raises", "tokenizer", "test", "1", None)

    def _encode(self, text: str) -> Encoding:
        raise self.exc


def test_compare_refusals() -> None:
    refuse_t, refuse_r = load_engine("special-refuse:tiktoken:cl100k_base"), load_engine("special-refuse:reference:cl100k_base")
    special = load_engine("special:tiktoken:cl100k_base")
    both = compare(refuse_t, refuse_r, "hi <|endoftext|>")
    assert both.agree and both.index is None and both.a.refused == both.b.refused == "<|endoftext|>"
    assert compare(refuse_t, _Raises(DisallowedSpecialError("<|fim_prefix|>")), "<|endoftext|>").agree
    one = compare(refuse_t, special, "hi <|endoftext|>")
    assert one.classification == "special refusal differs" and one.b.refused is None
    assert compare(special, refuse_r, "hi <|endoftext|>").classification == "special refusal differs"
    shown = format_comparison(refuse_t, special, one)
    assert "A special-refuse:tiktoken:cl100k_base: REFUSED DisallowedSpecialError" in shown and "FAULT" not in shown
    assert "raises DisallowedSpecialError" in cause_of(refuse_t, special, one).name
    # a refusal beside a crash, or any other error, is an engine fault
    assert compare(refuse_t, _Raises(ValueError("boom")), "<|endoftext|>").classification == "engine fault"
    assert compare(_Raises(KeyError("k")), refuse_r, "<|endoftext|>").classification == "engine fault"
    assert compare(_Raises(ValueError("boom")), special, "x").classification == "engine fault"
    assert run_engine(_Raises(ValueError("boom")), "x").refused is None
    assert compare(refuse_t, refuse_r, "plain <|endoftext").agree  # encoded as text by both


def test_cli_allowed_special(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    inputs = tmp_path / "in.txt"
    inputs.write_text("a <|endoftext|> b\n<|fim_prefix|>x\nplain <|endoftext\n", encoding="utf-8")
    common = ["--inputs", str(inputs), "--workers", "1", "--report", str(tmp_path / "r"), "--quiet"]
    assert cli_main(["diff", "reference:cl100k_base", "tiktoken:cl100k_base", "--allowed-special", "none", *common]) == 0
    assert "special-refuse:reference:cl100k_base vs special-refuse:tiktoken:cl100k_base: 3 inputs, 3 agreed" in capsys.readouterr().out
    assert cli_main(["diff", "reference:cl100k_base", "tiktoken:cl100k_base", "--allowed-special", "100257", *common]) == 0
    assert "special-allow:100257:reference:cl100k_base" in capsys.readouterr().out
    # the default of --special is unchanged: every special token matched, nothing refused
    assert cli_main(["diff", "special-refuse:tiktoken:cl100k_base", "tiktoken:cl100k_base", "--special", *common]) == 1
    out = capsys.readouterr().out
    assert "special refusal differs" in out and "vs special:tiktoken:cl100k_base: 3 inputs, 1 agreed, 2 disagreed" in out
    records = [json.loads(p.read_text(encoding="utf-8")) for p in (tmp_path / "r").glob("*.json")]
    assert sorted(r["classification"] for r in records) == ["special refusal differs"] * 2


def test_plugin_finds_refusal_difference() -> None:
    with pytest.raises(AssertionError, match="special refusal differs"):
        check_against("special-refuse:tiktoken:cl100k_base", "special:tiktoken:cl100k_base",
                      max_examples=50, threads=0, max_seconds=30)
    check_against(load_engine("special-allow:100257:tiktoken:cl100k_base"),
                  load_engine("special-allow:100257:tiktoken:cl100k_base"), max_examples=20, threads=0)


def test_tiktoken_version_has_the_refusal() -> None:
    """The installed tiktoken still refuses by default (what special-refuse: models)."""
    with pytest.raises(ValueError, match="disallowed special token"):
        _tiktoken("o200k_base").encode("<|endoftext|>")
