"""lopt's rules decided from structure (tokspec.fast.merge_rules / merge_structure): the decisions
for every family, exactness on tokenizers trained here (fuzzed texts and >= 1 MB), the fuzz target
over tiny models with random settings, declared structures, and threads in a plain `python -c`."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings

from tokspec import Encoder, Encoding, EngineInfo, load_engine, models
from tokspec.fast import merge_lopt
from tokspec.fast.merge_engines import LoptEncoder, merge_text
from tokspec.fast.merge_rules import decide
from tokspec.fast.parallel import Runner
from tokspec.fuzz import merge_models as mm

#: model kind -> the rule its structure must give (None: serial, with the reason in ``why``).
TRAINED = {"hf-bpe": "space-after-letter", "hf-wordpiece": "space", "hf-unigram": "space-after-letter",
           "spm-bpe": "spm-space", "spm-unigram": None, "spm-unigram-bytes": None,
           "spm-unigram-identity": None}


@pytest.fixture(scope="module", params=sorted(TRAINED))
def trained(request: pytest.FixtureRequest) -> tuple[str, Encoder]:
    return request.param, load_engine(models.engine_name(request.param))


def test_trained_models_get_their_structural_rule(trained: tuple[str, Encoder]) -> None:
    kind, engine = trained
    dec = merge_lopt.decision(engine)
    assert (None if dec.rule is None else dec.rule.name) == TRAINED[kind], dec.describe()
    if dec.rule is None:
        assert "float32" in dec.why  # sentencepiece Unigram: finding M6, not an unknown setting


def test_named_vocabularies_are_instances_of_the_structural_rules() -> None:
    want = {"tiktoken:cl100k_base": "M2", "tiktoken:o200k_base": "M2", "hf:bert-base-uncased": "M3w",
            "hf:mon-unigram": "M3u", "fast:cl100k_base": "M2"}
    for name, theorem in want.items():
        assert merge_lopt.decision(load_engine(name)).why == theorem, name


def _cased_wordpiece() -> Encoder:
    from tokspec.engines._hf import HfEngine
    from tokspec.formats.vocab import load_tokenizer_json

    tj = load_tokenizer_json(models.trained_model("hf-wordpiece"))
    tj.data["normalizer"]["lowercase"] = False
    return HfEngine("hf:wordpiece-cased", tj)


@pytest.mark.parametrize("chunk_len", [1, 3, 7])
def test_lopt_equals_serial_on_fuzzed_texts(trained: tuple[str, Encoder], chunk_len: int) -> None:
    import random

    _, engine = trained
    rng = random.Random(chunk_len)
    cuts = 0
    for engine_ in (engine, _cased_wordpiece()) if trained[0] == "hf-wordpiece" else (engine,):
        for _ in range(300):
            text = "".join(rng.choice(mm.TEXT_ALPHABET) for _ in range(rng.randint(0, 30)))
            result = merge_text(engine_, text, strategy="lopt", chunk_len=chunk_len)
            assert result.encoding == engine_.encode(text), repr(text)
            cuts += len(result.trace.anchors)
    assert cuts > 0 or TRAINED[trained[0]] is None


def test_lopt_equals_serial_on_a_megabyte(trained: tuple[str, Encoder]) -> None:
    from tokspec.app.bench.parallel import generate_text

    kind, engine = trained  # spm Unigram kinds are serial by decision (finding M6): lopt must still equal serial
    text = generate_text(1_000_000, seed=11)
    lopt = LoptEncoder(engine, runner=Runner("threads", 2), chunk_len=60_000)
    assert lopt.encode_arrays(text).same_as(engine.encode_arrays(text))


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(engine=mm.tiny_tokenizer(), text=mm.merge_text())
def test_hyp_structural_rules_hold_on_tiny_models(engine: Encoder | None, text: str) -> None:
    verdict = mm.structural_rule_check(engine, text)
    assert verdict.holds, (verdict.witness, mm.describe(engine))


def test_unknown_or_unmet_settings_are_serial_with_a_reason() -> None:
    cases = [None, {"format": "regex-bpe", "pattern": r"\S+|\s"},
             {"format": "tokenizer.json", "normalizer": {"type": "Strip"},
              "pre_tokenizer": {"type": "Whitespace"}, "model": {"type": "WordPiece"}},
             {"format": "tokenizer.json", "normalizer": None, "pre_tokenizer":
              {"type": "Metaspace", "split": False}, "model": {"type": "Unigram"}},
             {"format": "tokenizer.json", "normalizer": None, "pre_tokenizer": {"type": "Whitespace"},
              "model": {"type": "WordPiece"}, "added_tokens": [{"content": "a b", "special": False}]},
             {"format": "sentencepiece", "model_type": "bpe", "split_by_whitespace": False},
             {"format": "what"}]
    for structure in cases:
        dec = decide(structure)
        assert dec.rule is None and dec.why and "serial" in dec.describe(), structure


class _Declared(Encoder):
    """One token per whitespace-separated word or space; declares a WordPiece-like structure."""

    info = EngineInfo("toy:declared", "tokenizer", "toy", "0", None)
    merge_structure = {"format": "tokenizer.json", "normalizer": None,
                       "pre_tokenizer": {"type": "WhitespaceSplit"}, "model": {"type": "WordLevel"}}

    def _encode(self, text: str) -> Encoding:
        import re
        spans = [m.span() for m in re.finditer(r"\S+", text)]
        return Encoding.of([hash(text[s:e]) % 1000 for s, e in spans], spans)


def test_declared_structure_is_used_and_reported() -> None:
    engine = _Declared()
    result = merge_text(engine, "one two  three four " * 20, strategy="lopt", chunk_len=7)
    assert result.trace.params["structure"] == "declared by the engine"
    assert result.trace.params["rule"] == "space" and result.trace.anchors
    assert result.encoding == engine.encode("one two  three four " * 20)
    assert "rule space" in LoptEncoder(engine).info.description


def test_lopt_runs_in_python_dash_c_without_main_guard() -> None:
    code = ("import tokspec; from tokspec import models; "
            "t = 'word and more ' * 20000; "
            "e = tokspec.load_engine('lopt:hf:bert-base-uncased'); "
            "print(e.encode(t) == tokspec.load_engine('hf:bert-base-uncased').encode(t))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.stdout.strip() == "True", out.stderr[-2000:]
    out = subprocess.run([sys.executable, "-"], input=code.replace("; ", "\n"), capture_output=True,
                         text=True, timeout=300)
    assert out.stdout.strip() == "True", out.stderr[-2000:]


def test_stitch_is_numpy_and_widens() -> None:
    import numpy as np

    from tokspec import EncodingArrays

    a = EncodingArrays(np.array([1, 2]), np.array([0, 1]), np.array([1, 3]))
    b = EncodingArrays(np.array([3]), np.array([1]), np.array([2]))
    out = merge_lopt.stitch([a, b], [0, 3], widen=True)
    assert out.ids.tolist() == [1, 2, 3] and out.starts.tolist() == [0, 1, 3]
    assert out.ends.tolist() == [1, 3, 5]
    assert json.dumps(merge_lopt.stitch([a, b], [0, 3], widen=False).starts.tolist()) == "[0, 1, 4]"


@pytest.mark.slow
def test_finding_m6_spm_unigram_float32_replays() -> None:
    """corpora/merge/spm_unigram_float32.json: the window encodes differently from the text's start
    (replayed when this machine's trained model is the recorded one: training text is machine-local)."""
    import hashlib
    from pathlib import Path

    import sentencepiece

    from tokspec.app.bench.parallel import generate_text

    rec = json.loads((Path(__file__).parents[1] / "corpora/merge/spm_unigram_float32.json").read_text())
    # the model the witness was found with is stored beside it (training text is machine-local)
    path = Path(__file__).parents[1] / "corpora/merge/spm_unigram_float32.model"
    assert hashlib.sha256(path.read_bytes()).hexdigest() == rec["model_sha256"]
    w0, w1 = rec["window"]
    text = generate_text(2_000_000, seed=1)
    proc = sentencepiece.SentencePieceProcessor(model_file=str(path))
    alone = proc.encode(text[w0:w1])
    assert alone == rec["ids_window_alone"] == proc.encode(text[250005:w1])[-len(alone):]
    assert proc.encode(text[:w1])[-len(alone):] != alone


_WORDS_PROGRAM = '''
import json, re, sys
config = json.load(open(sys.argv[1]))
hello = {"tokspec": 1, "name": "words", "version": "1", "structure": config["structure"]}
print(json.dumps(hello), flush=True)
for line in sys.stdin:
    r = json.loads(line); t = r["text"]
    spans = [m.span() for m in re.finditer(config["tokens"], t)]
    print(json.dumps({"id": r["id"], "ids": [len(t[s:e]) for s, e in spans], "offsets": spans}),
          flush=True)
'''


@pytest.mark.parametrize(("token_pattern", "exit_code"), [(r"\S+", 0), (r"\S+ ?", 1)])
def test_merge_check_tests_a_cmd_declaration(tmp_path: object, capsys: pytest.CaptureFixture[str],
                                             token_pattern: str, exit_code: int) -> None:
    """A cmd: program declares a whitespace-split structure; merge-check encodes with the declared
    rule and finds the lie when its tokens really hold the following space."""
    import shlex
    from pathlib import Path

    from tokspec.app.cli import main

    prog = Path(str(tmp_path)) / "words.py"
    prog.write_text(_WORDS_PROGRAM)
    declared = json.dumps({"format": "tokenizer.json", "normalizer": None,
                           "pre_tokenizer": {"type": "WhitespaceSplit"}, "model": {"type": "WordLevel"}})
    config = Path(str(tmp_path)) / "c.json"
    config.write_text(json.dumps({"structure": json.loads(declared), "tokens": token_pattern}))
    name = f"cmd:{shlex.quote(sys.executable)} {prog} {config}"
    inputs = Path(str(tmp_path)) / "in.txt"
    inputs.write_text("one two three\nfour  five six seven\n")
    code = main(["merge-check", name, "--strategy", "lopt", "--inputs", str(inputs), "--chunk-len", "3",
                 "--report", str(Path(str(tmp_path)) / "rep"), "--minimize-seconds", "1"])
    out = capsys.readouterr().out
    assert code == exit_code, out
    assert "declared by the engine" in out and "rule space (M3w)" in out


@pytest.mark.parametrize("name", ["fast:cl100k_base", "fast:mon-unigram", "bpe-openai:cl100k_base"])
def test_lopt_over_fast_engines_equals_serial(name: str) -> None:
    import random

    engine = load_engine(name)
    rng = random.Random(3)
    cuts = 0
    for _ in range(200):
        text = "".join(rng.choice(mm.TEXT_ALPHABET) for _ in range(rng.randint(0, 30)))
        result = merge_text(engine, text, strategy="lopt", chunk_len=3)
        assert result.encoding == engine.encode(text), repr(text)
        cuts += len(result.trace.anchors)
    assert cuts > 50
