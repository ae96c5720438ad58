"""Finding ``hf-nfkc-reorder-cluster-nukta`` (corpora/production/findings.json, replayed with the
other production findings by tests/test_engines_production.py::test_finding_replays): here the
other side of it, keyed by the tokenizers version like every finding (tokspec.versions): HF's raw
offsets are positional, the ``hf:`` adapter can only give the cluster, the references are exact."""

from __future__ import annotations

import json

import tokspec
from tokspec.engines._findings import FINDINGS_DIR
from tokspec.versions import check_finding

ID = "hf-nfkc-reorder-cluster-nukta"
NUKTA = 63313  # U+093C's piece; U+1D17D's four byte pieces are the last four tokens


def _record() -> dict[str, object]:
    records = json.loads((FINDINGS_DIR / "findings.json").read_text(encoding="utf-8"))
    return next(r for r in records if r["id"] == ID)


def _tail(ids: list[int], offsets: list[tuple[int, int]]) -> tuple[tuple[int, int], set[tuple[int, int]]]:
    """(the nukta's span, the set of U+1D17D's byte-token spans): the last five tokens."""
    assert ids[-5] == NUKTA, ids
    return tuple(offsets[-5]), {tuple(o) for o in offsets[-4:]}  # type: ignore[return-value]


def test_the_reference_gives_exact_origins() -> None:
    """(fast:mon-unigram agrees with the reference everywhere: tests/test_fast_unigram_*.py.)"""
    text = str(_record()["text"])
    for name in ("reference:mon-unigram",):
        enc = tokspec.load_engine(name).encode(text)
        assert _tail(list(enc.ids or ()), list(enc.offsets)) == ((5, 6), {(4, 5)}), name


def test_hf_is_positional_and_the_adapter_gives_the_cluster() -> None:
    text = str(_record()["text"])
    hf = tokspec.load_engine("hf:mon-unigram")
    raw = hf.library_encode(text)  # type: ignore[attr-defined]
    positional = _tail(raw.ids, raw.offsets) == ((4, 5), {(5, 6)})
    enc = hf.encode(text)
    cluster = _tail(list(enc.ids or ()), list(enc.offsets)) == ((3, 6), {(3, 6)})
    ref = tokspec.load_engine("reference:mon-unigram").encode(text)
    check_finding(ID, "tokenizers", positional and cluster and ref.ids == enc.ids and ref.offsets != enc.offsets,
                  "HF positional (4, 5) for the nukta; hf: the cluster (3, 6); references exact")
