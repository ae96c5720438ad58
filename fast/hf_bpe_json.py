"""Engine ``fast:PATH.json`` for HF byte-level BPE tokenizer.json files (Llama 3 / Qwen2 style).

The file's pipeline, run on the compiled kernels of ``tokspec.fast``:

1. Added tokens that are not special (special ones are ordinary text, as in ``hf:``): the text is
   cut at their leftmost-longest occurrences, ``normalized=false`` ones first, then
   ``normalized=true`` ones in what is left (the normalizer is the identity here, so only the order
   of the two passes matters). An added token is one token over its characters.
2. Pretokenizer: ``Split(Regex, Isolated)`` steps then ``ByteLevel(use_regex=false)`` (or
   ``ByteLevel`` alone, with or without its GPT-2 regex). One Split whose regex Peek2 knows
   (:data:`PEEK2_SPLITS`: Llama 3's, Qwen2's) runs on the compiled Peek2 kernel; any other Splits
   run on the ``regex`` module (``tokspec.fast._split_regex``: patterns it would read differently
   from HF's Oniguruma are refused, Unicode pinned to HF's 16.0 assignments). The engine
   description says which.
3. Model: the merge list replaced by ranks (:mod:`tokspec.fast.hf_bpe_ranks`, conditions R1-R4
   checked at build, else a named refusal), encoded by the compiled backtracking BPE
   (``tokspec.fast.bpe_kernel``; theorem: the corollaries of ``bpe_backtrack``; spec property "BPE
   exactness"). ``ignore_merges``: a pretoken equal to a token the backtracking encoder never
   produces (unreachable under ranks) is emitted whole; every other token is its own encoding
   (the kernel's build self-check), so the flag changes nothing else.

Offsets follow ``tokspec._types`` (a token splitting a character covers the whole character).
``decode``: HF's ByteLevel decoder (each token's characters mapped back to bytes, a token with a
character outside the alphabet taken as its UTF-8; the joined bytes decoded with U+FFFD for
invalid sequences). Normalizer: none, an empty ``Sequence``, or ``NFC`` (Qwen2's): text Python
calls NFC goes straight to the kernels; in other text, the windows NFC changes are normalized in
Python by the core's aligned NFC (``tokspec.fast._nfc_windows``), offsets mapped back through its
origins. Refused, with the reason: any other normalizer, other
pretokenizers, post-processors that edit offsets, added tokens with ``lstrip``/``rstrip``/
``single_word``. Cost per text: O(n) Peek2 + the backtracking's O(n * P), plus O(k) Python work per
added-token occurrence and per candidate pretoken of ``ignore_merges``.
"""

from __future__ import annotations

import base64
import hashlib
import unicodedata
from typing import Any

import numpy as np
import regex

from tokspec import Encoder, EngineInfo
from tokspec import __version__ as _VERSION
from tokspec._types import EncodingArrays
from tokspec.errors import UnsupportedComponentError
from tokspec.fast.bpe_decode import FlatBytes
from tokspec.fast._nfc_windows import hull_offsets, nfc_aligned
from tokspec.fast._split_regex import RegexSplits
from tokspec.fast.bpe_kernel import CompiledBPE, utf8_of_code_points
from tokspec.fast.hf_bpe_ranks import byte_alphabet, ranks_from_model
from tokspec.fast.peek2_unicode import code_points
from tokspec.fast.pretok_peek2 import spans_of_code_points
from tokspec.rank_families import QWEN2
from tokspec.formats.vocab import TokenizerJson

__all__ = ["FastHfBpeEncoder", "GPT2_SPLIT", "LLAMA3_SPLIT", "PEEK2_SPLITS", "pretokenizer", "ranks_digest"]

#: Llama 3's Split regex as its tokenizer.json holds it (tiktoken's cl100k before possessives).
LLAMA3_SPLIT = (r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
                r"""|\s*[\r\n]+|\s+(?!\S)|\s+""")
#: Split regex -> Peek2 pattern name, for the patterns HF reads as Peek2 implements them (no
#: ``{n,m}+``, no anchors: Oniguruma and the regex module agree on them).
PEEK2_SPLITS = {LLAMA3_SPLIT: "llama3", QWEN2: "qwen2"}
#: HF ByteLevel's own regex (``use_regex=true``): the original GPT-2 pattern.
GPT2_SPLIT = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""


def ranks_digest(ranks: dict[bytes, int]) -> str:
    """sha256 of the ranks written as a ``.tiktoken`` file (base64 token, space, rank; by rank):
    the compiled tables depend on the ranks only, so a file converted from tiktoken ranks shares
    the cached tables of ``fast:`` on those ranks."""
    lines = (base64.b64encode(t) + b" " + str(r).encode() + b"\n" for t, r in sorted(ranks.items(), key=lambda kv: kv[1]))
    return hashlib.sha256(b"".join(lines)).hexdigest()


def _refuse(where: str, what: str) -> UnsupportedComponentError:
    return UnsupportedComponentError(f"{where}: {what}; fast: does not run it (use reference:PATH or hf:PATH)")


def _is_nfc(spec: Any, where: str) -> bool:
    """Whether the normalizer is NFC (Qwen2's); none and an empty Sequence are the identity."""
    if spec is None or (spec.get("type") == "Sequence" and not spec.get("normalizers")):
        return False
    if spec.get("type") == "NFC":
        return True
    raise _refuse(where, f"normalizer type={spec.get('type')!r} (only none, an empty Sequence or NFC)")


def _check_post_processor(spec: Any, where: str) -> None:
    """Accept post-processors that leave ids and offsets alone with add_special_tokens=False."""
    if spec is None or spec.get("type") in ("TemplateProcessing", "BertProcessing"):
        return
    if spec.get("type") == "Sequence":
        for item in spec.get("processors") or []:
            _check_post_processor(item, where)
        return
    if spec.get("type") in ("ByteLevel", "RobertaProcessing") and not spec.get("trim_offsets", True):
        return
    raise _refuse(where, f"post_processor type={spec.get('type')!r} with "
                         f"trim_offsets={spec.get('trim_offsets')!r} edits offsets")


def pretokenizer(spec: Any, where: str) -> str | RegexSplits:
    """``Sequence[Split(Regex, Isolated)..., ByteLevel(use_regex=false)]`` (or ``ByteLevel`` alone
    with its GPT-2 regex): a Peek2 pattern name for one Split Peek2 knows, else RegexSplits."""
    items: list[dict[str, Any]] | None
    if isinstance(spec, dict) and spec.get("type") == "ByteLevel":
        items = [{"type": "Split", "pattern": {"Regex": GPT2_SPLIT}, "behavior": "Isolated"},
                 {**spec, "use_regex": False}] if spec.get("use_regex", True) else [spec]
    else:
        items = spec.get("pretokenizers") if isinstance(spec, dict) and spec.get("type") == "Sequence" else None
    if not items:
        raise _refuse(where, f"pre_tokenizer {spec!r:.120} is not Sequence[Split..., ByteLevel]")
    level, sources = items[-1], []
    if level.get("type") != "ByteLevel" or level.get("use_regex", True) or level.get("add_prefix_space"):
        raise _refuse(where, f"pre_tokenizer step {level!r:.120} is not ByteLevel(use_regex=false, "
                             "add_prefix_space=false) last")
    for split in items[:-1]:
        source = (split.get("pattern") or {}).get("Regex") if split.get("type") == "Split" else None
        if source is None or split.get("behavior") != "Isolated" or split.get("invert"):
            raise _refuse(where, f"pre_tokenizer step {split!r:.160} is not Split(Regex, Isolated)")
        sources.append(source)
    if len(sources) == 1 and sources[0] in PEEK2_SPLITS:
        return PEEK2_SPLITS[sources[0]]
    return RegexSplits(sources, where)


Run = tuple[int, int, int]  # (start, end, added token id or -1 for ordinary text)
Pass = tuple[regex.Pattern[str], dict[str, int]]


def _added_passes(added: list[dict[str, Any]], where: str) -> list[list[Pass]]:
    """Non-special added tokens as (alternation longest first, content -> id), in two lists: the
    not-normalized pass, the normalized pass (each empty or of one pass)."""
    tables: list[dict[str, int]] = [{}, {}]
    for tok in added:
        if tok["special"] or not tok["content"]:
            continue
        for flag in ("lstrip", "rstrip", "single_word"):
            if tok[flag]:
                raise _refuse(where, f"added token {tok['content']!r} has {flag}=true")
        tables[1 if tok["normalized"] else 0][tok["content"]] = int(tok["id"])
    return [[(regex.compile("|".join(regex.escape(c) for c in sorted(t, key=len, reverse=True))), t)]
            if t else [] for t in tables]


class FastHfBpeEncoder(Encoder):
    """``fast:PATH.json`` (module docstring). Build: ranks checked (O(vocab bytes)), the compiled
    BPE (cached by the file's sha256), one kernel pass to find the tokens it never produces."""

    def __init__(self, tj: TokenizerJson, name: str) -> None:
        data, where = tj.data, f"{tj.path!r}"
        checked = ranks_from_model(data["model"], where)  # first: the model is the deepest reason
        self.nfc = _is_nfc(data.get("normalizer"), where)
        _check_post_processor(data.get("post_processor"), where)
        self.pretokenizer = pretokenizer(data.get("pre_tokenizer"), where)
        self.pattern = self.pretokenizer if isinstance(self.pretokenizer, str) else None
        self.added = _added_passes(tj.added_tokens, where)
        self.bpe = CompiledBPE.from_ranks(checked.ranks, ranks_digest(checked.ranks))
        self.whole = self._unreachable(checked.ranks) if checked.ignore_merges else {}
        self._whole_lengths = np.array(sorted({len(b) for b in self.whole}), dtype=np.int64)
        self._specials = {t["content"]: int(t["id"]) for t in tj.added_tokens if t["special"]}
        self._decode_table = _decode_table(data["model"]["vocab"], tj.added_tokens)
        self._flat: FlatBytes | None = None
        self.info = EngineInfo(
            name=name, kind="tokenizer", library="tokspec.fast", library_version=_VERSION,
            vocab_sha256=tj.sha256, thread_safe=True,
            description=f"{self._pretokenizer_words()} + compiled backtracking BPE on ranks from "
                        f"{checked.n_merges} rank-consistent merges of {tj.path}")

    def _pretokenizer_words(self) -> str:
        if self.pattern is not None:
            return f"Peek2 {self.pattern} pretokenizer"
        n = len(self.pretokenizer.patterns)  # type: ignore[union-attr]
        return f"regex-module pretokenizer ({n} Split regex{'es' if n != 1 else ''} Peek2 does not know)"

    def _unreachable(self, ranks: dict[bytes, int]) -> dict[bytes, int]:
        """Tokens the kernel never produces: a reachable token encodes to itself (the kernel's
        build self-check), so the ids missing from the encodings of all tokens are the rest."""
        toks = list(ranks)
        bounds = np.concatenate([[0], np.cumsum([len(t) for t in toks])]).astype(np.int64)
        produced = set(self.bpe.encode_pieces(b"".join(toks), bounds).tolist())
        return {t: i for t, i in ranks.items() if i not in produced}

    # -- encoding --------------------------------------------------------------------------------

    def _cut(self, text: str, passes: list[Pass], runs: list[Run]) -> list[Run]:
        """Cut the ordinary runs (id -1) of ``runs`` (covering ``text``) at the added tokens of
        ``passes``, one pass after the other."""
        for pattern, table in passes:
            out: list[tuple[int, int, int]] = []
            for s, e, tid in runs:
                if tid >= 0:
                    out.append((s, e, tid))
                    continue
                gap = s
                for m in pattern.finditer(text, s, e):
                    if m.start() > gap:
                        out.append((gap, m.start(), -1))
                    out.append((m.start(), m.end(), table[m.group()]))
                    gap = m.end()
                if gap < e:
                    out.append((gap, e, -1))
            runs = out
        return runs

    def _encode_arrays(self, text: str) -> EncodingArrays:
        if self.nfc and not unicodedata.is_normalized("NFC", text):
            return self._encode_nfc(text)
        # NFC text (or no normalizer): normalizing changes nothing, both passes cut the text
        return self._encode_runs(text, self._cut(text, self.added[0] + self.added[1], [(0, len(text), -1)]))

    def _encode_nfc(self, text: str) -> EncodingArrays:
        """HF's order: not-normalized added tokens cut the original text, each ordinary run is
        normalized on its own (``tokspec.fast._nfc_windows``: the core's aligned NFC, HF's tables,
        on the windows NFC changes), normalized added tokens cut the result; offsets go back through
        the contract's origins (hull per token)."""
        parts: list[str] = []
        pieces: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        runs: list[Run] = []
        at = 0
        for s, e, tid in self._cut(text, self.added[0], [(0, len(text), -1)]):
            if tid >= 0:
                norm, lo, hi = text[s:e], np.arange(s, e, dtype=np.int64), np.arange(s + 1, e + 1, dtype=np.int64)
                changed = np.zeros(e - s, dtype=bool)
            else:
                norm, lo, hi, changed = nfc_aligned(text, s, e)
            runs.append((at, at + len(norm), tid))
            at += len(norm)
            parts.append(norm)
            pieces.append((lo, hi, changed))
        norm = "".join(parts)
        out = self._encode_runs(norm, self._cut(norm, self.added[1], runs))
        lo, hi, changed = (np.concatenate([p[k] for p in pieces]) for k in range(3))
        return EncodingArrays(out.ids, *hull_offsets(lo, hi, changed, out.starts, out.ends))

    def _encode_runs(self, text: str, runs: list[Run]) -> EncodingArrays:
        cps = code_points(text)
        splits = self.pretokenizer if isinstance(self.pretokenizer, RegexSplits) else None
        pinned = splits.pin(text) if splits is not None else text
        pieces: list[tuple[np.ndarray, np.ndarray]] = []
        fixed: list[tuple[int, int, int]] = []  # spans emitted as one given token
        for s, e, tid in runs:
            if tid >= 0:
                pieces.append((np.array([s], dtype=np.int64), np.array([e], dtype=np.int64)))
                fixed.append((s, e, tid))
            else:
                if splits is not None:
                    pieces.append(splits.spans(pinned, s, e))
                else:
                    starts, ends = spans_of_code_points(cps[s:e], self.pretokenizer)  # type: ignore[arg-type]
                    pieces.append((starts + s, ends + s))
        if not pieces:
            return EncodingArrays(np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.int64))
        starts = np.concatenate([p[0] for p in pieces])
        ends = np.concatenate([p[1] for p in pieces])
        out = self.bpe.encode_text(cps, starts, ends)
        if self.whole:  # added-token spans are not pretokens: left out of the ignore_merges lookup
            ordinary = ~np.isin(starts, np.array([f[0] for f in fixed], dtype=np.int64))
            fixed += self._whole_pretokens(cps, starts[ordinary], ends[ordinary])
        return _splice(out, fixed) if fixed else out

    def _whole_pretokens(self, cps: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> list[tuple[int, int, int]]:
        """``ignore_merges``: pretokens spelling an unreachable token (candidates by byte length)."""
        data, cbs = utf8_of_code_points(cps)
        blen = cbs[ends] - cbs[starts]
        found = []
        for k in np.flatnonzero(np.isin(blen, self._whole_lengths)).tolist():
            tid = self.whole.get(data[cbs[starts[k]]:cbs[ends[k]]].tobytes())
            if tid is not None:
                found.append((int(starts[k]), int(ends[k]), tid))
        return found

    # -- decoding --------------------------------------------------------------------------------

    def decode(self, ids: list[int]) -> str:
        """HF's ByteLevel decoder (module docstring)."""
        if self._flat is None:
            self._flat = FlatBytes(_Pairs(self._decode_table))
        return self._flat.decode(ids)

    def special_tokens(self) -> dict[str, int]:
        return dict(self._specials)

    @property
    def n_vocab(self) -> int:
        return max(self._decode_table) + 1

    def token_piece(self, token_id: int) -> str:
        return self._decode_table.get(token_id, b"").decode("utf-8", errors="backslashreplace")


class _Pairs:
    """``(bytes, id)`` pairs with a ``.items()``, for FlatBytes (two ids may share bytes)."""

    def __init__(self, table: dict[int, bytes]) -> None:
        self.table = table

    def items(self) -> list[tuple[bytes, int]]:
        return [(b, i) for i, b in self.table.items()]


def _decode_table(vocab: dict[str, int], added: list[dict[str, Any]]) -> dict[int, bytes]:
    """id -> bytes, by HF's ByteLevel decoder rule per token (added tokens override the vocab)."""
    alphabet = byte_alphabet()

    def token_bytes(tok: str) -> bytes:
        if all(c in alphabet for c in tok):
            return bytes(alphabet[c] for c in tok)
        return tok.encode("utf-8")

    table = {int(i): token_bytes(t) for t, i in vocab.items()}
    table.update({int(t["id"]): token_bytes(t["content"]) for t in added})
    return table


def _splice(out: EncodingArrays, fixed: list[tuple[int, int, int]]) -> EncodingArrays:
    """Replace the tokens of each span ``[s, e)`` by the one token ``id`` (tokens of a span are
    those starting in it: pretokens are character spans, and no token is empty)."""
    assert out.ids is not None
    ids, starts, ends = out.ids.copy(), out.starts.copy(), out.ends.copy()
    keep = np.ones(len(ids), dtype=bool)
    for s, e, tid in fixed:
        lo, hi = np.searchsorted(out.starts, [s, e], side="left").tolist()
        ids[lo], starts[lo], ends[lo] = tid, s, e
        keep[lo + 1:hi] = False
    return EncodingArrays(ids[keep], starts[keep], ends[keep])
