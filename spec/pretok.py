"""Pretokenization: regex semantics as the definition, and the Peek2 paper's claims.

Source: ``/work/shared/seeds/peek2-regex-free-pretokenizer.txt``: section 3.1 (the seven peek
categories), 3.2 (Table 1, the 7x7 branch decision table), 3.3 (the contraction fallback), 3.4
("Since the branch decision is always identical, the bug-for-bug compatibility is guaranteed") and
section 4.1 ("the pretokenizer yields the same results as the Regex-based splitter").

Definition: the pretokens of ``text`` under a pattern are the spans of successive non-overlapping
leftmost matches (``regex.finditer``), run with the ``regex`` module. For cl100k the pattern is read
from the installed ``tiktoken_ext.openai_public`` source (never pasted here).

Category rules use the ``regex`` module's classes (``\\p{L}``, ``\\p{N}``, ``\\s``), because the
claim under test is equality with that regex; note ``\\s`` there is Unicode White_Space, which is
*not* ``str.isspace`` (U+001C..U+001F are ``isspace`` but not ``\\s``).

Out of scope: Llama-3/Qwen2 patterns (the table is for cl100k only), bytes-level pretokenizers.
"""

from __future__ import annotations

import ast
import functools
import importlib.util
from collections.abc import Sequence
from pathlib import Path

import regex

from tokspec._types import Span
from tokspec.errors import UnsupportedComponentError
from tokspec.spec._verdict import Claim, Verdict, fails, holds, register

__all__ = [
    "cl100k_pattern",
    "regex_spans",
    "peek_category",
    "PEEK2_TABLE",
    "cl100k_branch",
    "prop_peek2_cell",
    "prop_peek2_end_of_text",
    "prop_spans_equal",
    "prop_spans_partition",
]

#: Table 1 of the Peek2 paper, transcribed: ``PEEK2_TABLE[cat0][cat1]`` is the branch index
#: (0 contraction, 1 letters, 2 numbers, 3 punctuation, 4 whitespace). This is the claim under test.
PEEK2_TABLE: tuple[tuple[int, ...], ...] = (
    (3, 3, 3, 3, 1, 3, 3),
    (3, 4, 3, 4, 1, 4, 4),
    (3, 3, 3, 3, 0, 3, 3),
    (4, 4, 4, 4, 4, 4, 4),
    (1, 1, 1, 1, 1, 1, 1),
    (4, 4, 4, 4, 1, 4, 4),
    (2, 2, 2, 2, 2, 2, 2),
)


@functools.lru_cache(maxsize=1)
def cl100k_pattern() -> str:
    """The cl100k_base pattern string, read from the installed tiktoken's ``openai_public`` source.

    Raises UnsupportedComponentError if tiktoken_ext is missing or its source changed shape.
    """
    spec = importlib.util.find_spec("tiktoken_ext.openai_public")
    if spec is None or spec.origin is None:
        raise UnsupportedComponentError("tiktoken_ext.openai_public is not installed: pip install tiktoken")
    tree = ast.parse(Path(spec.origin).read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == "cl100k_base":
            for sub in ast.walk(node):
                if isinstance(sub, ast.Dict):
                    for key, value in zip(sub.keys, sub.values):
                        if (isinstance(key, ast.Constant) and key.value == "pat_str"
                                and isinstance(value, ast.Constant) and isinstance(value.value, str)):
                            return value.value
    raise UnsupportedComponentError(f"no literal pat_str in cl100k_base() of {spec.origin!r}")


@functools.lru_cache(maxsize=8)
def _compiled(pattern: str) -> regex.Pattern[str]:
    return regex.compile(pattern)


def regex_spans(pattern: str, text: str) -> list[Span]:
    """The definition of regex pretokenization: spans of ``finditer``. O(n) matches."""
    return [m.span() for m in _compiled(pattern).finditer(text)]


def peek_category(ch: str) -> int:
    """Section 3.1's PeekCategorize: 1 space, 2 ASCII quote, 3 CR/LF, 4 letter, 5 other
    whitespace, 6 number, 0 anything else (smaller sets take precedence)."""
    if ch == " ":
        return 1
    if ch == "'":
        return 2
    if ch in "\r\n":
        return 3
    if regex.match(r"\p{L}", ch):
        return 4
    if regex.match(r"\s", ch):
        return 5
    if regex.match(r"\p{N}", ch):
        return 6
    return 0


@functools.lru_cache(maxsize=1)
def _cl100k_branches() -> tuple[regex.Pattern[str], ...]:
    """The top-level alternatives of the cl100k pattern, each compiled alone."""
    alternatives = _split_top_level(cl100k_pattern())
    return tuple(regex.compile(a) for a in alternatives)


def _split_top_level(pattern: str) -> list[str]:
    """Split a pattern at ``|`` outside groups and classes (enough for tiktoken's patterns)."""
    out, depth, in_class, start, i = [], 0, False, 0, 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == "|" and depth == 0:
            out.append(pattern[start:i])
            start = i + 1
        i += 1
    out.append(pattern[start:])
    return out


def cl100k_branch(text: str) -> int:
    """Which Peek2 branch the cl100k regex takes at the start of ``text``: the first top-level
    alternative that matches at position 0 (alternation semantics), with the four whitespace
    alternatives (``\\s++$``, ``\\s*[\\r\\n]``, ``\\s+(?!\\S)``, ``\\s``) all mapped to branch 4."""
    for i, branch in enumerate(_cl100k_branches()):
        if branch.match(text):
            return min(i, 4)
    raise AssertionError(f"cl100k pattern matches nothing at the start of {text!r}")


def prop_peek2_cell(c0: str, c1: str, rest: str = "") -> Verdict:
    """Table 1 cell for ``(cat(c0), cat(c1))`` equals the regex's branch on ``c0 c1 rest``.

    The one exception the paper states (section 3.3): cell (2, 4), a quote before a letter, may
    fall back from branch 0 to branch 1 when no contraction follows.
    """
    k0, k1 = peek_category(c0), peek_category(c1)
    table, actual = PEEK2_TABLE[k0][k1], cl100k_branch(c0 + c1 + rest)
    if table == actual or ((k0, k1) == (2, 4) and actual == 1):
        return holds(f"cell ({k0}, {k1}) = branch {table} agrees with the regex")
    return fails(f"Table 1 cell ({k0}, {k1}) says branch {table}, the regex takes branch {actual}",
                 text=c0 + c1 + rest, cell=[k0, k1], table=table, regex=actual)


def prop_peek2_end_of_text(c0: str) -> Verdict:
    """Table 1 has no column for "no second character" (a pretoken starting at the last
    character). Checked statement: the CR/LF column (3) gives the right branch there."""
    k0 = peek_category(c0)
    table, actual = PEEK2_TABLE[k0][3], cl100k_branch(c0)
    if table == actual:
        return holds(f"row {k0}: end of text behaves like CR/LF (branch {table})")
    return fails(f"row {k0}: at end of text the regex takes branch {actual}, column 3 says {table}",
                 text=c0, row=k0, table=table, regex=actual)


def prop_spans_equal(text: str, got: Sequence[Span], want: Sequence[Span],
                     what: str = "pretokenizer") -> Verdict:
    """Exact span equality with the first divergence as witness."""
    got_l, want_l = [tuple(s) for s in got], [tuple(s) for s in want]
    if got_l == want_l:
        return holds(f"{what}: {len(got_l)} spans equal")
    k = next((i for i, (a, b) in enumerate(zip(got_l, want_l)) if a != b), min(len(got_l), len(want_l)))
    return fails(f"{what}: spans differ from span {k}", text=text, first_diff=k,
                 got=[list(s) for s in got_l[k:k + 3]], expected=[list(s) for s in want_l[k:k + 3]])


def prop_spans_partition(text: str, spans: Sequence[Span]) -> Verdict:
    """cl100k-like patterns cover every character: spans are non-empty and contiguous from 0 to
    len(text) (every character is a letter, number, whitespace or 'other', and each has a branch)."""
    pos = 0
    for i, (s, e) in enumerate(spans):
        if s != pos or e <= s:
            return fails(f"span {i} = {(s, e)} leaves a gap or is empty", text=text, index=i)
        pos = e
    if pos != len(text):
        return fails("spans stop before the end of the text", text=text, end=pos)
    return holds(f"{len(spans)} spans partition the text")


def _register() -> None:
    src = "seeds/peek2-regex-free-pretokenizer.txt"
    register(Claim("peek2.table1", f"{src}, section 3.2 Table 1 and 3.3",
                   "The categories of the first two characters determine the cl100k branch "
                   "(Table 1), except the contraction fallback of section 3.3.",
                   "checked", prop_peek2_cell))
    register(Claim("peek2.end_of_text", f"{src}, section 3.2 (gap: Table 1 has no end-of-text column)",
                   "At the last character, the CR/LF column of Table 1 gives the branch.",
                   "checked", prop_peek2_end_of_text))
    register(Claim("peek2.equals_regex", f"{src}, sections 3.4 and 4.1",
                   "Peek2 yields exactly the spans of the regex-based splitter.",
                   "checked", prop_spans_equal))


_register()
