"""tokspec.fast: the optimized algorithms under test.

Depends on the tokspec core (types, vocabulary loading) only, never on tokspec.reference or
tokspec.spec: an engine that shares logic with its oracle would not be independently checked.
"""
