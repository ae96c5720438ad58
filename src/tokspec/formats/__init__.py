"""Model and vocabulary formats: reading them, and the normalizers they carry.

- :mod:`~tokspec.formats.vocab`: tiktoken ranks, tokenizer.json files, the named (package-shipped,
  sha256-checked) vocabularies;
- :mod:`~tokspec.formats.spm_model` and :mod:`~tokspec.formats._protowire`: sentencepiece ``.model``
  protobufs (a minimal wire-format reader and writer);
- :mod:`~tokspec.formats.spm_normalize`, :mod:`~tokspec.formats.normalize`,
  :mod:`~tokspec.formats.hf_pipeline`: sentencepiece and HF normalizers and pretokenizers, with
  alignment to the original text;
- :mod:`~tokspec.formats.unigram_model`: one Unigram model read from either format;
- :mod:`~tokspec.formats.models`: the sentencepiece models tokspec trains offline.

The core's bottom layer next to the contract types: the references, the fast engines and the
production adapters all read their models through it. The old import paths (``tokspec.vocab``,
``tokspec.normalize``, ``tokspec.engines._protowire``, ...) stay importable as the same modules.
"""
