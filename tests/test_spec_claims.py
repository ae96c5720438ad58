"""Every registered claim cites a source, and every falsified claim's counterexample reproduces."""

from __future__ import annotations

import pytest

from tokspec.spec import CLAIMS, load_claims

load_claims()


@pytest.mark.parametrize("name", sorted(CLAIMS))
def test_claim_is_well_formed(name: str) -> None:
    claim = CLAIMS[name]
    assert claim.source and claim.statement and claim.status in ("proved", "checked", "falsified")
    assert claim.check.__doc__, f"{name}: the property must document its source"


@pytest.mark.parametrize("name", sorted(n for n, c in CLAIMS.items() if c.status == "falsified"))
def test_falsified_claim_counterexample_fails(name: str) -> None:
    claim = CLAIMS[name]
    assert claim.counterexample is not None
    assert not claim.check(**claim.counterexample).holds
