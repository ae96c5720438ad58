"""tokspec.spec: executable statements of what is true about tokenizers.

Each property is a predicate returning a :class:`Verdict` (holds or not, with an explanation), with
a docstring citing its source. Published statements found false stay here, marked falsified, with
their minimized counterexamples.
"""
