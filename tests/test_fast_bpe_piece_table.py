"""The compiled BPE's whole-piece lookup (``tokspec.fast._piece_table``) and the kernel's counted
byte positions (``bpe_kernel._encode`` with no per-character array).

Contract: the table holds exactly the reachable tokens of 1..12 bytes, each under its own bytes
and id; a lookup answers a token's id for its exact bytes (length included: NUL bytes are not
padding) and -1 for anything else; the kernel consults it before the merge (a planted entry
changes the output, so the shortcut is live) and encodes an unreachable token's bytes as BPE does
(spec claim ``bpe.whole_piece_shortcut``'s counterexample), never as the token. Its long-prefix
entries are exactly the first 12 bytes of the reachable tokens longer than 12, each with the trie
node from which the trie walk reaches those tokens; the merge's longest match by probes (pieces
of 1..60 bytes over vocabularies with tokens up to 40 bytes, far from the end of the data and in
its last 15 bytes, where the walk is used) gives the ids of the trie walk alone and of the Python
encoder. Counted positions
(``encode_text_ids``) give the ids of the ``cbs`` path on ASCII and on 1- to 4-byte UTF-8.
The full-vocabulary premise check (every cl100k_base / o200k_base token encodes to itself under
the definition of BPE, and the engine's shortcut agrees) is ``slow`` (TOKSPEC_SLOW=1).
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from tokspec.fast import _piece_table as pt
from tokspec.fast.bpe_backtrack import BacktrackBPE
from tokspec.fast.bpe_kernel import CompiledBPE, utf8_of_code_points
from tokspec.fast.peek2_unicode import code_points
from tokspec.fuzz.strategies import trained_bpe_ranks
from tokspec.spec.bpe import SHORTCUT_COUNTEREXAMPLE, bpe_encode


def _counterexample_ranks() -> dict[bytes, int]:
    """The spec's stored counterexample, made byte-level: ``abcd`` is a token but unreachable."""
    ranks = {bytes([i]): i for i in range(256)}
    extra = sorted((r, t) for t, r in SHORTCUT_COUNTEREXAMPLE["ranks"].items() if len(t) > 1)
    for k, (_, tok) in enumerate(extra):
        ranks[tok] = 256 + k
    return ranks


def _nul_ranks() -> dict[bytes, int]:
    """Tokens differing only by trailing NUL bytes and lengths 8, 9, 12 and 13 (the word edges)."""
    ranks = {bytes([i]): i for i in range(256)}
    for tok in (b"a\x00", b"a\x00\x00", b"ab", b"abab", b"abababab", b"ababababa",
                b"abababababab", b"ababababababa", b"\x00\x00"):
        ranks[tok] = len(ranks)
    return ranks


def _entries(table: np.ndarray, *, long_prefixes: bool = False) -> dict[bytes, int]:
    """Decode every occupied slot of pieces (bytes -> id), or with ``long_prefixes`` every
    long-prefix entry (first 12 bytes -> trie node)."""
    out = {}
    for w0, w1 in table.reshape(-1, 2).tolist():
        if w1 == 0:
            continue
        n = (w1 >> 32) & 0xF
        if (n == pt.LONG_PREFIX) != long_prefixes:
            continue
        n = min(n, pt.PIECE_MAX)
        raw = (w0 & (2**64 - 1)).to_bytes(8, "little") + (w1 & 0xFFFFFFFF).to_bytes(4, "little")
        assert raw[n:] == bytes(12 - n), "bytes past the length are zero"
        out[raw[:n]] = w1 >> 36
    return out


VOCABS = {"trained0": lambda: trained_bpe_ranks(0, alphabet=b"abcd", merges=60),
          "trained1": lambda: trained_bpe_ranks(1, alphabet=b"ab", merges=40, segment_len=(20, 40)),
          "counterexample": _counterexample_ranks, "nul": _nul_ranks}


@pytest.mark.parametrize("name", sorted(VOCABS))
def test_table_holds_exactly_the_short_reachable_tokens(name: str) -> None:
    ranks = VOCABS[name]()
    python = BacktrackBPE(ranks, self_check=False)
    compiled = CompiledBPE.from_ranks(ranks)
    want = {tok: t for t, tok in enumerate(python.tokens)
            if python.reachable[t] and 1 <= len(tok) <= pt.PIECE_MAX}
    assert _entries(compiled.pieces) == want
    assert len(compiled.pieces) // 2 >= 2 * len(want), "load at most 1/2"
    buf = np.frombuffer(b"".join(ranks), dtype=np.uint8)
    pos = 0
    with np.errstate(over="ignore"):
        for tok in ranks:
            assert pt.piece_id(compiled.pieces, buf, pos, len(tok)) == want.get(tok, -1), tok
            pos += len(tok)


def test_lookup_refuses_near_misses() -> None:
    ranks = _nul_ranks()
    table = CompiledBPE.from_ranks(ranks).pieces
    rng = random.Random(0)
    probes = [b"a\x00\x00\x00", b"\x00a", b"aba", b"ababababab", b"abababababa", b"ababababababab",
              b"abababababab\x00"] + [bytes(rng.choice(b"ab\x00") for _ in range(rng.randint(2, 14)))
                                      for _ in range(300)]
    with np.errstate(over="ignore"):
        for probe in probes:
            buf = np.frombuffer(b"xy" + probe, dtype=np.uint8)
            want = ranks[probe] if probe in ranks and len(probe) <= pt.PIECE_MAX else -1
            assert pt.piece_id(table, buf, 2, len(probe)) == want, probe
    assert ranks[b"ababababababa"] > 0 and len(b"ababababababa") == pt.PIECE_MAX + 1


def test_unreachable_token_takes_the_merge_not_the_shortcut() -> None:
    """Spec claim ``bpe.whole_piece_shortcut`` is falsified by ``abcd``: BPE gives ``a bc d``."""
    ranks = _counterexample_ranks()
    compiled = CompiledBPE.from_ranks(ranks)
    data = SHORTCUT_COUNTEREXAMPLE["data"]
    got = compiled.encode_bytes(data).tolist()
    assert got == [ranks[t] for t in bpe_encode(ranks, data)] == [ranks[b"a"], ranks[b"bc"], ranks[b"d"]]


def test_the_kernel_consults_the_table_first() -> None:
    """A planted entry (``ab`` answering ``abab``'s id) changes the output: the lookup is live,
    and only for the pieces it holds."""
    ranks = _nul_ranks()
    compiled = CompiledBPE.from_ranks(ranks)
    assert compiled.encode_bytes(b"ab").tolist() == [ranks[b"ab"]]
    slots = compiled.pieces.reshape(-1, 2)
    for k, (w0, w1) in enumerate(slots.tolist()):
        if w1 != 0 and _entries(np.array([w0, w1], dtype=np.int64)) == {b"ab": ranks[b"ab"]}:
            slots[k, 1] = (w1 & ((1 << 36) - 1)) | (ranks[b"abab"] << 36)
    assert compiled.encode_bytes(b"ab").tolist() == [ranks[b"abab"]]
    assert compiled.encode_pieces(b"ab", np.array([0, 2]), shortcut=False).tolist() == [ranks[b"ab"]]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_shortcut_on_equals_off_and_python(seed: int) -> None:
    ranks = trained_bpe_ranks(seed, alphabet=b"abc", merges=50, segments=20, segment_len=(10, 30))
    python = BacktrackBPE(ranks, self_check=False)
    compiled = CompiledBPE.from_ranks(ranks)
    rng = random.Random(seed)
    pieces = [bytes(rng.choice(b"abc") for _ in range(rng.randint(1, 16))) for _ in range(200)]
    pieces += [tok for tok in ranks if len(tok) > 1][:50]
    bounds = np.concatenate([[0], np.cumsum([len(p) for p in pieces])])
    data = b"".join(pieces)
    on = compiled.encode_pieces(data, bounds).tolist()
    assert on == compiled.encode_pieces(data, bounds, shortcut=False).tolist()
    assert on == [t for p in pieces for t in python.encode(p)]



def _long_ranks(seed: int) -> dict[bytes, int]:
    """Byte-level ranks with long reachable tokens (up to about 40 bytes) over a small alphabet."""
    return trained_bpe_ranks(seed, alphabet=b"ab-", merges=120, segments=12, segment_len=(30, 60))


@pytest.mark.parametrize("seed", range(3))
def test_long_prefix_entries_are_the_long_tokens_first_12_bytes(seed: int) -> None:
    from tokspec.fast._bpe_probe import _get
    from tokspec.fast.bpe_tables import NODE_BITS

    ranks = _long_ranks(seed)
    python = BacktrackBPE(ranks, self_check=False)
    compiled = CompiledBPE.from_ranks(ranks)
    long = [(t, tok) for t, tok in enumerate(python.tokens) if python.reachable[t] and len(tok) > pt.PIECE_MAX]
    assert len(long) >= 3, "the vocabulary has long tokens to check"
    entries = _entries(compiled.pieces, long_prefixes=True)
    assert set(entries) == {tok[:pt.PIECE_MAX] for _, tok in long}
    for t, tok in long:  # the node stored, walked on through the trie, ends at the token's own id
        node = entries[tok[:pt.PIECE_MAX]]
        for byte in tok[pt.PIECE_MAX:]:
            node = _get(compiled.trie, (node << 8) | byte, NODE_BITS)
        assert node == t, tok
    assert _entries(compiled.pieces) == {tok: t for t, tok in enumerate(python.tokens)
                                         if python.reachable[t] and len(tok) <= pt.PIECE_MAX}



def test_a_long_prefix_off_the_trie_is_refused() -> None:
    """Arrays whose trie lacks a long token's path (a corrupt or foreign table file) make the build
    fail with a clear error, not a table whose node would send the merge astray."""
    from tokspec.fast.bpe_tables import arrays_of

    python = BacktrackBPE(_long_ranks(0), self_check=False)
    arrays = arrays_of(python)
    assert len(_entries(pt.build_piece_table(arrays), long_prefixes=True)) > 0  # as built: fine
    keys, vals = np.asarray(arrays["edge_keys"]), np.asarray(arrays["edge_vals"])
    tok = next(t for i, t in enumerate(python.tokens) if python.reachable[i] and len(t) > pt.PIECE_MAX)
    third = (int(arrays["root"][256 + (tok[0] << 8 | tok[1])]) << 8) | tok[2]  # its depth-3 edge
    assert third in keys
    for cut in (dict(arrays, edge_keys=keys[:0], edge_vals=vals[:0]),  # no deep edges at all
                dict(arrays, edge_keys=keys[keys != third], edge_vals=vals[keys != third])):
        with pytest.raises(ValueError, match="long token's 12-byte prefix is not a path of the trie"):
            pt.build_piece_table(cut)


@pytest.mark.parametrize("seed", range(3))
def test_longest_match_by_probes_equals_the_trie_walk(seed: int) -> None:
    ranks = _long_ranks(seed)
    python = BacktrackBPE(ranks, self_check=False)
    compiled = CompiledBPE.from_ranks(ranks)
    rng = random.Random(seed)
    long = [tok for tok in ranks if len(tok) > pt.PIECE_MAX]
    pieces = []
    for _ in range(300):  # random pieces, long tokens with a prefix or suffix, cut long tokens
        kind = rng.randrange(4)
        tok = rng.choice(long)
        pieces.append(bytes(rng.choice(b"ab-") for _ in range(rng.randint(1, 60))) if kind == 0 else
                      tok + bytes(rng.choice(b"ab-") for _ in range(rng.randint(0, 9))) if kind == 1 else
                      bytes(rng.choice(b"ab-") for _ in range(rng.randint(1, 9))) + tok if kind == 2 else
                      tok[:rng.randint(pt.PIECE_MAX, len(tok))])
    for tail in (b"", b"a" * 15):  # the last pieces probed, then in the text's last 15 bytes (the walk)
        cases = pieces + [tail] if tail else pieces
        bounds = np.concatenate([[0], np.cumsum([len(p) for p in cases])])
        data = b"".join(cases)
        want = [t for p in cases for t in python.encode(p)]
        assert compiled.encode_pieces(data, bounds).tolist() == want
        assert compiled.encode_pieces(data, bounds, shortcut=False).tolist() == want


TEXTS = ["plain ascii words, numbers 12345 and   spaces\n\n", "über café naïve",
         "中文的文本，还有标点。", "emoji 😀👍🏽 and 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 astral", "mixed é中😀a\r\n\t x", "", " ", "é"]


@pytest.mark.parametrize("text", TEXTS)
def test_counted_positions_equal_the_cbs_path(text: str) -> None:
    ranks = trained_bpe_ranks(3, alphabet="aeiou üé中文😀,".encode(), merges=80)
    compiled = CompiledBPE.from_ranks(ranks)
    cps = code_points(text)
    # pretokens: runs of 1-3 characters, so pieces start and end inside multi-byte text
    rng = random.Random(len(text))
    cuts = [0]
    while cuts[-1] < len(cps):
        cuts.append(min(len(cps), cuts[-1] + rng.randint(1, 3)))
    starts, ends = np.array(cuts[:-1], dtype=np.int64), np.array(cuts[1:], dtype=np.int64)
    want = compiled.encode_text(cps, starts, ends).ids
    data, cbs = utf8_of_code_points(cps)
    pieces = [data[cbs[s]:cbs[e]].tobytes() for s, e in zip(starts, ends)]
    assert want.tolist() == [t for p in pieces for t in BacktrackBPE(ranks, self_check=False).encode(p)]
    assert compiled.encode_text_ids(cps, starts, ends, text.encode()).tolist() == want.tolist()
    assert compiled.encode_text_ids(cps, starts, ends).tolist() == want.tolist()


def _stretches_text(rng: random.Random) -> str:
    """ASCII runs of 0..40 characters (so some span whole 8-byte words, some are shorter than
    one) between runs of 1..3 characters of 2, 3 or 4 UTF-8 bytes; sometimes dense non-ASCII
    (gaps under 16 bytes, where the kernel pauses its rescans), and either kind at the end."""
    out = []
    for _ in range(rng.randint(1, 30)):
        out.append("".join(rng.choice("ab ,\n") for _ in range(rng.choice([0, 1, 3, 7, 8, 9, 15, 16, 17, 40]))))
        out.append("".join(rng.choice("\u00e9\u00fc\u4e2d\u6587\U0001f600") for _ in range(rng.randint(1, 3))))
    if rng.random() < 0.5:
        out.append("".join(rng.choice("ab ") for _ in range(rng.randint(0, 12))))
    return "".join(out)


@pytest.mark.parametrize("seed", range(4))
def test_counted_positions_across_ascii_stretches(seed: int) -> None:
    """The counted path's ASCII stretches (``_encode``: a piece inside a known run of ASCII bytes
    takes its end from the character count, the run found by eight-byte loads): ids equal the
    ``cbs`` path and the Python encoder, with pieces of 1..12 characters cut anywhere."""
    ranks = trained_bpe_ranks(3, alphabet="aeiou üé中文😀,".encode(), merges=80)
    compiled = CompiledBPE.from_ranks(ranks)
    python = BacktrackBPE(ranks, self_check=False)
    rng = random.Random(seed)
    for _ in range(60):
        text = _stretches_text(rng)
        cps = code_points(text)
        cuts = [0]
        while cuts[-1] < len(cps):
            cuts.append(min(len(cps), cuts[-1] + rng.randint(1, 12)))
        starts, ends = np.array(cuts[:-1], dtype=np.int64), np.array(cuts[1:], dtype=np.int64)
        data, cbs = utf8_of_code_points(cps)
        want = [t for s, e in zip(starts, ends) for t in python.encode(data[cbs[s]:cbs[e]].tobytes())]
        assert compiled.encode_text(cps, starts, ends).ids.tolist() == want
        assert compiled.encode_text_ids(cps, starts, ends, text.encode()).tolist() == want, text


@pytest.mark.slow
@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_every_named_token_encodes_to_itself_by_the_definition(name: str) -> None:
    """The shortcut's premise on the production vocabularies, checked by the definition of BPE
    (no shortcut in it) and the engine's ids on each token's bytes as one piece."""
    from tokspec import load_engine
    engine = load_engine(f"fast:{name}")
    ranks = engine._ranks  # type: ignore[attr-defined]
    bad = [t for t, r in ranks.items() if bpe_encode(ranks, t) != [t]]
    assert bad == []
    toks = sorted(ranks, key=ranks.__getitem__)
    bounds = np.concatenate([[0], np.cumsum([len(t) for t in toks])])
    got = engine.bpe.encode_pieces(b"".join(toks), bounds)  # type: ignore[attr-defined]
    assert got.tolist() == [ranks[t] for t in toks]
    assert len(_entries(engine.bpe.pieces)) == sum(len(t) <= pt.PIECE_MAX for t in toks)  # type: ignore[attr-defined]


def test_dense_third_level_matches_the_trie() -> None:
    """``_bpe_probe.fill_level3``: for three-byte UTF-8 sequences, the node after three bytes is the
    token's id where a token ends there, -1 where no token starts with them; encodings of CJK-byte
    text equal the Python encoder's (the walk reads level 3 there)."""
    ranks = trained_bpe_ranks(4, alphabet="中文字的一是不了".encode(), merges=80, segment_len=(9, 30))
    python = BacktrackBPE(ranks, self_check=False)
    compiled = CompiledBPE.from_ranks(ranks)
    level3 = compiled.level3.tolist()
    prefixes = {tok[:3] for t, tok in enumerate(python.tokens) if python.reachable[t] and len(tok) >= 3}
    assert len(prefixes) >= 5
    for idx, node in enumerate(level3):
        key = bytes([0xE0 | idx >> 12, 0x80 | (idx >> 6) & 0x3F, 0x80 | idx & 0x3F])
        if key not in prefixes:
            assert node == -1, key
        elif key in ranks and python.reachable[ranks[key]]:
            assert node == ranks[key], key
        else:
            assert node >= len(python.tokens), key
    rng = random.Random(4)
    chars = list("中文字的一是不了") + ["a", "é"]
    texts = ["".join(rng.choice(chars) for _ in range(rng.randint(1, 20))).encode() for _ in range(60)]
    for data in texts:
        assert compiled.encode_bytes(data).tolist() == python.encode(data), data


def test_ids_of_spans_with_gaps_take_the_character_array() -> None:
    """Counted positions need spans contiguous from character 0; others (gaps, a late start) must
    still give the ids of their own pieces."""
    ranks = trained_bpe_ranks(3, alphabet="aeiou üé中文😀,".encode(), merges=80)
    compiled = CompiledBPE.from_ranks(ranks)
    text = "中文 é😀 aeiou ü, 中a"
    cps = code_points(text)
    starts, ends = np.array([1, 4, 9], dtype=np.int64), np.array([3, 7, 12], dtype=np.int64)
    want = [t for s, e in zip(starts, ends) for t in BacktrackBPE(ranks, self_check=False).encode(text[s:e].encode())]
    assert compiled.encode_text_ids(cps, starts, ends, text.encode()).tolist() == want
    assert compiled.encode_text_ids(cps, starts, ends).tolist() == want
