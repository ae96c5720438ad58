"""Library versions: the ones tokspec's stored findings were recorded with, and the installed ones.

A finding in ``corpora/`` (a production library's disagreement with the contract, with a reference
or with another library) is a fact about the library version it was recorded with. tokspec's own CI
installs exactly those versions (``constraints/ci.txt``); a user's environment may hold others,
anywhere in the ranges of ``pyproject.toml``. Replay tests therefore go through
:func:`check_finding`:

- with the recorded version installed, the recorded behaviour must reproduce (an assertion);
- with another version, the finding is re-checked and its status reported: ``"holds"`` or
  ``"changed"`` (a library that fixed or changed the behaviour is news, not a test failure). The
  statuses are collected in :data:`STATUSES` and each is also issued as a :class:`FindingNews`
  warning, so pytest's warnings summary lists them (across xdist workers too);
  ``tokspec engines --versions`` shows both version columns.

The same holds for Unicode facts: the references pin Unicode 16 (what the recorded tiktoken and HF
use) whatever the ``regex`` module's own tables are; ``-u17`` engines unpin it.

Out of scope: findings about tokspec's own adapters (they are facts about this source tree).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from importlib import metadata

from tokspec.errors import TokspecError

__all__ = ["RECORDED", "FindingStatus", "STATUSES", "FindingNews", "FindingReproductionError", "installed",
           "is_recorded", "check_finding", "versions_table"]

#: distribution name -> the version the stored findings were recorded with (= constraints/ci.txt;
#: tests/test_versions.py keeps the two equal).
RECORDED: dict[str, str] = {
    "tiktoken": "0.14.0",
    "tokenizers": "0.23.3",
    "sentencepiece": "0.2.3",
    "regex": "2026.5.9",
}


class FindingReproductionError(TokspecError, AssertionError):
    """A finding did not reproduce with the very library version it was recorded with."""


class FindingNews(UserWarning):
    """A finding re-checked with a library version other than the recorded one (see module doc)."""


@dataclass(frozen=True)
class FindingStatus:
    """What a finding's re-check found with the installed library."""

    finding: str
    library: str
    recorded: str
    installed: str | None
    status: str  # "reproduced" (recorded version), "holds" or "changed" (another version)
    detail: str = ""


#: every status reported in this process, in order (the test suite prints them at the end).
STATUSES: list[FindingStatus] = []


def installed(library: str) -> str | None:
    """The installed version of distribution ``library``, or None if it is not installed."""
    try:
        return metadata.version(library)
    except metadata.PackageNotFoundError:
        return None


def is_recorded(library: str) -> bool:
    """True iff the installed ``library`` is the version the findings were recorded with."""
    if library not in RECORDED:
        raise ValueError(f"library={library!r} has no recorded version; known: {sorted(RECORDED)}")
    return installed(library) == RECORDED[library]


def check_finding(finding: str, library: str, holds: bool, detail: str = "") -> FindingStatus:
    """Report whether ``finding`` (recorded with ``RECORDED[library]``) still ``holds``.

    Raises FindingReproductionError when the recorded version is installed and the finding does
    not hold (a regression of tokspec or of the replay); otherwise returns (and records in
    :data:`STATUSES`) the status.
    """
    recorded = is_recorded(library)
    if recorded and not holds:
        raise FindingReproductionError(
            f"finding {finding!r} does not reproduce with {library} {RECORDED[library]}, the version "
            f"it was recorded with{': ' + detail if detail else ''}")
    status = FindingStatus(finding, library, RECORDED[library], installed(library),
                           "reproduced" if recorded else ("holds" if holds else "changed"), detail)
    STATUSES.append(status)
    if not recorded:
        warnings.warn(FindingNews(
            f"finding {finding!r} {'still holds' if holds else 'CHANGED'} with {library} "
            f"{status.installed} (recorded with {status.recorded}){': ' + detail if detail else ''}"),
            stacklevel=2)
    return status


def versions_table() -> list[tuple[str, str, str, str]]:
    """Rows (library, installed, recorded, verdict) for ``tokspec engines --versions``."""
    rows = []
    for library, recorded in sorted(RECORDED.items()):
        have = installed(library)
        verdict = ("not installed" if have is None else
                   "same as the findings" if have == recorded else
                   "differs: findings are re-checked, not asserted")
        rows.append((library, have or "-", recorded, verdict))
    return rows
