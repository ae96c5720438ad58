"""The ``spm:`` adapter's normalizer alignment without sentencepiece's offsets list, where the rules decide it.

sentencepiece's ``normalize(text, with_offsets=True)`` gives, for each normalized character, the
input character it came from; building that Python list of ints costs the library about four
times its own plain ``normalize`` (1 MB of English: 45 ms against 10 ms, sentencepiece 0.2.3),
as much as its whole encode. This module rebuilds the same text and list where the model's rules
decide them:

- Each input character is looked up in the model's precompiled charsmap as a key of its own
  (:func:`char_class`): the one character its rule gives (itself without a rule), a space, or
  nothing; a rule giving several characters is not handled. Where a key goes on past the
  character, the walk's node is kept, and the rebuild stops if the next character continues
  such a key (``A`` + U+0300 in nmt_nfkc): only there could the library's longest-match rule
  apply something other than one-character rules.
- With only one-character rules, every normalized character comes from exactly one input
  character and sentencepiece records that character's position (``norm_to_orig``). The
  whitespace handling (leading spaces skipped, a space after a space dropped, trailing spaces
  removed with the end moved back to where they began, the dummy prefix at the first kept
  position, ``▁`` for a space) is sentencepiece's, as ``tokspec.formats.spm_normalize`` states it.
- :func:`rebuild_normalized` makes the normalized text from those rules alongside the positions.
  The adapter confirms each character's class with the library once (the character alone,
  normalized by sentencepiece: text and positions), and takes a rebuilt text and its positions
  as the library's only when the library's own output confirms the text:
  its pieces spell it exactly (they are its normalized text, in order), or its plain
  ``normalize`` equals it. Anything else (a longer key that may match, a rule giving several
  characters, a character not yet classified) returns a status and the adapter asks the library
  for its list.

``tests/test_spm_align.py`` checks the rebuilt text and list equal the library's wherever the
rebuild answers (generated texts of spaces, rule and plain characters under three charsmaps and
four flag sets; 1 MB of English-like and 1.2 MB of Chinese-like text through the adapter).
Out of scope: ``treat_whitespace_as_suffix`` and models without ``escape_whitespaces`` (the
adapter always asks the library there).
"""

from __future__ import annotations

import numpy as np

from tokspec._jit import kernel
from tokspec.formats.spm_normalize import CharsMap, _label, _offset

__all__ = ["OTHER", "SPACE", "DELETED", "UNSEEN", "char_class", "rebuild_normalized", "unseen_code_points"]

#: :func:`char_class` results below 0 (0 and above: the one character the rule gives, or the character itself)
SPACE, DELETED, OTHER, UNSEEN = -1, -2, -3, -4


def _walk(cm: CharsMap, data: bytes) -> int | None:
    """darts-clone node reached after ``data`` (the base of its children), or None if no key
    continues along ``data``. The same steps as :meth:`CharsMap.prefix_matches`."""
    units = cm.units
    node = _offset(units[0])
    for byte in data:
        node ^= byte
        if node >= len(units) or _label(units[node]) != byte:
            return None
        node ^= _offset(units[node])
    return node


def char_class(cm: CharsMap | None, ch: str) -> tuple[int, int]:
    """How the library's normalizer treats ``ch`` when no longer key applies at it: the code
    point it becomes (itself when no rule applies), :data:`SPACE` (a space), :data:`DELETED`
    (nothing), or :data:`OTHER` (its rule gives several characters, or a key ends inside it);
    and where longer keys go on past ``ch``, for :func:`rebuild_normalized` to test the character
    after it: -1 if none does, else twice the darts-clone node they go on from, plus 1 if one
    goes on with an ASCII byte."""
    if cm is None:
        return (SPACE if ch == " " else ord(ch)), -1
    data = ch.encode("utf-8")
    node = _walk(cm, data)
    units = cm.units
    onward = [] if node is None else [label for label in range(1, 256)  # label 0: a key ending at ch
                                      if node ^ label < len(units) and _label(units[node ^ label]) == label]
    # no key goes on past ch: -1; else the node, doubled, plus 1 if some key goes on with an
    # ASCII byte (most text checks only that)
    after = 2 * node + (onward[0] < 0x80) if onward and node is not None else -1
    matches = cm.prefix_matches(data, 0)
    if not matches:
        return (SPACE if ch == " " else ord(ch)), after
    length, rep = matches[-1]
    if length != len(data):
        return OTHER, after  # a key ends inside ch's bytes (not seen in real charsmaps)
    if rep == b" ":
        return SPACE, after
    if rep == b"":
        return DELETED, after
    try:
        out = rep.decode("utf-8")
    except UnicodeDecodeError:
        return OTHER, after
    if len(out) != 1 or out == " ":
        return OTHER, after
    return ord(out), after


@kernel
def unseen_code_points(cps: np.ndarray, table: np.ndarray) -> np.ndarray:
    """The distinct code points of ``cps`` whose ``table`` entry is :data:`UNSEEN`; marks them
    :data:`OTHER` meanwhile (the caller classifies them). O(len(cps))."""
    found = np.empty(0, dtype=np.int64)
    count = 0
    for i in range(len(cps)):
        cp = cps[i]
        if table[cp] == UNSEEN:
            table[cp] = OTHER
            if count == len(found):
                grown = np.empty(2 * count + 16, dtype=np.int64)
                grown[:count] = found[:count]
                found = grown
            found[count] = cp
            count += 1
    return found[:count]


@kernel
def _continues(units: np.ndarray, after: int, cp: int) -> bool:
    """Some charsmap key goes on through all of ``cp``'s UTF-8 bytes from where ``after``
    (:func:`char_class`) says keys go on (a walk as in :func:`_walk`)."""
    if after < 0 or (cp < 0x80 and not after & 1):
        return False
    node = after >> 1
    if cp < 0x80:
        count = 1
        lead = cp
    elif cp < 0x800:
        count = 2
        lead = 0xC0 | (cp >> 6)
    elif cp < 0x10000:
        count = 3
        lead = 0xE0 | (cp >> 12)
    else:
        count = 4
        lead = 0xF0 | (cp >> 18)
    for k in range(count):
        byte = lead if k == 0 else 0x80 | ((cp >> (6 * (count - 1 - k))) & 0x3F)
        node ^= byte
        if node >= len(units) or (units[node] & 0x800000FF) != byte:
            return False
        unit = units[node]
        node ^= (unit >> 10) << ((unit & (1 << 9)) >> 6)
    return True


@kernel
def rebuild_normalized(cps: np.ndarray, table: np.ndarray, after: np.ndarray, units: np.ndarray,
                       dummy: bool, remove_extra: bool, norm: np.ndarray, offs: np.ndarray) -> int:
    """The library's normalized text of ``cps`` and its ``norm_to_orig`` (character positions)
    as the one-character rules imply them: ``table`` and ``after`` (:func:`char_class` per code
    point) in the charsmap ``units``. Writes ``m`` code points into ``norm`` and ``m + 1``
    positions into ``offs`` (both at least ``len(cps) + 2`` long) and returns ``m``; or returns
    :data:`UNSEEN` when a character has no class yet (classify the :func:`unseen_code_points`
    and call again), :data:`OTHER` when a longer key may match somewhere or a rule gives several
    characters. O(len(cps))."""
    n = len(cps)
    pos = 0
    while remove_extra and pos < n and table[cps[pos]] == SPACE:
        if pos + 1 < n and _continues(units, after[cps[pos]], cps[pos + 1]):
            return OTHER
        pos += 1
    if pos < n and table[cps[pos]] == UNSEEN:
        return UNSEEN
    if pos == n:
        offs[0] = 0
        return 0
    j = 0
    if dummy:
        norm[0] = 0x2581
        offs[0] = pos
        j = 1
    prev_space = remove_extra
    for i in range(pos, n):
        cp = cps[i]
        c = table[cp]
        if c == UNSEEN:
            return UNSEEN
        if i + 1 < n and _continues(units, after[cp], cps[i + 1]):
            return OTHER  # a longer key may match at i: sentencepiece applies it, not the one-character rules
        if c == SPACE:
            if prev_space:
                continue
            prev_space = remove_extra
            c = 0x2581
        elif c == DELETED:
            continue
        elif c < 0:
            return OTHER
        else:
            prev_space = False
        norm[j] = c
        offs[j] = i
        j += 1
    end = n
    while remove_extra and j > 0 and norm[j - 1] == 0x2581:  # trailing spaces; the end moves back
        j -= 1
        end = offs[j]
    offs[j] = end
    return j
