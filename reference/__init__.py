"""tokspec.reference: plain, obviously-correct encoders that define what correct output is.

Correct first, readable second, fast last. Depends on the tokspec core only.
"""
