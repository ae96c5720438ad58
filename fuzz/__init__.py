"""tokspec.fuzz: hypothesis strategies and atheris harnesses that pit engines against each other.

Modules:

- ``strategies`` (public): hypothesis strategies for tokenizer tests (Unicode categories, shaped
  and adversarial text, vocabulary-aware text, tiny generated vocabularies);
- ``targets``: the declarative list of fuzz targets (engine pairs, single-engine properties,
  hypothesis theorems) and their one-input checks;
- ``hyp_targets``: spec/ theorems over tiny vocabularies as ``@given`` tests (pytest + atheris);
- ``harness``: ``python -m tokspec.fuzz.harness TARGET``, one coverage-guided atheris run
  (``_harness_report``: its reports of failing inputs, minimized, or crashes in crash mode);
- ``run``: ``python -m tokspec.fuzz.run``, every target within a time budget, with a summary;
- ``mutants``: deliberately broken engines for the harness self-test (``run --mutants``);
- ``wrapped``: engines configured for fuzzing (merge with tiny chunks);
- ``replay``, ``seeds``, ``_findings``: stored findings, seed corpora, state layout.

Out of scope: fuzzing engines that are not reachable by a registry name.
"""
