"""The claims registry is a contract: ids, statuses, citations and stored witnesses.

What each claim promises, checked against something other than the registry itself:

- its id is ``family.name``, the family being the spec module (pretok's claims are Peek2's);
- a citation of a seed document names a file of ``shared/seeds`` and a section whose words (and
  numbered headings) occur in that document; an attribution before it names the document's title;
- a citation of a repository file names a file of the installed package and text that occurs in it;
  a GitHub ``owner/project README`` is the project the seed papers cite;
- tokspec's own theorems (source "tokspec (this module's docstring)") are stated in the module
  docstring under that name, with the setting as titled there and a rule the checker knows;
- a witness found by ``corpora/merge/search_witnesses.py`` (ddmin on the text arguments) is
  minimal: dropping any one character of a text argument makes the claim hold again;
- a statement is a sentence whose all-capital terms (BPE, CR/LF, [UNK]) are its documents' terms.

Every check reads the claims that the registering functions (``_register``/``_claims``) produce
when called again into an empty registry (fixture ``registry``).

The seed documents live outside the repository, in ``shared/seeds`` beside the clone (CI and the
sandbox both have it); in CI the tests that read them fail when it is missing, elsewhere they skip.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

import tokspec.reference
from tokspec.spec import CLAIMS, load_claims
from tokspec.spec import bpe as B
from tokspec.spec import merge as M
from tokspec.spec import merge_published as MP
from tokspec.spec._verdict import Claim

load_claims()

ID = re.compile(r"^([a-z][a-z0-9]*)\.([A-Za-z][A-Za-z0-9_]*)$")
#: Family prefix of a claim id by the spec module holding its checker (default: the module name).
FAMILY = {"pretok": "peek2", "merge_published": "merge"}
OWN_SOURCE = "tokspec (this module's docstring)"
SEED_CITATION = re.compile(r"^(?P<attribution>.*?)seeds/(?P<file>[^,;]+), (?P<section>.+)$")
PY_CITATION = re.compile(r"^(?P<path>[a-z_]+/[a-z_0-9]+\.py) (?P<anchor>[^(]+?)\s*(\(.*\))?$")
README_CITATION = re.compile(r"^(?P<owner>[A-Za-z0-9-]+)/(?P<project>[A-Za-z0-9_.-]+) README$")
WORD = re.compile(r"[A-Za-z0-9]+(?:\.[0-9]+)*")
HEADING_NUMBER = re.compile(r"^\d+\.\d+$")
ROMAN = re.compile(r"^[IVX]+[a-z]?$")
#: Checkers whose witnesses ``corpora/merge/search_witnesses.py`` minimizes (ddmin on ``keys``).
SEARCHED = {MP.lopt_theorem_4_1: ("text",), MP.lopt_lemma_7_1: ("s1", "so", "s2"),
            MP.blog_overlap_theorem: ("text",), MP.parallel_tokenizer_claim: ("text",)}


def _seeds_dir() -> Path:
    """``shared/seeds`` beside the clone or beside one of its ancestors (a worktree's parent)."""
    for parent in Path(__file__).resolve().parents:
        if (parent / "shared" / "seeds").is_dir():
            return parent / "shared" / "seeds"
    if os.environ.get("CI"):
        raise AssertionError("shared/seeds (the seed documents) not found beside the repository")
    # a contributor's clone without the seed documents: the check runs in CI, which has them
    pytest.skip("shared/seeds (the seed documents) is not beside this checkout; CI runs this check")


def _citations(source: str) -> list[str]:
    return [part.strip() for part in source.split(";")]


def _family(check: object) -> str:
    short = check.__module__.rpartition(".")[2]
    return FAMILY.get(short, short)


def test_registry_has_claims_of_every_spec_module() -> None:
    from tokspec.spec import SPEC_MODULES
    families = {_family(c.check) for c in CLAIMS.values()}
    assert {FAMILY.get(m, m) for m in SPEC_MODULES} <= families


@pytest.mark.parametrize("name", sorted(CLAIMS))
def test_claim_id_is_family_dot_name(name: str, registry: dict[str, Claim]) -> None:
    claim = registry[name]
    assert claim.name == name, "CLAIMS is keyed by the claim's own name"
    m = ID.match(name)
    assert m, f"{name!r}: ids are 'family.name'"
    assert m.group(1) == _family(claim.check), f"{name!r}: checked by {claim.check.__module__}"


@pytest.mark.parametrize("name", sorted(CLAIMS))
def test_counterexample_exactly_when_falsified(name: str, registry: dict[str, Claim]) -> None:
    claim = registry[name]
    assert claim.status in ("proved", "checked", "falsified")
    assert (claim.counterexample is not None) == (claim.status == "falsified")


@pytest.mark.parametrize("name", sorted(CLAIMS))
def test_repository_citations_resolve(name: str, registry: dict[str, Claim]) -> None:
    """``path.py anchor`` names a file of the package (``reference/x.py`` is tokspec.reference's)
    holding the anchor; ``owner/project README`` is a project the seed papers cite (checked in
    :func:`test_readme_citation_is_cited_by_a_seed`); tokspec's own source is spelled exactly."""
    package_root = Path(tokspec.reference.__file__).resolve().parent.parent
    for part in _citations(registry[name].source):
        if ".py" in part.lower():
            m = PY_CITATION.match(part)
            assert m, f"{name}: malformed file citation {part!r}"
            path = package_root / m.group("path")
            assert path.is_file(), f"{name}: cites {m.group('path')}, which is not in the package"
            anchor = m.group("anchor")
            text = path.read_text(encoding="utf-8")
            assert (text.lstrip().startswith('"""') if anchor == "docstring" else anchor in text), (
                f"{name}: {m.group('path')} has no {anchor!r}")
        elif "tokspec" in part.lower():
            assert part == OWN_SOURCE, f"{name}: {part!r}"
        elif "readme" in part.lower():
            assert README_CITATION.match(part), f"{name}: malformed README citation {part!r}"


@pytest.mark.parametrize("name", sorted(n for n, c in CLAIMS.items() if c.source == OWN_SOURCE))
def test_own_theorem_is_stated_in_its_module_docstring(name: str, registry: dict[str, Claim]) -> None:
    """merge.M2 etc.: the module docstring states "Theorem M2 (setting)"; the statement names that
    setting (one is a prefix of the other) and a rule the checker knows."""
    claim = registry[name]
    module_doc = __import__(claim.check.__module__, fromlist=["_"]).__doc__
    local = name.partition(".")[2]
    m = re.search(rf"\*\*Theorem {re.escape(local)} \(([^)]*)\)", module_doc)
    assert m, f"{name}: no 'Theorem {local}' in {claim.check.__module__}'s docstring"
    title, setting = m.group(1), claim.statement.split(":")[0].split(",")[0]
    assert title.startswith(setting) or setting.startswith(title), (name, title, setting)
    rule = re.search(r"rule '([^']+)'", claim.statement)
    assert rule and rule.group(1) in M._RULES, f"{name}: statement names no known rule"


def test_own_theorems_hold_where_their_rule_holds(registry: dict[str, Claim]) -> None:
    """The proved cut theorems on a text where the rule holds (and vacuously where it does not)."""
    text = "hello world, again"
    for name in ("merge.M2", "merge.M3w"):
        claim = registry[name]
        rule = re.search(r"rule '([^']+)'", claim.statement).group(1)
        engine = "tiktoken:cl100k_base" if name == "merge.M2" else "hf:bert-base-uncased"
        v = claim.check(engine, text, 5, rule)
        assert v.holds and "vacuous" not in v.explanation, v
        assert claim.check(engine, text, 3, rule).holds


def _seed(file: str) -> str:
    path = _seeds_dir() / file
    assert path.is_file(), f"cited seed document {file!r} is not in shared/seeds"
    return path.read_text(encoding="utf-8")


def _seed_citations() -> list[tuple[str, int]]:
    """(claim, index of the citation part) for every part that cites a seed document."""
    return [(name, i) for name, claim in sorted(CLAIMS.items())
            for i, part in enumerate(_citations(claim.source)) if "seeds/" in part.lower()]


@pytest.mark.parametrize("name, index", _seed_citations())
def test_seed_citation_names_a_document_and_its_section(name: str, index: int,
                                                        registry: dict[str, Claim]) -> None:
    part = _citations(registry[name].source)[index]
    citation = SEED_CITATION.match(part)
    assert citation, f"{name}: malformed seed citation {part!r}"
    doc = _seed(citation.group("file"))
    words = set(WORD.findall(doc))
    headings = {line.split(" ", 1)[0] for line in doc.splitlines() if line[:1].isdigit()}
    section = re.sub(r"\([^)]*\)", "", citation.group("section")).replace("_", " ")
    numbered = re.search(r"\bsections?\b", section) is not None
    previous = ""
    for i, word in enumerate(WORD.findall(section)):
        if word in ("section", "sections", "and"):
            pass                                     # citation vocabulary, not the seed's
        elif numbered and HEADING_NUMBER.match(word):
            assert word in headings, f"{name}: the seed has no section {word}"
        elif previous.lower() == "corollary":
            # the seed numbers its corollaries in Roman numerals (II, IIa, IIIa; III's label was
            # lost in the text extraction, its statement is there)
            assert ROMAN.match(word), f"{name}: corollary {word!r} is not numbered as in the seed"
        else:
            spelled = {word, word[:1].upper() + word[1:], word[:1].lower() + word[1:]} if i == 0 else {word}
            assert spelled & words, f"{name}: {word!r} of section {section!r} is not in the seed"
        previous = word
    attribution = citation.group("attribution").strip().rstrip(",")
    if attribution:
        title = doc.strip().splitlines()[0]
        quoted = re.search(r"'([^']+)'", attribution)
        first = quoted.group(1) if quoted else WORD.findall(attribution)[0]
        assert first in title, f"{name}: attribution {attribution!r} does not name {title!r}"


def test_readme_citation_is_cited_by_a_seed(registry: dict[str, Claim]) -> None:
    """A GitHub project cited as ``owner/project README`` is one the seed papers cite
    (their bibliography keys read ``githubGitHub<owner><project>``)."""
    docs = "\n".join(p.read_text(encoding="utf-8") for p in sorted(_seeds_dir().glob("*.txt")))
    cited = [(name, part) for name, c in registry.items() for part in _citations(c.source)
             if "readme" in part.lower()]
    assert cited
    for name, part in cited:
        m = README_CITATION.match(part)
        assert m, f"{name}: malformed README citation {part!r}"
        assert f"githubGitHub{m.group('owner')}{m.group('project')}" in docs, (name, part)


def _searched() -> list[str]:
    return sorted(n for n, c in CLAIMS.items() if c.status == "falsified" and c.check in SEARCHED)


def test_every_searched_checker_has_a_registered_witness(registry: dict[str, Claim]) -> None:
    assert {c.check for c in registry.values() if c.status == "falsified" and c.check in SEARCHED} == set(SEARCHED)


@pytest.mark.parametrize("name", _searched())
def test_searched_witness_is_minimal(name: str, registry: dict[str, Claim]) -> None:
    """ddmin's guarantee: no one-character deletion from a text argument still falsifies."""
    claim = registry[name]
    witness = claim.counterexample
    assert not claim.check(**witness).holds
    for key in SEARCHED[claim.check]:
        value = witness[key]
        for smaller in sorted({value[:i] + value[i + 1:] for i in range(len(value))}):
            v = claim.check(**{**witness, key: smaller})
            assert v.holds, f"{name}: {key}={smaller!r} still falsifies: the witness is not minimal"


def _cited_documents(claim: Claim) -> str:
    """The text a claim may borrow its terms from: its checker's and module's docstrings, the seed
    documents and package files it cites."""
    texts = [claim.check.__doc__ or "", __import__(claim.check.__module__, fromlist=["_"]).__doc__ or ""]
    package_root = Path(tokspec.reference.__file__).resolve().parent.parent
    for part in _citations(claim.source):
        seed = SEED_CITATION.match(part)
        if seed:
            texts.append(_seed(seed.group("file")))
        py = PY_CITATION.match(part)
        if py and (package_root / py.group("path")).is_file():
            texts.append((package_root / py.group("path")).read_text(encoding="utf-8"))
    return "\n".join(texts)


#: Ordinary English used by statements that their cited documents happen not to use; every other
#: word of a statement is a word of its documents.
PLAIN_STATEMENT_WORDS = {"sharing", "concatenate", "plus", "shown", "reproduces", "included", "over",
                         "give", "gives", "less", "lets", "into", "result", "determine", "except",
                         "recursively", "is", "split", "greedily", "vocabulary", "True"}


@pytest.mark.parametrize("name", sorted(CLAIMS))
def test_statement_is_a_sentence_in_its_documents_terms(name: str, registry: dict[str, Claim]) -> None:
    """A statement is one sentence ending with a period; it starts with a capital letter unless it
    starts with the setting of tokspec's own theorem (checked against the docstring above) or, for
    the seed's worked example, with one of its inputs (a lone "a" is an article elsewhere); its all-capital terms (acronyms such as BPE, CR/LF,
    [UNK]) and those of its source's free text are terms of the documents it cites, and every word
    is a word of those documents, case and all (or plain English listed in PLAIN_STATEMENT_WORDS),
    numbered references (Table 1, section 3.3) and notation (F(S)) spelled as there."""
    claim = registry[name]
    statement = claim.statement
    assert statement.endswith(".") and statement == statement.strip(), name
    first = statement.split()[0]
    example = claim.check is B.prop_seed_example and first.encode() in B.SEED_EXAMPLE_PREFIXES
    assert statement[0].isupper() or claim.source == OWN_SOURCE or example, f"{name}: {statement!r}"
    documents = _cited_documents(claim)
    free_source = " ".join(p for p in _citations(claim.source) if not SEED_CITATION.match(p))
    for term in re.findall(r"\b[A-Z][A-Z0-9_]+\b", statement + " " + free_source):
        assert re.search(rf"\b{re.escape(term)}\b", documents), f"{name}: {term!r} is not a term of its documents"
    words = set(re.findall(r"[A-Za-z]+", documents)) | PLAIN_STATEMENT_WORDS
    for k, word in enumerate(re.findall(r"[A-Za-z]+", statement)):
        spelled = {word, word.lower()} if k == 0 else {word}      # a sentence starts with a capital
        assert spelled & words, f"{name}: {word!r} is no word of its documents, case and all (garbled statement?)"
    for numbered in re.findall(r"\b[A-Za-z]+ \d+(?:\.\d+)*\b", statement):   # Table 1, section 3.3
        assert numbered in documents, f"{name}: {numbered!r} is not spelled as in its documents"
    for notation in re.findall(r"\b[A-Za-z]+\([A-Za-z]\)", statement):          # F(S), Tokenizer(S)
        assert notation in documents, f"{name}: {notation!r} is not the notation of its documents"
