"""Shared pytest setup: hypothesis profiles chosen by environment, and the opt-in `slow` marker.

TOKSPEC_HYPOTHESIS_PROFILE=quick (default, `tox -e py`) | deep (`tox -e fuzz`) | ci.
TOKSPEC_SLOW=1 runs tests marked `slow`.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "quick", max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile(
    "deep", max_examples=2000, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.load_profile(os.environ.get("TOKSPEC_HYPOTHESIS_PROFILE", "quick"))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if os.environ.get("TOKSPEC_SLOW") == "1":
        return
    skip_slow = pytest.mark.skip(reason="slow stress test: opt in with TOKSPEC_SLOW=1")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip_slow)
