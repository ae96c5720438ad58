"""Deprecated import path of tokspec's pytest helpers: use :mod:`tokspec.testing`.

``from tokspec.pytest_plugin import assert_engines_agree, check_against`` was the documented import
before the plugin moved to ``tokspec.app.pytest_plugin`` (internal). It keeps working: this module
re-exports the same objects as :mod:`tokspec.testing` and warns once with a DeprecationWarning.

``-p tokspec.pytest_plugin`` keeps working too: this module defines no pytest hooks of its own (a
second registration of the plugin's options would be an error), so the fixture and the
``--tokspec-*`` options come from the ``pytest11`` entry point ``tokspec`` that an installed
tokspec registers; with plugin autoloading disabled, pass ``-p tokspec.app.pytest_plugin`` instead.
"""

from __future__ import annotations

import warnings

from tokspec.testing import DEFAULT_BUDGET as DEFAULT_BUDGET
from tokspec.testing import DEFAULT_MAX_SECONDS as DEFAULT_MAX_SECONDS
from tokspec.testing import DEFAULT_SEED as DEFAULT_SEED
from tokspec.testing import SearchCutShort as SearchCutShort
from tokspec.testing import TokspecHelper as TokspecHelper
from tokspec.testing import __all__ as __all__  # noqa: F401 - the same public names
from tokspec.testing import assert_engines_agree as assert_engines_agree
from tokspec.testing import check_against as check_against
from tokspec.testing import default_texts as default_texts
from tokspec.testing import saved_findings as saved_findings

warnings.warn("tokspec.pytest_plugin is deprecated: import from tokspec.testing (same functions)",
              DeprecationWarning, stacklevel=2)
