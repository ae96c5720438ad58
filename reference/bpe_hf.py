"""Reference BPE with HF ``tokenizers`` semantics, read from a ``tokenizer.json``.

The pipeline, in HF's order, for ``encode(text, add_special_tokens=False)``:

1. Added tokens: the text is cut at occurrences of the file's non-special ``added_tokens``, first
   those with ``normalized=false`` then those with ``normalized=true``, each pass leftmost-longest;
   an added token becomes its own id, never pretokenized. Added tokens marked ``special`` are
   ignored (special tokens are ordinary text in tokspec, as in the ``hf:`` production adapter).
2. Pretokenizer: ``Split`` (a regex, run here by the ``regex`` module, or a literal string; behaviors
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

import functools
from dataclasses import dataclass
from typing import Any, Literal

import regex

from tokspec._types import Encoder, Encoding, EngineInfo, Span
from tokspec.errors import UnsupportedComponentError, VocabularyError
from tokspec.reference.pretok_regex import pin_unicode_16
from tokspec.vocab import TokenizerJson

__all__ = ["BpeModel", "HfBpeEncoder", "Dialect", "bytes_to_unicode", "bpe_word", "model_from_json",
           "oniguruma_compat", "parse_pretokenizer"]

#: How a Split regex is read: ``"oniguruma"`` as HF tokenizers reads it (see
#: :func:`oniguruma_compat`), ``"regex"`` as tiktoken and the ``regex`` module read it.
Dialect = Literal["oniguruma", "regex"]

#: HF ByteLevel's own split regex (the original GPT-2 pattern).
GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
WHITESPACE_PATTERN = r"\w+|[^\w\s]+"


@functools.lru_cache(maxsize=1)
def bytes_to_unicode() -> dict[int, str]:
    """GPT-2's byte -> printable character table: printable Latin-1 bytes map to themselves, the
    other 68 bytes to U+0100.. in byte order. A bijection from 256 bytes to 256 characters."""
    keep = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), 256)]
    table = {b: chr(b) for b in keep}
    extra = 0
    for b in range(256):
        if b not in table:
            table[b] = chr(256 + extra)
            extra += 1
    return table


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


# ---- pretokenizers -----------------------------------------------------------------------------

_INTERVAL_PLUS = regex.compile(r"""
    (?P<atom> \\[pP]\{[^}]*\} | \\x\{[0-9a-fA-F]+\} | \\x[0-9a-fA-F]{2} | \\u[0-9a-fA-F]{4}
            | \\. | \[(?:\\.|[^\]\\])*\] | [^\\\[\](){}|?*+] )
    (?P<interval> \{\d+(?:,\d*)?\} )
    \+""", regex.VERBOSE)


def oniguruma_compat(pattern: str) -> str:
    r"""Rewrite ``ATOM{n,m}+`` to ``(?:ATOM{n,m})+``: how Oniguruma (HF tokenizers) reads it.

    In Perl, PCRE, the ``regex`` module and tiktoken's Rust regex, ``{n,m}+`` is a *possessive*
    interval; Oniguruma's Ruby syntax reads it as the interval repeated one or more times, so
    ``\p{N}{1,3}+`` matches any run of digits there (finding ``hf-onig-interval-plus``). Atoms
    handled: ``\p{..}``, a hexadecimal escape (``\xHH``, ``\x{H..}``, ``\uHHHH``), any other escape, a
    bracket class without nested brackets, a literal character; a group before ``{n,m}+`` is left
    alone (none of the production patterns has one). O(len).
    """
    return _INTERVAL_PLUS.sub(lambda m: f"(?:{m['atom']}{m['interval']})+", pattern)

_BEHAVIORS = ("Isolated", "Removed", "MergedWithPrevious", "MergedWithNext")


@dataclass(frozen=True)
class SplitStep:
    """One splitting pass: ``pattern`` matches are delimiters handled by ``behavior``."""

    pattern: regex.Pattern[str]
    behavior: str
    invert: bool = False

    def apply(self, text: str, start: int, end: int) -> list[Span]:
        """Cut ``text[start:end]`` into pieces (absolute spans); empty pieces are dropped.

        An empty match is a zero-width delimiter, as in HF, except one right after a non-empty
        match, which Oniguruma's search never reports (the ``regex`` module's V1 mode does)."""
        runs: list[tuple[int, int, bool]] = []  # (start, end, is_delimiter), tiling the range
        pos = start
        after_match = False  # does pos end a non-empty match?
        for m in self.pattern.finditer(text, start, end):
            if m.start() == m.end() == pos and after_match:
                continue  # Oniguruma never reports an empty match right after a match
            after_match = m.end() > m.start()
            if m.start() > pos:
                runs.append((pos, m.start(), self.invert))
            runs.append((m.start(), m.end(), not self.invert))
            pos = m.end()
        if pos < end:
            runs.append((pos, end, self.invert))
        return [(s, e) for s, e in _apply_behavior(runs, self.behavior) if s < e]


def _apply_behavior(runs: list[tuple[int, int, bool]], behavior: str) -> list[Span]:
    """Turn delimiter/gap runs into pieces by HF's SplitDelimiterBehavior rules.

    ``MergedWithPrevious``: a delimiter joins the piece before it unless that piece ended with a
    delimiter (so of two adjacent delimiters the second stands alone); ``MergedWithNext`` is the
    mirror image, read from the right.
    """
    if behavior == "Isolated":
        return [(s, e) for s, e, _ in runs]
    if behavior == "Removed":
        return [(s, e) for s, e, delim in runs if not delim]
    backwards = behavior == "MergedWithNext"
    out: list[list[int]] = []
    neighbour_delim = False  # was the run visited just before a delimiter?
    for s, e, delim in (reversed(runs) if backwards else runs):
        if delim and not neighbour_delim and out:
            out[-1][0 if backwards else 1] = s if backwards else e
        else:
            out.append([s, e])
        neighbour_delim = delim
    return [(s, e) for s, e in (reversed(out) if backwards else out)]


#: A pretoken as the model sees it: its string, and per model character the index of the original
#: character it comes from and whether it was inserted (ByteLevel's prefix space) rather than read.
Word = tuple[str, list[int], list[bool]]


@dataclass(frozen=True)
class Pretokenizer:
    """A parsed pre_tokenizer: splitting passes in order, then optionally ByteLevel (a prefix space
    on each piece not starting with one, its regex split, the byte-to-character mapping)."""

    steps: tuple[SplitStep, ...]
    byte_level: bool
    byte_split: SplitStep | None = None
    prefix_space: bool = False

    def pieces(self, text: str, start: int, end: int) -> list[Span]:
        """Spans of ``text[start:end]`` after the splitting passes (before ByteLevel)."""
        spans = [(start, end)]
        for step in self.steps:
            spans = [piece for s, e in spans for piece in step.apply(text, s, e)]
        return spans

    def words(self, text: str, start: int, end: int) -> list[Word]:
        """The model's input words for ``text[start:end]`` (see :data:`Word`)."""
        out: list[Word] = []
        for s, e in self.pieces(text, start, end):
            seg, origin, inserted = text[s:e], list(range(s, e)), [False] * (e - s)
            if not self.byte_level:
                out.append((seg, origin, inserted))
                continue
            if self.prefix_space and not seg.startswith(" "):
                seg, origin, inserted = " " + seg, [s, *origin], [True, *inserted]
            cuts = self.byte_split.apply(seg, 0, len(seg)) if self.byte_split else [(0, len(seg))]
            out.extend(_byte_word(seg[a:b], origin[a:b], inserted[a:b]) for a, b in cuts)
        return out


def _byte_word(seg: str, origin: list[int], inserted: list[bool]) -> Word:
    """ByteLevel mapping of ``seg``: one model character per UTF-8 byte, keeping its character's
    origin and inserted flag."""
    table = bytes_to_unicode()
    chars: list[str] = []
    new_origin: list[int] = []
    new_inserted: list[bool] = []
    for ch, o, ins in zip(seg, origin, inserted):
        for b in ch.encode("utf-8"):
            chars.append(table[b])
            new_origin.append(o)
            new_inserted.append(ins)
    return "".join(chars), new_origin, new_inserted


def compile_split_regex(source: str, dialect: Dialect) -> regex.Pattern[str]:
    """Compile a Split regex as ``dialect`` reads it, with Unicode 16.0 character properties (the
    tables of both HF's Oniguruma and tiktoken's Rust regex; see ``pretok_regex.pin_unicode_16``)."""
    if dialect == "oniguruma":
        source = oniguruma_compat(source)
    return regex.compile("(?-f)" + pin_unicode_16(source), flags=regex.V1)


def _split_step(pt: dict[str, Any], dialect: Dialect) -> SplitStep:
    pattern = pt.get("pattern", {})
    if "Regex" in pattern:
        compiled = compile_split_regex(pattern["Regex"], dialect)
    elif "String" in pattern:
        compiled = regex.compile(regex.escape(pattern["String"]))
    else:
        raise UnsupportedComponentError(f"Split pattern {pattern!r}: expected Regex or String")
    if pt.get("behavior") not in _BEHAVIORS:
        raise UnsupportedComponentError(f"Split behavior={pt.get('behavior')!r}; supported: {_BEHAVIORS}")
    return SplitStep(compiled, pt["behavior"], bool(pt.get("invert", False)))


def parse_pretokenizer(pt: dict[str, Any] | None, dialect: Dialect = "oniguruma") -> Pretokenizer:
    """Parse the ``pre_tokenizer`` JSON object; see the module docstring for what is supported.

    ``dialect`` says how Split regexes are read (:data:`Dialect`)."""
    if pt is None:
        return Pretokenizer((), False)
    items = pt["pretokenizers"] if pt.get("type") == "Sequence" else [pt]
    steps: list[SplitStep] = []
    for i, item in enumerate(items):
        kind = item.get("type")
        if kind == "Split":
            steps.append(_split_step(item, dialect))
        elif kind == "Whitespace":
            steps.append(SplitStep(compile_split_regex(WHITESPACE_PATTERN, dialect), "Removed", invert=True))
        elif kind == "ByteLevel" and i == len(items) - 1:
            split = SplitStep(compile_split_regex(GPT2_PATTERN, dialect), "Isolated") \
                if item.get("use_regex", True) else None
            return Pretokenizer(tuple(steps), True, split, bool(item.get("add_prefix_space", False)))
        else:
            raise UnsupportedComponentError(f"pre_tokenizer {kind!r} at position {i} is unsupported "
                                            "(supported: Split, Whitespace, ByteLevel last)")
    return Pretokenizer(tuple(steps), False)


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
