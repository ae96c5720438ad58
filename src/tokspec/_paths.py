"""Where tokspec's data folders are: ``corpora/`` (seeds and every counterexample found).

``corpora/`` lives in the repository, not in the wheel. :func:`corpora_dir` resolves it as:
the environment variable ``TOKSPEC_CORPORA`` if set; else the repository the running source files
come from (an editable or source checkout); else ``./corpora`` in the working directory (tox runs
the wheel from the repository root).
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["corpora_dir"]


def corpora_dir() -> Path:
    """The ``corpora/`` folder (see module docstring); it may not exist yet."""
    env = os.environ.get("TOKSPEC_CORPORA")
    if env:
        return Path(env)
    source_tree = Path(__file__).resolve().parents[2] / "corpora"
    if source_tree.is_dir():
        return source_tree
    return Path.cwd() / "corpora"
