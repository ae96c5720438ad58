"""tokspec.app: the application on top of the library: the ``tokspec`` command line (``cli``,
``cli_diff``, ``cli_merge``), inputs files, fuzz-mode text sources, merge reports, benchmarks
(``bench``) and the pytest plugin.

Nothing below this package (the contract, vocabularies, normalizers, adapters, references, fast
engines, spec) imports it.
"""
