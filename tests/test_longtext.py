"""Long inputs as a dimension of every generator (``tokspec.longtext``, ``strategies.long_text``,
the fuzz sources of ``tokspec diff --fuzz``) and block-first shrinking of long counterexamples."""

from __future__ import annotations

import random

from hypothesis import given, settings

from tokspec.app.search import LongBudget
from tokspec.fuzz import strategies as ts
from tokspec.longtext import BOUNDARY_SIZES, MAX_LONG, SEAM_FRAGMENTS, boundaries, grow_text, pick_length
from tokspec.minimize import minimize_text, trim_blocks

PIECES = ["The quick fox. ", "数字 123 ", "line\r\n", "é🙂 "]


def test_lengths_are_exact_in_their_unit() -> None:
    rng = random.Random(5)
    for n in (1, 2, 1023, 1024, 1025, 4095, 4097, 65536):
        for unit in ("chars", "bytes"):
            text = grow_text(rng, n, unit=unit, pieces=PIECES, history=["earlier input 42 "])
            assert (len(text) if unit == "chars" else len(text.encode("utf-8"))) == n, (n, unit)


def test_length_distribution_is_heavy_tailed_and_boundary_targeted() -> None:
    rng = random.Random(0)
    draws = [pick_length(rng) for _ in range(2000)]
    sizes = [n for n, _ in draws]
    assert min(sizes) >= 1 and max(sizes) <= MAX_LONG
    assert sum(n >= 1_000_000 for n in sizes) >= 50  # reaches the 1 MB class regularly
    assert sum(n < 10_000 for n in sizes) >= 300  # and most octaves below it as often
    near = sum(any(abs(n - s) <= 16 for s in BOUNDARY_SIZES) for n in sizes)
    assert near >= 0.4 * len(sizes)
    assert {u for _, u in draws} == {"chars", "bytes"}


def test_seam_fragments_are_planted_across_boundaries() -> None:
    rng = random.Random(1)
    text = grow_text(rng, 300_000, pieces=["a"])  # a featureless filler: only plants break it
    positions = boundaries(300_000, random.Random(1))
    assert positions and all(p < 300_000 for p in positions)
    planted = [p for p in range(1024, 300_000, 1024) if text[p - 8:p + 8].strip("a")]
    assert planted, "some boundary got a seam fragment"
    assert any(f[:4] in text for f in SEAM_FRAGMENTS)


@settings(max_examples=15, deadline=None)
@given(ts.long_text(min_size=1000, max_size=40_000, pieces=PIECES))
def test_hyp_long_text_strategy_respects_bounds(text: str) -> None:
    assert len(text.encode("utf-8")) >= 1000 and len(text) <= 40_000  # n chars or n bytes, 1000 <= n <= 40000


def test_long_budget_keeps_its_share() -> None:
    budget = LongBudget(0.4)
    assert not budget.want_long()  # a run starts short
    longs = 0
    for _ in range(20_000):
        long = budget.want_long()
        longs += long
        budget.charge("x" * (500_000 if long else 50), long)
    assert 0 < longs < 200  # a small fraction of the draws...
    assert budget.long_cost <= 0.4 * budget.total_cost + 502_000  # ...and at most the share of the cost
    off = LongBudget(0.0)
    off.charge("x", False)
    assert not off.want_long()


def test_trim_blocks_reaches_a_local_cause_in_log_calls() -> None:
    text = "x" * 600_000 + "1\r\n2" + "y" * 500_000
    calls = []

    def fails(t: str) -> bool:
        calls.append(len(t))
        return "\r\n" in t
    assert trim_blocks(text, fails) == "\r\n"
    assert len(calls) <= 4 * 21  # galloping then bisecting, from each end
    assert max(calls) <= 2 * 600_004  # no call on a text much longer than the cause's distance


def test_minimize_keeps_a_length_threshold() -> None:
    # a seam bug: the text must be longer than 5000 and contain a digit at or after 5000
    def fails(t: str) -> bool:
        return len(t) > 5000 and any(c.isdigit() for c in t[5000:])
    text = "a" * 20_000 + "7" + "b" * 20_000
    small = minimize_text(text, fails, max_tests=2000)
    assert fails(small) and len(small) == 5001


def test_atheris_inputs_reach_long_texts_by_a_length_mark() -> None:
    from tokspec.fuzz.targets import LONG_MARK, text_from_bytes
    sizes = {len(text_from_bytes(bytes([LONG_MARK, k, 128]) + b"12 ")) for k in range(len(BOUNDARY_SIZES))}
    assert sizes == set(BOUNDARY_SIZES)
    assert len(text_from_bytes(bytes([LONG_MARK, 0, 0]) + b"x")) == BOUNDARY_SIZES[0] - 16
    assert text_from_bytes(bytes([LONG_MARK, 3, 136]) + "é".encode())[:3] == "ééé"
    assert text_from_bytes(b"plain") == "plain"  # other inputs decode as before
