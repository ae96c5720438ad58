"""``FastBpeEncoder`` moved from ``tokspec.fast.engines`` to ``tokspec.fast.bpe_encoder`` (stop 53):
the old import path still gives the same objects, and a pickle naming the old path still loads."""

from __future__ import annotations

import pickle

from tokspec import load_engine
from tokspec.fast import bpe_encoder, engines


def test_old_import_path_gives_the_same_objects() -> None:
    for name in ("FastBpeEncoder", "FILL_MIN", "BLOCK", "BATCH_GROUP"):
        assert getattr(engines, name) is getattr(bpe_encoder, name), name
        assert name in engines.__all__


def test_a_pickle_naming_the_old_path_loads() -> None:
    engine = load_engine("fast:cl100k_base")
    data = pickle.dumps(engine)
    new_path, old_path = b"tokspec.fast.bpe_encoder", b"tokspec.fast.engines"
    def unicode(path: bytes) -> bytes:  # pickle's SHORT_BINUNICODE: opcode, length, text
        return b"\x8c" + bytes([len(path)]) + path
    assert data.count(unicode(new_path)) == 1
    old = pickle.loads(data.replace(unicode(new_path), unicode(old_path)))  # as an earlier tokspec wrote it
    assert type(old) is bpe_encoder.FastBpeEncoder
    text = "hello world, 12345 \u4e2d\u6587!"
    assert old.encode_ids(text).tolist() == engine.encode_ids(text).tolist()  # type: ignore[attr-defined]
