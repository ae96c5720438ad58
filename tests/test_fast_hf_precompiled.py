"""Compiled HF ``Precompiled`` (``tokspec.fast._hf_precompiled``, ``_hf_clusters``): the cluster
flags equal ``regex``'s ``\\X`` and the theorem they rest on holds for every pair of classes; the
compiled pipeline equals the general path (``tokspec.formats.hf_pipeline``) with a trained nmt_nfkc
charsmap, alone and in the converted-sentencepiece and ALBERT-like sequences; a converted
sentencepiece model as ``fast:PATH`` takes the compiled path end to end and equals HF ``tokenizers``
(ids, offsets) and ``reference:``. Fast in interpreted mode (a mutation killer); 1 MB is ``slow``."""

from __future__ import annotations

import base64
import functools
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import regex
from hypothesis import example, given
from hypothesis import strategies as st

from tokspec.app.bench.normalizing import normalizing_texts
from tokspec.fast import _hf_clusters, _hf_precompiled
from tokspec.fast._hf_compiled import compiled_plan
from tokspec.fast.unigram_datrie import datrie_encoder
from tokspec.formats.models import trained_model
from tokspec.formats.spm_model import load_spm_model
from tokspec.formats.spm_normalize import CharsMap

from _hf_unigram_checks import assert_compiled_equals_reference_and_hf
from test_fast_hf_norm import _compiled, _data, _general

_X = regex.compile(r"\X", flags=regex.DOTALL)


@functools.lru_cache(maxsize=1)
def _charsmap() -> dict[str, Any]:
    blob = load_spm_model(trained_model("spm-unigram-bytes")).precompiled_charsmap
    return {"type": "Precompiled", "precompiled_charsmap": base64.b64encode(blob).decode()}


_RUNS = {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "}


def _spec(k: int) -> Any:
    """0: Precompiled alone; 1: as HF converts a sentencepiece model; 2: ALBERT-like; 3: two charsmaps
    around NFD (a cluster split by the first one)."""
    pc = _charsmap()
    return [pc, {"type": "Sequence", "normalizers": [pc, _RUNS]},
            {"type": "Sequence", "normalizers": [
                {"type": "Replace", "pattern": {"String": "``"}, "content": "\""}, {"type": "NFKD"},
                {"type": "StripAccents"}, {"type": "Lowercase"}, pc, _RUNS]},
            {"type": "Sequence", "normalizers": [pc, {"type": "NFD"}, pc]}][k]


#: What the charsmap and the clusters act on: nmt_nfkc targets (fullwidth, ligatures, circled
#: digits, controls it deletes, CR LF), marks that join a cluster, Hangul jamo, emoji ZWJ sequences,
#: regional indicators, a Prepend, a SpacingMark, and plain text.
PIECES = list("ab A\u00e9\u0301\u0323\uff21\uff41\ufb01\u2460\u3000\u00a0\x7f\x00\r\n\t\u200b\u200d\u1100\u1161"
              "\u11a8\uac00\U0001f468\U0001f469\U0001f1eb\U0001f1f7\u0600\u0915\u093f\u094d\u2581\u0130\u00df") + [
    "\uff21\u0301", "e\u0301\u0301", "\r\n", "  ", "\U0001f468\u200d\U0001f469", "\u0915\u094d\u0937"]
TEXTS = st.lists(st.sampled_from(PIECES), min_size=0, max_size=14).map("".join)


def _clusters(flags: np.ndarray | None, n: int) -> list[int]:
    sizes: list[int] = []
    for i in range(n):
        if flags is not None and flags[i]:
            sizes[-1] += 1
        else:
            sizes.append(1)
    return sizes


@given(TEXTS)
@example("\r\n\r")
@example("\U0001f1eb\U0001f1f7\U0001f1eb")  # regional indicators pair up, the third is alone
@example("\u0600a\u0915\u094d\u0937")       # Prepend joins the next; a conjunct
@example("\u0915\u094d\u0937\u0301")      # GB9c: the conjunct is one cluster with its mark
@example("\u0915\u0301\u094d\u200d\u0937a")  # GB9c through Extend and ZWJ
@example("\u00a9\u200d\u00a9\u0301\u200d")  # GB11 with two-byte pictographs
@example("\u1100\u1161\u11a8\u1100\uac00\u11a8\u11a8\uac01\u1161")  # Hangul L V T, LV T, LVT V
@example("\u0600\r\u0600\n\u0903")  # Prepend before CR: no join; SpacingMark after LF: no join
@example("\U0001f1eb\U0001f1f7\U0001f1eb\U0001f1f7\U0001f1eb\u0301")  # an odd run of five
@example("\u00a9\u0301\u0301\u200d\u00a9a\u200d\u00a9")  # GB11 through Extend; ZWJ after a letter
@example("\u0915\u094d\u0301\u094d\u0937a\u094d\u0937")  # GB9c: linkers and extends mixed; no consonant first
def test_hyp_joined_equals_regex_clusters(text: str) -> None:
    want = [len(c) for c in _X.findall(text)]
    flags = _hf_clusters.joined(text)
    assert _clusters(flags, len(text)) == want
    assert flags is None or bool(flags.any())  # None exactly when no cluster joins
    compiled = _hf_clusters.joined_cps(np.frombuffer(text.encode("utf-32-le"), dtype=np.int32))
    assert _clusters(compiled, len(text)) == want
    assert compiled is None or bool(compiled.any())


def test_cluster_flags_on_class_representatives() -> None:
    """The compiled rules against \\X on random strings over one character of every class combination."""
    import random
    rng = random.Random(29)
    reps = _representatives()
    for _ in range(3000):
        text = "".join(rng.choice(reps) for _ in range(rng.randint(1, 10)))
        got = _hf_clusters.joined_cps(np.frombuffer(text.encode("utf-32-le"), dtype=np.int32))
        assert _clusters(got, len(text)) == [len(c) for c in _X.findall(text)], [hex(ord(c)) for c in text]


@functools.lru_cache(maxsize=1)
def _representatives() -> list[str]:
    """One character (the first met) of every combination of Grapheme_Cluster_Break,
    Extended_Pictographic and Indic_Conjunct_Break values, over a sample of all code points."""
    props = [f"Grapheme_Cluster_Break={v}" for v in ("CR", "LF", "Control", "Extend", "ZWJ", "Regional_Indicator",
                                                     "Prepend", "SpacingMark", "L", "V", "T", "LV", "LVT")]
    props += ["Extended_Pictographic", *(f"Indic_Conjunct_Break={v}" for v in ("Consonant", "Linker", "Extend"))]
    compiled = [regex.compile(f"\\p{{{p}}}") for p in props]
    reps: dict[tuple[bool, ...], str] = {}
    for cp in [0x0A, 0x0D, 0x1F468, 0x1F1E6, 0x0600, 0x0915, 0x094D, 0x200D, 0x1160, 0x11A8, 0xAC00, 0xAC01,
               *range(0, 0xD800, 7), *range(0xE000, 0x30000, 7), *range(0xE0000, 0xE0200)]:
        c = chr(cp)
        reps.setdefault(tuple(bool(p.match(c)) for p in compiled), c)
    assert len(reps) >= 15
    return list(reps.values())


def test_no_break_needs_a_joiner_for_every_pair_of_classes() -> None:
    """The theorem of tokspec.fast._hf_clusters: two characters outside JOINERS are two clusters."""
    joiner = regex.compile(_hf_clusters.JOINERS)
    outside = [c for c in _representatives() if not joiner.match(c)]
    assert "\n" in outside and "\U0001f468" in outside and "\r" not in outside
    for p in outside:
        for c in outside:
            assert len(_X.findall(p + c)) == 2, (hex(ord(p)), hex(ord(c)))


@given(TEXTS, st.sampled_from(range(4)), st.sampled_from(["always", "first", "never"]))
@example("\x7fy", 0, "always")          # a deletion with nothing before it: HF's spans shift left
@example("\uff21\u0301 a", 0, "always")  # a cluster under 6 bytes replaced whole (the mark is lost)
@example("e\u0301\u0301\u0301b", 1, "always")  # a cluster of 7 bytes: per character
@example("a\r\nb  \x00c", 1, "never")  # CR LF one cluster; a run of spaces; NUL deleted
@example("\u0130\u00df\ufb01 \u2460", 2, "always")  # Lowercase / NFKD growing a character
@example("\uff21\uff21 \ufb01\ufb01\x01x \ufb01\x01\x01y", 0, "always")  # memo hits; a deletion folded into an insertion
@example("\U0001f468\u200d\U0001f469\u0915\u094d\u0937", 3, "first")
def test_hyp_compiled_precompiled_equals_general(text: str, spec: int, scheme: str) -> None:
    data = _data(_spec(spec), scheme)
    assert _compiled(data, text) == _general(data, text)


def test_output_longer_than_the_first_buffer_equals_general() -> None:
    """Replacements that grow the text by far more than the kernel's first buffer (n + 16), and
    clusters of 7 to 17 bytes (only the first 5 bytes are ever written to the lookup buffer)."""
    data = _data(_spec(0))
    for text in ("\ufb01" * 40 + "\ufdfa" * 3, "\ufdfa" * 3, "x" + "\u3377" * 30,
                 "e" + "\u0301" * 5 + " a" + "\u0301" * 8 + " \uff21" + "\u0301" * 3):
        assert _compiled(data, text) == _general(data, text)


def test_replacement_at_pool_offset_zero(tmp_path: Path) -> None:
    """A charsmap built by sentencepiece from two rules (``A`` + U+0301 -> ``B``, ``a`` -> ``bc``):
    its pool starts with ``B``, so the cluster's match is at offset 0 (a found key, not none)."""
    import io

    import sentencepiece
    rules = tmp_path / "rules.tsv"
    rules.write_text("41 301\t42\n61\t62 63\n")
    out = io.BytesIO()
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=iter(["hello world abc"] * 50), model_writer=out, vocab_size=20, minloglevel=2,
        normalization_rule_tsv=str(rules), model_type="unigram", hard_vocab_limit=False)
    path = tmp_path / "rules.model"
    path.write_bytes(out.getvalue())
    blob = load_spm_model(path).precompiled_charsmap
    data = _data({"type": "Precompiled", "precompiled_charsmap": base64.b64encode(blob).decode()})
    for text in ("A\u0301", "xA\u0301 a A\u0301\u0301 A", "a\u0301A\u0301\u0301\u0301"):
        assert _compiled(data, text) == _general(data, text)
    assert _compiled(data, "A\u0301a")[0] == "\u2581Bbc".encode()
    cm = CharsMap.parse(blob, "rules")
    assert cm is not None
    units = np.asarray(cm.units, dtype=np.int64)
    root = int((units[0] >> 10) << ((units[0] & 512) >> 6))
    buf = np.frombuffer("A\u0301".encode() + bytes(9), dtype=np.uint8).copy()
    assert _hf_precompiled._shortest(buf, 3, units, root) == 0  # the key's value: pool offset 0
    assert _hf_precompiled._shortest(buf, 2, units, root) == -1  # never past n, whatever follows
    # a whole cluster's origin end is the furthest of ITS characters (not of those before it)
    state = (np.array([0x78, 0x41, 0x301], np.int32), np.arange(3), np.arange(1, 4),
             np.array([0, 1, 2]), np.array([9, 2, 3]))
    out = _hf_precompiled.precompiled_step(*state, np.array([False, False, True]), units,
                                           np.frombuffer(cm.pool, dtype=np.uint8), root,
                                           np.full(0x110000, -2, dtype=np.int32), 2)
    assert out[0].tolist() == [0x78, 0x42] and out[3].tolist() == [0, 1] and out[4].tolist() == [9, 3]


def test_generated_texts_equal_general() -> None:
    for spec in range(4):
        data = _data(_spec(spec))
        for text in normalizing_texts(40 + spec, 4):
            assert _compiled(data, text) == _general(data, text)


def test_plan_of_charsmaps() -> None:
    """An empty charsmap is the identity (no kernel row); a blob that is no base64, a truncated
    trie, or a pool that is not UTF-8 gets no plan (the general path reports or handles it)."""
    plan = compiled_plan(_data({"type": "Precompiled", "precompiled_charsmap": ""}))
    assert plan is not None and len(plan.charsmaps) == 0
    assert compiled_plan(_data({"type": "Precompiled", "precompiled_charsmap": "!!"})) is None
    truncated = base64.b64encode(b"\xff\x00\x00\x00abcd").decode()
    assert compiled_plan(_data({"type": "Precompiled", "precompiled_charsmap": truncated})) is None
    blob = base64.b64decode(_charsmap()["precompiled_charsmap"])
    assert compiled_plan(_data({"type": "Precompiled", "precompiled_charsmap": base64.b64encode(
        blob + b"\xff\x00").decode()})) is None
    plan = compiled_plan(_data(_spec(3)))
    assert plan is not None and len(plan.charsmaps) == 2 and [len(p) for p in plan.parts] == [0, 1, 0]


def test_decode_and_shortest_key() -> None:
    pool = np.frombuffer("a\x00\u00e9\u20ac\U0001f642\x00".encode(), dtype=np.uint8)
    out = np.zeros(12, dtype=np.int32)
    assert _hf_precompiled._decode(pool, 0, out, 0) == 1 and out[0] == ord("a")
    assert _hf_precompiled._decode(pool, 2, out, 2) == 5 and out[:5].tolist() == [ord("a"), 0, 0xE9, 0x20AC, 0x1F642]
    assert _hf_precompiled._decode(pool, 1, out, 3) == 3
    memo = np.full(0x110000, -2, dtype=np.int32)
    units = np.asarray(_plan_units(), dtype=np.int64)
    root = int((units[0] >> 10) << ((units[0] & 512) >> 6))
    buf = np.zeros(12, dtype=np.uint8)
    at = _hf_precompiled._single(0xFF21, buf, units, root, memo)  # fullwidth A: mapped to "A"
    assert at >= 0 and memo[0xFF21] == at and memo[ord("a")] == -2
    assert _hf_precompiled._single(ord("a"), buf, units, root, memo) == -1 == memo[ord("a")]
    memo[ord("b")] = 7  # a planted entry is what the memo returns
    assert _hf_precompiled._single(ord("b"), buf, units, root, memo) == 7
    buf = np.zeros(12, dtype=np.uint8)
    assert [_hf_precompiled._put_utf8(buf, 0, c) for c in (0x7F, 0x80, 0x7FF, 0x800, 0xFFFF, 0x10000)] == [1, 2, 2, 3, 3, 4]
    assert bytes(buf[:4]) == "\U00010000".encode()
    for c in "\x00\x7f\x80\u00e9\u0416\u07ff\u0800\u8c48\uffff\U00010000\U00100000\U0010ffff":
        k = _hf_precompiled._put_utf8(buf, 1, ord(c))
        assert bytes(buf[1:k]) == c.encode(), hex(ord(c))
    # every lead-byte mask: two-byte leads with bit 4 set, three-byte with bit 3, four-byte with bit 2
    pool = np.frombuffer("\u0416\u07ff\u0800\u8c48\uffff\U00100000\U0010ffff\x00".encode(), dtype=np.uint8)
    assert _hf_precompiled._decode(pool, 0, out, 0) == 7
    assert out[:7].tolist() == [0x416, 0x7FF, 0x800, 0x8C48, 0xFFFF, 0x100000, 0x10FFFF]
    assert _hf_precompiled._decode(np.frombuffer(b"ab", dtype=np.uint8), 0, out, 0) == 2  # no NUL at the end


def _plan_units() -> tuple[int, ...]:
    from tokspec.formats.spm_normalize import CharsMap
    cm = CharsMap.parse(base64.b64decode(_charsmap()["precompiled_charsmap"]), "t")
    assert cm is not None
    return cm.units


def _converted(tmp: str) -> Path:
    """The trained nmt_nfkc model converted to tokenizer.json as HF converts sentencepiece models."""
    m = load_spm_model(trained_model("spm-unigram-bytes"))
    tj = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "post_processor": None,
          "decoder": None, "normalizer": _spec(1),
          "pre_tokenizer": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True},
          "model": {"type": "Unigram", "unk_id": m.unk_id, "byte_fallback": m.byte_fallback,
                    "vocab": [[p, s] for p, s in zip(m.pieces, m.scores)]}}
    path = Path(tmp) / "converted.json"
    path.write_text(json.dumps(tj))
    return path


def test_converted_model_compiled_end_to_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``fast:converted.json`` never takes the Python path; ids and offsets equal ``reference:``
    (contract) and HF (library mode: HF's own spans)."""
    tokenizers = pytest.importorskip("tokenizers")
    from tokspec.reference.unigram import unigram_encoder_from_tokenizer_json
    path = _converted(str(tmp_path))
    fast = datrie_encoder(str(path))
    assert fast._compiled is not None and fast._identity is None
    ref = unigram_encoder_from_tokenizer_json(path, "r")
    hf = tokenizers.Tokenizer.from_file(str(path))
    texts = normalizing_texts(7, 6) + ["\uff21\u0301", "\x7fy", "a\r\nb", "  x  y  ", "\U0001f468\u200d\U0001f469 \u2460"]
    assert_compiled_equals_reference_and_hf(fast, ref, hf, texts, monkeypatch, ids_too=True)


@pytest.mark.slow
def test_converted_model_over_one_megabyte(tmp_path: Path) -> None:
    tokenizers = pytest.importorskip("tokenizers")
    from tokspec.reference.unigram import unigram_encoder_from_tokenizer_json
    path = _converted(str(tmp_path))
    text = "".join(normalizing_texts(13, 4000, 300)) + "\uff21\u0301\r\n\x7f" * 100
    assert len(text.encode()) > 1_000_000
    fast = datrie_encoder(str(path))
    want = unigram_encoder_from_tokenizer_json(path, "r").encode(text)
    got = fast.encode(text)
    assert (got.ids, got.offsets) == (want.ids, want.offsets)
    fast.offsets = "library"
    lib, enc = fast.encode(text), tokenizers.Tokenizer.from_file(str(path)).encode(text, add_special_tokens=False)
    assert (list(lib.ids), list(lib.offsets)) == (enc.ids, [tuple(o) for o in enc.offsets])


def test_threads_share_the_plan_and_its_memo(tmp_path: Path) -> None:
    """Three threads encode through one engine (one plan, one memo of lone-character lookups, filled
    as they go): every result equals the serial one of a fresh engine."""
    import threading
    path = _converted(str(tmp_path))
    texts = normalizing_texts(61, 30) + ["\uff21\u0301\u2460\ufb01 x" * 20]
    serial = datrie_encoder(str(path))
    want = [serial.encode_ids(t).tolist() for t in texts]
    shared = datrie_encoder(str(path))
    assert shared._compiled is not None and (shared._compiled.charsmaps[0][3] == -2).all()  # an empty memo
    got: dict[int, list[list[int]]] = {}

    def work(k: int) -> None:
        got[k] = [shared.encode_ids(t).tolist() for t in (texts[k::3] + texts)]
    threads = [threading.Thread(target=work, args=(k,)) for k in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for k in range(3):
        assert got[k] == [want[i] for i in range(k, len(texts), 3)] + want
    assert (shared._compiled.charsmaps[0][3] != -2).sum() > 20
