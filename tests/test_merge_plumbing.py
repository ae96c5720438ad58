"""Small pieces behind the merge strategies and the ``lopt:`` engines, each against its definition:
the serial default of ``encode_many``, ``rule_for`` = the structural decision, the untraced
``encode_arrays`` path without a runner, and what the ``lopt:`` provider lists and delegates.
"""

from __future__ import annotations

from tokspec import Encoder, Encoding, EngineInfo, list_engines, load_engine
from tokspec.fast import merge_lopt
from tokspec.fast._chunking import encode_spans, serial_encode_many
from tokspec.fast.merge_engines import LoptEncoder, engines


class Pieces(Encoder):
    """One token per character with a readable piece per id."""

    info = EngineInfo("toy:pieces", "tokenizer", "toy", "0", None)

    def _encode(self, text: str) -> Encoding:
        return Encoding.of([ord(c) for c in text], [(i, i + 1) for i in range(len(text))])

    def token_piece(self, token_id: int) -> str:
        return f"<{chr(token_id)}>"


def test_serial_encode_many_encodes_each_text_in_order() -> None:
    engine = Pieces()
    texts = ["ab", "", "cde"]
    assert serial_encode_many(engine, texts) == [engine.encode(t) for t in texts]
    chunks = encode_spans(engine, "abcdef", [(0, 2), (2, 2), (2, 6)])  # the default encode_many
    assert [c.encoding for c in chunks] == [engine.encode(t) for t in ("ab", "", "cdef")]


def test_rule_for_is_the_structural_decision() -> None:
    for engine in (load_engine("tiktoken:cl100k_base"), Pieces()):
        dec = merge_lopt.decision(engine)
        assert merge_lopt.rule_for(engine) == (dec.family, dec.rule)
    assert merge_lopt.rule_for(load_engine("tiktoken:cl100k_base"))[1] is not None
    assert merge_lopt.rule_for(Pieces())[1] is None  # unknown structure: serial


def test_encode_arrays_without_a_runner_encodes_the_pieces_serially() -> None:
    engine = load_engine("tiktoken:cl100k_base")
    text = "Pieces between sound cuts are encoded one by one here. " * 8
    rule = merge_lopt.rule_for(engine)[1]
    assert rule is not None and merge_lopt.find_cuts(text, rule, 40)  # there are pieces
    assert merge_lopt.encode_arrays(engine, text, chunk_len=40).same_as(engine.encode_arrays(text))


def test_lopt_provider_lists_its_name_pattern_and_delegates_pieces() -> None:
    listed = engines()
    assert [name for name, _ in listed] == ["lopt:ENGINE"]
    assert all(desc for _, desc in listed)
    assert ("lopt:ENGINE", listed[0][1]) in list_engines()
    inner = Pieces()
    outer = LoptEncoder(inner)
    assert [outer.token_piece(i) for i in (97, 0x4E2D)] == ["<a>", "<中>"]
