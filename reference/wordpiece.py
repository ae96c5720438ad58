"""The reference WordPiece encoder (BERT): normalize, pretokenize, then greedy longest-match-first.

Definition (HF ``tokenizers`` ``WordPiece``, which follows Google's BERT): for each pretoken
(a "word") of at most ``max_input_chars_per_word`` characters, repeatedly take the LONGEST vocabulary
entry that is a prefix of the rest of the word, written with ``continuing_subword_prefix`` (``##``)
unless it starts the word. If at some point no entry matches, the WHOLE word becomes one
``unk_token`` (the pieces found so far are discarded); a word longer than the limit is ``unk_token``
as well. Offsets are original-text character spans (see ``bert_normalizer``): a token over
normalized characters ``[s, e)`` of a word covers ``(spans[s].start, spans[e-1].end)``.

Complexity: O(m^2) substring lookups per word of m characters (m <= 100 by default). No caches.
Out of scope: the post-processor ([CLS]/[SEP]), truncation and padding; special tokens are
ordinary text (compare with HF using ``encode_special_tokens = True``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tokspec import Encoder, Encoding, EngineInfo
from tokspec.errors import TokspecError, UnsupportedComponentError, VocabularyError
from tokspec.formats.normalize import Aligned
from tokspec.reference.bert_normalizer import BertNormalizerConfig, bert_normalize
from tokspec.reference.bert_pretokenizer import bert_pretokenize
from tokspec.formats.vocab import TokenizerJson, load_tokenizer_json

__all__ = ["WordPieceConfig", "wordpiece_word", "WordPieceReference",
           "wordpiece_encoder_from_tokenizer_json"]


@dataclass(frozen=True)
class WordPieceConfig:
    """A WordPiece vocabulary and its options. Invariant: ``unk_token in vocab``."""

    vocab: dict[str, int]
    unk_token: str = "[UNK]"
    prefix: str = "##"
    max_chars: int = 100

    def __post_init__(self) -> None:
        if self.unk_token not in self.vocab:
            raise VocabularyError(f"WordPiece unk_token={self.unk_token!r} is not in the vocabulary")
        if self.max_chars < 0:
            raise VocabularyError(f"max_input_chars_per_word={self.max_chars} must be >= 0")


def wordpiece_word(word: str, cfg: WordPieceConfig) -> list[tuple[int, int, int]]:
    """Tokens ``(id, start, end)`` (characters of ``word``) of one non-empty word."""
    whole_unk = [(cfg.vocab[cfg.unk_token], 0, len(word))]
    if len(word) > cfg.max_chars:
        return whole_unk
    out: list[tuple[int, int, int]] = []
    start = 0
    while start < len(word):
        found = _longest_match(word, start, cfg)
        if found is None:
            return whole_unk          # one unmatched position spoils the whole word
        out.append((cfg.vocab[found[0]], start, found[1]))
        start = found[1]
    return out


def _longest_match(word: str, start: int, cfg: WordPieceConfig) -> tuple[str, int] | None:
    """The longest vocabulary entry at ``start`` (prefixed unless start == 0) and its end."""
    for end in range(len(word), start, -1):
        piece = word[start:end] if start == 0 else cfg.prefix + word[start:end]
        if piece in cfg.vocab:
            return piece, end
    return None


class WordPieceReference(Encoder):
    """Reference BERT WordPiece engine: ``bert_normalize`` -> ``bert_pretokenize`` -> greedy."""

    def __init__(self, cfg: WordPieceConfig, norm: BertNormalizerConfig, name: str,
                 vocab_sha256: str | None = None, *, offsets: str = "contract") -> None:
        if offsets not in ("contract", "library"):
            raise TokspecError(f"offsets={offsets!r} must be 'contract' or 'library'")
        self.cfg, self.norm, self.offsets = cfg, norm, offsets
        self.pieces = {i: p for p, i in cfg.vocab.items()}
        self.info = EngineInfo(name=name, kind="tokenizer", library="tokspec.reference",
                               library_version="0", vocab_sha256=vocab_sha256,
                               description=f"reference WordPiece, {len(cfg.vocab)} entries")

    def token_piece(self, token_id: int) -> str:
        return self.pieces.get(token_id, str(token_id))

    def words(self, text: str) -> list[Aligned]:
        """The normalized pretokens of ``text``."""
        return bert_pretokenize(bert_normalize(text, self.norm))

    def _encode(self, text: str) -> Encoding:
        ids: list[int] = []
        offsets: list[tuple[int, int]] = []
        for word in self.words(text):
            for tid, s, e in wordpiece_word(word.text, self.cfg):
                ids.append(tid)
                offsets.append(word.contract_span(s, e) if self.offsets == "contract"
                               else word.original_span(s, e))
        return Encoding.of(ids, offsets, [self.pieces[i] for i in ids])


def _check_pipeline(tj: TokenizerJson) -> None:
    pre = tj.data.get("pre_tokenizer") or {}
    if pre.get("type") != "BertPreTokenizer":
        raise UnsupportedComponentError(
            f"{tj.path}: pre_tokenizer type={pre.get('type')!r}; the WordPiece reference supports "
            "BertPreTokenizer only")
    for tok in tj.added_tokens:
        if not tok["special"]:
            raise UnsupportedComponentError(f"{tj.path}: non-special added token {tok.get('content')!r}")


def wordpiece_encoder_from_tokenizer_json(tj: TokenizerJson | str | Path, name: str, *,
                                          offsets: str = "contract",
                                          cjk_ranges: str = "hf") -> WordPieceReference:
    """Reference engine for a WordPiece tokenizer.json with BertNormalizer + BertPreTokenizer.
    ``offsets="library"`` reproduces HF's raw offsets instead of the contract's;
    ``cjk_ranges="bert"`` spaces CJK ideographs by Google BERT's ranges instead of HF's
    (see ``bert_normalizer``)."""
    if not isinstance(tj, TokenizerJson):
        tj = load_tokenizer_json(tj)
    m = tj.data["model"]
    if m.get("type") != "WordPiece":
        raise VocabularyError(f"{tj.path!r}: model.type={m.get('type')!r}, expected 'WordPiece'")
    _check_pipeline(tj)
    cfg = WordPieceConfig(vocab={str(k): int(v) for k, v in m["vocab"].items()},
                          unk_token=str(m.get("unk_token", "[UNK]")),
                          prefix=str(m.get("continuing_subword_prefix", "##")),
                          max_chars=int(m.get("max_input_chars_per_word", 100)))
    norm = BertNormalizerConfig.from_json(tj.data.get("normalizer") or {}, cjk_ranges=cjk_ranges)
    return WordPieceReference(cfg, norm, name, tj.sha256, offsets=offsets)
