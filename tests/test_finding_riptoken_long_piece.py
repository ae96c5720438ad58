"""The bench peer riptoken 0.2.4 reverses the ids of a pretoken of >= 500 bytes
(corpora/production/findings_bench_peers.json). tiktoken and ``fast:cl100k_base`` give
``encode_ordinary``'s ids on the stored text; riptoken is checked live when it is installed (the
``bench`` extra, deliberately not in the test extra)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from tokspec import load_engine

FINDINGS = Path(__file__).resolve().parents[1] / "corpora" / "production" / "findings_bench_peers.json"


def test_riptoken_long_piece_finding() -> None:
    (record,) = json.loads(FINDINGS.read_text(encoding="utf-8"))
    text, want, theirs = record["text"], record["encode_ordinary"]["ids"], record["library_output"]["ids"]
    assert len(text.encode()) >= 500 and theirs != want and Counter(theirs) == Counter(want)
    assert theirs == want[::-1]
    tiktoken = load_engine(record["engine"])
    assert tiktoken.library_encoding.encode_ordinary(text) == want  # type: ignore[attr-defined]
    assert list(load_engine("fast:cl100k_base").encode(text).ids or ()) == want
    assert load_engine("fast:cl100k_base").encode_ids(text).tolist() == want  # type: ignore[attr-defined]
    try:
        import riptoken
    except ImportError:
        return  # the recorded output above stands; the bench extra installs riptoken
    lib = tiktoken.library_encoding  # type: ignore[attr-defined]
    core = riptoken.CoreBPE(lib._mergeable_ranks, {}, lib._pat_str)
    if riptoken.__version__ == record["library"].split()[1]:  # the recorded release: still the bug
        assert core.encode_ordinary(text) == theirs
    assert core.encode_ordinary(text[:499]) == lib.encode_ordinary(text[:499])
