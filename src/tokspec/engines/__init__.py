"""Engines of the core layer: production-library adapters and out-of-process engines."""
