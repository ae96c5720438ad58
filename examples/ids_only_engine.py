"""An ids-only library as a tokspec engine: tiktoken's ``encode_ordinary`` returns ids, nothing else.

The whole adapter is the last three lines: :func:`tokspec.engine_from_ids` derives character
offsets from the token bytes (byte-level vocabulary). The encoding is built from the cl100k_base
vocabulary tokspec ships (``tiktoken.get_encoding`` would download it). Not buggy: it agrees with
``tiktoken:cl100k_base``. A library that normalizes first passes ``normalize="NFC"``; one that
offers no token bytes at all is compared on ids alone: ``tokspec.ids_only(encode, name=...)``.
"""

from __future__ import annotations

import tiktoken

import tokspec
from tokspec.spec.pretok import cl100k_pattern
from tokspec.formats.vocab import load_named_tiktoken

enc = tiktoken.Encoding("cl100k", pat_str=cl100k_pattern(), special_tokens={},
                        mergeable_ranks=load_named_tiktoken("cl100k_base").ranks)


def engine() -> tokspec.Encoder:
    return tokspec.engine_from_ids(enc.encode_ordinary, enc.decode_single_token_bytes,
                                   name="ids_only_engine:engine", decode=enc.decode)
