"""Reference for HF ``WordLevel`` models: each pretoken is one token, looked up whole.

The pipeline (added tokens, normalizer, pretokenizers, contract offsets) is
``bpe_hf_pipeline``'s; only the model differs: a pretoken in ``vocab`` is its id, any other is
``unk_token``. HF refuses a file without an ``unk_token`` string, and fails to encode an unknown
pretoken when ``unk_token`` is not in the vocabulary; so does this engine (VocabularyError). A token covers its whole pretoken. Out of scope: ByteLevel pretokenizers
(refused: a WordLevel vocabulary of byte-level strings is not a format HF models ship).
Cost: one dictionary lookup per pretoken after the pipeline.
"""

from __future__ import annotations

from tokspec._types import EngineInfo, Span
from tokspec.errors import UnsupportedComponentError, VocabularyError
from tokspec.formats.normalize import Aligned
from tokspec.reference.bpe_hf_pipeline import HfBpePipelineEncoder
from tokspec.formats.vocab import TokenizerJson

__all__ = ["WordLevelEncoder"]


class WordLevelEncoder(HfBpePipelineEncoder):
    """Engine ``reference:PATH.json`` for ``model.type == "WordLevel"``."""

    def __init__(self, tj: TokenizerJson, name: str) -> None:
        model = tj.data["model"]
        if not isinstance(model.get("unk_token"), str):
            raise VocabularyError(f"{tj.path}: a WordLevel model needs an unk_token string, got "
                                  f"{model.get('unk_token')!r} (HF refuses the file too)")
        as_bpe = {**tj.data, "model": {"type": "BPE", "vocab": model["vocab"], "merges": [],
                                       "unk_token": model.get("unk_token")}}
        super().__init__(TokenizerJson(tj.path, tj.sha256, as_bpe), name)
        if self.pretokenizer.byte_level:
            raise UnsupportedComponentError(f"{tj.path}: WordLevel with a ByteLevel pre_tokenizer is not supported")
        self.unk: str = model["unk_token"]
        self.info = EngineInfo(name=name, kind="tokenizer", library="tokspec.reference.wordlevel",
                               library_version="1", vocab_sha256=tj.sha256,
                               description=f"reference HF WordLevel pipeline of {tj.path}")

    def _encode_run(self, a: Aligned, s: int, e: int, ids: list[int], offsets: list[Span]) -> None:
        vocab = self.bpe.model.vocab
        for string, origin, _inserted in self.pretokenizer.words(a.text, s, e):
            if string in vocab:
                ids.append(vocab[string])
            elif self.unk in vocab:
                ids.append(vocab[self.unk])
            else:
                raise VocabularyError(f"WordLevel: {string!r} is not in the vocabulary and unk_token "
                                      f"{self.unk!r} is not either")
            offsets.append(a.contract_span(origin[0], origin[-1] + 1))
