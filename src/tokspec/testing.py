"""tokspec in your own test suite: the public, stable home of the pytest helpers.

::

    from tokspec.testing import assert_engines_agree, check_against

    def test_my_engine_on_crlf():
        assert_engines_agree(MyEngine(), "tiktoken:cl100k_base", "a\\r\\n\\r\\nb")

    def test_my_engine_everywhere():
        check_against(MyEngine(), "tiktoken:cl100k_base")

Every name here is a promise: it keeps its meaning across releases, and a move is announced by a
shim. The implementation lives in :mod:`tokspec.app.pytest_plugin` (internal: ``tokspec.app`` may
be reorganized); this module only re-exports it, so the objects are identical
(``tokspec.testing.check_against is tokspec.app.pytest_plugin.check_against``). The fixture
``tokspec`` comes with the plugin (the ``pytest11`` entry point ``tokspec``, loaded by pytest
automatically once tokspec is installed), not from an import.

``check_against`` first replays the texts of your own saved findings (every ``*.json`` record with
a ``text`` under the reports folder, ``tokspec-reports/`` unless ``reports=`` /
``--tokspec-reports`` / ``TOKSPEC_REPORTS`` say otherwise: where a failing check saves its record),
then tokspec's stored findings and conformance corpus, then searches; see its docstring.

Out of scope: the command line (``tokspec diff``) and the engine contract (``tokspec``).
"""

from __future__ import annotations

from tokspec.app.pytest_plugin import DEFAULT_BUDGET as DEFAULT_BUDGET
from tokspec.app.pytest_plugin import DEFAULT_MAX_SECONDS as DEFAULT_MAX_SECONDS
from tokspec.app.pytest_plugin import DEFAULT_SEED as DEFAULT_SEED
from tokspec.app.pytest_plugin import SearchCutShort as SearchCutShort
from tokspec.app.pytest_plugin import TokspecHelper as TokspecHelper
from tokspec.app.pytest_plugin import assert_engines_agree as assert_engines_agree
from tokspec.app.pytest_plugin import check_against as check_against
from tokspec.app.pytest_plugin import check_complexity as check_complexity
from tokspec.app.pytest_plugin import default_texts as default_texts
from tokspec.app.pytest_plugin import saved_findings as saved_findings

__all__ = [
    "DEFAULT_BUDGET",
    "DEFAULT_MAX_SECONDS",
    "DEFAULT_SEED",
    "SearchCutShort",
    "TokspecHelper",
    "assert_engines_agree",
    "check_against",
    "check_complexity",
    "default_texts",
    "saved_findings",
]

#: Names of tokspec.app.pytest_plugin.__all__ that are not functions to import: pytest machinery
#: (the fixture is registered by the plugin itself). tests/test_public_api.py checks that every
#: other public name of the plugin is re-exported here.
PLUGIN_ONLY = frozenset({"tokspec"})
