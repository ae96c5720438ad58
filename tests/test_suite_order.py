"""tests/_suite_order.py: the heavy tests are collected first, files kept together, and every test
it names still exists (a renamed test would silently lose its place)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from _suite_order import HEAVY_TESTS, heavy_first, suite_key

TESTS = Path(__file__).resolve().parent


def test_keys_drop_folder_and_parameters() -> None:
    assert suite_key("tests/test_x.py::test_f[a-b::c]") == "test_x.py::test_f"
    assert suite_key("tests/property/test_y.py::TestC::test_g") == "test_y.py::TestC::test_g"
    assert suite_key("test_z.py::test_h") == "test_z.py::test_h"


def test_heaviest_file_first_heavy_tests_at_its_front_rest_in_order() -> None:
    ids = ["a.py::t1", "a.py::t2", "b.py::u1", "b.py::u2[0]", "b.py::u2[1]", "c.py::v1", "d.py::w1", "d.py::w2"]
    weights = {"b.py::u2": 5.0, "d.py::w2": 9.0, "a.py::t2": 1.0}
    order = [ids[k] for k in heavy_first(ids, weights)]
    assert order == ["d.py::w2", "d.py::w1", "b.py::u2[0]", "b.py::u2[1]", "b.py::u1", "a.py::t2", "a.py::t1",
                     "c.py::v1"]
    assert heavy_first(ids, {}) == list(range(len(ids)))  # nothing listed: collection order


def test_this_session_is_collected_heavy_first(request: pytest.FixtureRequest) -> None:
    ids = [item.nodeid for item in request.session.items]
    assert heavy_first(ids) == list(range(len(ids)))  # conftest applied it: applying it again changes nothing


@pytest.mark.parametrize("key", sorted(HEAVY_TESTS))
def test_every_listed_test_exists(key: str) -> None:
    file, _, name = key.partition("::")
    tree = ast.parse((TESTS / file).read_text(encoding="utf-8"))
    defined = {node.name for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
    assert name.rsplit("::", 1)[-1] in defined, f"tests/_suite_order.py names {key!r}, which is gone: update it"
