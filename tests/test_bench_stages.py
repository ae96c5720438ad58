"""Smoke test of the ``stages`` bench suite's machinery (the seconds are reported by ``tokspec
bench --suite stages``, never asserted): one row per step and per peer, exactness checked."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tokspec.app.bench import SUITES, fresh_copy
from tokspec.app.bench.stages import SUITE, _fresh_rows, _stage_rows, code_varied, fresh_round


def test_stage_rows_name_every_step_and_check_the_ids() -> None:
    text = "Hello world, the stages of encode_ids: 12345 \u4e2d\u6587 'll   \n\n" * 20
    rows = _stage_rows("t", text, 1)
    steps = [r.subject.removeprefix("fast:cl100k_base ") for r in rows if r.baseline.endswith("encode_ids")]
    assert steps == ["code points", "peek2", "utf8", "merge", "merge, cold memo", "merge, no store"]
    peers = [r.baseline for r in rows if not r.baseline.endswith("encode_ids")]
    assert peers[0] == "tiktoken encode_ordinary"  # always installed; the bench extra's peers follow
    assert all("INEXACT" not in r.case and r.suite == SUITE for r in rows)
    assert all(r.subject_s > 0 and r.baseline_s > 0 and r.input_bytes == len(text.encode()) for r in rows)
    assert SUITES["stages"] == "tokspec.app.bench.stages"


def test_stage_rows_for_o200k_name_their_engine() -> None:
    text = "o200k's stages: Hello WORLD 123 \u4e2d\u6587\n" * 10
    rows = _stage_rows("t", text, 1, "o200k_base")
    assert {r.subject.split()[0] for r in rows} == {"fast:o200k_base"}
    assert all("INEXACT" not in r.case for r in rows)


def test_fresh_rows_time_first_calls_on_new_texts_and_check_every_text() -> None:
    made: list[int] = []

    def make(r: int) -> str:
        made.append(r)
        return f"text {r}: Hello world {r * 7} \u4e2d\u6587 don't\n" * (10 + r)

    rows = _fresh_rows("t", make, 2, "cl100k_base")
    assert made == [0, 1, 2]  # a warm-up text, then one new text per round
    assert [r.baseline for r in rows][0] == "tiktoken encode_ordinary"
    assert all(r.subject == "fast:cl100k_base encode_ids" and "INEXACT" not in r.case for r in rows)
    assert all(r.input_bytes == len(make(2).encode()) and r.subject_s > 0 for r in rows)
    assert all(" fresh " in r.case and r.case.endswith(" ns/B") for r in rows)


def test_fresh_rows_mark_a_peer_that_differs_on_one_text(monkeypatch: pytest.MonkeyPatch) -> None:
    import tokspec.app.bench.latency as latency

    def peers(encoding: str) -> dict[str, object]:
        return {"tiktoken encode_ordinary": lambda t: [1] if "odd" in t else real_ids(t)}

    from tokspec import load_engine
    fast = load_engine("fast:cl100k_base")

    def real_ids(t: str) -> list[int]:
        return fast.encode_ids(t).tolist()  # type: ignore[attr-defined,no-any-return]

    monkeypatch.setattr(latency, "peers", peers)
    texts = ["plain text", "plain again", "an odd one"]
    rows = _fresh_rows("t", lambda r: texts[r], 2, "cl100k_base")
    assert len(rows) == 1 and "INEXACT" in rows[0].case
    rows = _fresh_rows("t", lambda r: texts[r % 2], 2, "cl100k_base")
    assert "INEXACT" not in rows[0].case


def test_fresh_round_hands_every_engine_its_own_new_copy() -> None:
    import sys

    from _str_utf8 import make_utf8

    text = "naïve café 東京 " * 40
    got: dict[str, tuple[object, int]] = {}

    def peer(name: str) -> Callable[[str], list[int]]:
        def encode(t: str) -> list[int]:
            got[name] = (t, sys.getsizeof(t))  # as found, before this peer makes its UTF-8
            make_utf8(t)
            return [len(t)]
        return encode

    bare = sys.getsizeof(fresh_copy(text))
    for round_ in (0, 1):  # each engine first once
        fresh_round({"a": peer("a"), "b": peer("b")}, text, round_, {"a": 1.0, "b": 1.0})
        assert all(t == text and t is not text and size == bare for t, size in got.values())
        assert got["a"][0] is not got["b"][0]


def test_code_varied_parts_share_no_file() -> None:
    a, b = code_varied(30_000, 0), code_varied(30_000, 1)
    assert len(a) == len(b) == 30_000 and a[:2000] not in b and b[:2000] not in a
    assert code_varied(30_000, 0) == a  # the same part every time


def test_code_varied_refuses_a_part_the_library_cannot_fill() -> None:
    # the library holds tens of MB of source, not 10 GB: a short text is an error, never timed
    with pytest.raises(ValueError, match="has no part 5"):
        code_varied(2_000_000_000, 5)
