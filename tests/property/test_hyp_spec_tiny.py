"""spec/ theorems over generated tiny vocabularies (the hypothesis targets of tokspec.fuzz).

Each test is the same ``@given`` function the fuzz harness drives with atheris, run here under the
active hypothesis profile (quick for ``tox -e py``, deep for ``tox -e fuzz``).
"""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from tokspec.fuzz import hyp_targets as H
from tokspec.fuzz import strategies as ts

NAMES = [n for n in H.FACTORIES if n != "merge_claims"]


@pytest.mark.parametrize("name", NAMES)
def test_hyp_target_is_available(name: str) -> None:
    assert H.unavailable_reason(name) is None, name


# Each hypothesis target is a module-level ``@given`` test (``test_hyp_target_<name>``), so pytest
# runs it under the active profile AND HypoFuzz (``hypothesis fuzz -- tests/property``) collects it
# as a fuzz target, sharing the example database ($TOKSPEC_HYPOTHESIS_DB, tests/conftest.py).
for _name in NAMES:
    globals()[f"test_hyp_target_{_name}"] = H.make_test(_name)
del _name


def test_hyp_merge_claims_when_present() -> None:
    reason = H.unavailable_reason("merge_claims")
    if reason is not None:
        assert "merge" in reason  # only engineer E's module may be missing, nothing else
        return
    H.make_test("merge_claims")()


@given(ranks=ts.bpe_merge_ranks(), data=ts.byte_strings(max_size=8))
@example(ranks={b"a": 0, b"b": 1, b"c": 2, b"bc": 3, b"ab": 4, b"abc": 5}, data=b"abcabc")
def test_hyp_definition_output_is_valid(ranks: dict[bytes, int], data: bytes) -> None:
    from tokspec.spec import bpe
    v = bpe.prop_output_valid(ranks, data, lambda d: bpe.bpe_encode(ranks, d))
    assert v.holds, v


@given(ranks=ts.bpe_any_ranks(), data=ts.byte_strings(max_size=6))
def test_hyp_shortcut_claim_agrees_with_reachability(ranks: dict[bytes, int], data: bytes) -> None:
    """The falsified shortcut claim fails exactly on unreachable tokens."""
    from tokspec.spec import bpe
    v = bpe.prop_whole_piece_shortcut(ranks, data)
    reachable = data not in ranks or bpe.bpe_encode(ranks, data) == [data]
    assert v.holds == reachable


def test_tiebreak_mutant_is_caught_quickly() -> None:
    from hypothesis import settings

    from tokspec.fuzz.mutants import HYP_MUTANTS
    test = settings(max_examples=300, database=None)(HYP_MUTANTS["mutant_viterbi_wrong_tiebreak"]())
    with pytest.raises(H.PropertyFailed):
        test()


@given(st.data())
def test_hyp_peek2_cells_near_whitespace(data: st.DataObject) -> None:
    c0 = data.draw(st.sampled_from(" \t\n\r\u00a0\u3000'"))
    c1 = data.draw(ts.unicode_char())
    assert H.peek2_cell(c0, c1, data.draw(ts.shaped_text(max_fragments=2))).holds
