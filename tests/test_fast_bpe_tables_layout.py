"""The arrays ``tokspec.fast.bpe_tables.arrays_of`` hands the compiled BPE, read back by their documented
layout (``bpe_tables`` and ``bpe_kernel`` module docstrings) and compared with the
:class:`~tokspec.fast.bpe_backtrack.BacktrackBPE` they were built from.

- per-id arrays: int32 (the cache footprint the layout promises), equal to the Python fields;
- the trie: walking every reachable token's bytes through ``root`` (levels 1 and 2, dense) and the
  deep edge list ends at the node numbered with that token's id, and every node on the way that is
  not a token end has an id >= the vocabulary size; no edge leads anywhere else;
- the pair table: exactly the (a, b) -> id entries for the tokens that split into two tokens;
- ``tok_bytes``/``tok_offsets``: ``CompiledBPE.token_bytes(id)`` is the token's bytes, for every id.

Small trained vocabularies (alphabets of 3 and 5 bytes, tokens up to a dozen bytes deep), one with
an unreachable token, and the single bytes alone (empty edge and pair lists: still int64, since the
compiled hash-table fill is typed by them): a fraction of a second interpreted.
"""

from __future__ import annotations

import numpy as np
import pytest
from tokspec.fast.bpe_backtrack import BacktrackBPE
from tokspec.fast.bpe_kernel import CompiledBPE
from tokspec.fast.bpe_tables import NODE_BITS, PAIR_SHIFT, arrays_of
from tokspec.fuzz.strategies import trained_bpe_ranks

PER_ID_INT32 = ("tok_len", "next_prefix", "split_left", "split_right", "root")
INT64 = ("max_len", "edge_keys", "edge_vals", "pair_keys", "pair_vals", "tok_offsets")


def _vocabularies() -> list[dict[bytes, int]]:
    out = [trained_bpe_ranks(0, alphabet=b"abc", merges=60, segments=20, segment_len=(20, 40)),
           trained_bpe_ranks(3, alphabet=b"\x00a\xc3\xa9\xff", merges=80, segments=20, segment_len=(10, 30))]
    with_unreachable = {bytes([i]): i for i in range(256)}
    with_unreachable.update({b"ab": 256, b"xyz": 257, b"abq": 258})  # xyz: no xy/yz pair, unreachable
    out.append(with_unreachable)
    out.append({bytes([i]): i for i in range(256)})  # single bytes only: no deep edge, no pair
    return out


VOCABS = _vocabularies()


def _walk(arrays: dict[str, np.ndarray], data: bytes) -> list[int]:
    """The node ids on the path of ``data`` from the root (-1 once the path leaves the trie)."""
    root, deep = arrays["root"], dict(zip(arrays["edge_keys"].tolist(), arrays["edge_vals"].tolist()))
    path = [int(root[data[0]])]
    if len(data) > 1:
        path.append(int(root[256 + (data[0] << 8 | data[1])]))
    for byte in data[2:]:
        path.append(deep.get(path[-1] << 8 | byte, -1) if path[-1] >= 0 else -1)
    return path


@pytest.mark.parametrize("k", range(len(VOCABS)))
def test_arrays_have_the_documented_keys_types_and_fields(k: int) -> None:
    bpe = BacktrackBPE(VOCABS[k])
    a = arrays_of(bpe)
    assert set(a) == {*PER_ID_INT32, *INT64, "tok_bytes"}
    for name in PER_ID_INT32:
        assert a[name].dtype == np.int32, name
    for name in INT64:
        assert a[name].dtype == np.int64, name
    assert a["tok_bytes"].dtype == np.uint8
    assert a["max_len"].tolist() == [bpe.max_len]
    assert a["tok_len"].tolist() == [len(t) for t in bpe.tokens]
    assert a["next_prefix"].tolist() == bpe.next_prefix
    assert a["split_left"].tolist() == bpe.split_left
    assert a["split_right"].tolist() == bpe.split_right
    assert a["root"].shape == (256 + 65536,)


@pytest.mark.parametrize("k", range(len(VOCABS)))
def test_trie_paths_end_at_token_ids(k: int) -> None:
    bpe = BacktrackBPE(VOCABS[k])
    a = arrays_of(bpe)
    size = len(bpe.tokens)
    reachable = [t for t in range(size) if bpe.reachable[t]]
    prefixes: set[bytes] = set()
    for tid in reachable:
        tok = bpe.tokens[tid]
        path = _walk(a, tok)
        assert path[-1] == tid, (tok, path)
        for depth, node in enumerate(path[:-1], start=1):
            want = bpe.ranks.get(tok[:depth], -1)
            if want >= 0 and bpe.reachable[want]:
                assert node == want, (tok, depth)
            else:
                assert size <= node < 1 << NODE_BITS, (tok, depth, node)
        prefixes.update(tok[:d] for d in range(1, len(tok) + 1))
    nodes = [_walk(a, p)[-1] for p in prefixes]
    assert len(set(nodes)) == len(nodes)  # one node per distinct prefix
    # the other nodes are numbered densely from `size` on (what the 2**24 bound in arrays_of counts)
    inner = sorted(node for node in nodes if node >= size)
    assert all(size <= node < size + len(bpe._term) - len(reachable) for node in inner), inner
    # nothing else is in the trie: every set entry of root / the edge list is on some token's path
    assert int((a["root"][:256] >= 0).sum()) == len({p for p in prefixes if len(p) == 1})
    assert int((a["root"][256:] >= 0).sum()) == len({p for p in prefixes if len(p) == 2})
    assert len(a["edge_keys"]) == len(a["edge_vals"]) == len({p for p in prefixes if len(p) > 2})
    for unreachable in bpe.unreachable:
        assert _walk(a, bpe.tokens[unreachable])[-1] != unreachable


@pytest.mark.parametrize("k", range(len(VOCABS)))
def test_pair_table_is_every_two_token_split(k: int) -> None:
    bpe = BacktrackBPE(VOCABS[k])
    a = arrays_of(bpe)
    got = sorted(zip(a["pair_keys"].tolist(), a["pair_vals"].tolist()))
    want = sorted((bpe.ranks[tok[:i]] << PAIR_SHIFT | bpe.ranks[tok[i:]], tid)
                  for tid, tok in enumerate(bpe.tokens) for i in range(1, len(tok))
                  if tok[:i] in bpe.ranks and tok[i:] in bpe.ranks)
    assert got == want
    assert bool(want) == (k < 3), "the trained vocabularies have tokens made of two tokens"


@pytest.mark.parametrize("k", range(len(VOCABS)))
def test_token_bytes_of_every_id(k: int) -> None:
    compiled = CompiledBPE.from_ranks(VOCABS[k])
    by_id = {rank: tok for tok, rank in VOCABS[k].items()}
    assert [compiled.token_bytes(t) for t in range(len(by_id))] == [by_id[t] for t in range(len(by_id))]


def test_single_byte_vocabulary_encodes() -> None:
    """Empty deep-edge and pair lists (every token one byte) go through the hash-table build."""
    compiled = CompiledBPE.from_ranks(VOCABS[3])
    data = bytes(range(256)) + b"aa\x00\xff"
    assert compiled.encode_bytes(data).tolist() == list(data)
