"""A compiled HF Unigram pipeline against the reference and HF ``tokenizers``, for the tests of the
compiled normalizers (``test_fast_hf_maps``, ``test_fast_hf_precompiled``)."""

from __future__ import annotations

from typing import Any

import pytest

from tokspec.formats.unigram_model import UnigramModel


def assert_compiled_equals_reference_and_hf(fast: Any, ref: Any, hf: Any, texts: list[str],
                                            monkeypatch: pytest.MonkeyPatch, *, ids_too: bool = False) -> None:
    """``fast`` (a ``datrie_encoder`` on a tokenizer.json) never takes the Python path (the model's
    ``pretokenize`` fails the test), and on every text gives ``ref``'s ids and contract offsets,
    and HF's ids and library offsets (``ids_too``: and HF's ids from ``encode_ids``)."""
    wants = [ref.encode(t) for t in texts]
    monkeypatch.setattr(UnigramModel, "pretokenize", lambda self, text: pytest.fail("the Python path was taken"))
    for text, want in zip(texts, wants):
        fast.offsets = "contract"
        got = fast.encode(text)
        assert (got.ids, got.offsets) == (want.ids, want.offsets), text
        fast.offsets = "library"
        lib, enc = fast.encode(text), hf.encode(text, add_special_tokens=False)
        assert (list(lib.ids), list(lib.offsets)) == (enc.ids, [tuple(o) for o in enc.offsets]), text
        if ids_too:
            assert fast.encode_ids(text).tolist() == enc.ids
