"""The spm adapter's two ways to read sentencepiece's ids in ``encode_arrays``: one int32 buffer
(``return_type="numpy"``, 0.2.3 on) and the list of older releases give the same arrays."""

from __future__ import annotations

import pytest

from tokspec import load_engine, models
from tokspec.engines import _spm

TEXTS = ["", "   ", "Hello world, ﬁ ① Ｆｕｌｌ ㍻", "日本語のテキスト \U0001f642 x\u00ad\u200dy", "a  b \t c\n" * 50]


@pytest.mark.parametrize("key", ["spm-unigram-bytes", "spm-bpe"])
def test_buffer_and_list_ids_give_the_same_arrays(key: str, monkeypatch: pytest.MonkeyPatch) -> None:
    engine = load_engine(models.engine_name(key))
    buffered = [engine.encode_arrays(t) for t in TEXTS]
    monkeypatch.setattr(_spm, "NUMPY_IDS", False)
    listed = [engine.encode_arrays(t) for t in TEXTS]
    assert all(a.same_as(b) for a, b in zip(buffered, listed))
    assert [a.ids.tolist() for a in listed] == [engine.library_processor.encode(t) for t in TEXTS]  # type: ignore[union-attr, attr-defined]
    assert sum(len(a) for a in listed) > 100
