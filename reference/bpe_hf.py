"""Reference BPE with HF ``tokenizers`` semantics, read from a ``tokenizer.json``.

The pipeline, in HF's order, for ``encode(text, add_special_tokens=False)``:

1. Added tokens: the text is cut at occurrences of the file's non-special ``added_tokens``, first
   those with ``normalized=false`` then those with ``normalized=true``, each pass leftmost-longest;
   an added token becomes its own id, never pretokenized. Added tokens marked ``special`` are
   ignored (special tokens are ordinary text in tokspec, as in the ``hf:`` production adapter).
2. Pretokenizer (:mod:`tokspec.reference.bpe_hf_pretok`, whose names this module re-exports):
   ``Split`` (a regex, run here by the ``regex`` module, or a literal string; behaviors
   ``Isolated``, ``Removed``, ``MergedWithPrevious``, ``MergedWithNext``; ``invert``), ``Whitespace``
   (matches of ``\\w+|[^\\w\\s]+``), ``ByteLevel`` (with ``add_prefix_space`` a space before each
   piece that does not start with one, optionally the GPT-2 regex, then every UTF-8 byte mapped to
   a printable character by the GPT-2 ``bytes_to_unicode`` table), and ``Sequence`` of those with
   ``ByteLevel`` last.
3. Model ``BPE`` on each pretoken (:func:`bpe_word`): one symbol per character (the
   ``continuing_subword_prefix`` on every symbol but the first, the ``end_of_word_suffix`` on the last;
   a character missing from the vocabulary becomes its ``<0xXX>`` byte tokens under ``byte_fallback``,
   else ``unk_token``, consecutive unknowns fused under ``fuse_unk``), then repeatedly merge the
   adjacent pair with the lowest merge rank (leftmost on ties; the rank of a pair listed twice is its
   last position, as HF builds a hash map from the list). ``ignore_merges``: a pretoken that is itself
   a vocabulary entry is emitted whole.
4. Offsets: a token covers the original characters of its symbols (byte-level symbols map to the
   character containing the byte): the ``tokspec._types`` convention. A token made only of the
   inserted prefix space covers nothing: the empty span before the character it precedes (HF
   reports that character's span instead).

Everything else raises :class:`~tokspec.errors.UnsupportedComponentError` naming the component:
any normalizer, ``dropout > 0``, a post-processor that edits
offsets (``trim_offsets=true``), added tokens with ``lstrip``/``rstrip``/``single_word``.
Post-processors that only add special tokens (``TemplateProcessing``, ``BertProcessing``) are
accepted: with ``add_special_tokens=False`` they add nothing. Decoders are irrelevant to encoding.
Split regexes run on the ``regex`` module with Unicode 16.0 character properties (HF's and
tiktoken's tables; the module itself has 17.0); by default they are first rewritten by
:func:`oniguruma_compat` so they mean what HF's Oniguruma makes of them (``dialect="regex"`` keeps
the tiktoken reading). Case-insensitive groups use simple case folding; Oniguruma folds multi-char
too, which matters for no production pattern (their ``(?i:...)`` hold ASCII contractions only).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tokspec._types import Encoder, Encoding, EngineInfo, Span
from tokspec.errors import UnsupportedComponentError, VocabularyError
from tokspec.reference.bpe_hf_pretok import (  # noqa: F401 - re-exported: bpe_hf's public names
    _BEHAVIORS, GPT2_PATTERN, WHITESPACE_PATTERN, Dialect, Pretokenizer, SplitStep, Word, _apply_behavior,
    _byte_word, bytes_to_unicode, compile_split_regex, oniguruma_compat, parse_pretokenizer)
from tokspec.formats.vocab import TokenizerJson

__all__ = ["BpeModel", "HfBpeEncoder", "Dialect", "bytes_to_unicode", "bpe_word", "model_from_json",
           "oniguruma_compat", "parse_pretokenizer"]

@dataclass(frozen=True)
class BpeModel:
    """The ``model`` object of a BPE tokenizer.json. ``merges[(left_id, right_id)] = (rank, new_id)``."""

    vocab: dict[str, int]
    merges: dict[tuple[int, int], tuple[int, int]]
    unk_token: str | None = None
    continuing_subword_prefix: str | None = None
    end_of_word_suffix: str | None = None
    fuse_unk: bool = False
    byte_fallback: bool = False
    ignore_merges: bool = False


def _merge_pairs(raw: list[Any]) -> list[tuple[str, str]]:
    """Merges as pairs, from either serialization (``"a b"`` strings or ``[a, b]`` lists)."""
    pairs = []
    for i, m in enumerate(raw):
        parts = m.split(" ") if isinstance(m, str) else m
        if not isinstance(parts, list) or len(parts) != 2 or not all(isinstance(p, str) for p in parts):
            raise VocabularyError(f"merge #{i} must be 'LEFT RIGHT' or [LEFT, RIGHT], got {m!r}")
        pairs.append((parts[0], parts[1]))
    return pairs


def model_from_json(model: dict[str, Any], *, ignore_merges: bool | None = None) -> BpeModel:
    """Build a :class:`BpeModel` from the JSON ``model`` object; ``ignore_merges`` overrides the file's.

    Raises VocabularyError for a merge naming a token outside the vocabulary (as HF does) and
    UnsupportedComponentError for ``dropout > 0``. O(vocab + merges).
    """
    if model.get("dropout") not in (None, 0, 0.0):
        raise UnsupportedComponentError(f"BPE dropout={model['dropout']!r} is random; unsupported")
    vocab: dict[str, int] = dict(model["vocab"])
    prefix = model.get("continuing_subword_prefix") or None
    merges: dict[tuple[int, int], tuple[int, int]] = {}
    for rank, (a, b) in enumerate(_merge_pairs(model.get("merges", []))):
        new = a + b[len(prefix or ""):]  # the right side loses its continuing prefix
        for tok in (a, b, new):
            if tok not in vocab:
                raise VocabularyError(f"merge #{rank} {a!r} {b!r}: token {tok!r} is not in the vocab")
        merges[(vocab[a], vocab[b])] = (rank, vocab[new])  # a later duplicate overwrites, as in HF
    chosen = bool(model.get("ignore_merges", False)) if ignore_merges is None else ignore_merges
    return BpeModel(vocab, merges, model.get("unk_token"), prefix, model.get("end_of_word_suffix") or None,
                    bool(model.get("fuse_unk", False)), bool(model.get("byte_fallback", False)), chosen)


Symbol = tuple[int, int, int]  # (token id, first char index in the word, end char index)


def _initial_symbols(model: BpeModel, word: str) -> list[Symbol]:
    """One symbol per character of ``word`` (byte-fallback tokens and unknowns as HF forms them)."""
    symbols: list[Symbol] = []
    unk_open = False  # the last symbol is an unknown that a following unknown may fuse into
    for i, ch in enumerate(word):
        key = (model.continuing_subword_prefix or "") + ch if i > 0 else ch
        if i == len(word) - 1 and model.end_of_word_suffix:
            key += model.end_of_word_suffix
        if key in model.vocab:
            symbols.append((model.vocab[key], i, i + 1))
            unk_open = False
            continue
        codes = [f"<0x{b:02X}>" for b in key.encode("utf-8")]
        if model.byte_fallback and all(c in model.vocab for c in codes):
            symbols.extend((model.vocab[c], i, i + 1) for c in codes)
            unk_open = False
        elif model.unk_token is not None:
            if model.unk_token not in model.vocab:
                raise VocabularyError(f"unk_token={model.unk_token!r} is not in the vocabulary")
            if unk_open and model.fuse_unk:
                symbols[-1] = (symbols[-1][0], symbols[-1][1], i + 1)
            else:
                symbols.append((model.vocab[model.unk_token], i, i + 1))
            unk_open = True
        # else: no unk token, the character is silently dropped, as HF does
    return symbols


def bpe_word(model: BpeModel, word: str) -> list[Symbol]:
    """BPE-encode one pretoken: ``(id, start, end)`` per token, spans in characters of ``word``.

    The loop of the definition: merge the adjacent pair of lowest merge rank, leftmost on ties,
    until no adjacent pair is a merge. O(m^2) for m characters (each step scans all pairs).
    """
    if model.ignore_merges and word in model.vocab:
        return [(model.vocab[word], 0, len(word))]
    symbols = _initial_symbols(model, word)
    while len(symbols) > 1:
        best: tuple[int, int, int] | None = None  # (rank, position, new id)
        for i in range(len(symbols) - 1):
            hit = model.merges.get((symbols[i][0], symbols[i + 1][0]))
            if hit is not None and (best is None or hit[0] < best[0]):
                best = (hit[0], i, hit[1])
        if best is None:
            break
        _, i, new_id = best
        symbols[i:i + 2] = [(new_id, symbols[i][1], symbols[i + 1][2])]
    return symbols


# ---- added tokens, post-processor, the engine ----------------------------------------------------

_NOOP_POST = ("TemplateProcessing", "BertProcessing")


def _check_post_processor(pp: dict[str, Any] | None) -> None:
    """Accept post-processors that leave ids and offsets alone when no special tokens are added."""
    if pp is None or pp.get("type") in _NOOP_POST:
        return
    if pp.get("type") == "Sequence":
        for item in pp.get("processors", []):
            _check_post_processor(item)
        return
    if pp.get("type") in ("ByteLevel", "RobertaProcessing") and not pp.get("trim_offsets", True):
        return
    raise UnsupportedComponentError(
        f"post_processor {pp.get('type')!r} with trim_offsets={pp.get('trim_offsets')!r} edits offsets; "
        "unsupported")


def _added_token_passes(added: list[dict[str, Any]]) -> list[dict[str, int]]:
    """Two ``{content: id}`` tables of non-special added tokens: non-normalized, then normalized."""
    passes: list[dict[str, int]] = [{}, {}]
    for tok in added:                    # entries checked complete by TokenizerJson (as HF checks)
        if tok["special"] or not tok["content"]:
            continue
        for flag in ("lstrip", "rstrip", "single_word"):
            if tok[flag]:
                raise UnsupportedComponentError(f"added token {tok['content']!r} has {flag}=true")
        passes[1 if tok["normalized"] else 0][tok["content"]] = tok["id"]
    return passes


def _cut_added(text: str, start: int, end: int, table: dict[str, int]) -> list[tuple[int, int, int | None]]:
    """Cut ``text[start:end]`` at leftmost-longest occurrences of ``table``'s strings.

    Returns ``(start, end, id)`` runs, id None for ordinary text. O(n * k) for k added tokens.
    """
    runs: list[tuple[int, int, int | None]] = []
    pos = gap = start
    while pos < end and table:
        hits = [c for c in table if text.startswith(c, pos, end)]
        if not hits:
            pos += 1
            continue
        best = max(hits, key=len)
        if pos > gap:
            runs.append((gap, pos, None))
        runs.append((pos, pos + len(best), table[best]))
        pos = gap = pos + len(best)
    if gap < end:
        runs.append((gap, end, None))
    return runs


class HfBpeEncoder(Encoder):
    """Engine ``reference:PATH.json`` for BPE files: the pipeline of the module docstring.

    ``ignore_merges`` overrides the file's flag (to reproduce a library that ignores it);
    ``dialect="regex"`` reads Split regexes as tiktoken does instead of as HF does. Cost:
    O(n * k) added-token scan, one regex pass per Split, O(m^2) per pretoken of m symbols.
    """

    def __init__(self, tj: TokenizerJson, name: str, *, ignore_merges: bool | None = None,
                 dialect: Dialect = "oniguruma") -> None:
        data = tj.data
        if data.get("normalizer") is not None:
            raise UnsupportedComponentError(
                f"{tj.path!r}: normalizer {data['normalizer'].get('type')!r} is unsupported")
        _check_post_processor(data.get("post_processor"))
        self.model = model_from_json(data["model"], ignore_merges=ignore_merges)
        self.pretokenizer = parse_pretokenizer(data.get("pre_tokenizer"), dialect)
        self.added = _added_token_passes(tj.added_tokens)
        self._by_id = {i: t for t, i in self.model.vocab.items()}
        self.info = EngineInfo(name=name, kind="tokenizer", library="tokspec.reference.bpe_hf",
                               library_version="1", vocab_sha256=tj.sha256,
                               description=f"reference HF BPE semantics of {tj.path}")

    def _encode(self, text: str) -> Encoding:
        ids: list[int] = []
        offsets: list[Span] = []
        for s0, e0, tid0 in _cut_added(text, 0, len(text), self.added[0]):
            runs = [(s0, e0, tid0)] if tid0 is not None else _cut_added(text, s0, e0, self.added[1])
            for s, e, tid in runs:
                if tid is not None:
                    ids.append(tid)
                    offsets.append((s, e))
                    continue
                for word in self.pretokenizer.words(text, s, e):
                    self._encode_word(word, ids, offsets)
        return Encoding.of(ids, offsets)

    def _encode_word(self, word: Word, ids: list[int], offsets: list[Span]) -> None:
        """Append the tokens of one word; a token covers the original characters of its model
        characters that were read, and a token made only of inserted ones gets an empty span."""
        string, origin, inserted = word
        for tid, s, e in bpe_word(self.model, string):
            read = [origin[k] for k in range(s, e) if not inserted[k]]
            ids.append(tid)
            offsets.append((read[0], read[-1] + 1) if read else (origin[s], origin[s]))

    def token_piece(self, token_id: int) -> str:
        return self._by_id.get(token_id, str(token_id))
